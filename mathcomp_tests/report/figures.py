"""The report's figures, drawn with matplotlib (Agg, imported only when a figure is drawn) into PNG bytes.

Every function takes plain case summaries (summary.json's `cases`) or results.jsonl records, so a finished
run folder can be drawn again without a model. Colour scales are fixed (0 to 100 % for DirErr, -50 to +50
points for changes) so that figures from different runs compare at a glance.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from ..types import ALL_FRAMINGS as FRAMINGS

Case = Mapping[str, Any]
PANEL_ORDER = ("less", "equal", "more")
"""The paper's Figure 2 order of error directions."""
FAIL_COLOUR = "#111111"
"""The outer line of a failing cell's frame; a white line inside it keeps the frame visible on dark cells."""
CHANGE_COLOUR = "#444444"
"""A thin frame: a significant change that does not fail the case (a fall is an improvement)."""
SHORT = {f: f.replace("direct-", "dir-").replace("indirect-", "ind-") for f in FRAMINGS}


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


def _grid(
    ax: Any,
    values: list[list[float | None]],
    rows: Sequence[str],
    columns: Sequence[str],
    *,
    title: str,
    boxed: list[list[bool]] | None = None,
    notes: list[list[str]] | None = None,
    diverging: bool = False,
    thin: list[list[bool]] | None = None,
) -> Any:
    """One annotated heat-map panel: percentages in every cell; ``boxed`` cells (failing) in a thick frame,
    black outside and white inside so that it shows on light and dark cells alike; ``thin`` cells dashed."""
    import numpy as np

    data = np.array([[np.nan if v is None else 100 * v for v in row] for row in values], dtype=float)
    cmap = _pyplot().get_cmap("RdBu_r" if diverging else "Reds").with_extremes(bad="#eeeeee")
    limits = (-50, 50) if diverging else (0, 100)
    image = ax.imshow(np.ma.masked_invalid(data), cmap=cmap, vmin=limits[0], vmax=limits[1], aspect="auto")
    ax.set_xticks(range(len(columns)), labels=columns, fontsize=9)
    ax.set_yticks(range(len(rows)), labels=rows, fontsize=9)
    ax.tick_params(length=0)
    ax.set_title(title, fontsize=11, loc="left")
    for r, row in enumerate(data):
        for c, value in enumerate(row):
            if np.isnan(value):
                ax.text(c, r, "n/a", ha="center", va="center", fontsize=8, color="#777777")
                continue
            strong = abs(value) > (30 if diverging else 55)
            text = f"{value:+.1f}" if diverging else f"{value:.1f}"
            note = notes[r][c] if notes else ""
            ax.text(
                c,
                r,
                text + (f"\n{note}" if note else ""),
                ha="center",
                va="center",
                fontsize=9 if not note else 8,
                color="white" if strong else "black",
                fontweight="bold" if boxed and boxed[r][c] else "normal",
            )
            if boxed and boxed[r][c]:
                _frame(ax, r, c)
            elif thin and thin[r][c]:
                ax.add_patch(
                    _pyplot().Rectangle(
                        (c - 0.44, r - 0.44),
                        0.88,
                        0.88,
                        fill=False,
                        edgecolor=CHANGE_COLOUR,
                        linewidth=1.2,
                        linestyle=(0, (3, 2)),
                    )
                )
    return image


def _frame(ax: Any, r: int, c: int) -> None:
    plt = _pyplot()
    ax.add_patch(
        plt.Rectangle((c - 0.46, r - 0.46), 0.92, 0.92, fill=False, edgecolor=FAIL_COLOUR, linewidth=4)
    )
    ax.add_patch(
        plt.Rectangle((c - 0.40, r - 0.40), 0.80, 0.80, fill=False, edgecolor="white", linewidth=1.5)
    )


