"""The output the Why this word? page explains, as its views read it (views/attribution.py, lens.py, patching.py):
the output's pieces and the source's, the output's own trace, the work the page computes unasked, the words the
page uses for them and for the attribution methods, and the parts of the page that wait for a button when
costly."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

import i18n
from i18n import N_, _
from model import Bundle, TranslationResult
from model.analysis.attribution import IG_STEPS
from model.engine.interventions import Interventions
from model.results import GenerationResult, Trace
from views.budget import spare_work
from views.controls import Controls
from views.markdown import md
from views.panels import Panel
from views.scene import Scene
from viz.labels import display_piece, reads_bytes
from viz.style import Style


class Words(NamedTuple):
    """What the page calls the output's pieces, its source and the output, in the language of this run."""

    piece: str  # an output piece, capitalised: "Output piece", "New piece" or "Answer piece"
    a_piece: str  # the same in a sentence: "output piece", "new piece" or "answer piece"
    pieces: str  # and more than one: "output pieces", "new pieces" or "answer pieces"
    source: str  # "source" or "prompt"
    output: str  # "translation", "continuation" or "answer"


def words(chat: bool, decoder_only: bool) -> Words:
    """The words of a chat answer, of a decoder-only model's continuation or of a translation."""
    if chat:  # a chat message: the prompt is the wrapped message, the output its answer
        return Words(_("Answer piece"), _("answer piece"), _("answer pieces"), _("prompt"), _("answer"))
    if decoder_only:
        return Words(_("New piece"), _("new piece"), _("new pieces"), _("prompt"), _("continuation"))
    return Words(_("Output piece"), _("output piece"), _("output pieces"), _("source"), _("translation"))


def definitions(decoder_only: bool, padding: bool) -> dict[str, str]:
    """What each attribution method measures, in the page's words (model.analysis.attribution), in the language
    of this run."""
    if decoder_only:
        attention = _(
            "the last decoder layer's self-attention from the position that chose the piece, averaged "
            "over its heads, on the prompt's pieces (the rest of its weight is on the new pieces before)"
        )
        rollout = _(
            "attention rollout: the last layer's self-attention times the layers' below it, layer after "
            "layer, each half attention and half the piece itself; on the prompt's pieces"
        )
        gradient = _(
            "input × gradient: each prompt piece's token embedding times the gradient of the piece's "
            "log-probability with respect to it (red raises it, blue lowers it)"
        )
    else:
        attention = _("the last decoder layer's cross-attention, averaged over its heads")
        rollout = _(
            "attention rollout: the last layer's cross-attention times the encoder's self-attention, "
            "layer after layer, each half attention and half the piece itself"
        )
        gradient = _(
            "input × gradient: each source piece's token embedding times the gradient of the piece's "
            "log-probability with respect to it (red raises it, blue lowers it)"
        )
    return {
        "attention": attention,
        "rollout": rollout,
        "gradient": gradient,
        "integrated-gradients": _integrated(decoder_only, padding),
        "occlusion": _occlusion(decoder_only, padding),
    }


def _integrated(decoder_only: bool, padding: bool) -> str:
    """What integrated gradients measure (`definitions`)."""
    if decoder_only and padding:
        return _(
            "integrated gradients: input × the gradient averaged along the way from a sentence of padding pieces "
            "to the real one ({steps} steps); a row sums to how much the prompt raises that piece's "
            "log-probability over a sentence of padding pieces as long",
            steps=IG_STEPS,
        )
    if decoder_only:
        return _(
            "integrated gradients: input × the gradient averaged along the way from a zero embedding to the real "
            "one ({steps} steps); a row sums to how much the prompt raises that piece's log-probability over an "
            "empty one",
            steps=IG_STEPS,
        )
    if padding:
        return _(
            "integrated gradients: input × the gradient averaged along the way from a sentence of padding pieces "
            "to the real one ({steps} steps); a row sums to how much the sentence raises that piece's "
            "log-probability over a sentence of padding pieces as long",
            steps=IG_STEPS,
        )
    return _(
        "integrated gradients: input × the gradient averaged along the way from a zero embedding to the real one "
        "({steps} steps); a row sums to how much the sentence raises that piece's log-probability over an empty one",
        steps=IG_STEPS,
    )


def _occlusion(decoder_only: bool, padding: bool) -> str:
    """What occlusion measures (`definitions`)."""
    if decoder_only and padding:
        return _(
            "occlusion: how much the piece's log-probability drops when that one prompt piece's embedding is set "
            "to the padding piece’s"
        )
    if decoder_only:
        return _(
            "occlusion: how much the piece's log-probability drops when that one prompt piece's embedding is set "
            "to zero"
        )
    if padding:
        return _(
            "occlusion: how much the piece's log-probability drops when that one source piece's embedding is set "
            "to the padding piece’s"
        )
    return _(
        "occlusion: how much the piece's log-probability drops when that one source piece's embedding is set to zero"
    )


