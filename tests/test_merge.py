"""`mathcomp merge`: a sharded run's shards, merged, give what the unsharded run gives (verdicts, metrics,
intervals, p-values, Holm, the exit code, the baseline file it writes); a shard missing, given twice, from
another selection or incomplete makes the merge INCOMPLETE, naming it, and no baseline is written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers.merge_cli import merge
from helpers.suite_runner import SuiteRun, run_suite

pytestmark = pytest.mark.xdist_group("merge")

DEMO = ("--model=hf:fixtures/models/mathcomp-tiny", "--limit=30", "--framings=neutral,indirect-less,direct-more",
        "--positions=end")  # fmt: skip
SYMBOLIC = ("--model=symbolic", "--limit=9", "--framings=neutral,indirect-less", "--positions=end")
SHARDS = 3


def sharded(workdir: Path, *args: str) -> list[SuiteRun]:
    """The selection run as SHARDS shards, each in a process and a folder of its own."""
    return [run_suite(workdir / f"shard-{i}", *args, f"--shard={i}/{SHARDS}") for i in range(1, SHARDS + 1)]


def comparable(summary: dict[str, Any]) -> dict[str, Any]:
    """A summary less what names this run (its id, where its parts came from, its shard marks)."""
    return {k: v for k, v in summary.items() if k not in ("run_id", "merged_from", "shard")}


def summary(run_dir: Path) -> dict[str, Any]:
    return dict(json.loads((run_dir / "summary.json").read_text()))


def records(run_dir: Path) -> list[dict[str, Any]]:
    lines = (run_dir / "results.jsonl").read_text().splitlines()
    return [{k: v for k, v in json.loads(line).items() if k != "run_id"} for line in lines]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The demonstration model on 30 scenarios, compared with a baseline of the same selection (the sympy
    reference's answers, so that every paired test has pairs that differ): whole, whole under --holm, and
    as three shards."""
    root = tmp_path_factory.mktemp("merge-demo")
    base = root / "base.txt"
    made = run_suite(root / "base", *DEMO[1:], "--model=symbolic", f"--update-baseline={base}")
    assert base.is_file(), made.output[-2000:]
    compared = (*DEMO, f"--baseline={base}")
    return {
        "base": base,
        "root": root,
        "whole": run_suite(root / "whole", *compared),
        "holm": run_suite(root / "holm", *compared, "--holm"),
        "shards": sharded(root, *compared),
    }


def test_the_merged_shards_are_the_unsharded_run(demo: dict[str, Any]) -> None:
    whole, shards = demo["whole"], demo["shards"]
    assert all(s.returncode == 0 for s in shards), [s.output[-1500:] for s in shards]
    out = demo["root"] / "merged"
    done = merge(*(s.run_dir for s in shards), "--out", out, "--baseline", demo["base"])
    merged = summary(out)
    assert comparable(merged) == comparable(whole.summary)
    p_values = [
        c["baseline"]["changes"][y]["p_value"] for c in merged["cases"] for y in ("less", "more", "equal")
    ]
    assert all(p is not None for p in p_values) and min(p_values) < 0.05  # real tests, some significant
    assert done.returncode == whole.returncode == 1, done.stdout + done.stderr  # the demo model fails them
    assert "MathComp merge: FAILED: 3 of 3 cases" in done.stdout
    assert records(out) == records(whole.run_dir)  # every shard's record, in the unsharded run's order
    assert [(m["index"], m["run_id"]) for m in merged["merged_from"]] == [
        (i, s.summary["run_id"]) for i, s in enumerate(shards, 1)
    ]
    assert merged["shard"] is None and "MathComp framing-bias report" in (out / "report.html").read_text()


def test_holm_across_all_the_shards_tests_is_the_unsharded_runs(demo: dict[str, Any]) -> None:
    out = demo["root"] / "merged-holm"
    done = merge(*(s.run_dir for s in demo["shards"]), "--out", out, "--baseline", demo["base"], "--holm")
    merged = summary(out)
    assert merged["baseline"]["holm"] is True
    assert merged["baseline"]["level"] < merged["baseline"]["alpha"]
    assert comparable(merged) == comparable(demo["holm"].summary)
    assert done.returncode == demo["holm"].returncode


