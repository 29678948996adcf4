"""The end-of-run table: what failed marked beside its value, the change against a baseline, and the notes
(a neutral case answered no better than a constant answer is named)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers.suite_runner import run_suite

from mathcomp_tests.plugin.terminal import baseline_line, chance_notes
from mathcomp_tests.verdict import chance


def _case(framing: str, correct: dict[str, int]) -> dict[str, Any]:
    golds = {"less": 40, "more": 29, "equal": 31}
    confusion = {y: {y: correct[y], "invalid": golds[y] - correct[y]} for y in golds}
    return {
        "case": f"{framing}-begin-std-one-word",
        "framing": framing,
        "scores": {"n": 100, "confusion": confusion, "accuracy": sum(correct.values()) / 100},
    }


def test_a_neutral_case_at_the_share_of_the_commonest_label_is_called_at_chance() -> None:
    always_less = _case("neutral", {"less": 40, "more": 0, "equal": 0})
    (note,) = chance_notes([always_less])
    assert note.startswith("AT CHANCE: neutral-begin-std-one-word") and "'less' (40.0%)" in note


def test_better_than_any_constant_answer_or_a_cue_framing_gets_no_note() -> None:
    learned = _case("neutral", {"less": 30, "more": 10, "equal": 5})
    cued = _case("direct-more", {"less": 0, "more": 29, "equal": 0})
    assert chance_notes([learned, cued]) == []


def test_the_notes_and_summary_json_read_one_finding_that_names_each_case() -> None:
    """verdict/chance.py finds the cases; the terminal's notes are its entries, as summary.json keeps them."""
    always_less = _case("neutral", {"less": 40, "more": 0, "equal": 0})
    raised = {**_case("neutral", {"less": 0, "more": 0, "equal": 0}), "case": "neutral-end-std-one-word"}
    raised["scores"] = None
    found = chance.at_chance([always_less, raised, _case("direct-more", {"less": 0, "more": 0, "equal": 0})])
    assert found == [{"case": "neutral-begin-std-one-word", "accuracy": 0.4, "constant": 0.4, "label": "less"}]
    assert chance_notes([always_less, raised]) == [chance.note(found[0])]
    assert chance.entries({"at_chance": found}) == found
    assert chance.entries({}) == [] and chance.entries({"at_chance": None}) == []  # written before the key


