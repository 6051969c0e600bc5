"""A page's main result, computed directly: what the app's cached engine calls (ui/session/engine.py) hand a page,
for a notebook, which keeps its last few results (a notebook draws several pages of one text)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

from model import Bundle, EncodeResult, InputError, Interventions, TranslationResult
from views.controls import Controls

KEPT = 8  # results kept: a notebook's pages of one or two texts under a few switches
_RESULTS: OrderedDict[Hashable, TranslationResult | EncodeResult] = OrderedDict()
_LOCK = threading.Lock()


def main_result(
    bundle: Bundle, controls: Controls, trace: bool = True, **changes: Any
) -> TranslationResult | EncodeResult:
    """What the model does with the controls' text: an encoder-only model's encoding, a decoder-only model's
    continuation (with `chat`, its answer), else the translation; an error the text causes is the engine's own.
    `changes` change the controls' switches (`hide_first=True`). The last KEPT results are kept, keyed on the
    model, the text and every switch."""
    iv = controls.interventions(**changes)
    key = (bundle.checkpoint_id, controls.sentence, iv, controls.options(), controls.chat, trace)
    with _LOCK:
        if key in _RESULTS:
            _RESULTS.move_to_end(key)
            return _RESULTS[key]
    result = _computed(bundle, controls, trace, iv)
    with _LOCK:
        _RESULTS[key] = result
        while len(_RESULTS) > KEPT:
            _RESULTS.popitem(last=False)
    return result


def _computed(bundle: Bundle, controls: Controls, trace: bool, iv: Interventions) -> TranslationResult | EncodeResult:
    if bundle.capabilities.encoder_only:
        return bundle.encode_batch([controls.sentence], iv)[0]
    if bundle.capabilities.decoder_only:
        return bundle.generate(controls.sentence, iv, controls.options(), trace=trace, chat=controls.chat)
    if controls.chat:
        raise InputError(f"{bundle.name} translates a sentence: it reads no chat message.")
    return bundle.translate(controls.sentence, iv, controls.options(), trace=trace)