@pytest.fixture(scope="module")
def symbolic(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The sympy reference: whole (writing a baseline), as three shards, one shard of another selection
    (--limit) and one shard that ran nothing (-k matched none: incomplete)."""
    root = tmp_path_factory.mktemp("merge-symbolic")
    other = tuple(a if a != "--limit=9" else "--limit=12" for a in SYMBOLIC)
    return {
        "root": root,
        "whole": run_suite(root / "whole", *SYMBOLIC, f"--update-baseline={root / 'whole-baseline.txt'}"),
        "shards": sharded(root, *SYMBOLIC),
        "foreign": run_suite(root / "foreign", *other, f"--shard=2/{SHARDS}"),
        "incomplete": run_suite(root / "incomplete", *SYMBOLIC, f"--shard=3/{SHARDS}", "-k", "no-such-case"),
    }


def test_a_complete_merge_writes_the_baseline_the_unsharded_run_writes(symbolic: dict[str, Any]) -> None:
    root = symbolic["root"]
    target = root / "merged-baseline.txt"
    out = root / "merged"
    done = merge(*(s.run_dir for s in symbolic["shards"]), "--out", out, "--update-baseline", target)
    assert done.returncode == symbolic["whole"].returncode == 0, done.stdout + done.stderr
    assert f"baseline written: {target}" in done.stdout
    assert target.read_text() == (root / "whole-baseline.txt").read_text()
    assert comparable(summary(out)) == comparable(symbolic["whole"].summary)


def _incomplete(symbolic: dict[str, Any], name: str, folders: list[Path]) -> tuple[str, dict[str, Any]]:
    target = symbolic["root"] / f"{name}-baseline.txt"
    out = symbolic["root"] / f"merged-{name}"
    done = merge(*folders, "--out", out, "--update-baseline", target)
    assert done.returncode == 1, done.stdout + done.stderr
    assert not target.exists()
    assert "baseline not written" in done.stdout
    merged = summary(out)
    assert merged["status"] == "incomplete" and merged["cases"] == []
    assert set(merged) == {*symbolic["whole"].summary, "merged_from"}  # built by the run's own builder
    assert "MathComp merge: INCOMPLETE" in done.stdout
    return "; ".join(merged["incomplete_reasons"]), merged


def test_a_missing_shard_makes_the_merge_incomplete(symbolic: dict[str, Any]) -> None:
    one, two, _ = (s.run_dir for s in symbolic["shards"])
    reasons, merged = _incomplete(symbolic, "missing", [one, two])
    assert reasons == "shard 3 of 3 missing"
    kept = sum(len(records(s)) for s in (one, two))
    assert len(records(symbolic["root"] / "merged-missing")) == kept  # what it has, kept
    assert [m["index"] for m in merged["merged_from"]] == [1, 2]


def test_a_shard_given_twice_is_named_with_both_folders(symbolic: dict[str, Any]) -> None:
    one, two, three = (s.run_dir for s in symbolic["shards"])
    again = symbolic["root"] / "copy-of-shard-2"
    shutil.copytree(two, again)
    reasons, _ = _incomplete(symbolic, "doubled", [one, two, again, three])
    assert reasons == f"shard 2 of 3 given 2 times: {two} and {again}"


def test_a_shard_of_another_selection_is_named_with_what_differs(symbolic: dict[str, Any]) -> None:
    one, _, three = (s.run_dir for s in symbolic["shards"])
    foreign = symbolic["foreign"].run_dir
    reasons, _ = _incomplete(symbolic, "foreign", [one, foreign, three])
    assert reasons.startswith(f"shard 2 of 3 ({foreign}) is from another run: its selection differs in ")
    assert "options.limit" in reasons and "scenario_ids" in reasons
    assert reasons.endswith("shard 2 of 3 missing")


def test_an_incomplete_shard_is_named_with_its_reason(symbolic: dict[str, Any]) -> None:
    one, two, _ = (s.run_dir for s in symbolic["shards"])
    broken = symbolic["incomplete"]
    assert broken.returncode != 0 and (broken.run_dir / "shard.json").is_file()
    reasons, _ = _incomplete(symbolic, "incomplete", [one, two, broken.run_dir])
    assert reasons.startswith(f"shard 3 of 3 ({broken.run_dir}) is incomplete: no case ran")


def test_the_merged_run_is_the_run_id_it_is_given_and_a_bad_one_is_refused(symbolic: dict[str, Any]) -> None:
    shards, root = [s.run_dir for s in symbolic["shards"]], symbolic["root"]
    named = "20261127-031500-nightly-merge"
    done = merge(*shards, "--out", root / "merged-named", "--run-id", named)
    assert done.returncode == 0, done.stdout[-1500:] + done.stderr[-1500:]
    lines = (root / "merged-named" / "results.jsonl").read_text().splitlines()
    assert summary(root / "merged-named")["run_id"] == named
    assert lines and {json.loads(line)["run_id"] for line in lines} == {named}
    refused = merge(*shards, "--out", root / "merged-refused", "--run-id", "../night")
    assert refused.returncode == 2 and "--run-id '../night': a run id is one plain name" in refused.stderr
    assert not (root / "merged-refused").exists()


def test_a_folder_that_is_no_shard_is_a_usage_error(symbolic: dict[str, Any]) -> None:
    whole = symbolic["whole"].run_dir
    done = merge(whole, "--out", symbolic["root"] / "not-made")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert lines[-1].endswith(f"error: {whole}: no shard.json; expected a shard's run folder (a run with "
                              "--shard=I/N writes shard.json)")  # fmt: skip
    assert not (symbolic["root"] / "not-made").exists()


def test_the_merges_verdict_reaches_the_job_summary(symbolic: dict[str, Any]) -> None:
    """In a CI step, the merged run's verdict is on the job's page as a run's is: PASSED with the report's
    path, and an INCOMPLETE merge says so first, naming the missing shard."""
    root = symbolic["root"]
    one, two, three = (s.run_dir for s in symbolic["shards"])
    page = root / "step-summary.md"
    done = merge(one, two, three, "--out", root / "merged-ci", job_summary=page)
    assert done.returncode == 0, done.stdout + done.stderr
    passed = page.read_text()
    assert passed.startswith("## MathComp: PASSED: all"), passed
    assert str(root / "merged-ci" / "report.html") in passed, passed
    missing = merge(one, two, "--out", root / "merged-ci-missing", job_summary=page)
    assert missing.returncode == 1
    added = page.read_text()[len(passed) :]
    assert added.startswith("## MathComp: INCOMPLETE") and "shard 3 of 3 missing" in added, added
