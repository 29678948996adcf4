"""The run page: the report of one run (pytest-html's, and `mathcomp report`'s rebuilt or side by side):
the run header, the verdict, the case table, charts, per-case extras (all escaped). The history pages are
history/'s, the CI job summary verdict/'s; they import the shared pieces from here, never the other way."""

from .html import case_extra_html, run_header_html, summary_table_html

__all__ = ["case_extra_html", "run_header_html", "summary_table_html"]
