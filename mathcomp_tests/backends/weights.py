"""A local model folder's weights and tokenizer, checked before any case runs.

The weights load on first use (a run answered from the cache never loads them), so a folder without
weights, or with a file cut short by a failed copy, would otherwise fail every case with transformers'
long traceback. These checks read file sizes and headers, and the bits of every float in a safetensors
file: a weight that is NaN or infinite (a training run that diverged) makes every answer empty. That scan
reads the file once more, as the fingerprint of the folder already does, without loading it into memory.
"""

from __future__ import annotations

import json
import struct
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from ..listing import few
from .base import BackendError

SINGLE = ("model.safetensors", "pytorch_model.bin")
NOT_FINITE = {
    "F64": (np.uint64, 0x7FF0_0000_0000_0000, 0x7FF0_0000_0000_0000),
    "F32": (np.uint32, 0x7F80_0000, 0x7F80_0000),
    "F16": (np.uint16, 0x7C00, 0x7C00),
    "BF16": (np.uint16, 0x7F80, 0x7F80),
    "F8_E5M2": (np.uint8, 0x7C, 0x7C),
    "F8_E4M3": (np.uint8, 0x7F, 0x7F),
}
"""Per safetensors float type: the integer of its width, and the bits that are all set (``value & mask ==
mask``) exactly when the number is NaN or infinite (every exponent bit set; E4M3 has only NaN, 0x7F/0xFF)."""
CHUNK = 1 << 24
"""Values read at a time (at most 128 MiB of F64)."""
INDEXES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")
EXPECTED = (
    "expected the model's weights (model.safetensors, or the shards a model.safetensors.index.json lists); "
    "copy the model folder again"
)


def check(directory: Path) -> None:
    """BackendError naming the weights file that is missing, empty or cut short, and tokenizer.json when
    it is not the JSON a tokenizer file holds."""
    for file in weight_files(directory):
        if file.suffix == ".safetensors":
            _check_finite(file, *_check_safetensors(file))
        else:
            _check_bin(file)
    _check_tokenizer(directory / "tokenizer.json")


def weight_files(directory: Path) -> list[Path]:
    """The files that hold the weights: the one-file forms, else the shards an index lists."""
    for name in SINGLE:
        if (directory / name).is_file():
            return [directory / name]
    for name in INDEXES:
        index = directory / name
        if index.is_file():
            shards = _shards(index)
            missing = [s for s in shards if not (directory / s).is_file()]
            if missing:
                raise BackendError(f"{index} lists {', '.join(missing)}, not in {directory}; {EXPECTED}")
            return [directory / s for s in shards]
    loose = sorted(directory.glob("*.safetensors"))
    if loose:
        return loose
    raise BackendError(f"model directory {directory} has no weights file; {EXPECTED}")


def _shards(index: Path) -> list[str]:
    try:
        weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
        shards = sorted({str(v) for v in weight_map.values()})
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise BackendError(f"{index}: not a weights index (JSON with a weight_map); {EXPECTED}") from exc
    if not shards:
        raise BackendError(f"{index}: its weight_map is empty; {EXPECTED}")
    return shards


def _check_safetensors(file: Path) -> tuple[dict[str, Any], int]:
    """The 8-byte header length, the JSON header, and every tensor's bytes within the file; the header
    and where the tensors' bytes start."""
    size = file.stat().st_size
    if size == 0:
        raise BackendError(f"{file}: empty (0 bytes); {EXPECTED}")
    with open(file, "rb") as fh:
        head = fh.read(8)
        length = struct.unpack("<Q", head)[0] if len(head) == 8 else -1
        if length < 2 or 8 + length > size:
            raise BackendError(f"{file}: not a safetensors file, or cut short ({size} bytes); {EXPECTED}")
        try:
            header = json.loads(fh.read(length))
            end = max(
                (int(t["data_offsets"][1]) for k, t in header.items() if k != "__metadata__"), default=0
            )
        except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
            raise BackendError(f"{file}: its safetensors header is damaged; {EXPECTED}") from exc
    if 8 + length + end > size:
        raise BackendError(
            f"{file}: cut short: {size} bytes, its header describes {8 + length + end}; {EXPECTED}"
        )
    return header, 8 + length


def _check_finite(file: Path, header: dict[str, Any], start: int) -> None:
    """BackendError naming the tensors that hold a NaN or an infinite value (read in chunks, mapped)."""
    floats = {k: t for k, t in header.items() if k != "__metadata__" and t.get("dtype") in NOT_FINITE}
    bad = [name for name, tensor in sorted(floats.items()) if _not_finite(file, start, tensor)]
    if bad:
        raise BackendError(not_finite(str(file), bad, len(floats)))


def not_finite(where: str, bad: list[str], total: int) -> str:
    """The one line for weights of which ``bad`` (tensor names) hold NaN or infinite values."""
    names = few(bad)
    return (
        f"{where}: {len(bad)} of its {total} tensors {'hold' if len(bad) > 1 else 'holds'} NaN or infinite "
        f"values: {names} (a training run that diverged, or a conversion that overflowed); such weights "
        "answer nothing. Use a checkpoint from before the fault"
    )


def _not_finite(file: Path, start: int, tensor: dict[str, Any]) -> bool:
    kind, mask, bits = NOT_FINITE[tensor["dtype"]]
    begin, end = (int(x) for x in tensor["data_offsets"])
    width = np.dtype(kind).itemsize
    count = (end - begin) // width
    if count == 0:
        return False
    values = np.memmap(file, dtype=kind, mode="r", offset=start + begin, shape=(count,))
    try:
        return any(
            bool(np.any((values[i : i + CHUNK] & kind(mask)) == kind(bits))) for i in range(0, count, CHUNK)
        )
    finally:
        del values


def _check_bin(file: Path) -> None:
    """A torch checkpoint is a zip archive; one cut short has lost its central directory."""
    size = file.stat().st_size
    if size == 0:
        raise BackendError(f"{file}: empty (0 bytes); {EXPECTED}")
    if not zipfile.is_zipfile(file):
        raise BackendError(f"{file}: not a torch checkpoint, or cut short ({size} bytes); {EXPECTED}")


def _check_tokenizer(file: Path) -> None:
    """tokenizer.json is one JSON object with a model and its added_tokens; a fragment of one is named."""
    if not file.is_file():
        return
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise BackendError(f"{file}: not UTF-8 text; expected a tokenizer file (JSON)") from exc
    except ValueError as exc:
        raise BackendError(
            f"{file}: not valid JSON ({exc}); expected a tokenizer file, copy it again"
        ) from exc
    missing = [k for k in ("model", "added_tokens") if not isinstance(data, dict) or k not in data]
    if missing:
        raise BackendError(
            f"{file}: no {' or '.join(repr(k) for k in missing)}; expected a tokenizer file as transformers "
            "writes it (JSON with 'model' and 'added_tokens')"
        )
