"""The release workflow (.github/workflows/release.yml): its build, check and version steps run here as they
stand, on a clean copy of the sources with dist/ in a scratch folder, and what they build is what a user
installs: the plugin's entry point, the suite, the fixtures, the demo model, the starter files.

Left to the workflow itself: installing the build tools and the built wheel from the registry (network),
and the upload to PyPI (trusted publishing, from a tag). tests/test_package.py installs the wheel the build
step makes in a virtualenv that cannot see the checkout and runs the workflow's two suite steps on it.
"""

from __future__ import annotations

import re
import tarfile
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.wheel_env import RELEASE, REPO, release_build, run_release_step

CHECK_STEP = "Check the distributions"
VERSION_STEP = "Check the tag is the package version"
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
PACKAGED = {
    "mathcomp_tests/fixtures": REPO / "fixtures",
    "mathcomp_tests/fixtures/models/mathcomp-tiny": REPO / "fixtures" / "models" / "mathcomp-tiny",
    "mathcomp_tests/starter": REPO / "mathcomp_tests" / "starter",
    "mathcomp_tests/suite": REPO / "mathcomp_tests" / "suite",
}
"""Folders of the wheel and the checkout's folder whose every file (at its top level) they must carry."""

pytestmark = pytest.mark.xdist_group("release")
"""One worker runs this module, so the distributions are built once."""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The build step's work: a copy of the sources (``src``) and the distributions (``dist``), shared with
    tests/test_package.py (read, never written)."""
    return release_build(tmp_path_factory.mktemp("release"))


def _workflow() -> dict[Any, Any]:
    return dict(yaml.safe_load(RELEASE.read_text()))


def test_the_build_step_makes_an_sdist_and_a_wheel_of_this_version(built: Path) -> None:
    assert sorted(p.name for p in (built / "dist").iterdir()) == [
        f"mathcomp_tests-{VERSION}-py3-none-any.whl",
        f"mathcomp_tests-{VERSION}.tar.gz",
    ]


def test_twine_passes_both_distributions(built: Path) -> None:
    checked = run_release_step(CHECK_STEP, built / "src", {"DIST": str(built / "dist")})
    assert checked.returncode == 0, checked.stdout
    said = checked.stdout.replace("\n", "")  # twine wraps its lines to the terminal's width
    assert said.count("PASSED") == 2 and "FAILED" not in said, checked.stdout
    for name in (f"mathcomp_tests-{VERSION}-py3-none-any.whl", f"mathcomp_tests-{VERSION}.tar.gz"):
        assert f"Checking {built / 'dist' / name}: " in said, checked.stdout


def test_twine_fails_a_distribution_with_broken_metadata(built: Path, tmp_path: Path) -> None:
    """The check above can fail: a wheel whose description is declared Markdown but is missing."""
    (wheel,) = (built / "dist").glob("*.whl")
    broken = tmp_path / wheel.name
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(broken, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename.endswith(".dist-info/METADATA"):
                data = data.split(b"\n\n", 1)[0] + b"\n"  # the headers, not the description
            target.writestr(info, data)
    checked = run_release_step(CHECK_STEP, built / "src", {"DIST": str(tmp_path)})
    assert checked.returncode == 1 and "FAILED" in checked.stdout, checked.stdout


def test_the_wheel_carries_the_plugin_the_suite_the_fixtures_the_demo_model_and_the_starter_files(
    built: Path,
) -> None:
    (wheel,) = (built / "dist").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder, source in PACKAGED.items():
        expected = {f"{folder}/{p.name}" for p in source.iterdir() if p.is_file() and p.suffix != ".pyc"}
        assert expected and expected <= names, f"missing from the wheel: {sorted(expected - names)}"
    assert "mathcomp_tests/thresholds.toml" in names
    assert {"mathcomp_tests/cli/prepare.py", "mathcomp_tests/cli/prepare_smollm2.py"} <= names
    assert not [n for n in names if n.startswith(("fixtures/", "tests/", "training/", "conftest"))]
    (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "[pytest11]" in text and "mathcomp_tests.pytest_plugin = mathcomp_tests.pytest_plugin" in text
    assert "[console_scripts]" in text and "mathcomp = mathcomp_tests.cli:main" in text


def test_the_sdist_carries_what_the_wheel_is_built_from(built: Path) -> None:
    (sdist,) = (built / "dist").glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    sources = {"pyproject.toml", "README.md", "thresholds.toml", "fixtures/scenarios.csv"}
    demo = {
        f"fixtures/models/mathcomp-tiny/{p.name}"
        for p in PACKAGED["mathcomp_tests/fixtures/models/mathcomp-tiny"].iterdir()
    }
    assert sources | demo <= names, sorted(sources | demo - names)


@pytest.mark.parametrize(
    ("ref_type", "ref_name", "passes"),
    [
        ("tag", f"v{VERSION}", True),
        ("branch", "main", True),
        ("tag", "v9.9.9", False),
        ("tag", VERSION, False),
    ],
)
def test_the_version_step_holds_a_tag_to_the_package_version(
    built: Path, ref_type: str, ref_name: str, passes: bool
) -> None:
    env = {"DIST": str(built / "dist"), "GITHUB_REF_TYPE": ref_type, "GITHUB_REF_NAME": ref_name}
    checked = run_release_step(VERSION_STEP, built / "src", env)
    if passes:
        assert checked.returncode == 0 and checked.stdout == f"version {VERSION}\n", checked.stdout
    else:
        assert checked.returncode == 1, checked.stdout
        assert (
            checked.stdout
            == f"::error::the tag {ref_name} is not v{VERSION}, the version in pyproject.toml\n"
        )


def test_the_version_step_fails_when_the_distributions_are_another_version(
    built: Path, tmp_path: Path
) -> None:
    (tmp_path / f"mathcomp_tests-{VERSION}.tar.gz").write_bytes(b"")  # the sdist alone: no wheel of it
    env = {"DIST": str(tmp_path), "GITHUB_REF_TYPE": "tag", "GITHUB_REF_NAME": f"v{VERSION}"}
    checked = run_release_step(VERSION_STEP, built / "src", env)
    assert checked.returncode == 1
    assert f"{tmp_path}/mathcomp_tests-{VERSION}-py3-none-any.whl was not built" in checked.stdout


def test_only_a_tag_publishes_and_only_the_publishing_job_may_ask_for_a_token() -> None:
    workflow = _workflow()
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert triggers["push"] == {"tags": ["v*"]} and "workflow_dispatch" in triggers
    assert (
        workflow["permissions"] == {"contents": "read"}
        and workflow["concurrency"]["cancel-in-progress"] is False
    )
    jobs = workflow["jobs"]
    assert all(job["timeout-minutes"] <= 30 for job in jobs.values())
    assert "permissions" not in jobs["build"]
    publish = jobs["publish"]
    assert publish["needs"] == "build" and publish["environment"]["name"] == "pypi"
    assert publish["if"] == "github.event_name == 'push' && startsWith(github.ref, 'refs/tags/v')"
    assert publish["permissions"] == {"id-token": "write"}
    upload = publish["steps"][-1]
    assert upload["uses"] == "pypa/gh-action-pypi-publish@release/v1" and "with" not in upload, "no token"
    download = publish["steps"][0]["with"]
    built = [s for s in jobs["build"]["steps"] if "upload-artifact" in s.get("uses", "")]
    assert len(built) == 1 and built[0]["with"]["name"] == download["name"] == "dist"


def test_the_installing_page_pins_the_version_this_tree_would_release() -> None:
    page = (REPO / "docs" / "installing.md").read_text()
    pins = re.findall(r"mathcomp-tests\[[a-z,]+\]==([0-9][^\s\"`]*)", page)
    assert pins and set(pins) == {VERSION}, (
        f"docs/installing.md pins {sorted(set(pins))}, pyproject says {VERSION}"
    )
