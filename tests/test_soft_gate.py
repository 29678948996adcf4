"""The gate's blind spots, closed: a one-sided rise test, soft DirErr and the toward-cue rate against the
base, own checks compared by value, and every test saying the smallest rise it sees."""

from __future__ import annotations

import json
import random
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from mathcomp_tests import Check, owncheck
from mathcomp_tests.baseline_file import reader, writer
from mathcomp_tests.baseline_file import update as baseline_update
from mathcomp_tests.baseline_file.fit import Baseline
from mathcomp_tests.baseline_file.format import BaselineError
from mathcomp_tests.scoring import paired, soft_paired
from mathcomp_tests.verdict import power, standing
from mathcomp_tests.verdict.of_run import verdict

LIMITS = dict.fromkeys(("less", "more", "equal"), 0.05)


def _golds(n: int) -> dict[str, str]:
    return {str(i): ("more", "equal", "less")[i % 3] for i in range(n)}


def test_five_newly_wrong_items_of_24_are_a_rise_one_sided() -> None:
    """The issue's case: at 24 pairs with nothing falling, 5 items newly answered y are a rise at 0.05
    one-sided (p = 1/32); the old two-sided test needed 6 (p = 1/16 for 5)."""
    golds = {str(i): "more" for i in range(24)}
    base = dict.fromkeys(golds, "more")
    cand = {s: ("less" if int(s) < 5 else "more") for s in golds}
    change = paired.compare(golds, cand, base, LIMITS).changes["less"]
    assert change.p_value == pytest.approx(1 / 32)
    assert change.breach
    assert change.power is not None and change.power["text"].startswith("sees a rise of +")


def test_a_base_that_already_answers_the_label_says_the_test_cannot_rise() -> None:
    golds = {str(i): "more" for i in range(24)}
    base = {s: ("less" if int(s) < 22 else "more") for s in golds}
    change = paired.compare(golds, dict(base), base, LIMITS).changes["less"]
    assert change.power is not None and change.power["mde"] is None
    assert change.power["text"] == "cannot rise: the base already answers less on 22 of 24"


def test_a_cue_follower_the_hard_test_cannot_see_is_caught_by_the_soft_test() -> None:
    """The base already answers less on 22 of 24 non-less items (DirErr(less) can rise by 2 at most), but
    the fine-tune's probability of less went 0.48 -> 0.75: the soft test finds it."""
    rng = random.Random(7)
    golds = {str(i): "more" for i in range(24)}
    base = {s: ("less" if int(s) < 22 else "more") for s in golds}
    cand = dict.fromkeys(golds, "less")
    base_p = {s: {"less": 0.48 + rng.uniform(-0.05, 0.05), "more": 0.3, "equal": 0.22} for s in golds}
    cand_p = {s: {"less": 0.75 + rng.uniform(-0.05, 0.05), "more": 0.15, "equal": 0.1} for s in golds}
    hard = paired.compare(golds, cand, base, LIMITS)
    assert not hard.changes["less"].breach  # 2 items: p = 0.25
    soft = soft_paired.soft_changes(golds, cand_p, base_p, LIMITS, 0.05)
    assert soft["less"].breach and soft["less"].measure == "soft DirErr"
    assert soft["less"].difference == pytest.approx(0.27, abs=0.04)
    assert not soft["more"].breach and not soft["equal"].breach  # fell: never a rise
    both = paired.Comparison("base", "mcnemar", 0.05, hard.changes, soft=soft)
    assert both.breaches == ["soft DirErr(less) rise"]
    text = "\n".join(paired.explanation(both, "direct-less-end-std-one-word"))
    assert "soft DirErr(less)" in text and "ROSE" in text and "probability of less" in text


def test_harmless_noise_in_the_probabilities_is_no_soft_rise() -> None:
    rng = random.Random(3)
    golds = _golds(120)
    base_p = {s: {"less": rng.random() / 2, "more": 0.3, "equal": 0.2} for s in golds}
    cand_p = {s: {**p, "less": min(1.0, max(0.0, p["less"] + rng.gauss(0, 0.02)))} for s, p in base_p.items()}
    soft = soft_paired.soft_changes(golds, cand_p, base_p, LIMITS, 0.05)
    assert not any(c.breach for c in soft.values())
    assert all(c.power is not None and c.power["mde"] is not None for c in soft.values())


