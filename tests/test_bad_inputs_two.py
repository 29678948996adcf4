"""More bad inputs, each one `ERROR:` line before any case (pytest's usage error, exit code 4), never a
traceback and never a silent run: a model folder with broken weights or tokenizer, a server URL that is no
URL or that no model of the run uses, identities that are not words, a response cache that is a folder or
holds rows no reader can take, a dataset quote left open, a model name from the environment. And what
users write with a Windows editor (a UTF-8 byte order mark) is read, and what they name a model never
reaches the terminal as raw control characters.

The suite runs the way a user runs it, from the repository root, with the symbolic model unless the input
is about another one (tests/test_bad_inputs.py holds the first round).
"""

from __future__ import annotations

import codecs
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.suite_runner import REPO, run_suite
from helpers.usage import assert_usage_error, refused

ONE_CASE = ("--model=symbolic", "--limit=2", "--framings=neutral", "--positions=end")
TINY = REPO / "fixtures" / "models" / "mathcomp-tiny"
WEIGHTS_EXPECTED = "expected the model's weights"

Setup = Callable[[Path], tuple[tuple[str, ...], str]]
"""Makes what a bad input needs under a temporary folder: (arguments, the text the error line holds)."""


def tiny_copy(tmp: Path, change: Callable[[Path], object]) -> Path:
    """A copy of the demonstration model, changed the way a failed copy or download leaves one."""
    folder = tmp / "model"
    shutil.copytree(TINY, folder)
    change(folder)
    return folder


def hf_model(change: Callable[[Path], object], expected: Callable[[Path], str]) -> Setup:
    def setup(tmp: Path) -> tuple[tuple[str, ...], str]:
        folder = tiny_copy(tmp, change)
        return (f"--model=hf:{folder}", "--limit=2", "--framings=neutral", "--positions=end"), expected(
            folder
        )

    return setup


def cut(size: int) -> Callable[[Path], None]:
    def change(folder: Path) -> None:
        with open(folder / "model.safetensors", "r+b") as fh:
            fh.truncate(size)

    return change


def identities(noun: str) -> Setup:
    def setup(tmp: Path) -> tuple[tuple[str, ...], str]:
        path = tmp / "identities.toml"
        path.write_text(f"[identities.woman]\nnoun = {noun}\n", encoding="utf-8")
        return (
            *ONE_CASE,
            f"--identities-file={path}",
            "--identities=woman",
        ), f"{path}: identities.woman.noun is"

    return setup


def cache_folder_in_place(tmp: Path) -> tuple[tuple[str, ...], str]:
    folder = tmp / "cache"
    (folder / "responses.sqlite").mkdir(parents=True)
    return (
        *ONE_CASE,
        f"--cache-dir={folder}",
    ), f"--cache-dir={folder}: {folder / 'responses.sqlite'} is a folder"


def cache_of_another_schema(tmp: Path) -> tuple[tuple[str, ...], str]:
    """A sqlite file with a `responses` table that some other tool made."""
    folder = tmp / "cache"
    folder.mkdir()
    with sqlite3.connect(folder / "responses.sqlite") as db:
        db.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, answer TEXT)")
    expected = (
        f"the response cache {folder / 'responses.sqlite'} is an sqlite database of another program "
        "(tables: responses); move it away"
    )
    return (*ONE_CASE, f"--cache-dir={folder}"), expected


def dataset_with(tmp: Path, damage: Callable[[list[str]], list[str]]) -> Path:
    lines = (REPO / "fixtures" / "scenarios.csv").read_text(encoding="utf-8").splitlines()[:8]
    path = tmp / "scenarios.csv"
    path.write_text("\n".join(damage(lines)) + "\n", encoding="utf-8")
    return path


def open_quote(row: int) -> Setup:
    """Row ``row`` (a file line) gets a quote before its category that nothing closes on that line."""

    def setup(tmp: Path) -> tuple[tuple[str, ...], str]:
        def damage(lines: list[str]) -> list[str]:
            lines[row - 1] = lines[row - 1].replace(",Dining,", ',"Dining,', 1)
            return lines

        path = dataset_with(tmp, damage)
        return (
            *ONE_CASE,
            f"--dataset={path}",
        ), f"{path}, line {row}, category (column 4): a quote opens here"

    return setup


