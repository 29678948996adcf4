"""--model-config: a litellm Router config with one deployment per server spreads requests across them."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fault_server import FaultServer
from helpers.suite_runner import run_suite

from mathcomp_tests.backends import router
from mathcomp_tests.backends.base import BackendError
from mathcomp_tests.settings import BackendOptions

PROMPTS = 20


def router_config(path: Path, group: str, bases: list[str]) -> Path:
    """Deployments of one model on several hosts, the key taken from the environment at request time."""
    deployments = "".join(
        f"  - model_name: {group}\n"
        f"    litellm_params:\n"
        f"      model: openai/served-model\n"
        f"      api_base: {base}\n"
        f"      api_key: os.environ/MATHCOMP_TEST_SERVER_KEY\n"
        for base in bases
    )
    path.write_text(f"model_list:\n{deployments}router_settings:\n  routing_strategy: simple-shuffle\n")
    return path


def test_two_servers_share_the_requests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MATHCOMP_TEST_SERVER_KEY", "server-key-from-env")
    thresholds = tmp_path / "thresholds.toml"
    thresholds.write_text("[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 0.0\n")
    with FaultServer(latency=0.02).running() as one, FaultServer(latency=0.02).running() as two:
        config = router_config(tmp_path / "router.yaml", "openai/shared", [one.url, two.url])
        run = run_suite(
            tmp_path,
            "--model=openai/shared",
            f"--model-config={config}",
            f"--limit={PROMPTS}",
            "--framings=neutral",
            "--positions=end",
            f"--thresholds={thresholds}",
        )
        requests = one.requests() + two.requests()

    assert run.returncode == 0, run.output
    assert len(run.records) == PROMPTS and all(r["status"] == "ok" for r in run.records)
    assert one.requests() and two.requests(), "both servers answered some of the prompts"
    assert sorted(r.prompt for r in requests) == sorted(r["prompt"] for r in run.records), "each prompt once"
    assert {r.authorization for r in requests} == {"Bearer server-key-from-env"}
    assert (
        run.case("neutral-end-std-one-word")["model"]
        == f"openai/shared@{','.join(sorted([one.url, two.url]))}"
    )


def test_config_mistakes_are_named(tmp_path: Path) -> None:
    config = router_config(tmp_path / "router.yaml", "openai/shared", ["http://127.0.0.1:9/v1"])
    with pytest.raises(
        BackendError, match=r"--model=openai/other names no model_name .* it has: openai/shared"
    ):
        router.plan("openai/other", BackendOptions(model_config=config))
    with pytest.raises(BackendError, match="not both"):
        router.plan("openai/shared", BackendOptions(model_config=config, api_base="http://127.0.0.1:9/v1"))
    broken = tmp_path / "broken.yaml"
    broken.write_text("model_list: [\n")
    with pytest.raises(BackendError, match="is not valid YAML"):
        router.plan("openai/shared", BackendOptions(model_config=broken))
    empty = tmp_path / "empty.json"
    empty.write_text('{"router_settings": {}}')
    with pytest.raises(BackendError, match="needs a non-empty `model_list`"):
        router.plan("openai/shared", BackendOptions(model_config=empty))
    typo = tmp_path / "typo.yaml"
    typo.write_text(config.read_text().replace("routing_strategy:", "routing_stratgy:"))
    with pytest.raises(BackendError, match="litellm rejected the router configuration.*routing_stratgy"):
        router.build(router.plan("openai/shared", BackendOptions(model_config=typo)))


def test_one_server_is_a_router_with_one_deployment() -> None:
    plan = router.plan("openai/m", BackendOptions(api_base="http://127.0.0.1:9/v1", num_retries=3))
    assert plan.model_id == "openai/m@http://127.0.0.1:9/v1"
    assert [d["litellm_params"]["api_base"] for d in plan.deployments] == ["http://127.0.0.1:9/v1"]
    assert plan.settings["num_retries"] == 3 and plan.settings["disable_cooldowns"] is True
