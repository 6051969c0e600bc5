"""Design choices: the tutorials' "why" questions, each measured on the loaded model and sentence."""

from typing import Any

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from i18n import N_, _, language, n_, sentences
from model import Trace, cosine
from model.analysis.measures import mean_entropy, nan_share, random_dot_variance, raw_dot_variance, softmax_sharpness
from model.engine import stages
from ui.page.markup import two_translations
from ui.page.ondemand import second_continuation
from ui.page.start import start
from ui.parts import lengths, recipes
from ui.session import engine, experiments, explanations
from ui.session.figures import shared
from views.markdown import md
from viz.attention import attention_map
from viz.design import dot_variance_by_head, nan_spread, softmax_against_width, variance_against_width
from viz.lengths import around
from viz.masks import mask_comparison
from viz.positional import mean_norms, vector_sizes
from viz.style import Style

WIDTHS = [2, 4, 8, 16, 32, 64, 128, 256, 512]


@st.cache_resource(show_spinner=False)
def _random_figures(style: Style, words: str) -> tuple[go.Figure, go.Figure]:
    """The same for every visitor and sentence: measured and drawn once per process, style and language
    (`words`: the run's, whose words the figures say; figures are only read when shown, never changed)."""
    dot_var = random_dot_variance(WIDTHS, samples=4000)
    raw, scaled = softmax_sharpness(WIDTHS, samples=500), softmax_sharpness(WIDTHS, samples=500, scaled=True)
    return (
        variance_against_width(WIDTHS, dot_var, style, _("Random unit-variance q, k")),
        softmax_against_width(WIDTHS, raw, scaled, style, _("What that does to a softmax over 10 keys")),
    )


def _same_as_sidebar(**changes: Any) -> bool:
    return ctl.interventions(**changes) == ctl.interventions()


def _first_stack_trace(**changes: Any) -> Trace:
    """The first stack's recorded stages with the switches changed (the page's own trace when nothing
    changes): the encoder's, or for a decoder-only model the same text and continuation read again."""
    if _same_as_sidebar(**changes):
        return trace
    if bundle.capabilities.encoder:
        return page.encode(**changes).trace
    return explanations.teacher_forced(
        bundle, ctl.sentence, page.result.output_ids, ctl.interventions(**changes), ctl.chat
    )


def _first_stack_pattern(**changes: Any) -> np.ndarray:
    """The first stack's self-attention weights at the sidebar's layer (heads, queries, keys) with the
    switches changed: a decoder-only model's pass over the same text stops at that layer."""
    if _same_as_sidebar(**changes) or bundle.capabilities.encoder:
        return _first_stack_trace(**changes).pattern(stack, "self", layer)
    name = stages.attention(stack, "self", layer, "pattern")
    return explanations.teacher_forced_at(
        bundle, ctl.sentence, page.result.output_ids, name, ctl.interventions(**changes), ctl.chat
    )[0]


def _translation(**changes: Any) -> str:
    """The translation (a decoder-only model's continuation) with the switches changed: only its text is
    shown, so only the text is decoded."""
    if _same_as_sidebar(**changes):
        return page.result.translation
    return engine.translation_text(bundle, ctl.sentence, ctl.interventions(**changes), ctl.beam_size, ctl.chat)


def _continued(changes: dict[str, Any], name: str) -> bool:
    """Whether a decoder-only model's continuation with the switches changed is shown: the page's own,
    or another one (on a button at a real model's size); `name` (said) names the change."""
    return _same_as_sidebar(**changes) or second_continuation(
        page.bundle,
        page.controls,
        len(page.result.output_ids),
        _("Continue {how}", how=name),
        f"continue-{'-'.join(f'{k}-{v}' for k, v in changes.items())}",
        **changes,
    )


def _compare_outputs(on: dict[str, Any], off: dict[str, Any], left: str, right: str) -> None:
    """The switches changed two ways, side by side: translations, or for an encoder-only model how alike
    the embeddings are (`left`, `right`: said, "with the scaling" and "without it")."""
    if page.encoder_only:
        st.metric(
            _("Cosine similarity of the sentence embeddings, {left} vs {right}", left=left, right=right),
            f"{cosine(page.encode(**on).embedding, page.encode(**off).embedding):.4f}",
        )
    elif page.decoder_only and not all(_continued(changes, name) for changes, name in ((on, left), (off, right))):
        return
    else:
        two_translations((left.capitalize(), _translation(**on)), (right.capitalize(), _translation(**off)), 1.3)


