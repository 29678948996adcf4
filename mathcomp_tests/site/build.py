"""The whole site from a folder of night records: index.html, history.html (the history page of the same
nights) and nights/<run-id>/ with each night's report.html and diff.html, each a page that unpacks itself
from the record's gzipped page (packed). Built in a folder beside OUT and swapped in whole (folder_swap):
OUT is the old site or the new one, never half.

OUT is this command's own: a site it built holds the file MARKER, and only such a folder (or an empty one,
or none) is ever replaced; a link is never followed to its target (``foreign``)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ..record import packed, plain_files
from . import folder_swap, history_page, index_page, nights

MARKER = ".mathcomp-site"
"""The file every built site holds: OUT holding it is a site this command built, and may be replaced."""
MARKER_TEXT = "A site `mathcomp site` built; the next build replaces this folder whole.\n"


BACK = f"../../{index_page.INDEX}"
"""From a night's page (nights/<run-id>/report.html) back to the index."""


class NothingRead(ValueError):
    """No record could be read: there is no site to build. The message names the folder."""


class ForeignOut(ValueError):
    """OUT is not this command's to replace (``foreign``); the message names it."""


@dataclass(frozen=True)
class Built:
    """What the site holds: the folder, the nights and models read, the records skipped; the staged folders
    of builds stopped before they cleaned up, removed."""

    out: Path
    nights: int
    models: int
    skipped: int
    removed: tuple[Path, ...] = ()


def foreign(out: Path) -> str | None:
    """Why ``out`` must not be replaced, in one line naming it; None when it may be: it is not there, or it is
    an empty folder, or a site this command built (it holds MARKER)."""
    if out.is_symlink():
        return f"OUT {out}: a symbolic link; expected a folder of its own (a link's target is never replaced)"
    if not out.exists():
        return None
    if not out.is_dir():
        return f"OUT {out}: a file; expected a folder to write the site in"
    if plain_files.plain(out / MARKER) or not any(out.iterdir()):
        return None
    return (
        f"OUT {out}: holds files and no {MARKER}, so it is not a site this command built; "
        "expected an empty folder, a site to replace, or none"
    )


def _packed_bytes(source: Path) -> bytes:
    """The page at ``source`` gzipped: a packed page's bytes as they are (checked to unpack), a plain page
    (a record written before pages were kept packed) packed here. DamagedPage naming a packed one that does
    not unpack; never read through a link (plain_files)."""
    kept = plain_files.read_bytes(source)
    if source.name.endswith(packed.SUFFIX):
        packed.unpack(kept, source)
        return kept
    return packed.pack(kept)


def _night_pages(folder: Path, night: nights.Night, skip: nights.Warn) -> nights.Night:
    """The night's pages in ``folder``, each unpacking itself; a page that cannot be read is left out, with a
    line naming it (the night is still listed). The night as published: with the pages written."""
    written = []
    for name in night.pages:
        source = night.source(name)
        try:
            gz = _packed_bytes(source)
        except (packed.DamagedPage, OSError) as exc:
            said = f"{source}: {exc.strerror or exc}" if isinstance(exc, OSError) else str(exc)
            skip(f"{said}; the night is published without it")
            continue
        title = f"{night.model}: {night.standing}, {night.run_id} ({name})"
        instead = f"The record keeps it as {night.run_id}/{source.name}: gunzip it and open the page."
        target = folder / index_page.NIGHTS / night.run_id / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(packed.page(title, gz, instead, BACK), encoding="utf-8")
        written.append(name)
    return replace(night, pages=tuple(written))


def _fill(folder: Path, every: list[nights.Night], skipped: list[str], skip: nights.Warn) -> None:
    every = [_night_pages(folder, night, skip) for night in every]  # the index links only what was written
    models = nights.by_model(every)
    (folder / index_page.INDEX).write_text(index_page.page(models, skipped), encoding="utf-8")
    (folder / index_page.HISTORY).write_text(history_page.history_html(every, skipped), encoding="utf-8")
    (folder / MARKER).write_text(MARKER_TEXT, encoding="utf-8")


def site(records_dir: Path, out: Path, skip: nights.Warn) -> Built:
    """Build the site of ``records_dir`` at ``out``; ``skip`` hears each record left out, naming its file.
    NothingRead when no record could be read; ForeignOut when ``out`` is not this command's to replace."""
    if (refused := foreign(out)) is not None:
        raise ForeignOut(refused)
    found, skipped = nights.read(records_dir, skip)
    if not found:
        damaged = f" ({len(skipped)} skipped)" if skipped else ""
        raise NothingRead(f"{records_dir}: no night record could be read{damaged}")
    removed = folder_swap.sweep(out)
    with folder_swap.staged(out) as staged:
        _fill(staged, found, skipped, skip)
        folder_swap.replace(staged, out)
    return Built(out, len(found), len(nights.by_model(found)), len(skipped), tuple(removed))