# Each method's name as a label (the line of shaded text, the picker, the table's title): its code, said in the
# language of this run
LABELS = {
    "attention": N_("attention"),
    "rollout": N_("rollout"),
    "gradient": N_("gradient"),
    "integrated-gradients": N_("integrated-gradients"),
    "occlusion": N_("occlusion"),
}
# Each method's name in a sentence
NAMES = {
    "attention": N_("attention"),
    "rollout": N_("rollout"),
    "gradient": N_("input × gradient"),
    "integrated-gradients": N_("integrated gradients"),
    "occlusion": N_("occlusion"),
}


def method_label(method: str) -> str:
    """A method's label in the language of this run (its code in English)."""
    return i18n._(LABELS.get(method, method))


def method_name(method: str) -> str:
    """A method's name in a sentence, in the language of this run."""
    return i18n._(NAMES.get(method, method))


def both(items: list[str]) -> str:
    """Names joined by "and", as the language joins them ("a and b and c")."""
    joined = items[0] if items else ""
    for item in items[1:]:
        joined = _("{first} and {second}", first=joined, second=item)
    return joined


@dataclass(frozen=True)
class Explained:
    """One output of the page's model (a translation, a continuation or an answer), piece by piece."""

    scene: Scene
    out_ids: tuple[int, ...]
    out_pieces: list[str]
    src_pieces: list[str]  # the source sentence's pieces; a decoder-only model's prompt's
    own_trace: Trace | None  # the output's own trace: attention, rollout and the lens read it instead of a pass
    spare: float  # what the page computes unasked beside its translation or continuation
    words: Words  # what the page calls the pieces, the source and the output (`words`)

    @property
    def bundle(self) -> Bundle:
        """The model."""
        return self.scene.bundle

    @property
    def ctl(self) -> Controls:
        """The run's controls."""
        return self.scene.controls

    @cached_property
    def iv(self) -> Interventions:
        """The sidebar's switches."""
        return self.ctl.interventions()

    @property
    def style(self) -> Style:
        """The figures' looks."""
        return self.scene.style

    @property
    def decoder_only(self) -> bool:
        """A model without an encoder: the source is the prompt, the output its continuation."""
        return self.scene.decoder_only

    @property
    def yours(self) -> str:
        """The person's own text, as a sentence names it: "your prompt" or "your sentence"."""
        return _("your prompt") if self.decoder_only else _("your sentence")

    @cached_property
    def byte_level(self) -> bool:
        """Whether the texts' pieces are byte-level BPE's (`reads_bytes`): how every piece of them reads."""
        return reads_bytes([*self.src_pieces, *self.out_pieces])

    def shown(self, piece: str) -> str:
        """A piece of the texts as markdown shows it, literally (`display_piece`)."""
        return md(display_piece(piece, self.byte_level))

    def key(self, name: str) -> str:
        """A panel's key on the page (the scene's prefix before it)."""
        return self.scene.key(name)

    def figure(self, draw: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """A viz function's figure (or shaded HTML), drawn the scene's way."""
        return self.scene.figure(draw, *args, **kwargs)


def explained(scene: Scene, spare: Callable[[Bundle, int], float] = spare_work) -> Explained:
    """What the page explains of the scene's result (a translation, a continuation or an answer); `spare` says
    what the page computes unasked beside an output of so many pieces (the app's own, which tests can set)."""
    result = scene.result
    if not isinstance(result, TranslationResult):
        raise ValueError(f"{scene.bundle.name} writes no output to explain")
    tokenizer = scene.bundle.tokenizer
    out_ids = tuple(result.output_ids)
    if isinstance(result, GenerationResult):  # a decoder-only model's continuation: its source is the prompt
        src_pieces = tokenizer.pieces(list(result.prompt_ids))
    else:
        src_pieces = result.trace.src_pieces if result.trace is not None else []
    return Explained(
        scene,
        out_ids,
        tokenizer.pieces(list(out_ids)),
        src_pieces,
        result.trace,
        spare(scene.bundle, len(out_ids)),
        words(scene.chat, scene.decoder_only),
    )


@dataclass(frozen=True)
class Ask:
    """A part of the page that waits for a button when it costs more than the page computes unasked: its work,
    the button's label and key, and what the page says instead of it (all said already, in the run's
    language)."""

    cost: float
    label: str
    key: str
    note: str

    def eager(self, spare: float) -> bool:
        """Whether the part is computed unasked (as the page does on its first run, nothing cached)."""
        return self.cost <= spare

    def instead(self, why: Explained) -> Panel:
        """What the page says in place of the part before the button is clicked."""
        return Panel(why.key(self.key), caption=self.note)
