"""`mathcomp record --from` and `mathcomp site`: a night's record kept from a real run folder (summary.json as
it is, report.html, the item diff against the baseline), never replacing one; the site over a folder of
records: the newest night per model in the order that needs a look first, links that resolve, relative,
everything a record wrote escaped, damaged records skipped and counted, OUT replaced whole.

The records come from two real suite runs on the symbolic backend (a baseline's, then a run compared with
it) and copies of their summary.json edited where a test needs another verdict or a hostile model name."""

from __future__ import annotations

import gzip
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from helpers.html_page import Page
from helpers.packed_pages import unpacked
from helpers.shared_runs import Nights
from helpers.suite_runner import SuiteRun, run_suite
from helpers.usage import mathcomp

from mathcomp_tests import summary_format
from mathcomp_tests.record import packed
from mathcomp_tests.verdict import of_run

HOSTILE = "<script>alert(1)</script>"
ORDER = ["INCOMPLETE", "FAILED", "KNOWN FAILURES", "PASSED"]

pytestmark = pytest.mark.xdist_group("site")
"""One worker runs this module's tests, so its module-scoped fixtures (the runs, the records) are built once."""


@dataclass
class Runs:
    tmp: Path
    baseline: Path
    base: SuiteRun
    compared: SuiteRun


