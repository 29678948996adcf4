"""`mathcomp history` as a regression view: runs grouped by the base they were compared with, a line per
case with the worst rise named (a mean over cases hides a rise in one case), partial runs marked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.summaries import case, change, summary

from mathcomp_tests.cli import main
from mathcomp_tests.report.standalone import history

BASE = "hf:fixtures/models/mathcomp-tiny"
FRAMINGS = (
    "neutral",
    "direct-more",
    "direct-less",
    "direct-equal",
    "indirect-more",
    "indirect-less",
    "indirect-equal",
)


def _cases(rise: float = 0.0, compared: bool = True) -> list[dict]:
    """The 14 default cases; with ``rise``, the neutral-begin case's DirErr(less) rose that much."""
    out = []
    for framing in FRAMINGS:
        for position in ("begin", "end"):
            up = rise if (framing, position) == ("neutral", "begin") else 0.0
            changes = {"less": change(up, 0.0004 if up else 1.0, baseline=0.1)} if compared else None
            out.append(case(framing, position, dir_err={"less": 0.1 + up}, ceiling=0.9, changes=changes))
    return out


def _write(reports: Path, run: dict) -> None:
    folder = reports / run["run_id"]
    folder.mkdir(parents=True)
    (folder / "summary.json").write_text(json.dumps(run))
    (folder / "results.jsonl").write_text("")


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    reports = tmp_path / "reports"
    _write(
        reports,
        summary(
            _cases(compared=False),
            model=BASE,
            run_id="20261125-090000-base-aa11",
            base=None,
            framings=FRAMINGS,
        ),
    )
    _write(
        reports,
        summary(_cases(0.33), model="hf:ft/worse", run_id="20261121-090000-worse-bb22", framings=FRAMINGS),
    )
    limited = summary(
        _cases(0.02),
        model="hf:ft/limited",
        run_id="20261122-090000-limited-cc33",
        scenarios=100,
        framings=FRAMINGS,
    )
    _write(reports, limited)
    subset = summary(
        _cases(0.0)[:4], model="hf:ft/subset", run_id="20261123-090000-subset-dd44", framings=FRAMINGS
    )
    _write(reports, subset)
    _write(
        reports,
        summary([case("neutral")], model="symbolic", run_id="20261123-100000-symbolic-ee55", base=None),
    )
    return reports


def test_runs_are_grouped_by_their_base_with_the_worst_rise_named(reports: Path) -> None:
    page, rows = history(reports)
    groups = {r.run_id.split("-")[2]: (r.group, r.role) for r in rows}
    assert groups == {
        "base": (BASE, "base"),
        "worse": (BASE, "fine-tune"),
        "limited": (BASE, "fine-tune"),
        "subset": (BASE, "fine-tune"),
        "symbolic": ("symbolic", "run"),
    }
    worse = next(r for r in rows if "worse" in r.run_id)
    base = next(r for r in rows if r.role == "base")
    # The mean over 14 cases moved 2.4 points; one case rose 33.
    moved, was = worse.metrics["DirErr(less)"], base.metrics["DirErr(less)"]
    assert moved is not None and was is not None and moved - was == pytest.approx(0.33 / 14)
    assert (
        worse.worst is not None
        and worse.worst.text() == "neutral-begin-std-one-word DirErr(less) +33.0 (p=0.0004)"
    )
    assert (
        "Worst rise: neutral-begin-std-one-word DirErr(less) +33.0 (p=0.0004) in 20261121-090000-worse-bb22 "
        "(hf:ft/worse)." in page
    )
    assert [r.role for r in rows] == ["base", "fine-tune", "fine-tune", "fine-tune", "run"], "the base first"
    assert "the mean over the cases every run of the group has" in page
    assert (
        page.count('alt="history of hf:fixtures/models/mathcomp-tiny"') == 1
        and 'alt="history of symbolic"' in page
    )


def test_partial_runs_are_marked_and_the_selection_shown(reports: Path) -> None:
    _, rows = history(reports)
    partial = {r.run_id.split("-")[2]: r.partial for r in rows}
    assert partial == {
        "base": "",
        "worse": "",
        "limited": "100 of 300 scenarios",
        "subset": "4 of 14 cases",
        "symbolic": "1 of 4 cases",
    }
    base = rows[0]
    assert base.selection == (
        "14 cases (7 framings x 2 positions x 1 identity x 1 format x 1 protocol: "
        + ", ".join(FRAMINGS)
        + "), 300 scenarios"
    )


def test_the_command_prints_each_group_and_a_group_named_by_the_user(
    reports: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["history", str(reports)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == f"[{BASE}]" and "[symbolic]" in out
    worse = next(line for line in out if line.startswith("20261121-090000-worse-bb22"))
    assert worse.endswith("fine-tune  neutral-begin-std-one-word DirErr(less) +33.0 (p=0.0004)")
    limited = next(line for line in out if line.startswith("20261122"))
    assert limited.endswith("PARTIAL: 100 of 300 scenarios")
    assert main(["history", str(reports), "--group", "release 2.1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line for line in out if line.startswith("[")] == ["[release 2.1]"]
    page = (reports / "history.html").read_text()
    assert 'alt="history of release 2.1"' in page


def test_an_empty_group_name_is_a_usage_error(reports: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["history", str(reports), "--group", " "])
    assert exit_.value.code == 2 and "--group: expected a name, got an empty one" in capsys.readouterr().err
