"""``--html=PATH`` (pytest-html's own option) with the suite: the user's page is written where they asked,
and the run folder still gets its report.html (so reports/latest/report.html is always there). Both are
the same self-contained page: the suite turns --self-contained-html on, since a run's report must open as
one file wherever it is copied (a CI artifact, an e-mail)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Generator
from pathlib import Path

import pytest

from ..records import results


def configure(config: pytest.Config, run_dir: Path) -> None:
    """Where pytest-html will write: the run folder's report.html, or the user's --html and a copy."""
    config.option.self_contained_html = True
    given = config.getoption("htmlpath", None)
    if not given:
        config.option.htmlpath = str(run_dir / results.REPORT)
        return
    user = Path.cwd() / Path(os.path.expandvars(given)).expanduser()  # as pytest-html resolves it
    if user.resolve() != (run_dir / results.REPORT).resolve():
        config.pluginmanager.register(_Copy(user, run_dir / results.REPORT), "mathcomp-report-copy")


class _Copy:
    """Copies the page pytest-html wrote (its trylast pytest_sessionfinish) into the run folder."""

    def __init__(self, written: Path, target: Path):
        self.written = written
        self.target = target

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionfinish(self) -> Generator[None, None, None]:
        try:
            return (yield)
        finally:
            if self.written.is_file() and self.target.parent.is_dir():
                shutil.copyfile(self.written, self.target)
