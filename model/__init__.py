"""The engine: a from-scratch encoder-decoder Transformer that records every stage."""

from .bundle import Beam, Bundle, EncodeResult, Step, TranslationResult, cosine, load_bundle
from .config import ModelConfig
from .errors import AnatomyError, CheckpointError, InputError
from .interventions import DecodeOptions, Interventions
from .trace import Trace

__all__ = ["AnatomyError", "Beam", "Bundle", "CheckpointError", "DecodeOptions", "EncodeResult", "InputError",
           "Interventions", "ModelConfig", "Step", "Trace", "TranslationResult", "cosine", "load_bundle"]
