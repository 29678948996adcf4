"""What a case's answers looked like when most of them could not be read, and what to try instead.

A model that answers in sentences where the prompt asks for one word (a small instruct model does, most
of the time) fails on invalid_rate; the numbers alone do not say why, two of its answers do."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..formats import FORMATS
from ..printable import printable
from ..verdict.result import CaseResult

SHARE = 0.5
"""Over this share of invalid answers, a case says what they looked like."""
EXAMPLE_CHARS = 60


def unreadable(result: CaseResult) -> dict[str, Any] | None:
    """``{"invalid_rate", "looked_like": [two answers, escaped, shortened], "try"}``, or None when at most
    half the case's answers were invalid."""
    items = result.items
    invalid = [i for i in items if i.prediction.status == "invalid"]
    if not items or len(invalid) / len(items) <= SHARE:
        return None
    shown = list(dict.fromkeys(_short(i.response.text) for i in invalid))[:2]
    # A backend that renders the prompts (hf, vllm, --api-batching=completions: a chat_template mode) is one
    # that honours --scoring=logprob; an API chat model (the server renders them) ignores it.
    scores_logprob = result.chat_template is not None
    return {
        "invalid_rate": len(invalid) / len(items),
        "looked_like": shown,
        "try": advice(result.condition.format, scores_logprob),
    }


def advice(format: str, scores_logprob: bool = True) -> str:
    """What to try for a format whose answers could not be read, by a backend that can score label
    log-probabilities (``scores_logprob``) or one that cannot (an API chat model)."""
    if scores_logprob and FORMATS[format].logprob_prefix is not None:
        return (
            "--scoring=logprob (reads the three labels' probabilities, so every answer is read), "
            "or another --formats"
        )
    if scores_logprob:
        return "another --formats (json or one-word, with --scoring=logprob), or a larger --max-new-tokens"
    if FORMATS[format].steps:
        return (
            "--judge-model (a judge decides the answers the reading rules decline), or a larger "
            "--max-new-tokens; --scoring=logprob does not apply to an API chat model"
        )
    other = "one-word" if format == "json" else "json"
    return (
        f"--formats={other}, or cot with --judge-model (a judge decides the answers the reading rules decline); "
        "--scoring=logprob does not apply to an API chat model (only hf:, vllm: and --api-batching=completions "
        "score label log-probabilities)"
    )


def note(case: Mapping[str, Any]) -> str | None:
    """The one line the terminal and the report print for a mostly unreadable case."""
    info = case.get("unreadable")
    if not info:
        return None
    looked = ", ".join(info["looked_like"])
    return (
        f"UNREADABLE: {case['case']}: {100 * info['invalid_rate']:.0f}% of its answers read no label; "
        f"they looked like {looked}. Try {info['try']}."
    )


def _short(text: str) -> str:
    """An answer as a quoted, escaped one-liner of at most EXAMPLE_CHARS characters."""
    one = " ".join(text.split()) if text.strip() else text
    cut = one if len(one) <= EXAMPLE_CHARS else one[: EXAMPLE_CHARS - 3] + "..."
    return repr(printable(cut)) if cut else "''"
