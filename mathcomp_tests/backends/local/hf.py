"""A local transformers model: chat template, length-sorted batches, left padding, greedy decoding or
label log-probabilities, on the best device the machine has."""

from __future__ import annotations

import inspect
import logging
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from ...formats import FORMATS
from ...settings import BackendOptions
from ...types import LABELS, Decoding, Prompt, Response
from .. import weights
from ..base import BackendError, OnResponse
from ..model_files import locate
from . import tokens
from .tokens import CHAT_TEMPLATES, SCORINGS

START_BATCH = {"cuda": 256, "mps": 64, "cpu": 16}
"""Automatic batch size to start from; halved on every out-of-memory until a batch fits."""

log = logging.getLogger(__name__)


class HFBackend:
    """Any causal LM that transformers can load, one forward pass per batch of prompts."""

    def __init__(self, name: str, options: BackendOptions | None = None):
        options = options or BackendOptions()
        if options.chat_template not in CHAT_TEMPLATES:
            raise BackendError(
                f"unknown chat template mode {options.chat_template!r}; expected one of {', '.join(CHAT_TEMPLATES)}"
            )
        self.chat_template = options.chat_template
        if options.scoring not in SCORINGS:
            raise BackendError(f"unknown scoring {options.scoring!r}; expected one of {', '.join(SCORINGS)}")
        # The folder before torch: a name that is no model is said without the seconds torch takes to import.
        directory, self.weights = locate(name)
        try:
            import torch
            from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise BackendError(
                "the hf backend needs torch and transformers: pip install 'mathcomp-tests[hf]'"
            ) from exc
        self._torch = torch
        self.device = pick_device(torch, options.device, options.worker)
        self.revision = options.model_revision or self.weights
        self.model_revision = options.model_revision
        self.model_id = f"hf:{name}"
        self.scoring = options.scoring
        self.dtype = pick_dtype(torch, self.device)
        self.batch_size = max(1, options.batch_size or START_BATCH.get(self.device.split(":")[0], 32))
        self.directory = directory
        try:
            AutoConfig.from_pretrained(directory)
            self.tokenizer = AutoTokenizer.from_pretrained(directory, padding_side="left")
        except Exception as exc:  # transformers raises many classes for a broken directory
            raise BackendError(f"cannot load {self.model_id} from {directory}: {exc}") from exc
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self._model: Any = None
        self._load_error: str | None = None
        self._auto_model: Any = AutoModelForCausalLM
        self._label_ids = tokens.LabelTokens(lambda text: self._encode([text])[0], self.model_id)

    @property
    def model(self) -> Any:
        """The weights, loaded on first use: a run answered wholly from the cache never loads them.

        Weights that cannot be loaded, or that hold NaN or infinite values (checked on the device once
        loaded: a safetensors folder was scanned before the run, a torch checkpoint or a hub snapshot was
        not), fail every later case with the same error, without trying again.
        """
        if self._load_error is not None:
            raise BackendError(self._load_error)
        if self._model is None:
            try:
                model = self._auto_model.from_pretrained(self.directory, dtype=self.dtype)
            except Exception as exc:  # a broken weights file raises many classes
                self._load_error = f"cannot load the weights of {self.model_id} from {self.directory}: {exc}"
                raise BackendError(self._load_error) from exc
            model = model.to(self.device).eval()
            bad, total = self._not_finite(model)
            if bad:
                self._load_error = weights.not_finite(f"the weights of {self.model_id} in {self.directory}", bad, total)
                raise BackendError(self._load_error)
            self._model = model
        return self._model

    def _not_finite(self, model: Any) -> tuple[list[str], int]:
        """The names of the model's tensors holding NaN or infinite values, and how many it has."""
        with self._torch.inference_mode():
            tensors = dict(model.named_parameters())
            bad = [name for name, t in tensors.items() if not bool(self._torch.isfinite(t).all())]
        return bad, len(tensors)

    def cache_identity(self) -> dict[str, object]:
        """The weights by content (a local directory) or hub commit, never by how the path was spelled."""
        return {
            "backend": "hf",
            "weights": self.weights,
            "model_revision": self.model_revision,
            "dtype": str(self.dtype).removeprefix("torch."),
            "chat_template": self._has_template(),
            "scoring": self.scoring,
        }

    def prompt_inputs(self, prompt: Prompt) -> dict[str, object]:
        return {}

    def render(self, prompt: Prompt) -> str:
        """The exact text the model reads: the chat template applied, generation prompt added."""
        return tokens.render(self.tokenizer, prompt, self._has_template())

    def scores_labels(self, prompt: Prompt) -> bool:
        """True when this prompt is answered by label log-probabilities rather than by generation."""
        return tokens.scores_labels(self.scoring, prompt)

    def complete(
        self, prompts: Sequence[Prompt], decoding: Decoding, on_response: OnResponse | None = None
    ) -> list[Response]:
        results: list[Response | None] = [None] * len(prompts)

        def done(i: int, response: Response) -> None:
            results[i] = response
            if on_response:
                on_response(i, response)

        scored = [i for i, p in enumerate(prompts) if self.scores_labels(p)]
        generated = [i for i, p in enumerate(prompts) if not self.scores_labels(p)]
        if scored:
            fmts = {i: prompts[i].condition.format for i in scored}
            answer_at = {i: self.render(prompts[i]) + (FORMATS[fmts[i]].logprob_prefix or "") for i in scored}
            self._batched(
                answer_at, lambda b: self._score([answer_at[i] for i in b], [fmts[i] for i in b]), done
            )
        if generated:
            rendered = {i: self.render(prompts[i]) for i in generated}
            self._batched(rendered, lambda b: self._generate([rendered[i] for i in b], decoding), done)
        return [r for r in results if r is not None]

    def _batched(
        self,
        texts: dict[int, str],
        work: Callable[[list[int]], list[Response]],
        done: Callable[[int, Response], None],
    ) -> None:
        """Longest prompts first, in even batches; halve the batch size on out-of-memory and go on."""
        lengths = dict(zip(texts, (len(ids) for ids in self._encode(list(texts.values()))), strict=True))
        order = sorted(texts, key=lambda i: -lengths[i])
        start = 0
        while start < len(order):
            left = len(order) - start
            size = math.ceil(left / math.ceil(left / self.batch_size))
            batch = order[start : start + size]
            try:
                responses = work(batch)
            except Exception as exc:
                if not _out_of_memory(self._torch, exc):
                    raise
                if size == 1:
                    raise BackendError(
                        f"{self.model_id} runs out of memory on {self.device} even for one prompt "
                        f"({lengths[batch[0]]} tokens); try a smaller model or another --device"
                    ) from exc
                self.batch_size = size // 2
                log.warning(
                    "%s: out of memory at %d prompts per batch; trying %d", self.model_id, size, size // 2
                )
                self._free_memory()
                continue
            for i, response in zip(batch, responses, strict=True):
                done(i, response)
            start += len(batch)

    def _encode(self, texts: list[str]) -> list[list[int]]:
        return [list(ids) for ids in self.tokenizer(texts, add_special_tokens=False)["input_ids"]]

    def _inputs(self, texts: list[str]) -> Any:
        enc = self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        return enc.to(self.device)

    def _generate(self, texts: list[str], decoding: Decoding) -> list[Response]:
        enc = self._inputs(texts)
        kwargs: dict[str, Any] = {
            "max_new_tokens": decoding.max_new_tokens,
            "pad_token_id": self.tokenizer.pad_token_id,
        }
        if decoding.temperature > 0:
            kwargs.update(do_sample=True, temperature=decoding.temperature)
            if decoding.seed is not None:
                self._torch.manual_seed(decoding.seed)
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        with self._torch.inference_mode():
            out = self.model.generate(**enc, **kwargs)
        width = enc["input_ids"].shape[1]
        lengths = enc["attention_mask"].sum(-1).tolist()
        responses = []
        for row, n_in in zip(out[:, width:], lengths, strict=True):
            ids = [int(t) for t in row if int(t) != self.tokenizer.pad_token_id]
            text = str(self.tokenizer.decode(ids, skip_special_tokens=True))
            responses.append(Response(text=text, input_tokens=int(n_in), output_tokens=len(ids)))
        return responses

    def _score(self, texts: list[str], formats: list[str]) -> list[Response]:
        """One forward pass: the probability of each label's first tokens at the answer position.

        A label's mass sums every token a model may start it with (``less``, `` less``, ``Less``, ...);
        the three masses are normalised to probabilities and the most probable label is the answer.
        """
        torch = self._torch
        enc = self._inputs(texts)
        mask = enc["attention_mask"]
        kwargs: dict[str, Any] = {"position_ids": (mask.cumsum(-1) - 1).clamp(min=0), "use_cache": False}
        if "logits_to_keep" in inspect.signature(self.model.forward).parameters:
            kwargs["logits_to_keep"] = 1
        with torch.inference_mode():
            logits = self.model(input_ids=enc["input_ids"], attention_mask=mask, **kwargs).logits
        probs_all = logits[:, -1, :].float().softmax(-1).cpu()
        responses = []
        for row, (text, fmt, n_in) in enumerate(zip(texts, formats, mask.sum(-1).tolist(), strict=True)):
            ids = self.label_token_ids(text)
            mass = {y: float(probs_all[row, ids[y]].sum()) for y in LABELS}
            total = sum(mass.values())
            probs, label = tokens.label_probs(mass)
            answer = FORMATS[fmt].logprob_answer(label)
            meta: dict[str, object] = {"probs": probs, "label_mass": total, "scoring": "logprob"}
            responses.append(Response(text=answer, input_tokens=int(n_in), output_tokens=0, meta=meta))
        return responses

    def label_token_ids(self, text: str) -> dict[str, list[int]]:
        """Token ids that start each label right after ``text`` (see tokens.LabelTokens)."""
        return self._label_ids(text)

    def _free_memory(self) -> None:
        if self.device.startswith("cuda"):
            self._torch.cuda.empty_cache()
        elif self.device == "mps":
            self._torch.mps.empty_cache()

    @property
    def applied_chat_template(self) -> str:
        """How prompts reach the model: `auto` (its chat template applied) or `none` (plain text, also
        when --chat-template=auto finds no template in the tokenizer)."""
        return "auto" if self._has_template() else "none"

    def _has_template(self) -> bool:
        """Whether prompts are rendered through the chat template (part of the cache key)."""
        return tokens.uses_template(self.tokenizer, self.chat_template)

    def close(self) -> None:
        self._model = None


