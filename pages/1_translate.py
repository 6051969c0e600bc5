"""Translate: the translation, the pieces with their ids, every step's candidates, the beams."""

import streamlit as st

from ui.page import big_text, md, start
from viz.translate import beams_frame, pieces_frame, step_candidates, steps_frame

page = start("Translate")
result, trace, ctl = page.result, page.result.trace, page.controls

st.caption("French translation" + (f" (beam search, {ctl.beam_size} beams)" if ctl.beam_size > 1 else " (greedy)"))
big_text(result.translation or "(empty output)")
st.caption("The model read:")
st.text(result.source)

if result.unknown_words:
    st.markdown("Flagged, never seen in training: " + ", ".join(f"**{md(w)}**" for w in result.unknown_words))
with st.expander("What vocabulary does the model know?"):
    try:
        from model.corpus import lexicon_by_category
        categories = lexicon_by_category()
    except ImportError:
        categories = {}
    if categories:
        st.write("The corpus the model was trained on uses these English words (with their French):")
        cols = st.columns(3)
        for index, (category, pairs) in enumerate(categories.items()):
            with cols[index % 3]:
                st.markdown(f"**{category.capitalize()}** ({len(pairs)})")
                st.dataframe({"English": [en for en, _ in pairs], "French": [fr for _, fr in pairs]},
                             hide_index=True, height=200)
    known = sorted(page.bundle.known_words)
    if known:
        st.write(f"Words seen in the training sentences ({len(known)}):")
        st.text(", ".join(known))
    elif not categories:
        st.write("This checkpoint does not list its vocabulary.")

st.subheader("Pieces")
st.caption("SentencePiece splits text into pieces; ▁ marks the start of a word. The encoder reads the source "
           "pieces; the decoder produced the output pieces one per step.")
tokenizer = page.bundle.tokenizer
out_ids = list(result.output_ids) or [tokenizer.sp.piece_to_id(p) for p in trace.out_pieces]
left, right = st.columns(2)
with left:
    st.markdown("**Source pieces** (encoder input)")
    st.dataframe(pieces_frame(trace.src_pieces, list(trace.src_ids)), hide_index=True, height=280)
with right:
    st.markdown("**Output pieces** (one per decoding step)")
    st.dataframe(pieces_frame(trace.out_pieces, out_ids), hide_index=True, height=280)

st.subheader("Decoding, step by step")
page.show(step_candidates(result.steps, page.style),
          "Each row is one decoding step: the five pieces the model found most likely, coloured by "
          "probability; ✔ marks the piece that was kept"
          + (". Beam search keeps the pieces of the best whole output, so a kept piece can rank below the "
             "first, or below the five shown (then no ✔ appears in its row; its probability is in the table)."
             if ctl.beam_size > 1 else "."))
with st.expander("The same as a table"):
    st.dataframe(steps_frame(result.steps), hide_index=True,
                 column_config={"p(chosen)": st.column_config.ProgressColumn(
                     "p(chosen)", min_value=0.0, max_value=1.0, format="%.3f")})

if ctl.beam_size > 1:
    st.subheader("Final beams")
    st.caption("Beams are ranked by score = log-probability / length^penalty, so longer outputs are not "
               "punished for every extra piece.")
    st.dataframe(beams_frame(result.beams), hide_index=True)
st.metric("Log-probability of the output", f"{result.log_prob:.2f}")
page.finish()
