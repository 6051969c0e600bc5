"""The Attention page's attention sinks (the share of attention on the first piece, the residual stream's
size, the what-if hiding the first piece) and Gemma 3's sliding windows."""

from __future__ import annotations

import numpy as np
import streamlit as st

from i18n import N_, _, listing, n_, sentences
from model import AnatomyError, cosine
from model.analysis.cache import window_masks
from model.analysis.sinks import QUIET, SINK, Sinks, sinks, summary
from model.results import Trace, TranslationResult
from ui.page.markup import two_translations
from ui.page.ondemand import second_continuation
from ui.page.start import Page
from ui.session.figures import shared
from views.controls import MAX_SENTENCE
from views.markdown import md
from viz.labels import display_piece
from viz.sinks import residual_norms, sink_shares
from viz.windows import window_masks as window_figure


def section(page: Page, trace: Trace, stack: str, pieces: list[str]) -> None:
    """Sink shares per layer × head, the residual norms per position, a paragraph with this model's figures,
    and the what-if that hides the first piece from every later query."""
    cfg, style, name = page.bundle.config, page.style, md(page.bundle.name)
    found = sinks(trace, stack, cfg.norm_first, cfg.windows if stack == "decoder" else ())
    st.subheader(_("Attention sinks: why so many heads look at the first piece"))
    page.show(
        shared(sink_shares, found.shares, style, _sinks_title(page.bundle.name, stack), SINK),
        _(
            "A cell is the weight a head gives the first piece, averaged over every query after it that can see it "
            "(the first query can only see itself). Heads at {sink} or more carry their figure and are tagged "
            "“sink” in the model view above; the last column is each layer's mean over its heads.",
            sink=SINK,
        ),
        key="sink-shares",
    )
    page.show(
        shared(residual_norms, found.norms, pieces, style, _("Size of the residual stream at each position")),
        _(
            "Rows: the embeddings, then each layer's output; columns: positions. The colour is log₁₀ of the "
            "vector's length, so a position far larger than the others stands out without blanking them."
        ),
        key="sink-norms",
    )
    first = display_piece(pieces[0]) if pieces else ""
    st.markdown(
        sentences(
            _(
                "**Why.** A softmax row must sum to 1, so a head that has nothing useful to read on a piece still has "
                "to put its weight somewhere. Many models learn to park it on the first piece, which every later "
                "piece can see: a sink whose value adds little."
            ),
            _shares_said(found, first, "text", name=name),
            by_layer(found, cfg.windows),
            _("Streaming LLMs keep the first pieces in the cache for this reason (Xiao et al., 2023)."),
        )
    )
    for other in _other_stacks(trace, stack):
        also = sinks(trace, other, cfg.norm_first, cfg.windows if other == "decoder" else ())
        others = trace.tgt_pieces if other == "decoder" else trace.src_pieces
        st.markdown(_shares_said(also, display_piece(others[0]) if others else "", other))
    _hide_first(page)


def _sinks_title(name: str, stack: str) -> str:
    """The sink chart's title: the model and the stack whose self-attention it shows."""
    if stack == "encoder":
        return _("{name}, encoder self-attention: share of each head's attention on the first piece", name=name)
    return _("{name}, decoder self-attention: share of each head's attention on the first piece", name=name)


# The prompt's picture, by the stack whose self-attention it is: said with _(NAME[stack])
_PROMPT_TITLE = {
    "encoder": N_("Share of each encoder head's attention on the sentence's first piece"),
    "decoder": N_("Share of each head's attention on the prompt's first piece"),
}
_AVERAGED = {
    "encoder": N_("Averaged over the sentence's queries after the first; heads at {sink} or more carry their figure."),
    "decoder": N_("Averaged over the prompt's queries after the first; heads at {sink} or more carry their figure."),
}


