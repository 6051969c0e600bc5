"""The Tensor shapes page as panels: the letters of the shapes and what the model does differently, the flow
through one layer of each stack, every recorded stage with its shape and statistics, one stage as a heatmap,
and the weights of one layer."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from i18n import N_, _, later, listing, n_, sentences
from model.engine import stages
from model.engine.config import ModelConfig
from model.results import Trace
from views.controls import WINDOW
from views.fields import Field
from views.markdown import md
from views.panels import Panel, words
from views.positional import source_span, traced
from views.scene import Scene
from viz.flow import flow_diagram
from viz.lengths import Span, rows_shown
from viz.shapes import (
    Blueprint,
    as_matrix,
    grouped_note,
    kept_as,
    key_value_heads_named,
    stages_frame,
    symbolic_shape,
    tensor_heatmap,
    top_columns,
    weights_frame,
)

LOGIT_COLUMNS = 60
STATISTICS = ("mean", "std", "min", "max")
# The weights table's columns (viz.shapes.weights_frame's names), said with _(WEIGHT_COLUMNS[name]).
WEIGHT_COLUMNS = {"parameter": N_("parameter"), "shape": N_("shape"), "numbers": N_("numbers"), "role": N_("role")}
# The stages table's columns (viz.shapes.stages_frame's names) as a person reads them: said with _(COLUMNS[name]).
COLUMNS = {
    "stage": N_("stage"),
    "shape": N_("shape"),
    "symbolic": N_("symbolic"),
    "mean": N_("mean"),
    "std": N_("std"),
    "min": N_("min"),
    "max": N_("max"),
    "masked": N_("masked"),
}


def _stage(text: str) -> str:
    if not re.fullmatch(r"[a-z_]+(\.[a-z0-9_]+)*", text):
        raise ValueError(later("not a stage name"))
    return text


# The stage drawn as a heatmap; '': the first attention pattern (stage_field gives the page its trace's own)
STAGE = Field("stage", "", _stage)
FIELDS = [WINDOW, STAGE]
NEEDS_RESULT = True


def stage_field(default: str) -> Field:
    """The stage's control, `default` (default_stage's) unless the URL names another."""
    return replace(STAGE, default=default)


def default_stage(scene: Scene, trace: Trace) -> str:
    """The stage shown first: the first layer's attention pattern (cross-attention's, where there is one)."""
    first = stages.attention("decoder", "cross" if scene.bundle.capabilities.cross_attention else "self", 0, "pattern")
    names = [name for name, _tensor in trace.stages]
    return first if first in names else names[0]


def _grouped(cfg: ModelConfig) -> bool:
    """Grouped-query (or multi-query) attention: query heads share key/value heads."""
    return cfg.kv_heads < cfg.n_heads


def _cached(scene: Scene) -> bool:
    """The keys and values are cached (a decoder's), not only computed."""
    return kept_as("decoder" if scene.bundle.capabilities.decoder else "encoder") == "cached"


def _text_letters(scene: Scene, trace: Trace) -> list[str]:
    """The letters of the text's lengths: S for the source, T for the decoder's positions."""
    bundle, has = scene.bundle, scene.bundle.capabilities
    said = []
    if has.encoder:
        said.append(
            _(
                "S = source pieces ({n}, the task prefix '{prefix}' included)",
                n=len(trace.src_pieces),
                prefix=md(bundle.task_prefix.strip()),
            )
            if bundle.task_prefix
            else _("S = source pieces ({n})", n=len(trace.src_pieces))
        )
    if has.decoder:
        said.append(
            _("T = target pieces ({n})", n=len(trace.tgt_pieces))
            if has.encoder
            else _(
                "T = decoder positions ({n}: your chat message wrapped by the chat template, then each new piece but "
                "the last)",
                n=len(trace.tgt_pieces),
            )
            if scene.chat
            else _("T = decoder positions ({n}: your text, then each new piece but the last)", n=len(trace.tgt_pieces))
        )
    return said


def letters(scene: Scene, trace: Trace) -> str:
    """What each letter of the shapes stands for, with its size in this run: the page's first words."""
    cfg, has = scene.bundle.config, scene.bundle.capabilities
    batch = trace.tensor(stages.embedding("ids", "source" if has.encoder else "target")).shape[0]
    said = [_("B = batch ({n})", n=batch), *_text_letters(scene, trace)]
    said += [f"d_model = {cfg.d_model}", n_("h = {n} head", "h = {n} heads", cfg.n_heads)]
    if _grouped(cfg):
        said.append(f"h_kv = {key_value_heads_named(cfg.kv_heads)}")
    said.append(
        f"d_k = d_model / h = {cfg.d_k}"
        if cfg.d_attention == cfg.d_model
        else _(
            "d_k = {d_k} (a size of its own, not d_model / h = {ratio}): the heads side by side are h × d_k = {h} × "
            "{d_k} = d_attention = {width} wide, and the output projection W_O brings them back to d_model = "
            "{d_model}",
            d_k=cfg.d_k,
            ratio=f"{cfg.d_model / cfg.n_heads:g}",
            h=cfg.n_heads,
            width=cfg.d_attention,
            d_model=cfg.d_model,
        )
    )
    said += [f"d_ff = {cfg.d_ff}", f"vocab = {cfg.vocab_size:,}"]
    return _("{letters}.", letters=listing(said))


def _kind_notes(scene: Scene) -> list[str]:
    """What a model without an encoder or a decoder has not."""
    if scene.encoder_only:
        return [
            _("This model is encoder-only: its stages end with the encoder's output, with no decoder and no logits.")
        ]
    if scene.decoder_only:
        return [
            _(
                "{name} is decoder-only: no source, no encoder, no cross-attention. Its stages run from the ids of "
                "your text through the decoder's self-attention and feed-forward layers to one row of logits per "
                "position, each row predicting the piece that follows it.",
                name=md(scene.bundle.name),
            )
        ]
    return []


def _qk_hooks(cfg: ModelConfig) -> dict[str, str]:
    """The first layer's self-attention queries, keys and values, by their letter."""
    stack = "decoder" if cfg.n_decoder_layers else "encoder"
    return {kind: stages.attention(stack, "self", 0, kind) for kind in ("q", "k", "v")}


def _position_notes(scene: Scene) -> list[str]:
    """Where a model's positions are, when nothing positional is added to the embeddings."""
    cfg, has = scene.bundle.config, scene.bundle.capabilities
    if cfg.positional == "relative":
        relative = _(
            "There is no `{position}` stage: nothing positional is added to the embeddings. Each stack records "
            "`{bias}` (and the decoder's) once instead, (1, h, S, S) in the encoder and (1, h, T, T) in the "
            "decoder: one bias for the whole batch, added to the scores of every self-attention layer of that "
            "stack (the recorded scores, `{scores}` and the others, include it).",
            position=stages.embedding("position"),
            bias=stages.position_bias("encoder"),
            scores=stages.attention("encoder", "self", 0, "scores"),
        )
        return [relative]
    if cfg.positional != "rotary":
        return []
    hooks = _qk_hooks(cfg)
    rope = dict(
        position=stages.embedding("position", "source" if has.encoder else "target"), q=hooks["q"], k=hooks["k"]
    )
    turned = (
        _(
            "There is no `{position}` stage: nothing positional is added to the embeddings. Each self-attention "
            "turns its queries and keys by their position instead (rotary positions, RoPE: the Positional encoding "
            "page), after the projections and the per-head q/k norms: `{q}` and `{k}` hold them turned.",
            **rope,
        )
        if cfg.qk_norm
        else _(
            "There is no `{position}` stage: nothing positional is added to the embeddings. Each self-attention "
            "turns its queries and keys by their position instead (rotary positions, RoPE: the Positional encoding "
            "page), after the projections: `{q}` and `{k}` hold them turned.",
            **rope,
        )
    )
    return [turned]


def _norm_note(cfg: ModelConfig) -> str:
    """What an RMS norm is, and Gemma's four norms a layer."""
    return sentences(
        _(
            "Its norms are RMS norms: x divided by the root of its mean square, times a learned gain (stored "
            "as w, applied as 1 + w, computed in float32: Gemma's form); no mean is subtracted and no bias "
            "added, so each norm has one vector of d_model numbers."
        )
        if cfg.norm == "rms_plus_one"
        else _(
            "Its norms are RMS norms: x divided by the root of its mean square, times a learned gain; no mean "
            "is subtracted and no bias added, so each norm has one vector of d_model numbers."
        ),
        _(
            "Besides the norm before each sublayer, another normalizes the sublayer's output before it is "
            "added back: four norms a layer."
        )
        if cfg.sandwich_norm
        else "",
    )


def _layer_notes(scene: Scene) -> list[str]:
    """What a layer does differently from the paper's: shared key/value heads, RMS norms, pre-LN, a gate."""
    cfg, has = scene.bundle.config, scene.bundle.capabilities
    said = []
    if _grouped(cfg):
        heads = (cfg.kv_heads, cfg.n_heads, cfg.d_k)
        said.append(grouped_note(heads, "T" if has.decoder else "S", _cached(scene), _qk_hooks(cfg)))
    if cfg.norm in ("rms", "rms_plus_one"):
        said.append(_norm_note(cfg))
    if cfg.norm_first:
        said.append(
            _(
                "Pre-LN: each sublayer reads a normalized copy of the residual stream (a norm stage such as "
                "`{norm}` comes before its sublayer), the sublayer's output is added back, and a final norm follows "
                "the last layer.",
                norm=stages.sublayer("decoder", 0, "norm_self"),
            )
        )
    if cfg.gated_ffn:
        said.append(
            _(
                "Its feed-forward is gated: act(x W₁) ⊙ (x W₃), then W₂. W₃ is a second d_model → d_ff matrix (in "
                "the weights below); `{hidden}` holds the product, (B, T, d_ff).",
                hidden=stages.ffn("decoder", 0, "hidden"),
            )
        )
    return said


def notes(scene: Scene) -> list[str]:
    """What the model does differently from the paper's, one note each (the page lists them under the letters)."""
    return _kind_notes(scene) + _position_notes(scene) + _layer_notes(scene)


def prompt_stages(scene: Scene, prompt: Trace) -> Panel:
    """While the continuation or translation is written: every stage of the prompt's pass and its shape (an
    encoder-decoder's: the encoder's over the sentence); the caption is said above the table."""
    encoder = scene.bundle.capabilities.encoder
    caption = (  # the statistics (a tenth of a second at a real size) come with the finished page
        _(
            "The encoder's pass over the sentence's {n} pieces, before the decoder writes its first piece: S is "
            "the sentence's length; the decoder's stages and every stage's statistics join when the translation is "
            "whole.",
            n=len(prompt.src_pieces),
        )
        if encoder
        else _(
            "The pass over the prompt's {n} pieces, before the first new piece: T is the prompt's length here; "
            "the new pieces' rows and every stage's statistics join when the continuation is whole.",
            n=len(prompt.tgt_pieces),
        )
    )
    table = stages_frame(prompt.tensors, scene.bundle.config.kv_heads, statistics=False)
    heading = _("The encoder's stages") if encoder else _("The prompt's stages")
    return Panel(scene.key("prompt-stages"), table=table, heading=heading, caption=caption)


def flow_panel(scene: Scene, trace: Trace) -> Panel:
    """The flow diagram of one layer of each stack, shapes on its arrows."""
    cfg, has = scene.bundle.config, scene.bundle.capabilities
    heading = (
        _("The flow through one encoder layer and one decoder layer")
        if has.cross_attention
        else _("The flow through one encoder layer")
        if has.encoder
        else _("The flow through one decoder layer")
    )
    figure = scene.figure(flow_diagram, dict(trace.stages), scene.style, None, Blueprint.of(cfg))
    caption = sentences(
        _(
            "Numbers on the arrows are the shapes of the tensors that flow along them for this sentence. Green: "
            "the residual (skip) path around each sublayer, which adds the sublayer's input to its output. "
            "Inside each attention box the {h} heads work side by side on d_k = {d_k} numbers each, and their "
            "outputs are concatenated back and projected by W_O.",
            h=cfg.n_heads,
            d_k=cfg.d_k,
        ),
        _(
            "Their keys and values come from {heads}, each repeated for its {group} query heads.",
            heads=key_value_heads_named(cfg.kv_heads),
            group=cfg.n_heads // cfg.kv_heads,
        )
        if _grouped(cfg)
        else "",
    )
    return Panel(scene.key("flow"), figure, heading=heading, caption=caption)


def stages_panel(scene: Scene, trace: Trace) -> Panel:
    """Every recorded stage as a table row: its shape and statistics."""
    cfg = scene.bundle.config
    twice = dict(heads=key_value_heads_named(cfg.kv_heads), h=cfg.n_heads)
    repeated = (
        _("Keys and values appear twice: as their {heads} cached them, then repeated to the {h} query heads.", **twice)
        if _cached(scene)
        else _(
            "Keys and values appear twice: as their {heads} computed them, then repeated to the {h} query heads.",
            **twice,
        )
    )
    caption = sentences(
        _("Statistics are over the finite entries; 'masked' counts the −∞ that masks put into the scores."),
        repeated if _grouped(cfg) else "",
    )
    table = stages_frame(trace.tensors, cfg.kv_heads)
    return Panel(scene.key("stages"), table=table, heading=_("Every stage, in the order it runs"), caption=caption)


def stage_heading(scene: Scene, trace: Trace, asked: str) -> list[Panel]:
    """The heading of one stage's heatmap, and a warning when the trace has no stage `asked` (the URL's)."""
    heading = Panel(scene.key("stage-heading"), heading=_("Look inside one stage"))
    if asked in [name for name, _tensor in trace.stages]:
        return [heading]
    said = _(
        "This trace has no stage {stage}; showing {default}.", stage=repr(asked), default=default_stage(scene, trace)
    )
    return [heading, words(scene.key("stage-missing"), md(said), "warning")]


def stage_labels(trace: Trace) -> dict[str, str]:
    """Each stage as the stage picker names it: with its symbolic shape."""
    return {name: f"{name}   {symbolic_shape(name, trace.tensor(name).ndim)}" for name, _tensor in trace.stages}


def _top_logits(scene: Scene, matrix: np.ndarray) -> tuple[np.ndarray, list[str], str, str]:
    """A real vocabulary's tens of thousands of logit columns cut to those some step ranked highest: the matrix,
    its columns' pieces, the columns' name and what the caption says of the cut."""
    ids = top_columns(matrix, LOGIT_COLUMNS)
    vocabulary = f"{matrix.shape[-1]:,}"
    columns = _("the {n} pieces with the highest logit at some step (of {total})", n=LOGIT_COLUMNS, total=vocabulary)
    note = _(
        "Only {n} of the {total} vocabulary columns are drawn: those some step ranked highest.",
        n=LOGIT_COLUMNS,
        total=vocabulary,
    )
    return matrix[:, ids], scene.bundle.tokenizer.pieces(ids.tolist()), columns, note


def _axes(trace: Trace, name: str) -> tuple[list[str] | None, list[str] | None, str]:
    """A stage's rows (its pieces, or None for one row of ids), its columns' pieces (an attention's keys; ids'
    positions) and what its columns are."""
    shown = stages.parse(name)
    # cross-attention's keys and values are projections of the encoder memory: one row per source piece
    pieces = trace.src_pieces if shown.source_rows else trace.tgt_pieces
    if shown.stage == "ids":  # one row of ids: the columns are the positions
        return None, pieces, _("position (colour: the token id)")
    attention = shown.keys is not None
    columns = _("key") if attention else (_("vocabulary id") if name == stages.LOGITS else _("dimension"))
    return pieces, {"source": trace.src_pieces, "target": trace.tgt_pieces}.get(shown.keys or ""), columns


def stage_panel(scene: Scene, trace: Trace, name: str, source: Span) -> Panel:
    """One stage drawn as a heatmap of its values (a per-head tensor: the sidebar's head), the source pieces
    through their window, the decoder's around the step."""
    ctl, array = scene.controls, trace.tensor(name)
    matrix = as_matrix(array, ctl.head)
    title = (
        _("{stage} {shape}, head H{head}", stage=name, shape=tuple(array.shape), head=ctl.head + 1)
        if array.ndim == 4
        else f"{name} {tuple(array.shape)}"
    )
    rows, keys, columns = _axes(trace, name)
    note = ""
    if name == stages.LOGITS and matrix.shape[1] > LOGIT_COLUMNS:  # a real vocabulary has tens of thousands of ids
        matrix, keys, columns, note = _top_logits(scene, matrix)
    output = rows_shown(ctl.step, len(trace.tgt_pieces), scene.style.presentation)

    def window(axis: list[str] | None) -> Span | None:
        return source if axis is trace.src_pieces else output if axis is trace.tgt_pieces else None

    figure = scene.figure(
        tensor_heatmap,
        matrix,
        rows,
        scene.style,
        title,
        columns,
        keys,
        window(rows),
        window(keys),
        most_px=scene.style.picture_px,
    )
    caption = sentences(
        _(
            "Rows are positions (pieces); for attention scores and weights the columns are the keys. Pick the "
            "head in the sidebar for per-head tensors."
        ),
        note,
    )
    return Panel(scene.key("stage-heatmap"), figure, caption=caption)


def weights_panel(scene: Scene) -> Panel:
    """Every parameter outside the layers, and the first layer's of each stack, with its shape and role."""
    cfg = scene.bundle.config
    shapes = {name: tuple(tensor.shape) for name, tensor in scene.bundle.model.state_dict().items()}
    encoder_layers, decoder_layers = cfg.n_encoder_layers, cfg.n_decoder_layers
    layers = (
        _("{encoder} encoder and {decoder} decoder layers", encoder=encoder_layers, decoder=decoder_layers)
        if encoder_layers and decoder_layers
        else n_("{n} encoder layer", "{n} encoder layers", encoder_layers)
        if encoder_layers
        else n_("{n} decoder layer", "{n} decoder layers", decoder_layers)
    )
    caption = _(
        "Every parameter outside the layers, and those of the first layer of each stack; the other layers "
        "({layers} in all) repeat them. A projection is stored (out, in), as torch keeps it: x W here is x @ weight.T.",
        layers=layers,
    )
    table = weights_frame(shapes, Blueprint.of(cfg))
    return Panel(scene.key("weights"), table=table, heading=_("The weights of one layer"), caption=caption)


def one_stage(scene: Scene, trace: Trace) -> list[Panel]:
    """One stage as a heatmap: the `stage` control's, or the first attention pattern when the trace has none."""
    asked = scene.value(STAGE.key) or default_stage(scene, trace)
    shown = asked if asked in [name for name, _tensor in trace.stages] else default_stage(scene, trace)
    source = source_span(scene, len(trace.src_pieces))
    return [*stage_heading(scene, trace, asked), stage_panel(scene, trace, shown, source)]


def panels(scene: Scene) -> list[Panel]:
    """The page as drawn on a first run: the letters and notes, the flow, every stage, one stage (first, on a
    projector: the flow is taller than any screen) and the weights."""
    trace = traced(scene.result)
    said = [letters(scene, trace)] + [f"- {note}" for note in notes(scene)]
    shown = [words(scene.key(f"lead-{n}"), text) for n, text in enumerate(said)]
    body = [flow_panel(scene, trace), stages_panel(scene, trace)]
    picked = one_stage(scene, trace)
    shown += picked + body if scene.controls.presentation else body + picked
    return shown + [weights_panel(scene)]
