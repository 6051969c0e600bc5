"""Transformer Anatomy's model: a from-scratch encoder-decoder Transformer that records every stage.

    engine/       the Transformer in torch (config, layers, attention, hook points, decoding, tokenizers)
    checkpoints/  files -> engine (our layout, weights, snapshots, catalog, Hugging Face families)
    analysis/     what pages measure on top of a loaded model
    training/     corpus, training, presets, recipes, evaluation
    bundle.py     the model in use: a loaded checkpoint that translates and encodes
    results.py    what a call found out, as plain data (no torch)

Importing this package imports no torch: the names that need it (Bundle, load_bundle) load their
module when first used, so viz/ can import the results without the engine.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .engine.config import ModelConfig
from .engine.draws import Draw, Sampling
from .engine.interventions import DecodeOptions, Interventions
from .errors import AnatomyError, CheckpointError, InputError
from .results import Beam, EncodeResult, Step, Trace, TranslationResult, cosine

if TYPE_CHECKING:
    from .bundle import Bundle, load_bundle

_NEEDS_TORCH = {"Bundle": "bundle", "load_bundle": "bundle"}

__all__ = [
    "AnatomyError",
    "Beam",
    "Bundle",
    "CheckpointError",
    "DecodeOptions",
    "Draw",
    "EncodeResult",
    "InputError",
    "Interventions",
    "ModelConfig",
    "Sampling",
    "Step",
    "Trace",
    "TranslationResult",
    "cosine",
    "load_bundle",
]


def __getattr__(name: str) -> Any:
    if name in _NEEDS_TORCH:
        return getattr(importlib.import_module(f".{_NEEDS_TORCH[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
