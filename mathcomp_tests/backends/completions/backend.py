"""An OpenAI-compatible server driven by batched `/v1/completions` requests (--api-batching=completions,
and every vllm:... model): prompts rendered here by the model's own tokenizer and chat template, exactly
as the hf backend renders them, many prompts per request; label log-probabilities for --scoring=logprob.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
from collections.abc import Coroutine, Iterator, Sequence
from pathlib import PurePosixPath
from typing import Any

from ...formats import FORMATS
from ...settings import BackendOptions
from ...types import LABELS, Decoding, Prompt, Response
from ..base import BackendError, OnResponse
from ..liveness import Liveness
from ..local import tokens
from ..router import OPENAI_COMPATIBLE
from ..secrets import redact
from . import servers
from .batched import BatchedCompletions, Job, first_logprobs
from .loop_thread import LoopThread
from .pool import Member, ServerPool
from .servers import Target

PIPELINE_ABOVE = 512
"""A call of more prompts is rendered and sent in pieces: the first requests go out while the rest are
rendered, instead of the servers waiting for every prompt of the call to be rendered (about 0.1 ms each
through a chat template)."""
PIECE = 256
"""Prompts per piece: one full request (the requests keep the size the whole call gives them)."""


def split_base(api_base: str) -> tuple[str, str]:
    """(server root, OpenAI API base) from a base URL given with or without its `/v1`."""
    base = api_base.rstrip("/")
    return (base[: -len("/v1")], base) if base.endswith("/v1") else (base, base + "/v1")


class CompletionsBackend:
    """`openai/<name>` (or `hosted_vllm/<name>`) with --api-base and --api-batching=completions."""

    streams = True
    """Each request's answers are committed to the cache the moment it returns."""
    concurrent = True
    """``complete`` may be called from several threads at once (a case asked ahead of its turn): the
    client's loop runs on a thread of its own."""

    def __init__(self, model: str, options: BackendOptions | None = None):
        options = options or BackendOptions()
        self.model_id = model
        if options.model_config is not None:
            targets, options = servers.from_config(model, options)
            self._start_all(targets, None, options)
            return
        if not model.startswith(OPENAI_COMPATIBLE):
            raise BackendError(
                f"--api-batching=completions needs an OpenAI-compatible server: --model=openai/<served name> "
                f"with --api-base, not {model}"
            )
        if not options.api_base:
            raise BackendError(
                "--api-batching=completions needs --api-base (the server's URL), or --model-config with the "
                "servers' deployments"
            )
        self._start(options.api_base, (model.split("/", 1)[1],), None, options)

    def _start(
        self, api_base: str, names: tuple[str, ...], tokenizer_from: str | None, options: BackendOptions
    ) -> None:
        """One server (shared by the vllm backend): --api-base, or the server the run started."""
        key = os.environ.get("OPENAI_API_KEY") or None
        self._start_all(
            [Target(api_base, names[0], key, options.max_concurrency)], tokenizer_from, options, names
        )

    def _start_all(
        self,
        targets: list[Target],
        tokenizer_from: str | None,
        options: BackendOptions,
        names: tuple[str, ...] | None = None,
    ) -> None:
        """Ask each server what it serves (the same model everywhere), load the tokenizer, open the
        clients: one server's alone, several servers' as a ServerPool."""
        if options.chat_template not in tokens.CHAT_TEMPLATES:
            raise BackendError(f"unknown chat template mode {options.chat_template!r}")
        if options.scoring not in tokens.SCORINGS:
            raise BackendError(
                f"unknown scoring {options.scoring!r}; expected one of {', '.join(tokens.SCORINGS)}"
            )
        self.scoring = options.scoring
        self.chat_template = options.chat_template
        self.model_revision = options.model_revision
        self.revision = options.model_revision or ""
        listed = []
        for target in targets:
            self.root, self.api_base = split_base(target.api_base)
            self.api_key = target.api_key
            listed.append((self.root, self._served(names or (target.name,))))
        self.served = servers.same_model(listed, self.model_id)
        self.root, self.api_base = split_base(targets[0].api_base)
        self.api_key = targets[0].api_key
        self.served_names = [str(entry["id"]) for _, entry in listed]
        self.served_name = self.served_names[0]
        first = names[0] if names else targets[0].name
        self.tokenizer = self._tokenizer(tokenizer_from or str(self.served.get("root") or first))
        self.template = tokens.uses_template(self.tokenizer, self.chat_template)
        self._labels = tokens.LabelTokens(self._encode, self.model_id)
        self._loop = LoopThread(f"mathcomp-{self.model_id}")
        self.pool: ServerPool | None = None
        if len(targets) == 1:
            self.liveness = self._liveness(self.root, options)
            self.client = self._loop.run(self._client(targets[0], self.served_name, self.liveness, options))
        else:
            self.pool = self._loop.run(self._pool(targets, options))

    def _liveness(self, root: str, options: BackendOptions) -> Liveness:
        return Liveness(
            root,
            options.max_connection_failures,
            options.server_timeout,
            ping=servers.pinger(root),
            max_errors=options.max_error_streak,
            cached=options.response_cache,
        )

    async def _pool(self, targets: list[Target], options: BackendOptions) -> ServerPool:
        members = []
        for target, name in zip(targets, self.served_names, strict=True):
            root = split_base(target.api_base)[0]
            client = await self._client(target, name, self._liveness(root, options), options)
            members.append(Member(root, client, asyncio.Semaphore(client.in_flight)))
        return ServerPool(members)

    async def _client(
        self, target: Target, served_name: str, liveness: Liveness, options: BackendOptions
    ) -> BatchedCompletions:
        """Made inside the loop that will run it (its connections belong to that loop)."""
        return BatchedCompletions(
            split_base(target.api_base)[1],
            served_name,
            liveness,
            batch_size=options.batch_size,
            in_flight=target.in_flight or options.max_concurrency,
            num_retries=options.num_retries,
            request_timeout=options.request_timeout,
            api_key=target.api_key,
        )

    def _served(self, names: tuple[str, ...]) -> dict[str, Any]:
        """The server's /v1/models entry for the model ``names`` name: by id, or by root (what it loaded),
        else the one entry whose id or root ends in the same directory name (a copy of the model)."""
        listed = self._get_json(self.api_base + "/models").get("data") or []
        entries = [e for e in listed if isinstance(e, dict)]
        for entry in entries:
            if entry.get("id") in names or entry.get("root") in names:
                return entry
        tails = {PurePosixPath(n).name for n in names}  # the same model directory, copied elsewhere
        alike = [e for e in entries if {PurePosixPath(str(e.get(k))).name for k in ("id", "root")} & tails]
        if len(alike) == 1:
            return alike[0]
        serves = ", ".join(str(e.get("root") or e.get("id")) for e in entries) or "nothing"
        raise BackendError(f"the server at {self.root} does not serve {names[0]}; it serves: {serves}")

    def _get_json(self, url: str) -> dict[str, Any]:
        import urllib.error
        import urllib.request

        request = urllib.request.Request(url, headers={"User-Agent": "mathcomp-tests"})
        if self.api_key:
            request.add_header("Authorization", f"Bearer {self.api_key}")
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:
                data = json.loads(reply.read(1 << 22))
        except (OSError, ValueError) as exc:
            raise BackendError(redact(f"cannot read {url}: {exc}; is the server running?")) from exc
        if not isinstance(data, dict):
            raise BackendError(f"{url} did not return a JSON object")
        return data

    def _tokenizer(self, source: str) -> Any:
        """The model's tokenizer: transformers' generic fast tokenizer where the model's own config names
        it (loading it imports neither torch nor the model's config: seconds off every run's start),
        else whatever AutoTokenizer picks for the model."""
        try:
            if tokens.generic_tokenizer(source):
                from transformers import PreTrainedTokenizerFast as Tokenizer
            else:
                from transformers import AutoTokenizer as Tokenizer  # type: ignore[assignment]
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise BackendError(
                "rendering prompts for /v1/completions needs transformers: pip install 'mathcomp-tests[hf]'"
            ) from exc
        try:
            return Tokenizer.from_pretrained(source)
        except Exception as exc:  # transformers raises many classes for a missing tokenizer
            raise BackendError(
                f"cannot load the tokenizer of {self.model_id} from {source!r} to render its chat template: "
                f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            ) from exc

    def _encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def render(self, prompt: Prompt) -> str:
        """The exact text the model reads (see tokens.render)."""
        return tokens.render(self.tokenizer, prompt, self.template)

    @property
    def applied_chat_template(self) -> str:
        """How prompts reach the model, as the hf backend says it: `auto` (rendered here through its chat
        template) or `none` (plain text, also when the tokenizer has no template); recorded per item."""
        return "auto" if self.template else "none"

    def template_digest(self) -> str | None:
        """The chat template by content: a changed template is another prompt, so another answer."""
        if not self.template:
            return None
        return hashlib.sha256(str(self.tokenizer.chat_template).encode()).hexdigest()[:12]

    def request_fields(self) -> dict[str, object]:
        """The request fields (besides the prompts and decoding) that decide an answer."""
        sample = BatchedCompletions.score_fields() if self.scoring == "logprob" else {}
        return {
            "endpoint": "/v1/completions",
            "add_special_tokens": False,
            "decoded": "client",
            "score": sample,
        }

    def cache_identity(self) -> dict[str, object]:
        """What the server says it serves, the chat template, scoring and the request's own fields."""
        return {
            "backend": "completions",
            "served": {k: self.served.get(k) for k in ("id", "root", "max_model_len", "owned_by")},
            "chat_template": self.template_digest(),
            "scoring": self.scoring,
            "request": self.request_fields(),
            "model_revision": self.model_revision,
        }

    def prompt_inputs(self, prompt: Prompt) -> dict[str, object]:
        return {}

    def complete(
        self, prompts: Sequence[Prompt], decoding: Decoding, on_response: OnResponse | None = None
    ) -> list[Response]:
        results: list[Response | None] = [None] * len(prompts)

        def done(job: Job, response: Response) -> None:
            results[job.index] = response
            if on_response:
                on_response(job.index, response)

        pieces = len(prompts) > PIPELINE_ABOVE  # requests sized by the whole call, as one call's would be
        piece, whole = (PIECE, len(prompts)) if pieces else (max(1, len(prompts)), None)
        limit = None if self.pool else asyncio.Semaphore(self.client.in_flight)

        def runs() -> Iterator[Coroutine[Any, Any, None]]:
            for start in range(0, len(prompts), piece):
                jobs = [self._job(start + i, p) for i, p in enumerate(prompts[start : start + piece])]
                if self.pool:
                    yield self.pool.run(jobs, decoding, done, self._read, whole=whole)
                else:
                    yield self.client.run(jobs, decoding, done, self._read, whole=whole, limit=limit)

        self._loop.run_each(runs())
        return [r if r is not None else Response(text="", error="no answer") for r in results]

    def _job(self, index: int, prompt: Prompt) -> Job:
        text = self.render(prompt)
        if not tokens.scores_labels(self.scoring, prompt):
            return Job(index, text)
        text += FORMATS[prompt.condition.format].logprob_prefix or ""
        return Job(index, text, self._labels(text), prompt.condition.format)

    def _read(self, job: Job, choice: dict[str, Any]) -> Response:
        return self._score(job, choice) if job.labels is not None else self._generated(choice)

    def _generated(self, choice: dict[str, Any]) -> Response:
        """The answer decoded from its token ids by our tokenizer, as the hf backend decodes them (the
        server's own text holds back a trailing incomplete character); its text where it sends no ids."""
        ids, prompt_ids = choice.get("token_ids"), choice.get("prompt_token_ids")
        if isinstance(ids, list):
            text = str(self.tokenizer.decode(ids, skip_special_tokens=True))
        else:
            text = str(choice.get("text") or "")
        return Response(
            text=text,
            input_tokens=len(prompt_ids) if isinstance(prompt_ids, list) else None,
            output_tokens=len(ids) if isinstance(ids, list) else None,
            meta={"finish_reason": choice.get("finish_reason")},
        )

    def _score(self, job: Job, choice: dict[str, Any]) -> Response:
        """The label probabilities from the first position's log-probabilities, as the hf backend
        computes them from its logits: each label's mass summed over the tokens that start it, the three
        normalised. Where the server returned only its top tokens, an absent label token counts 0 (the
        meta says how many of the label tokens were seen)."""
        assert job.labels is not None
        logprobs = first_logprobs(choice)
        wanted = [t for y in LABELS for t in job.labels[y]]
        seen = sum(t in logprobs for t in wanted)
        mass = {y: math.fsum(math.exp(logprobs[t]) for t in job.labels[y] if t in logprobs) for y in LABELS}
        probs, label = tokens.label_probs(mass)
        prompt_ids = choice.get("prompt_token_ids")
        meta: dict[str, object] = {
            "probs": probs,
            "label_mass": sum(mass.values()),
            "scoring": "logprob",
            "label_tokens_seen": f"{seen}/{len(wanted)}",
        }
        text = FORMATS[job.format].logprob_answer(label) if seen else str(choice.get("text") or "")
        return Response(
            text=text,
            input_tokens=len(prompt_ids) if isinstance(prompt_ids, list) else None,
            output_tokens=0,
            meta=meta,
        )

    def close(self) -> None:
        if getattr(self, "pool", None) is not None:
            self._loop.close(self.pool.aclose())  # type: ignore[union-attr]
        elif hasattr(self, "client"):
            self._loop.close(self.client.aclose())
        elif hasattr(self, "_loop"):
            self._loop.close()
