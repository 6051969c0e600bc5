"""Tensor shapes: every stage from ids to logits, its shape, statistics, a flow diagram and a heatmap."""

import re
from unicodedata import east_asian_width

import streamlit as st

from i18n import N_, _, later, listing, n_, sentences
from model.engine import stages
from model.results import Trace
from ui.page.binding import bind, page_value, set_value
from ui.page.start import Page, start
from ui.page.stream import Preview
from ui.parts import lengths
from ui.session.figures import shared
from views.controls import Field
from views.markdown import md
from viz.flow import flow_diagram
from viz.lengths import Span, around
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


def stage_columns(names: list[str]) -> dict[str, object]:
    """How the stages table shows its columns: their names in the language of this run, and widths (the stage
    column wide enough for its longest name, whole: 7 px a character at the table's font, twice that for a wide
    one such as a Chinese character)."""
    longest = max((sum(2 if east_asian_width(c) in "WF" else 1 for c in name) for name in names), default=8)
    widths = {"stage": 7 * longest + 24, "masked": 64, **dict.fromkeys(STATISTICS, 76)}
    config: dict[str, object] = {"#": st.column_config.NumberColumn("#", width=40)}
    for column, label in COLUMNS.items():
        if column in ("stage", "shape", "symbolic"):
            config[column] = st.column_config.TextColumn(_(label), width=widths.get(column))
        else:
            number = "%.4f" if column in STATISTICS else None
            config[column] = st.column_config.NumberColumn(_(label), format=number, width=widths[column])
    return config


