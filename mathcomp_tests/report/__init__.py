"""Everything that writes the report: the run header, the case table, figures, per-case extras (all escaped)."""

from .html import case_extra_html, run_header_html, summary_table_html

__all__ = ["case_extra_html", "run_header_html", "summary_table_html"]
