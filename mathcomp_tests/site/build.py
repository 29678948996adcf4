"""The whole site from a folder of night records: index.html, history.html (the history page of the same
records) and nights/<run-id>/ with each night's report.html and diff.html as the records keep them. Built
in a folder beside OUT and swapped in whole (folder_swap): OUT is the old site or the new one, never half."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from .. import userfile
from ..report.standalone import history
from . import folder_swap, index_page, nights


class NothingRead(ValueError):
    """No record could be read: there is no site to build. The message names the folder."""


@dataclass(frozen=True)
class Built:
    """What the site holds: the folder, the nights and models read, the records skipped."""

    out: Path
    nights: int
    models: int
    skipped: int


def _fill(folder: Path, records_dir: Path, models: list[list[nights.Night]], skipped: list[str]) -> None:
    (folder / index_page.INDEX).write_text(index_page.page(models, skipped), encoding="utf-8")
    text, _ = history(records_dir, None, lambda line: None)  # the skipped lines were said once already
    (folder / index_page.HISTORY).write_text(text, encoding="utf-8")
    for night in (n for group in models for n in group):
        if night.pages:
            copied = folder / index_page.NIGHTS / night.run_id
            copied.mkdir(parents=True)
            for name in night.pages:
                shutil.copyfile(night.folder / name, copied / name)


def site(records_dir: Path, out: Path, skip: nights.Warn) -> Built:
    """Build the site of ``records_dir`` at ``out`` (a link is followed: its target is replaced);
    ``skip`` hears each record left out, naming its file. NothingRead when no record could be read."""
    found, skipped = nights.read(records_dir, skip)
    if not found:
        damaged = f" ({len(skipped)} skipped)" if skipped else ""
        raise NothingRead(f"{records_dir}: no night record could be read{damaged}")
    models = nights.by_model(found)
    target = userfile.target(out)
    staged = folder_swap.staging(target)
    try:
        _fill(staged, records_dir, models, skipped)
        folder_swap.replace(staged, target)
    finally:
        shutil.rmtree(staged, ignore_errors=True)
    return Built(target, len(found), len(models), len(skipped))
