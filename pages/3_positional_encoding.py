"""Positional encoding: the table, its frequencies, similarities, sizes, and the switch-off experiment."""

import streamlit as st

from model.positional import sinusoidal_encoding
from ui.page import bind, page_value, start, two_translations
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


page_value(Field("dims", (0, d_model // 2), _dims, lambda v: f"{v[0]}-{v[1]}"))

st.markdown("Attention by itself does not know word order: it treats its input as a set. The paper adds "
            "to each embedding a vector that depends only on the position, made of sines and cosines "
            "of geometrically decreasing frequencies: PE(pos, 2i) = sin(pos / 10000^(2i/d)), "
            "PE(pos, 2i+1) = cos(pos / 10000^(2i/d)).")
if cfg.positional != "sinusoidal":
    st.info("This model learns its position vectors instead of using the formula; the plots below show "
            "the paper's sinusoidal table for comparison.")
table = sinusoidal_encoding(cfg.max_len, d_model).numpy()

left, right = st.columns([3, 2])
with left:
    page.show(encoding_heatmap(table, style, f"Encoding matrix ({cfg.max_len} × {d_model})"),
              "Each row is the vector added at one position. Left columns change fast with position, right "
              "columns slowly: every position gets a unique pattern.", key="pe-table")
with right:
    page.show(similarity_matrix(table, style, "Position similarity"),
              "Cosine similarity of the encodings of two positions: high near the diagonal and falling "
              "with distance, so nearby positions look alike.", key="pe-sim")

lo, hi = bind("dims", st.slider, label="Dimensions to plot", min_value=0, max_value=d_model - 1,
              to_widget=tuple, from_widget=tuple)
count = min(5, hi - lo + 1)
dims = sorted({round(lo + i * (hi - lo) / max(count - 1, 1)) for i in range(count)})
page.show(encoding_curves(table, dims, style),
          f"Each dimension is a wave over positions; its period grows from 2π ≈ 6.3 (dimensions 0 and 1) to "
          f"{wavelength(d_model - 1, d_model):,.0f} (dimensions {d_model - 2} and {d_model - 1}), approaching "
          "10000·2π as d_model grows. Together they work like the hands of a clock.", key="pe-curves")

st.subheader("Why the embeddings are multiplied by √d_model")
token = trace.tensor("src_embed.hook_token")[0]
scaled = trace.tensor("src_embed.hook_scaled")[0]
position = trace.tensor("src_embed.hook_position")[0]
token_norm, scaled_norm, position_norm = mean_norms(token, scaled, position)
page.show(vector_sizes(token, scaled, position, trace.src_pieces, style),
          f"In this sentence the token embeddings have a mean norm of {token_norm:.2f}; multiplied by "
          f"√{d_model} ≈ {d_model ** 0.5:.1f} they reach {scaled_norm:.1f}, against {position_norm:.1f} for the "
          "encoding (every encoding vector has norm √(d_model/2)), so position information does not drown "
          "the meaning of the word." + (
              " The positional encoding is switched off in the sidebar, so its bars are zero." if not ctl.positional
              else ""), key="pe-sizes")

st.subheader("Experiment: switch the encoding off")
with_pe = page.translate(positional_encoding=True)
without_pe = page.translate(positional_encoding=False)
two_translations(("With positional encoding", with_pe.translation),
                 ("Without positional encoding", without_pe.translation), 1.5)
layer = min(ctl.layer, cfg.n_encoder_layers - 1)
on = with_pe.trace.pattern("encoder", "self", layer)[ctl.head]
off = without_pe.trace.pattern("encoder", "self", layer)[ctl.head]
page.show(mask_comparison(on, off, trace.src_pieces, trace.src_pieces, style,
                          f"Encoder self-attention L{layer + 1} H{ctl.head + 1}", ("encoding on", "encoding off")),
          "Without the encoding, a word attends the same way wherever it stands: repeated words get "
          "identical rows, and the model loses word order.", key="pe-experiment")
page.finish()