@pytest.fixture(scope="module")
def runs(symbolic_nights: Nights, tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """The session's symbolic nights (tests/conftest.py), read only; what this module writes goes under
    tmp."""
    nights = symbolic_nights
    assert nights.base.returncode == 0 and nights.baseline.is_file(), nights.base.output
    assert nights.compared.returncode == 0, nights.compared.output
    return Runs(tmp_path_factory.mktemp("site-runs"), nights.baseline, nights.base, nights.compared)


def edited(runs: Runs, records: Path, run_id: str, model: str, standing: str | None = None) -> dict[str, Any]:
    """The compared run's summary.json as the record of another model's night; ``standing`` new or known:
    its first case failed, so marked."""
    summary = runs.compared.summary | {"run_id": run_id, "model": model}
    if standing is not None:
        summary["cases"][0] |= {"passed": False, "breaches": ["DirErr(more)"], "standing": standing}
        summary["cases_failed"] = 1
        summary["failures"] = {"new": int(standing == "new"), "known": int(standing == "known")}
    (records / run_id).mkdir(parents=True)
    (records / run_id / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return summary


@pytest.fixture(scope="module")
def records(runs: Runs) -> Path:
    """Two real nights of symbolic (the second with its diff), a stand-in, and edited nights: a new
    failure, known failures only, a model whose name is markup."""
    records = runs.tmp / "records"
    assert mathcomp("record", records, "--from", runs.base.run_dir)[0] == 0
    assert mathcomp("record", records, "--from", runs.compared.run_dir, "--baseline", runs.baseline)[0] == 0
    assert mathcomp("record", records, "--stand-in", "--model=hf:acme/cut-short")[0] == 0
    edited(runs, records, "20261201-010000-acme-failing-0001", "hf:acme/failing", "new")
    edited(runs, records, "20261201-020000-acme-known-0002", "hf:acme/known", "known")
    edited(runs, records, "20261201-030000-hostile-0003", HOSTILE)
    return records


@pytest.fixture(scope="module")
def site(records: Path) -> Path:
    out = records.parent / "site"
    code, said, err = mathcomp("site", records, out)
    assert code == 0 and err == "", err
    assert said == f"wrote {out}: 6 nights of 5 models, 0 records skipped\n"
    return out


# mathcomp record --from


def test_a_record_from_a_run_keeps_its_summary_its_report_and_the_diff_gzipped(runs: Runs, records: Path) -> None:
    folder = records / runs.compared.summary["run_id"]
    assert sorted(p.name for p in folder.iterdir()) == ["diff.html.gz", "report.html.gz", "summary.json.gz"]
    assert json.loads(gzip.decompress((folder / "summary.json.gz").read_bytes())) == runs.compared.summary
    report = (runs.compared.run_dir / "report.html").read_bytes()
    assert gzip.decompress((folder / "report.html.gz").read_bytes()) == report
    # the run's report is self-contained: nothing beside it that a copy would leave behind
    assert sorted(p.name for p in runs.compared.run_dir.iterdir()) == [
        "report.html",
        "results.jsonl",
        "summary.json",
    ]
    direct = runs.tmp / "direct-diff.html"
    assert mathcomp("diff", runs.baseline, runs.compared.run_dir, "--html", direct)[0] == 0
    kept = gzip.decompress((folder / "diff.html.gz").read_bytes())
    assert kept == direct.read_bytes(), "what `mathcomp diff --html` writes"
    assert not [p for p in records.iterdir() if p.name.startswith(".")], "no staging folder left"


def test_a_record_without_a_baseline_or_with_a_missing_one_has_no_diff(runs: Runs, tmp_path: Path) -> None:
    code, said, err = mathcomp("record", tmp_path / "plain", "--from", runs.base.run_dir)
    folder = tmp_path / "plain" / runs.base.summary["run_id"]
    assert (code, err) == (0, "") and said == f"wrote {folder} (report.html.gz, summary.json.gz)\n"
    missing = tmp_path / "no-baseline.txt"
    code, said, err = mathcomp(
        "record", tmp_path / "other", "--from", runs.base.run_dir, "--baseline", missing
    )
    assert code == 0 and err == f"no diff.html: --baseline {missing}: no such file\n"
    assert sorted(p.name for p in (tmp_path / "other" / folder.name).iterdir()) == [
        "report.html.gz",
        "summary.json.gz",
    ]


def test_a_diff_that_cannot_be_made_leaves_the_record_without_it_saying_why(
    runs: Runs, tmp_path: Path
) -> None:
    other = run_suite(tmp_path, "--model=symbolic", "--limit=3", "--framings=neutral", "--positions=end")
    assert other.returncode == 0, other.output
    code, _, err = mathcomp("record", tmp_path / "r", "--from", other.run_dir, "--baseline", runs.baseline)
    assert code == 0 and err.startswith("no diff.html: mathcomp diff: error: ") and err.count("\n") == 1, err
    assert "not runs of one selection" in err
    assert sorted(p.name for p in (tmp_path / "r" / other.run_dir.name).iterdir()) == [
        "report.html.gz",
        "summary.json.gz",
    ]


def test_a_diff_is_never_made_from_a_link_out_of_the_run_folder(runs: Runs, tmp_path: Path) -> None:
    run = tmp_path / runs.compared.run_dir.name
    shutil.copytree(runs.compared.run_dir, run)
    outside = tmp_path / "elsewhere.jsonl"
    (run / "results.jsonl").rename(outside)
    (run / "results.jsonl").symlink_to(outside)
    code, _, err = mathcomp("record", tmp_path / "r", "--from", run, "--baseline", runs.baseline)
    said = f"no diff.html: {run / 'results.jsonl'}: a symbolic link, never followed\n"
    assert (code, err) == (0, said)
    assert sorted(p.name for p in (tmp_path / "r" / run.name).iterdir()) == ["report.html.gz", "summary.json.gz"]


def test_an_existing_record_is_never_replaced(runs: Runs, tmp_path: Path) -> None:
    records = tmp_path / "records"
    assert mathcomp("record", records, "--from", runs.base.run_dir)[0] == 0
    folder = records / runs.base.summary["run_id"]
    code, said, err = mathcomp("record", records, "--from", runs.base.run_dir)
    assert (code, err) == (0, "") and said == f"{folder}: the record exists and holds the same files; kept\n"
    (folder / "summary.json.gz").write_bytes(gzip.compress(b"{}"))
    code, said, err = mathcomp("record", records, "--from", runs.base.run_dir)
    assert code == 1 and said == "" and err.count("\n") == 1 and "exists and differs" in err, err
    assert gzip.decompress((folder / "summary.json.gz").read_bytes()) == b"{}", "kept as it was"
    assert [p.name for p in records.iterdir()] == [folder.name], "no staging folder left"


# mathcomp site


def test_the_index_puts_the_newest_night_per_model_in_the_order_that_needs_a_look_first(
    runs: Runs, records: Path, site: Path
) -> None:
    latest = Page.read(site / "index.html").tables[0]
    assert latest[0] == ["verdict", "model", "ran", "run", "failing since", "worst case", "pages"]
    rows = latest[1:]
    models = [r[1] for r in rows]
    assert models == ["hf:acme/cut-short", "hf:acme/failing", "hf:acme/known", HOSTILE, "symbolic"]
    assert [next(s for s in ORDER if r[0].startswith(s)) for r in rows] == [
        "INCOMPLETE", "FAILED", "KNOWN FAILURES", "PASSED", "PASSED"
    ]  # fmt: skip
    for row in rows:
        (folder,) = [p for p in records.iterdir() if p.name == row[3]]
        summary = summary_format.load(folder)
        assert of_run.verdict(summary).line in row[0], row  # then the cases it could not judge
    assert rows[-1][3] == runs.compared.summary["run_id"], "symbolic's newest night"
    stamp = rows[-1][3]
    assert rows[-1][2] == f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]} {stamp[9:11]}:{stamp[11:13]}:{stamp[13:15]}"
    assert rows[-1][6] == "reportdiff" and rows[0][6] == "no reportno diff"


