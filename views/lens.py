"""The Why this word? page's logit lens, as panels: what each decoder layer would already write for the output
piece on show, as a table of first candidates, and for every output piece as a heatmap (on a button when
costly). The lens kept small (`LensView`) is what the app caches (ui/session/explanations.py) and what `panels`
computes directly, as a notebook gets the page."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from i18n import _, n_, sentences
from model import Bundle
from model.analysis import logit_lens
from views.explained import Ask, Explained
from views.panels import Panel
from viz.explain import lens_heatmap, lens_table
from viz.lengths import Span

LENS_TOP = 5  # candidates per layer in the lens table


@dataclass(frozen=True)
class LensView:
    """The logit lens, kept small: (layers, output pieces) probability of the piece the model wrote,
    and each layer's LENS_TOP first candidates per output piece with their probabilities."""

    final: np.ndarray  # (L, T)
    top_pieces: list[list[list[str]]]  # [L][T][LENS_TOP]
    top_probs: np.ndarray  # (L, T, LENS_TOP)

    @property
    def firsts(self) -> list[list[str]]:
        """Each layer's first choice per output piece."""
        return [[candidates[0] for candidates in row] for row in self.top_pieces]

    def top_pieces_at(self, piece: int) -> list[list[str]]:
        """[L][LENS_TOP]: each layer's first candidates for one output piece."""
        return [row[piece] for row in self.top_pieces]

    def candidates(self, piece: int) -> tuple[list[list[str]], np.ndarray]:
        """Each layer's first candidates for one output piece (of the view's), with their probabilities."""
        return self.top_pieces_at(piece), self.top_probs[:, piece]


def lens_view(
    bundle: Bundle, log_probs: np.ndarray, output_ids: Sequence[int], pieces: Sequence[int] | None = None
) -> LensView:
    """`model.analysis.logit_lens`'s (L, T, vocabulary) log-probabilities of `output_ids` (or of its `pieces`
    alone, in that order), kept small."""
    lens = torch.from_numpy(log_probs)
    wanted = list(output_ids) if pieces is None else [output_ids[p] for p in pieces]
    final = lens[:, torch.arange(len(wanted)), wanted].exp().numpy()
    probs, ids = lens.topk(LENS_TOP, dim=-1)
    return LensView(
        final, [[bundle.tokenizer.pieces(row.tolist()) for row in layer] for layer in ids], probs.exp().numpy()
    )


def cost(why: Explained) -> float:
    """What every output piece's lens costs: each layer x piece put through the output projection (layers x
    pieces x vocabulary x d_model products); the table needs the piece on show alone, a piece's share of that."""
    cfg = why.bundle.config
    return float(cfg.n_decoder_layers * len(why.out_ids) * cfg.vocab_size * cfg.d_model)


def table(why: Explained, step: int, top_pieces: list[list[str]], top_probs: np.ndarray) -> Panel:
    """The piece on show: each decoder layer's first candidates with their probabilities, under the section's
    heading."""
    cfg = why.bundle.config
    after = (
        _("its final norm, the rescale by 1/√d_model and the output projection")
        if cfg.rescale_output
        else _("its final norm and the output projection")
        if cfg.norm_first
        else _("the output projection")
    )
    caption = sentences(
        _(
            "{label} {n}: each decoder layer's output put through what the model does after its last layer "
            "({after}), and its first candidates with their probabilities; the piece the model wrote is checked.",
            label=why.words.piece,
            n=step + 1,
            after=after,
        ),
        _("The rows are the decoder's positions that chose the new pieces: the prompt's last, then each new piece's.")
        if why.decoder_only
        else "",
    )
    return Panel(
        why.key("why-lens-table"),
        table=lens_table(top_pieces, top_probs, why.out_pieces[step]),
        heading=_("What each decoder layer would already write"),
        caption=caption,
    )


def every_piece_ask(why: Explained) -> Ask:
    """Every output piece's lens, as a part that waits for a button when costly."""
    return Ask(
        cost(why),
        _("Compute the lens of every {label}", label=why.words.a_piece),
        "why-lens-all",
        n_(
            "Every {label}'s lens puts each layer's output through the output projection over the whole "
            "vocabulary ({n} piece): at this size it is computed when you ask.",
            "Every {label}'s lens puts each layer's output through the output projection over the whole "
            "vocabulary ({n} pieces): at this size it is computed when you ask.",
            why.bundle.config.vocab_size,
            label=why.words.a_piece,
        ),
    )


def heatmap(why: Explained, view: LensView, output: Span) -> Panel:
    """Every output piece: the probability each layer's lens gives the piece written, and its own first choice."""
    words = why.words
    figure = why.figure(
        lens_heatmap,
        view.final,
        view.firsts,
        why.out_pieces,
        why.style,
        columns=output,
        piece_axis=_("{label} (what the model wrote)", label=words.a_piece),
    )
    caption = _(
        "Every {label}: the colour is the probability each layer's lens gives the piece the model finally "
        "wrote, the text that layer's own first choice. With the causal mask on, the last row is the model "
        "itself; with it off, every row sees the whole {output} at once, as in training, and may disagree "
        "with what decoding chose.",
        label=words.a_piece,
        output=words.output,
    )
    return Panel(why.key("lens"), figure, caption=caption)


def computed(why: Explained, pieces: tuple[int, ...] | None = None) -> LensView:
    """The lens of every output piece (or of `pieces` alone), computed directly."""
    ctl = why.ctl
    log_probs = logit_lens(why.bundle, ctl.sentence, why.out_ids, why.iv, why.own_trace, pieces, ctl.chat)
    return lens_view(why.bundle, log_probs, why.out_ids, pieces)


def panels(why: Explained, step: int, output: Span) -> list[Panel]:
    """The lens as the page shows it first (nothing cached, no button clicked), computed directly: the table of
    the piece on show, then every piece's heatmap or what the page says in its place."""
    ask = every_piece_ask(why)
    if not ask.eager(why.spare):
        return [table(why, step, *computed(why, (step,)).candidates(0)), ask.instead(why)]
    view = computed(why)
    return [table(why, step, *view.candidates(step)), heatmap(why, view, output)]
