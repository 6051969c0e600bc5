"""Positional encoding: the table, its frequencies, similarities, sizes, and the switch-off experiment;
for a relative-position model (T5) the bias each head adds to the scores, by pieces and by distance."""

import streamlit as st

from i18n import N_, _, later, sentences
from model import cosine
from model.engine import stages
from ui.page.binding import bind, page_value, set_value
from ui.page.markup import two_translations
from ui.page.ondemand import second_continuation
from ui.page.start import start
from ui.page.stream import Preview
from ui.parts import lengths, positions
from ui.parts.rotary import section as rotary_section
from ui.parts.rotary import what_if as rotary_what_if
from ui.session import explanations
from ui.session.figures import shared
from views.controls import Field
from views.markdown import md
from viz.lengths import around
from viz.masks import mask_comparison
from viz.positional import (
    encoding_curves,
    mean_norms,
    similarity_matrix,
    vector_sizes,
    wavelength,
)
from viz.relative_bias import bias_against_distance, bias_heatmaps, distance_profile, distance_words, heatmap_words

page = start(N_("Positional encoding"), preview=Preview(prompt=positions.prompt_view))
trace, ctl, style, bundle = page.result.trace, page.controls, page.style, page.bundle
cfg = bundle.config
d_model = cfg.d_model
decoder_only = page.decoder_only
# the stack whose input the positions reach first, and its pieces: a decoder-only model has no source
stack = "decoder" if decoder_only else "encoder"
side = "target" if decoder_only else "source"
pieces = trace.tgt_pieces if decoder_only else trace.src_pieces
relative = cfg.positional == "relative"
learned = cfg.positional == "learned"
rotary = cfg.positional == "rotary"
# the run with the positions as trained: the page's own result when the sidebar leaves them on (a long text's
# trace may be too large for the results cache to keep, and would be computed again at every call)
as_trained = page.result if ctl.positional and page.result is not None else page.run(positional_encoding=True)
BEYOND = 1.25  # the distance chart runs this far past max_distance, to show the last bucket's flat stretch
# What the experiment switches off, by the model's kind of positions: said with _(WHAT[kind]).
WHAT = {
    "relative": N_("the bias"),
    "learned": N_("the learned positions"),
    "rotary": N_("the rotation"),
    "sinusoidal": N_("the encoding"),
}

page.lead(
    _(
        "Attention by itself does not know word order: it treats its input as a set. The paper adds "
        "to each embedding a vector that depends only on the position, made of sines and cosines "
        "of geometrically decreasing frequencies: PE(pos, 2i) = sin(pos / 10000^(2i/d)), "
        "PE(pos, 2i+1) = cos(pos / 10000^(2i/d))."
    )
)

if relative:
    with_pe = as_trained  # the bias as the model adds it, whatever the sidebar says
    recorded = with_pe.trace
    n_buckets, max_distance = cfg.relative_buckets, cfg.relative_max_distance
    st.info(
        _(
            "{name} adds **nothing** to its embeddings: no formula, no table. Instead, every self-attention "
            "score gets a learned number that depends only on the head and on how far the key stands from the "
            "query (key position − query position), filed into {buckets} buckets. Each stack computes this bias "
            "once and adds it to every score of **every** self-attention layer; cross-attention gets none (a "
            "French piece and an English piece share no positions).",
            name=md(bundle.name),
            buckets=n_buckets,
        )
    )
    if not ctl.positional:
        st.caption(
            _(
                "The positions switch is off in the sidebar: the figures below show the bias the model adds "
                "when it is on; every other page now runs without it."
            )
        )

    # each stack's bias and bucket at every distance from -reach to reach: past max_distance nothing changes
    reach = round(max_distance * BEYOND)
    profiles = {
        name: distance_profile(*bundle.relative_bias(name, reach + 1, reach + 1)) for name in ("encoder", "decoder")
    }

    st.subheader(_("The bias over your text"))
    source_span = lengths.source_window(len(recorded.src_pieces))  # the one window slider of the page
    output = around(ctl.step, len(recorded.tgt_pieces))
    for name, queries, span in (
        ("encoder", recorded.src_pieces, source_span),
        ("decoder", recorded.tgt_pieces, output),
    ):
        bias = recorded.tensor(stages.position_bias(name))[0]  # (heads, queries, keys)
        distances, buckets, _bias = profiles[name]
        title, caption = heatmap_words(name)
        page.show(
            shared(bias_heatmaps, bias, queries, queries, distances, buckets, style, title, rows=span, columns=span),
            caption,
            key=f"bias-{name}",
        )

    st.subheader(_("The bias against distance"))
    for name, queries in (("encoder", recorded.src_pieces), ("decoder", recorded.tgt_pieces)):
        distances, buckets, bias = profiles[name]
        title, caption = distance_words(name, n_buckets, max_distance, md(bundle.name))
        page.show(
            shared(bias_against_distance, distances, buckets, bias, style, title, max_distance, len(queries) - 1),
            caption,
            key=f"distance-{name}",
        )
