"""The whole run the shards were parts of, rebuilt: its Settings from shard.json (the options that change
answers, which every shard shares) and the merged run's gate (merge/gate.py), and what answers it in place
of its models (``Replay``: the shards' recorded answers, merge/replay.py), which the plugin's Run asks."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .. import run_folder
from ..baseline_file.format import sha256_of
from ..data.generated_draw import GENERATED_DIR
from ..run.folders import PARTNERS, REVEAL_AFTER
from ..settings import ANSWER_FIELDS, BackendOptions, Settings
from ..types import Decoding, Prompt
from .gate import Gate
from .replay import Answers, JudgeReplies, ReplayBackend, ReplayJudge
from .shards import MANIFEST, ShardFolder, ShardFolderError

FOLDERS = ("", GENERATED_DIR, REVEAL_AFTER, PARTNERS)
"""Where a run folder keeps results.jsonl: test_framing's at the top, test_generated's, test_reveal_after's
and the neutral partners' asked beyond the selection in their subfolders."""


def settings(shard: ShardFolder, out: Path, gate: Gate) -> Settings:
    """The unsharded run's Settings; ShardFolderError when a file the shards read is not here as they read it."""
    o: dict[str, Any] = shard.manifest["selection"]["options"]
    thresholds = Path(str(shard.summary.get("thresholds", "thresholds.toml")))
    if not thresholds.is_file() or sha256_of(thresholds) != o.get("thresholds_sha256"):
        state = "is not here" if not thresholds.is_file() else "has changed since"
        raise ShardFolderError(
            f"{shard.path}: the thresholds file the shards were held to, {thresholds}, {state} the shards ran; "
            "merge where the shards' thresholds.toml is, unchanged"
        )
    if o.get("identities_file_sha256") is not None:
        raise ShardFolderError(
            f"{shard.path}: the shards ran with --identities-file, whose path {MANIFEST} does not keep; "
            "the merge cannot rebuild their prompts"
        )
    plain = Settings()
    given: dict[str, Any] = {k: tuple(o[k]) if isinstance(getattr(plain, k), tuple) else o[k] for k in ANSWER_FIELDS}
    return Settings(
        **given,
        backend=BackendOptions(
            scoring=o["scoring"], model_revision=o["model_revision"], chat_template=o["chat_template"]
        ),
        thresholds=thresholds,
        reports_dir=out.parent,
        cache_path=None,
        baseline=gate.baseline,
        update_baseline=gate.update_baseline,
        holm=gate.holm,
        fail_on=gate.fail_on,
        require_power=gate.require_power,
    )


def shard_records(shards: list[ShardFolder]) -> dict[str, list[dict[str, Any]]]:
    """Every shard's records, by the folder of the run folder they are kept in, in the shards' order."""
    out: dict[str, list[dict[str, Any]]] = {folder: [] for folder in FOLDERS}
    for shard in shards:
        for folder in FOLDERS:
            where = shard.path / folder if folder else shard.path
            try:
                records = run_folder.read(where / run_folder.RESULTS, strict=True).records
            except run_folder.RunFolderError as exc:
                raise ShardFolderError(f"{shard.name}: {exc}") from exc
            for n, record in enumerate(records, 1):
                if not isinstance(record.get("scenario"), str) or not (
                    isinstance(record.get("prompt"), str) or isinstance(record.get("turns"), list)
                ):
                    raise ShardFolderError(
                        f"{where / run_folder.RESULTS}: record {n} has no 'scenario' (a string) or no 'prompt' or "
                        "'turns'; expected the records a shard writes"
                    )
            out[folder] += records
    return out


class Replay:
    """What answers the whole run (run/answering.py): its model and its judge from the shards' records."""

    def __init__(self, answers: Answers, judged: list[dict[str, Any]], folder: Path):
        self.answers = answers
        self.judged = judged
        """The records whose answers the judge was asked about (test_framing's and test_generated's)."""
        self._folder = folder

    @property
    def folder(self) -> Path:
        """The merged run's folder (--out, built beside it), whatever its id."""
        return self._folder

    def model(self, samples: int) -> ReplayBackend:
        def sample_of(decoding: Decoding) -> int:
            """Which sample a decoding asks (Run.decodings: seeds 0..K-1 when --samples is above one)."""
            return int(decoding.seed or 0) if samples > 1 else 0

        return ReplayBackend(self.answers, sample_of)

    def judge(self, model_id: str, judge_prompt: Callable[[Mapping[str, Any]], Prompt | None]) -> ReplayJudge:
        """The judge's replies the records hold, by the judge prompt each answer was asked about."""
        replies = JudgeReplies()
        for record in self.judged:
            asked = None if record.get("judge_raw") is None else judge_prompt(record)
            if asked is not None:
                replies.add(asked, str(record["judge_raw"]))
        return ReplayJudge(replies, model_id)
