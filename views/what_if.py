"""The Design choices page's what-ifs: its text read again with the sidebar's switches changed (the page's own run
when nothing changes), through the model directly (a notebook) or through the app's caches of the same calls."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from model import Bundle, DecodeOptions, EncodeResult, Interventions, Trace, TranslationResult
from model.analysis import experiments
from model.engine import stages
from views.scene import Scene


def _empty_row(bundle: Bundle, sentence: str, iv: Interventions, output_ids: tuple[int, ...]) -> Trace:
    """The all-padding row of experiments.empty_source."""
    return experiments.empty_source(bundle, sentence, iv, output_ids)[1]


def _output_text(bundle: Bundle, sentence: str, iv: Interventions, options: DecodeOptions, chat: bool) -> str:
    """The translation alone, or a decoder-only model's continuation (with `chat`, its answer), with no trace."""
    if bundle.capabilities.decoder_only:
        return bundle.generate(sentence, iv, options, trace=False, chat=chat).translation
    return bundle.translation(sentence, iv, options)


@dataclass(frozen=True)
class Passes:
    """How the page's what-ifs run the model: directly (a notebook), or through the app's caches of the same calls
    (ui/session/engine.py, explanations.py, experiments.py)."""

    encode: Callable[[Bundle, str, Interventions], EncodeResult]
    teacher_forced: Callable[[Bundle, str, tuple[int, ...], Interventions, bool], Trace]
    teacher_forced_at: Callable[[Bundle, str, tuple[int, ...], str, Interventions, bool], np.ndarray]
    empty_source: Callable[[Bundle, str, Interventions, tuple[int, ...]], Trace]  # the all-padding row
    output_text: Callable[[Bundle, str, Interventions, DecodeOptions, bool], str]  # the output's text alone


DIRECT = Passes(
    encode=lambda bundle, sentence, iv: bundle.encode(sentence, iv),
    teacher_forced=lambda bundle, sentence, ids, iv, chat: bundle.teacher_forced(sentence, ids, iv, chat),
    teacher_forced_at=lambda bundle, sentence, ids, name, iv, chat: bundle.teacher_forced_at(
        sentence, ids, name, iv, chat
    ),
    empty_source=_empty_row,
    output_text=_output_text,
)


def trace(scene: Scene) -> Trace:
    """The page's own trace: the translation's, the continuation's or the encoding's."""
    recorded = scene.result.trace if scene.result is not None else None
    if recorded is None:
        raise ValueError("the Design choices page draws from the sentence's run, its trace recorded")
    return recorded


def stack(scene: Scene) -> str:
    """The stack that reads the text first: the encoder, or a decoder-only model's decoder."""
    return "decoder" if scene.decoder_only else "encoder"


def pieces(scene: Scene) -> list[str]:
    """The pieces that stack reads."""
    return trace(scene).tgt_pieces if scene.decoder_only else trace(scene).src_pieces


def layer(scene: Scene) -> int:
    """The sidebar's layer, inside that stack."""
    return min(scene.controls.layer, trace(scene).n_layers(stack(scene)) - 1)


def output_ids(scene: Scene) -> tuple[int, ...]:
    """The page's output pieces (none for an encoder-only model)."""
    return tuple(scene.result.output_ids) if isinstance(scene.result, TranslationResult) else ()


@dataclass(frozen=True)
class WhatIf:
    """The page's text read again with the sidebar's switches changed (the page's own run when nothing changes)."""

    scene: Scene
    passes: Passes = DIRECT

    def same(self, **changes: Any) -> bool:
        """The changes leave the sidebar's switches as they are."""
        ctl = self.scene.controls
        return ctl.interventions(**changes) == ctl.interventions()

    def first_stack_trace(self, **changes: Any) -> Trace:
        """The first stack's recorded stages with the switches changed: the encoder's, or for a decoder-only
        model the same text and continuation read again."""
        scene, ctl = self.scene, self.scene.controls
        if self.same(**changes):
            return trace(scene)
        iv = ctl.interventions(**changes)
        if scene.bundle.capabilities.encoder:
            return self.passes.encode(scene.bundle, ctl.sentence, iv).trace
        return self.passes.teacher_forced(scene.bundle, ctl.sentence, output_ids(scene), iv, ctl.chat)

    def first_stack_pattern(self, **changes: Any) -> np.ndarray:
        """The first stack's self-attention weights at the sidebar's layer (heads, queries, keys) with the
        switches changed: a decoder-only model's pass over the same text stops at that layer."""
        scene, ctl = self.scene, self.scene.controls
        if self.same(**changes) or scene.bundle.capabilities.encoder:
            return self.first_stack_trace(**changes).pattern(stack(scene), "self", layer(scene))
        name = stages.attention(stack(scene), "self", layer(scene), "pattern")
        iv = ctl.interventions(**changes)
        return self.passes.teacher_forced_at(scene.bundle, ctl.sentence, output_ids(scene), name, iv, ctl.chat)[0]

    def output_text(self, **changes: Any) -> str:
        """The translation (a decoder-only model's continuation) with the switches changed."""
        scene, ctl = self.scene, self.scene.controls
        if self.same(**changes) and isinstance(scene.result, TranslationResult):
            return scene.result.translation
        iv = ctl.interventions(**changes)
        return self.passes.output_text(scene.bundle, ctl.sentence, iv, ctl.options(), ctl.chat)

    def embedding(self, **changes: Any) -> np.ndarray:
        """The sentence embedding with the switches changed."""
        ctl = self.scene.controls
        return self.passes.encode(self.scene.bundle, ctl.sentence, ctl.interventions(**changes)).embedding
