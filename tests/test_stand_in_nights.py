"""A stand-in night (`mathcomp record --stand-in`: the runner ran out of memory before the suite wrote its
summary.json) of a local-weights model is a night of that model: in `mathcomp history` it joins the group of
the model's real runs (which go by the weights' digest, not the name as given), and in `mathcomp site` the
model's row, whether the stand-in names the model by its alias or by the name it resolves to.

The real night is one suite run of the demonstration weights (mathcomp-tiny) recorded with `mathcomp
record --from`."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
from helpers.suite_runner import run_suite

from mathcomp_tests.cli import main
from mathcomp_tests.history.build import history

ALIAS = "mathcomp-tiny"
RESOLVED = "hf:fixtures/models/mathcomp-tiny"
ARGS = (f"--model={ALIAS}", "--limit=10", "--framings=neutral", "--positions=end", "--identities=std")
REASON = "the runner ran out of memory"


def mathcomp(*argv: str | Path) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main([str(a) for a in argv])


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real night, then a stand-in under the alias the run was given and one under the name it resolves
    to (as a CI that passes the resolved name writes it)."""
    tmp = tmp_path_factory.mktemp("stand-in")
    run = run_suite(tmp, *ARGS)
    assert run.returncode in (0, 1), run.output  # 1: the demo model breaches a ceiling
    assert run.summary["model_identity"].startswith("weights:")
    records = tmp / "records"
    assert mathcomp("record", records, "--from", run.run_dir) == 0
    for model in (ALIAS, RESOLVED):
        assert mathcomp("record", records, "--stand-in", f"--model={model}", f"--reason={REASON}") == 0
    return records


def test_a_stand_in_of_local_weights_joins_its_models_history(records: Path) -> None:
    _, rows = history(records)
    assert len(rows) == 3
    assert len({r.group for r in rows}) == 1, {r.model: r.group for r in rows}
    assert {r.identity for r in rows} == {rows[0].identity} and rows[0].identity.startswith("weights:")
    assert len({r.axis for r in rows}) == 1, "the stand-ins are on the real run's axis"
    assert [r.night for r in rows].count(f"INCOMPLETE: {REASON}") == 2


def test_a_stand_in_of_local_weights_is_in_its_models_row_of_the_site(records: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        assert main(["site", str(records), str(out)]) == 0
    assert said.getvalue().endswith("3 nights of 1 model, 0 records skipped\n"), said.getvalue()
    page = (out / "history.html").read_text(encoding="utf-8")
    assert page.count("<img") == 1, "one group, one axis, one picture"
