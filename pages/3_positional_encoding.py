"""Positional encoding: the table, its frequencies, similarities, sizes, and the switch-off experiment."""

import streamlit as st

from model import cosine
from model.engine import stages
from ui import lengths
from ui.figures import shared
from ui.page import bind, page_value, set_value, start, two_translations
from ui.urlstate import Field
from viz.masks import mask_comparison
from viz.positional import encoding_curves, encoding_heatmap, mean_norms, similarity_matrix, vector_sizes, wavelength

page = start("Positional encoding")
trace, ctl, style, cfg = page.result.trace, page.controls, page.style, page.bundle.config
d_model = cfg.d_model


def _dims(text: str) -> tuple[int, int]:
    low, _, high = text.partition("-")
    lo, hi = int(low), int(high)
    if not 0 <= lo < hi < d_model:
        raise ValueError(f"expected two dimensions a-b with 0 <= a < b < {d_model}")
    return lo, hi


low, high = page_value(Field("dims", (0, d_model // 2), _dims, lambda v: f"{v[0]}-{v[1]}"))
if high >= d_model:  # kept from a wider model
    set_value("dims", (min(low, d_model - 2), d_model - 1))
SHOWN = 128  # positions drawn: a sentence uses few, and 512 rows would only slow the page down

st.markdown("Attention by itself does not know word order: it treats its input as a set. The paper adds "
            "to each embedding a vector that depends only on the position, made of sines and cosines "
            "of geometrically decreasing frequencies: PE(pos, 2i) = sin(pos / 10000^(2i/d)), "
            "PE(pos, 2i+1) = cos(pos / 10000^(2i/d)).")
learned = cfg.positional == "learned"
if learned:
    st.info(f"{page.bundle.name} learns its position vectors instead of using the formula: one trained vector "
            f"per position, {cfg.max_len} of them. The plots below show that learned table; it has no "
            "frequencies by construction, so look for what training put there.")
elif cfg.positional == "sinusoidal_halves":
    st.info(f"{page.bundle.name} uses the formula with Marian's layout: the same sines and cosines, but every sine "
            f"in dimensions 0-{d_model // 2 - 1} and every cosine in {d_model // 2}-{d_model - 1}, instead of "
            "alternating. The plots below show the table exactly as this model adds it.")
table = page.bundle.position_table()[:SHOWN]
rows = f"first {SHOWN} of {cfg.max_len} positions" if cfg.max_len > SHOWN else f"{cfg.max_len} positions"

left, right = st.columns([3, 2])
with left:
    page.show(shared(encoding_heatmap, table, style, f"{'Learned position table' if learned else 'Encoding matrix'} "
                                             f"({rows} × {d_model})"),
              "Each row is the vector added at one position. "
              + ("Its values are whatever training found useful; the scale is symmetric around 0." if learned else
                 "Columns of fast waves change quickly with position, slow ones barely: every position gets a "
                 "unique pattern."), key="pe-table")
with right:
    page.show(shared(similarity_matrix, table, style, "Position similarity"),
              "Cosine similarity of the vectors of two positions: "
              + ("where training made nearby positions alike, a bright band follows the diagonal." if learned else
                 "high near the diagonal and falling with distance, so nearby positions look alike."), key="pe-sim")

lo, hi = bind("dims", st.slider, label="Dimensions to plot", min_value=0, max_value=d_model - 1,
              to_widget=tuple, from_widget=tuple)
count = min(5, hi - lo + 1)
dims = sorted({round(lo + i * (hi - lo) / max(count - 1, 1)) for i in range(count)})
page.show(shared(encoding_curves, table, dims, style),
          "Each curve is one dimension of the learned vectors against position." if learned else
          f"Each dimension is a wave over positions; its period grows from 2π ≈ 6.3 (the fastest pair) to "
          f"{wavelength(d_model - 1, d_model):,.0f} (the slowest), approaching 10000·2π as d_model grows. Together "
          "they work like the hands of a clock.", key="pe-curves")

st.subheader("Why the embeddings are multiplied by √d_model")
if not cfg.scale_embeddings:
    st.info(f"{page.bundle.name} does not multiply its token embeddings by √d_model"
            + (" (BERT adds token, position and token-type vectors and normalizes the sum with a LayerNorm, which "
               "sets the scale instead)" if cfg.embed_norm else "") + ": the token bars and the '× √d_model' bars "
            "below are the same.")
token, scaled, position = (trace.tensor(stages.embedding(stage))[0] for stage in ("token", "scaled", "position"))
token_norm, scaled_norm, position_norm = mean_norms(token, scaled, position)
page.show(shared(vector_sizes, token, scaled, position, trace.src_pieces, style),
          (f"In this sentence the token embeddings have a mean norm of {token_norm:.2f}; multiplied by "
           f"√{d_model} ≈ {d_model ** 0.5:.1f} they reach {scaled_norm:.1f}, against {position_norm:.1f} for the "
           "encoding (every encoding vector has norm √(d_model/2)), so position information does not drown "
           "the meaning of the word." if cfg.scale_embeddings and not learned else
           f"In this sentence the token embeddings have a mean norm of {token_norm:.2f} and the position vectors "
           f"{position_norm:.2f}.")
          + (" The positional encoding is switched off in the sidebar, so its bars are zero." if not ctl.positional
             else ""), key="pe-sizes")

st.subheader("Experiment: switch the encoding off")
with_pe = page.run(positional_encoding=True)
without_pe = page.run(positional_encoding=False)
if page.encoder_only:
    st.metric("Cosine similarity of the sentence embeddings with and without positions",
              f"{cosine(with_pe.embedding, without_pe.embedding):.3f}")
else:
    two_translations(("With positional encoding", with_pe.translation),
                     ("Without positional encoding", without_pe.translation), 1.5)
layer = min(ctl.layer, cfg.n_encoder_layers - 1)
on = with_pe.trace.pattern("encoder", "self", layer)[ctl.head]
off = without_pe.trace.pattern("encoder", "self", layer)[ctl.head]
window = lengths.source_window(len(trace.src_pieces))
page.show(shared(mask_comparison, on, off, trace.src_pieces, trace.src_pieces, style,
                 f"Encoder self-attention L{layer + 1} H{ctl.head + 1}", ("encoding on", "encoding off"),
                 rows=window, columns=window),
          "Without the encoding, a word attends the same way wherever it stands: repeated words get "
          "identical rows, and the model loses word order.", key="pe-experiment")
page.finish(globals())
