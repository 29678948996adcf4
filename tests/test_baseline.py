"""Baseline files: written, read back exactly, refused with a clear error when damaged or when they do
not fit the run; each case then compared on the same items with a paired test."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from mathcomp_tests.backends.models import recorded
from mathcomp_tests.baseline_file import reader, writer
from mathcomp_tests.baseline_file.fit import Baseline
from mathcomp_tests.baseline_file.format import BaselineError, Fingerprint
from mathcomp_tests.data.generated_draw import Draw
from mathcomp_tests.scoring import paired

LIMITS = dict.fromkeys(("less", "more", "equal"), 0.05)


def _baseline(tmp_path: Path) -> Baseline:
    return Baseline(
        source=tmp_path / "baseline.txt",
        model="symbolic",
        revision="1",
        dataset="fixtures/scenarios.csv",
        dataset_sha256="ab" * 32,
        prompt_set="hf",
        scenarios=("1", "2", "3"),
        cases={"neutral-begin-std-one-word": {"1": "less", "2": "invalid", "3": "error"}},
    )


def test_a_baseline_file_reads_back_what_was_written(tmp_path: Path) -> None:
    written = writer.write(_baseline(tmp_path), tmp_path / "baseline.txt")
    text = written.read_text()
    assert "case neutral-begin-std-one-word: lix" in text
    again = reader.load(written)
    assert again == _baseline(tmp_path)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda t: t.replace(": lix", ": liz"),
            r"baseline.txt:\d+: case neutral-begin-std-one-word: unknown",
        ),
        (lambda t: t.replace(": lix", ": li"), r"baseline.txt:\d+: case .* has 2 answers for 3 scenarios"),
        (
            lambda t: t.replace("prompt-set: hf\n", ""),
            r"baseline.txt: not a baseline file: missing prompt-set",
        ),
        (
            lambda t: t.replace("format: 4", "format: 9"),
            r"baseline format '9'; this version reads format 1, 2, 3 or 4",
        ),
        (lambda t: t + "colour: blue\n", r"baseline.txt:\d+: unknown key 'colour'"),
        (lambda t: t + "no colon here\n", r"baseline.txt:\d+: expected `key: value`"),
    ],
)
def test_a_damaged_baseline_file_names_the_line_and_what_was_expected(
    tmp_path: Path, edit: object, message: str
) -> None:
    path = writer.write(_baseline(tmp_path), tmp_path / "baseline.txt")
    path.write_text(edit(path.read_text()))  # type: ignore[operator]
    with pytest.raises(BaselineError, match=message):
        reader.load(path)


def test_a_missing_baseline_is_an_error_naming_the_path(tmp_path: Path) -> None:
    with pytest.raises(BaselineError, match=r"nowhere\.txt: no such file or run folder"):
        reader.load(tmp_path / "nowhere.txt")
    (tmp_path / "run").mkdir()
    with pytest.raises(BaselineError, match="not a finished run folder"):
        reader.load(tmp_path / "run")


def test_fit_checks_name_every_difference(tmp_path: Path) -> None:
    base = _baseline(tmp_path)
    fits = Fingerprint(
        "fixtures/scenarios.csv", "ab" * 32, "hf", ("1", "2", "3"), ("neutral-begin-std-one-word",)
    )
    base.check_fits(fits)
    with pytest.raises(
        BaselineError, match=r"another dataset: .* sha256 abababab.*, the run's other.csv has cdcd"
    ):
        base.check_fits(replace(fits, dataset="other.csv", dataset_sha256="cd" * 32))
    with pytest.raises(
        BaselineError, match=r"other scenarios \(3 in the baseline, 2 in the run; only in the baseline: 3"
    ):
        base.check_fits(replace(fits, scenarios=("1", "2")))
    with pytest.raises(BaselineError, match="another prompt set: baseline 'hf', run 'openai'"):
        base.check_fits(replace(fits, prompt_set="openai"))
    with pytest.raises(BaselineError, match="another selection: none of the run's 1 cases"):
        base.check_fits(replace(fits, cases=("neutral-end-std-json",)))


def test_a_paired_rise_above_max_increase_fails_with_both_values_and_the_items() -> None:
    golds = {str(i): "less" for i in range(100)}
    base = {str(i): "less" for i in range(100)}
    cand = {str(i): ("more" if i < 15 else "less") for i in range(100)}
    cand["99"] = "error"  # a failed request leaves the pairs
    result = paired.compare(golds, cand, base, LIMITS)
    change = result.changes["more"]
    assert (change.pairs, change.rose, change.fell) == (99, 15, 0)
    assert change.difference == pytest.approx(15 / 99) and change.p_value == pytest.approx(1 / 2**15)
    assert change.breach and result.breaches == ["DirErr(more) rise"]
    assert not result.changes["equal"].breach and result.changes["equal"].p_value == 1.0
    text = "\n".join(paired.explanation(result, "neutral-begin-std-one-word"))
    assert "baseline 0.000 -> 0.152: difference +0.152 [95% CI" in text and "p = 3.052e-05" in text
    assert text.count("scenario ") == 3 and "baseline less -> now more" in text


def test_a_small_rise_is_not_a_failure_even_when_significant_nor_a_large_noisy_one() -> None:
    golds = {str(i): "less" for i in range(400)}
    base = {str(i): "less" for i in range(400)}
    small = {str(i): ("more" if i < 12 else "less") for i in range(400)}  # +0.03, p < 0.001
    assert not paired.compare(golds, small, base, LIMITS).changes["more"].breach
    noisy_base = {str(i): ("more" if i % 2 else "less") for i in range(8)}
    noisy = {str(i): ("more" if i < 6 else "less") for i in range(8)}
    change = paired.compare({str(i): "less" for i in range(8)}, noisy, noisy_base, LIMITS).changes["more"]
    assert change.difference == pytest.approx(0.25) and not change.significant and not change.breach


def test_the_bootstrap_test_agrees_on_a_clear_rise() -> None:
    golds = {str(i): "less" for i in range(100)}
    base = {str(i): "less" for i in range(100)}
    cand = {str(i): ("more" if i < 15 else "less") for i in range(100)}
    change = paired.compare(golds, cand, base, LIMITS, method="bootstrap").changes["more"]
    assert change.breach and change.p_value < 0.01 and change.low is not None and change.low > 0


def test_under_a_rise_the_items_shown_are_those_that_raised_it() -> None:
    """direct-less: the candidate answers less more often. It now gets right ten gold-less items the
    baseline got wrong (they cannot count towards DirErr(less)) and answers less on 14 items of other golds."""
    golds = {str(i): ("less", "more", "equal")[i // 20] for i in range(60)}
    base = {s: ("more" if int(s) < 10 else g) for s, g in golds.items()}
    base["47"] = "invalid"  # not less: its change to less raised DirErr(less) too
    raising = [str(i) for i in (*range(21, 28), *range(41, 48))]
    cand = {s: ("less" if s in raising else g) for s, g in golds.items()}
    result = paired.compare(golds, cand, base, LIMITS)
    change = result.changes["less"]
    assert change.breach and change.rose == 14 and change.fell == 0
    assert change.rose_scenarios == raising
    assert [i["scenario"] for i in change.rose_examples] == ["21", "22", "23"]
    data = json.loads(json.dumps(result.as_dict()))
    assert data["changes"]["less"]["rose_scenarios"] == raising
    assert data["changes"]["less"]["rose_examples"][0] == {
        "scenario": "21",
        "gold": "more",
        "baseline": "more",
        "candidate": "less",
    }
    for item in result.changed_items:
        assert item["gold"] != "less" and item["baseline"] != "less" and item["candidate"] == "less", item
    assert result.changes["more"].rose_scenarios == [] and result.changes["more"].fell == 10
    text = "\n".join(paired.explanation(result, "direct-less-begin-std-one-word"))
    assert "DirErr(less) rose on 14 items newly answered less, e.g. scenarios 21, 22, 23:" in text
    assert "scenario 21: gold more, baseline more -> now less" in text
    assert "gold less" not in text and "items whose answer changed" not in text


# The suite, run as a user runs it (symbolic backend: fast and deterministic).

def _with_generated(tmp_path: Path) -> Baseline:
    draw = Draw(seed=7, sha256="cd" * 32, scenarios=("gen-7-1", "gen-7-2"))
    cases = {
        **_baseline(tmp_path).cases,
        "generated:neutral-begin-std-one-word": {"gen-7-1": "more", "gen-7-2": "equal"},
    }
    return replace(_baseline(tmp_path), cases=cases, generated=draw)


def test_generated_cases_are_written_under_their_own_scenarios_and_read_back(tmp_path: Path) -> None:
    written = writer.write(_with_generated(tmp_path), tmp_path / "baseline.txt")
    text = written.read_text()
    assert "format: 4" in text
    assert "generated-seed: 7\n" in text and "generated-scenarios: gen-7-1 gen-7-2\n" in text
    assert "case generated:neutral-begin-std-one-word: me\n" in text
    assert reader.load(written) == _with_generated(tmp_path)


def test_a_format_1_file_is_still_read(tmp_path: Path) -> None:
    path = writer.write(_baseline(tmp_path), tmp_path / "baseline.txt")
    path.write_text(re.sub(r"cases: \d+\n", "", path.read_text().replace("format: 4", "format: 1")))
    assert reader.load(path) == _baseline(tmp_path)


def test_a_generated_case_without_its_scenarios_names_the_line(tmp_path: Path) -> None:
    path = writer.write(_with_generated(tmp_path), tmp_path / "baseline.txt")
    path.write_text("".join(x for x in path.read_text().splitlines(True) if not x.startswith("generated-")))
    with pytest.raises(
        BaselineError, match=r"baseline.txt:\d+: case generated:neutral.* is a generated case"
    ):
        reader.load(path)
    path.write_text(path.read_text() + "generated-seed: x\n")
    with pytest.raises(BaselineError, match="generated-seed without generated-sha256, generated-scenarios"):
        reader.load(path)


def test_generated_cases_fit_only_the_same_count_seed_and_scenarios(tmp_path: Path) -> None:
    base = _with_generated(tmp_path)
    assert base.generated is not None
    base.check_generated_fits(base.generated)
    _baseline(tmp_path).check_generated_fits(replace(base.generated, seed=1))  # none to compare: fits
    with pytest.raises(
        BaselineError,
        match=r"generated cases \(test_generated\): drawn with --generated=2 --hypothesis-seed=7 there, "
        r"--generated=2 --hypothesis-seed=8 here; run with its options, or rewrite the baseline",
    ):
        base.check_generated_fits(replace(base.generated, seed=8))
    with pytest.raises(BaselineError, match=r"--generated=2 --hypothesis-seed=7 there, --generated=1 "):
        base.check_generated_fits(replace(base.generated, scenarios=("gen-7-1",)))
    with pytest.raises(BaselineError, match=r"the same options \(.*\) now draw other scenarios"):
        base.check_generated_fits(replace(base.generated, sha256="ef" * 32))


def test_the_model_is_recorded_relative_to_the_file_and_found_from_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mathcomp_tests.paths import bundled

    (tmp_path / "models" / "base").mkdir(parents=True)
    own = replace(_baseline(tmp_path), model=f"hf:{(tmp_path / 'models' / 'base').resolve()}")
    path = writer.write(own, tmp_path / "gate" / ".." / "baseline.txt")
    assert "model: hf:./models/base\n" in path.read_text()
    demo = replace(_baseline(tmp_path), model=f"hf:{(bundled() / 'models' / 'mathcomp-tiny').resolve()}")
    demo_path = writer.write(demo, tmp_path / "demo.txt")
    assert "model: hf:fixtures/models/mathcomp-tiny\n" in demo_path.read_text()
    monkeypatch.chdir(tmp_path / "models")  # read from elsewhere: relative to the file, not the cwd
    found = reader.load(path)
    spec = recorded(found.model, found.folder)  # the run resolves the model a baseline names
    assert spec is not None and spec.directory == (tmp_path / "models" / "base").resolve()
    assert spec.given == "hf:./models/base"
    demo_read = reader.load(demo_path)
    demo_spec = recorded(demo_read.model, demo_read.folder)
    assert demo_spec is not None and demo_spec.directory == (bundled() / "models" / "mathcomp-tiny").resolve()
    gone = replace(_baseline(tmp_path), model="no-such-alias")
    assert recorded(gone.model, gone.folder) is None
