"""The history page's picture, drawn with matplotlib (Agg, imported only when it is drawn) into PNG bytes:
DirErr across runs, a line per case. A run's own report draws its charts as HTML (charts.py).
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from .charts import PANEL_ORDER


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Any) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    _pyplot().close(fig)
    return buffer.getvalue()


def regression_lines(
    ticks: Sequence[str],
    lines: Mapping[str, Mapping[str, Sequence[float | None]]],
    means: Mapping[str, Sequence[float | None]],
    mark: tuple[str, str] | None,
    partial: Sequence[bool],
    title: str,
    mean_label: str = "mean over cases",
) -> bytes:
    """Runs across (``ticks``), DirErr up, one panel per direction on shared axes: a thin line per case
    (``lines``: label -> case -> value per run), the mean over cases thick (hollow where the run is
    partial), and the case and label in ``mark`` in red and named."""
    plt = _pyplot()
    n = len(ticks)
    fig, axes = plt.subplots(
        len(PANEL_ORDER),
        1,
        figsize=(max(6.5, 1.3 * n + 3), 7.8),
        sharex=True,
        sharey=True,
        layout="constrained",
    )
    xs = list(range(n))
    for ax, label in zip(axes, PANEL_ORDER, strict=True):
        for case, values in lines[label].items():
            chosen = mark is not None and (case, label) == mark
            points = [(x, 100 * v) for x, v in zip(xs, values, strict=True) if v is not None]
            if not points:
                continue
            px, py = zip(*points, strict=True)
            ax.plot(
                px,
                py,
                color="#d00000" if chosen else "#9a9a9a",
                linewidth=2.4 if chosen else 0.8,
                alpha=1.0 if chosen else 0.6,
                marker="o",
                markersize=4 if chosen else 2.5,
                zorder=4 if chosen else 2,
                label=f"worst: {case}" if chosen else None,
            )
            if chosen:
                top = max(range(len(py)), key=lambda i: py[i])
                ax.annotate(
                    case,
                    (px[top], py[top]),
                    xytext=(6, 6),
                    textcoords="offset points",
                    fontsize=8,
                    color="#a00000",
                    fontweight="bold",
                )
        mean = [(x, 100 * v, p) for x, v, p in zip(xs, means[label], partial, strict=True) if v is not None]
        if mean:
            ax.plot(
                [m[0] for m in mean],
                [m[1] for m in mean],
                color="#1f4e9a",
                linewidth=2.2,
                zorder=3,
                label=mean_label,
            )
            for x, y, hollow in mean:
                ax.plot(
                    x,
                    y,
                    marker="o",
                    markersize=7,
                    zorder=5,
                    color="#1f4e9a",
                    markerfacecolor="white" if hollow else "#1f4e9a",
                )
        ax.set_ylim(-3, 103)
        ax.set_ylabel(f"DirErr({label}) %", fontsize=9)
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    axes[-1].set_xticks(xs, labels=list(ticks), fontsize=8)
    axes[-1].set_xlim(-0.5, n - 0.5)
    fig.suptitle(title, fontsize=12, x=0.02, ha="left")
    return _png(fig)
