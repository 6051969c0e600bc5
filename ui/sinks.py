"""The Attention page's attention sinks (the share of attention on the first piece, the residual stream's
size, the what-if hiding the first piece) and Gemma 3's sliding windows."""

from __future__ import annotations

import numpy as np
import streamlit as st

from model import cosine
from model.analysis.cache import window_masks
from model.analysis.sinks import SINK, sinks
from model.results import Trace
from viz.labels import display_piece
from viz.sinks import residual_norms, sink_shares
from viz.windows import window_masks as window_figure

from .figures import shared
from .ondemand import second_continuation
from .page import Page, md, two_translations


def section(page: Page, trace: Trace, stack: str, pieces: list[str]) -> None:
    """Sink shares per layer × head, the residual norms per position, a paragraph with this model's figures,
    and the what-if that hides the first piece from every later query."""
    cfg, style, name = page.bundle.config, page.style, md(page.bundle.name)
    found = sinks(trace, stack, cfg.norm_first)
    st.subheader("Attention sinks: why so many heads look at the first piece")
    page.show(
        shared(
            sink_shares,
            found.shares,
            style,
            f"{stack.capitalize()} self-attention: share of each head's attention on the first piece",
            SINK,
        ),
        "A cell is the weight a head gives the first piece, averaged over every query after it (the first "
        f"query can only see itself). Heads at {SINK} or more carry their figure and are tagged “sink” in the "
        "model view above.",
        key="sink-shares",
    )
    page.show(
        shared(residual_norms, found.norms, pieces, style, "Size of the residual stream at each position"),
        "Rows: the embeddings, then each layer's output; columns: positions. The colour is log₁₀ of the "
        "vector's length, so a position far larger than the others stands out without blanking them.",
        key="sink-norms",
    )
    first = display_piece(pieces[0]) if pieces else ""
    ratio = found.first_norm_ratio
    st.markdown(
        f"**Why.** A softmax row must sum to 1, so a head that has nothing useful to read on a piece still has to "
        f"put its weight somewhere. Many models learn to park it on the first piece, which every later piece can "
        f"see: a sink whose value adds little. On this text, {name}'s heads put **{found.mean_share:.0%}** of "
        f"their attention on “{md(first)}” on average, and **{found.sink_heads} of {found.shares.size}** heads "
        f"put at least {SINK:.0%} there"
        + (
            f"; after the last layer the first position's residual vector is **{ratio:.1f}×** the median of the others."
            if np.isfinite(ratio)
            else "."
        )
        + " Tiny random test models show little of this; trained ones (GPT-2, SmolLM2, Qwen) show it strongly. "
        "Streaming LLMs keep the first pieces in the cache for this reason (Xiao et al., 2023)."
    )
    _hide_first(page)


def _hide_first(page: Page) -> None:
    """The what-if: the first piece hidden from every later query (each still sees itself)."""
    st.markdown("**What-if: hide the first piece from every later query.**")
    if page.encoder_only:
        with_it, without = page.encode(), page.encode(hide_first=True)
        st.metric(
            "Cosine similarity of the sentence embeddings with and without the first piece visible",
            f"{cosine(with_it.embedding, without.embedding):.3f}",
        )
        return
    result = page.translate()
    verb = page.output_noun.capitalize()
    label = f"{'Continue' if page.decoder_only else 'Translate'} with the first piece hidden"
    if not second_continuation(page, len(result.output_ids), label, "continue-hide-first", hide_first=True):
        return
    hidden = page.translate(hide_first=True, trace=False)
    two_translations((f"{verb} as the model reads", result.translation), (f"{verb} without a sink", hidden.translation))
    st.caption(
        "The heads that parked their weight on the first piece must now spread it over the other pieces: "
        + ("the text changes." if hidden.translation != result.translation else "here the text stays the same.")
    )


def windows(page: Page, pieces: list[str]) -> None:
    """A sliding-window layer's mask beside a full-attention layer's, over the text (Gemma 3)."""
    cfg = page.bundle.config
    masks = window_masks(cfg, len(pieces))
    if len(masks) < 2:
        return
    (slide, window, sliding), (full, _, whole) = masks
    st.subheader("Sliding windows")
    longer = len(pieces) > window
    page.show(
        shared(
            window_figure,
            [sliding, whole],
            [f"L{slide + 1}: sliding-window layer (window {window})", f"L{full + 1}: full-attention layer"],
            pieces,
            page.style,
            f"{page.bundle.name}: which keys each query may read",
        ),
        f"Blue: a key the query may read; grey: hidden. {sum(1 for i in range(cfg.n_decoder_layers) if cfg.window(i))} "
        f"of {cfg.n_decoder_layers} layers read only the last {window} pieces (a band along the diagonal), the "
        "others everything before the query (a triangle): the band keeps their cache at "
        f"{window} positions however long the text. "
        + (
            "Your text is longer than the window: the band shows."
            if longer
            else f"Your text has {len(pieces)} pieces, within the window: type more than {window} to see the band."
        ),
        key="windows",
    )
