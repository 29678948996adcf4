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
) -> Any:
    """One annotated heat-map panel: percentages in every cell, boxed cells outlined in red."""
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
                ax.add_patch(
                    _pyplot().Rectangle(
                        (c - 0.47, r - 0.47), 0.94, 0.94, fill=False, edgecolor=FAIL_COLOUR, linewidth=3
                    )
                )
    return image


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
        "Small number: the ceiling; black frame and bold: above it (the case fails).",
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
    categories: Mapping[str, Mapping[str, tuple[float, float, float] | None]], caption: str
) -> bytes:
    """Pooled DirErr per scenario category and direction, with cluster-bootstrap 95% intervals.

    ``categories`` maps a category to label -> (value, low, high), or None when no item counts.
    """
    plt = _pyplot()
    names = sorted(categories)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(names) + 2), 3.8), layout="constrained")
    width = 0.26
    colours = {"less": "#1f77b4", "equal": "#7f7f7f", "more": "#d62728"}
    for k, label in enumerate(PANEL_ORDER):
        xs: list[float] = []
        heights: list[float] = []
        errors: list[list[float]] = [[], []]
        for i, name in enumerate(names):
            entry = categories[name].get(label)
            if entry is None:
                continue
            value, low, high = entry
            xs.append(i + (k - 1) * width)
            heights.append(100 * value)
            errors[0].append(100 * (value - low))
            errors[1].append(100 * (high - value))
        ax.bar(xs, heights, width, yerr=errors, capsize=2, label=f"DirErr({label})", color=colours[label])
    ax.set_xticks(range(len(names)), labels=names, rotation=25, ha="right", fontsize=9)
    ax.set_ylabel("DirErr % (95% CI)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=8, ncols=3, loc="upper left")
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(caption, fontsize=11, loc="left")
    return _png(fig)


def delta_heatmaps(rows: Sequence[tuple[str, Mapping[str, Case]]], caption: str) -> bytes:
    """Candidate minus baseline, per direction: framings across, ``rows`` down; significant cells boxed."""
    framings = [f for f in FRAMINGS if any(f in cases for _, cases in rows)]
    fig, axes = _panels(len(PANEL_ORDER), len(rows), len(framings))
    image = None
    for ax, label in zip(axes, PANEL_ORDER, strict=True):
        values, boxed, notes = [], [], []
        for _, cases in rows:
            changes = [_change(cases.get(f), label) for f in framings]
            values.append([None if c is None else c["difference"] for c in changes])
            boxed.append([bool(c and c["significant"]) for c in changes])
            notes.append(["" if c is None else f"p={c['p_value']:.2g}" for c in changes])
        image = _grid(
            ax,
            values,
            [name for name, _ in rows],
            [SHORT[f] for f in framings],
            title=f"change in DirErr({label}), points",
            boxed=boxed,
            notes=notes,
            diverging=True,
        )
    fig.suptitle(caption, fontsize=12, x=0.02, ha="left")
    fig.colorbar(image, ax=axes, shrink=0.6, label="candidate - baseline, points")
    fig.supxlabel(
        "black frame and bold: significant paired change (p < alpha)",
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


def history_lines(series: Mapping[str, Sequence[tuple[str, float | None]]], title: str) -> bytes:
    """One line per metric across runs (x: run ids in order)."""
    plt = _pyplot()
    runs = list(dict.fromkeys(r for points in series.values() for r, _ in points))
    fig, ax = plt.subplots(figsize=(max(6.0, 0.7 * len(runs) + 3), 3.8), layout="constrained")
    for name, points in series.items():
        xs = [runs.index(r) for r, v in points if v is not None]
        ys = [100 * v for _, v in points if v is not None]
        ax.plot(xs, ys, marker="o", label=name)
    ax.set_xticks(range(len(runs)), labels=[_short_run(r) for r in runs], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("%")
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.set_title(title, fontsize=11, loc="left")
    return _png(fig)


def _short_run(run_id: str) -> str:
    """`20250101-120000-model-slug-ab12` -> `20250101-120000 ab12` (the model is in the title)."""
    parts = run_id.split("-")
    return f"{parts[0]}-{parts[1]} {parts[-1]}" if len(parts) >= 4 else run_id
