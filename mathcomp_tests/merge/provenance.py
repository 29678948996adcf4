"""What the shards ran on, checked before their answers are put together: every shard answered with the same
weights and chat template (shard.json's ``model_identity``, summary.json's ``chat_template``), and the
dataset the merge reads here is the one the shards read (``selection.dataset.sha256``). Answers of two
models, or scored against gold labels no shard was asked about, are refused, naming the shard and the field.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..baseline_file.format import sha256_of
from .shards import MANIFEST, ShardFolder, ShardFolderError


def _shown(value: object) -> str:
    text = str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_same_model(shards: Sequence[ShardFolder]) -> None:
    """ShardFolderError naming the first shard whose weights or chat template differ from the first shard's."""
    first = shards[0]
    for shard in shards[1:]:
        for field, ours, theirs in (
            (
                f"{MANIFEST}'s model_identity",
                first.manifest.get("model_identity"),
                shard.manifest.get("model_identity"),
            ),
            (
                "summary.json's chat_template",
                first.summary.get("chat_template"),
                shard.summary.get("chat_template"),
            ),
        ):
            if ours != theirs:
                raise ShardFolderError(
                    f"{shard.name}: {field} is {_shown(theirs)!r}, {first.name}'s is {_shown(ours)!r}: the "
                    "shards answered with different weights or chat templates; merge the shards of one model"
                )


def check_dataset(shards: Sequence[ShardFolder], here: Path) -> None:
    """ShardFolderError when the dataset file the merge reads (``here``) is not the one the shards read."""
    recorded = shards[0].manifest["selection"].get("dataset", {}).get("sha256")
    found = sha256_of(here)
    if recorded != found:
        raise ShardFolderError(
            f"{shards[0].path / MANIFEST}: selection.dataset.sha256 is {recorded}, but the dataset here ({here}) "
            f"has {found}: it changed since the shards ran, and its gold labels and prompts may not be the ones "
            "the shards were asked; merge where the shards' dataset is, unchanged"
        )
