"""Build small transformers models from scratch: a byte-level BPE tokenizer with a chat template and a
tiny Llama. Used by the project's tests and by the script that trains the embedded default model."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
SPECIAL_TOKENS = ["<pad>", "<|end|>", "<|user|>", "<|assistant|>", "<|system|>"]


def train_tokenizer(texts: Iterable[str], vocab_size: int = 600, split_digits: bool = False) -> Any:
    """A byte-level BPE trained on ``texts``, wrapped as a PreTrainedTokenizerFast with a chat template.

    ``split_digits`` makes every digit its own token, so that numbers a model never saw whole still
    read as digits it knows.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False)
    if split_digits:
        core.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Digits(individual_digits=True), byte_level]
        )
    else:
        core.pre_tokenizer = byte_level
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    core.train_from_iterator(texts, trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", eos_token="<|end|>", padding_side="left"
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def build_model(
    tokenizer: Any, hidden: int = 64, layers: int = 2, heads: int = 4, seed: int = 0, tie: bool = True
) -> Any:
    """A randomly initialised LlamaForCausalLM sized for the tokenizer (deterministic for a seed).

    Untrained and tied, such a model echoes its last input token; ``tie=False`` gives varied output.
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=hidden * 4,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=1024,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
        tie_word_embeddings=tie,
    )
    return LlamaForCausalLM(config)


def answer_examples(tokenizer: Any, pairs: Sequence[tuple[str, str]]) -> list[tuple[list[int], int]]:
    """Token ids of ``chat(prompt) + answer + <|end|>`` and where the answer starts, for training."""
    examples = []
    for prompt, answer in pairs:
        context = tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
        )
        ids = tokenizer(context, add_special_tokens=False)["input_ids"]
        target = tokenizer(answer + "<|end|>", add_special_tokens=False)["input_ids"]
        examples.append((list(ids) + list(target), len(ids)))
    return examples


def fit(
    model: Any,
    tokenizer: Any,
    pairs: Sequence[tuple[str, str]],
    steps: int,
    batch_size: int = 16,
    lr: float = 3e-3,
    seed: int = 0,
) -> list[float]:
    """Teach ``model`` to answer each prompt with its paired answer (loss on the answer tokens only)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    examples = answer_examples(tokenizer, pairs)
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    losses = []
    for _ in range(steps):
        picks = torch.randint(len(examples), (min(batch_size, len(examples)),), generator=generator).tolist()
        batch = [examples[i] for i in picks]
        width = max(len(ids) for ids, _ in batch)
        input_ids = torch.full((len(batch), width), tokenizer.pad_token_id)
        labels = torch.full((len(batch), width), -100)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for row, (ids, start) in enumerate(batch):
            input_ids[row, : len(ids)] = torch.tensor(ids)
            labels[row, start : len(ids)] = torch.tensor(ids[start:])
            mask[row, : len(ids)] = 1
        loss = model(input_ids=input_ids, attention_mask=mask, labels=labels).loss
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    model.eval()
    return losses


def save(model: Any, tokenizer: Any, directory: str | Path) -> Path:
    directory = Path(directory)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory
