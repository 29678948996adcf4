"""The whole matrix: option orders, identity sides, the issue's identities, and markers that select."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.suite_runner import IN_PROCESS, REPO, run_suite


def collect(pytester: pytest.Pytester, *args: str) -> list[str]:
    """The suite's test ids for ``args``, collected in-process (what is checked is the plugin's
    parametrisation and markers; the repository's conftest.py plays no part in them)."""
    result = pytester.runpytest_inprocess(
        *IN_PROCESS, "--noconftest", "--collect-only", "-q", f"--reports-dir={pytester.path / 'reports'}", *args,
    )  # fmt: skip
    out = result.stdout.str()
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED), out + result.stderr.str()
    return [line.split("::")[-1] for line in out.splitlines() if "::" in line]


def ids(nodes: list[str], test: str = "test_framing") -> list[str]:
    """The condition ids of one test function's cases."""
    return [n.split("[")[1].rstrip("]") for n in nodes if n.startswith(f"{test}[")]


def test_markers_select_parts_of_the_matrix(pytester: pytest.Pytester) -> None:
    base = (
        "--model=symbolic",
        "--framings=neutral",
        "--positions=end",
        "--formats=all",
        "--identities=std,woman",
    )
    nodes = collect(pytester, *base)
    everything = ids(nodes)
    assert len(everything) == 8 and ids(nodes, "test_generated") == everything
    quick = ids(collect(pytester, *base, "-m", "not cot"))
    assert quick == [
        "neutral-end-std-one-word",
        "neutral-end-std-json",
        "neutral-end-woman-one-word",
        "neutral-end-woman-json",
    ]
    assert ids(collect(pytester, *base, "-m", "identity")) == [c for c in everything if "-woman-" in c]
    assert ids(collect(pytester, *base, "-m", "slow")) == [c for c in everything if c.endswith(("-cot", "-cot-json"))]
    assert ids(collect(pytester, *base, "-m", "slow", "--max-new-tokens=100")) == everything
    generated = collect(pytester, *base, "-m", "generated")
    assert generated == [f"test_generated[{c}]" for c in everything], "only the generated cases carry it"
    markers = pytester.runpytest_inprocess(*IN_PROCESS, "--markers").stdout.str()
    for name in ("cot", "identity", "generated", "slow"):
        assert f"@pytest.mark.{name}:" in markers


def test_option_orders_and_identity_sides_run_end_to_end(tmp_path: Path) -> None:
    run = run_suite(
        tmp_path,
        "--model=symbolic",
        "--limit=4",
        "--framings=neutral",
        "--positions=end",
        "--identities=std,young",
        "--identity-on=all",
        "--option-orders=all",
        "--formats=one-word,cot",
    )
    assert run.returncode == 0, run.output
    cases = {c["case"] for c in run.summary["cases"]}
    assert len(cases) == (1 + 3) * 2 * 6
    assert "neutral-end-std-one-word" in cases and "neutral-end-young-on-both-cot-options-eml" in cases
    assert "neutral-end-std-one-word-on-a" not in cases, "standard cases do not vary the identity side"
    records = run.records
    assert all(r["label"] == r["gold"] for r in records)
    assert {r["options"] for r in records} == {"lme", "lem", "mle", "mel", "elm", "eml"}
    young_a = [r for r in records if r["identity_on"] == "a"]
    assert young_a and all("compare to that of the young person?" in r["prompt"] for r in young_a)
    mel = next(r for r in records if r["options"] == "mel")
    assert "\nA) more\nB) equal\nC) less\n" in mel["prompt"]
    assert all(
        c["decided"] == {"rule": 4, "judge": 0, "invalid": 0, "error": 0} for c in run.summary["cases"]
    )
    html = (run.run_dir / "report.html").read_text()
    assert html.count("Decided by rule: 4, by judge: 0, invalid: 0, errors: 0") == len(cases)


def test_the_documented_selection_sizes_are_what_the_matrix_gives() -> None:
    """docs/selecting-cases.md's table of cases and prompts per selection."""
    from mathcomp_tests.data.scenarios import load
    from mathcomp_tests.formats import NAMES as FORMATS
    from mathcomp_tests.prompts import IDENTITY_SIDES, known_identities
    from mathcomp_tests.settings import Settings, conditions
    from mathcomp_tests.types import OPTION_ORDERS

    n = len(load(REPO / "fixtures" / "scenarios.csv"))
    every = conditions(Settings(identities=known_identities(), formats=FORMATS))
    not_cot = [c for c in every if c.format not in ("cot", "cot-json")]
    sizes = {
        "default": len(conditions(Settings())),
        "all": len(every),
        "not cot": len(not_cot),
        "not identity": len([c for c in every if c.identity == "std"]),
        "quick gate": len([c for c in not_cot if c.identity == "std"]),
        "identities": len(conditions(Settings(identities=known_identities()))),
        "orders": len(conditions(Settings(formats=FORMATS, option_orders=OPTION_ORDERS))),
        "whole": len(
            conditions(
                Settings(
                    identities=known_identities(),
                    formats=FORMATS,
                    identity_on=IDENTITY_SIDES,
                    option_orders=OPTION_ORDERS,
                )
            )
        ),
    }
    page = (REPO / "docs" / "selecting-cases.md").read_text()
    for what, cases in sizes.items():
        assert f"| {cases:,} | {cases * n:,} |" in page, what