elif rotary:
    # the typed text's pieces: a continuation's own pieces come after the prompt's
    typed = len(getattr(page.result, "prompt_ids", ())) or len(pieces)
    rope_factor = rotary_section(page, as_trained.trace, pieces[:typed])
else:

    def _dims(text: str) -> tuple[int, int]:
        low, _dash, high = text.partition("-")
        lo, hi = int(low), int(high)
        if not 0 <= lo < hi < d_model:
            raise ValueError(later("expected two dimensions a-b with 0 <= a < b < {d}", d=d_model))
        return lo, hi

    low, high = page_value(Field("dims", (0, d_model // 2), _dims, lambda v: f"{v[0]}-{v[1]}"))
    if high >= d_model:  # kept from a wider model
        set_value("dims", (min(low, d_model - 2), d_model - 1))
    name = md(bundle.name)
    no_source = (
        _(
            "{name} is decoder-only: there is no source, and the table is added to the decoder's input, your text "
            "and its continuation.",
            name=name,
        )
        if decoder_only
        else ""
    )
    if learned:
        st.info(
            sentences(
                _(
                    "{name} learns its position vectors instead of using the formula: one trained vector per "
                    "position, {n} of them. The plots below show that learned table; it has no frequencies by "
                    "construction, so look for what training put there.",
                    name=name,
                    n=cfg.max_len,
                ),
                no_source,
            )
        )
    elif cfg.positional == "sinusoidal_halves":
        st.info(
            _(
                "{name} uses the formula with Marian's layout: the same sines and cosines, but every sine in "
                "dimensions 0-{last_sine} and every cosine in {first_cosine}-{last}, instead of alternating. The "
                "plots below show the table exactly as this model adds it.",
                name=name,
                last_sine=d_model // 2 - 1,
                first_cosine=d_model // 2,
                last=d_model - 1,
            )
        )
    table = bundle.position_table()[: positions.SHOWN]

    left, right = st.columns([3, 2])
    with left:
        page.show(
            positions.table_figure(page),
            sentences(
                _("Each row is the vector added at one position."),
                _(
                    "Its values are whatever training found useful. The scale is symmetric around 0 and ends at the "
                    "size 99% of the entries stay under, so that a few large ones do not wash out the rest (the "
                    "hover shows every value)."
                )
                if learned
                else _(
                    "Columns of fast waves change quickly with position, slow ones barely: every position gets a "
                    "unique pattern."
                ),
            ),
            key="pe-table",
        )
    with right:
        page.show(
            shared(similarity_matrix, table, style, _("Position similarity")),
            _(
                "Cosine similarity of the vectors of two positions: where training made nearby positions alike, a "
                "bright band follows the diagonal."
            )
            if learned
            else _(
                "Cosine similarity of the vectors of two positions: high near the diagonal and falling with "
                "distance, so nearby positions look alike."
            ),
            key="pe-sim",
        )

    lo, hi = bind(
        "dims",
        st.slider,
        label=_("Dimensions to plot"),
        min_value=0,
        max_value=d_model - 1,
        to_widget=tuple,
        from_widget=tuple,
    )
    count = min(5, hi - lo + 1)
    dims = sorted({round(lo + i * (hi - lo) / max(count - 1, 1)) for i in range(count)})
    page.show(
        shared(encoding_curves, table, dims, style),
        _("Each curve is one dimension of the learned vectors against position.")
        if learned
        else _(
            "Each dimension is a wave over positions; its period grows from 2π ≈ 6.3 (the fastest pair) to "
            "{slowest} (the slowest), approaching 10000·2π as d_model grows. Together they work like the hands of "
            "a clock.",
            slowest=f"{wavelength(d_model - 1, d_model):,.0f}",
        ),
        key="pe-curves",
    )

    st.subheader(_("Why the embeddings are multiplied by √d_model"))
    if not cfg.scale_embeddings:
        st.info(
            _(
                "{name} does not multiply its token embeddings by √d_model (BERT adds token, position and "
                "token-type vectors and normalizes the sum with a LayerNorm, which sets the scale instead): the "
                "token bars and the '× √d_model' bars below are the same.",
                name=name,
            )
            if cfg.embed_norm
            else _(
                "{name} does not multiply its token embeddings by √d_model: the token bars and the '× √d_model' "
                "bars below are the same.",
                name=name,
            )
        )
    token, scaled, position = (
        trace.tensor(stages.embedding(stage, side))[0] for stage in ("token", "scaled", "position")
    )
    token_norm, scaled_norm, position_norm = mean_norms(token, scaled, position)
    page.show(
        shared(vector_sizes, token, scaled, position, pieces, style),
        sentences(
            _(
                "In this sentence the token embeddings have a mean norm of {token:.2f}; multiplied by √{d} ≈ "
                "{root:.1f} they reach {scaled:.1f}, against {position:.1f} for the encoding (every encoding vector "
                "has norm √(d_model/2)), so position information does not drown the meaning of the word.",
                token=token_norm,
                d=d_model,
                root=d_model**0.5,
                scaled=scaled_norm,
                position=position_norm,
            )
            if cfg.scale_embeddings and not learned
            else _(
                "In this sentence the token embeddings have a mean norm of {token:.2f} and the position vectors "
                "{position:.2f}.",
                token=token_norm,
                position=position_norm,
            ),
            _("The positional encoding is switched off in the sidebar, so its bars are zero.")
            if not ctl.positional
            else "",
        ),
        key="pe-sizes",
    )

# what the experiment switches off, in words
kind = "relative" if relative else "learned" if learned else "rotary" if rotary else "sinusoidal"
what = _(WHAT[kind])
st.subheader(_("Experiment: switch {what} off", what=what))
with_pe = as_trained
if page.encoder_only:
    without_pe = page.run(positional_encoding=False)
    st.metric(
        _("Cosine similarity of the sentence embeddings with and without positions"),
        f"{cosine(with_pe.embedding, without_pe.embedding):.3f}",
    )
elif not decoder_only:
    without_pe = page.run(positional_encoding=False)
    two_translations(
        (_("Translation with {what}", what=what), with_pe.translation),
        (_("Translation without {what}", what=what), without_pe.translation),
        1.5,
    )
elif second_continuation(
    page.bundle,
    page.controls,
    len(with_pe.output_ids),
    _("Continue without {what}", what=what),
    "continue-without-positions",
    positional_encoding=False,
):
    # its attention without positions is read from the continuation with them (below): of its own
    # continuation without them, only the text is shown
    answer = page.output_noun == "answer"
    two_translations(
        (
            _("Answer with {what}", what=what) if answer else _("Continuation with {what}", what=what),
            with_pe.translation,
        ),
        (
            _("Answer without {what}", what=what) if answer else _("Continuation without {what}", what=what),
            page.translate(positional_encoding=False, trace=False).translation,
        ),
        1.5,
    )
if rotary:
    rotary_what_if(page, rope_factor, len(with_pe.output_ids), with_pe.translation)
layer = min(ctl.layer, with_pe.trace.n_layers(stack) - 1)
on = with_pe.trace.pattern(stack, "self", layer)[ctl.head]
if decoder_only:  # the same pieces read without positions: its own continuation would differ
    # this layer's weights alone: the pass without positions stops at this layer
    off = explanations.teacher_forced_at(
        bundle,
        ctl.sentence,
        with_pe.output_ids,
        stages.attention(stack, "self", layer, "pattern"),
        ctl.interventions(positional_encoding=False),
        chat=ctl.chat,
    )[0, ctl.head]
    window = around(ctl.step, len(with_pe.trace.tgt_pieces))
else:
    off = without_pe.trace.pattern(stack, "self", layer)[ctl.head]
    window = source_span if relative else lengths.source_window(len(pieces))
read = with_pe.trace.tgt_pieces if decoder_only else with_pe.trace.src_pieces
page.show(
    shared(
        mask_comparison,
        on,
        off,
        read,
        read,
        style,
        _("Decoder self-attention L{layer} H{head}", layer=layer + 1, head=ctl.head + 1)
        if decoder_only
        else _("Encoder self-attention L{layer} H{head}", layer=layer + 1, head=ctl.head + 1),
        (_("{what} on", what=what), _("{what} off", what=what)),
        rows=window,
        columns=window,
    ),
    _(
        "Both panels read the same text: your prompt and the continuation made with the positions on. Without "
        "{what} a piece still sees only the pieces before it (the causal mask), so order is not lost "
        "altogether, but nothing tells it how far back each of them stands. The pass without positions runs only "
        "up to the layer on show (the layers after it would change nothing here), so a later layer takes a "
        "little longer the first time it is picked.",
        what=what,
    )
    if decoder_only
    else _(
        "Without position information, a word attends the same way wherever it stands: repeated words get "
        "identical rows, and the model loses word order."
    ),
    key="pe-experiment",
)
page.finish(globals())
