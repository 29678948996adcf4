"""Models behind an API, through litellm: async fan-out under a concurrency limit, the Router's retries.

Each response is handed to ``on_response`` the moment it arrives (the cache stores it then), so a run
killed half way keeps everything answered so far. A request that fails after its retries becomes an
item error; it never stops the other requests, unless the server is gone (backends/liveness.py): then the
run stops with one error.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ...settings import BackendOptions
from ...types import Decoding, Prompt, Response
from .. import health, router
from ..base import ERROR_CHARS, BackendError, OnResponse
from ..liveness import NOT_JSON, NOT_OPENAI, Liveness, bad_body, counts_as_error
from ..secrets import redact
from . import probe

CONCURRENCY = 16
"""Chat requests in flight per process unless --max-concurrency says otherwise."""


class APIBackend:
    """Any litellm model string (`openai/...`, `anthropic/...`), an OpenAI-compatible server via api_base,
    or the deployments of a litellm Router config."""

    streams = True
    """Each answer is a paid request: the cache commits it the moment it arrives."""

    def __init__(self, model: str, options: BackendOptions | None = None):
        options = options or BackendOptions()
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        try:
            import litellm
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise BackendError("the api backend needs litellm: pip install 'mathcomp-tests[api]'") from exc
        litellm.suppress_debug_info = True
        self._litellm = litellm
        self.model = model
        self.plan = router.plan(model, options)
        self.model_id = self.plan.model_id
        self.model_revision = options.model_revision
        self.revision = options.model_revision or ""
        self.max_concurrency = max(1, options.max_concurrency or CONCURRENCY)
        self.served = self._probe()
        self._router = router.build(self.plan)
        bases = [
            str(d["litellm_params"]["api_base"])
            for d in self.plan.deployments
            if d["litellm_params"].get("api_base")
        ]
        ping = _pinger(bases) if bases and len(bases) == len(self.plan.deployments) else None
        self.liveness = Liveness(
            self.model_id,
            options.max_connection_failures,
            options.server_timeout,
            ping,
            max_errors=options.max_error_streak,
            cached=options.response_cache,
        )
        # One loop for the backend's life: the Router's HTTP clients and their connections belong to it.
        self._loop = asyncio.new_event_loop()

    def _probe(self) -> list[dict[str, Any] | None]:
        """Check every deployment can be reached (one GET /models per server) and keep what each says."""
        served = []
        for deployment in self.plan.deployments:
            params = deployment["litellm_params"]
            model, base = str(params.get("model", "")), params.get("api_base")
            key = _api_key(params)
            probe.check_provider(self._litellm, model, bool(base), bool(key))
            served.append(probe.served_model(str(base), model, key) if base else None)
        return served

    def cache_identity(self) -> dict[str, object]:
        """Every deployment's litellm_params but secrets, what each server says it serves, --model-revision."""
        return {
            "backend": "api",
            "group": self.plan.group,
            "deployments": self.plan.identity(),
            "served": sorted(json.dumps(s, sort_keys=True) for s in self.served),
            "model_revision": self.model_revision,
        }

    def prompt_inputs(self, prompt: Prompt) -> dict[str, object]:
        return {}

    def complete(
        self, prompts: Sequence[Prompt], decoding: Decoding, on_response: OnResponse | None = None
    ) -> list[Response]:
        return self._loop.run_until_complete(self._complete_all(prompts, decoding, on_response))

    async def _complete_all(
        self, prompts: Sequence[Prompt], decoding: Decoding, on_response: OnResponse | None
    ) -> list[Response]:
        limit = asyncio.Semaphore(self.max_concurrency)

        async def one(index: int, prompt: Prompt) -> Response:
            async with limit:
                response = await self._ask(prompt, decoding)
            if on_response:
                on_response(index, response)
            return response

        return list(
            await self.liveness.supervise(asyncio.gather(*(one(i, p) for i, p in enumerate(prompts))))
        )

    async def _ask(self, prompt: Prompt, decoding: Decoding) -> Response:
        try:
            result = await self._router.acompletion(model=self.plan.group, **chat_params(prompt, decoding))
        except Exception as exc:  # every provider error becomes a recorded, reported item error
            what = redact(f"{type(exc).__name__}: {exc}")[:ERROR_CHARS]
            status = getattr(exc, "status_code", None)
            unread = _unread_200(exc) if status == 500 else None
            if _no_reply(exc):
                self.liveness.failed(what)
            elif unread is not None:
                self.liveness.errored(200, unread[0])  # litellm says 500; the server said 200
                return Response(text="", error=bad_body(*unread))
            elif isinstance(status, int) and counts_as_error(status):
                self.liveness.errored(status)  # after litellm's own retries: one outcome, one count
            else:
                self.liveness.answered()  # the server processed the request and refused it
            return Response(text="", error=what)
        self.liveness.answered()
        return self._response(result)

    def _response(self, result: Any) -> Response:
        return as_response(result, self._cost(result) if getattr(result, "choices", None) else None)

    def _cost(self, result: Any) -> float | None:
        """USD for this response where litellm knows the model's price, else None (litellm says 0.0)."""
        hidden = getattr(result, "_hidden_params", None) or {}
        cost = hidden.get("response_cost")
        if "response_cost" not in hidden:
            try:
                cost = self._litellm.completion_cost(completion_response=result)
            except Exception:  # litellm raises for models missing from its price map
                return None
        return float(cost) if isinstance(cost, (int, float)) and cost > 0 else None

    def close(self) -> None:
        """Unhook the Router's global callbacks, stop litellm's logging worker, then close the loop."""
        if self._loop.is_closed():
            return
        self._router.discard()  # else every later Router in this process runs this one's callbacks too
        pending = asyncio.all_tasks(self._loop)
        if pending:
            self._loop.run_until_complete(_cancel(pending))
        self._loop.run_until_complete(self._loop.shutdown_asyncgens())
        self._loop.close()