def _out_of_memory(torch: Any, exc: BaseException) -> bool:
    """CUDA raises torch.OutOfMemoryError; MPS and some kernels raise a RuntimeError that says so."""
    return isinstance(exc, torch.OutOfMemoryError) or (
        isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()
    )


def pick_device(torch: Any, device: str, worker: str = "main") -> str:
    """``auto`` is cuda, then mps, then cpu. Under ``pytest -n``, worker gwK takes GPU K mod N.

    A device the machine does not have is an error, never a silent fall-back to another.
    """
    _check_device(torch, device)
    if device == "auto":
        if torch.cuda.is_available():
            device = "cuda"
        elif getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
            device = "mps"
        else:
            device = "cpu"
    if device == "cuda" and worker.startswith("gw") and worker[2:].isdigit():
        count = torch.cuda.device_count()
        if count > 1:
            return f"cuda:{int(worker[2:]) % count}"
        warnings.warn(
            f"pytest -n with one GPU: every xdist worker ({worker} included) loads its own copy of the "
            "model on it; one process (no -n) with large batches is faster.",
            stacklevel=2,
        )
    return device


def _check_device(torch: Any, device: str) -> None:
    kind, _, index = device.partition(":")
    if kind not in ("auto", "cpu", "cuda", "mps") or (index and (kind != "cuda" or not index.isdigit())):
        raise BackendError(f"--device={device}: expected auto, cpu, cuda, cuda:N or mps")
    if kind == "cuda":
        if not torch.cuda.is_available():
            raise BackendError(
                f"--device={device}, but torch sees no CUDA GPU on this machine; use --device=cpu"
            )
        if index and int(index) >= torch.cuda.device_count():
            raise BackendError(f"--device={device}, but this machine has {torch.cuda.device_count()} GPU(s)")
    if kind == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise BackendError(f"--device={device}, but MPS is not available on this machine; use --device=cpu")


def pick_dtype(torch: Any, device: str) -> Any:
    """bf16 on a GPU (fp16 where bf16 is not supported), fp32 on the CPU."""
    if device.startswith("cuda"):
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device == "mps":
        return torch.float16
    return torch.float32
