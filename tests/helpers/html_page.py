"""A page read as a person reads it, for the site's tests: its tags, title, text, links, each table's rows (cell
texts) and each badge's text. ``Page(html)`` for a DOM a browser dumped, ``Page.read(path)`` for a file."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path


class Page(HTMLParser):
    """The tags, title, text, links, tables and badges of one page."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.tables: list[list[list[str]]] = []
        self.text: list[str] = []
        self.title = ""
        self.badges: list[str] = []
        self._cell: list[str] | None = None
        self._inside: str | None = None
        self.feed(html)

    @classmethod
    def read(cls, path: Path) -> Page:
        return cls(path.read_text(encoding="utf-8"))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        badge = "badge" in (attributes.get("class") or "").split()
        self._inside = "title" if tag == "title" else "badge" if badge else None
        if badge:
            self.badges.append("")
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        self._inside = None
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._inside == "title":
            self.title += data
        elif self._inside == "badge":
            self.badges[-1] += data
        if self._cell is not None:
            self._cell.append(data)

    @property
    def links(self) -> list[str]:
        return [str(a["href"]) for t, a in self.tags if t == "a" and a.get("href")]
