"""The output the Why this word? page explains (pages/8_why.py), as its parts read it (ui/parts/attribution.py,
lens.py, patching.py): the output's pieces and the source's, the output's own trace, what the page computes
unasked, and the words the page uses for them and for the attribution methods."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import i18n
from i18n import N_, _
from model import Bundle
from model.analysis.attribution import IG_STEPS
from model.engine.interventions import Interventions
from model.results import Trace
from ui.page.start import Page
from views.controls import Controls
from views.markdown import md
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

    page: Page
    iv: Interventions  # the sidebar's switches
    out_ids: tuple[int, ...]
    out_pieces: list[str]
    src_pieces: list[str]  # the source sentence's pieces; a decoder-only model's prompt's
    own_trace: Trace | None  # the output's own trace: attention, rollout and the lens read it instead of a pass
    spare: float  # what the page computes unasked beside its translation or continuation
    words: Words  # what the page calls the pieces, the source and the output (`words`)

    @property
    def bundle(self) -> Bundle:
        return self.page.bundle

    @property
    def ctl(self) -> Controls:
        return self.page.controls

    @property
    def style(self) -> Style:
        return self.page.style

    @property
    def decoder_only(self) -> bool:
        return self.page.decoder_only

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