def prompt_shares(page: Page, prompt: Trace, stack: str = "decoder") -> None:
    """While the continuation or translation is written (ui/page/stream.py): each head's share of attention on
    the first piece over the prompt alone (the `stack` "encoder": over the sentence); the rest follows."""
    encoder = stack == "encoder"
    found = sinks(prompt, stack, page.bundle.config.norm_first, () if encoder else page.bundle.config.windows)
    pieces = prompt.src_pieces if encoder else prompt.tgt_pieces
    page.draw(sink_shares(found.shares, page.style, _(_PROMPT_TITLE[stack]), SINK), key="prompt-sinks")
    first = display_piece(pieces[0]) if pieces else ""
    said = _shares_said(found, first, "sentence" if encoder else "prompt")
    st.caption(sentences(_(_AVERAGED[stack], sink=SINK), said))


def _shares_said(found: Sinks, first: str, whose: str, name: str = "") -> str:
    """What a stack's heads put on its first piece, in a sentence: the mean share and the heads at SINK or more.
    `whose`: "text" (the model `name`'s heads on this text), "prompt" (on the prompt), "sentence" (the encoder's on
    the sentence), or the stack ("encoder",
    "decoder") whose self-attention is said besides the charts' (the other stack)."""
    said = {
        "mean": f"{found.mean_share:.0%}",
        "first": md(first),
        "heads": found.sink_heads,
        "total": found.shares.size,
        "sink": f"{SINK:.0%}",
    }
    if whose == "text":
        return _(
            "On this text, {name}'s heads put **{mean}** of their attention on “{first}” on average, and "
            "**{heads} of {total}** heads put at least {sink} there.",
            name=name,
            **said,
        )
    if whose == "prompt":
        return _(
            "On the prompt, its heads put **{mean}** of their attention on “{first}” on average, and "
            "**{heads} of {total}** heads put at least {sink} there.",
            **said,
        )
    if whose == "sentence":
        return _(
            "On the sentence, the encoder's heads put **{mean}** of their attention on “{first}” on average, and "
            "**{heads} of {total}** heads put at least {sink} there.",
            **said,
        )
    if whose == "encoder":
        return _(
            "**Encoder self-attention** (the charts above are the decoder's): its heads put **{mean}** of their "
            "attention on “{first}” on average, and **{heads} of {total}** heads put at least {sink} there.",
            **said,
        )
    return _(
        "**Decoder self-attention** (the charts above are the encoder's): its heads put **{mean}** of their "
        "attention on “{first}” on average, and **{heads} of {total}** heads put at least {sink} there.",
        **said,
    )


def _other_stacks(trace: Trace, stack: str) -> list[str]:
    """The self-attention stacks of the model besides `stack` (an encoder-decoder's decoder, beside its encoder)."""
    return [other for other in ("encoder", "decoder") if other != stack and trace.n_layers(other)]


def _one_and_last(names: list[str], last: str) -> str:
    """Names one after another, the last after "and" (`last` "and") or "or" (`last` "or")."""
    if len(names) == 1:
        return names[0]
    if last == "or":
        return _("{names} or {last}", names=listing(names[:-1]), last=names[-1])
    return _("{names} and {last}", names=listing(names[:-1]), last=names[-1])


def _layers(runs: tuple[tuple[int, int], ...]) -> str:
    """Runs of layers (from 0) as "L1–L3, L11 and L12"."""
    return _one_and_last([f"L{a + 1}" if a == b else f"L{a + 1}–L{b + 1}" for a, b in runs], "and")


def _times(ratio: float) -> str:
    return f"{ratio:,.0f}×" if ratio >= 10 else f"{ratio:.1f}×"


