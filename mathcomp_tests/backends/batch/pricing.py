"""What a batch answer costs: litellm's batch prices where its price map has them, else half the live price
(OpenAI and Anthropic both bill batches at half); unknown, never 0, where it knows no price for the model."""

from __future__ import annotations

from typing import Any

from ...types import Response

HALF = 0.5
"""The share of the live price a batch answer costs where litellm's price map has no batch price."""


class Pricing:
    """One model's batch and live prices, from litellm's price map (``litellm.model_cost``)."""

    def __init__(self, litellm: Any, model: str):
        self.entry: dict[str, Any] = {}
        for name in (model, model.split("/", 1)[-1]):
            found = litellm.model_cost.get(name)
            if isinstance(found, dict):
                self.entry = found
                break

    @property
    def source(self) -> str:
        """How batch answers are priced, for the report."""
        if not self.entry.get("input_cost_per_token"):
            return "unknown (the model is not in litellm's price map)"
        if self.entry.get("input_cost_per_token_batches"):
            return "litellm's batch prices"
        return "half the live price (litellm has no batch price for the model)"

    def costs(self, tokens_in: object, tokens_out: object) -> tuple[float, float] | None:
        """(batch cost, live cost) in USD, or None."""
        live_in, live_out = self.entry.get("input_cost_per_token"), self.entry.get("output_cost_per_token")
        if not isinstance(live_in, (int, float)) or not isinstance(live_out, (int, float)):
            return None
        n_in = tokens_in if isinstance(tokens_in, int) else 0
        n_out = tokens_out if isinstance(tokens_out, int) else 0
        live = n_in * live_in + n_out * live_out
        batch_in = self.entry.get("input_cost_per_token_batches")
        batch_out = self.entry.get("output_cost_per_token_batches")
        if isinstance(batch_in, (int, float)) and isinstance(batch_out, (int, float)):
            return n_in * batch_in + n_out * batch_out, live
        return live * HALF, live

    def priced(self, response: Response) -> Response:
        """``response`` with its batch cost and what it would have cost live in its meta (where known)."""
        costs = self.costs(response.input_tokens, response.output_tokens)
        if costs is not None:
            response.meta["cost"], response.meta["live_cost"] = costs
        return response
