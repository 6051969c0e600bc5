"""The output the Why this word? page explains (pages/8_why.py), as its parts read it (ui/parts/attribution.py,
lens.py, patching.py): the output's pieces and the source's, the output's own trace, what the page computes
unasked, and the words the page uses for them."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from model import Bundle
from model.engine.interventions import Interventions
from model.results import Trace
from ui.page.markup import md
from ui.page.start import Page
from ui.session.urlstate import Controls
from viz.labels import display_piece, reads_bytes
from viz.style import Style


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
    piece_word: str  # an output piece, capitalised: "Output piece", "New piece" or "Answer piece"
    source_word: str  # "source" or "prompt"
    output_word: str  # "translation", "continuation" or "answer"

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

    @cached_property
    def byte_level(self) -> bool:
        """Whether the texts' pieces are byte-level BPE's (`reads_bytes`): how every piece of them reads."""
        return reads_bytes([*self.src_pieces, *self.out_pieces])

    def shown(self, piece: str) -> str:
        """A piece of the texts as markdown shows it, literally (`display_piece`)."""
        return md(display_piece(piece, self.byte_level))