def by_layer(found: Sinks, windows: tuple[int, ...] = ()) -> str:
    """The sink figures layer by layer, in sentences quoting the chart: the weakest and strongest layers, the
    later layers' range, the layers that barely use the first piece, the residual vector's size, and which
    queries a sliding window kept from the first piece."""
    shares = found.layer_shares
    if len(shares) == 0:
        return ""
    if len(shares) == 1:
        text = _("Its one layer puts **{share}** there.", share=f"{shares[0]:.0%}")
    else:
        text = _later_layers(found)
    ratios = found.norm_ratios
    if np.isfinite(ratios).all() and ratios.size > 1:
        text = sentences(text, _residual_said(ratios, summary(found).peak_ratio))
    if found.windowed and windows:
        cut = sorted({windows[layer] for layer in found.windowed})
        text = sentences(
            text,
            n_(
                "In the {n} sliding-window layer a query at position {positions} or later cannot see the first piece "
                "at all: their shares count the queries that can.",
                "In the {n} sliding-window layers a query at position {positions} or later cannot see the first "
                "piece at all: their shares count the queries that can.",
                len(found.windowed),
                positions=_one_and_last([str(c) for c in cut], "or"),
            ),
        )
    if float(np.nan_to_num(shares, nan=0.0).max()) < SINK:
        text = sentences(
            text,
            _(
                "Little of a sink here: tiny random test models show little of this, while trained ones "
                "(SmolLM2, Gemma 3, GPT-2, Qwen) show it strongly."
            ),
        )
    return text


def _later_layers(found: Sinks) -> str:
    """The share layer by layer: the weakest and strongest layers, the later layers' range, the quiet ones."""
    said, shares = summary(found), found.layer_shares
    low, high = said.later_range
    figures = {
        "weak_share": f"{shares[said.weakest]:.0%}",
        "weak": said.weakest + 1,
        "strong_share": f"{shares[said.strongest]:.0%}",
        "strong": said.strongest + 1,
        "first": said.later[0] + 1,
        "last": said.later[1] + 1,
        "range": f"{low:.0%}–{high:.0%}",
    }
    if not said.quiet:
        return _(
            "By layer (the chart's last column) the share runs from **{weak_share}** in L{weak} to "
            "**{strong_share}** in L{strong}; the later layers, L{first}–L{last}, put **{range}** there.",
            **figures,
        )
    quiet = {"quiet": _layers(said.quiet), "under": f"{QUIET:.0%}"}
    if len(said.quiet) == 1 and said.quiet[0][0] == said.quiet[0][1]:
        return _(
            "By layer (the chart's last column) the share runs from **{weak_share}** in L{weak} to "
            "**{strong_share}** in L{strong}; the later layers, L{first}–L{last}, put **{range}** there, while "
            "{quiet} stays under {under}.",
            **figures,
            **quiet,
        )
    return _(
        "By layer (the chart's last column) the share runs from **{weak_share}** in L{weak} to "
        "**{strong_share}** in L{strong}; the later layers, L{first}–L{last}, put **{range}** there, while "
        "{quiet} stay under {under}.",
        **figures,
        **quiet,
    )


def _residual_said(ratios: np.ndarray, peak: int) -> str:
    """How far the first position's residual vector outgrows the others' (`peak`: where most; 0 the embeddings)."""
    said = {"peak": _times(ratios[peak]), "end": _times(ratios[-1]), "layer": peak}
    if peak == 0:
        return _(
            "The first position's residual vector is **{peak}** the median of the others in the embeddings, and "
            "**{end}** after the last layer.",
            **said,
        )
    if peak != len(ratios) - 1:
        return _(
            "The first position's residual vector is **{peak}** the median of the others after L{layer}, and "
            "**{end}** after the last layer.",
            **said,
        )
    return _(
        "The first position's residual vector is **{peak}** the median of the others after L{layer}, the last layer.",
        **said,
    )


def _hide_first(page: Page) -> None:
    """The what-if: the first piece hidden from every later query (each still sees itself)."""
    st.markdown(_("**What-if: hide the first piece from every later query.**"))
    if page.encoder_only:
        with_it, without = page.encode(), page.encode(hide_first=True)
        st.metric(
            _("Cosine similarity of the sentence embeddings with and without the first piece visible"),
            f"{cosine(with_it.embedding, without.embedding):.3f}",
        )
        return
    # the page's own result is this very run (a long text's trace may be too large for the results cache to keep)
    result = page.result if isinstance(page.result, TranslationResult) else page.translate()
    if page.decoder_only:
        label = _("Continue with the first piece hidden")
    else:
        label = _("Translate with the first piece hidden")
    if not second_continuation(
        page.bundle, page.controls, len(result.output_ids), label, "continue-hide-first", hide_first=True
    ):
        return
    hidden = page.translate(hide_first=True, trace=False)
    two_translations(*_hidden_captions(page, result.translation, hidden.translation))
    st.caption(
        _(
            "The heads that parked their weight on the first piece must now spread it over the other pieces: the "
            "text changes."
        )
        if hidden.translation != result.translation
        else _(
            "The heads that parked their weight on the first piece must now spread it over the other pieces: here the "
            "text stays the same."
        )
    )


