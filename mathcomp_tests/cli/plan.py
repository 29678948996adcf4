"""`mathcomp plan [--base RUN_DIR | --base-rate R] [--rise 0.10] [--holm]`: before a gated run, how many
scenarios each test needs to see a rise of DirErr over the base, and the pytest command that gets there.

Each case's label y is one test: the exact one-sided McNemar test on the items whose gold is not y,
breaching when significant and above max_increase (docs/statistics-and-gates.md). For the selection
(--framings, --positions, --formats, defaulting as the suite does), per framing and label, it prints the
base's DirErr(y), the smallest rise the test sees with --power (80%) at the dataset's size (or at each
--scenarios), and the scenarios it needs for --rise: within the bundled set, or beyond it, where
test_generated's cases (--generated=N, labels in thirds) see it. The base is a run folder or baseline file
(--base: each case's own DirErr(y) on it; with several positions or formats, a framing's weakest case),
else a DirErr(y) assumed for every label (--base-rate, default 0.2). A label the base already answers on
(nearly) every item "cannot rise": no rise there can fail a case. Planning assumes no item leaves y
(--churn: the share of the base's y answers that do), which is optimistic. A base that kept label
probabilities (a format-4 baseline, a run under --scoring=logprob) also gets each label's soft test
planned (rows "less soft", ...; the base's spread standing in for the run's): a label is seen when either
of its tests sees the rise, and the command keeps --scoring=logprob.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..scoring import gate_plan
from . import plan_inputs
from .command import fail, usage_error
from .plan_inputs import Base, Dataset

HELP = "how many scenarios a baseline gate needs to see a rise"
MOST_PLANNED = 1_000_000_000
"""The most scenarios --scenarios plans for."""
PLACEHOLDER = "<fine-tune>"


def _share(option: str, low_open: bool = False, high_open: bool = False) -> Callable[[str], float]:
    """An argparse type: a number between 0 and 1 (ends excluded where said)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: expected a number between 0 and 1") from None
        if not (value > 0 if low_open else value >= 0) or not (value < 1 if high_open else value <= 1):
            ends = f"{'above' if low_open else 'from'} 0 {'and below' if high_open else 'to'} 1"
            raise argparse.ArgumentTypeError(f"{text}: expected a number {ends}")
        return value

    parse.__name__ = option
    return parse


def _sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(s.replace("_", "")) for s in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected whole numbers, comma-separated") from None
    if any(not 1 <= n <= MOST_PLANNED for n in sizes):
        raise argparse.ArgumentTypeError(
            f"{text}: every number of scenarios must be from 1 to {MOST_PLANNED:,} (beyond, the binomial "
            "tails the plan computes lose their precision)"
        )
    return sizes


