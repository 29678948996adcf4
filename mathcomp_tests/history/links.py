"""Links from the history page to each run's own page: a run id in a table, and a run's points in the
picture (a transparent link over each point, placed in percent of the picture, so that it stays on its point
however wide the page shows the picture; no script). ``Links`` maps a run id to a relative address; a run
without one (the page is not beside its night's report) is plain text, its points not linked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from .figures import Anchor

Links = Mapping[str, str]
"""run id -> the relative address of its night's page."""

STYLE = """<style>
.mathcomp-plot {position: relative; display: inline-block; max-width: 100%; line-height: 0}
.mathcomp-plot img {display: block; max-width: 100%; height: auto}
.mathcomp-plot a.mathcomp-point {position: absolute; width: 16px; height: 16px; margin: -8px 0 0 -8px;
  border-radius: 50%; border: 2px solid transparent; box-sizing: border-box}
.mathcomp-plot a.mathcomp-point:hover, .mathcomp-plot a.mathcomp-point:focus {border-color: #d4a72c;
  background: rgba(212, 167, 44, .25)}
.mathcomp-back {margin: 0 0 12px; font-size: 14px}
</style>"""


def run_cell(run_id: str, links: Links) -> str:
    """The run id as HTML: a link to its night where there is one, else text."""
    href = links.get(run_id)
    if href is None:
        return escape(run_id)
    return f'<a href="{escape(href)}">{escape(run_id)}</a>'


def overlay(
    image: str, runs: Sequence[tuple[str, str]], anchors: Sequence[Sequence[Anchor]], links: Links
) -> str:
    """``image`` (an <img>) with a link over each point of each run that has a page; ``runs``: (run id, what
    the link's tooltip says), in the order of ``anchors``."""
    points = "".join(
        f'<a class="mathcomp-point" href="{escape(links[run_id])}" title="{escape(said)}" '
        f'aria-label="{escape(said)}" style="left:{100 * x:.2f}%;top:{100 * y:.2f}%"></a>'
        for (run_id, said), where in zip(runs, anchors, strict=True)
        if run_id in links
        for x, y in where
        if 0 <= x <= 1 and 0 <= y <= 1
    )
    return f'<div class="mathcomp-plot">{image}{points}</div>'
