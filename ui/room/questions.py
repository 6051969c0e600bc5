"""Questions for the room, drawn from the view on screen (ui/room/presenter.py asks them): on the Attention page, where
the chosen cross-attention head looks most while the decoder writes the step's piece; on Why this word?, which
source word the piece depends on most (occlusion). The options are the source's words; the model's answer is
read only when the presenter asks."""

from __future__ import annotations

import numpy as np

from i18n import _, later
from model import Bundle, Interventions, Trace
from ui.room.presenter import Offer
from ui.room.store import MAX_OPTIONS
from ui.session import explanations
from viz.labels import display_piece

# Said where the question would be (presenter.offer's `why_not`), in the language of the run that shows them.
NO_CROSS = later("A room question needs cross-attention (an English sentence to look at): this model has none.")
TOO_LONG = later("A room question offers at most {n} source pieces as options; this sentence has more.", n=MAX_OPTIONS)


def option_labels(pieces: list[str]) -> list[str]:
    """The source pieces as a phone shows them, a repeated one numbered ("the", "the (2)")."""
    seen: dict[str, int] = {}
    labels = []
    for piece in pieces:
        shown = display_piece(piece)
        seen[shown] = seen.get(shown, 0) + 1
        labels.append(shown if seen[shown] == 1 else f"{shown} ({seen[shown]})")
    return labels


def attention(trace: Trace, layer: int, head: int, step: int) -> Offer | None:
    """Writing the step's piece, which source piece does cross-attention head (layer, head) look at most?"""
    if not trace.src_pieces or len(trace.src_pieces) > MAX_OPTIONS or not trace.out_pieces:
        return None
    row = min(max(step, 0), len(trace.out_pieces) - 1)
    written = display_piece(trace.out_pieces[row])
    labels = option_labels(trace.src_pieces)

    def answer() -> tuple[int, str]:
        weights = np.asarray(trace.pattern("decoder", "cross", layer)[head][row])
        best = int(weights.argmax())
        return best, _(
            "Cross-attention layer {layer}, head {head} gives it {share:.0%} of its weight.",
            layer=layer + 1,
            head=head + 1,
            share=float(weights[best]),
        )

    text = _(
        "Writing “{piece}”, which English piece does the decoder look at most "
        "(cross-attention, layer {layer}, head {head})?",
        piece=written,
        layer=layer + 1,
        head=head + 1,
    )
    return Offer(text, labels, answer)


def why(
    bundle: Bundle,
    sentence: str,
    output_ids: tuple[int, ...],
    iv: Interventions,
    step: int,
    source_pieces: list[str],
    decoder_only: bool,
    chat: bool = False,
) -> Offer | None:
    """Which source piece does the output piece at `step` depend on most: occlusion, the drop in its
    log-probability when that piece's embedding is taken away (with `chat`, a piece of the wrapped chat
    message, for a piece of the answer)."""
    if not output_ids or not source_pieces or len(source_pieces) > MAX_OPTIONS:
        return None
    step = min(max(step, 0), len(output_ids) - 1)
    written = display_piece(bundle.tokenizer.pieces(list(output_ids))[step])
    labels = option_labels(source_pieces)

    def answer() -> tuple[int, str]:
        row = explanations.attribution(bundle, sentence, output_ids, "occlusion", iv, pieces=(step,), chat=chat)[0]
        best = int(np.asarray(row).argmax())
        return best, _(
            "Occlusion: taking “{taken}” away lowers the log-probability of “{written}” most (by {drop:.2f}).",
            taken=labels[best],
            written=written,
            drop=float(row[best]),
        )

    if decoder_only:
        text = _("Which prompt piece made the model write “{written}”?", written=written)
    else:
        text = _("Which English piece made the model write “{written}”?", written=written)
    return Offer(text, labels, answer)
