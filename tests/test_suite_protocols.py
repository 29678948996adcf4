"""Every protocol end to end: the suite against the demonstration model served by `transformers serve` on
127.0.0.1 (through litellm), and on the symbolic reference."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.servers import transformers_serve
from helpers.suite_runner import REPO, run_suite
from helpers.usage import refused

from mathcomp_tests.protocols import PROTOCOLS

DEMO = REPO / "fixtures" / "models" / "mathcomp-tiny"
TURNS = {"plain": 1, "cot": 1, "evidence-lock": 2, "dual-direction": 2, "canonicalize": 2, "symbolic": 1}
LIMIT = 3


pytestmark = pytest.mark.xdist_group("suite_protocols")
"""One worker runs this module's tests, so its module-scoped fixtures (`demo_server`) are built once."""


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with transformers_serve(DEMO, tmp_path_factory.mktemp("demo-server") / "serve.log") as url:
        yield url


def _permissive(tmp_path: Path, model: str) -> Path:
    """Ceilings no answer can break: these runs check the protocols' plumbing, not the demo model."""
    path = tmp_path / "thresholds.toml"
    path.write_text(
        (REPO / "thresholds.toml").read_text() + f'\n[model."{model}"]\ndir_err = 1.0\ninvalid_rate = 1.0\n'
    )
    return path


def test_every_protocol_runs_against_a_real_server_and_reruns_from_the_cache(
    tmp_path: Path, demo_server: str
) -> None:
    model = f"openai/{DEMO}"
    args = (
        f"--model={model}",
        f"--api-base={demo_server}",
        f"--limit={LIMIT}",
        "--framings=direct-more",
        "--positions=end",
        "--protocol=all",
        "--max-concurrency=4",
        f"--thresholds={_permissive(tmp_path, model)}",
    )
    run = run_suite(tmp_path, *args)
    summary = run.summary
    # The demo model answers one word and knows no protocol's format: a case of which it read no answer
    # fails as "nothing read" (it never passes), and that is the only way a case may fail here.
    unread = [c["case"] for c in summary["cases"] if not c["passed"]]
    assert run.returncode == (1 if unread else 0), run.output
    assert all(run.case(c)["breaches"] == ["nothing read"] for c in unread), run.output
    assert [c["protocol"] for c in summary["cases"]] == list(PROTOCOLS)
    assert run.case("direct-more-end-std-one-word")["protocol"] == "plain"
    records = run.records
    for protocol in PROTOCOLS:
        case_id = "direct-more-end-std-one-word" + ("" if protocol == "plain" else f"-protocol-{protocol}")
        case = run.case(case_id)
        assert case["usage"]["requests"] == TURNS[protocol] * LIMIT, protocol
        # symbolic's one turn is evidence-lock's turn 1 (the cue-free totals request), asked by that case
        assert case["sent"] == (0 if protocol == "symbolic" else TURNS[protocol] * LIMIT), protocol
        mine = [r for r in records if r["case"] == case_id]
        assert len(mine) == LIMIT
        assert case["usage"]["input_tokens"] == sum(r["input_tokens"] for r in mine) > 0
        assert case["usage"]["output_tokens"] == sum(r["output_tokens"] for r in mine) > 0
        for r in mine:
            assert r["status"] in ("ok", "invalid") and r["raw"] is not None
            assert (r["label"] is None) == (r["status"] == "invalid")
            if protocol != "plain":
                assert len(r["turns"]) == TURNS[protocol]
                assert r["input_tokens"] == sum(t["input_tokens"] for t in r["turns"])
        cost = summary["protocols"][protocol]
        assert cost["requests_per_item"] == TURNS[protocol]
    evidence = next(r for r in records if r["protocol"] == "evidence-lock")
    second = evidence["turns"][1]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[1]["content"] == evidence["turns"][0]["raw"], "turn 2 continues turn 1's conversation"
    table = summary["protocol_comparison"]
    assert table["protocols"] == list(PROTOCOLS) and table["framings"] == ["direct-more"]
    assert "<h2>Mitigation protocols</h2>" in (run.run_dir / "report.html").read_text()

    again = run_suite(tmp_path, *args)
    assert again.returncode == run.returncode, again.output
    assert again.summary["prompts_sent"] == 0, "every turn of every protocol came from the cache"
    assert [r["raw"] for r in again.records] == [r["raw"] for r in records]


def test_the_reference_answers_every_protocol_correctly_and_the_report_rebuilds(tmp_path: Path) -> None:
    run = run_suite(
        tmp_path, "--model=symbolic", "--limit=10", "--framings=neutral,indirect-less", "--protocol=all"
    )
    assert run.returncode == 0, run.output
    cases = run.summary["cases"]
    assert len(cases) == 2 * 2 * len(PROTOCOLS)
    for case in cases:
        assert case["scores"]["accuracy"] == 1.0, case["case"]
    notes = run.summary["protocols"]["canonicalize"]["notes"]
    assert notes == {"rewrite rejected": 40}, "the reference does not rewrite: canonicalize falls back"
    cells = run.summary["protocol_comparison"]["cells"]
    assert all(cell["removed"] == 0.0 for row in cells.values() for cell in row.values())
    data = json.loads((run.run_dir / "summary.json").read_text())
    assert data["selection"]["protocols"] == list(PROTOCOLS)


def test_an_unknown_protocol_is_one_usage_error(pytester: pytest.Pytester, tmp_path: Path) -> None:
    run = refused(pytester, tmp_path, "--model=symbolic", "--limit=2", "--protocol=plain,socratic")
    assert run.returncode == 4
    assert "unknown protocol socratic" in run.output and "Traceback" not in run.output


def test_reveal_after_runs_against_a_real_server_and_keeps_every_turn(tmp_path: Path, demo_server: str) -> None:
    model = f"openai/{DEMO}"
    run = run_suite(
        tmp_path,
        f"--model={model}",
        f"--api-base={demo_server}",
        f"--limit={LIMIT}",
        "--framings=neutral",
        "--positions=end",
        "--reveal-after",
        f"--thresholds={_permissive(tmp_path, model)}",
    )
    assert run.returncode == 0, run.output
    assert "2 passed" in run.output
    (entry,) = run.summary["reveal_after"]
    assert entry["case"] == "reveal-after-end-std-one-word" and entry["items"] == LIMIT
    assert entry["read"] + entry["unread"] == LIMIT
    lines = (run.run_dir / "reveal-after" / "results.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == LIMIT
    for r in records:
        assert [t["turn"] for t in r["turns"]] == ["neutral", "flip", "truth"]
        truth = r["turns"][2]["messages"]
        assert [m["role"] for m in truth] == ["user", "assistant", "user"]
        assert truth[1]["content"] == r["turns"][1]["raw"]
        assert f"spend {r['gold']}" in truth[2]["content"] and f"spend {r['flip']}" in truth[0]["content"]
    assert run.case("neutral-end-std-one-word")["sent"] == LIMIT
    assert all(r["turns"][0]["cached"] for r in records), "the neutral case's answers are shared, not re-asked"
    neutral = {r["scenario"]: r["raw"] for r in run.records}
    assert all(r["turns"][0]["raw"] == neutral[r["scenario"]] for r in records)
    assert "<h2>Reveal-After</h2>" in (run.run_dir / "report.html").read_text()


def test_without_the_option_reveal_after_is_not_collected(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--model=symbolic", "--limit=2", "--framings=neutral", "--positions=end")
    assert run.returncode == 0, run.output
    assert run.summary["reveal_after"] == [] and not (run.run_dir / "reveal-after").exists()
