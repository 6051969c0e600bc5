"""Tensor shapes: every stage from ids to logits, its shape, statistics, a flow diagram and a heatmap."""

import re

import streamlit as st

from model.engine import stages
from model.results import Trace
from ui.page.binding import bind, page_value, set_value
from ui.page.markup import md
from ui.page.start import Page, start
from ui.page.stream import Preview
from ui.parts import lengths
from ui.session.figures import shared
from ui.session.urlstate import Field
from viz.flow import flow_diagram
from viz.lengths import Span, around
from viz.shapes import (
    Blueprint,
    as_matrix,
    kept_as,
    key_value_heads_named,
    stages_frame,
    symbolic_shape,
    tensor_heatmap,
    top_columns,
    weights_frame,
)

LOGIT_COLUMNS = 60


def prompt_stages(page: Page, prompt: Trace) -> None:
    """While the continuation is written: every stage of the prompt's pass, its shape and statistics."""
    st.subheader("The prompt's stages")
    st.caption(
        f"The pass over the prompt's {len(prompt.tgt_pieces)} pieces, before the first new piece: T is the "
        "prompt's length here; the new pieces' rows join when the continuation is whole."
    )
    with st.container(key="prompt-stages"):
        st.dataframe(stages_frame(prompt.tensors, page.bundle.config.kv_heads), hide_index=True, height=420)


page = start("Tensor shapes", preview=Preview(prompt=prompt_stages))
trace, ctl, style, bundle = page.result.trace, page.controls, page.style, page.bundle
cfg, has = bundle.config, bundle.capabilities
stage_names = [name for name, _ in trace.stages]
batch = trace.tensor(stages.embedding("ids", "source" if has.encoder else "target")).shape[0]

letters = [f"B = batch ({batch})"]
if has.encoder:
    letters.append(
        f"S = source pieces ({len(trace.src_pieces)}"
        + (f", the task prefix '{md(bundle.task_prefix.strip())}' included)" if bundle.task_prefix else ")")
    )
if has.decoder:
    letters.append(
        f"T = target pieces ({len(trace.tgt_pieces)})"
        if has.encoder
        else f"T = decoder positions ({len(trace.tgt_pieces)}: "
        + ("your chat message wrapped by the chat template" if page.chat else "your text")
        + ", then each new piece but the last)"
    )
letters += [f"d_model = {cfg.d_model}", f"h = {cfg.n_heads} heads"]
grouped = cfg.kv_heads < cfg.n_heads  # grouped-query (or multi-query) attention: shared key/value heads
group, kv_named = cfg.n_heads // cfg.kv_heads, key_value_heads_named(cfg.kv_heads)
kept = kept_as("decoder" if has.decoder else "encoder")
if grouped:
    letters.append(f"h_kv = {kv_named}")
letters.append(
    f"d_k = d_model / h = {cfg.d_k}"
    if cfg.d_attention == cfg.d_model
    else f"d_k = {cfg.d_k} (a size of its own, not d_model / h = {cfg.d_model / cfg.n_heads:g}): the heads side "
    f"by side are h × d_k = {cfg.n_heads} × {cfg.d_k} = d_attention = {cfg.d_attention} wide, and the output "
    f"projection W_O brings them back to d_model = {cfg.d_model}"
)
letters += [f"d_ff = {cfg.d_ff}", f"vocab = {cfg.vocab_size:,}"]
page.lead(", ".join(letters) + ".")
notes = []
if page.encoder_only:
    notes.append("This model is encoder-only: its stages end with the encoder's output, with no decoder and no logits.")
elif not has.encoder:
    notes.append(
        f"{md(bundle.name)} is decoder-only: no source, no encoder, no cross-attention. Its stages run from the "
        "ids of your text through the decoder's self-attention and feed-forward layers to one row of logits "
        "per position, each row predicting the piece that follows it."
    )
if cfg.positional == "relative":
    notes.append(
        f"There is no `{stages.embedding('position')}` stage: nothing positional is added to the embeddings. "
        f"Each stack records `{stages.position_bias('encoder')}` (and the decoder's) once instead, (1, h, S, S) "
        "in the encoder and (1, h, T, T) in the decoder: one bias for the whole batch, added to the scores of "
        "every self-attention layer of that stack (the recorded scores, "
        f"`{stages.attention('encoder', 'self', 0, 'scores')}`"
        " and the others, include it)."
    )
