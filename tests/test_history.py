"""`mathcomp history` as a regression view: runs grouped by the base they were compared with, a line per
case with the worst rise named (a mean over cases hides a rise in one case), partial runs marked."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pytest
from helpers.suite_runner import REPO, SuiteRun, run_suite
from helpers.summaries import case, change, summary

from mathcomp_tests.cli import main
from mathcomp_tests.history import page as history_view
from mathcomp_tests.history.build import history

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
    assert page.count('alt="history of release 2.1 [framings: ') == 2, "the symbolic run's selection differs"


def test_an_empty_group_name_is_a_usage_error(reports: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["history", str(reports), "--group", " "])
    assert exit_.value.code == 2 and "--group: expected a name, got an empty one" in capsys.readouterr().err


def test_a_damaged_summary_among_good_ones_is_skipped_with_one_line_naming_it(
    reports: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One night's record cut short (a full disk, a killed copy) must not hide every other night."""
    damaged = reports / "20261124-090000-cut-ff66" / "summary.json"
    damaged.parent.mkdir()
    damaged.write_text('{"run_id": "20261124-090000-cut-ff66", "cases": [')
    assert main(["history", str(reports)]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"skipped {damaged}: not valid JSON (Expecting value: line 1 column 50 (char 49)); "
        "expected the summary.json a suite run writes"
    ]
    assert "cut-ff66" not in captured.out and "20261121-090000-worse-bb22" in captured.out
    damaged.write_text("[]")
    for good in reports.glob("*/summary.json"):
        if good != damaged:
            good.unlink()
    assert main(["history", str(reports)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [f"error: {damaged}: not a JSON object; expected the summary.json a suite run writes"]


def _night(run_id: str, cases: list[dict], **fields: object) -> dict:
    """A nightly run of the base model against its own baseline (as nightly.yml runs each model)."""
    made = summary(cases, model=BASE, run_id=run_id, base=BASE, framings=FRAMINGS)
    made["model_identity"] = "weights:1ee7b171bda0"
    return made | fields


def test_nights_of_one_model_are_its_base_runs_whatever_the_path_and_incomplete_nights_are_marked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = tmp_path / "history"
    _write(reports, _night("20261201-031700-tiny-aa01", _cases(compared=True)))
    clone = _night("20261202-031700-tiny-aa02", _cases(0.4), model="hf:clone/fixtures/models/mathcomp-tiny")
    clone["resolved"] = clone["model"]
    _write(reports, clone)
    _write(
        reports,
        _night(
            "20261203-031700-tiny-aa03",
            _cases(0.4)[:3],
            status="incomplete",
            incomplete_reasons=["interrupted: the model server at http://127.0.0.1:9/v1 stopped answering"],
        ),
    )
    _write(reports, _night("20261204-031700-tiny-aa04", _cases(), status="complete", incomplete_reasons=[]))
    page, rows = history(reports)
    assert [(r.run_id[:8], r.group, r.role) for r in rows] == [
        (day, f"{BASE} (weights:1ee7b171bda0)", "base") for day in ("20261201", "20261202", "20261203", "20261204")
    ], "one model: the same weights under two paths, each night gated against its own baseline"
    assert [r.night for r in rows] == [
        "complete",
        "complete",
        "INCOMPLETE: interrupted: the model server at http://127.0.0.1:9/v1 stopped answering",
        "complete",
    ]
    assert "4 runs: 4 of the base, 0 compared with it; 1 incomplete." in page
    assert page.count('alt="history of hf:fixtures/models/mathcomp-tiny (weights:1ee7b171bda0)"') == 1
    # Where each case first failed: neutral-begin rose above its ceiling on the second night.
    assert (
        "<tr><td>neutral-begin-std-one-word</td><td>20261202-031700-tiny-aa02 "
        "(hf:clone/fixtures/models/mathcomp-tiny)</td><td class=\"num\">2 of 4</td><td>no</td></tr>" in page
    )
    assert main(["history", str(reports)]) == 0
    out = capsys.readouterr().out
    night3 = next(line for line in out.splitlines() if line.startswith("20261203"))
    assert night3.endswith("INCOMPLETE: interrupted: the model server at http://127.0.0.1:9/v1 stopped answering")
    assert "PARTIAL: 3 of 14 cases" in night3


def test_runs_of_other_selections_do_not_share_an_axis(tmp_path: Path) -> None:
    reports = tmp_path / "history"
    _write(reports, _night("20261201-031700-tiny-aa01", _cases()))
    narrow = summary(
        [case(f, p) for f in ("neutral", "direct-more") for p in ("begin", "end")],
        model=BASE,
        run_id="20261202-031700-tiny-bb02",
        base=BASE,
        framings=("neutral", "direct-more"),
    )
    narrow["model_identity"] = "weights:1ee7b171bda0"
    _write(reports, narrow)
    _write(reports, _night("20261203-031700-tiny-aa03", _cases()))
    page, rows = history(reports)
    axes = {r.run_id[:8]: r.axis for r in rows}
    assert axes["20261201"] == axes["20261203"] != axes["20261202"]
    assert axes["20261202"].startswith("framings: neutral, direct-more; positions: begin, end")
    assert [r.run_id[:8] for r in rows] == ["20261201", "20261203", "20261202"], "an axis's runs together"
    assert [r.partial for r in rows] == ["", "", ""], "the narrow run is a selection of its own, not partial"
    assert "2 selections: each has an axis of its own" in page
    assert page.count('<img') == 2


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[SuiteRun, SuiteRun, Path]:
    """Two real runs of the demo weights under two paths: the first writes a baseline, the second is gated
    against it (and the copy's folder)."""
    tmp_path = tmp_path_factory.mktemp("demo")
    clone = tmp_path / "clone" / "mathcomp-tiny"
    shutil.copytree(REPO / "fixtures" / "models" / "mathcomp-tiny", clone)
    args = ("--limit=10", "--framings=neutral", "--positions=end", "--identities=std")
    baseline = tmp_path / "baseline.txt"
    first = run_suite(tmp_path / "a", f"--model=hf:{clone}", *args, f"--update-baseline={baseline}")
    second = run_suite(tmp_path / "b", f"--model={BASE}", *args, f"--baseline={baseline}")
    assert first.returncode in (0, 1) and second.returncode in (0, 1), first.output + second.output  # 1: a ceiling
    return first, second, clone


def test_the_demo_weights_under_two_paths_are_one_model_and_its_own_base(
    tmp_path: Path, demo_runs: tuple[SuiteRun, SuiteRun, Path]
) -> None:
    """The suite records the weights' digest as the model's identity, so a copy of the demo model is the
    same model in history, and a run gated against the baseline its copy wrote is a base run."""
    first, second, clone = demo_runs
    identities = {first.summary["model_identity"], second.summary["model_identity"]}
    assert len(identities) == 1 and next(iter(identities)).startswith("weights:"), identities
    reports = tmp_path / "history"
    for run in (first, second):
        shutil.copytree(run.run_dir, reports / run.run_dir.name)
    _, rows = history(reports)
    assert [(r.model, r.role) for r in rows] == [(f"hf:{clone}", "base"), (BASE, "base")]
    assert len({r.group for r in rows}) == 1


def test_records_from_before_and_after_model_identity_are_one_model(
    tmp_path: Path, demo_runs: tuple[SuiteRun, SuiteRun, Path]
) -> None:
    """Records written before summary.json had ``model_identity`` (its baseline too) named local weights by
    their path (``canonical``) and kept the weights' digest as ``revision``: the nights before the upgrade
    and after it are one model, one group, the nights gated against a baseline its base runs."""
    first, second, _ = demo_runs
    reports = tmp_path / "history"
    for day, run in ((1, first), (2, second)):
        old = run.summary
        old.pop("model_identity")
        if old.get("baseline"):
            old["baseline"].pop("model_identity")
        old["run_id"] = f"2026110{day}-031700-tiny-old{day}"
        (reports / old["run_id"]).mkdir(parents=True)
        (reports / old["run_id"] / "summary.json").write_text(json.dumps(old))
    for run in (first, second):
        shutil.copytree(run.run_dir, reports / run.run_dir.name)
    page, rows = history(reports)
    assert len({r.group for r in rows}) == 1, {r.run_id: r.group for r in rows}
    assert [(r.run_id[:8], r.role) for r in rows if "-old" in r.run_id] == [
        ("20261101", "base"),
        ("20261102", "base"),
    ]
    assert page.count("<img") == 1


def test_control_characters_in_a_model_name_never_reach_the_terminal_raw(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model named with an ANSI escape (a recoloured or cleared screen) is printed escaped."""
    reports = tmp_path / "reports"
    evil = "hf:\x1b[2J\x1b[31mevil\rmodel"
    _write(reports, summary([case("neutral")], model=evil, run_id="20261125-090000-evil-aa11", base=None))
    assert main(["history", str(reports)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\r" not in out
    assert "[hf:\\x1b[2J\\x1b[31mevil\\rmodel]" in out.splitlines()


def _lefts(page: str, run_id: str) -> list[float]:
    """Where (percent of the picture's width) the page puts the links over ``run_id``'s points."""
    found = re.findall(rf'href="nights/{re.escape(run_id)}/report.html" title="[^"]*"[^>]*left:([0-9.]+)%', page)
    return [float(x) for x in found]


def test_runs_are_placed_by_when_they_ran_and_each_points_to_its_night() -> None:
    """Nights on the 1st, 2nd and 10th: the gap to the 10th is eight times the first, not one step; a run
    whose id tells no time is placed before every dated one, and the page says how."""
    ids = ["20261201-031700-tiny-aa01", "20261202-031700-tiny-aa02", "20261210-031700-tiny-aa03", "nightly-a"]
    rows = history_view.rows([_night(r, _cases()) for r in ids])
    page = history_view.page_body(rows, links={r: f"nights/{r}/report.html" for r in ids})
    first, second, tenth, undated = (_lefts(page, r) for r in ids)
    assert all(len(x) == 3 and len(set(x)) == 1 for x in (first, second, tenth, undated)), "a point per panel"
    assert tenth[0] - second[0] == pytest.approx(8 * (second[0] - first[0]), rel=0.02)
    assert undated[0] < first[0]
    assert (
        '1 run whose run id tells no time: placed before the oldest dated run, one step apart in run-id order, '
        'in the band marked "time unknown".' in html.unescape(page)
    )
    assert page.count('<a href="nights/20261210-031700-tiny-aa03/report.html">') == 1, "its row in the table"


def test_history_text_is_escaped_in_links_and_tooltips() -> None:
    evil = '"><script>alert(1)</script>'
    rows = history_view.rows([_night("20261201-031700-tiny-aa01", _cases(), model=evil)])
    page = history_view.page_body(rows, links={"20261201-031700-tiny-aa01": 'x"><b>.html'})
    assert "<script>" not in page and "<b>" not in page and "&lt;script&gt;" in page
