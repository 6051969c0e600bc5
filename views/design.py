"""Design choices as panels: the tutorials' "why" questions (√d_k, √d_model, the fill of masked scores, the
training recipes), each measured on the loaded model and sentence, with the choice turned off to show what it
prevents."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from i18n import N_, _, n_, sentences
from model import cosine
from model.analysis.measures import mean_entropy, nan_share, random_dot_variance, raw_dot_variance, softmax_sharpness
from model.engine import stages
from views import recipes as recipe_comparison
from views import temperature
from views.controls import WINDOW
from views.lengths import source_span
from views.markdown import md
from views.panels import Panel, side_by_side, words
from views.scene import Scene
from views.what_if import Passes, WhatIf, layer, output_ids, pieces, stack, trace
from viz.attention import attention_map
from viz.design import dot_variance_by_head, nan_spread, softmax_against_width, variance_against_width
from viz.lengths import Span, around
from viz.masks import mask_comparison
from viz.positional import mean_norms, vector_sizes
from viz.style import Style

FIELDS = [WINDOW]  # the source pieces the live switch's heatmap shows (ui/parts/lengths.py draws its slider)
NEEDS_RESULT = True
WIDTHS = [2, 4, 8, 16, 32, 64, 128, 256, 512]
# The page's sections, each under its question (said with _() where drawn)
SECTIONS = {
    "dk": N_("1. Why divide QKᵀ by √d_k?"),
    "dmodel": N_("2. Why multiply the embeddings by √d_model?"),
    "fill": N_("3. Fill masked scores with −∞ or −10⁹?"),
    "recipes": N_("4. Post-LN or Pre-LN, warm-up, label smoothing"),
    "sampling": N_("5. Why sample, and what does temperature do?"),
}


def section_title(section: str) -> str:
    """A section's question (a key of SECTIONS), in the run's language."""
    return _(SECTIONS[section])


SWITCHES = {"dk": "scale_scores", "dmodel": "scale_embeddings"}  # the switch a section turns off and on


def random_figures(style: Style) -> tuple[go.Figure, go.Figure]:
    """The same for every sentence: q·k's variance against the width for random unit-variance vectors, and what
    that does to a softmax (measured and drawn now, in the run's language)."""
    dot_var = random_dot_variance(WIDTHS, samples=4000)
    raw = softmax_sharpness(WIDTHS, samples=500)
    scaled = softmax_sharpness(WIDTHS, samples=500, scaled=True)
    return (
        variance_against_width(WIDTHS, dot_var, style, _("Random unit-variance q, k")),
        softmax_against_width(WIDTHS, raw, scaled, style, _("What that does to a softmax over 10 keys")),
    )


def heading(scene: Scene, section: str) -> Panel:
    """A section's question, over it."""
    return Panel(scene.key(f"{section}-section"), heading=section_title(section))


def intro(scene: Scene) -> Panel:
    """What the page does (the page leads with it)."""
    return words(
        scene.key("design-lead"),
        _(
            "The paper makes a handful of choices the tutorials keep asking about. Each section of this page "
            "measures one of them on **{model}** and the sentence in the sidebar, and turns the choice off to show "
            "what it prevents. The same switches are in the sidebar, so every other page shows their effect too.",
            model=md(scene.bundle.name),
        ),
    )


def scores_lead(scene: Scene) -> Panel:
    """Why wide heads give large scores (the page leads with it into section 1's first figure)."""
    return words(
        scene.key("dk-lead"),
        _(
            "A score is the dot product of a query and a key, a sum of d_k = {d_k} products. If the entries were "
            "independent with variance 1, the sum would have variance d_k: the wider the heads, the larger the "
            "scores, and the softmax of large scores is nearly one-hot.",
            d_k=scene.bundle.config.d_k,
        ),
    )


def scores(scene: Scene, randoms: tuple[go.Figure, go.Figure]) -> list[Panel]:
    """Section 1's measures: the raw q·k variance of every head of the first stack, and beside each other the
    random vectors' (`randoms`, from random_figures)."""
    cfg, name = scene.bundle.config, md(scene.bundle.name)
    shown = []
    if not cfg.scale_scores:
        unscaled = _(
            "{model} never divides its scores by √d_k: T5 folds the factor into its initialisation (its query "
            "weights start √d_k times smaller) and was trained without it, so the raw scores below are what its "
            "softmax gets. The scale switch in the sidebar changes nothing for this model.",
            model=name,
        )
        shown.append(words(scene.key("dk-unscaled"), unscaled, "info"))
    variances = raw_dot_variance(trace(scene), stack(scene))
    title = (
        _("Variance of the raw q·k of every decoder self-attention head")
        if scene.decoder_only
        else _("Variance of the raw q·k of every encoder head")
    )
    measured = _(
        "Measured on this sentence, from the recorded queries and keys (before any scaling): from {low} to "
        "{high}, mean {mean}, against d_k = {d_k}. Trained queries and keys are not unit-variance vectors, so the "
        "bars need not sit on the line; what matters is that raw scores of this size would push the softmax to "
        "its corners.",
        low=f"{variances.min():.1f}",
        high=f"{variances.max():.1f}",
        mean=f"{variances.mean():.1f}",
        d_k=cfg.d_k,
    )
    figure = scene.figure(dot_variance_by_head, variances, cfg.d_k, scene.style, title)
    shown.append(Panel(scene.key("dk-heads"), figure, caption=measured))
    return shown + _random_panels(scene, randoms)


def _random_panels(scene: Scene, randoms: tuple[go.Figure, go.Figure]) -> list[Panel]:
    """The random vectors' variance and softmax, side by side (two fifths and three)."""
    variance, softmax = randoms
    footnote = _(
        "4,000 random pairs per width: the variance of q·k follows d_k (the dashed line), as the paper's footnote says."
    )
    sharpness = _(
        "Solid: raw scores. As d_k grows the largest weight goes to 1, the entropy to 0, and the gradient "
        "that flows back through the softmax shrinks towards 0: a head stops learning. Dashed: divided by "
        "√d_k, all three stay where they are whatever the width."
    )
    return [
        Panel(scene.key("dk-random"), variance, caption=footnote, row="dk-random", width=2),
        Panel(scene.key("dk-softmax"), softmax, caption=sharpness, row="dk-random", width=3),
    ]


def live_heading(scene: Scene) -> Panel:
    """The live switch's heading, and for a model that never scales its scores why nothing is shown under it."""
    said = _("The switch, on the live model")
    if scene.bundle.config.scale_scores:
        return Panel(scene.key("dk-switch"), heading=said)
    unscaled = _(
        "Not shown for {model}: with the switch on or off it computes the very same scores, so both patterns "
        "and both outputs would be identical.",
        model=md(scene.bundle.name),
    )
    return Panel(scene.key("dk-switch"), heading=said, text=unscaled, tone="info")


def live_scores(scene: Scene, what_if: WhatIf, source: Span | None = None) -> list[Panel]:
    """One head of the first stack with the scaling and without, in a window (a decoder-only model's around the
    step; the encoder's `source`, the slider's, else the URL's); none for a model that never scales."""
    if not scene.bundle.config.scale_scores:
        return []
    on_pattern = what_if.first_stack_pattern(scale_scores=True)
    off_pattern = what_if.first_stack_pattern(scale_scores=False)
    shown = pieces(scene)
    at = layer(scene)
    head = scene.controls.head
    if scene.decoder_only:
        window = around(scene.controls.step, len(shown))
    else:
        window = source or source_span(scene.value(WINDOW.key, WINDOW.default), len(shown))
    title = (
        _("Decoder self-attention L{layer} H{head}", layer=at + 1, head=head + 1)
        if scene.decoder_only
        else _("Encoder self-attention L{layer} H{head}", layer=at + 1, head=head + 1)
    )
    names = (_("scores / √d_k"), _("raw scores"))
    figure = scene.figure(
        mask_comparison,
        on_pattern[head],
        off_pattern[head],
        shown,
        shown,
        scene.style,
        title,
        names,
        rows=window,
        columns=window,
    )
    return [Panel(scene.key("dk-live"), figure, caption=_live_caption(scene, on_pattern, off_pattern))]


def sides() -> tuple[str, str]:
    """How a switch's two outputs are named: with the factor, and without it."""
    return _("with the scaling"), _("without it")


def compares(scene: Scene, section: str) -> bool:
    """Whether the section's switch changes this model's outputs (a model that never scales has nothing to
    compare)."""
    cfg = scene.bundle.config
    return cfg.scale_scores if section == "dk" else cfg.scale_embeddings


def compared(scene: Scene, what_if: WhatIf, section: str) -> list[Panel]:
    """The outputs with the section's switch on and off side by side, or for an encoder-only model how alike the
    sentence embeddings are; none when the switch changes nothing."""
    if not compares(scene, section):
        return []
    on, off = {SWITCHES[section]: True}, {SWITCHES[section]: False}
    left, right = sides()
    if scene.encoder_only:
        likeness = cosine(what_if.embedding(**on), what_if.embedding(**off))
        said = _("Cosine similarity of the sentence embeddings, {left} vs {right}", left=left, right=right)
        return [Panel(scene.key(f"{section}-likeness"), text=said, metric=f"{likeness:.4f}")]
    texts = (what_if.output_text(**on), what_if.output_text(**off))
    return side_by_side(scene.key(f"{section}-outputs"), texts, (left.capitalize(), right.capitalize()))


def _live_caption(scene: Scene, on_pattern: np.ndarray, off_pattern: np.ndarray) -> str:
    """How much sharper the raw scores make the layer's heads (and for a decoder-only model, what both read)."""
    entropies = dict(on=f"{mean_entropy(on_pattern):.3f}", off=f"{mean_entropy(off_pattern):.3f}")
    entropies["stack"] = _("decoder") if scene.decoder_only else _("encoder")
    return sentences(
        _(
            "Mean entropy of every {stack} head of layer L{layer}: {on} nats with the scaling, {off} without: "
            "the raw scores make the patterns sharper (lower entropy). The model was trained with the scaling, "
            "so without it every head reads other weights than it learned to use.",
            layer=layer(scene) + 1,
            **entropies,
        ),
        _(
            "Both read the same text: your prompt and the continuation made with the scaling. The pass under "
            "the switch the sidebar does not have runs only up to the layer on show (the layers after it would "
            "change nothing here), so a later layer takes a little longer the first time it is picked."
        )
        if scene.decoder_only
        else "",
    )


def embedding_scale(scene: Scene, what_if: WhatIf) -> list[Panel]:
    """Section 2: why this model does not scale its embeddings, or what the scaling does without a position
    vector, or the sizes of the token, scaled and position vectors."""
    cfg, name = scene.bundle.config, md(scene.bundle.name)
    if not cfg.scale_embeddings:
        return [words(scene.key("dmodel-unscaled"), _unscaled_embeddings(scene), "info")]
    if cfg.positional in ("relative", "rotary"):  # scaled, with no position vector to outweigh (Gemma 3)
        loud = _(
            "{model} multiplies its token embeddings by √{d_model} though it adds no position vector (its positions "
            "turn the queries and keys): here the factor sets how loud the embedding stands in the residual stream "
            "against what every layer adds to it, which its normalized sublayers keep small.",
            model=name,
            d_model=cfg.d_model,
        )
        return [words(scene.key("dmodel-loud"), loud, "info")]
    sized = what_if.first_stack_trace(scale_embeddings=True)
    side = "target" if scene.decoder_only else "source"
    token, scaled, position = (
        sized.tensor(stages.embedding(stage, side))[0] for stage in ("token", "scaled", "position")
    )
    token_norm, scaled_norm, position_norm = mean_norms(token, scaled, position)
    said = _(
        "The token embeddings of this sentence have a mean norm of {token}; times √{d_model} they reach "
        "{scaled}, against {position} for the positional encoding. Without the factor, the position vectors "
        "would outweigh the words they are added to.",
        token=f"{token_norm:.2f}",
        d_model=cfg.d_model,
        scaled=f"{scaled_norm:.1f}",
        position=f"{position_norm:.1f}",
    )
    figure = scene.figure(vector_sizes, token, scaled, position, pieces(scene), scene.style)
    return [Panel(scene.key("dmodel-sizes"), figure, caption=said)]


def _unscaled_embeddings(scene: Scene) -> str:
    """Why the √d_model question does not apply to a model that never scales its embeddings."""
    cfg, name = scene.bundle.config, md(scene.bundle.name)
    if cfg.embed_norm:
        return _(
            "Not applicable: {model} never scales its token embeddings: it adds token, position and token-type "
            "vectors and normalizes the sum with a LayerNorm, which sets the scale instead.",
            model=name,
        )
    if cfg.positional == "relative":
        return _(
            "Not applicable: {model} never scales its token embeddings, and adds nothing positional to them (its "
            "positions are a bias on the attention scores), so there is no position vector for the words to "
            "outweigh.",
            model=name,
        )
    if cfg.positional == "learned":
        return _(
            "Not applicable: {model} never scales its token embeddings: its learned position vectors were trained "
            "together with the token embeddings, at their scale.",
            model=name,
        )
    return _("Not applicable: {model} never scales its token embeddings.", model=name)


def fill(scene: Scene, what_if: WhatIf) -> list[Panel]:
    """Section 3: why a fully masked row is NaN with −∞ and uniform with −10⁹, shown on an all-padding row
    batched with the sentence, or why it is not shown; and what this engine does."""
    problem = _(
        "A mask sets the scores it hides to a very negative number, so that the softmax gives them weight 0. With "
        "−∞ that weight is exactly 0. But a query whose **every** key is masked has nothing left: softmax(−∞, …, "
        "−∞) is 0/0, which is NaN. With −10⁹ that row is uniform instead, and nothing breaks."
    )
    shown = [words(scene.key("fill-lead"), problem)]
    if scene.decoder_only:
        no_source = _(
            "Not shown for {model}: the demo batches your sentence with a source that is all padding, and a "
            "decoder-only model has no source and no encoder. Its own rows are never fully masked either: the "
            "causal mask always leaves each piece itself, so −∞ and −10⁹ give it the same weights.",
            model=md(scene.bundle.name),
        )
        shown.append(words(scene.key("fill-none"), no_source, "info"))
    elif not scene.controls.padding:
        unmasked = _("The padding mask is off in the sidebar, so nothing is masked here: switch it on to see the demo.")
        shown.append(words(scene.key("fill-none"), unmasked, "info"))
    else:
        shown += _empty_row_demo(scene, what_if.passes)
    engine = _(
        "**What this engine does.** Its default is −∞, like the paper's reference code, because in normal use no "
        "row is fully masked: padding only ever follows a sentence's own pieces, and the first position of a row "
        "always counts (Marian's decoder even starts from the pad id). In every such row at least one key is "
        "real, so exp(−∞) = 0 exactly; with −10⁹, exp(−10⁹ − max) underflows to exactly 0 in float32, which is "
        "why both fills give the same patterns and translations on every normal sentence (the tests check it to "
        "10⁻⁶). The switch in the sidebar picks the fill for every page."
    )
    return shown + [words(scene.key("fill-engine"), engine)]


def _empty_row_demo(scene: Scene, passes: Passes) -> list[Panel]:
    """The all-padding row with −∞ (where the NaN starts and how far it spreads) and with −10⁹ (uniform weights)."""
    bundle, ctl, style = scene.bundle, scene.controls, scene.style
    # the page's own translation feeds the decoder: both fills give it on a normal sentence
    # (tests/engine/test_what_if.py)
    empty_inf = passes.empty_source(bundle, ctl.sentence, ctl.interventions(mask_value="-inf"), output_ids(scene))
    empty_big = passes.empty_source(bundle, ctl.sentence, ctl.interventions(mask_value="-1e9"), output_ids(scene))
    shares = nan_share(empty_inf)
    batched = _(
        "The demo batches your sentence with a source that is **all padding** (length 0), as a padded batch "
        "with an empty row would: every key of that row is masked."
    )
    spread = scene.figure(nan_spread, shares, style, _("The empty row with −∞: share of NaN in every stage"))
    first = around(0, len(empty_big.src_pieces))  # every row and column alike: the first pieces say it all
    uniform = scene.figure(
        attention_map,
        empty_big.pattern("encoder", "self", 0)[ctl.head],
        empty_big.src_pieces,
        empty_big.src_pieces,
        style,
        _("The empty row with −10⁹: encoder self-attention L1 H{head}", head=ctl.head + 1),
        rows=first,
        columns=first,
    )
    own_row = _("Your own sentence, in the same batch, has no NaN at all.")
    finite = _(
        "Every key scores −10⁹, so every weight is the same: 1 / the number of keys. The row is meaningless "
        "but finite, and the other rows of the batch never see it."
    )
    return [
        words(scene.key("fill-demo"), batched),
        Panel(scene.key("fill-nan"), spread, caption=sentences(_nan_story(shares), own_row)),
        Panel(scene.key("fill-uniform"), uniform, caption=finite),
    ]


def _nan_story(shares: list[tuple[str, float]]) -> str:
    """Where the empty row's first NaN appears, and which of the decoder's own stages stay clean before it
    reaches them."""
    first = next((index for index, (_name, share) in enumerate(shares) if share > 0), None)
    if first is None:
        return _("No NaN anywhere: nothing was fully masked.")
    story = _(
        "The first NaN appears at {stage}, the softmax of the first layer; every later encoder stage is NaN "
        "after it (context vectors, residual stream, every norm).",
        stage=shares[first][0],
    )
    reached = next((name for name, share in shares if share > 0 and name.startswith("decoder")), None)
    if not reached:
        return story
    spared = [name for name, share in shares[first:] if share == 0]
    clean = n_(
        "The decoder's own {n} stage before it reads the encoder (its embeddings and first "
        "self-attention) stays clean; the NaN enters at {stage} and from there fills every stage to the "
        "logits.",
        "The decoder's own {n} stages before it reads the encoder (its embeddings and first "
        "self-attention) stay clean; the NaN enters at {stage} and from there fills every stage to the "
        "logits.",
        len(spared),
        stage=reached,
    )
    return sentences(story, clean)


def recipes(scene: Scene, comparison: list[Panel]) -> list[Panel]:
    """Section 4: the recipe comparison the checkpoint ships (`comparison`, views.recipes), or why there is
    none."""
    if not scene.bundle.capabilities.trained_here:
        elsewhere = _(
            "{model} was trained elsewhere: its checkpoint carries no training runs to compare. The recipe "
            "comparison belongs to this project's own default model.",
            model=md(scene.bundle.name),
        )
        return [words(scene.key("recipes-none"), elsewhere, "info")]
    if not comparison:
        unmeasured = _(
            "Not measured for this checkpoint: it ships no recipe comparison (`recipes/`). Run "
            "`python -m model.recipes --out <checkpoint>/recipes` to measure it; until then this page states no "
            "finding."
        )
        return [words(scene.key("recipes-none"), unmeasured, "info")]
    return comparison


def panels(scene: Scene) -> list[Panel]:
    """The page as a notebook gets it: every section's measures, the what-ifs run now."""
    what_if = WhatIf(scene)
    return [
        intro(scene),
        heading(scene, "dk"),
        scores_lead(scene),
        *scores(scene, random_figures(scene.style)),
        live_heading(scene),
        *live_scores(scene, what_if),
        *compared(scene, what_if, "dk"),
        heading(scene, "dmodel"),
        *embedding_scale(scene, what_if),
        *compared(scene, what_if, "dmodel"),
        heading(scene, "fill"),
        *fill(scene, what_if),
        heading(scene, "recipes"),
        *recipes(scene, recipe_comparison.panels(scene)),
        heading(scene, "sampling"),
        *temperature.panels(scene),
    ]
