"""The verdict's first line for a run that is incomplete (interrupted, nothing run, nothing scored): it
says INCOMPLETE and why, above whatever the cases that ran found, and the page never says PASSED."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from .. import summary_format

STYLE = """<style>
.mathcomp-verdict.incomplete {border-color: #8a5a00; background: #fff8e6}
.mathcomp-verdict h2.incomplete {color: #7a4f00}
</style>"""


def incomplete_html(summary: Mapping[str, Any]) -> str:
    """``<h2>INCOMPLETE: ...</h2>`` and the reasons; empty for a complete run (or a summary from before
    runs said whether they were)."""
    if not summary_format.is_incomplete(summary):
        return ""
    reasons = summary_format.incomplete_reasons(summary) or ["the run did not say why"]
    items = "".join(f"<li>{escape(r)}</li>" for r in reasons)
    return (
        f"{STYLE}<h2 class=incomplete>{escape('INCOMPLETE: this run cannot pass')}</h2>"
        f"<ul class=incomplete-reasons>{items}</ul>"
    )