def test_every_night_of_each_model_is_listed_newest_first(runs: Runs, site: Path) -> None:
    page = Page.read(site / "index.html")
    every = page.tables[1:]
    assert len(every) == 5
    symbolic = every[-1]
    assert [r[2] for r in symbolic[1:]] == [runs.compared.summary["run_id"], runs.base.summary["run_id"]]
    assert [r[3] for r in symbolic[1:]] == ["reportdiff", "reportno diff"]
    assert "6 nights of 5 models read, 0 skipped." in "".join(page.text)


def test_every_link_is_relative_and_resolves_to_a_file_of_the_site(records: Path, site: Path) -> None:
    page = Page.read(site / "index.html")
    links = page.links
    assert (
        "history.html" in links and len(links) == 1 + 2 + 3
    )  # history; the newest night\'s report and diff, then every night\'s (no model fails since a report)
    for link in links:
        parts = urlsplit(link)
        assert not parts.scheme and not parts.netloc and not link.startswith("/"), link
        target = (site / unquote(parts.path)).resolve()
        assert target.is_file() and site.resolve() in target.parents, link
    for night in (p for p in records.iterdir() if (p / "report.html.gz").exists()):
        kept = gzip.decompress((night / "report.html.gz").read_bytes())
        assert unpacked(site / "nights" / night.name / "report.html") == kept, "the record's page, packed"


def test_every_page_is_self_contained(site: Path) -> None:
    pages = sorted(site.rglob("*.html"))
    assert len(pages) == 2 + 3  # the index, history, two reports and a diff
    for path in pages:
        page = Page.read(path)
        fetched = [src for _, a in page.tags if (src := a.get("src")) and not src.startswith("data:")]
        assert not [t for t, _ in page.tags if t == "link"] and not fetched, (path, fetched)
    index = Page.read(site / "index.html")
    assert not [t for t, _ in index.tags if t == "script"], "the index runs no script"


def test_a_model_name_with_markup_is_shown_as_text(site: Path) -> None:
    for name in ("index.html", "history.html"):
        text = (site / name).read_text(encoding="utf-8")
        assert HOSTILE not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text, name
    page = Page.read(site / "index.html")
    assert HOSTILE in "".join(page.text)
    assert not [t for t, _ in page.tags if t == "script"]


def test_the_history_page_is_the_history_of_the_same_records(records: Path, site: Path) -> None:
    text = (site / "history.html").read_text(encoding="utf-8")
    for folder in records.iterdir():
        assert folder.name in text
    assert "INCOMPLETE: the job ended before the suite wrote summary.json" in text


def _rewrite(records: Path, summary: dict[str, Any]) -> None:
    (records / summary["run_id"] / "summary.json").write_text(json.dumps(summary), encoding="utf-8")


