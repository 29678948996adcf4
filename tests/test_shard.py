"""--shard=I/N: the split by scenario, where I and N come from (the option, Slurm, a Kubernetes Indexed Job),
the values refused, and what a shard's run folder, verdict and exit code say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.suite_runner import IN_PROCESS, REPO, SuiteRun, run_suite

from mathcomp_tests.data import datasets, stratified
from mathcomp_tests.plugin.options.shard import resolve
from mathcomp_tests.settings import SelectionError, Shard

pytestmark = pytest.mark.xdist_group("test_shard")

SMALL = ("--model=symbolic", "--limit=5", "--framings=neutral,indirect-less", "--positions=end")


def _selection(limit: int) -> list[str]:
    bundled = datasets.resolve(None, None, Path(".mathcomp-cache"))
    return [s.id for s in stratified.draw(bundled.scenarios, limit)]


@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_the_split_covers_every_scenario_once_in_the_selections_order(count: int) -> None:
    ids = _selection(20)
    parts = [Shard(i, count, "--shard").pick(ids, "scenarios") for i in range(1, count + 1)]
    assert sorted(x for part in parts for x in part) == sorted(ids)
    assert sum(len(p) for p in parts) == len(ids)
    for i, part in enumerate(parts, 1):
        assert part == [x for n, x in enumerate(ids) if n % count == i - 1]
        assert part == Shard(i, count, "--shard").pick(ids, "scenarios")  # the same every time


def test_a_shard_that_would_get_nothing_is_refused() -> None:
    with pytest.raises(
        SelectionError, match=r"--shard=4/4: 4 shards for the selection's 3 scenarios: shard 4 of 4 gets none"
    ):
        Shard(4, 4, "--shard=4/4").pick(["a", "b", "c"], "scenarios")


@pytest.mark.parametrize("given", ["1/4", "1/99999999999999999999999"])
def test_more_shards_than_scenarios_is_refused_on_every_shard(given: str) -> None:
    """docs/sharding.md: N above the selection's size is a usage error; shard 1 of such a run got its
    scenario and ran, and only the shards that got none stopped."""
    shard = resolve(given, {})
    assert shard is not None
    with pytest.raises(
        SelectionError, match=r"shards for the selection's 3 scenarios: shards 4 to \d+ would get"
    ):
        shard.pick(["a", "b", "c"], "scenarios")


@pytest.mark.parametrize(
    ("given", "environ"),
    [
        (None, {"SLURM_ARRAY_TASK_ID": "\u00b2", "SLURM_ARRAY_TASK_COUNT": "3"}),
        (None, {"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "\u0663"}),
        (None, {"JOB_COMPLETION_INDEX": "0", "MATHCOMP_SHARDS": "\u00b3"}),
        ("\u0661/\u0663", {}),
    ],
)
def test_digits_of_other_scripts_name_no_shard(given: str | None, environ: dict[str, str]) -> None:
    """'²' passed str.isdigit() and then broke int(): an INTERNALERROR instead of a usage line."""
    with pytest.raises(SelectionError, match="expected"):
        resolve(given, environ)


SLURM = {"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "3"}


@pytest.mark.parametrize(
    ("given", "environ", "expected"),
    [
        ("2/3", {}, (2, 3)),
        (None, {}, None),
        (None, SLURM, (3, 3)),
        (None, {**SLURM, "SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "4"}, (2, 3)),
        (None, {"SLURM_ARRAY_TASK_ID": "14", "SLURM_ARRAY_TASK_MIN": "10", "SLURM_ARRAY_TASK_STEP": "2",
                "SLURM_ARRAY_TASK_COUNT": "4"}, (3, 4)),
        (None, {"JOB_COMPLETION_INDEX": "0", "MATHCOMP_SHARDS": "4"}, (1, 4)),
        ("1/2", {**SLURM, "JOB_COMPLETION_INDEX": "3", "MATHCOMP_SHARDS": "4"}, (1, 2)),  # the option wins
        ("1/1", SLURM, None),  # one shard of one: the whole selection, detection off
    ],
)  # fmt: skip
def test_where_the_shard_comes_from(
    given: str | None, environ: dict[str, str], expected: tuple[int, int] | None
) -> None:
    shard = resolve(given, environ)
    assert (None if shard is None else (shard.index, shard.count)) == expected
    if shard is not None and given is None:
        assert shard.source.startswith(("the Slurm array", "the Kubernetes Indexed Job"))


@pytest.mark.parametrize(
    ("given", "environ", "says"),
    [
        ("0/3", {}, "--shard=0/3: shard 0 of 3 does not exist"),
        ("4/3", {}, "--shard=4/3: shard 4 of 3 does not exist"),
        ("x/3", {}, "--shard=x/3: expected I/N"),
        ("3", {}, "--shard=3: expected I/N"),
        (None, {"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "3"},
         "the Slurm array (SLURM_ARRAY_TASK_ID=3, SLURM_ARRAY_TASK_COUNT=3): shard 4 of 3 does not exist"),
        (None, {"SLURM_ARRAY_TASK_ID": "1"}, "SLURM_ARRAY_TASK_COUNT is not set"),
        (None, {"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "4", "SLURM_ARRAY_TASK_COUNT": "3"},
         "task 3 is not one of the array's ids"),
        (None, {"JOB_COMPLETION_INDEX": "1"}, "MATHCOMP_SHARDS is not set"),
        (None, {"JOB_COMPLETION_INDEX": "2", "MATHCOMP_SHARDS": "2"}, "shard 3 of 2 does not exist"),
        (None, {"MATHCOMP_SHARDS": "3"}, "MATHCOMP_SHARDS=3 is set but JOB_COMPLETION_INDEX is not"),
    ],
)  # fmt: skip
def test_a_value_that_names_no_shard_says_where_it_came_from(
    given: str | None, environ: dict[str, str], says: str
) -> None:
    with pytest.raises(SelectionError) as raised:
        resolve(given, environ)
    assert says in str(raised.value)
    assert "\n" not in str(raised.value)


def _usage_line(result: pytest.RunResult) -> str:
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    lines = [line for line in (result.stdout.str() + result.stderr.str()).splitlines() if "ERROR:" in line]
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize(
    ("args", "environ", "says"),
    [
        (("--shard=4/3",), {}, "--shard=4/3: shard 4 of 3 does not exist"),
        ((), {"SLURM_ARRAY_TASK_ID": "9", "SLURM_ARRAY_TASK_COUNT": "3"}, "SLURM_ARRAY_TASK_ID=9"),
        (("--shard=1/2", "--update-baseline=b.txt"), {}, "--update-baseline is refused on a shard"),
        (("--shard=1/2", "--metamorphic"), {}, "--metamorphic is refused on a shard"),
        (("--shard=2/2", "--baseline-model=symbolic"), {}, "--baseline-model is refused on a shard"),
        (
            (),
            {
                "SLURM_ARRAY_TASK_ID": "0",
                "SLURM_ARRAY_TASK_COUNT": "2",
                "MATHCOMP_IDENTITIES": str(REPO / "fixtures" / "identities.toml"),
            },
            "--identities-file (or $MATHCOMP_IDENTITIES) is refused on a shard (the Slurm",
        ),
        (("--shard=3/3", "--generated=2"), {}, "--generated=2 gives shard 3 of 3 no generated scenario"),
        (("--shard=6/6",), {}, "6 shards for the selection's 5 scenarios: shard 6 of 6 gets none"),
    ],
)
def test_a_bad_shard_stops_the_run_with_one_usage_line(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], environ: dict[str, str],
    says: str,
) -> None:  # fmt: skip
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    result = pytester.runpytest_inprocess(
        *IN_PROCESS, f"--cache-dir={pytester.path / 'cache'}", f"--reports-dir={pytester.path / 'reports'}",
        *SMALL, *args,
    )  # fmt: skip
    assert says in _usage_line(result)


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> list[SuiteRun]:
    """The small selection as three shards, three processes."""
    base = tmp_path_factory.mktemp("shards")
    return [run_suite(base / str(i), *SMALL, f"--shard={i}/3") for i in (1, 2, 3)]


def test_three_shards_ask_each_scenario_of_the_selection_once_under_every_case(
    shards: list[SuiteRun],
) -> None:
    manifests = [json.loads((run.run_dir / "shard.json").read_text()) for run in shards]
    whole = manifests[0]["selection"]["scenario_ids"]
    assert len(whole) == 5
    assert len({m["fingerprint"] for m in manifests}) == 1  # one run's shards
    covered = [m["covered"]["scenario_ids"] for m in manifests]
    assert sorted(x for part in covered for x in part) == sorted(whole)
    for i, (run, manifest) in enumerate(zip(shards, manifests, strict=True), 1):
        assert run.returncode == 0, run.output
        assert run.summary["shard"] == {"index": i, "count": 3, "source": f"--shard={i}/3"}
        assert run.summary["scenario_ids"] == manifest["covered"]["scenario_ids"] == whole[i - 1 :: 3]
        assert {r["scenario"] for r in run.records} == set(manifest["covered"]["scenario_ids"])
        assert {c["case"] for c in run.summary["cases"]} == set(manifest["selection"]["cases"])
        assert manifest["status"] == "complete"


def test_a_shard_never_passes_on_its_own(shards: list[SuiteRun]) -> None:
    run = shards[1]
    assert (
        "MathComp: shard 2 of 3: merge the shards to gate; this shard ran everything it meant to"
        in run.output
    )
    page = (run.run_dir / "report.html").read_text()
    assert "shard 2 of 3: merge the shards to gate" in page
    assert "PASSED" not in page


def test_a_shard_whose_cases_fail_on_its_part_exits_0(tmp_path: Path) -> None:
    """The demonstration model fails a case on its part of the data; only the merged run may gate on it."""
    run = run_suite(
        tmp_path, "--limit=6", "--framings=neutral,indirect-less", "--positions=end", "--shard=1/2"
    )
    assert run.summary["cases_failed"] >= 1, run.output
    assert run.summary["status"] == "complete"
    assert run.returncode == 0, run.output
    assert "shard 1 of 2: merge the shards to gate" in run.output
