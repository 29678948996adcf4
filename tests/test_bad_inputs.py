"""Every bad input stops the suite once, before any case, with one `ERROR:` line that says what is wrong and
what was expected (pytest's usage error, exit code 4), never a traceback; and what it reads back from disk
(the response cache) is checked, not trusted.

The table runs the suite the way a user does, from the repository root, with the symbolic model. Unusual
inputs that reach a model are in tests/test_bad_inputs_models.py, a killed run's parts in
tests/test_bad_inputs_parts.py, the second round of bad inputs in tests/test_bad_inputs_two.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.fault_server import FaultServer
from helpers.suite_runner import REPO, run_suite
from helpers.usage import assert_usage_error, refused

from mathcomp_tests.backends.cache.store import ResponseCache, Row
from mathcomp_tests.types import Response

ONE_CASE = ("--model=symbolic", "--limit=2", "--framings=neutral", "--positions=end")
UNWRITABLE = Path("/sys/mathcomp-bad-inputs")
"""A folder that cannot be made, even by root (a mode-555 folder does not stop root from writing)."""
READ_ONLY = Path("/sys")
"""A folder that exists and refuses new files, even from root."""
PERMISSIVE = "[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 0.0\n"
ROUTER = (
    "model_list:\n"
    "  - model_name: fast\n"
    "    litellm_params: {{model: openai/x, api_base: '{url}'}}\n"
    "  - model_name: slow\n"
    "    litellm_params: {{model: openai/y, api_base: '{url}'}}\n"
)

Setup = Callable[[Path], tuple[tuple[str, ...], str]]
"""Makes the files a bad input needs under a temporary folder: (arguments, the expected error text)."""


def binary(path: Path) -> Path:
    """A file of bytes that are not UTF-8 text (a compiled file, an image given by mistake)."""
    path.write_bytes(bytes(range(128, 256)) * 4)
    return path


def binary_thresholds(tmp: Path) -> tuple[tuple[str, ...], str]:
    path = binary(tmp / "thresholds.toml")
    return (f"--thresholds={path}",), f"{path}: not UTF-8 text; expected a thresholds file in TOML"


def thresholds_directory(tmp: Path) -> tuple[tuple[str, ...], str]:
    return (f"--thresholds={tmp}",), f"{tmp}: a folder, not a file; expected a thresholds file in TOML"


def binary_router(tmp: Path) -> tuple[tuple[str, ...], str]:
    path = binary(tmp / "router.yaml")
    expected = f"--model-config {path} is not UTF-8 text; expected a litellm Router config (YAML or JSON)"
    return ("--model=openai/m", f"--model-config={path}"), expected


def unknown_group(tmp: Path) -> tuple[tuple[str, ...], str]:
    path = tmp / "router.yaml"
    path.write_text(ROUTER.format(url="http://127.0.0.1:9/v1"))
    return ("--model=medium", f"--model-config={path}"), f"--model-config {path} has the groups fast, slow"


def binary_identities(tmp: Path) -> tuple[tuple[str, ...], str]:
    path = binary(tmp / "identities.toml")
    return (f"--identities-file={path}",), f"{path}: not UTF-8 text; expected a TOML file"


def cache_dir_file(tmp: Path) -> tuple[tuple[str, ...], str]:
    path = tmp / "a-file"
    path.write_text("")
    return (f"--cache-dir={path}",), f"--cache-dir={path}: a file, not a folder"


def cache_dir_unwritable(tmp: Path) -> tuple[tuple[str, ...], str]:
    return (f"--cache-dir={UNWRITABLE}",), f"--cache-dir={UNWRITABLE}: cannot make this folder ("


def cache_dir_read_only(tmp: Path) -> tuple[tuple[str, ...], str]:
    return (f"--cache-dir={READ_ONLY}",), f"--cache-dir={READ_ONLY}: cannot write in this folder ("


def reports_dir_file(tmp: Path) -> tuple[tuple[str, ...], str]:
    path = tmp / "a-file"
    path.write_text("")
    return (f"--reports-dir={path}",), f"--reports-dir={path}: a file, not a folder"


def reports_dir_read_only(tmp: Path) -> tuple[tuple[str, ...], str]:
    return (f"--reports-dir={READ_ONLY}",), f"--reports-dir={READ_ONLY}: cannot write in this folder ("


def damaged_cache_random(tmp: Path) -> tuple[tuple[str, ...], str]:
    folder = tmp / "cache"
    folder.mkdir()
    (folder / "responses.sqlite").write_bytes(os.urandom(64 * 1024))
    return (), (  # no mark of the suite: not ours to delete, so `cache clear` is not offered
        f"the response cache {folder / 'responses.sqlite'} is not an sqlite database, so not a cache this "
        "suite wrote; move it away, or give --cache-dir a folder of its own"
    )


def damaged_cache_truncated(tmp: Path) -> tuple[tuple[str, ...], str]:
    folder = tmp / "cache"
    path = filled_cache(folder / "responses.sqlite")
    with open(path, "r+b") as fh:
        fh.truncate(path.stat().st_size // 2)
    return (), damaged(folder, "database disk image is malformed")


def damaged(folder: Path, reason: str) -> str:
    return (
        f"the response cache {folder / 'responses.sqlite'} is damaged ({reason}); "
        f"`mathcomp cache clear --cache-dir={folder}` removes it"
    )


def baseline_read_only(tmp: Path) -> tuple[tuple[str, ...], str]:
    path = READ_ONLY / "baseline.txt"
    return (f"--update-baseline={path}",), f"--update-baseline={path}: cannot write in {READ_ONLY} ("


def baseline_directory(tmp: Path) -> tuple[tuple[str, ...], str]:
    expected = f"--update-baseline={tmp}: a folder, not a file; expected the path of the baseline file"
    return (f"--update-baseline={tmp}",), expected


def hf_file(tmp: Path) -> tuple[tuple[str, ...], str]:
    return ("--model=hf:pyproject.toml",), "hf:pyproject.toml is a file, not a model directory"


def hf_file_path(tmp: Path) -> tuple[tuple[str, ...], str]:
    return ("--model=hf:./pyproject.toml",), "hf:./pyproject.toml is a file, not a model directory"


def empty_value(option: str, value: str, what: str) -> Setup:
    def setup(tmp: Path) -> tuple[tuple[str, ...], str]:
        return (f"--{option}={value}",), f"--{option}={value}: an empty {what}"

    return setup


BAD: dict[str, Setup] = {
    "binary thresholds file": binary_thresholds,
    "thresholds is a folder": thresholds_directory,
    "binary router config": binary_router,
    "router group the config lacks": unknown_group,
    "binary identities file": binary_identities,
    "cache-dir is a file": cache_dir_file,
    "cache-dir cannot be made": cache_dir_unwritable,
    "cache-dir is read-only": cache_dir_read_only,
    "reports-dir is a file": reports_dir_file,
    "reports-dir is read-only": reports_dir_read_only,
    "cache of random bytes": damaged_cache_random,
    "cache cut in half": damaged_cache_truncated,
    "update-baseline into a read-only folder": baseline_read_only,
    "update-baseline is a folder": baseline_directory,
    "hf: a file": hf_file,
    "hf: a file's path": hf_file_path,
    "empty --framings": empty_value("framings", "", "framing"),
    "empty framing in a list": empty_value("framings", "neutral,,direct-more", "framing"),
    "trailing comma in --positions": empty_value("positions", "end,", "position"),
    "empty identity": empty_value("identities", ",woman", "identity"),
    "empty --formats": empty_value("formats", "", "format"),
    "empty option order": empty_value("option-orders", "lme,,mel", "option order"),
    "empty --identity-on": empty_value("identity-on", "", "identity side"),
    "empty protocol": empty_value("protocol", "plain,", "protocol"),
}
OWN_PROCESS = {name for name in BAD if name.startswith("hf: ")}
"""Run in a process of their own (helpers/usage.refused): the hf backend imports torch before it refuses."""


@pytest.mark.parametrize("name", list(BAD))
def test_a_bad_input_is_one_usage_error_before_any_case(
    pytester: pytest.Pytester, tmp_path: Path, name: str
) -> None:
    args, expected = BAD[name](tmp_path)
    if name in OWN_PROCESS:
        run = run_suite(tmp_path, *ONE_CASE, *args)
    else:
        run = refused(pytester, tmp_path, *ONE_CASE, *args)
    assert_usage_error(run, expected)


def filled_cache(path: Path, rows: int = 400) -> Path:
    """A real response cache with ``rows`` answers in it (several pages, so that half of it is damage)."""
    cache = ResponseCache(path)
    now = time.time()
    cache.put_many([Row(f"key-{i}", "symbolic", "", Response(f"answer {i} " * 20), now) for i in range(rows)])
    cache.close()
    return path


def test_the_clear_command_the_error_names_repairs_a_damaged_cache(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    path = filled_cache(folder / "responses.sqlite")
    with open(path, "r+b") as fh:
        fh.truncate(path.stat().st_size // 2)
    stopped = run_suite(tmp_path, *ONE_CASE)
    command = re.search(r"`(mathcomp cache clear --cache-dir=[^`]+)`", stopped.output)
    assert command is not None, stopped.output
    cleared = subprocess.run(
        [sys.executable, "-m", "mathcomp_tests", *command.group(1).split()[1:]],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cleared.returncode == 0, cleared.stdout + cleared.stderr
    again = run_suite(tmp_path, *ONE_CASE)
    assert again.returncode == 0, again.output


def test_a_config_group_without_a_slash_is_a_model(tmp_path: Path) -> None:
    """`--model=fast` names the Router group `fast` of --model-config: it is asked, not refused."""
    with FaultServer(answer="more").running() as server:
        config = tmp_path / "router.yaml"
        config.write_text(ROUTER.format(url=server.url))
        thresholds = tmp_path / "thresholds.toml"
        thresholds.write_text(PERMISSIVE)
        run = run_suite(
            tmp_path, "--model=fast", f"--model-config={config}", f"--thresholds={thresholds}", *ONE_CASE[1:]
        )
    assert run.returncode == 0, run.output
    assert [r["label"] for r in run.records] == ["more", "more"]
    assert len(server.answered()) == 2
