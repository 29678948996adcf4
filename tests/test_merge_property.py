"""A merged run is the whole run, whatever the selection, the gate, the project's own check, the number of
shards and the order they are given in: Hypothesis draws them, runs the whole selection once and as N shards
merged, and checks that summary.json is the same but for ``run_id``, ``merged_from`` and ``shard``, the exit
status and the verdict line (the report's headline) are the same, and the two --update-baseline files are
byte-equal. The explicit examples are the cases the merge once got wrong: a project's own check, a power
requirement the shards ran with, -k-narrowed shards, --protocol=all's usage, --fail-on=new with known
failures and Holm given to the merge (the merged run xfailed no known failure: it read --fail-on from the
command line), and the starter's own check on a cue case whose neutral partner is not selected (the shards
asked the partner and kept no record of it: the merge could not answer it)."""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from html import unescape
from pathlib import Path

import pytest
from helpers.merge_cli import merge
from helpers.suite_runner import REPO, pytest_process
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from mathcomp_tests.verdict.of_run import verdict

pytestmark = pytest.mark.xdist_group("merge-property")

OWN_CHECKS = {
    "none": "",
    "fails direct-more": """import pytest


@pytest.hookimpl(optionalhook=True)
def pytest_mathcomp_check(case, scores, neutral):
    if case.condition.framing == "direct-more":
        return ["direct-more is held to this project's own check (conftest.py)"]
    return []
""",
}
OWN_CHECKS["the starter's"] = (REPO / "mathcomp_tests" / "starter" / "conftest.py").read_text()
"""`mathcomp init`'s check: it asks the neutral partner of each direct cue case (``neutral()``)."""
KS = ("", "neutral", "not less")
RANDOM_EXAMPLES = 4
"""Drawn examples on top of the explicit ones (each runs the suite 3 to 7 times: about 10 s)."""


@dataclass(frozen=True)
class Drawn:
    framings: tuple[str, ...]
    limit: int
    generated: int
    k: str
    protocol: str
    baseline: bool
    holm: bool
    fail_on_new: bool
    require_power: bool
    own_check: str
    shards: int
    order: tuple[int, ...]
    gate_to_merge: bool
    update_baseline: bool


@st.composite
def drawn(draw: st.DrawFn) -> Drawn:
    framings = tuple(
        draw(
            st.lists(
                st.sampled_from(("neutral", "direct-more", "direct-less")),
                min_size=1,
                max_size=3,
                unique=True,
            )
        )
    )
    baseline = draw(st.booleans())
    generated = draw(st.sampled_from((0, 3)))
    shards = draw(st.integers(2, generated or 5))  # each shard asks one of every draw at least; 1/1 is whole
    k = draw(st.sampled_from(KS))
    assume({"": True, "neutral": "neutral" in framings, "not less": framings != ("direct-less",)}[k])
    return Drawn(
        framings=framings,
        limit=draw(st.sampled_from((5, 6))),
        generated=generated,
        k=k,
        protocol=draw(st.sampled_from(("plain", "plain,dual-direction"))),
        baseline=baseline,
        holm=baseline and draw(st.booleans()),
        fail_on_new=baseline and draw(st.booleans()),
        require_power=baseline and draw(st.booleans()),
        own_check=draw(st.sampled_from(tuple(OWN_CHECKS))),
        shards=shards,
        order=tuple(draw(st.permutations(range(shards)))),
        gate_to_merge=draw(st.booleans()),
        update_baseline=draw(st.booleans()),
    )


def _case(**changed: object) -> Drawn:
    plain = Drawn(
        framings=("neutral", "direct-more"), limit=6, generated=0, k="", protocol="plain", baseline=False,
        holm=False, fail_on_new=False, require_power=False, own_check="none", shards=2, order=(1, 0),
        gate_to_merge=False, update_baseline=False,
    )  # fmt: skip
    return Drawn(**{**plain.__dict__, **changed})


def _comparable(summary: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in summary.items() if k not in ("run_id", "merged_from", "shard")}


def _headline(run_dir: Path, line: str) -> str:
    """The report's verdict box title that the verdict line ends with."""
    titles = [unescape(t) for t in re.findall(r"<h2>(.*?)</h2>", (run_dir / "report.html").read_text())]
    return next(t for t in titles if line.endswith(t))


