"""Where a model's files lie and what identifies them: a local directory by the digest of its content, a
hub model by its snapshot's commit. The hf backend loads from there, vLLM serves from there, and a run's
model identity (backends/identity.py) names local weights by the same digest, so that one set of weights
is one model whichever backend reads it."""

from __future__ import annotations

import hashlib
from pathlib import Path

from . import weights
from .base import BackendError
from .models import local_directory, local_file, looks_like_path

_HUB_FILES = ["*.json", "*.safetensors", "*.model", "*.txt", "*.jinja", "*.tiktoken"]
"""What a hub snapshot downloads: the config, weights and tokenizer files, never the repository's extras."""


def locate(name: str) -> tuple[Path, str]:
    """A local directory and its content fingerprint, or a hub snapshot and its commit hash.

    A relative directory is looked up from the working directory, then from the project root (so the
    embedded default, ``fixtures/models/...``, loads from anywhere). A name that can only be a path is
    never sent to the hub.
    """
    directory = local_directory(name)
    if directory is not None:
        if not (directory / "config.json").is_file():
            raise BackendError(f"model directory {directory} has no config.json: not a transformers model")
        weights.check(directory)
        return directory, fingerprint(directory)
    file = local_file(name)
    if file is not None:
        raise BackendError(
            f"hf:{name} is a file, not a model directory ({file}); give the folder that holds the model's "
            "config.json and weights"
        )
    if looks_like_path(name):
        raise BackendError(
            f"model directory {name!r} does not exist (looked in {Path.cwd()} and the project root). "
            "Give the path of a transformers model directory, or a hub id such as hf:Qwen/Qwen2.5-3B-Instruct."
        )
    try:
        from huggingface_hub import snapshot_download

        snapshot = Path(snapshot_download(name, allow_patterns=_HUB_FILES))
    except Exception as exc:  # hub errors come in many classes; the message says which
        raise BackendError(
            f"cannot load model hf:{name}: it is not a local directory, and the hub gave: "
            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}. "
            "Offline (HF_HUB_OFFLINE=1) a hub model must already be in the HF cache; download it first "
            f"(huggingface-cli download {name}) or give a local directory."
        ) from exc
    return snapshot, snapshot.name


def fingerprint(directory: Path) -> str:
    """sha256 over the names and bytes of the files that define a local model (first 12 hex digits)."""
    digest = hashlib.sha256()
    for file in sorted(p for p in directory.rglob("*") if p.is_file()):
        digest.update(str(file.relative_to(directory)).encode())
        with open(file, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:12]