page = start(N_("Design choices"))
ctl, style, cfg, bundle = page.controls, page.style, page.bundle.config, page.bundle
trace = page.result.trace
decoder_only = page.decoder_only
stack = "decoder" if decoder_only else "encoder"  # the stack that reads the text first
pieces = trace.tgt_pieces if decoder_only else trace.src_pieces
layer, head = min(ctl.layer, trace.n_layers(stack) - 1), ctl.head
page.lead(
    _(
        "The paper makes a handful of choices the tutorials keep asking about. Each section of this page measures "
        "one of them on **{model}** and the sentence in the sidebar, and turns the choice off to show what it "
        "prevents. The same switches are in the sidebar, so every other page shows their effect too.",
        model=md(bundle.name),
    )
)

# 1. sqrt(d_k)
st.header(_("1. Why divide QKᵀ by √d_k?"))
variances = raw_dot_variance(trace, stack)
page.lead(
    _(
        "A score is the dot product of a query and a key, a sum of d_k = {d_k} products. If the entries were "
        "independent with variance 1, the sum would have variance d_k: the wider the heads, the larger the "
        "scores, and the softmax of large scores is nearly one-hot.",
        d_k=cfg.d_k,
    )
)
if not cfg.scale_scores:
    st.info(
        _(
            "{model} never divides its scores by √d_k: T5 folds the factor into its initialisation (its query "
            "weights start √d_k times smaller) and was trained without it, so the raw scores below are what its "
            "softmax gets. The scale switch in the sidebar changes nothing for this model.",
            model=md(bundle.name),
        )
    )
heads_title = (
    _("Variance of the raw q·k of every decoder self-attention head")
    if decoder_only
    else _("Variance of the raw q·k of every encoder head")
)
page.show(
    shared(dot_variance_by_head, variances, cfg.d_k, style, heads_title),
    _(
        "Measured on this sentence, from the recorded queries and keys (before any scaling): from {low} to "
        "{high}, mean {mean}, against d_k = {d_k}. Trained queries and keys are not unit-variance vectors, so the "
        "bars need not sit on the line; what matters is that raw scores of this size would push the softmax to "
        "its corners.",
        low=f"{variances.min():.1f}",
        high=f"{variances.max():.1f}",
        mean=f"{variances.mean():.1f}",
        d_k=cfg.d_k,
    ),
    key="dk-heads",
)
random_variance, random_softmax = _random_figures(style, language())
left, right = st.columns([2, 3])
with left:
    page.show(
        random_variance,
        _(
            "4,000 random pairs per width: the variance of q·k follows d_k (the dashed line), as the paper's "
            "footnote says."
        ),
        key="dk-random",
    )
with right:
    page.show(
        random_softmax,
        _(
            "Solid: raw scores. As d_k grows the largest weight goes to 1, the entropy to 0, and the gradient "
            "that flows back through the softmax shrinks towards 0: a head stops learning. Dashed: divided by "
            "√d_k, all three stay where they are whatever the width."
        ),
        key="dk-softmax",
    )
st.subheader(_("The switch, on the live model"))
if not cfg.scale_scores:
    st.info(
        _(
            "Not shown for {model}: with the switch on or off it computes the very same scores, so both patterns "
            "and both outputs would be identical.",
            model=md(bundle.name),
        )
    )