class Project:
    """A user's project folder, with its own check and its baselines (one per selection, made once)."""

    def __init__(self, root: Path):
        self.root = root
        self.count = 0
        (root / "thresholds.toml").write_text((REPO / "thresholds.toml").read_text())

    def suite(self, *args: str) -> tuple[subprocess.CompletedProcess[str], Path]:
        self.count += 1
        reports = self.root / f"run-{self.count}"
        command = ["-p", "no:cacheprovider", "--pyargs", "mathcomp_tests.suite", f"--reports-dir={reports}"]
        done = pytest_process([*command, "--no-cache", *args], cwd=self.root)
        return done, (reports / "latest").resolve()

    def baseline(self, selection: list[str]) -> Path:
        """The symbolic model's baseline of ``selection`` (its own check off: the base's answers are what
        count)."""
        path = self.root / f"base-{abs(hash(tuple(selection)))}.txt"
        if not path.is_file():
            (self.root / "conftest.py").write_text("")
            done, _ = self.suite(*selection, f"--update-baseline={path}")
            assert path.is_file(), done.stdout[-2000:]
        return path


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return Project(tmp_path_factory.mktemp("their-project"))


@settings(
    max_examples=RANDOM_EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(drawn())
@example(_case(own_check="fails direct-more", shards=3, order=(2, 0, 1)))
@example(_case(baseline=True, require_power=True, shards=2))
@example(_case(k="neutral", shards=3, order=(0, 2, 1), update_baseline=True))
@example(_case(protocol="plain,dual-direction", framings=("neutral",), shards=2))
@example(_case(own_check="fails direct-more", baseline=True, fail_on_new=True, holm=True, gate_to_merge=True))
@example(_case(generated=3, shards=3, order=(2, 1, 0), update_baseline=True))
@example(_case(framings=("direct-more",), own_check="the starter's", shards=2))
def test_the_merged_run_is_the_whole_run(project: Project, case: Drawn) -> None:
    selection = [
        "--model=symbolic", f"--limit={case.limit}", f"--framings={','.join(case.framings)}", "--positions=end",
        f"--generated={case.generated}", f"--protocol={case.protocol}",
    ]  # fmt: skip
    gate = []
    if case.baseline:
        gate.append(f"--baseline={project.baseline(selection)}")
    gate += (
        ["--holm"] * case.holm
        + ["--fail-on=new"] * case.fail_on_new
        + ["--require-power"] * case.require_power
    )
    narrowing = ["-k", case.k] if case.k else []
    (project.root / "conftest.py").write_text(OWN_CHECKS[case.own_check])
    whole_base, merged_base = project.root / "whole-base.txt", project.root / "merged-base.txt"
    for path in (whole_base, merged_base):
        path.unlink(missing_ok=True)
    written = [f"--update-baseline={whole_base}"] if case.update_baseline else []
    whole, whole_dir = project.suite(*selection, *gate, *narrowing, *written)
    parts = [f"--shard={i}/{case.shards}" for i in range(1, 1 + case.shards)]
    shards = [project.suite(*selection, *gate, *narrowing, part) for part in parts]
    assert all(done.returncode == 0 for done, _ in shards), [
        done.stdout[-2000:] + done.stderr for done, _ in shards
    ]
    out = project.root / f"merged-{project.count}"
    given_gate = [g.replace("=", " ", 1).split(" ", 1) for g in gate] if case.gate_to_merge else []
    merged = merge(
        *(shards[i][1] for i in case.order), "--out", out,
        *[part for g in given_gate for part in g],
        *(["--update-baseline", str(merged_base)] if case.update_baseline else []),
        cwd=project.root,
    )  # fmt: skip
    assert merged.returncode == whole.returncode, merged.stdout[-3000:] + merged.stderr + whole.stdout[-2000:]
    whole_summary = json.loads((whole_dir / "summary.json").read_text())
    merged_summary = json.loads((out / "summary.json").read_text())
    assert _comparable(merged_summary) == _comparable(whole_summary)
    line = verdict(whole_summary).line
    assert verdict(merged_summary).line == line and f"MathComp merge: {line}" in merged.stdout
    assert _headline(out, line) == _headline(whole_dir, line)
    if case.update_baseline:
        assert merged_base.read_bytes() == whole_base.read_bytes()