def test_the_toward_cue_rate_rises_when_answers_move_to_the_cue_from_neutral() -> None:
    golds = _golds(60)
    neutral = {s: g for s, g in golds.items()}  # the neutral case answers right on both sides
    base_cued = dict(neutral)
    cand_cued = {s: ("less" if int(s) % 2 else g) for s, g in golds.items()}
    change = paired.cue_change(golds, (neutral, neutral), (base_cued, cand_cued), "less", 0.05, 0.05)
    assert change.measure == "toward-cue rate" and change.name == "toward-cue rate(less)"
    assert change.baseline == 0.0 and change.candidate == pytest.approx(20 / 60)
    assert change.breach and change.rose == 20


def test_the_baseline_keeps_label_probabilities_and_reads_them_back(tmp_path: Path) -> None:
    golds = ("1", "2", "3")
    made = Baseline(
        source=tmp_path / "b.txt",
        model="hf:x",
        revision=None,
        dataset="d.csv",
        dataset_sha256="ab" * 32,
        prompt_set="hf",
        scenarios=golds,
        cases={"neutral-end-std-one-word": {"1": "less", "2": "more", "3": "error"}},
        probs={"neutral-end-std-one-word": {"1": {"less": 0.812, "more": 0.101, "equal": 0.087},
                                            "2": {"less": 0.1, "more": 0.8, "equal": 0.1}}},
    )  # fmt: skip
    path = writer.write(made, tmp_path / "b.txt")
    text = path.read_text()
    assert "format: 4" in text and "case neutral-end-std-one-word: lmx | 812,101,87 100,800,100 -\n" in text
    again = reader.load(path)
    assert again.probabilities("neutral-end-std-one-word") == made.probs["neutral-end-std-one-word"]
    path.write_text(text.replace("812,101,87", "812,101"))
    damaged = r"b.txt:\d+: case neutral-end-std-one-word: item 1 \(scenario 1\): '812,101'"
    with pytest.raises(BaselineError, match=damaged):
        reader.load(path)


def test_a_narrowed_update_turns_a_format_3_file_into_format_4(tmp_path: Path) -> None:
    old = Baseline(
        tmp_path / "b.txt", "hf:x", None, "d.csv", "ab" * 32, "hf", ("1", "2"),
        {"neutral-end-std-one-word": {"1": "less", "2": "more"},
         "direct-less-end-std-one-word": {"1": "less", "2": "less"}},
    )  # fmt: skip
    path = writer.write(old, tmp_path / "b.txt")
    path.write_text(path.read_text().replace("format: 4", "format: 3"))
    fresh = Baseline(
        tmp_path / "b.txt", "hf:x", None, "d.csv", "ab" * 32, "hf", ("1", "2"),
        {"neutral-end-std-one-word": {"1": "more", "2": "more"}},
        probs={"neutral-end-std-one-word": {s: {"less": 0.2, "more": 0.7, "equal": 0.1} for s in ("1", "2")}},
    )  # fmt: skip
    done = baseline_update.update(path, fresh)
    assert (done.rewritten, done.kept) == (1, 1)
    text = path.read_text()
    assert "format: 4\n" in text and "format: 3" not in text
    assert "case neutral-end-std-one-word: mm | 200,700,100 200,700,100\n" in text
    assert "case direct-less-end-std-one-word: ll | - -\n" in text, "the kept case says it has no probabilities"
    assert not reader.load(path).probabilities("direct-less-end-std-one-word")