rope_stack = "decoder" if cfg.n_decoder_layers else "encoder"
if cfg.positional == "rotary":
    notes.append(
        f"There is no `{stages.embedding('position', 'source' if has.encoder else 'target')}` stage: nothing "
        "positional is added to the embeddings. Each self-attention turns its queries and keys by their position "
        "instead (rotary positions, RoPE: the Positional encoding page), after the projections"
        + (" and the per-head q/k norms" if cfg.qk_norm else "")
        + f": `{stages.attention(rope_stack, 'self', 0, 'q')}` and `{stages.attention(rope_stack, 'self', 0, 'k')}` "
        "hold them turned."
    )
if grouped:
    kv_rows = "T" if has.decoder else "S"
    notes.append(
        f"Keys and values have {cfg.kv_heads} head{'s' if cfg.kv_heads > 1 else ''}, not {cfg.n_heads}: "
        + (
            f"multi-query attention, where all {cfg.n_heads} query heads share one key/value head. "
            if cfg.kv_heads == 1
            else "grouped-query attention, where groups of query heads share key/value heads "
            f"({cfg.n_heads} query heads, {cfg.kv_heads} key/value heads, {group} query heads per key/value head). "
        )
        + f"W_K and W_V project d_model → h_kv·d_k = {cfg.kv_heads} × {cfg.d_k} = {cfg.kv_heads * cfg.d_k}, not "
        f"h·d_k = {cfg.n_heads * cfg.d_k} (the weights below). The keys and values are computed"
        + (" and cached" if has.decoder else "")
        + f" as (B, h_kv, {kv_rows}, d_k): the rows marked '{kv_named} (as {kept})' in the table below. Then each "
        f"is repeated for the {group} query heads of its group, to (B, h, {kv_rows}, d_k): the row after, "
        f"`{stages.attention(rope_stack, 'self', 0, 'k')}` (and `{stages.attention(rope_stack, 'self', 0, 'v')}`), "
        "so that every query head has its scores and pattern."
    )
if cfg.norm in ("rms", "rms_plus_one"):
    notes.append(
        "Its norms are RMS norms: x divided by the root of its mean square, times a learned gain"
        + (" (stored as w, applied as 1 + w, computed in float32: Gemma's form)" if cfg.norm == "rms_plus_one" else "")
        + "; no mean is subtracted and no bias added, so each norm has one vector of d_model numbers."
        + (
            " Besides the norm before each sublayer, another normalizes the sublayer's output before it is added "
            "back: four norms a layer."
            if cfg.sandwich_norm
            else ""
        )
    )
if cfg.norm_first:
    notes.append(
        "Pre-LN: each sublayer reads a normalized copy of the residual stream (a norm stage such as "
        f"`{stages.sublayer('decoder', 0, 'norm_self')}` comes before its sublayer), the sublayer's output is "
        "added back, and a final norm follows the last layer."
    )
if cfg.gated_ffn:
    notes.append(
        "Its feed-forward is gated: act(x W₁) ⊙ (x W₃), then W₂. W₃ is a second d_model → d_ff matrix "
        f"(in the weights below); `{stages.ffn('decoder', 0, 'hidden')}` holds the product, (B, T, d_ff)."
    )
for note in notes:
    page.lead(f"- {note}")


def _stage(text: str) -> str:
    if not re.fullmatch(r"[a-z_]+(\.[a-z0-9_]+)*", text):
        raise ValueError("not a stage name")
    return text


first_attention = stages.attention("decoder", "cross" if has.cross_attention else "self", 0, "pattern")
default_stage = first_attention if first_attention in stage_names else stage_names[0]
STAGE = Field("stage", default_stage, _stage)
page_value(STAGE)


def _flow() -> None:
    """The flow diagram of one layer of each stack, shapes on its arrows."""
    st.subheader(
        "The flow through "
        + (
            "one encoder layer and one decoder layer"
            if has.cross_attention
            else "one encoder layer"
            if has.encoder
            else "one decoder layer"
        )
    )
    page.show(
        shared(flow_diagram, dict(trace.stages), style, None, Blueprint.of(cfg)),
        "Numbers on the arrows are the shapes of the tensors that flow along them for this sentence. Green: the "
        "residual (skip) path around each sublayer, which adds the sublayer's input to its output. Inside each "
        f"attention box the {cfg.n_heads} heads work side by side on d_k = {cfg.d_k} numbers each, and their "
        "outputs are concatenated back and projected by W_O."
        + (
            f" Their keys and values come from {kv_named}, each repeated for its {group} query heads."
            if grouped
            else ""
        ),
        key="flow",
    )


