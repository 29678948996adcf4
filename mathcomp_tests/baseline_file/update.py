"""--update-baseline from a narrowed run (-k, -m, --lf, --sw, --deselect, node ids): the cases it ran are
rewritten inside the existing file and every other line is kept byte for byte. A file that such a run cannot
update so (another model, revision, dataset, prompt set, scenarios or generated draw; an older format) is
refused: mixing two runs' answers in one file would compare a later run with neither."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import userfile
from ..data.generated_draw import GENERATED_PREFIX
from .fit import Baseline
from .format import FORMAT, BaselineError, shown_model
from .reader import parse
from .writer import case_line, generated_lines, keeps_probs, without_probs_said

SPLICES = ("3", str(FORMAT))
"""Formats whose lines a narrowed run can rewrite in place (format 3 lines are format 4 lines without
probabilities, so the file becomes format 4)."""


@dataclass(frozen=True)
class Updated:
    path: Path
    rewritten: int
    added: int
    total: int
    """Case lines in the file after the update."""

    @property
    def kept(self) -> int:
        return self.total - self.rewritten - self.added


def differences(old: Baseline, fresh: Baseline, folder: Path) -> list[str]:
    """How the run's answers differ in kind from the file's (empty: its cases can go into the file)."""
    problems = []
    model = shown_model(fresh.model, folder)
    if model != old.model:
        problems.append(f"another model (the file's {old.model}, the run's {model})")
    elif (fresh.revision or None) != old.revision:
        problems.append(
            f"another revision of the model (the file's {old.revision}, the run's {fresh.revision})"
        )
    if old.dataset_sha256 != fresh.dataset_sha256:
        problems.append(f"another dataset (the file's {old.dataset}, the run's {fresh.dataset})")
    if old.prompt_set != fresh.prompt_set:
        problems.append(f"another prompt set (the file's {old.prompt_set!r}, the run's {fresh.prompt_set!r})")
    if old.scenarios != fresh.scenarios:
        problems.append(
            f"other scenarios ({len(old.scenarios)} in the file, {len(fresh.scenarios)} in the run; check --limit)"
        )
    generated = any(c.startswith(GENERATED_PREFIX) for c in fresh.cases)
    if generated and old.generated is not None and old.generated != fresh.generated:
        mine, theirs = old.generated.options, fresh.generated.options if fresh.generated else "?"
        problems.append(f"other generated scenarios (the file's {mine}, the run's {theirs})")
    return problems


def update(path: Path, fresh: Baseline) -> Updated:
    """Rewrite ``fresh``'s cases inside the baseline file at ``path`` (through a link), keep every other line;
    raise BaselineError saying why the file cannot take them."""
    real = userfile.target(path)
    try:
        raw = real.read_bytes().decode("utf-8")  # as it is: its line ends and byte-order mark are kept
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"{path} cannot be read: {exc}") from exc
    bom = "\ufeff" if raw.startswith("\ufeff") else ""
    text = raw.removeprefix(bom)
    eol = "\r\n" if "\r\n" in text else "\n"
    old = parse(path, text.replace("\r\n", "\n"))
    formats = [line.strip() for line in text.splitlines() if line.strip().partition(":")[0].strip() == "format"]
    if formats[-1:] not in ([f"format: {f}"] for f in SPLICES):
        raise BaselineError(f"{path} is an older baseline format (this version writes format {FORMAT})")
    problems = differences(old, fresh, real.parent)
    if problems:
        raise BaselineError(f"{path} holds {'; '.join(problems)}")
    wanted = {c: case_line(fresh, c) for c in fresh.cases}
    keeps = keeps_probs(old, fresh)
    out: list[str] = []
    count_at = last_case = -1
    rewritten = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("case "):
            case_id = stripped.rpartition(":")[0][5:].strip()
            new = wanted.pop(case_id, None)
            ending = line[len(line.rstrip("\r\n")) :]
            if new is not None:
                line, rewritten = new + (ending or eol), rewritten + 1
            line = without_probs_said(line.rstrip("\r\n"), keeps) + ending  # a kept line of a format 3 file too
            last_case = len(out)
        elif stripped.partition(":")[0].strip() == "cases":
            count_at = len(out)
        elif stripped.partition(":")[0].strip() == "format":
            line = f"format: {FORMAT}{eol}"  # format 4 reads every format 3 line as it is
        out.append(line)
    if out and not out[-1].endswith("\n"):
        out[-1] += eol
    added = [without_probs_said(line, keeps) + eol for line in wanted.values() if line is not None]
    total = len(old.cases) + len(added)
    out[count_at] = f"cases: {total}{eol}"
    header = []
    if (
        old.generated is None
        and fresh.generated is not None
        and any(c.startswith(GENERATED_PREFIX) for c in wanted)
    ):
        header = [line + eol for line in generated_lines(fresh.generated)]
    for at, lines in sorted(((last_case + 1, added), (count_at, header)), key=lambda p: p[0], reverse=True):
        out[at:at] = lines
    userfile.replace_text(path, bom + "".join(out))
    return Updated(real, rewritten, len(added), total)