else:
    on_pattern = _first_stack_pattern(scale_scores=True)
    off_pattern = _first_stack_pattern(scale_scores=False)
    window = around(ctl.step, len(pieces)) if decoder_only else lengths.source_window(len(pieces))
    entropies = dict(on=f"{mean_entropy(on_pattern):.3f}", off=f"{mean_entropy(off_pattern):.3f}", layer=layer + 1)
    entropies["stack"] = _("decoder") if decoder_only else _("encoder")
    page.show(
        shared(
            mask_comparison,
            on_pattern[head],
            off_pattern[head],
            pieces,
            pieces,
            style,
            (
                _("Decoder self-attention L{layer} H{head}", layer=layer + 1, head=head + 1)
                if decoder_only
                else _("Encoder self-attention L{layer} H{head}", layer=layer + 1, head=head + 1)
            ),
            (_("scores / √d_k"), _("raw scores")),
            rows=window,
            columns=window,
        ),
        sentences(
            _(
                "Mean entropy of every {stack} head of layer L{layer}: {on} nats with the scaling, {off} without: "
                "the raw scores make the patterns sharper (lower entropy). The model was trained with the scaling, "
                "so without it every head reads other weights than it learned to use.",
                **entropies,
            ),
            _(
                "Both read the same text: your prompt and the continuation made with the scaling. The pass under "
                "the switch the sidebar does not have runs only up to the layer on show (the layers after it would "
                "change nothing here), so a later layer takes a little longer the first time it is picked."
            )
            if decoder_only
            else "",
        ),
        key="dk-live",
    )
    _compare_outputs(dict(scale_scores=True), dict(scale_scores=False), _("with the scaling"), _("without it"))

# 2. sqrt(d_model)
st.header(_("2. Why multiply the embeddings by √d_model?"))
if not cfg.scale_embeddings:
    st.info(
        _(
            "Not applicable: {model} never scales its token embeddings: it adds token, position and token-type "
            "vectors and normalizes the sum with a LayerNorm, which sets the scale instead.",
            model=md(bundle.name),
        )
        if cfg.embed_norm
        else _(
            "Not applicable: {model} never scales its token embeddings, and adds nothing positional to them (its "
            "positions are a bias on the attention scores), so there is no position vector for the words to "
            "outweigh.",
            model=md(bundle.name),
        )
        if cfg.positional == "relative"
        else _(
            "Not applicable: {model} never scales its token embeddings: its learned position vectors were trained "
            "together with the token embeddings, at their scale.",
            model=md(bundle.name),
        )
        if cfg.positional == "learned"
        else _("Not applicable: {model} never scales its token embeddings.", model=md(bundle.name))
    )
elif cfg.positional in ("relative", "rotary"):  # scaled, with no position vector to outweigh (Gemma 3)
    st.info(
        _(
            "{model} multiplies its token embeddings by √{d_model} though it adds no position vector (its positions "
            "turn the queries and keys): here the factor sets how loud the embedding stands in the residual stream "
            "against what every layer adds to it, which its normalized sublayers keep small.",
            model=md(bundle.name),
            d_model=cfg.d_model,
        )
    )
    _compare_outputs(dict(scale_embeddings=True), dict(scale_embeddings=False), _("with the scaling"), _("without it"))
else:
    sized = _first_stack_trace(scale_embeddings=True)
    side = "target" if decoder_only else "source"
    token, scaled, position = (
        sized.tensor(stages.embedding(stage, side))[0] for stage in ("token", "scaled", "position")
    )
    token_norm, scaled_norm, position_norm = mean_norms(token, scaled, position)
    page.show(
        shared(vector_sizes, token, scaled, position, pieces, style),
        _(
            "The token embeddings of this sentence have a mean norm of {token}; times √{d_model} they reach "
            "{scaled}, against {position} for the positional encoding. Without the factor, the position vectors "
            "would outweigh the words they are added to.",
            token=f"{token_norm:.2f}",
            d_model=cfg.d_model,
            scaled=f"{scaled_norm:.1f}",
            position=f"{position_norm:.1f}",
        ),
        key="dmodel-sizes",
    )
    _compare_outputs(dict(scale_embeddings=True), dict(scale_embeddings=False), _("with the scaling"), _("without it"))

# 3. -inf or -1e9
st.header(_("3. Fill masked scores with −∞ or −10⁹?"))
st.markdown(
    _(
        "A mask sets the scores it hides to a very negative number, so that the softmax gives them weight 0. With "
        "−∞ that weight is exactly 0. But a query whose **every** key is masked has nothing left: softmax(−∞, …, "
        "−∞) is 0/0, which is NaN. With −10⁹ that row is uniform instead, and nothing breaks."
    )
)
if decoder_only:
    st.info(
        _(
            "Not shown for {model}: the demo batches your sentence with a source that is all padding, and a "
            "decoder-only model has no source and no encoder. Its own rows are never fully masked either: the "
            "causal mask always leaves each piece itself, so −∞ and −10⁹ give it the same weights.",
            model=md(bundle.name),
        )
    )