def _every_stage() -> None:
    """Every recorded stage as a table row: its shape and statistics."""
    st.subheader("Every stage, in the order it runs")
    frame = stages_frame(trace.tensors, cfg.kv_heads)
    st.dataframe(
        frame,
        hide_index=True,
        height=420,
        column_config={
            "#": st.column_config.NumberColumn("#", width=40),
            # wide enough for the longest hook name, whole (about 6 px a character at the table's font, measured)
            "stage": st.column_config.TextColumn("stage", width=7 * max(map(len, frame["stage"])) + 24),
            "masked": st.column_config.NumberColumn("masked", width=64),
            **{c: st.column_config.NumberColumn(c, format="%.4f", width=76) for c in ("mean", "std", "min", "max")},
        },
    )
    st.caption(
        "Statistics are over the finite entries; 'masked' counts the −∞ that masks put into the scores."
        + (
            f" Keys and values appear twice: as their {kv_named} {kept} them, then repeated to the {cfg.n_heads} "
            "query heads."
            if grouped
            else ""
        )
    )


source = lengths.source_window(len(trace.src_pieces))
output = around(ctl.step, len(trace.tgt_pieces))


def _window(axis: list[str] | None) -> Span | None:
    """The window over an axis of source or decoder pieces (a long sentence shows a part); None for the rest."""
    return source if axis is trace.src_pieces else output if axis is trace.tgt_pieces else None


def _one_stage() -> None:
    """One stage picked in a box, drawn as a heatmap of its values."""
    st.subheader("Look inside one stage")
    if page_value(STAGE) not in stage_names:
        st.warning(md(f"This trace has no stage {page_value(STAGE)!r}; showing {default_stage}."))
        set_value("stage", default_stage)
    stage_labels = {n: f"{n}   {symbolic_shape(n, trace.tensor(n).ndim)}" for n in stage_names}
    name = bind("stage", st.selectbox, label="Stage", options=stage_names, format_func=stage_labels.get)
    array = trace.tensor(name)
    # cross-attention's keys and values are projections of the encoder memory: one row per source piece
    shown = stages.parse(name)
    pieces = trace.src_pieces if shown.source_rows else trace.tgt_pieces
    matrix = as_matrix(array, ctl.head)
    heads_note = f", head H{ctl.head + 1}" if array.ndim == 4 else ""
    attention = shown.keys is not None
    if shown.stage == "ids":  # one row of ids: the columns are the positions
        rows, keys, columns = None, pieces, "position (colour: the token id)"
    else:
        rows, columns = pieces, "key" if attention else ("vocabulary id" if name == stages.LOGITS else "dimension")
        keys = {"source": trace.src_pieces, "target": trace.tgt_pieces}.get(shown.keys)
    note = ""
    if name == stages.LOGITS and matrix.shape[1] > LOGIT_COLUMNS:  # a real vocabulary has tens of thousands of ids
        ids = top_columns(matrix, LOGIT_COLUMNS)
        matrix, keys = matrix[:, ids], bundle.tokenizer.pieces(ids.tolist())
        columns = f"the {LOGIT_COLUMNS} pieces with the highest logit at some step (of {array.shape[-1]:,})"
        note = (
            f" Only {LOGIT_COLUMNS} of the {array.shape[-1]:,} vocabulary columns are drawn:"
            " those some step ranked highest."
        )

    page.show(
        shared(
            tensor_heatmap,
            matrix,
            rows,
            style,
            f"{name} {tuple(array.shape)}{heads_note}",
            columns,
            keys,
            _window(rows),
            _window(keys),
        ),
        "Rows are positions (pieces); for attention scores and weights the columns are the keys. Pick the head "
        "in the sidebar for per-head tensors." + note,
        key="stage-heatmap",
    )


if ctl.presentation:  # a projector's first screen shows one stage whole: the flow is taller than any screen
    _one_stage()
_flow()
_every_stage()
if not ctl.presentation:
    _one_stage()

st.subheader("The weights of one layer")
layers = " and ".join(
    f"{count} {stack}"
    for count, stack in ((cfg.n_encoder_layers, "encoder"), (cfg.n_decoder_layers, "decoder"))
    if count
)
st.dataframe(
    weights_frame({name: tuple(tensor.shape) for name, tensor in bundle.model.state_dict().items()}, Blueprint.of(cfg)),
    hide_index=True,
    width="stretch",
)
st.caption(
    f"Every parameter outside the layers, and those of the first layer of each stack; the other layers "
    f"({layers} layers in all) repeat them. A projection is stored (out, in), as torch keeps it: x W here is "
    "x @ weight.T."
)
page.finish(globals())