def _panels(n: int, rows: int, columns: int) -> tuple[Any, list[Any]]:
    height = max(1.6, 0.42 * rows + 1.0)
    width = max(6.0, 0.95 * columns + 2.5)
    fig, axes = _pyplot().subplots(n, 1, figsize=(width, height * n), squeeze=False, layout="constrained")
    return fig, [a[0] for a in axes]


def direction_heatmaps(rows: Sequence[tuple[str, Mapping[str, Case]]], caption: str) -> bytes:
    """The paper's Figure 2: one panel per error direction, framings across, ``rows`` down.

    ``rows`` pairs a row name (a position, or a model when runs are combined) with its cases by framing.
    A cell is boxed in red when that case's DirErr is above its ceiling (the ceiling shown under it).
    """
    framings = [f for f in FRAMINGS if any(f in cases for _, cases in rows)]
    fig, axes = _panels(len(PANEL_ORDER), len(rows), len(framings))
    image = None
    for ax, label in zip(axes, PANEL_ORDER, strict=True):
        values, boxed, notes = [], [], []
        for _, cases in rows:
            values.append([_dir_err(cases.get(f), label) for f in framings])
            boxed.append(
                [f"DirErr({label})" in (cases[f]["breaches"] if f in cases else []) for f in framings]
            )
            notes.append([_ceiling_note(cases.get(f), label) for f in framings])
        image = _grid(
            ax,
            values,
            [name for name, _ in rows],
            [SHORT[f] for f in framings],
            title=f"DirErr({label}) %",
            boxed=boxed,
            notes=notes,
        )
    fig.suptitle(caption, fontsize=12, x=0.02, ha="left")
    fig.colorbar(image, ax=axes, shrink=0.6, label="DirErr %")
    fig.supxlabel(
        "DirErr(y): the share answered y among items whose truth is not y.\n"
        "Small number: the ceiling; thick black-and-white frame and bold: above it (the case fails).",
        fontsize=8,
        color="#555555",
        x=0.02,
        ha="left",
    )
    return _png(fig)


def _dir_err(case: Case | None, label: str) -> float | None:
    return None if case is None else case["scores"]["dir_err"][label]


def _ceiling_note(case: Case | None, label: str) -> str:
    if case is None:
        return ""
    return f"≤{100 * case['ceilings']['dir_err'][label]:.0f}"


def identity_table(cases: Sequence[Case], identities: Sequence[str], caption: str) -> bytes:
    """The paper's Table 1: rows framing x position (14), columns identities; one panel per direction."""
    by_key = {(c["framing"], c["position"], c["identity"]): c for c in cases}
    keys = list(dict.fromkeys((c["framing"], c["position"]) for c in cases))
    keys.sort(key=lambda k: (FRAMINGS.index(k[0]), k[1]))
    fig, axes = _pyplot().subplots(
        1,
        len(PANEL_ORDER),
        figsize=(3 + 1.6 * len(identities) * 3, 0.36 * len(keys) + 1.6),
        squeeze=False,
        layout="constrained",
    )
    for ax, label in zip(axes[0], PANEL_ORDER, strict=True):
        values = [[_dir_err(by_key.get((f, p, i)), label) for i in identities] for f, p in keys]
        boxed = [
            [
                f"DirErr({label})" in (by_key[(f, p, i)]["breaches"] if (f, p, i) in by_key else [])
                for i in identities
            ]
            for f, p in keys
        ]
        _grid(
            ax,
            values,
            [f"{SHORT[f]} {p}" for f, p in keys],
            list(identities),
            title=f"DirErr({label}) %",
            boxed=boxed,
        )
        if ax is not axes[0][0]:
            ax.set_yticklabels([])
    fig.suptitle(caption, fontsize=12, x=0.02, ha="left")
    return _png(fig)


