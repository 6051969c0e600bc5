"""A tiny checkpoint built by the tests themselves: random weights, a real SentencePiece model."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import torch

from model.checkpoints.checkpoint import save_checkpoint
from model.engine.config import ModelConfig
from model.engine.tokenizer import Tokenizer, normalize_source
from model.engine.transformer import Transformer

PAIRS = [
    ("The cat sleeps.", "Le chat dort."),
    ("The dog eats an apple.", "Le chien mange une pomme."),
    ("I see the white bird.", "Je vois l'oiseau blanc."),
    ("The small girl sees a white bird.", "La petite fille voit un oiseau blanc."),
    ("My sisters arrived yesterday.", "Mes sœurs sont arrivées hier."),
    ("Do you see the cat?", "Est-ce que vous voyez le chat ?"),
    ("I do not have a car.", "Je n'ai pas de voiture."),
    ("The teacher gives the answer to the students.", "Le professeur donne la réponse aux étudiants."),
    ("We are happy.", "Nous sommes heureux."),
    ("I drink water.", "Je bois de l'eau."),
    ("The old man reads a book in the garden.", "Le vieil homme lit un livre dans le jardin."),
    ("They will go to the school tomorrow.", "Ils iront à l'école demain."),
]

TINY = ModelConfig(
    vocab_size=320, d_model=32, n_heads=4, d_ff=64, n_encoder_layers=2, n_decoder_layers=2, dropout=0.0, max_len=48
)


def build_tiny_checkpoint(path: Path, config: ModelConfig = TINY, seed: int = 0) -> Path:
    """Write a checkpoint with a tokenizer trained on PAIRS and seeded random weights."""
    lines = [normalize_source(en).text for en, _ in PAIRS] + [fr for _, fr in PAIRS]
    tokenizer = Tokenizer.train(lines * 4, config.vocab_size)
    config = ModelConfig.from_dict({**config.to_dict(), "vocab_size": tokenizer.vocab_size})
    torch.manual_seed(seed)
    model = Transformer(config)
    known = sorted({w for en, _ in PAIRS for w in normalize_source(en).text.split()})
    save_checkpoint(path, model, tokenizer, {"name": "tiny test fixture", "known_words": known})
    return Path(path)


@contextmanager
def offered(folders: Iterable[Path], checkpoint: Path | str = "") -> Iterator[None]:
    """Model folders offered in the Model menu ($ANATOMY_MODELS) and the default model ($ANATOMY_CHECKPOINT, ''
    for the shipped one) inside the block."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ANATOMY_CHECKPOINT", str(checkpoint))
        patch.setenv("ANATOMY_MODELS", ":".join(str(folder) for folder in folders))
        yield
