"""The Attention page's attention sinks (the share of attention on the first piece, the residual stream's
size, the what-if hiding the first piece) and Gemma 3's sliding windows."""

from __future__ import annotations

import numpy as np
import streamlit as st

from model import AnatomyError, cosine
from model.analysis.cache import window_masks
from model.analysis.sinks import QUIET, SINK, Sinks, sinks, summary
from model.results import Trace, TranslationResult
from ui.page.markup import md, two_translations
from ui.page.ondemand import second_continuation
from ui.page.start import Page
from ui.session.figures import shared
from ui.session.urlstate import MAX_SENTENCE
from viz.labels import display_piece
from viz.sinks import residual_norms, sink_shares
from viz.windows import window_masks as window_figure


def section(page: Page, trace: Trace, stack: str, pieces: list[str]) -> None:
    """Sink shares per layer × head, the residual norms per position, a paragraph with this model's figures,
    and the what-if that hides the first piece from every later query."""
    cfg, style, name = page.bundle.config, page.style, md(page.bundle.name)
    found = sinks(trace, stack, cfg.norm_first, cfg.windows if stack == "decoder" else ())
    st.subheader("Attention sinks: why so many heads look at the first piece")
    page.show(
        shared(
            sink_shares,
            found.shares,
            style,
            f"{page.bundle.name}, {stack} self-attention: share of each head's attention on the first piece",
            SINK,
        ),
        "A cell is the weight a head gives the first piece, averaged over every query after it that can see it "
        f"(the first query can only see itself). Heads at {SINK} or more carry their figure and are tagged "
        "“sink” in the model view above; the last column is each layer's mean over its heads.",
        key="sink-shares",
    )
    page.show(
        shared(residual_norms, found.norms, pieces, style, "Size of the residual stream at each position"),
        "Rows: the embeddings, then each layer's output; columns: positions. The colour is log₁₀ of the "
        "vector's length, so a position far larger than the others stands out without blanking them.",
        key="sink-norms",
    )
    first = display_piece(pieces[0]) if pieces else ""
    st.markdown(
        "**Why.** A softmax row must sum to 1, so a head that has nothing useful to read on a piece still has to "
        "put its weight somewhere. Many models learn to park it on the first piece, which every later piece can "
        f"see: a sink whose value adds little. On this text, {name}'s heads put {_shares_said(found, first)} "
        + by_layer(found, cfg.windows)
        + " Streaming LLMs keep the first pieces in the cache for this reason (Xiao et al., 2023)."
    )
    for other in _other_stacks(trace, stack):
        also = sinks(trace, other, cfg.norm_first, cfg.windows if other == "decoder" else ())
        others = trace.tgt_pieces if other == "decoder" else trace.src_pieces
        st.markdown(
            f"**{other.capitalize()} self-attention** (the charts above are the {stack}'s): its heads put "
            + _shares_said(also, display_piece(others[0]) if others else "")
        )
    _hide_first(page)


def prompt_shares(page: Page, prompt: Trace) -> None:
    """While the continuation is written (ui/page/stream.py): each decoder head's share of attention on the
    first piece over the prompt alone; the residual stream, the what-if and the continuation's rows follow."""
    cfg = page.bundle.config
    found = sinks(prompt, "decoder", cfg.norm_first, cfg.windows)
    figure = sink_shares(found.shares, page.style, "Share of each head's attention on the prompt's first piece", SINK)
    page.draw(figure, key="prompt-sinks")
    st.caption(
        f"Averaged over the prompt's queries after the first; heads at {SINK} or more carry their figure. On the "
        "prompt, its heads put " + _shares_said(found, display_piece(prompt.tgt_pieces[0]) if prompt.tgt_pieces else "")
    )


def _shares_said(found: Sinks, first: str) -> str:
    """What a stack's heads put on its first piece, in words: the mean share and the heads at SINK or more."""
    return (
        f"**{found.mean_share:.0%}** of their attention on “{md(first)}” on average, and "
        f"**{found.sink_heads} of {found.shares.size}** heads put at least {SINK:.0%} there."
    )


def _other_stacks(trace: Trace, stack: str) -> list[str]:
    """The self-attention stacks of the model besides `stack` (an encoder-decoder's decoder, beside its encoder)."""
    return [other for other in ("encoder", "decoder") if other != stack and trace.n_layers(other)]


def _layers(runs: tuple[tuple[int, int], ...]) -> str:
    """Runs of layers (from 0) as "L1–L3, L11 and L12"."""
    names = [f"L{a + 1}" if a == b else f"L{a + 1}–L{b + 1}" for a, b in runs]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _times(ratio: float) -> str:
    return f"{ratio:,.0f}×" if ratio >= 10 else f"{ratio:.1f}×"


