"""Tensor shapes: every stage from ids to logits, its shape, statistics, a flow diagram and a heatmap."""

import re

import streamlit as st

from model.engine import stages
from ui import lengths
from ui.figures import shared
from ui.page import bind, md, page_value, set_value, start
from ui.urlstate import Field
from viz.lengths import Span, around
from viz.shapes import as_matrix, flow_diagram, stages_frame, symbolic_shape, tensor_heatmap, top_columns

LOGIT_COLUMNS = 60

page = start("Tensor shapes")
trace, ctl, style, cfg = page.result.trace, page.controls, page.style, page.bundle.config
stage_names = [name for name, _ in trace.stages]

st.markdown(f"B = batch ({trace.tensor(stages.embedding('ids')).shape[0]}), S = source pieces ({len(trace.src_pieces)}), "
            + ("" if page.encoder_only else f"T = target pieces ({len(trace.tgt_pieces)}), ")
            + f"d_model = {cfg.d_model}, h = {cfg.n_heads} heads, d_k = d_model / h = {cfg.d_k}, d_ff = {cfg.d_ff}, "
            f"vocab = {cfg.vocab_size:,}." + (" This model is encoder-only: its stage_names end with the encoder's output, "
                                             "with no decoder and no logits." if page.encoder_only else ""))


def _stage(text: str) -> str:
    if not re.fullmatch(r"[a-z_]+(\.[a-z0-9_]+)*", text):
        raise ValueError("not a stage name")
    return text


first_cross = stages.attention("decoder", "cross", 0, "pattern")
default_stage = first_cross if first_cross in stage_names else stage_names[0]
STAGE = Field("stage", default_stage, _stage)
page_value(STAGE)

st.subheader("Every stage, in the order it runs")
frame = stages_frame(trace.tensors)
st.dataframe(frame, hide_index=True, height=420,
             column_config={c: st.column_config.NumberColumn(c, format="%.4f") for c in ("mean", "std", "min", "max")})
st.caption("Statistics are over the finite entries; 'masked' counts the −∞ that masks put into the scores.")

st.subheader("The flow through one encoder layer" + ("" if page.encoder_only else " and one decoder layer"))
page.show(shared(flow_diagram, dict(trace.stages), style),
          "Numbers on the arrows are the shapes of the tensors that flow along them for this sentence.",
          key="flow")

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
    matrix, keys = matrix[:, ids], page.bundle.tokenizer.pieces(ids.tolist())
    columns = f"the {LOGIT_COLUMNS} pieces with the highest logit at some step (of {array.shape[-1]:,})"
    note = f" Only {LOGIT_COLUMNS} of the {array.shape[-1]:,} vocabulary columns are drawn: those some step ranked highest."
source = lengths.source_window(len(trace.src_pieces))
output = around(ctl.step, len(trace.tgt_pieces))


def _window(axis: list[str] | None) -> Span | None:
    """The window over an axis of source or decoder pieces (a long sentence shows a part); None for the rest."""
    return source if axis is trace.src_pieces else output if axis is trace.tgt_pieces else None


page.show(shared(tensor_heatmap, matrix, rows, style, f"{name} {tuple(array.shape)}{heads_note}", columns, keys,
                 _window(rows), _window(keys)),
          "Rows are positions (pieces); for attention scores and weights the columns are the keys. Pick the head "
          "in the sidebar for per-head tensors." + note, key="stage-heatmap")
page.finish(globals())