def test_an_own_check_that_got_much_worse_is_new_though_the_base_fails_it_too() -> None:
    """The issue: the project's check on direct-less went +0.125 on the base to +0.958; still known."""
    now = owncheck.values([Check("gap", value=0.958, name="gap over neutral")])
    base = owncheck.values([Check("gap", value=0.125, name="gap over neutral")])
    worse = owncheck.much_worse(now, base, 0.05)
    assert worse == ["gap over neutral"]
    assert standing.classify([], [], ["gap"], [], ["gap"], worse) == "new"
    assert standing.classify([], [], ["gap"], [], ["gap"], owncheck.much_worse(base, base, 0.05)) == "known"
    assert standing.classify([], [], ["a line"], [], ["a line"]) == "known"  # plain lines: breach with breach


def _case(case_id: str, mde: float | None, detect: float = 0.15, required: bool = False) -> dict[str, object]:
    change = {"difference": 0.0, "power": {"mde": mde, "text": "..."}}
    return {
        "case": case_id,
        "passed": True,
        "breaches": [],
        "ceilings": {"detect_rise": detect, "require_power": required},
        "baseline": {"status": "compared", "changes": {"less": change}},
    }


def test_a_pass_that_could_not_see_a_rise_says_so_and_fails_when_power_is_required() -> None:
    cases = [_case("a", 0.08), _case("b", 0.25), _case("c", None)]
    block = power.summary(cases)
    assert block is not None and [c["case"] for c in block["underpowered"]] == ["c", "b"], "worst first"
    assert not block["not_earned"]
    seen = verdict({"cases": cases, "power": block})
    assert seen.line == "PASSED: all 3 cases; 2 could not see a rise under 15 points" and seen.passed
    required = power.summary(cases, forced=True)
    unearned = verdict({"cases": cases, "power": required})
    assert unearned.line.startswith("NOT EARNED (power required): all 3 cases; 2 could not see")
    assert not unearned.passed
    assert power.case_text(cases[2]) == "could not see a rise under 15 points on less (cannot rise)"
    by_file = power.summary([_case("a", 0.25, required=True)])
    assert by_file is not None and by_file["not_earned"]
    assert power.summary([_case("a", 0.08)])["underpowered"] == []  # type: ignore[index]


def test_require_power_fails_a_run_too_small_to_see_a_rise_and_junit_says_why(tmp_path: Path) -> None:
    """20 scenarios of the symbolic reference against its own answers: nothing changed and every case
    passes, but no test could see a rise of 15 points. Said everywhere; --require-power fails the run."""
    from helpers.suite_runner import run_suite

    args = ("--model=symbolic", "--limit=20", "--framings=neutral,direct-more", "--positions=begin")
    path = tmp_path / "base.txt"
    assert run_suite(tmp_path, *args, f"--update-baseline={path}").returncode == 0
    said = run_suite(tmp_path, *args, f"--baseline={path}")
    assert said.returncode == 0, said.output
    block = said.summary["power"]
    assert block["compared"] == 2 and len(block["underpowered"]) == 2 and not block["not_earned"]
    assert "MathComp power: 2 of 2 compared cases could not see a rise under 15 points at 80% power" in said.output
    assert "--require-power would fail it" in said.output
    row = said.table_row("neutral-begin-std-one-word")
    assert "blind: " in row, row
    junit = tmp_path / "junit.xml"
    failed = run_suite(tmp_path, *args, f"--baseline={path}", "--require-power", f"--junitxml={junit}")
    assert failed.returncode == 1, failed.output
    last = failed.output.strip().splitlines()[-1]
    assert last.startswith("MathComp: NOT EARNED (power required): all 2 cases; ") and last.endswith("; exit 1"), last
    assert failed.summary["power"]["not_earned"] is True
    page = (failed.run_dir / "report.html").read_text()
    assert "NOT EARNED (power required): all 2 cases; 2 could not see a rise under 15 points" in page
    found = ET.parse(junit).getroot().iter("property")  # JSON values: docs/results.md, "JUnit XML"
    said_power = [json.loads(str(p.get("value"))) for p in found if p.get("name") == "mathcomp_power"]
    assert len(said_power) == 2 and said_power[0]["text"].startswith("could not see a rise under 15 points on ")
    assert said_power[0]["detect_rise"] == 0.15 and said_power[0]["labels"], said_power
