"""Everything that writes HTML: the run header, the case table, heat-maps, per-case extras (all escaped)."""

from .heatmap import heatmaps_html
from .html import case_extra_html, run_header_html, summary_table_html

__all__ = ["case_extra_html", "heatmaps_html", "run_header_html", "summary_table_html"]