class Lines:
    """Collects what the table writes, as pytest's terminal reporter would print it."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def write_sep(self, sep: str, title: str) -> None:
        self.lines.append(f"{sep * 3} {title}")

    def write_line(self, line: str) -> None:
        self.lines.append(line)


def _gated(case_id: str, breaches: list[str], changes: dict[str, float]) -> dict[str, Any]:
    scores = {"n": 100, "dir_err": {"less": 0.1, "more": 0.45, "equal": 0.2}, "accuracy": 0.5,
              "invalid_rate": 0.0, "error_rate": 0.25, "confusion": {}}  # fmt: skip
    return {
        "case": case_id,
        "framing": "direct-more",
        "scores": scores,
        "breaches": breaches,
        "passed": not breaches,
        "baseline": {
            "status": "compared",
            "changes": {
                y: {"difference": d, "breach": f"DirErr({y}) rise" in breaches} for y, d in changes.items()
            },
        },
    }


def test_the_table_marks_what_failed_and_the_change_against_the_baseline() -> None:
    from mathcomp_tests.plugin.terminal import write_table
    from mathcomp_tests.run.comparison import largest_change

    rose_only = _gated("direct-more-begin-std-one-word", ["DirErr(more) rise"], {"less": -0.02, "more": 0.12})
    over = _gated("generated:direct-more-end-std-one-word", ["error_rate"], {"less": -0.031, "more": -0.004})
    cases = [rose_only, over]
    baseline = {"model": "hf:base", "compared": 2, "rises": ["direct-more-begin-std-one-word: DirErr(more)"],
                "no_baseline": [], "largest_change": largest_change(cases)}  # fmt: skip
    tr = Lines()
    write_table(tr, "hf:./finetune", cases, "reports/x", baseline)
    head, first, second, legend, line, folder = tr.lines[1:]
    assert head.split() == [
        "case",
        "less",
        "more",
        "equal",
        "acc",
        "invalid",
        "errors",
        "change",
        "vs",
        "baseline",
        "sees",
        "(80%",
        "power)",
    ]
    assert "45.0%^ " in first and "*" not in first and "+12.0 more" in first and first.endswith("FAIL")
    assert "25.0%*" in second and "^" not in second and "-3.1 less" in second
    assert head.index("more") + len("more") == first.index("45.0%") + len(
        "45.0%"
    )  # numbers under their heads
    assert legend.startswith("* above its ceiling; ^ rose over the baseline")
    assert line == (
        "baseline hf:base: 2 cases compared, 1 rise, largest change +12.0 points (direct-more-begin-std-one-word, more)"
    )
    assert folder == "run folder: reports/x"


def test_the_sees_column_gives_the_weakest_label_or_names_the_blind_ones() -> None:
    from mathcomp_tests.plugin.terminal import write_table

    seeing = _gated("neutral-begin-std-one-word", [], {"less": 0.0, "more": 0.0})
    blind = _gated("direct-more-begin-std-one-word", [], {"less": 0.0, "more": 0.0})
    for case, mdes in ((seeing, {"less": 0.062, "more": 0.081}), (blind, {"less": 0.062, "more": None})):
        for y, mde in mdes.items():
            case["baseline"]["changes"][y]["power"] = {"mde": mde}
    tr = Lines()
    write_table(tr, "hf:./finetune", [seeing, blind], "reports/x", {"model": "b", "compared": 2, "rises": []})
    head, first, second = tr.lines[1:4]
    assert first.rstrip().endswith("+8.1"), first  # every label seen; the weakest sees +8.1 points
    assert second.rstrip().endswith("blind: more"), second  # more cannot rise
    assert first.index("+8.1") == head.index("sees")


def test_without_a_baseline_the_table_has_no_change_column_and_no_baseline_line() -> None:
    from mathcomp_tests.plugin.terminal import write_table

    tr = Lines()
    write_table(tr, "symbolic", [_gated("neutral-begin-std-one-word", [], {})], "reports/x")
    assert "change" not in tr.lines[1] and not any(line.startswith("baseline ") for line in tr.lines)
    assert not any("above its ceiling" in line for line in tr.lines)


def test_when_everything_fell_the_largest_fall_is_shown() -> None:
    from mathcomp_tests.plugin.terminal import baseline_line
    from mathcomp_tests.run.comparison import largest_change

    cases = [_gated("a", [], {"less": -0.02, "more": -0.30}), _gated("b", [], {"less": 0.0})]
    change = largest_change(cases)
    assert change is not None and (change["case"], change["label"]) == ("a", "more")
    summary = {"model": "m", "compared": 1, "rises": [], "no_baseline": ["c"], "largest_change": change}
    assert baseline_line(summary) == (
        "baseline m: 1 case compared, 0 rises, largest change -30.0 points (a, more), 1 without a baseline"
    )


def test_a_case_failing_only_on_a_rise_shows_the_value_that_rose(tmp_path: Path) -> None:
    """The demo model under direct-more (within its ceilings) against the always-right reference."""
    path = tmp_path / "baseline.txt"
    args = ("--limit=20", "--framings=direct-more", "--positions=begin")
    assert run_suite(tmp_path, "--model=symbolic", *args, f"--update-baseline={path}").returncode == 0
    run = run_suite(tmp_path, *args, f"--baseline={path}")
    assert run.returncode == 1, run.output
    row = run.table_row("direct-more-begin-std-one-word")
    assert "100.0%^" in row and "*" not in row and row.rstrip().endswith("FAIL (new)"), row  # a rise is new
    assert run.case("direct-more-begin-std-one-word")["breaches"] == ["DirErr(more) rise"]
    assert "baseline symbolic: 1 case compared, 1 rise, largest change +" in run.output


def test_the_baseline_line_prints_a_model_name_with_control_characters_escaped() -> None:
    line = baseline_line({"model": "hf:\x1b[2Jbase", "compared": 1, "rises": []})
    assert line == "baseline hf:\\x1b[2Jbase: 1 case compared, 0 rises"