def configure(parser: argparse.ArgumentParser) -> None:
    base = parser.add_mutually_exclusive_group()
    base.add_argument(
        "--base", type=Path, metavar="PATH", help="the base's run folder (reports/<run-id>) or baseline file"
    )
    base.add_argument(
        "--base-rate",
        type=_share("--base-rate"),
        metavar="R",
        help="the base's DirErr(y) assumed for every label and case (default 0.2, without --base)",
    )
    parser.add_argument("--framings", help="as pytest takes it (default: the suite's)")
    parser.add_argument("--positions", help="as pytest takes it (default: the suite's)")
    parser.add_argument("--formats", help="as pytest takes it (default: the suite's)")
    parser.add_argument(
        "--rise", type=_share("--rise", True), default=0.10, help="the true rise to see (default 0.10)"
    )
    parser.add_argument(
        "--power",
        type=_share("--power", True, True),
        default=0.8,
        help="the chance of seeing it (default 0.8)",
    )
    parser.add_argument(
        "--holm", action="store_true", help="each test at alpha / (cases x 3), as pytest --holm"
    )
    parser.add_argument(
        "--max-increase",
        type=_share("--max-increase", high_open=True),
        default=None,
        help="the rise allowed (default: the thresholds file's max_increase for each framing and label)",
    )
    parser.add_argument(
        "--churn",
        type=_share("--churn"),
        default=0.0,
        help="the share of the base's y answers assumed to leave y (default 0: optimistic)",
    )
    parser.add_argument(
        "--scenarios",
        type=_sizes,
        default=None,
        metavar="N,N,...",
        help="the numbers of scenarios to show the smallest rise at (default: the dataset's)",
    )
    parser.add_argument(
        "--thresholds", type=Path, default=None, help="the thresholds file (default: as pytest finds it)"
    )
    parser.add_argument("--dataset", default=None, help="a dataset CSV (default: the bundled scenarios)")


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from ..formats import NAMES as FORMATS
    from ..scoring.paired import ALPHA
    from ..settings import SelectionError, Settings, conditions, select
    from ..types import ALL_FRAMINGS, LABELS, POSITIONS

    defaults = Settings()
    try:
        settings = Settings(
            framings=select(args.framings, ALL_FRAMINGS, "framing", defaults.framings, "--framings"),
            positions=select(args.positions, POSITIONS, "position", defaults.positions, "--positions"),
            formats=select(args.formats, FORMATS, "format", defaults.formats, "--formats"),
        )
    except SelectionError as exc:
        usage_error(parser, str(exc))
    cases = conditions(settings)
    level = ALPHA / (len(cases) * len(LABELS)) if args.holm else ALPHA
    if args.base is not None:
        args.base = plan_inputs.check_base_path(parser, args.base)
    try:
        dataset = plan_inputs.dataset(args.dataset)
        base = plan_inputs.base(args.base, dataset) if args.base is not None else None
        limits = plan_inputs.limits(args, base, {c.framing for c in cases})
    except plan_inputs.PlanError as exc:
        return fail(str(exc))
    golds = base.golds if base is not None else dataset.golds
    size = len(golds)
    rate = 0.2 if args.base_rate is None else args.base_rate
    tests, missing = gate_plan.tests(
        [(c.id, c.framing) for c in cases],
        LABELS,
        golds,
        base.answers if base is not None else None,
        rate,
        lambda framing, y: args.max_increase if args.max_increase is not None else limits[framing][y],
    )
    if not tests:
        usage_error(parser, f"--base {args.base}: none of the {len(cases)} selected cases is in it")
    sizes = args.scenarios or (size,)
    scale = gate_plan.Scale(size, len(dataset.golds))
    lines = _header(args, settings, len(cases), level, base, dataset, rate, size, limits)
    target = gate_plan.Target(args.rise, args.power, level, args.churn)
    rows, needs = gate_plan.rows_for(tests, sizes, scale, target)
    soft = gate_plan.soft_tests(
        [(c.id, c.framing) for c in cases],
        LABELS,
        golds,
        base.probs if base is not None else {},
        lambda framing, y: args.max_increase if args.max_increase is not None else limits[framing][y],
    )
    if soft:
        rows += gate_plan.soft_rows(soft, sizes, scale, target)
        needs = gate_plan.needs_with_soft(tests, soft, scale, target)
        lines.append(
            "soft: the base kept label probabilities, so each label also has its soft test (paired t on the "
            "items' probability of y; the base's spread stands in for the run's, which errs towards more "
            "scenarios); a label is seen when either test sees the rise"
        )
        lines.append("")
    lines += _table(gate_plan.collapse(rows, len(settings.framings)), sizes, args.rise)
    if missing:
        lines.append(f"not in the base, left out of the plan ({len(missing)}): {', '.join(missing)}")
    lines += _commands(args, settings, defaults, base, scale, needs)
    print("\n".join(lines))
    return 0


