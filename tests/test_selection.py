"""Which sessions select the suite (and so get its options, settings and files), and which do not."""

from __future__ import annotations

from pathlib import Path

from helpers.suite_runner import REPO, run_suite

from mathcomp_tests.suite_selection import SUITE_DIR, selects_suite


def test_the_suite_is_selected_by_module_name_path_or_node_id() -> None:
    elsewhere = Path("/")
    assert selects_suite(["mathcomp_tests.suite"], elsewhere)
    assert selects_suite(["mathcomp_tests.suite.test_framing"], elsewhere)
    assert selects_suite([f"{SUITE_DIR / 'test_framing.py'}::test_framing"], elsewhere)
    assert selects_suite(["mathcomp_tests/suite"], REPO)
    assert selects_suite(["."], REPO), "the checkout's root holds the suite"


def test_other_collections_do_not_select_it(tmp_path: Path) -> None:
    assert not selects_suite(["tests"], REPO)
    assert not selects_suite(["tests/test_metrics.py::test_x"], REPO)
    assert not selects_suite(["their_package"], tmp_path)
    assert not selects_suite([str(tmp_path)], tmp_path)


def test_a_folder_above_an_installed_suite_does_not_select_it() -> None:
    from mathcomp_tests.suite_selection import _recursed_into

    assert not _recursed_into((".venv", "lib", "python3.11", "site-packages", "mathcomp_tests", "suite"))
    assert not _recursed_into(("venv", "lib", "python3.11", "site-packages", "mathcomp_tests", "suite"))
    assert _recursed_into(("mathcomp_tests", "suite"))


def test_an_option_value_written_apart_neither_selects_nor_hides_the_testpaths(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--model", "symbolic", "--limit", "2", "--framings", "neutral")
    assert run.returncode == 0, run.output
    assert run.summary["cases_run"] == 2
