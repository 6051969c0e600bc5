"""Named training setups: `tiny` for tests (under a minute), `default` for the shipped model, `base`
for the paper's base model on a machine with GPUs (same corpus as `default`)."""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.config import ModelConfig


@dataclass(frozen=True)
class Preset:
    """A model shape plus the data and optimisation settings that train it."""

    model: ModelConfig
    vocab_size: int  # SentencePiece pieces requested (256 byte pieces included)
    n_train: int  # generated training pairs
    n_valid: int
    n_test: int
    max_tokens: int  # padded tokens per batch (source or target side, whichever is longer)
    warmup: int  # steps of linear learning-rate warm-up
    lr_factor: float  # lr = factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)
    label_smoothing: float
    budget_minutes: float  # wall-clock training budget
    valid_every: int  # steps between validations
    valid_sentences: int  # validation sentences decoded each time


PRESETS = {
    "tiny": Preset(
        model=ModelConfig(
            d_model=64, n_heads=4, d_ff=128, n_encoder_layers=1, n_decoder_layers=1, dropout=0.0, max_len=64
        ),
        vocab_size=600,
        n_train=3000,
        n_valid=100,
        n_test=100,
        max_tokens=1200,
        warmup=60,
        lr_factor=1.0,
        label_smoothing=0.1,
        budget_minutes=0.5,
        valid_every=100,
        valid_sentences=100,
    ),
    "default": Preset(
        model=ModelConfig(
            d_model=128, n_heads=4, d_ff=512, n_encoder_layers=3, n_decoder_layers=3, dropout=0.1, max_len=96
        ),
        vocab_size=1200,
        n_train=300_000,
        n_valid=2000,
        n_test=2000,
        max_tokens=2500,
        warmup=800,
        lr_factor=0.5,
        label_smoothing=0.1,
        budget_minutes=60,
        valid_every=500,
        valid_sentences=500,
    ),
    # "Attention Is All You Need", base: d_model 512, 8 heads, 6 + 6 layers, d_ff 2048, warm-up 4000,
    # about 25,000 target tokens per step. Here a step holds max_tokens x ranks x --accumulate padded
    # tokens: 4 GPUs with 6,250 each, or one process with --accumulate 4.
    "base": Preset(
        model=ModelConfig(
            d_model=512, n_heads=8, d_ff=2048, n_encoder_layers=6, n_decoder_layers=6, dropout=0.1, max_len=96
        ),
        vocab_size=1200,
        n_train=300_000,
        n_valid=2000,
        n_test=2000,
        max_tokens=6250,
        warmup=4000,
        lr_factor=1.0,
        label_smoothing=0.1,
        budget_minutes=60,
        valid_every=1000,
        valid_sentences=500,
    ),
}
