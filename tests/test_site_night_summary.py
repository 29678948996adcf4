"""The site keeps of each night's summary.json only what its pages read (site/night_summary.py): the history
rows, the index's worst case and marks drawn from the reduced summary are those drawn from the whole one, on
real runs: the symbolic reference, and the demo model compared with it (its cued case rose and failed)."""

from __future__ import annotations

import json

import pytest
from helpers.shared_runs import DemoAgainstReference

from mathcomp_tests.history import page as history
from mathcomp_tests.site import model_row
from mathcomp_tests.site.night_summary import reduced


@pytest.fixture(scope="module")
def summaries(demo_against_reference: DemoAgainstReference) -> list[dict[str, object]]:
    """The session's two runs (tests/conftest.py): 12 scenarios, neutral and direct-more at the beginning."""
    reference, demo = demo_against_reference.reference, demo_against_reference.demo
    assert reference.returncode == 0, reference.output
    assert demo.returncode == 1, demo.output  # the demo model follows the cue: DirErr(more) rose
    return [reference.summary, demo.summary]


def test_the_pages_read_the_same_from_the_reduced_summary(summaries: list[dict[str, object]]) -> None:
    kept = [reduced(s) for s in summaries]
    assert history.rows(kept) == history.rows(summaries)
    assert [history.rows([s], "one") for s in kept] == [history.rows([s], "one") for s in summaries]
    demo = summaries[1]
    assert model_row.worst_case(demo), "the demo night has a worst case to name"
    for full, less in zip(summaries, kept, strict=True):
        assert model_row.worst_case(less) == model_row.worst_case(full)
        assert model_row.marks(less) == model_row.marks(full)


def test_the_reduced_summary_is_a_fraction_of_the_whole(summaries: list[dict[str, object]]) -> None:
    for full in summaries:
        less = reduced(full)
        assert len(json.dumps(less)) < len(json.dumps(full)) / 2
        assert "invariance" not in less and all("examples" not in c for c in less["cases"])
