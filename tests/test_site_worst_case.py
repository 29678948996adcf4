"""The index's worst case of a night is the case the gate ranks first (report/gate_order.py), the item diff's
first row: ranked by the rise or the ceiling that failed it, never by a change that failed nothing; a soft
DirErr rise and a failure only Holm's step-down found count as the gate counts them; and the site's reduced
summary (site/night_summary.py) names the same case as the whole one."""

from __future__ import annotations

from typing import Any

from mathcomp_tests.report import gate_order
from mathcomp_tests.site import model_row
from mathcomp_tests.site.night_summary import reduced


def _change(difference: float, p_value: float, failed: bool) -> dict[str, Any]:
    return {"difference": difference, "p_value": p_value, "significant": failed, "breach": failed, "rose": 3}


def _case(name: str, breaches: list[str], less: float = 0.3, **compared: Any) -> dict[str, Any]:
    return {
        "case": name,
        "passed": not breaches,
        "breaches": breaches,
        "standing": "new" if breaches else None,
        "scores": {
            "n": 40,
            "accuracy": 0.5,
            "invalid_rate": 0.0,
            "error_rate": 0.0,
            "dir_err": {"less": less, "equal": 0.0, "more": 0.1},
        },
        "ceilings": {
            "dir_err": {"less": 0.65, "equal": 0.65, "more": 0.65},
            "invalid_rate": 0.1,
            "error_rate": 0.1,
        },
        "baseline": {"status": "compared", "changes": {}, **compared},
    }


def _night(*cases: dict[str, Any], holm: tuple[str, ...] = ()) -> dict[str, Any]:
    failed = sum(not c["passed"] for c in cases)
    return {
        "run_id": "20261201-030000-x",
        "model": "hf:acme/x",
        "cases": list(cases),
        "cases_run": len(cases),
        "cases_failed": failed,
        "baseline": {"holm_failures": list(holm)},
    }


def _first_row(summary: dict[str, Any]) -> str:
    return gate_order.ordered([str(c["case"]) for c in summary["cases"]], summary)[0]


def test_a_case_over_its_ceiling_outranks_a_smaller_rise_whatever_changed_without_failing() -> None:
    """a-ceiling is 30 points over its ceiling and its DirErr(more) moved +2 points (no failure); b-rise rose
    12 points and failed for it: the gate puts a-ceiling first, and so does the index."""
    summary = _night(
        _case("b-rise", ["DirErr(more) rise"], changes={"more": _change(0.12, 0.001, True)}),
        _case("a-ceiling", ["DirErr(less)"], less=0.95, changes={"more": _change(0.02, 0.6, False)}),
    )
    assert _first_row(summary) == "a-ceiling"
    assert model_row.worst_case(summary) == "a-ceiling: DirErr(less) 95.0% over its ceiling 65.0%"
    assert model_row.worst_case(reduced(summary)) == model_row.worst_case(summary)


def test_a_soft_rise_and_a_holm_failure_are_ranked_as_the_gate_ranks_them() -> None:
    soft = _case("c-soft", ["soft DirErr(less) rise"], soft={"less": _change(0.4, 0.001, True)})
    held = _case("d-holm", [], changes={"less": _change(0.5, 0.01, False)})
    rise = _case("b-rise", ["DirErr(more) rise"], changes={"more": _change(0.12, 0.001, True)})
    summary = _night(rise, soft)
    assert _first_row(summary) == "c-soft"
    assert model_row.worst_case(summary) == "c-soft: soft DirErr(less) +40.0 points over the baseline"
    assert model_row.worst_case(reduced(summary)) == model_row.worst_case(summary), "the soft change is kept"
    summary = _night(rise, soft, held, holm=("d-holm: DirErr(less) rise",))
    assert _first_row(summary) == "d-holm"
    assert model_row.worst_case(summary) == "d-holm: DirErr(less) +50.0 points over the baseline (Holm)"


def test_a_night_with_no_failed_case_or_a_field_the_gate_never_wrote_names_none() -> None:
    assert model_row.worst_case(_night(_case("e-passed", []))) == ""
    odd = _case("f-odd", ["DirErr(less)"])
    odd["ceilings"] = None
    assert model_row.worst_case(_night(odd)) == ""
