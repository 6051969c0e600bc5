"""What a decoding will hold, in bytes, known before it starts: its trace, which is most of it (SmolLM2-135M's
continuation of 20 pieces after a chat prompt of 46 holds 88.6 MiB, 85.7 of them its trace, 2.9 its key-value
cache), so that the line of decodings (ui/session/fair.py) starts no more of them at once than its byte budget
holds.

Every array a trace records is shaped by constants and by at most two lengths at once (queries and keys), each the
source's or the output's length or their sum, so its bytes are a polynomial of degree two in (source, output). Six
small recorded passes per model fit it exactly (`_fit`, once per checkpoint in the process, a few hundredths of a
second on SmolLM2); the estimate then adds MARGIN for what the result holds besides its trace (the cache, each
step's candidates, the pieces' strings).
"""

from __future__ import annotations

import threading

import numpy as np

from model import Bundle
from model.engine.interventions import DecodeOptions, Interventions
from ui.session.cache import held_bytes

MARGIN = 1.15  # measured: a real result holds 1.02-1.10 times its trace's bytes (tests/app/test_fair.py)
# (source, output) lengths of the fitting passes: six points, so that the six coefficients of a degree-two
# polynomial in two lengths are found exactly
_POINTS = ((4, 4), (8, 4), (4, 8), (8, 8), (12, 4), (4, 12))
_FITS: dict[str, np.ndarray] = {}
_FITTING = threading.Lock()


def _terms(source: int, output: int) -> np.ndarray:
    return np.array([1.0, source, output, source * source, source * output, output * output])


def _fit(bundle: Bundle) -> np.ndarray:
    """The coefficients of a trace's bytes in (source length, output length), from six recorded passes, each
    alone (a batch would pad its rows to the longest)."""
    ids = bundle.read_input("the cat sees the dog and the bird " * 3)
    filler = (ids * (1 + 12 // max(1, len(ids))))[:12]
    held = [
        held_bytes(bundle.teacher_forced_rows([filler[:source]], [filler[:output]], Interventions())[0].tensors)
        for source, output in _POINTS
    ]
    return np.linalg.solve(np.stack([_terms(s, o) for s, o in _POINTS]), np.array(held, dtype=float))


def trace_bytes(bundle: Bundle, source: int, output: int) -> int:
    """The bytes of the trace of `source` pieces read and `output` written, by the model's fitted polynomial."""
    with _FITTING:  # one fit per model, whoever asks first; the others wait for it
        if bundle.checkpoint_id not in _FITS:
            _FITS[bundle.checkpoint_id] = _fit(bundle)
        coefficients = _FITS[bundle.checkpoint_id]
    return max(0, round(float(coefficients @ _terms(source, output))))


def decoding_bytes(bundle: Bundle, sentence: str, options: DecodeOptions, chat: bool) -> int:
    """What decoding `sentence` under `options` will hold at most: its trace at the longest output it may write,
    times MARGIN."""
    source = len(bundle.read_input(sentence, options.max_len, chat))
    written = bundle.max_output if bundle.capabilities.encoder else bundle.max_new
    longest = written(source, options)
    return round(MARGIN * trace_bytes(bundle, source, longest))