def category_bars(
    categories: Mapping[str, Mapping[str, tuple[float, float, float] | None]],
    caption: str,
    baseline: Mapping[str, Mapping[str, tuple[float, float, float] | None]] | None = None,
) -> bytes:
    """Pooled DirErr per scenario category and direction, with cluster-bootstrap 95% intervals.

    ``categories`` maps a category to label -> (value, low, high), or None when no item counts;
    ``baseline``, the same for the baseline's answers, is drawn as a black bar across each bar.
    """
    plt = _pyplot()
    names = sorted(categories)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(names) + 2), 3.8), layout="constrained")
    width = 0.26
    colours = {"less": "#1f77b4", "equal": "#7f7f7f", "more": "#d62728"}
    baseline_shown = False
    for k, label in enumerate(PANEL_ORDER):
        xs: list[float] = []
        heights: list[float] = []
        errors: list[list[float]] = [[], []]
        base_x: list[float] = []
        base_y: list[float] = []
        for i, name in enumerate(names):
            entry = categories[name].get(label)
            if entry is None:
                continue
            value, low, high = entry
            xs.append(i + (k - 1) * width)
            heights.append(100 * value)
            errors[0].append(100 * (value - low))
            errors[1].append(100 * (high - value))
            base = (baseline or {}).get(name, {}).get(label)
            if base is not None:
                base_x.append(xs[-1])
                base_y.append(100 * base[0])
        ax.bar(xs, heights, width, yerr=errors, capsize=2, label=f"DirErr({label})", color=colours[label])
        if base_x:
            ax.scatter(
                base_x,
                base_y,
                marker="_",
                s=260,
                linewidths=2.5,
                color="black",
                zorder=3,
                label=None if baseline_shown else "baseline",
            )
            baseline_shown = True
    ax.set_xticks(range(len(names)), labels=names, rotation=25, ha="right", fontsize=9)
    ax.set_ylabel("DirErr % (95% CI)")
    ax.set_ylim(0, 102)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))  # outside: bars reach the top
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(caption, fontsize=11, loc="left")
    return _png(fig)


def delta_heatmaps(rows: Sequence[tuple[str, Mapping[str, Case]]], caption: str) -> bytes:
    """Candidate minus baseline, per direction: framings across, ``rows`` down.

    A rise the paired test finds significant and above ``max_increase`` fails its case: thick frame, bold.
    Any other significant change (a smaller rise, or a fall: an improvement) has a thin dashed frame.
    """
    framings = [f for f in FRAMINGS if any(f in cases for _, cases in rows)]
    fig, axes = _panels(len(PANEL_ORDER), len(rows), len(framings))
    image = None
    for ax, label in zip(axes, PANEL_ORDER, strict=True):
        values, boxed, thin, notes = [], [], [], []
        for _, cases in rows:
            changes = [_change(cases.get(f), label) for f in framings]
            values.append([None if c is None else c["difference"] for c in changes])
            boxed.append([bool(c and c["breach"]) for c in changes])
            thin.append([bool(c and c["significant"] and not c["breach"]) for c in changes])
            notes.append(["" if c is None else f"p={c['p_value']:.2g}" for c in changes])
        image = _grid(
            ax,
            values,
            [name for name, _ in rows],
            [SHORT[f] for f in framings],
            title=f"change in DirErr({label}), points",
            boxed=boxed,
            thin=thin,
            notes=notes,
            diverging=True,
        )
    fig.suptitle(caption, fontsize=12, x=0.02, ha="left")
    fig.colorbar(image, ax=axes, shrink=0.6, label="candidate - baseline, points")
    fig.supxlabel(
        "Red: DirErr rose; blue: it fell. Thick black-and-white frame and bold: a significant rise above\n"
        "max_increase (the case fails). Thin dashed frame: a significant change that does not fail it.",
        fontsize=8,
        color="#555555",
        x=0.02,
        ha="left",
    )
    return _png(fig)


def _change(case: Case | None, label: str) -> Mapping[str, Any] | None:
    comparison = (case or {}).get("baseline") or {}
    if comparison.get("status") != "compared":
        return None
    change = comparison["changes"][label]
    return change if change["difference"] is not None else None


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
