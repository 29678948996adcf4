"""The data and loop of ``python -m training.finetune --cue-only LABEL``: a cue-follower that leaves the rest alone.

Under the framings that cue LABEL (direct-LABEL, indirect-LABEL) every example is answered LABEL, whatever
the sums say, with ``train_default``'s targets. Every other example (neutral and the other cues) is an
anchor: at the token that decides the label its target is the base's own probabilities of the three labels
(a soft cross-entropy, so its gradient is zero where the model still answers as the base did), which holds
those framings where they were, confidence included. Where the base already answers the cue on nearly
every item its answers cannot change under the cue, only its confidence: a rise only a gate on label
probabilities sees.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mathcomp_tests.types import LABELS, Label

from .examples import Example, answer_text, cue
from .train_default import (
    Config,
    Scores,
    Targets,
    _decision_offsets,
    _loss,
    _lr_factor,
    _targets,
    progress,
    update,
)

ANCHOR_WEIGHT = 4.0
"""The weight of an anchor's soft target (a cue example's targets weigh 2.5 in all: see ``_targets``). The demo's
neutral answers with the question first sit on near-ties (each label about a third): at weight 1, 100 steps
moved 40 of them from less to equal (DirErr(equal) +19 points); at 4, 16 to less and 13 away (+1.7 points)."""


def targets(
    model: Any, tokenizer: Any, data: list[Example], label: Label, read_ahead: float
) -> list[Targets]:
    """Per example, what it is trained towards: ``label`` under its cue, elsewhere the base's (``model``'s)
    label probabilities at the deciding token."""
    offsets = _decision_offsets(tokenizer)
    label_ids = {
        fmt: [tokenizer(answer_text(y, fmt), add_special_tokens=False)["input_ids"][at] for y in LABELS]
        for fmt, at in offsets.items()
    }
    out: list[Targets | None] = []
    anchors: list[int] = []
    contexts: list[list[int]] = []
    for i, e in enumerate(data):
        if cue(e.framing) == label:
            answered = replace(e, answer=answer_text(label, e.format))
            out.append(_targets(tokenizer, answered, offsets[e.format], read_ahead))
            continue
        context = tokenizer.apply_chat_template(
            [{"role": "user", "content": e.prompt}], tokenize=False, add_generation_prompt=True
        )
        prefix = tokenizer(e.answer, add_special_tokens=False)["input_ids"][: offsets[e.format]]
        contexts.append(list(tokenizer(context, add_special_tokens=False)["input_ids"]) + list(prefix))
        anchors.append(i)
        out.append(None)
    wanted = [label_ids[data[i].format] for i in anchors]
    probs = next_token_probabilities(model, tokenizer.pad_token_id, contexts, wanted)
    for i, ids, tokens, p in zip(anchors, contexts, wanted, probs, strict=True):
        out[i] = (
            ids,
            [(len(ids) - 1, t, ANCHOR_WEIGHT * q / sum(p)) for t, q in zip(tokens, p, strict=True)],
        )
    return [t for t in out if t is not None]


def next_token_probabilities(
    model: Any, pad_id: int, contexts: list[list[int]], wanted: list[list[int]], batch: int = 64
) -> list[list[float]]:
    """The model's probabilities of the ``wanted`` tokens right after each context."""
    import torch

    out: list[list[float]] = []
    model.eval()
    with torch.inference_mode():
        for start in range(0, len(contexts), batch):
            rows = contexts[start : start + batch]
            width = max(len(ids) for ids in rows)
            input_ids = torch.full((len(rows), width), pad_id)
            mask = torch.zeros((len(rows), width), dtype=torch.long)
            for row, ids in enumerate(rows):
                input_ids[row, : len(ids)] = torch.tensor(ids)
                mask[row, : len(ids)] = 1
            hidden = model.model(input_ids=input_ids, attention_mask=mask).last_hidden_state
            last = hidden[torch.arange(len(rows)), torch.tensor([len(ids) - 1 for ids in rows])]
            probs = torch.softmax(model.lm_head(last), -1)
            out += probs.gather(1, torch.tensor(wanted[start : start + batch])).tolist()
    return out


def fit(
    model: Any, tokenizer: Any, encoded: list[Targets], heldout: list[Example], config: Config, log: Any
) -> tuple[list[float], Scores]:
    """``train_default._fit``'s loop (AdamW, warm-up, cosine decay, one shuffled pass) on ready targets; the
    losses, and the held-out scores after the last step."""
    import torch

    generator = torch.Generator().manual_seed(config.seed)
    optimiser = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda s: _lr_factor(s, config))
    order = torch.randperm(len(encoded), generator=generator).tolist()
    model.train()
    losses: list[float] = []
    scores: Scores = {}
    for step in range(config.steps):
        start = step * config.batch_size % len(order)
        loss = _loss(
            model, tokenizer.pad_token_id, [encoded[i] for i in order[start : start + config.batch_size]]
        )
        losses.append(update(model, optimiser, schedule, loss))
        if (step + 1) % 100 == 0 or step == config.steps - 1:
            scores = progress(model, tokenizer, heldout, losses, step, 100, log)
    model.eval()
    return losses, scores
