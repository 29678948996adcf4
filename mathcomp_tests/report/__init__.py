"""Everything that writes HTML: per-case extras and the run summary table (all model text escaped)."""

from .html import case_extra_html, summary_table_html

__all__ = ["case_extra_html", "summary_table_html"]
