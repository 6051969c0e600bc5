"""A page's main result, computed directly: what the app's cached engine calls (ui/session/engine.py) hand a page,
for a notebook."""

from __future__ import annotations

from model import Bundle, EncodeResult, InputError, TranslationResult
from views.controls import Controls


def main_result(bundle: Bundle, controls: Controls, trace: bool = True) -> TranslationResult | EncodeResult:
    """What the model does with the controls' text: an encoder-only model's encoding, a decoder-only model's
    continuation (with `chat`, its answer), else the translation; an error the text causes is the engine's own."""
    iv = controls.interventions()
    if bundle.capabilities.encoder_only:
        return bundle.encode_batch([controls.sentence], iv)[0]
    if bundle.capabilities.decoder_only:
        return bundle.generate(controls.sentence, iv, controls.options(), trace=trace, chat=controls.chat)
    if controls.chat:
        raise InputError(f"{bundle.name} translates a sentence: it reads no chat message.")
    return bundle.translate(controls.sentence, iv, controls.options(), trace=trace)