def test_the_index_says_since_when_each_model_has_not_passed_and_its_worst_failed_case(
    runs: Runs, tmp_path: Path
) -> None:
    """hf:acme/streak passed, then failed, ran out of memory, failed: it has not passed since the first of
    the three; its newest night's worst case is the one that rose most over its baseline (12 points), not
    the one 10 points over its ceiling. hf:acme/mended failed, then passed: nothing to say."""
    records = tmp_path / "records"
    edited(runs, records, "20261201-030000-streak-0001", "hf:acme/streak")
    edited(runs, records, "20261202-030000-streak-0002", "hf:acme/streak", "new")
    (records / "20261202-030000-streak-0002" / "report.html").write_text("<p>night 2</p>", encoding="utf-8")
    cut = edited(runs, records, "20261203-030000-streak-0003", "hf:acme/streak")
    _rewrite(records, cut | {"status": "incomplete", "incomplete_reasons": ["the runner ran out of memory"]})
    newest = edited(runs, records, "20261204-030000-streak-0004", "hf:acme/streak", "new")
    newest["cases"][0]["baseline"]["changes"]["more"]["difference"] = 0.12
    newest["cases"][0]["breaches"] = ["DirErr(more) rise"]
    ceiling = newest["cases"][1]["ceilings"]["dir_err"]["less"]
    newest["cases"][1] |= {"passed": False, "breaches": ["DirErr(less)"], "standing": "new"}
    newest["cases"][1]["scores"]["dir_err"]["less"] = ceiling + 0.1
    newest["cases_failed"] = 2
    _rewrite(records, newest)
    edited(runs, records, "20261201-040000-mended-0005", "hf:acme/mended", "new")
    edited(runs, records, "20261202-040000-mended-0006", "hf:acme/mended")
    assert mathcomp("site", records, tmp_path / "site")[0] == 0
    page = Page.read(tmp_path / "site" / "index.html")
    head, *rows = page.tables[0]
    row = {r[1]: dict(zip(head, r, strict=True)) for r in rows}
    case = newest["cases"][0]["case"]
    assert row["hf:acme/streak"]["failing since"] == "2026-12-02 03:00:00 (3 nights)"
    assert row["hf:acme/streak"]["worst case"] == f"{case}: DirErr(more) +12.0 points over the baseline"
    assert "nights/20261202-030000-streak-0002/report.html" in page.links, "the first night it failed, linked"
    assert (row["hf:acme/mended"]["failing since"], row["hf:acme/mended"]["worst case"]) == ("", "")


def test_the_index_names_the_cases_at_chance_and_those_that_could_not_see_a_rise(
    runs: Runs, tmp_path: Path
) -> None:
    records = tmp_path / "records"
    marked = edited(runs, records, "20261201-030000-marked-0001", "hf:acme/marked")
    weak = marked["power"]["underpowered"]
    marked["power"]["underpowered"] = weak + [dict(weak[0], case=f"extra-{i}") for i in range(3)]
    marked["at_chance"] = [{"case": "<b>neutral-end</b>", "accuracy": 0.4, "constant": 0.4, "label": "less"}]
    _rewrite(records, marked)
    older = edited(runs, records, "20261201-030000-older-0002", "hf:acme/older")
    _rewrite(records, {k: v for k, v in older.items() if k not in ("power", "at_chance")})
    assert mathcomp("site", records, tmp_path / "site")[0] == 0
    page = Page.read(tmp_path / "site" / "index.html")
    verdicts = {r[1]: r[0] for r in page.tables[0][1:]}
    first, second = (w["case"] for w in weak)
    assert verdicts["hf:acme/marked"].endswith(
        f"AT CHANCE: <b>neutral-end</b>could not see a rise: {first}, {second}, extra-0 and 2 more"
    )
    assert "AT CHANCE" not in verdicts["hf:acme/older"] and "could not see" not in verdicts["hf:acme/older"]
    assert not [t for t, _ in page.tags if t == "b"], "a case name is text"


