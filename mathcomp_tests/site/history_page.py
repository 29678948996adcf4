"""The site's history.html: the history page of the nights read (history/page.py), each run's id and points
linked to its night's report in the site (only a night that keeps one), a link back to the index, and the
models in its title."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote

from ..history import page as history_view
from ..listing import few
from ..records import results
from ..report.standalone import page
from .index_page import INDEX, NIGHTS
from .nights import Night

NAMED = 3
"""Models the title names before "and N more"."""


def links(every: Sequence[Night]) -> dict[str, str]:
    """run id (as its summary says) -> the relative address of its night's report in the site, for each night
    that keeps one."""
    return {n.run: f"{NIGHTS}/{quote(n.run_id)}/{results.REPORT}" for n in every if results.REPORT in n.pages}


def title(rows: Sequence[history_view.RunRow]) -> str:
    """``MathComp history: <model>, <model> and N more``: the models the page draws (its groups: each
    model by identity, a fine-tune with its base)."""
    return f"MathComp history: {few(list(dict.fromkeys(r.group for r in rows)), NAMED)}"


def history_html(every: Sequence[Night], skipped: Sequence[str]) -> str:
    """history.html of ``every`` (newest first, as read), with the records skipped: the same nights as the
    index, each read once, none through a link."""
    rows = history_view.rows([n.summary for n in reversed(every)])
    back = f'<p class="mathcomp-back"><a href="{INDEX}">&larr; Back to the index of every night</a></p>'
    body = back + history_view.page_body(rows, skipped, links(every))
    return page(title(rows), body)
