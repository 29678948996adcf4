"""Read a pytest-html report back: the test rows (a JSON blob) and our summary table (HTML)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any


class _Report(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.blob: dict[str, Any] | None = None
        self.summary_rows: list[list[str]] = []
        self.scripts: list[str] = []
        self._in_summary = 0
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "script":
            self.scripts.append(attributes.get("src") or "inline")
        if attributes.get("id") == "data-container" and attributes.get("data-jsonblob"):
            self.blob = json.loads(attributes["data-jsonblob"] or "{}")
        if tag == "div" and attributes.get("class") == "mathcomp-summary":
            self._in_summary = 1
        elif tag == "div" and self._in_summary:
            self._in_summary += 1
        if self._in_summary and tag == "tr":
            self._row = []
        if self._row is not None and tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if self._row is not None and tag in ("td", "th") and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        if self._row is not None and tag == "tr":
            self.summary_rows.append(self._row)
            self._row = None
        if tag == "div" and self._in_summary:
            self._in_summary -= 1

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def read_report(path: Path) -> _Report:
    parser = _Report()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser
