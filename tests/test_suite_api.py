"""The suite through litellm against a real OpenAI-compatible HTTP server on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.servers import transformers_serve
from helpers.suite_runner import REPO, run_suite


def _permissive(tmp_path: Path, model: str) -> Path:
    path = tmp_path / "thresholds.toml"
    path.write_text((REPO / "thresholds.toml").read_text() + f'\n[model."{model}"]\ndir_err = 1.0\n')
    return path


@pytest.mark.xdist_group("openai-server")  # with test_judge's: one worker starts the session's server
def test_openai_compatible_server_through_litellm(
    tmp_path: Path, always_more_model: Path, openai_server: str
) -> None:
    model = f"openai/{always_more_model}"
    run = run_suite(
        tmp_path,
        f"--model={model}",
        f"--api-base={openai_server}",
        "--limit=8",
        "--framings=neutral,direct-equal",
        "--positions=end",
        "--max-concurrency=4",
        f"--thresholds={_permissive(tmp_path, model)}",
    )
    assert run.returncode == 0, run.output
    for case in run.summary["cases"]:
        assert case["scores"]["dir_err"] == {"less": 0.0, "more": 1.0, "equal": 0.0}
        assert case["scores"]["error_rate"] == 0.0 and case["sent"] == 8
    records = run.records
    assert len(records) == 16 and {r["raw"].strip() for r in records} == {"more"}
    assert all(r["output_tokens"] for r in records), "usage reported by the server is kept"


def test_rerun_is_answered_from_the_cache_and_a_gone_server_is_one_usage_error(
    tmp_path: Path, always_more_model: Path
) -> None:
    model = f"openai/{always_more_model}"
    with transformers_serve(always_more_model, tmp_path / "serve.log") as url:
        args = (
            f"--model={model}",
            f"--api-base={url}",
            "--limit=6",
            "--framings=indirect-more",
            f"--thresholds={_permissive(tmp_path, model)}",
        )
        first = run_suite(tmp_path, *args)
        second = run_suite(tmp_path, *args)
    assert first.returncode == 0, first.output
    assert second.returncode == 0, second.output
    assert first.summary["prompts_sent"] == 12 and second.summary["prompts_sent"] == 0
    assert [r["raw"] for r in second.records] == [r["raw"] for r in first.records]
    gone = run_suite(tmp_path, *args)
    assert gone.returncode == 4, "what the server serves is part of the key: it must answer /v1/models"
    assert f"cannot reach the model server at {url}" in gone.output


def test_a_server_that_fails_every_request_gives_errors_not_wrong_answers(tmp_path: Path) -> None:
    from helpers.fault_server import Fault, FaultServer

    with FaultServer(schedule=lambda index, attempt: Fault("server-error")).running() as server:
        run = run_suite(
            tmp_path,
            "--model=openai/nothing-here",
            f"--api-base={server.url}",
            "--limit=3",
            "--num-retries=1",
            "--framings=neutral",
            "--positions=end",
        )
    assert run.returncode == 1
    case = run.summary["cases"][0]
    assert case["scores"]["error_rate"] == 1.0 and case["breaches"] == ["nothing scored", "error_rate"]
    assert all(r["status"] == "error" and r["error"] for r in run.records)