BAD: dict[str, Setup] = {
    "hf: no weights file": hf_model(
        lambda f: (f / "model.safetensors").unlink(), lambda f: f"model directory {f} has no weights file"
    ),
    "hf: empty weights file": hf_model(cut(0), lambda f: f"{f / 'model.safetensors'}: empty (0 bytes)"),
    "hf: weights cut in the header": hf_model(
        cut(1000), lambda f: f"{f / 'model.safetensors'}: not a safetensors"
    ),
    "hf: weights cut in the tensors": hf_model(
        cut(2_000_000), lambda f: f"{f / 'model.safetensors'}: cut short"
    ),
    "hf: tokenizer.json without its tables": hf_model(
        lambda f: (f / "tokenizer.json").write_text('{"version": "1.0"}'),
        lambda f: f"{f / 'tokenizer.json'}: no 'model' or 'added_tokens'",
    ),
    "hf: tokenizer.json cut short": hf_model(
        lambda f: (f / "tokenizer.json").write_text((TINY / "tokenizer.json").read_text()[:500]),
        lambda f: f"{f / 'tokenizer.json'}: not valid JSON",
    ),
    "api-base not a URL": lambda tmp: (
        ("--model=openai/m", "--api-base=not-a-url", "--limit=2"),
        "--api-base=not-a-url: not a server URL; expected http(s)://host",
    ),
    "api-base empty": lambda tmp: (
        ("--model=openai/m", "--api-base=", "--limit=2"),
        "--api-base=: not a server URL",
    ),
    "api-base with a space": lambda tmp: (
        ("--model=openai/m", "--api-base=http://local host:8000/v1", "--limit=2"),
        "--api-base=http://local host:8000/v1: not a server URL",
    ),
    "api-base for the symbolic model": lambda tmp: (
        (*ONE_CASE, "--api-base=http://127.0.0.1:9/v1"),
        "--api-base=http://127.0.0.1:9/v1 applies only to an API model",
    ),
    "api-base for an hf model": lambda tmp: (
        ("--model=hf:fixtures/models/mathcomp-tiny", "--api-base=http://127.0.0.1:9/v1", "--limit=2"),
        "this run has none (--model=hf:fixtures/models/mathcomp-tiny (hf))",
    ),
    "identity noun a number": identities("5"),
    "identity noun empty": identities('""'),
    "identity noun with a NUL": identities('"wo\\u0000man"'),
    "identity noun with an ANSI escape": identities('"wo\\u001b[2Jman"'),
    "responses.sqlite a folder": cache_folder_in_place,
    "cache table of another schema": cache_of_another_schema,
    "dataset quote left open mid-file": open_quote(4),
    "dataset quote left open on the last line": open_quote(8),
    "judge-model unknown": lambda tmp: (
        (*ONE_CASE, "--judge-model=bogus"),
        "--judge-model=bogus: unknown model",
    ),
    "empty model": lambda tmp: (("--model=", "--limit=2"), "--model=: unknown model ''. The name is empty."),
}
OWN_PROCESS = {name for name in BAD if name.startswith("hf: ")} | {"api-base with a space"}
"""Run in a process of their own (helpers/usage.refused): the hf backend imports torch before it refuses a
model folder, and pytest takes an argument with a space for a path, so that the run loads tests/conftest.py
(which sets its process's environment)."""


@pytest.mark.parametrize("name", list(BAD))
def test_a_bad_input_is_one_usage_error_before_any_case(
    pytester: pytest.Pytester, tmp_path: Path, name: str
) -> None:
    args, expected = BAD[name](tmp_path)
    run = run_suite(tmp_path, *args) if name in OWN_PROCESS else refused(pytester, tmp_path, *args)
    assert_usage_error(run, expected)


@pytest.mark.parametrize(
    ("variable", "args"),
    [("MATHCOMP_MODEL", ("--limit=2",)), ("MATHCOMP_JUDGE_MODEL", ONE_CASE)],
)
def test_a_model_from_the_environment_names_the_variable(
    pytester: pytest.Pytester,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    args: tuple[str, ...],
) -> None:
    monkeypatch.setenv(variable, "bogus")
    run = refused(pytester, tmp_path, *args)
    assert_usage_error(run, f"${variable}=bogus: unknown model 'bogus'")


def test_a_cache_row_whose_meta_is_not_json_is_a_damaged_cache(tmp_path: Path) -> None:
    """A first run fills the cache; a row changed by hand makes the next run stop before any case."""
    folder = tmp_path / "cache"
    first = run_suite(tmp_path, *ONE_CASE, f"--cache-dir={folder}")
    assert first.returncode == 0, first.output
    with sqlite3.connect(folder / "responses.sqlite") as db:
        changed = db.execute("UPDATE responses SET meta = 'not json' WHERE rowid = 1").rowcount
    assert changed == 1
    run = run_suite(tmp_path, *ONE_CASE, f"--cache-dir={folder}")
    assert_usage_error(run, f"the response cache {folder / 'responses.sqlite'} is damaged (1 answer(s)")
    assert "JSONDecodeError" not in run.output


def test_toml_files_with_a_byte_order_mark_are_read(tmp_path: Path) -> None:
    """A thresholds file and an identities file saved with a BOM: the run uses both."""
    thresholds = tmp_path / "thresholds.toml"
    thresholds.write_bytes(
        codecs.BOM_UTF8 + b"[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 0.0\n"
    )
    people = tmp_path / "identities.toml"
    people.write_bytes(codecs.BOM_UTF8 + b'[identities.nurse]\nnoun = "nurse"\n')
    run = run_suite(
        tmp_path, *ONE_CASE, f"--thresholds={thresholds}", f"--identities-file={people}", "--identities=nurse"
    )
    assert run.returncode == 0, run.output
    assert run.summary["thresholds"] == str(thresholds), run.summary
    (case,) = run.summary["cases"]
    assert case["case"] == "neutral-end-nurse-one-word", case
    prompts = [r["prompt"] for r in run.records if "prompt" in r]
    assert prompts and all("nurse" in str(p) for p in prompts), run.records[:1]


def test_control_characters_in_a_model_name_reach_the_terminal_escaped(tmp_path: Path) -> None:
    """A model folder whose name holds ANSI escapes (clear the screen, turn the text red): the header and
    the end-of-run table show them escaped."""
    folder = tmp_path / "tiny\x1b[2J\x1b[31m"
    shutil.copytree(TINY, folder)
    run = run_suite(tmp_path, f"--model=hf:{folder}", "--limit=2", "--framings=neutral", "--positions=end")
    assert "\x1b" not in run.output, run.output
    header = next(line for line in run.output.splitlines() if line.startswith("mathcomp: model"))
    assert "tiny\\x1b[2J\\x1b[31m" in header, header
    table = next(line for line in run.output.splitlines() if "MathComp directional error" in line)
    assert "tiny\\x1b[2J\\x1b[31m" in table, table
