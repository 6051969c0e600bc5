"""The Positional encoding page as panels: the table of absolute positions (the formula's or a learned one), its
similarities, a few of its dimensions and the sizes of what is added; T5's relative bias by pieces and by
distance; a rotary model's turns (views.rotary); and the experiment that switches positions off."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import plotly.graph_objects as go

from i18n import N_, _, later, n_, sentences
from model import Bundle, EncodeResult, TranslationResult, cosine
from model.engine import stages
from model.engine.config import ModelConfig
from model.results import Trace
from views import rotary
from views.controls import WINDOW
from views.fields import Field
from views.markdown import md
from views.panels import Panel, side_by_side, words
from views.runs import main_result
from views.scene import Scene
from viz.lengths import DETAIL, Span, around, clip, whole
from viz.masks import mask_comparison
from viz.positional import encoding_curves, encoding_heatmap, mean_norms, similarity_matrix, vector_sizes, wavelength
from viz.relative_bias import bias_against_distance, bias_heatmaps, distance_profile, distance_words, heatmap_words

Result = TranslationResult | EncodeResult
Profiles = dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]  # a stack's distances, buckets, bias per head
SHOWN = 128  # positions drawn: a sentence uses few, and 512 rows would only slow the page down
BEYOND = 1.25  # the distance chart runs this far past max_distance, to show the last bucket's flat stretch
# What the experiment switches off, by the model's kind of positions: said with _(WHAT[kind]).
WHAT = {
    "relative": N_("the bias"),
    "learned": N_("the learned positions"),
    "rotary": N_("the rotation"),
    "sinusoidal": N_("the encoding"),
}


def _dims_below(d_model: int | None) -> Callable[[str], tuple[int, int]]:
    """A parser of two dimensions 'a-b' (a < b) of a model `d_model` wide (any width, when None)."""

    def parse(text: str) -> tuple[int, int]:
        low, _dash, high = text.partition("-")
        lo, hi = int(low), int(high)
        if not 0 <= lo < hi < (hi + 1 if d_model is None else d_model):
            raise ValueError(later("expected two dimensions a-b with 0 <= a < b < {d}", d=d_model or "d_model"))
        return lo, hi

    return parse


def _dump_dims(value: tuple[int, int] | None) -> str:
    return "" if value is None else f"{value[0]}-{value[1]}"


# The dimensions whose curves are drawn, first and last; None: the model's first half (dims_field gives the
# page its model's own)
DIMS = Field("dims", None, _dims_below(None), _dump_dims)
FIELDS = [WINDOW, DIMS, rotary.BASE, rotary.SHIFT, rotary.KEY]
NEEDS_RESULT = True


def dims_field(d_model: int) -> Field:
    """The dimensions' control for a model `d_model` wide: its first half by default."""
    return replace(DIMS, default=(0, d_model // 2), parse=_dims_below(d_model))


def shown_dims(value: tuple[int, int] | None, d_model: int) -> tuple[int, int]:
    """The dimensions a stored value asks for, inside a model `d_model` wide (a value kept from a wider model
    ends at its last dimension)."""
    if value is None:
        return 0, d_model // 2
    low, high = value
    return (min(low, d_model - 2), d_model - 1) if high >= d_model else (low, high)


def kind_of(cfg: ModelConfig) -> str:
    """The model's kind of positions, a key of WHAT: "relative" (T5), "learned", "rotary" or "sinusoidal"."""
    return cfg.positional if cfg.positional in ("relative", "learned", "rotary") else "sinusoidal"


def lead() -> str:
    """The words the page opens with."""
    return _(
        "Attention by itself does not know word order: it treats its input as a set. The paper adds "
        "to each embedding a vector that depends only on the position, made of sines and cosines "
        "of geometrically decreasing frequencies: PE(pos, 2i) = sin(pos / 10000^(2i/d)), "
        "PE(pos, 2i+1) = cos(pos / 10000^(2i/d))."
    )


def source_span(scene: Scene, n: int) -> Span:
    """The source pieces the detailed heatmaps show: all of a short text, else the `window` control's (the
    window slider's value, ui.parts.lengths.source_window, without the slider)."""
    return whole(n) if n <= DETAIL else clip(scene.value(WINDOW.key, WINDOW.default), n)


def pieces_of(scene: Scene, trace: Trace) -> list[str]:
    """The pieces the positions reach first: a decoder-only model's (it has no source), else the source's."""
    return trace.tgt_pieces if scene.decoder_only else trace.src_pieces


def traced(result: Result | None) -> Trace:
    """A run's trace: every run this page draws from keeps one."""
    assert result is not None and result.trace is not None, "the page's runs keep their trace"
    return result.trace


def typed_pieces(scene: Scene) -> list[str]:
    """The typed text's pieces: a continuation's own pieces come after the prompt's."""
    pieces = pieces_of(scene, traced(scene.result))
    typed = len(getattr(scene.result, "prompt_ids", ())) or len(pieces)
    return pieces[:typed]


def as_trained(scene: Scene) -> Result:
    """The run with the positions as the model was trained: the page's own when the sidebar leaves them on."""
    if scene.controls.positional and scene.result is not None:
        return scene.result
    return main_result(scene.bundle, scene.controls, positional_encoding=True)


# ---- T5's relative bias --------------------------------------------------------------------------------------


def relative_intro(scene: Scene) -> list[Panel]:
    """What a relative-position model adds instead of a table, and a note when the sidebar switches it off."""
    cfg = scene.bundle.config
    intro = _(
        "{name} adds **nothing** to its embeddings: no formula, no table. Instead, every self-attention "
        "score gets a learned number that depends only on the head and on how far the key stands from the "
        "query (key position − query position), filed into {buckets} buckets. Each stack computes this bias "
        "once and adds it to every score of **every** self-attention layer; cross-attention gets none (a "
        "French piece and an English piece share no positions).",
        name=md(scene.bundle.name),
        buckets=cfg.relative_buckets,
    )
    shown = [words(scene.key("bias-intro"), intro, "info")]
    if not scene.controls.positional:
        off = _(
            "The positions switch is off in the sidebar: the figures below show the bias the model adds "
            "when it is on; every other page now runs without it."
        )
        shown.append(Panel(scene.key("bias-off"), caption=off))
    return shown


def profiles(bundle: Bundle) -> Profiles:
    """Each stack's bias and bucket at every distance from -reach to reach: past max_distance nothing changes."""
    reach = round(bundle.config.relative_max_distance * BEYOND)
    return {
        name: distance_profile(*bundle.relative_bias(name, reach + 1, reach + 1)) for name in ("encoder", "decoder")
    }


def bias_heading(scene: Scene) -> Panel:
    """The heading of the bias over the text (the source window's slider follows it)."""
    return Panel(scene.key("bias-heading"), heading=_("The bias over your text"))


def bias_panels(scene: Scene, trace: Trace, profile: Profiles, source: Span) -> list[Panel]:
    """Each stack's bias over the text's pieces, one panel per head: the source through its window, the decoder
    around the step."""
    output = around(scene.controls.step, len(trace.tgt_pieces))
    shown: list[Panel] = []
    for name, queries, span in (("encoder", trace.src_pieces, source), ("decoder", trace.tgt_pieces, output)):
        bias = trace.tensor(stages.position_bias(name))[0]  # (heads, queries, keys)
        distances, buckets, _bias = profile[name]
        title, caption = heatmap_words(name)
        figure = scene.figure(
            bias_heatmaps, bias, queries, queries, distances, buckets, scene.style, title, rows=span, columns=span
        )
        shown.append(Panel(scene.key(f"bias-{name}"), figure, caption=caption))
    return shown


def distance_panels(scene: Scene, trace: Trace, profile: Profiles) -> list[Panel]:
    """Each stack's bias against distance, with its buckets and the farthest pair of the text marked."""
    cfg = scene.bundle.config
    n_buckets, max_distance = cfg.relative_buckets, cfg.relative_max_distance
    shown: list[Panel] = []
    for name, queries in (("encoder", trace.src_pieces), ("decoder", trace.tgt_pieces)):
        distances, buckets, bias = profile[name]
        title, caption = distance_words(name, n_buckets, max_distance, md(scene.bundle.name))
        figure = scene.figure(
            bias_against_distance, distances, buckets, bias, scene.style, title, max_distance, len(queries) - 1
        )
        heading = "" if shown else _("The bias against distance")
        shown.append(Panel(scene.key(f"distance-{name}"), figure, heading=heading, caption=caption))
    return shown


def relative_part(scene: Scene, trace: Trace) -> list[Panel]:
    """A relative-position model's part, from `trace` (a run with the bias on)."""
    profile = profiles(scene.bundle)
    source = source_span(scene, len(trace.src_pieces))
    shown = [*relative_intro(scene), bias_heading(scene), *bias_panels(scene, trace, profile, source)]
    return shown + distance_panels(scene, trace, profile)


# ---- A table of absolute positions ---------------------------------------------------------------------------


def absolute_intro(scene: Scene) -> list[Panel]:
    """What a learned table is (and where a decoder-only model adds it), or Marian's layout of the formula."""
    cfg, name = scene.bundle.config, md(scene.bundle.name)
    if cfg.positional == "learned":
        no_source = (
            _(
                "{name} is decoder-only: there is no source, and the table is added to the decoder's input, your "
                "text and its continuation.",
                name=name,
            )
            if scene.decoder_only
            else ""
        )
        learned = _(
            "{name} learns its position vectors instead of using the formula: one trained vector per "
            "position, {n} of them. The plots below show that learned table; it has no frequencies by "
            "construction, so look for what training put there.",
            name=name,
            n=cfg.max_len,
        )
        return [words(scene.key("pe-intro"), sentences(learned, no_source), "info")]
    if cfg.positional == "sinusoidal_halves":
        halves = _(
            "{name} uses the formula with Marian's layout: the same sines and cosines, but every sine in "
            "dimensions 0-{last_sine} and every cosine in {first_cosine}-{last}, instead of alternating. The "
            "plots below show the table exactly as this model adds it.",
            name=name,
            last_sine=cfg.d_model // 2 - 1,
            first_cosine=cfg.d_model // 2,
            last=cfg.d_model - 1,
        )
        return [words(scene.key("pe-intro"), halves, "info")]
    return []


def table_title(cfg: ModelConfig) -> str:
    """The table's title: a learned table or the formula's, all its positions or the first SHOWN."""
    learned, n, d = cfg.positional == "learned", cfg.max_len, cfg.d_model
    if n > SHOWN:
        if learned:
            return _("Learned position table (first {shown} of {n} positions × {d})", shown=SHOWN, n=n, d=d)
        return _("Encoding matrix (first {shown} of {n} positions × {d})", shown=SHOWN, n=n, d=d)
    if learned:
        return n_("Learned position table ({n} position × {d})", "Learned position table ({n} positions × {d})", n, d=d)
    return n_("Encoding matrix ({n} position × {d})", "Encoding matrix ({n} positions × {d})", n, d=d)


def shown_table(bundle: Bundle) -> np.ndarray:
    """The first SHOWN rows of the table the model adds to its embeddings."""
    table = bundle.position_table()
    assert table is not None, "a model whose positions are a formula or a learned table has one"
    return table[:SHOWN]


def table_figure(scene: Scene) -> go.Figure:
    """The table as a heatmap."""
    cfg = scene.bundle.config
    return scene.figure(
        encoding_heatmap, shown_table(scene.bundle), scene.style, table_title(cfg), cfg.positional == "learned"
    )


def prompt_table(scene: Scene, figure: go.Figure) -> Panel:
    """While the output is written: the table (`figure`, table_figure's), which needs no run of the model."""
    caption = _(
        "Each row is the vector added to the embedding at one position, whatever the text. The rest of the page "
        "follows when the model has written its output."
    )
    return Panel(scene.key("prompt-pe-table"), figure, heading=_("What each position adds"), caption=caption)


def table_panels(scene: Scene, figure: go.Figure) -> list[Panel]:
    """The table (`figure`, table_figure's) beside the similarity of its positions."""
    learned = scene.bundle.config.positional == "learned"
    caption = sentences(
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
    )
    similar = scene.figure(similarity_matrix, shown_table(scene.bundle), scene.style, _("Position similarity"))
    similar_caption = (
        _(
            "Cosine similarity of the vectors of two positions: where training made nearby positions alike, a "
            "bright band follows the diagonal."
        )
        if learned
        else _(
            "Cosine similarity of the vectors of two positions: high near the diagonal and falling with "
            "distance, so nearby positions look alike."
        )
    )
    row = scene.key("pe-tables")
    return [
        Panel(scene.key("pe-table"), figure, caption=caption, row=row, width=3),
        Panel(scene.key("pe-sim"), similar, caption=similar_caption, row=row, width=2),
    ]


def curve_dims(span: tuple[int, int]) -> list[int]:
    """At most five dimensions spread evenly from the first to the last of `span`."""
    lo, hi = span
    count = min(5, hi - lo + 1)
    return sorted({round(lo + i * (hi - lo) / max(count - 1, 1)) for i in range(count)})


def curves_panel(scene: Scene, span: tuple[int, int]) -> Panel:
    """A few dimensions of the table against position, spread over `span`."""
    d_model = scene.bundle.config.d_model
    figure = scene.figure(encoding_curves, shown_table(scene.bundle), curve_dims(span), scene.style)
    caption = (
        _("Each curve is one dimension of the learned vectors against position.")
        if scene.bundle.config.positional == "learned"
        else _(
            "Each dimension is a wave over positions; its period grows from 2π ≈ 6.3 (the fastest pair) to "
            "{slowest} (the slowest), approaching 10000·2π as d_model grows. Together they work like the hands of "
            "a clock.",
            slowest=f"{wavelength(d_model - 1, d_model):,.0f}",
        )
    )
    return Panel(scene.key("pe-curves"), figure, caption=caption)


def _unscaled(scene: Scene) -> str:
    """Said of a model that does not multiply its token embeddings by √d_model ('' of one that does)."""
    cfg, name = scene.bundle.config, md(scene.bundle.name)
    if cfg.scale_embeddings:
        return ""
    if cfg.embed_norm:
        return _(
            "{name} does not multiply its token embeddings by √d_model (BERT adds token, position and "
            "token-type vectors and normalizes the sum with a LayerNorm, which sets the scale instead): the "
            "token bars and the '× √d_model' bars below are the same.",
            name=name,
        )
    return _(
        "{name} does not multiply its token embeddings by √d_model: the token bars and the '× √d_model' "
        "bars below are the same.",
        name=name,
    )


def sizes_panel(scene: Scene) -> Panel:
    """The sizes of the token embeddings, the same times √d_model and the positions, over the page's run."""
    cfg, trace = scene.bundle.config, traced(scene.result)
    side = "target" if scene.decoder_only else "source"
    token, scaled, position = (
        trace.tensor(stages.embedding(stage, side))[0] for stage in ("token", "scaled", "position")
    )
    token_norm, scaled_norm, position_norm = mean_norms(token, scaled, position)
    figure = scene.figure(vector_sizes, token, scaled, position, pieces_of(scene, trace), scene.style)
    caption = sentences(
        _(
            "In this sentence the token embeddings have a mean norm of {token:.2f}; multiplied by √{d} ≈ "
            "{root:.1f} they reach {scaled:.1f}, against {position:.1f} for the encoding (every encoding vector "
            "has norm √(d_model/2)), so position information does not drown the meaning of the word.",
            token=token_norm,
            d=cfg.d_model,
            root=cfg.d_model**0.5,
            scaled=scaled_norm,
            position=position_norm,
        )
        if cfg.scale_embeddings and cfg.positional != "learned"
        else _(
            "In this sentence the token embeddings have a mean norm of {token:.2f} and the position vectors "
            "{position:.2f}.",
            token=token_norm,
            position=position_norm,
        ),
        _("The positional encoding is switched off in the sidebar, so its bars are zero.")
        if not scene.controls.positional
        else "",
    )
    heading = _("Why the embeddings are multiplied by √d_model")
    return Panel(scene.key("pe-sizes"), figure, heading=heading, text=_unscaled(scene), tone="info", caption=caption)


def absolute_part(scene: Scene) -> list[Panel]:
    """A model's part whose positions are a table: the formula's, or a learned one."""
    span = shown_dims(scene.value(DIMS.key), scene.bundle.config.d_model)
    shown = [*absolute_intro(scene), *table_panels(scene, table_figure(scene))]
    return shown + [curves_panel(scene, span), sizes_panel(scene)]


# ---- The experiment ------------------------------------------------------------------------------------------


def what_off(scene: Scene) -> str:
    """What the experiment switches off, in words."""
    return _(WHAT[kind_of(scene.bundle.config)])


def experiment_heading(scene: Scene) -> Panel:
    """The experiment's heading."""
    return Panel(scene.key("pe-experiment-heading"), heading=_("Experiment: switch {what} off", what=what_off(scene)))


def similarity_panel(scene: Scene, with_pe: EncodeResult, without_pe: EncodeResult) -> Panel:
    """An encoder-only model's sentence embeddings with and without positions, compared (a metric)."""
    label = _("Cosine similarity of the sentence embeddings with and without positions")
    value = f"{cosine(with_pe.embedding, without_pe.embedding):.3f}"
    return Panel(scene.key("pe-similarity"), text=label, metric=value)


def outputs_panels(scene: Scene, with_text: str, without_text: str) -> list[Panel]:
    """The translations (continuations, answers) with and without positions, side by side."""
    return side_by_side(scene.key("pe-outputs"), (with_text, without_text), output_labels(scene), size=1.5)


def output_labels(scene: Scene) -> tuple[str, str]:
    """What the outputs with and without positions are called: translations, continuations or answers."""
    what = what_off(scene)
    if not scene.decoder_only:
        return _("Translation with {what}", what=what), _("Translation without {what}", what=what)
    if scene.output_noun == "answer":
        return _("Answer with {what}", what=what), _("Answer without {what}", what=what)
    return _("Continuation with {what}", what=what), _("Continuation without {what}", what=what)


def experiment_layer(scene: Scene, trace: Trace) -> tuple[str, int]:
    """The stack and layer whose self-attention the experiment compares: the sidebar's layer, within the stack
    the positions reach first."""
    stack = "decoder" if scene.decoder_only else "encoder"
    return stack, min(scene.controls.layer, trace.n_layers(stack) - 1)


def positionless_stage(scene: Scene, trace: Trace) -> str:
    """The hook point whose pattern the experiment reads without positions."""
    stack, layer = experiment_layer(scene, trace)
    return stages.attention(stack, "self", layer, "pattern")


def experiment_panel(scene: Scene, with_pe: Result, off: np.ndarray, source: Span | None = None) -> Panel:
    """One head's self-attention with and without positions; `off` holds every head's pattern without them (a
    decoder-only model's over the continuation made with them), `source` the source window (an encoder's)."""
    ctl, trace = scene.controls, traced(with_pe)
    stack, layer = experiment_layer(scene, trace)
    on = trace.pattern(stack, "self", layer)[ctl.head]
    read = pieces_of(scene, trace)
    window = around(ctl.step, len(trace.tgt_pieces)) if scene.decoder_only or source is None else source
    what = what_off(scene)
    fields = dict(layer=layer + 1, head=ctl.head + 1)
    title = (
        _("Decoder self-attention L{layer} H{head}", **fields)
        if scene.decoder_only
        else _("Encoder self-attention L{layer} H{head}", **fields)
    )
    names = (_("{what} on", what=what), _("{what} off", what=what))
    figure = scene.figure(
        mask_comparison, on, off[ctl.head], read, read, scene.style, title, names, rows=window, columns=window
    )
    caption = (
        _(
            "Both panels read the same text: your prompt and the continuation made with the positions on. Without "
            "{what} a piece still sees only the pieces before it (the causal mask), so order is not lost "
            "altogether, but nothing tells it how far back each of them stands. The pass without positions runs "
            "only up to the layer on show (the layers after it would change nothing here), so a later layer takes "
            "a little longer the first time it is picked.",
            what=what,
        )
        if scene.decoder_only
        else _(
            "Without position information, a word attends the same way wherever it stands: repeated words get "
            "identical rows, and the model loses word order."
        )
    )
    return Panel(scene.key("pe-experiment"), figure, caption=caption)


def experiment_panels(scene: Scene, with_pe: Result) -> list[Panel]:
    """The experiment as a notebook gets it: an encoder's outputs with and without positions, and one head's
    self-attention (a decoder-only model's second continuation, which waits for a button on the page at a real
    size, is left out)."""
    ctl, trace, shown = scene.controls, traced(with_pe), [experiment_heading(scene)]
    if scene.decoder_only:
        iv = ctl.interventions(positional_encoding=False)
        stage = positionless_stage(scene, trace)
        output = list(getattr(with_pe, "output_ids", ()))
        off = scene.bundle.teacher_forced_at(ctl.sentence, output, stage, iv, ctl.chat)[0]
        return shown + [experiment_panel(scene, with_pe, off)]
    without_pe = main_result(scene.bundle, ctl, positional_encoding=False)
    if isinstance(with_pe, EncodeResult) and isinstance(without_pe, EncodeResult):
        shown.append(similarity_panel(scene, with_pe, without_pe))
    elif isinstance(with_pe, TranslationResult) and isinstance(without_pe, TranslationResult):
        shown += outputs_panels(scene, with_pe.translation, without_pe.translation)
    stack, layer = experiment_layer(scene, trace)
    off = traced(without_pe).pattern(stack, "self", layer)
    return shown + [experiment_panel(scene, with_pe, off, source_span(scene, len(trace.src_pieces)))]


def panels(scene: Scene) -> list[Panel]:
    """The page as drawn on a first run: the lead, the model's part (T5's bias, a rotary model's turns, or the
    table of positions) and the experiment."""
    with_pe = as_trained(scene)
    shown = [words(scene.key("lead"), lead())]
    kind = kind_of(scene.bundle.config)
    if kind == "relative":
        shown += relative_part(scene, traced(with_pe))
    elif kind == "rotary":
        shown += rotary.panels(scene, traced(with_pe), typed_pieces(scene))
    else:
        shown += absolute_part(scene)
    return shown + experiment_panels(scene, with_pe)