def chat_params(prompt: Prompt, decoding: Decoding) -> dict[str, Any]:
    """One live chat request's parameters but the model, in litellm's names: the messages, temperature and
    max_tokens, and under a seed the seed with drop_params (a provider without seeds drops it, as it drops
    what else it does not take). The batch providers encode their requests from this same dict
    (backends/batch/encoding.py), so a batch asks exactly what the live call asks."""
    params: dict[str, Any] = {
        "messages": [{"role": m.role, "content": m.content} for m in prompt.messages],
        "temperature": decoding.temperature,
        "max_tokens": decoding.max_new_tokens,
    }
    if decoding.seed is not None:
        params.update(seed=decoding.seed, drop_params=True)
    return params


def as_response(result: Any, cost: float | None) -> Response:
    """A litellm completion as our Response; a reply without a choice is an error, an empty one an answer."""
    if not getattr(result, "choices", None):
        return Response(text="", error="the provider returned no choices")
    choice = result.choices[0]
    usage = getattr(result, "usage", None)
    meta: dict[str, object] = {"finish_reason": getattr(choice, "finish_reason", None)}
    named = getattr(result, "model", None)
    if isinstance(named, str) and named:
        meta["served_model"] = named  # the model the reply names (run/served.py compares it)
    if cost is not None:
        meta["cost"] = cost
    return Response(
        text=choice.message.content or "",
        input_tokens=getattr(usage, "prompt_tokens", None),
        output_tokens=getattr(usage, "completion_tokens", None),
        meta=meta,
    )


def _api_key(params: dict[str, Any]) -> str | None:
    """The key a deployment will send: its api_key (`os.environ/NAME` read from the environment), else
    OPENAI_API_KEY for OpenAI-compatible servers."""
    value = params.get("api_key")
    if isinstance(value, str) and value.startswith("os.environ/"):
        return os.environ.get(value.removeprefix("os.environ/"))
    if value is None and str(params.get("model", "")).startswith(router.OPENAI_COMPATIBLE):
        return os.environ.get("OPENAI_API_KEY")
    return str(value) if value is not None else None


def _pinger(bases: list[str]) -> Callable[[], Awaitable[str | None]]:
    """A health check of the deployments' servers: None when any of them replies to GET /models (any
    status), else the last failure. Hosted providers are not checked: a request's own outcome says."""

    async def ping() -> str | None:
        import httpx

        failure = None
        async with health.client(5.0) as client:
            for base in bases:
                try:
                    await client.get(base.rstrip("/") + "/models")
                    return None
                except httpx.TransportError as exc:
                    failure = redact(f"GET {base}/models: {type(exc).__name__}: {exc}")
        return failure

    return ping


def _no_reply(exc: BaseException) -> bool:
    """The server never answered (refused, reset, timed out), as opposed to answering with an error:
    a connection or timeout error anywhere in the exception's chain."""
    import httpx
    import openai

    kinds = (httpx.TransportError, openai.APIConnectionError, ConnectionError, TimeoutError)
    seen: BaseException | None = exc
    for _ in range(10):
        if seen is None:
            return False
        if isinstance(seen, kinds) or type(seen).__name__ in ("Timeout", "APIConnectionError"):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _unread_200(exc: BaseException) -> tuple[str, str] | None:
    """(what was wrong, the body or litellm's word on it) for a 200 whose body is no chat completion, which
    litellm raises as an InternalServerError (500) of its own; None for an error the server replied with.

    A status the server sent shows in the chain as httpx's HTTPStatusError or the openai SDK's own status
    error; a body that litellm's OpenAI handler could not read shows as its OpenAIError with neither."""
    import httpx
    import openai

    chain: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and len(chain) < 10:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    for link in chain[1:]:
        replied = isinstance(link, openai.APIStatusError) and not type(link).__module__.startswith("litellm")
        if replied or isinstance(link, httpx.HTTPStatusError):
            return None
    for link in chain:
        if isinstance(link, json.JSONDecodeError):
            return NOT_JSON, link.doc
    handler = [link for link in chain if type(link).__name__ == "OpenAIError" and "litellm" in type(link).__module__]
    if not handler:
        return None
    return NOT_OPENAI.format(what="chat completion"), str(handler[-1])


async def _cancel(tasks: set[asyncio.Task[Any]]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
