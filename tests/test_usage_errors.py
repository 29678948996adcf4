"""A configuration that cannot work stops the run once, before any case, with one line that says what to do."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.servers import free_port
from helpers.suite_runner import IN_PROCESS, REPO, run_suite
from helpers.usage import refused

ONE_CASE = ("--limit=2", "--framings=neutral", "--positions=end")


def _closed_port_url() -> str:
    return f"http://127.0.0.1:{free_port()}/v1"


CASES = {
    "missing directory": (
        ("--model=hf:./no/such/model",),
        "model directory './no/such/model' does not exist",
    ),
    "hub id without hf:": (("--model=Qwen/Qwen2.5-3B-Instruct",), "is written hf:Qwen/Qwen2.5-3B-Instruct"),
    "no GPU": (("--device=cuda",), "no CUDA GPU"),
    "unknown device": (("--device=tpu",), "expected auto, cpu, cuda, cuda:N or mps"),
    "missing router config": (
        ("--model=openai/m", "--model-config=/nonexistent/router.yaml"),
        "cannot read --model-config /nonexistent/router.yaml",
    ),
}

OUT_OF_RANGE = {
    "zero new tokens": ("--max-new-tokens=0", "--max-new-tokens=0: expected a number at least 1"),
    "zero batch": ("--batch-size=0", "--batch-size=0: expected a number at least 1"),
    "zero concurrency": ("--max-concurrency=0", "--max-concurrency=0"),
    "error rate above one": ("--max-error-rate=2", "--max-error-rate=2.0: expected a number between 0 and 1"),
    "negative retries": ("--num-retries=-1", "--num-retries=-1"),
}
"""Numbers the options refuse, on the symbolic reference: checked in-process (the plugin's wiring)."""
OWN_PROCESS = {"hub id without hf:", "no GPU", "unknown device"}
"""CASES run in a process of their own (helpers/usage.refused): the hf and API backends import torch and
litellm before they refuse these. A missing model folder is refused before torch is imported, in process."""


def _one_usage_error(output: str, expected: str) -> None:
    assert expected in output, output
    assert "Traceback" not in output and "passed" not in output and "failed" not in output
    assert output.count("ERROR:") == 1, output


@pytest.mark.parametrize("name", list(CASES))
def test_a_bad_configuration_is_one_usage_error_before_any_case(
    pytester: pytest.Pytester, tmp_path: Path, name: str
) -> None:
    """Models and devices that cannot work, as a user meets them: pytest started from the repository."""
    args, expected = CASES[name]
    if name in OWN_PROCESS:
        run = run_suite(tmp_path, *args, *ONE_CASE)
    else:
        run = refused(pytester, tmp_path, *args, *ONE_CASE)
    assert run.returncode == 4, run.output  # pytest's exit code for a usage error
    _one_usage_error(run.output, expected)


@pytest.mark.parametrize("name", list(OUT_OF_RANGE))
def test_a_number_out_of_range_is_one_usage_error_before_any_case(pytester: pytest.Pytester, name: str) -> None:
    option, expected = OUT_OF_RANGE[name]
    result = pytester.runpytest_inprocess(
        *IN_PROCESS, f"--cache-dir={pytester.path / 'cache'}", f"--reports-dir={pytester.path / 'reports'}",
        "--model=symbolic", option, *ONE_CASE,
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    _one_usage_error(result.stdout.str() + result.stderr.str(), expected)


def test_an_unreachable_server_is_named_once(tmp_path: Path) -> None:
    url = _closed_port_url()
    run = run_suite(tmp_path, "--model=openai/m", f"--api-base={url}", *ONE_CASE)
    assert run.returncode == 4, run.output
    assert (
        f"cannot reach the model server at {url}" in run.output
        and "start it, or fix --api-base" in run.output
    )
    assert "Traceback" not in run.output


def test_an_unreachable_server_stops_every_xdist_worker_before_it_starts(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--model=openai/m", f"--api-base={_closed_port_url()}", "-n", "2", *ONE_CASE)
    assert run.returncode == 4, run.output
    assert "cannot reach the model server" in run.output and "Traceback" not in run.output


def test_a_thresholds_file_is_checked_whole_when_it_loads(pytester: pytest.Pytester, tmp_path: Path) -> None:
    """A framing left without a ceiling fails the run at once, even when that framing's cases come last."""
    path = tmp_path / "t.toml"
    path.write_text(
        "[default]\ndir_err = { less = 0.2, more = 0.2 }\ninvalid_rate = 0.1\nerror_rate = 0.0\n"
        "[framing.neutral]\ndir_err = { equal = 0.2 }\n"
    )
    run = refused(
        pytester, tmp_path, "--model=symbolic", f"--thresholds={path}", "--limit=2",
        "--framings=neutral,direct-less",
    )  # fmt: skip
    assert run.returncode == 4, run.output
    assert "no ceiling for dir_err.equal under framing direct-less" in run.output
    assert "passed" not in run.output


def test_a_missing_model_directory_is_not_sent_to_the_hub(tmp_path: Path) -> None:
    """`hf:fixtures/models/nope` can only be a path: the message says so instead of a hub error."""
    run = run_suite(tmp_path, "--model=hf:fixtures/models/nope", *ONE_CASE)
    assert run.returncode == 4
    assert "does not exist" in run.output and "hub" not in run.output.split("does not exist")[0]
    assert str(REPO) not in run.output or "looked in" in run.output