def _hidden_captions(page: Page, read: str, hidden: str) -> tuple[tuple[str, str], tuple[str, str]]:
    """The what-if's two outputs with their captions: as the model reads, and with the first piece hidden."""
    if page.chat:
        return (_("Answer as the model reads"), read), (_("Answer without a sink"), hidden)
    if page.decoder_only:
        return (_("Continuation as the model reads"), read), (_("Continuation without a sink"), hidden)
    return (_("Translation as the model reads"), read), (_("Translation without a sink"), hidden)


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
    (slide, window, sliding), (full, _full_window, whole) = masks
    st.subheader(_("Sliding windows"))
    page.show(
        shared(
            window_figure,
            [sliding, whole],
            [
                _("L{layer}: sliding-window layer (window {window})", layer=slide + 1, window=window),
                _("L{layer}: full-attention layer", layer=full + 1),
            ],
            pieces,
            page.style,
            _("{name}: which keys each query may read", name=page.bundle.name),
            window,
        ),
        _windows_caption(page, pieces, window),
        key="windows",
    )


def _windows_caption(page: Page, pieces: list[str], window: int) -> str:
    """What the two masks show, and how long a text must be for the band to show."""
    cfg = page.bundle.config
    bands = _(
        "Blue: a key the query may read; grey: hidden. {sliding} of {layers} layers read only the last {window} "
        "pieces (a band along the diagonal), the others everything before the query (a triangle): the band caps "
        "what their cache must keep at {kept} past positions however long the text.",
        sliding=sum(1 for i in range(cfg.n_decoder_layers) if cfg.window(i)),
        layers=cfg.n_decoder_layers,
        window=window,
        kept=window - 1,
    )
    if len(pieces) > window:
        return sentences(
            bands,
            _(
                "Your text has {n} pieces, longer than the window: the band shows, and from query {window} on the "
                "first piece is out of the sliding layers' reach.",
                n=len(pieces),
                window=window,
            ),
        )
    within = _(
        "Your text has {n} pieces, within the window: type more than {window} to see the band.",
        n=len(pieces),
        window=window,
    )
    return sentences(bands, within, _text_box(page, len(pieces)))


def _text_box(page: Page, pieces: int) -> str:
    """How long a text the box takes, in characters and (from a text long enough to tell) in pieces, and whether
    a table of digits would pass the window."""
    typed = len(page.controls.sentence)
    read = len(getattr(page.result, "prompt_ids", ())) or pieces  # the text's own pieces, not the continuation's
    per_piece = typed / max(read, 1)
    said = {"most": f"{MAX_SENTENCE:,}", "per": f"{per_piece:.1f}", "about": f"{MAX_SENTENCE / per_piece:,.0f}"}
    digits = _digits_apart(page)
    if typed >= ESTIMATE_FROM and digits:
        return _(
            "The text box takes at most {most} characters; at this text's {per} characters a piece that is about "
            "{about} pieces, and the model reads every digit as a piece of its own, so a table of figures (a few "
            "years of monthly rainfall, say) passes the window.",
            **said,
        )
    if typed >= ESTIMATE_FROM:
        return _(
            "The text box takes at most {most} characters; at this text's {per} characters a piece that is about "
            "{about} pieces.",
            **said,
        )
    if digits:
        return _(
            "The text box takes at most {most} characters, and the model reads every digit as a piece of its own, "
            "so a table of figures (a few years of monthly rainfall, say) passes the window.",
            **said,
        )
    return _("The text box takes at most {most} characters.", **said)