def test_each_page_names_its_verdicts_or_models_in_its_title_and_history_links_to_the_nights(
    records: Path, site: Path, tmp_path: Path
) -> None:
    assert Page.read(site / "index.html").title == (
        "MathComp nightly results: 1 INCOMPLETE, 1 FAILED, 1 KNOWN FAILURES, 2 PASSED"
    )
    page = Page.read(site / "history.html")
    named = page.title.removeprefix("MathComp history: ").split(", ")
    assert sorted(named) == ["hf:acme/cut-short", "symbolic"], f"its models (by identity): {page.title}"
    assert page.links[0] == "index.html", "the way back, first"
    for link in page.links:
        parts = urlsplit(link)
        assert not parts.scheme and not parts.netloc and not link.startswith("/"), link
        assert (site / unquote(parts.path)).is_file(), link
    reports = {f"nights/{p.parent.name}/report.html" for p in (site / "nights").glob("*/report.html")}
    assert len(reports) == 2 and set(page.links) == {"index.html", *reports}
    table = next(t for t in page.tables if t[0][0] == "run")
    linked = [str(a.get("href")) for t, a in page.tags if t == "a" and a.get("class") != "mathcomp-point"]
    assert sorted(linked[1:]) == sorted(reports), "each run that keeps a report, once in the table"
    assert len(table) == 1 + 5, "every night but the stand-in's (a model of its own) is symbolic's by identity"
    points = [a.get("href") for t, a in page.tags if t == "a" and a.get("class") == "mathcomp-point"]
    assert set(points) == reports and len(points) == 2 * 3, "each linked run's mean in each of 3 panels"
    alone = tmp_path / "history.html"
    assert mathcomp("history", records, "-o", alone)[0] == 0
    assert Page.read(alone).links == [], "`mathcomp history` on its own links nothing that would not resolve"


def test_damaged_records_and_unsafe_names_are_skipped_one_line_each_and_counted(
    runs: Runs, records: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "records"
    shutil.copytree(records, copy)
    (copy / "20261202-000000-cut-0004").mkdir()
    cut = copy / "20261202-000000-cut-0004" / "summary.json"
    cut.write_text('{"run_id": "20261202', encoding="utf-8")
    wrong = edited(runs, copy, "20261202-000000-wrong-0005", "hf:acme/wrong")
    (copy / wrong["run_id"] / "summary.json").write_text(
        json.dumps(wrong | {"cases_run": "28"}), encoding="utf-8"
    )
    edited(runs, copy, "odd name <b>", "hf:acme/odd")
    code, said, err = mathcomp("site", copy, tmp_path / "site")
    lines = err.splitlines()
    assert code == 0 and len(lines) == 3, err
    assert lines[0].startswith(f"skipped {cut}: not valid JSON")
    assert (
        lines[1]
        == f'skipped {copy / wrong["run_id"] / "summary.json"}: cases_run: expected a whole number at least 0, got "28"'
    )
    assert lines[2].startswith(f"skipped {copy / 'odd name <b>'}: expected a run id as the folder's name")
    assert said.endswith(", 3 records skipped\n")
    page = Page.read(tmp_path / "site" / "index.html")
    text = "".join(page.text)
    assert "6 nights of 5 models read, 3 skipped." in text and "3 records skipped:" in text
    assert "odd name <b>" in text and not [t for t, _ in page.tags if t == "b"]
    assert sorted(p.name for p in (tmp_path / "site" / "nights").iterdir()) == sorted(
        p.name for p in records.iterdir() if (p / "report.html.gz").exists()
    )


def test_out_is_replaced_whole_and_never_left_half_built(
    records: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "site"
    assert mathcomp("site", records, out)[0] == 0
    (out / "stale.html").write_text("from an older site", encoding="utf-8")
    assert mathcomp("site", records, out)[0] == 0
    assert not (out / "stale.html").exists() and (out / "index.html").is_file()
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def fake_page_fails(*args: object) -> str:
        """A fake: the disk fills while a night's page is made, a fault a test cannot make otherwise."""
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(packed, "page", fake_page_fails)
    code, _, err = mathcomp("site", records, out)
    assert code == 1 and err == f"error: cannot write the site in {out}: No space left on device\n"
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["site"], "no staging folder left beside it"


def test_site_exit_statuses(records: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    for args, code, said in [
        ((tmp_path / "missing", tmp_path / "o"), 2, "no such folder; expected the folder of night records"),
        ((tmp_path / "file", tmp_path / "o"), 2, "not a folder; expected the folder of night records"),
        ((records, tmp_path / "file"), 2, "a file; expected a folder to write the site in"),
        ((records, records.parent), 2, "replacing it would remove the records"),
        ((tmp_path / "empty", tmp_path / "o"), 1, "no night record could be read"),
    ]:
        got, _, err = mathcomp("site", *args)
        assert got == code and said in err and err.count("\n") == 1, (args, err)
    assert not (tmp_path / "o").exists() and (tmp_path / "file").read_text(encoding="utf-8") == "x"
