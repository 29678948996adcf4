"""The UNREADABLE line advises only what the run's backend can do: an API chat model ignores --scoring=logprob
(only a model whose prompts the suite renders scores label log-probabilities), so it is never told to try it."""

from __future__ import annotations

from pathlib import Path

from helpers.fault_server import FaultServer
from helpers.suite_runner import run_suite

from mathcomp_tests.records.unreadable import advice


def test_an_api_chat_model_answering_in_sentences_is_not_told_to_try_logprob_scoring(tmp_path: Path) -> None:
    thresholds = tmp_path / "thresholds.toml"
    thresholds.write_text("[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 0.0\n")
    with FaultServer(answer="It depends on the day, really.").running() as server:
        run = run_suite(
            tmp_path,
            "--model=openai/gpt-4o-mini",
            f"--api-base={server.url}",
            "--limit=3",
            "--framings=neutral",
            "--positions=end",
            f"--thresholds={thresholds}",
        )
    info = run.case("neutral-end-std-one-word")["unreadable"]
    assert info is not None and info["invalid_rate"] == 1, run.output
    assert not info["try"].startswith("--scoring=logprob") and "--formats=json" in info["try"], info
    (line,) = [line for line in run.output.splitlines() if line.startswith("UNREADABLE: ")]
    assert "Try --scoring=logprob" not in line and "--formats=json" in line, line
    assert "Try --scoring=logprob" not in (run.run_dir / "report.html").read_text()


def test_each_format_gets_advice_its_backend_can_follow() -> None:
    for fmt in ("one-word", "json", "cot", "cot-json"):
        rendered, chat = advice(fmt, scores_logprob=True), advice(fmt, scores_logprob=False)
        assert "--scoring=logprob" in rendered, fmt  # hf, vllm, --api-batching=completions honour it
        assert "--scoring=logprob" not in chat.split(";")[0], (fmt, chat)
    assert "--formats=json" in advice("one-word", scores_logprob=False)
    assert "--formats=one-word" in advice("json", scores_logprob=False)
    assert "--judge-model" in advice("cot", scores_logprob=False)
