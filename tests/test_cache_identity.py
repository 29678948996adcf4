"""The cache never answers for something else: another scenario, another deployment, other weights."""

from __future__ import annotations

import csv
import sqlite3
import tomllib
from pathlib import Path

import pytest
from helpers.fault_server import FaultServer
from helpers.suite_runner import REPO, run_suite

ONE_CASE = ("--framings=neutral", "--positions=end")


def _loose_thresholds(tmp_path: Path) -> Path:
    path = tmp_path / "loose.toml"
    path.write_text("[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 0.0\n")
    return path


def _write_rows(path: Path, rows: list[dict[str, str]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_symbolic_answers_follow_the_scenario_not_the_prompt_text(tmp_path: Path) -> None:
    """Same words, other equation and label: the reference must recompute, not replay the old answer."""
    data = tmp_path / "scenarios.csv"
    with open(REPO / "fixtures" / "scenarios.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))[:6]
    _write_rows(data, rows)
    first = run_suite(tmp_path, "--model=symbolic", f"--dataset={data}", *ONE_CASE)
    assert first.returncode == 0, first.output
    assert first.summary["prompts_sent"] == 6

    row = next(r for r in rows if r["result_comparison"] == "less")  # make B's total larger: gold "more"
    row["equation_sentence2"] = row["equation_sentence2"] + " + 100"
    row["result_comparison"] = "more"
    _write_rows(data, rows)
    second = run_suite(tmp_path, "--model=symbolic", f"--dataset={data}", *ONE_CASE)
    assert second.returncode == 0, second.output
    assert second.summary["prompts_sent"] == 1, "only the changed scenario is asked again"
    changed = next(r for r in second.records if r["scenario"] == row["ID"])
    assert changed["label"] == changed["gold"] == "more" and not changed["cached"]


def _served(root: str) -> list[dict[str, object]]:
    """What vLLM's /v1/models says: `created` changes on every request; `root` names the weights."""
    return [{"id": "ft", "object": "model", "created": 0, "owned_by": "vllm", "root": root}]


def test_an_api_server_restarted_with_other_weights_is_asked_again(tmp_path: Path) -> None:
    thresholds = _loose_thresholds(tmp_path)
    server = FaultServer(models=_served("/weights/step-100"))
    with server.running():
        args = (
            "--model=openai/ft",
            f"--api-base={server.url}",
            "--limit=4",
            *ONE_CASE,
            f"--thresholds={thresholds}",
        )
        assert run_suite(tmp_path, *args).summary["prompts_sent"] == 4
        server.models = [{**_served("/weights/step-100")[0], "created": 12345}]  # same weights, later request
        assert run_suite(tmp_path, *args).summary["prompts_sent"] == 0
        server.models = _served("/weights/step-200")  # same URL and name, other weights
        assert run_suite(tmp_path, *args).summary["prompts_sent"] == 4


def test_model_revision_states_what_an_endpoint_serves(tmp_path: Path) -> None:
    """A server that says nothing about its weights: --model-revision keeps two fine-tunes apart."""
    thresholds = _loose_thresholds(tmp_path)
    with FaultServer().running() as server:
        base = (
            "--model=openai/ft",
            f"--api-base={server.url}",
            "--limit=3",
            *ONE_CASE,
            f"--thresholds={thresholds}",
        )
        first = run_suite(tmp_path, *base, "--model-revision=abc123")
        assert first.summary["prompts_sent"] == 3
        assert {r["revision"] for r in first.records} == {"abc123"}
        assert run_suite(tmp_path, *base, "--model-revision=abc123").summary["prompts_sent"] == 0
        assert run_suite(tmp_path, *base, "--model-revision=def456").summary["prompts_sent"] == 3


def _router_config(path: Path, base: str, **params: object) -> Path:
    extra = "".join(f"        {k}: {v}\n" for k, v in params.items())
    path.write_text(
        "model_list:\n"
        "  - model_name: team/judge\n"
        "    litellm_params:\n"
        "        model: openai/ft\n"
        f"        api_base: {base}\n"
        "        api_key: sk-router-secret-0123456789\n" + extra
    )
    return path


def test_a_router_deployment_that_changes_a_parameter_is_another_model(tmp_path: Path) -> None:
    thresholds = _loose_thresholds(tmp_path)
    with FaultServer().running() as server:
        config = tmp_path / "router.yaml"

        def run(**params: object) -> int:
            _router_config(config, server.url, **params)
            result = run_suite(
                tmp_path,
                "--model=team/judge",
                f"--model-config={config}",
                "--limit=3",
                *ONE_CASE,
                f"--thresholds={thresholds}",
            )
            assert result.returncode == 0, result.output
            return int(result.summary["prompts_sent"])

        assert run() == 3
        assert run() == 0
        assert run(top_p=0.5) == 3, "another sampling parameter is another deployment"
    with sqlite3.connect(tmp_path / "cache" / "responses.sqlite") as db:
        dump = "\n".join(db.iterdump())
    assert "sk-router-secret" not in dump


def test_a_changed_api_key_alone_is_the_same_deployment(tmp_path: Path) -> None:
    """Secrets stay out of the key: rotating the key does not throw the cache away."""
    thresholds = _loose_thresholds(tmp_path)
    with FaultServer().running() as server:
        config = tmp_path / "router.yaml"
        args = (
            "--model=team/judge",
            f"--model-config={config}",
            "--limit=3",
            *ONE_CASE,
            f"--thresholds={thresholds}",
        )
        _router_config(config, server.url)
        assert run_suite(tmp_path, *args).summary["prompts_sent"] == 3
        config.write_text(config.read_text().replace("sk-router-secret-0123456789", "sk-rotated-9876543210"))
        assert run_suite(tmp_path, *args).summary["prompts_sent"] == 0


@pytest.mark.parametrize(
    "spelling", ["hf:./fixtures/models/mathcomp-tiny", f"hf:{REPO}/fixtures/models/mathcomp-tiny"]
)
def test_a_local_model_is_one_model_however_its_path_is_spelled(tmp_path: Path, spelling: str) -> None:
    args = ("--limit=5", *ONE_CASE)
    first = run_suite(tmp_path, "--model=hf:fixtures/models/mathcomp-tiny", *args)
    assert first.summary["prompts_sent"] == 5
    second = run_suite(tmp_path, f"--model={spelling}", *args)
    assert second.summary["prompts_sent"] == 0, "the same weights, so the same cached answers"
    assert second.summary["threshold_sections"] == ['model."hf:fixtures/models/mathcomp-tiny"']
    shipped = tomllib.loads((REPO / "thresholds.toml").read_text())["model"]["hf:fixtures/models/mathcomp-tiny"]
    assert second.case("neutral-end-std-one-word")["ceilings"]["dir_err"]["equal"] == shipped["dir_err"]["equal"]
    assert "thresholds: " in second.output and '[model."hf:fixtures/models/mathcomp-tiny"]' in second.output


def test_the_alias_finds_the_models_section_and_the_header_says_which(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--model=mathcomp-tiny", "--limit=3", *ONE_CASE)
    assert run.summary["threshold_sections"] == ['model."hf:fixtures/models/mathcomp-tiny"']
    typo = tmp_path / "typo.toml"
    typo.write_text((REPO / "thresholds.toml").read_text().replace("mathcomp-tiny", "mathcomp-tinny"))
    missed = run_suite(tmp_path, "--model=mathcomp-tiny", "--limit=3", *ONE_CASE, f"--thresholds={typo}")
    assert missed.summary["threshold_sections"] == []
    assert "no [model.*] section matches this model" in missed.output
