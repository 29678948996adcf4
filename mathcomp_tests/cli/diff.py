"""`mathcomp diff RUN_A RUN_B`: what changed from one run to a later one of the same selection, item by item.

RUN_A is the earlier run (the base), RUN_B the newer (the candidate); each is a run folder (reports/<run-id>)
or a baseline file (written by --update-baseline). The cases in the gate's order when RUN_B is a run folder
(its failed cases first, the largest rise over the baseline first; else the worst regression first: right
to wrong + to the cue word's label - wrong to right - off it). Per case: the counts of each kind of change,
per label how many items newly answered it and how many no longer (the paired test's pairs), then each
changed item (--all: every item) with its prompt (shortened), both answers and, under --scoring=logprob,
both runs' label probabilities. --html writes the same page, opening with a table of the cases.
A baseline file keeps answers as letters: no prompt or answer text on its side.

Exit status: 0 done; 1 damaged input (a results.jsonl line cut short, an unreadable baseline file) or an
HTML file that cannot be written; 2 a usage error, two runs of different selections included (another
dataset, other scenarios, cases in one and not the other, another --generated draw): the line names what
differs.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..printable import printable
from .command import check_output, fail, usage_error, write

if TYPE_CHECKING:
    from ..records.answer_sets import AnswerSet
    from ..scoring.item_changes import CaseChanges

HELP = "what changed between two runs, item by item"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "run_a", type=Path, metavar="RUN_A", help="the earlier run: a run folder or a baseline file"
    )
    parser.add_argument(
        "run_b", type=Path, metavar="RUN_B", help="the newer run: a run folder or a baseline file"
    )
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument(
        "--changed-only",
        dest="every",
        action="store_false",
        help="list only the items whose answer (or a label's probability) changed (the default)",
    )
    shown.add_argument("--all", dest="every", action="store_true", help="list every item, changed or not")
    parser.set_defaults(every=False)
    parser.add_argument(
        "--html",
        type=Path,
        default=None,
        metavar="FILE",
        help="also write the same as a self-contained HTML page (a 'changed items only' checkbox in it)",
    )


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from ..listing import counted
    from ..records import answer_sets
    from ..report import gate_order
    from ..report.item_changes import ORDER, ORDER_WITHOUT_GATE, REGRESSION, changes_html
    from ..scoring import item_changes

    check_output(parser, args.html, "--html", (args.run_a, args.run_b))
    try:
        base = answer_sets.load(args.run_a, "RUN_A")
        candidate = answer_sets.load(args.run_b, "RUN_B")
    except answer_sets.SourceError as exc:
        usage_error(parser, str(exc))
    except answer_sets.DamagedError as exc:
        return fail(str(exc))
    differ = item_changes.differences(base.selection, candidate.selection)
    if differ:
        usage_error(
            parser, f"{args.run_a} and {args.run_b} are not runs of one selection: {'; '.join(differ)}"
        )
    golds = {
        case: {**base.golds.get(case, {}), **candidate.golds.get(case, {})} for case in candidate.answers
    }
    changes = item_changes.compare(golds, base.answers, candidate.answers)
    lines = _heading(base, candidate, golds)
    changed = sum(len(c.changed) for c in changes)
    lines.append(
        f"{counted(len(changes), 'case')}, {counted(sum(len(c.items) for c in changes), 'item')} compared, "
        f"{changed} changed."
    )
    changes = gate_order.in_gate_order(changes, candidate.summary)
    shown = [*lines, REGRESSION, ORDER if candidate.summary else ORDER_WITHOUT_GATE]
    show("\n".join([*shown, *(line for case in changes for line in _case_lines(case, args.every))]))
    if args.html is None:
        return 0
    from ..report.standalone import page

    body = changes_html(
        changes,
        "A (earlier)",
        "B (newer)",
        lines,
        "mathcomp-diff",
        every=args.every,
        summary=candidate.summary,
    )
    return write(args.html, page(f"MathComp diff: {args.run_a} -> {args.run_b}", body))


def show(text: str) -> None:
    """Print ``text``; a reader that stops early (``| head``) ends the printing, not the command: the rest
    of stdout goes nowhere, without a traceback."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _heading(
    base: AnswerSet, candidate: AnswerSet, golds: Mapping[str, Mapping[str, str | None]]
) -> list[str]:
    from ..records.answer_sets import LETTERS_ONLY

    lines = [
        f"{name}: {printable(str(side.source))} ({side.kind}, model {printable(side.model)})"
        for name, side in (("A (earlier)", base), ("B (newer)", candidate))
    ]
    lines += [
        f"{name}: {LETTERS_ONLY}." for name, side in (("A", base), ("B", candidate)) if not side.has_text
    ]
    if not any(g for case in golds.values() for g in case.values()):
        lines.append(
            "Neither side keeps the gold labels (two baseline files, their dataset not found as it was): "
            "right to wrong and wrong to right are not said."
        )
    return lines


def _case_lines(case: CaseChanges, every: bool) -> list[str]:
    from ..report.item_changes import probabilities, prompt_line, shorten
    from ..scoring.item_changes import KINDS

    cue = f"cue {case.cue}" if case.cue else "no cue"
    lines = [
        "",
        f"{case.case} ({cue}): regression {case.regression:+d}, {len(case.changed)} of {len(case.items)} items "
        "changed",
    ]
    counts = case.counts
    lines.append("  " + " · ".join(f"{k} {counts[k]}" for k in KINDS))
    lines.append(
        "  "
        + " · ".join(
            f"DirErr({f.label}) rose {f.rose} fell {f.fell}"
            + ("" if f.shift is None else f", p({f.label}) {100 * f.shift:+.1f} points")
            for f in case.labels
        )
    )
    for item in case.items if every else case.changed:
        change = ", ".join(item.kinds) or "no change"
        if item.cue_shift is not None:
            change += f"; p({item.cue}) {100 * item.cue_shift:+.1f} points"
        lines.append(f"  scenario {printable(item.scenario)}, gold {item.gold or '?'}: {change}")
        prompt = item.candidate.prompt or item.base.prompt
        if prompt is not None:
            lines.append(f"    prompt: {printable(prompt_line(prompt, 120))}")
        for name, answer in (("A", item.base), ("B", item.candidate)):
            text = "" if answer.raw is None else f"  {printable(repr(shorten(answer.raw, 70)))}"
            probs = "" if answer.probs is None else f"  ({probabilities(answer.probs)})"
            lines.append(f"    {name}: {answer.outcome}{text}{probs}")
    return lines
