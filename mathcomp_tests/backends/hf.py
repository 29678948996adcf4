"""A local transformers model: chat template, length-sorted batches, left padding, greedy decoding."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..types import Decoding, Prompt, Response
from .base import BackendError, OnResponse
from .options import BackendOptions

_HUB_FILES = ["*.json", "*.safetensors", "*.model", "*.txt", "*.jinja", "*.tiktoken"]


class HFBackend:
    """Batched greedy generation with any causal LM that transformers can load."""

    def __init__(self, name: str, options: BackendOptions | None = None):
        options = options or BackendOptions()
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise BackendError(
                "the hf backend needs torch and transformers: pip install 'mathcomp-tests[hf]'"
            ) from exc
        self._torch = torch
        directory, self.revision = _locate(name)
        self.model_id = f"hf:{name}"
        self.device = _pick_device(torch, options.device)
        self.batch_size = max(1, options.batch_size or 16)
        self.dtype = torch.bfloat16 if self.device.startswith("cuda") else torch.float32
        self.directory = directory
        self.tokenizer = AutoTokenizer.from_pretrained(directory, padding_side="left")
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self._model: Any = None
        self._auto_model: Any = AutoModelForCausalLM

    @property
    def model(self) -> Any:
        """The weights, loaded on first use: a run answered wholly from the cache never loads them."""
        if self._model is None:
            model = self._auto_model.from_pretrained(self.directory, dtype=self.dtype)
            self._model = model.to(self.device).eval()
        return self._model

    def cache_settings(self) -> dict[str, object]:
        return {"dtype": str(self.dtype).removeprefix("torch."), "chat_template": self._has_template()}

    def render(self, prompt: Prompt) -> str:
        """The exact text the model reads: the chat template applied, generation prompt added."""
        if not self._has_template():
            return prompt.text
        messages = [{"role": m.role, "content": m.content} for m in prompt.messages]
        return str(self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))

    def complete(
        self, prompts: Sequence[Prompt], decoding: Decoding, on_response: OnResponse | None = None
    ) -> list[Response]:
        texts = [self.render(p) for p in prompts]
        lengths = [len(ids) for ids in self.tokenizer(texts, add_special_tokens=False)["input_ids"]]
        order = sorted(range(len(texts)), key=lambda i: -lengths[i])
        results: list[Response | None] = [None] * len(texts)
        start = 0
        while start < len(order):
            batch = order[start : start + self.batch_size]
            try:
                answers = self._generate([texts[i] for i in batch], decoding)
            except self._torch.cuda.OutOfMemoryError:
                if self.batch_size == 1:
                    raise
                self.batch_size //= 2
                self._torch.cuda.empty_cache()
                continue
            for i, (text, n_out) in zip(batch, answers, strict=True):
                results[i] = Response(text=text, input_tokens=lengths[i], output_tokens=n_out)
                if on_response:
                    on_response(i, results[i])  # type: ignore[arg-type]
            start += len(batch)
        return [r for r in results if r is not None]

    def _generate(self, texts: list[str], decoding: Decoding) -> list[tuple[str, int]]:
        torch = self._torch
        enc = self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(
            self.device
        )
        kwargs: dict[str, Any] = {
            "max_new_tokens": decoding.max_new_tokens,
            "pad_token_id": self.tokenizer.pad_token_id,
        }
        if decoding.temperature > 0:
            kwargs.update(do_sample=True, temperature=decoding.temperature)
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        with torch.inference_mode():
            out = self.model.generate(**enc, **kwargs)
        new = out[:, enc["input_ids"].shape[1] :]
        answers = []
        for row in new:
            ids = [int(t) for t in row if int(t) != self.tokenizer.pad_token_id]
            answers.append((str(self.tokenizer.decode(ids, skip_special_tokens=True)), len(ids)))
        return answers

    def _has_template(self) -> bool:
        return bool(getattr(self.tokenizer, "chat_template", None))

    def close(self) -> None:
        self._model = None


def _pick_device(torch: Any, device: str) -> str:
    if device != "auto":
        return device
    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def _locate(name: str) -> tuple[Path, str]:
    """A local directory and its content fingerprint, or a hub snapshot and its commit hash."""
    path = Path(name).expanduser()
    if path.is_dir():
        return path, fingerprint(path)
    try:
        from huggingface_hub import snapshot_download

        directory = Path(snapshot_download(name, allow_patterns=_HUB_FILES))
    except Exception as exc:  # hub errors come in many classes; the message says which
        raise BackendError(
            f"cannot load model {name!r}: not a local directory, and the hub gave: {exc}. "
            "Offline (HF_HUB_OFFLINE=1) a hub model must already be in the HF cache."
        ) from exc
    return directory, directory.name


def fingerprint(directory: Path) -> str:
    """sha256 over the names and bytes of the files that define a local model (first 12 hex digits)."""
    digest = hashlib.sha256()
    for file in sorted(p for p in directory.rglob("*") if p.is_file()):
        digest.update(str(file.relative_to(directory)).encode())
        with open(file, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:12]
