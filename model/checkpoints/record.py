"""What loading a checkpoint gives: the model, its tokenizer and what the files say about them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..engine.config import ModelConfig
from ..engine.transformer import Transformer
from ..engine.vocabulary import Vocabulary

OURS = "anatomy"  # the family name of this project's own checkpoint layout


@dataclass(frozen=True)
class ChatTemplate:
    """An instruct checkpoint's chat template: its Jinja source (rendered as transformers renders it,
    inputs.render_chat), the special tokens it may name (bos_token, eos_token, ...), and how the text it
    renders becomes ids (no specials added: the template writes its own)."""

    source: str
    tokens: dict[str, str]
    encode: Callable[[str], list[int]] = field(compare=False)


@dataclass(frozen=True)
class Checkpoint:
    """A loaded, validated checkpoint (the model is in eval mode)."""

    path: Path
    config: ModelConfig
    model: Transformer
    tokenizer: Vocabulary
    card: dict
    checkpoint_id: str  # sha256 of config, tokenizer and weights: names this exact model in caches
    family: str = OURS  # this project's own layout, or the Hugging Face model_type ("marian", "bert")
    generation: dict = field(default_factory=dict)  # generation_config.json defaults (max_length, num_beams, ...)
    pooling: str = "mean"  # how a sentence embedding is pooled from the encoder's final states
    snapshot: int | None = None  # the training step whose snapshot this is; None: the final weights
    task_prefix: str = ""  # put before every sentence to translate (T5's "translate English to French: ")
    chat: ChatTemplate | None = None  # an instruct checkpoint's chat template, when its tokenizer files have one