def _header(
    args: argparse.Namespace,
    settings: Any,
    cases: int,
    level: float,
    base: Base | None,
    dataset: Dataset,
    rate: float,
    size: int,
    limits: Mapping[str, Mapping[str, float]],
) -> list[str]:
    from ..types import LABELS

    tests = cases * len(LABELS)
    holm = f" (--holm: 0.05 / {tests})" if args.holm else " (without --holm)"
    if base is not None:
        where = f"base: {base.source} ({base.model}, {size} scenarios): each case's own DirErr(y)"
    else:
        golds = list(dataset.golds.values())
        mix = ", ".join(f"{y} {golds.count(y) / len(golds):.0%}" for y in LABELS)
        where = (
            f"base: DirErr(y) assumed {rate:.2f} for every label (--base-rate); dataset {dataset.name}, "
            f"{size} scenarios (gold {mix}; a label's test pairs the items of the other golds)"
        )
    values = sorted({v for f in limits.values() for v in f.values()})
    limit = (
        f"{args.max_increase:g} (--max-increase)"
        if args.max_increase is not None
        else ("/".join(f"{v:g}" for v in values) + " (the thresholds file's)")
    )
    churn = f"{args.churn:.0%} of the base's y answers" if args.churn else "none (optimistic; --churn)"
    return [
        f"plan: {cases} cases ({', '.join(settings.framings)}; {', '.join(settings.positions)}; "
        f"{', '.join(settings.formats)}) x {len(LABELS)} labels = {tests} tests",
        f"each: exact one-sided McNemar at level {level:.3g}{holm}, a breach also needs the rise above "
        f"max_increase {limit}; items leaving y: {churn}",
        where,
        f"target: a rise of +{100 * args.rise:.1f} points seen with {100 * args.power:g}% power",
        "",
    ]


def _table(rows: Sequence[gate_plan.Row], sizes: Sequence[int], rise: float) -> list[str]:
    heads = [
        "framing",
        "label",
        "base",
        "pairs",
        *(f"at {n:,}" for n in sizes),
        f"scenarios for +{100 * rise:.1f}",
    ]
    cells = [
        [
            r.framing,
            r.label,
            f"{r.rate:.2f}",
            str(r.pairs),
            *r.seen,
            r.needs + (f"   ({r.case})" if r.case else ""),
        ]
        for r in rows
    ]
    widths = [max(len(row[i]) for row in [heads, *cells]) for i in range(len(heads) - 1)]
    lines = []
    for row in [heads, *cells]:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  " + row[-1])
    lines.insert(1, "  ".join("-" * w for w in widths) + "  " + "-" * len(heads[-1]))
    lines.append(
        f"(pairs: at {sizes[0]:,} scenarios; at N: the smallest rise seen with that power, in points; "
        "base: DirErr(y) of the weakest case)"
    )
    return lines


def _commands(
    args: argparse.Namespace,
    settings: Any,
    defaults: Any,
    base: Base | None,
    scale: gate_plan.Scale,
    needs: gate_plan.Needs,
) -> list[str]:
    """The pytest command; first the base's, where it must answer more scenarios than it did."""
    selection = "".join(
        f" --{name}={','.join(getattr(settings, name))}"
        for name in ("framings", "positions", "formats")
        if getattr(settings, name) != getattr(defaults, name)
    )
    selection += " --scoring=logprob" if base is not None and base.probs else ""  # the soft tests need it
    holm = " --holm" if args.holm else ""
    model = base.model if base is not None else "<base>"
    lines = ["", "to get there:"]
    if needs.generated:
        n = needs.generated
        return lines + [
            f"  pytest --model={model} --generated={n} --update-baseline=base.txt{selection}"
            f"   # once: the base's answers, {n:,} generated scenarios too",
            f"  pytest --model={PLACEHOLDER} --baseline=base.txt --generated={n}{selection}{holm}",
            f"  (test_generated's cases, {n:,} fresh scenarios each, see the rise; test_framing's keep the "
            f"dataset's {scale.bundled:,}: the two do not pool)",
        ]
    if needs.dataset > scale.answered:
        return lines + [
            f"  pytest --model={model} --update-baseline=base.txt{selection}   # once: the base on all "
            f"{scale.bundled:,} scenarios",
            f"  pytest --model={PLACEHOLDER} --baseline=base.txt{selection}{holm}",
        ]
    if not needs.dataset:
        return lines + [
            f"  no test of this selection can see a rise of +{100 * args.rise:.1f} points at any number of "
            "scenarios (the table says why for each); more scenarios will not help"
        ]
    source = str(base.source) if base is not None else "base.txt"
    return lines + [
        f"  pytest --model={PLACEHOLDER} --baseline={source}{selection}{holm}",
        f"  (its {scale.answered:,} scenarios suffice for every test that can see the rise)",
    ]
