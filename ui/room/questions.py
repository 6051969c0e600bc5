"""Questions for the room, drawn from the view on screen (ui/room/presenter.py asks them): on the Attention page, where
the chosen cross-attention head looks most while the decoder writes the step's piece; on Why this word?, which
source word the piece depends on most (occlusion). The options are the source's words; the model's answer is
read only when the presenter asks."""

from __future__ import annotations

import numpy as np

from model import Bundle, Interventions, Trace
from ui.room.presenter import Offer
from ui.room.store import MAX_OPTIONS
from ui.session import explanations
from viz.labels import display_piece

NO_CROSS = "A room question needs cross-attention (an English sentence to look at): this model has none."
TOO_LONG = f"A room question offers at most {MAX_OPTIONS} source pieces as options; this sentence has more."


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
        return best, f"Cross-attention layer {layer + 1}, head {head + 1} gives it {weights[best]:.0%} of its weight."

    return Offer(
        f"Writing “{written}”, which English piece does the decoder look at most "
        f"(cross-attention, layer {layer + 1}, head {head + 1})?",
        labels,
        answer,
    )


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
        return best, (
            f"Occlusion: taking “{labels[best]}” away lowers the log-probability of “{written}” most "
            f"(by {float(row[best]):.2f})."
        )

    source = "prompt" if decoder_only else "English"
    return Offer(f"Which {source} piece made the model write “{written}”?", labels, answer)
