"""The history page's picture, drawn with matplotlib (Agg, imported only when it is drawn) into PNG bytes:
DirErr across runs on a time axis (time_axis places each run), a line per case, and where each run's
points lie in the picture (fractions of its width and height) so that the page can link them. A run's own
report draws its charts as HTML (report/charts.py).
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..report.charts import PANEL_ORDER
from .time_axis import Timeline

DPI = 110
PAD = 0.1
"""Inches of margin around what is drawn (matplotlib's ``bbox_inches="tight"`` margin)."""


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


Anchor = tuple[float, float]
"""A point in the picture: (x, y) as fractions of its width and height, from its top left corner."""


@dataclass(frozen=True)
class Drawn:
    png: bytes
    anchors: list[list[Anchor]]
    """Per run, where its points are: its mean in each panel that has one, else the foot of the last."""


def _time_axis(ax: Any, timeline: Timeline) -> None:
    """Dates under the dated runs only, the undated ones' band shaded (and no date under it)."""
    import matplotlib.dates as mdates

    margin = timeline.step / 2
    low, high = min(timeline.when) - margin, max(timeline.when) + margin
    ax.set_xlim(low, high)
    undated = [t for t, d in zip(timeline.when, timeline.dated, strict=True) if not d]
    band = max(undated) + margin if undated else low
    if undated:
        ax.axvspan(low, band, color="#eeeeee", zorder=0)
    if len(undated) == len(timeline.when):
        ax.set_xticks([])
        return
    locator = mdates.AutoDateLocator(minticks=3, maxticks=9)
    start, end = mdates.date2num(band), mdates.date2num(high)
    ax.set_xticks([t for t in locator.tick_values(band, high) if start <= t <= end])
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))


def regression_lines(
    timeline: Timeline,
    lines: Mapping[str, Mapping[str, Sequence[float | None]]],
    means: Mapping[str, Sequence[float | None]],
    mark: tuple[str, str] | None,
    hollow: Sequence[bool],
    incomplete: Sequence[bool],
    title: str,
    mean_label: str = "mean over cases",
) -> Drawn:
    """Runs placed by when they ran (``timeline``, oldest first), DirErr up, one panel per direction on
    shared axes: a thin line per case (``lines``: label -> case -> value per run), the mean over cases
    thick (hollow where ``hollow``), a dotted line and INCOMPLETE at each incomplete night, and the case and
    label in ``mark`` in red and named."""
    plt = _pyplot()
    n = len(timeline.when)
    fig, axes = plt.subplots(
        len(PANEL_ORDER),
        1,
        figsize=(max(6.5, 1.3 * n + 3), 7.8),
        dpi=DPI,
        sharex=True,
        sharey=True,
        layout="constrained",
    )
    xs = list(timeline.when)
    for ax, label in zip(axes, PANEL_ORDER, strict=True):
        _time_axis(ax, timeline)
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
        mean = [(x, 100 * v, p) for x, v, p in zip(xs, means[label], hollow, strict=True) if v is not None]
        if mean:
            ax.plot(
                [m[0] for m in mean],
                [m[1] for m in mean],
                color="#1f4e9a",
                linewidth=2.2,
                zorder=3,
                label=mean_label,
            )
            for x, y, empty in mean:
                ax.plot(
                    x,
                    y,
                    marker="o",
                    markersize=7,
                    zorder=5,
                    color="#1f4e9a",
                    markerfacecolor="white" if empty else "#1f4e9a",
                )
        for x, cut in zip(xs, incomplete, strict=True):
            if cut:
                ax.axvline(x, color="#b07800", linestyle=":", linewidth=1.2, zorder=1)
        ax.set_ylim(-3, 103)
        ax.set_ylabel(f"DirErr({label}) %", fontsize=9)
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    _labels(axes, timeline, incomplete)
    fig.suptitle(title, fontsize=12, x=0.02, ha="left")
    return _drawn(fig, axes, xs, means)


def _labels(axes: Any, timeline: Timeline, incomplete: Sequence[bool]) -> None:
    """INCOMPLETE at the foot of each incomplete night; "time unknown" over the undated runs' band."""
    for x, cut in zip(timeline.when, incomplete, strict=True):
        if cut:
            axes[-1].annotate(
                "INCOMPLETE", (x, 2), xytext=(3, 0), textcoords="offset points", rotation=90,
                fontsize=7, color="#8a5a00", va="bottom",
            )  # fmt: skip
    if timeline.undated:
        undated = [t for t, d in zip(timeline.when, timeline.dated, strict=True) if not d]
        axes[0].annotate(
            "time unknown", (min(undated) - timeline.step / 2, 101), xytext=(2, -2), textcoords="offset points",
            fontsize=7, color="#555555", va="top",
        )  # fmt: skip


def _drawn(fig: Any, axes: Any, xs: Sequence[Any], means: Mapping[str, Sequence[float | None]]) -> Drawn:
    """The PNG, cropped to what is drawn (as ``bbox_inches="tight"``), and each run's anchors in it."""
    import matplotlib.dates as mdates

    fig.canvas.draw()
    box = fig.get_tightbbox(fig.canvas.get_renderer()).padded(PAD)
    anchors: list[list[Anchor]] = []
    for i, x in enumerate(xs):
        where = [
            (ax, 100 * v) for ax, y in zip(axes, PANEL_ORDER, strict=True) if (v := means[y][i]) is not None
        ]
        found = []
        for ax, value in where or [(axes[-1], 8.0)]:
            px, py = ax.transData.transform((mdates.date2num(x), value))
            found.append((float((px / DPI - box.x0) / box.width), float((box.y1 - py / DPI) / box.height)))
        anchors.append(found)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, bbox_inches=box)
    _pyplot().close(fig)
    return Drawn(buffer.getvalue(), anchors)