def by_layer(found: Sinks, windows: tuple[int, ...] = ()) -> str:
    """The sink figures layer by layer, in sentences quoting the chart: the weakest and strongest layers, the
    later layers' range, the layers that barely use the first piece, the residual vector's size, and which
    queries a sliding window kept from the first piece."""
    said = summary(found)
    shares = found.layer_shares
    layers = len(shares)
    if layers == 0:
        return ""
    if layers == 1:
        text = f"Its one layer puts **{shares[0]:.0%}** there."
    else:
        low, high = said.later_range
        text = (
            f"By layer (the chart's last column) the share runs from **{shares[said.weakest]:.0%}** in "
            f"L{said.weakest + 1} to **{shares[said.strongest]:.0%}** in L{said.strongest + 1}; the later "
            f"layers, L{said.later[0] + 1}–L{said.later[1] + 1}, put **{low:.0%}–{high:.0%}** there"
            + (
                f", while {_layers(said.quiet)} "
                + ("stays" if len(said.quiet) == 1 and said.quiet[0][0] == said.quiet[0][1] else "stay")
                + f" under {QUIET:.0%}."
                if said.quiet
                else "."
            )
        )
    ratios = found.norm_ratios
    if np.isfinite(ratios).all() and ratios.size > 1:
        peak = said.peak_ratio
        where = "in the embeddings" if peak == 0 else f"after L{peak}"
        text += (
            f" The first position's residual vector is **{_times(ratios[peak])}** the median of the others {where}"
            + (
                f", and **{_times(ratios[-1])}** after the last layer."
                if peak != len(ratios) - 1
                else ", the last layer."
            )
        )
    if found.windowed and windows:
        cut = sorted({windows[layer] for layer in found.windowed})
        text += (
            f" In the {len(found.windowed)} sliding-window layers a query at position {' or '.join(map(str, cut))} "
            "or later cannot see the first piece at all: their shares count the queries that can."
        )
    if float(np.nan_to_num(shares, nan=0.0).max()) < SINK:
        text += (
            " Little of a sink here: tiny random test models show little of this, while trained ones "
            "(SmolLM2, Gemma 3, GPT-2, Qwen) show it strongly."
        )
    return text


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
    # the page's own result is this very run (a long text's trace may be too large for the results cache to keep)
    result = page.result if isinstance(page.result, TranslationResult) else page.translate()
    verb = page.output_noun.capitalize()
    label = f"{'Continue' if page.decoder_only else 'Translate'} with the first piece hidden"
    if not second_continuation(
        page.bundle, page.controls, len(result.output_ids), label, "continue-hide-first", hide_first=True
    ):
        return
    hidden = page.translate(hide_first=True, trace=False)
    two_translations((f"{verb} as the model reads", result.translation), (f"{verb} without a sink", hidden.translation))
    st.caption(
        "The heads that parked their weight on the first piece must now spread it over the other pieces: "
        + ("the text changes." if hidden.translation != result.translation else "here the text stays the same.")
    )


def _digits_apart(page: Page) -> bool:
    """Whether the model's tokenizer reads each digit as a piece of its own (Gemma's, SmolLM2's do)."""
    digits = "31415926"
    try:
        return len(page.bundle.tokenizer.encode_source(digits)) >= len(digits)
    except AnatomyError:  # a tokenizer that refuses the text says nothing either way
        return False


ESTIMATE_FROM = 200  # characters: a shorter text says little about how many characters a piece takes


def windows(page: Page, pieces: list[str]) -> None:
    """A sliding-window layer's mask beside a full-attention layer's, over the text (Gemma 3)."""
    cfg = page.bundle.config
    masks = window_masks(cfg, len(pieces))
    if len(masks) < 2:
        return
    (slide, window, sliding), (full, _, whole) = masks
    st.subheader("Sliding windows")
    longer = len(pieces) > window
    typed = len(page.controls.sentence)
    read = len(getattr(page.result, "prompt_ids", ())) or len(pieces)  # the text's own pieces, not the continuation's
    per_piece = typed / max(read, 1)
    estimate = (  # from a text long enough to say how many characters a piece takes
        f"; at this text's {per_piece:.1f} characters a piece that is about {MAX_SENTENCE / per_piece:,.0f} pieces"
        if typed >= ESTIMATE_FROM
        else ""
    )
    page.show(
        shared(
            window_figure,
            [sliding, whole],
            [f"L{slide + 1}: sliding-window layer (window {window})", f"L{full + 1}: full-attention layer"],
            pieces,
            page.style,
            f"{page.bundle.name}: which keys each query may read",
            window,
        ),
        f"Blue: a key the query may read; grey: hidden. {sum(1 for i in range(cfg.n_decoder_layers) if cfg.window(i))} "
        f"of {cfg.n_decoder_layers} layers read only the last {window} pieces (a band along the diagonal), the "
        "others everything before the query (a triangle): the band caps what their cache must keep at "
        f"{window - 1} past positions however long the text. "
        + (
            f"Your text has {len(pieces)} pieces, longer than the window: the band shows, and from query {window} "
            "on the first piece is out of the sliding layers' reach."
            if longer
            else f"Your text has {len(pieces)} pieces, within the window: type more than {window} to see the band. "
            f"The text box takes at most {MAX_SENTENCE:,} characters{estimate}"
            + (
                ", and the model reads every digit as a piece of its own, so a table of figures (a few years of "
                "monthly rainfall, say) passes the window."
                if _digits_apart(page)
                else "."
            )
        ),
        key="windows",
    )
