"""Every number a user gives is finite and in range: options, thresholds, a Router config, variables.

NaN compares false with everything, so `--max-error-rate=nan` used to slip past the range check, let a
run with half its requests failed pass, and put NaN (not JSON) into summary.json.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from helpers.suite_runner import IN_PROCESS
from helpers.usage import refused

from mathcomp_tests.summary_format import write as write_summary

ONE_CASE = ("--limit=2", "--framings=neutral", "--positions=end")

NOT_FINITE_TEXT = "not a finite number; expected a number"
NOT_FINITE = {
    "nan error rate": ("--max-error-rate=nan", f"--max-error-rate=nan: {NOT_FINITE_TEXT} between 0 and 1"),
    "nan temperature": ("--temperature=nan", f"--temperature=nan: {NOT_FINITE_TEXT} at least 0"),
    "nan request timeout": ("--request-timeout=nan", f"--request-timeout=nan: {NOT_FINITE_TEXT} above 0"),
    "inf request timeout": ("--request-timeout=inf", f"--request-timeout=inf: {NOT_FINITE_TEXT} above 0"),
    "nan server timeout": ("--server-timeout=nan", f"--server-timeout=nan: {NOT_FINITE_TEXT} above 0"),
    "inf start timeout": ("--vllm-start-timeout=inf", "--vllm-start-timeout=inf: not a finite number"),
    "zero request timeout": ("--request-timeout=0", "--request-timeout=0.0: expected a number above 0"),
}


def _one_usage_error(output: str, expected: str) -> None:
    assert expected in output, output
    assert "Traceback" not in output and "passed" not in output and "failed" not in output
    assert output.count("ERROR:") == 1, output


@pytest.mark.parametrize("name", list(NOT_FINITE))
def test_a_number_that_is_not_finite_is_one_usage_error(pytester: pytest.Pytester, name: str) -> None:
    option, expected = NOT_FINITE[name]
    result = pytester.runpytest_inprocess(
        *IN_PROCESS, f"--cache-dir={pytester.path / 'cache'}", f"--reports-dir={pytester.path / 'reports'}",
        "--model=symbolic", option, *ONE_CASE,
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    _one_usage_error(result.stdout.str() + result.stderr.str(), expected)


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "soon"])
def test_a_numeric_environment_variable_is_checked_like_an_option(
    pytester: pytest.Pytester, tmp_path: Path, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MATHCOMP_PROGRESS_DELAY", value)
    run = refused(pytester, tmp_path, "--model=symbolic", *ONE_CASE)
    assert run.returncode == 4, run.output
    _one_usage_error(run.output, f"$MATHCOMP_PROGRESS_DELAY={value}: ")
    assert "expected a number at least 0" in run.output


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_ceiling_that_is_not_finite_names_the_file_and_key(
    pytester: pytest.Pytester, tmp_path: Path, value: str
) -> None:
    thresholds = tmp_path / "thresholds.toml"
    thresholds.write_text(f"[default]\ndir_err = 0.2\ninvalid_rate = 0.5\nerror_rate = {value}\n")
    run = refused(pytester, tmp_path, "--model=symbolic", f"--thresholds={thresholds}", *ONE_CASE)
    assert run.returncode == 4, run.output
    _one_usage_error(run.output, f"{thresholds}: default.error_rate = ")
    assert "not a finite number; expected a number between 0 and 1" in run.output


ROUTER_NUMBERS = {
    "negative retries": (
        "router_settings:\n  num_retries: -5\n",
        "router_settings.num_retries = -5; expected a whole number at least 0",
    ),
    "nan timeout": (
        "router_settings:\n  timeout: .nan\n",
        "router_settings.timeout = nan; not a finite number; expected a number above 0",
    ),
    "fractional retries": (
        "router_settings:\n  num_retries: 2.5\n",
        "router_settings.num_retries = 2.5; expected a whole number at least 0",
    ),
    "deployment timeout": ("", "model_list[0].litellm_params.timeout = -1; expected a number above 0"),
}


@pytest.mark.parametrize("name", list(ROUTER_NUMBERS))
def test_a_router_config_number_out_of_range_names_the_file_and_key(
    pytester: pytest.Pytester, tmp_path: Path, name: str
) -> None:
    settings, expected = ROUTER_NUMBERS[name]
    timeout = "      timeout: -1\n" if name == "deployment timeout" else ""
    config = tmp_path / "router.yaml"
    config.write_text(
        "model_list:\n  - model_name: m\n    litellm_params:\n      model: openai/m\n"
        f"      api_base: http://127.0.0.1:9/v1\n{timeout}{settings}"
    )
    run = refused(pytester, tmp_path, "--model=m", f"--model-config={config}", *ONE_CASE)
    assert run.returncode == 4, run.output
    _one_usage_error(run.output, f"--model-config {config}: {expected}")


def test_summary_json_holds_no_nan_whatever_it_is_given(tmp_path: Path) -> None:
    """A value nothing could compute is null in summary.json: strict JSON parsers read the file."""
    path = write_summary(
        tmp_path, {"cases": [{"dir_err": {"less": math.nan, "more": 0.25}, "spread": [math.inf]}]}
    )

    def refuse(token: str) -> None:
        raise AssertionError(f"summary.json holds {token}, which is not JSON")

    summary = json.loads(path.read_text(), parse_constant=refuse)
    assert summary["cases"][0]["dir_err"] == {"less": None, "more": 0.25}
    assert summary["cases"][0]["spread"] == [None]
