"""The Why this word? page's logit lens (pages/8_why.py): what each decoder layer would already write for
the output piece on show, as a table of first candidates, and for every output piece as a heatmap (on a
button when costly)."""

from __future__ import annotations

import streamlit as st

from i18n import _, n_, sentences
from ui.page.ondemand import asked, filling
from ui.parts.explained import Explained
from ui.session import explanations
from ui.session.figures import shared
from viz.explain import lens_heatmap, lens_table
from viz.lengths import Span


def section(why: Explained, step: int, output: Span) -> None:
    """The lens of the piece on show, then of every output piece."""
    bundle, ctl, iv, out_ids = why.bundle, why.ctl, why.iv, why.out_ids
    cfg = bundle.config
    cached = explanations.lens_cached(bundle, ctl.sentence, out_ids, iv, ctl.chat)
    # every piece's lens puts each layer x piece through the output projection (layers x pieces x vocabulary x
    # d_model products); the table needs the piece on show alone, a piece's share of that
    cost = float(cfg.n_decoder_layers * len(out_ids) * cfg.vocab_size * cfg.d_model)
    if cached or cost <= why.spare:
        view = explanations.lens(bundle, ctl.sentence, out_ids, iv, trace=why.own_trace, chat=ctl.chat)
        top_pieces, top_probs = view.top_pieces_at(step), view.top_probs[:, step]
    else:
        one = explanations.lens(bundle, ctl.sentence, out_ids, iv, trace=why.own_trace, pieces=(step,), chat=ctl.chat)
        top_pieces, top_probs = one.top_pieces_at(0), one.top_probs[:, 0]
    st.dataframe(lens_table(top_pieces, top_probs, why.out_pieces[step]))
    after = (
        _("its final norm, the rescale by 1/√d_model and the output projection")
        if cfg.rescale_output
        else _("its final norm and the output projection")
        if cfg.norm_first
        else _("the output projection")
    )
    words = why.words
    st.caption(
        sentences(
            _(
                "{label} {n}: each decoder layer's output put through what the model does after its last layer "
                "({after}), and its first candidates with their probabilities; the piece the model wrote is checked.",
                label=words.piece,
                n=step + 1,
                after=after,
            ),
            _(
                "The rows are the decoder's positions that chose the new pieces: the prompt's last, then each new "
                "piece's."
            )
            if why.decoder_only
            else "",
        )
    )
    whole = asked(
        cost,
        cached,
        _("Compute the lens of every {label}", label=words.a_piece),
        "why-lens-all",
        n_(
            "Every {label}'s lens puts each layer's output through the output projection over the whole "
            "vocabulary ({n} piece): at this size it is computed when you ask.",
            "Every {label}'s lens puts each layer's output through the output projection over the whole "
            "vocabulary ({n} pieces): at this size it is computed when you ask.",
            cfg.vocab_size,
            label=words.a_piece,
        ),
        why.spare,
    )
    if whole is False:
        return
    with filling(whole):
        view = explanations.lens(bundle, ctl.sentence, out_ids, iv, trace=why.own_trace, chat=ctl.chat)
    why.page.show(
        shared(
            lens_heatmap,
            view.final,
            view.firsts,
            why.out_pieces,
            why.style,
            columns=output,
            piece_axis=_("{label} (what the model wrote)", label=words.a_piece),
        ),
        _(
            "Every {label}: the colour is the probability each layer's lens gives the piece the model finally "
            "wrote, the text that layer's own first choice. With the causal mask on, the last row is the model "
            "itself; with it off, every row sees the whole {output} at once, as in training, and may disagree "
            "with what decoding chose.",
            label=words.a_piece,
            output=words.output,
        ),
        key="lens",
    )