elif not ctl.padding:
    st.info(_("The padding mask is off in the sidebar, so nothing is masked here: switch it on to see the demo."))
else:
    # the page's own translation feeds the decoder: both fills give it on a normal sentence (tests/test_what_if.py)
    output = () if page.encoder_only else page.result.output_ids
    empty_inf = experiments.empty_source(bundle, ctl.sentence, ctl.interventions(mask_value="-inf"), output)
    empty_big = experiments.empty_source(bundle, ctl.sentence, ctl.interventions(mask_value="-1e9"), output)
    shares = nan_share(empty_inf)
    first = next((index for index, (_name, share) in enumerate(shares) if share > 0), None)
    spared = [name for name, share in shares[first:] if share == 0] if first is not None else []
    reached = next((name for name, share in shares if share > 0 and name.startswith("decoder")), None)
    st.markdown(
        _(
            "The demo batches your sentence with a source that is **all padding** (length 0), as a padded batch "
            "with an empty row would: every key of that row is masked."
        )
    )
    if first is None:
        story = _("No NaN anywhere: nothing was fully masked.")
    else:
        story = _(
            "The first NaN appears at {stage}, the softmax of the first layer; every later encoder stage is NaN "
            "after it (context vectors, residual stream, every norm).",
            stage=shares[first][0],
        )
        if reached:
            story = sentences(
                story,
                n_(
                    "The decoder's own {n} stage before it reads the encoder (its embeddings and first "
                    "self-attention) stays clean; the NaN enters at {stage} and from there fills every stage to the "
                    "logits.",
                    "The decoder's own {n} stages before it reads the encoder (its embeddings and first "
                    "self-attention) stay clean; the NaN enters at {stage} and from there fills every stage to the "
                    "logits.",
                    len(spared),
                    stage=reached,
                ),
            )
    page.show(
        shared(nan_spread, shares, style, _("The empty row with −∞: share of NaN in every stage")),
        sentences(story, _("Your own sentence, in the same batch, has no NaN at all.")),
        key="fill-nan",
    )
    pattern = empty_big.pattern("encoder", "self", 0)[head]
    first = around(0, len(empty_big.src_pieces))  # every row and column alike: the first pieces say it all
    page.show(
        shared(
            attention_map,
            pattern,
            empty_big.src_pieces,
            empty_big.src_pieces,
            style,
            _("The empty row with −10⁹: encoder self-attention L1 H{head}", head=head + 1),
            rows=first,
            columns=first,
        ),
        _(
            "Every key scores −10⁹, so every weight is the same: 1 / the number of keys. The row is meaningless "
            "but finite, and the other rows of the batch never see it."
        ),
        key="fill-uniform",
    )
st.markdown(
    _(
        "**What this engine does.** Its default is −∞, like the paper's reference code, because in normal use no "
        "row is fully masked: padding only ever follows a sentence's own pieces, and the first position of a row "
        "always counts (Marian's decoder even starts from the pad id). In every such row at least one key is "
        "real, so exp(−∞) = 0 exactly; with −10⁹, exp(−10⁹ − max) underflows to exactly 0 in float32, which is "
        "why both fills give the same patterns and translations on every normal sentence (the tests check it to "
        "10⁻⁶). The switch in the sidebar picks the fill for every page."
    )
)

# 4. recipes
st.header(_("4. Post-LN or Pre-LN, warm-up, label smoothing"))
if not bundle.capabilities.trained_here:
    st.info(
        _(
            "{model} was trained elsewhere: its checkpoint carries no training runs to compare. The recipe "
            "comparison belongs to this project's own default model.",
            model=md(bundle.name),
        )
    )
elif not recipes.show(page):
    st.info(
        _(
            "Not measured for this checkpoint: it ships no recipe comparison (`recipes/`). Run "
            "`python -m model.recipes --out <checkpoint>/recipes` to measure it; until then this page states no "
            "finding."
        )
    )
page.finish(globals())
