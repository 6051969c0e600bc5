"""Why this word: which source pieces made each output piece (attribution), what each decoder layer
would already write (logit lens), what an activation from another sentence changes (patching), and
what each head mostly does (roles)."""

import streamlit as st

from model import AnatomyError
from model.analysis import METHODS
from model.engine import stages
from ui import engine, lengths
from ui.figures import shared
from ui.page import bind, md, page_value, start
from ui.urlstate import Field
from viz.explain import lens_heatmap, methods_side_by_side, patch_effect, roles_frame
from viz.labels import display_piece
from viz.lengths import around
from viz.shapes import tensor_heatmap

DEFINITIONS = {
    "attention": "the last decoder layer's cross-attention, averaged over its heads",
    "rollout": "attention rollout: the last layer's cross-attention times the encoder's self-attention, "
               "layer after layer, each half attention and half the piece itself",
    "gradient": "input × gradient: each source piece's token embedding times the gradient of the output "
                "piece's log-probability with respect to it (red raises it, blue lowers it)",
    "integrated-gradients": "integrated gradients: input × the gradient averaged along the way from a zero "
                            "embedding to the real one (32 steps); a row sums to how much the sentence raises "
                            "that piece's log-probability over an empty one",
    "occlusion": "occlusion: how much the output piece's log-probability drops when that one source piece's "
                 "embedding is set to zero",
}
METHOD = Field("method", "occlusion", lambda text: text if text in METHODS else (_ for _ in ()).throw(
    ValueError(f"expected one of {', '.join(METHODS)}")))
DONOR = Field("donor", "The small boy sees a white bird.", lambda text: text[:300])


def _layer_outputs(n_layers: int, norm_first: bool) -> dict[str, str]:
    """Hook points worth patching, by what they are, in the order the model runs them."""
    points = {"source embeddings (token + position)": stages.embedding("sum")}
    points.update({f"encoder layer {layer + 1} output": stages.layer_output("encoder", layer, norm_first)
                   for layer in range(n_layers)})
    points["encoder memory (what cross-attention reads)"] = stages.MEMORY
    return points


page = start("Why this word?")
ctl, style, bundle = page.controls, page.style, page.bundle

if not bundle.capabilities.translates:
    st.info(f"{md(bundle.name)} does not translate, so no output piece needs explaining: below are the roles "
            "its heads play on your sentence.")
else:
    result = page.result
    out_ids = tuple(result.output_ids)
    out_pieces, src_pieces = result.trace.out_pieces, result.trace.src_pieces
    iv = ctl.interventions()
    source = lengths.source_window(len(src_pieces))
    output = around(ctl.step, len(out_pieces))

    st.subheader("Which source pieces made each output piece")
    page_value(METHOD)
    method = bind("method", st.radio, label="Attribution method", options=list(METHODS), horizontal=True)
    try:
        scores = engine.attribution(bundle, ctl.sentence, out_ids, method, iv)
    except AnatomyError as exc:
        st.error(md(str(exc)))
        st.stop()
    page.show(shared(tensor_heatmap, scores, out_pieces, style, f"Attribution: {method}", "source piece",
                     src_pieces, output, source),
              f"Rows are the output pieces, columns the source pieces; a cell is {DEFINITIONS[method]}. "
              "Every output piece is scored as the model wrote it, teacher-forced on this translation.",
              key="attribution")
    step = min(ctl.step, len(out_pieces) - 1)
    best = int(scores[step].argmax())
    st.markdown(f"Output piece {step + 1}, **{md(display_piece(out_pieces[step]))}**, owes most to the source piece "
                f"**{md(display_piece(src_pieces[best]))}** (by {method}; the step is the sidebar's decoding step).")
    every = {name: engine.attribution(bundle, ctl.sentence, out_ids, name, iv)[step] for name in METHODS}
    page.show(shared(methods_side_by_side, every, src_pieces, style,
                     f"Output piece {step + 1}, {display_piece(out_pieces[step])}: every method", source),
              "The same output piece explained by each method, a row each, on one colour scale: each row is divided "
              "by its largest value, since the methods measure in different units (hover for the real value). "
              "Where the rows agree, the answer does not depend on the method.", key="methods")

    st.subheader("What each decoder layer would already write")
    final, firsts = engine.lens(bundle, ctl.sentence, out_ids, iv)
    page.show(shared(lens_heatmap, final, firsts, out_pieces, style, columns=output),
              "Each layer's output put through what the model does after its last layer (the output projection): "
              "the colour is the probability it gives the piece the model finally wrote, the text its own first "
              "choice. With the causal mask on, the last row is the model itself; with it off, every row sees the whole "
              "output at once, as in training, and may disagree with what decoding chose.", key="lens")

    st.subheader("Patching: one activation from another sentence")
    page_value(DONOR)
    donor = bind("donor", st.text_input, label="Donor sentence (its activation replaces your sentence's)")
    points = _layer_outputs(bundle.config.n_encoder_layers, bundle.config.norm_first)
    where = st.selectbox("Hook point", list(points), key="w_patch_point")
    try:
        both = min(len(src_pieces), len(bundle.encode_source(donor)[1]))  # positions both sentences have
        span = st.slider("Source positions to patch (from 1)", 1, both, (1, both), key="w_patch_positions",
                         disabled=both < 2) if both > 1 else (1, 1)
        own = engine.score(bundle, ctl.sentence, out_ids, iv)
        moved = engine.patched(bundle, donor, ctl.sentence, out_ids, points[where], tuple(range(span[0] - 1, span[1])), iv)
    except AnatomyError as exc:
        st.warning(md(str(exc)))
    else:
        page.show(shared(patch_effect, own, moved, out_pieces, style,
                         f"Your translation's pieces, with the {where} at positions {span[0]}-{span[1]} from the donor"),
                  "Teacher-forced on your translation: how likely the model still finds each piece once that "
                  "activation comes from the donor sentence. Patching your sentence with itself changes nothing.",
                  key="patch")

st.subheader("What each head mostly does")
st.dataframe(roles_frame(engine.roles(bundle, ctl.sentence, ctl.interventions())), hide_index=True,
             column_config={c: st.column_config.NumberColumn(c, format="%.3f")
                            for c in ("previous", "same", "first", "last", "broad", "alignment")})
st.caption("Scores are averages over the head's queries: weight on the piece before (previous), on itself (same), "
           "on the first piece, on the last source piece (</s> or [SEP]), and how spread its weight is (broad, "
           "normalised entropy). A head is tagged with the highest of the first four when it reaches 0.5, else "
           "broad at 0.9 or more.")
page.finish(globals())
