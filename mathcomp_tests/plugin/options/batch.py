"""The --batch options: an API model answered through the provider's batch API (backends/batch/)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...settings import BatchOptions, SelectionError

FALLBACKS = ("batch", "live")
POLL = 30.0
"""--batch-poll's default, in seconds."""


def add(option: Any, group: Any) -> None:
    """Declared through ``option`` (plugin/options/__init__.py), in the order docs/options.md lists them."""
    group.addoption(
        "--batch",
        action="store_true",
        help="api backend (openai/<name>, anthropic/<name>): send every prompt the cache cannot answer to the "
        "provider's batch API (half the price, outside the live rate limits) before the first case; the "
        "batches are recorded in the cache folder, so a run stopped while waiting, or the next one, collects "
        "them instead of sending again (default: off)",
    )
    option(
        "--batch-wait",
        "--batch: seconds the run waits for its batches; when they run out the run stops INCOMPLETE and the "
        "next run resumes the same batches",
        "until every batch ends",
        type=float,
    )
    option(
        "--batch-poll",
        "--batch: seconds between two status checks of the running batches",
        POLL,
        type=float,
        default=None,  # None unless given: given without --batch it is a usage error
    )
    option(
        "--batch-fallback",
        "--batch: where requests a batch failed go: batch (a later batch, up to twice more; then item errors) "
        "or live (asked live when their case runs)",
        "batch",
        default="batch",
        choices=FALLBACKS,
    )


def settings(opt: Any, cache_path: Path | None) -> BatchOptions | None:
    """BatchOptions under --batch (which needs the response cache and the chat path), else None."""
    if not opt("batch"):
        for name in ("batch_wait", "batch_poll", "batch_fallback"):
            if opt(name) not in (None, "batch"):
                flag = "--" + name.replace("_", "-")
                raise SelectionError(f"{flag}={opt(name)} applies only with --batch; add --batch or drop it")
        return None
    if cache_path is None:
        raise SelectionError("--batch needs the response cache (batch answers are read back from it): drop --no-cache")
    if opt("api_batching") != "chat":
        raise SelectionError("--batch sends chat requests: drop --api-batching=completions")
    poll = opt("batch_poll")
    return BatchOptions(cache_path, opt("batch_wait"), POLL if poll is None else poll, opt("batch_fallback"))