def prompt_stages(page: Page, prompt: Trace) -> None:
    """While the continuation or translation is written: every stage of the prompt's pass and its shape (an
    encoder-decoder's: the encoder's over the sentence)."""
    encoder = page.bundle.capabilities.encoder
    st.subheader(_("The encoder's stages") if encoder else _("The prompt's stages"))
    st.caption(  # the statistics (a tenth of a second at a real size) come with the finished page
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
    with st.container(key="prompt-stages"):
        frame = stages_frame(prompt.tensors, page.bundle.config.kv_heads, statistics=False)
        st.dataframe(frame, hide_index=True, height=420, column_config=stage_columns(list(frame["stage"])))


page = start(N_("Tensor shapes"), preview=Preview(prompt=prompt_stages))
trace, ctl, style, bundle = page.result.trace, page.controls, page.style, page.bundle
cfg, has = bundle.config, bundle.capabilities
stage_names = [name for name, _tensor in trace.stages]
batch = trace.tensor(stages.embedding("ids", "source" if has.encoder else "target")).shape[0]

letters = [_("B = batch ({n})", n=batch)]
if has.encoder:
    letters.append(
        _(
            "S = source pieces ({n}, the task prefix '{prefix}' included)",
            n=len(trace.src_pieces),
            prefix=md(bundle.task_prefix.strip()),
        )
        if bundle.task_prefix
        else _("S = source pieces ({n})", n=len(trace.src_pieces))
    )
if has.decoder:
    letters.append(
        _("T = target pieces ({n})", n=len(trace.tgt_pieces))
        if has.encoder
        else _(
            "T = decoder positions ({n}: your chat message wrapped by the chat template, then each new piece but "
            "the last)",
            n=len(trace.tgt_pieces),
        )
        if page.chat
        else _("T = decoder positions ({n}: your text, then each new piece but the last)", n=len(trace.tgt_pieces))
    )
letters += [f"d_model = {cfg.d_model}", n_("h = {n} head", "h = {n} heads", cfg.n_heads)]
grouped = cfg.kv_heads < cfg.n_heads  # grouped-query (or multi-query) attention: shared key/value heads
group, kv_named = cfg.n_heads // cfg.kv_heads, key_value_heads_named(cfg.kv_heads)
cached = kept_as("decoder" if has.decoder else "encoder") == "cached"
if grouped:
    letters.append(f"h_kv = {kv_named}")
letters.append(
    f"d_k = d_model / h = {cfg.d_k}"
    if cfg.d_attention == cfg.d_model
    else _(
        "d_k = {d_k} (a size of its own, not d_model / h = {ratio}): the heads side by side are h × d_k = {h} × "
        "{d_k} = d_attention = {width} wide, and the output projection W_O brings them back to d_model = {d_model}",
        d_k=cfg.d_k,
        ratio=f"{cfg.d_model / cfg.n_heads:g}",
        h=cfg.n_heads,
        width=cfg.d_attention,
        d_model=cfg.d_model,
    )
)
letters += [f"d_ff = {cfg.d_ff}", f"vocab = {cfg.vocab_size:,}"]
page.lead(_("{letters}.", letters=listing(letters)))
notes = []
if page.encoder_only:
    notes.append(
        _("This model is encoder-only: its stages end with the encoder's output, with no decoder and no logits.")
    )
elif not has.encoder:
    notes.append(
        _(
            "{name} is decoder-only: no source, no encoder, no cross-attention. Its stages run from the ids of your "
            "text through the decoder's self-attention and feed-forward layers to one row of logits per position, "
            "each row predicting the piece that follows it.",
            name=md(bundle.name),
        )
    )
if cfg.positional == "relative":
    notes.append(
        _(
            "There is no `{position}` stage: nothing positional is added to the embeddings. Each stack records "
            "`{bias}` (and the decoder's) once instead, (1, h, S, S) in the encoder and (1, h, T, T) in the "
            "decoder: one bias for the whole batch, added to the scores of every self-attention layer of that "
            "stack (the recorded scores, `{scores}` and the others, include it).",
            position=stages.embedding("position"),
            bias=stages.position_bias("encoder"),
            scores=stages.attention("encoder", "self", 0, "scores"),
        )
    )
rope_stack = "decoder" if cfg.n_decoder_layers else "encoder"
hooks = {kind: stages.attention(rope_stack, "self", 0, kind) for kind in ("q", "k", "v")}
if cfg.positional == "rotary":
    rope = dict(
        position=stages.embedding("position", "source" if has.encoder else "target"), q=hooks["q"], k=hooks["k"]
    )
    notes.append(
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
if grouped:
    notes.append(grouped_note((cfg.kv_heads, cfg.n_heads, cfg.d_k), "T" if has.decoder else "S", cached, hooks))
if cfg.norm in ("rms", "rms_plus_one"):
    notes.append(
        sentences(
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
    )
if cfg.norm_first:
    notes.append(
        _(
            "Pre-LN: each sublayer reads a normalized copy of the residual stream (a norm stage such as `{norm}` "
            "comes before its sublayer), the sublayer's output is added back, and a final norm follows the last "
            "layer.",
            norm=stages.sublayer("decoder", 0, "norm_self"),
        )
    )
if cfg.gated_ffn:
    notes.append(
        _(
            "Its feed-forward is gated: act(x W₁) ⊙ (x W₃), then W₂. W₃ is a second d_model → d_ff matrix (in the "
            "weights below); `{hidden}` holds the product, (B, T, d_ff).",
            hidden=stages.ffn("decoder", 0, "hidden"),
        )
    )
for note in notes:
    page.lead(f"- {note}")


def _stage(text: str) -> str:
    if not re.fullmatch(r"[a-z_]+(\.[a-z0-9_]+)*", text):
        raise ValueError(later("not a stage name"))
    return text


first_attention = stages.attention("decoder", "cross" if has.cross_attention else "self", 0, "pattern")
default_stage = first_attention if first_attention in stage_names else stage_names[0]
STAGE = Field("stage", default_stage, _stage)
page_value(STAGE)


def _flow() -> None:
    """The flow diagram of one layer of each stack, shapes on its arrows."""
    st.subheader(
        _("The flow through one encoder layer and one decoder layer")
        if has.cross_attention
        else _("The flow through one encoder layer")
        if has.encoder
        else _("The flow through one decoder layer")
    )
    page.show(
        shared(flow_diagram, dict(trace.stages), style, None, Blueprint.of(cfg)),
        sentences(
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
                heads=kv_named,
                group=group,
            )
            if grouped
            else "",
        ),
        key="flow",
    )


def _every_stage() -> None:
    """Every recorded stage as a table row: its shape and statistics."""
    st.subheader(_("Every stage, in the order it runs"))
    frame = stages_frame(trace.tensors, cfg.kv_heads)
    st.dataframe(frame, hide_index=True, height=420, column_config=stage_columns(list(frame["stage"])))
    twice = dict(heads=kv_named, h=cfg.n_heads)
    st.caption(
        sentences(
            _("Statistics are over the finite entries; 'masked' counts the −∞ that masks put into the scores."),
            (
                _(
                    "Keys and values appear twice: as their {heads} cached them, then repeated to the {h} query heads.",
                    **twice,
                )
                if cached
                else _(
                    "Keys and values appear twice: as their {heads} computed them, then repeated to the {h} query "
                    "heads.",
                    **twice,
                )
            )
            if grouped
            else "",
        )
    )


source = lengths.source_window(len(trace.src_pieces))
output = around(ctl.step, len(trace.tgt_pieces))


def _window(axis: list[str] | None) -> Span | None:
    """The window over an axis of source or decoder pieces (a long sentence shows a part); None for the rest."""
    return source if axis is trace.src_pieces else output if axis is trace.tgt_pieces else None


def _one_stage() -> None:
    """One stage picked in a box, drawn as a heatmap of its values."""
    st.subheader(_("Look inside one stage"))
    if page_value(STAGE) not in stage_names:
        st.warning(
            md(
                _(
                    "This trace has no stage {stage}; showing {default}.",
                    stage=repr(page_value(STAGE)),
                    default=default_stage,
                )
            )
        )
        set_value("stage", default_stage)
    stage_labels = {n: f"{n}   {symbolic_shape(n, trace.tensor(n).ndim)}" for n in stage_names}
    name = bind("stage", st.selectbox, label=_("Stage"), options=stage_names, format_func=stage_labels.get)
    array = trace.tensor(name)
    # cross-attention's keys and values are projections of the encoder memory: one row per source piece
    shown = stages.parse(name)
    pieces = trace.src_pieces if shown.source_rows else trace.tgt_pieces
    matrix = as_matrix(array, ctl.head)
    title = (
        _("{stage} {shape}, head H{head}", stage=name, shape=tuple(array.shape), head=ctl.head + 1)
        if array.ndim == 4
        else f"{name} {tuple(array.shape)}"
    )
    attention = shown.keys is not None
    if shown.stage == "ids":  # one row of ids: the columns are the positions
        rows, keys, columns = None, pieces, _("position (colour: the token id)")
    else:
        rows = pieces
        columns = _("key") if attention else (_("vocabulary id") if name == stages.LOGITS else _("dimension"))
        keys = {"source": trace.src_pieces, "target": trace.tgt_pieces}.get(shown.keys)
    note = ""
    if name == stages.LOGITS and matrix.shape[1] > LOGIT_COLUMNS:  # a real vocabulary has tens of thousands of ids
        ids = top_columns(matrix, LOGIT_COLUMNS)
        matrix, keys = matrix[:, ids], bundle.tokenizer.pieces(ids.tolist())
        vocabulary = f"{array.shape[-1]:,}"
        columns = _(
            "the {n} pieces with the highest logit at some step (of {total})", n=LOGIT_COLUMNS, total=vocabulary
        )
        note = _(
            "Only {n} of the {total} vocabulary columns are drawn: those some step ranked highest.",
            n=LOGIT_COLUMNS,
            total=vocabulary,
        )

    page.show(
        shared(tensor_heatmap, matrix, rows, style, title, columns, keys, _window(rows), _window(keys)),
        sentences(
            _(
                "Rows are positions (pieces); for attention scores and weights the columns are the keys. Pick the "
                "head in the sidebar for per-head tensors."
            ),
            note,
        ),
        key="stage-heatmap",
    )


if ctl.presentation:  # a projector's first screen shows one stage whole: the flow is taller than any screen
    _one_stage()
_flow()
_every_stage()
if not ctl.presentation:
    _one_stage()

st.subheader(_("The weights of one layer"))
st.dataframe(
    weights_frame({name: tuple(tensor.shape) for name, tensor in bundle.model.state_dict().items()}, Blueprint.of(cfg)),
    hide_index=True,
    width="stretch",
    column_config={column: st.column_config.Column(_(label)) for column, label in WEIGHT_COLUMNS.items()},
)
encoder_layers, decoder_layers = cfg.n_encoder_layers, cfg.n_decoder_layers
layers = (
    _("{encoder} encoder and {decoder} decoder layers", encoder=encoder_layers, decoder=decoder_layers)
    if encoder_layers and decoder_layers
    else n_("{n} encoder layer", "{n} encoder layers", encoder_layers)
    if encoder_layers
    else n_("{n} decoder layer", "{n} decoder layers", decoder_layers)
)
st.caption(
    _(
        "Every parameter outside the layers, and those of the first layer of each stack; the other layers "
        "({layers} in all) repeat them. A projection is stored (out, in), as torch keeps it: x W here is x @ weight.T.",
        layers=layers,
    )
)
page.finish(globals())
