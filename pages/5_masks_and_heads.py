"""Masks and heads lab: scores -> masked -> softmax, the causal and padding masks, head knock-out.
A decoder-only model (GPT-2) reads its prompt and continuation in one pass here."""

import numpy as np
import streamlit as st

from model import AnatomyError, Trace, cosine
from model.analysis.forced import work
from model.analysis.knockout import RETRANSLATED
from model.engine import stages
from model.engine.interventions import Head
from ui.page.binding import bind, page_value, set_value
from ui.page.markup import md, two_translations
from ui.page.ondemand import asked
from ui.page.start import start
from ui.parts import lengths
from ui.session import engine
from ui.session.figures import shared
from ui.session.urlstate import BLOCK_NAMES, BLOCKS, Field, all_heads, head_label
from viz.lengths import Span, around, whole
from viz.masks import (
    SMALL_DROP,
    embedding_knockout_chart,
    embedding_knockout_frame,
    fixed_output_probabilities,
    future_weight,
    knockout_caption,
    knockout_chart,
    knockout_frame,
    largest_change,
    mask_comparison,
    masked_cells,
    probability_comparison,
    score_pipeline,
)

page = start("Masks and heads lab")
ctl, style, limits = page.controls, page.style, page.limits
pad_piece = page.bundle.tokenizer.pieces([page.bundle.specials.pad])[0]
if page.encoder_only:
    st.caption("This lab looks at the encoder's one pass over the sentence: the padding mask and knocked-out heads.")
    trace = page.result.trace
elif page.decoder_only:
    st.caption(
        "This lab looks at one pass over the prompt and its continuation with every piece fed at once, as in "
        "training, which is where the masks do their work."
    )
    # with the causal mask on, the continuation's own trace is that pass (Bundle.generate builds it so)
    trace = (
        page.result.trace
        if ctl.causal
        else engine.teacher_forced(page.bundle, ctl.sentence, page.result.output_ids, ctl.interventions(), ctl.chat)
    )
else:
    st.caption(
        "This lab looks at one pass over the whole translation with every piece fed at once, as in training, "
        "which is where the masks do their work."
    )
    # the page's translation, all of it read in one pass under the sidebar's switches
    trace = engine.teacher_forced(page.bundle, ctl.sentence, page.result.output_ids, ctl.interventions())
blocks = limits.blocks
# what the model makes of the sentence (of a chat message: its answer)
output_word = "answer" if page.chat else "continuation" if page.decoder_only else "translation"


def _block(text: str) -> str:
    if text not in BLOCKS:
        raise ValueError(f"expected one of {', '.join(BLOCKS)}")
    return text


def _short(text: str) -> str:
    if not text.strip() or len(text) > 500:
        raise ValueError("expected a short sentence")
    return text


if page_value(Field("block", "dec-self", _block)) not in blocks:
    set_value("block", next(iter(blocks)))
page_value(Field("short", "I see a bird.", _short))

# 1. scores -> masked scores -> softmax
st.subheader("One head, step by step: scores → mask → softmax")
block = bind(
    "block",
    st.radio,
    label="Attention block",
    options=list(blocks),
    horizontal=True,
    format_func=lambda b: BLOCK_NAMES[b].capitalize(),
)
stack, kind = BLOCKS[block]
layer = min(ctl.layer, limits.layers_of(stack) - 1)
queries = trace.src_pieces if block == "enc-self" else trace.tgt_pieces
keys = trace.tgt_pieces if block == "dec-self" else trace.src_pieces
source = lengths.source_window(len(trace.src_pieces))  # long sentences: every heatmap here shows a window
# the window of decoder positions around the step (a decoder-only model's step t is the row after its prompt's)
first = len(trace.tgt_pieces) - len(page.result.output_ids) if page.decoder_only else 0
output = around(min(first + ctl.step, max(len(trace.tgt_pieces) - 1, 0)), len(trace.tgt_pieces))
raw_scores = trace.tensor(stages.attention(stack, kind, layer, "scores"))[0, ctl.head]
masked_scores = trace.tensor(stages.attention(stack, kind, layer, "masked_scores"))[0, ctl.head]
page.show(
    shared(
        score_pipeline,
        raw_scores,
        masked_scores,
        trace.tensor(stages.attention(stack, kind, layer, "pattern"))[0, ctl.head],
        queries,
        keys,
        style,
        f"{BLOCK_NAMES[block].capitalize()} L{layer + 1} H{ctl.head + 1}",
        **lengths.block_windows(block, source, output),
    ),
    "Left: how well each query matches each key (QKᵀ/√d_k). Middle: the mask sets forbidden pairs "
    "to −∞ (the grey “masked” cells"
    + ("" if masked_cells(raw_scores, masked_scores).any() else ", none here: no mask forbids a pair in this block")
    + "). Right: softmax turns each row into weights that sum to 1; −∞ becomes exactly 0.",
    key="pipeline",
)


def _mask_effect(
    on: np.ndarray,
    off: np.ndarray,
    layer: int,
    pieces: list[str],
    title: str,
    mask: str,
    caption: str,
    key: str,
    window: Span,
) -> None:
    """One self-attention head with a mask on and off (`on`, `off`: the layer's patterns, heads first),
    side by side with their difference."""
    page.show(
        shared(
            mask_comparison,
            on[ctl.head],
            off[ctl.head],
            pieces,
            pieces,
            style,
            f"{title} L{layer + 1} H{ctl.head + 1}",
            (f"{mask} on", f"{mask} off"),
            rows=window,
            columns=window,
        ),
        caption,
        key=key,
    )


labels = {h: head_label(h) for h in all_heads(limits)}
sweep_key = (page.bundle.checkpoint_id, ctl.sentence, ctl.interventions(), ctl.beam_size, ctl.chat)  # the sweep's
EXPERIMENTS = {"causal": "The causal mask", "padding": "The padding mask", "knockout": "Knock out heads"}
LAB = Field(
    "lab",
    "causal",
    lambda text: (
        text if text in EXPERIMENTS else (_ for _ in ()).throw(ValueError(f"expected one of {', '.join(EXPERIMENTS)}"))
    ),
)


def _knockout_heading() -> bool:
    """The knock-out section's heading and the heads knocked out; False (with a next step) when there are none."""
    st.subheader("Knock out heads")
    if not ctl.ablate:
        st.info(
            "No head is knocked out. Pick heads under “Knock out heads” in the sidebar to see what the model "
            "does without them" + ("." if page.encoder_only else ", or start from the knock-out that changes the most:")
        )
        if not page.encoder_only:
            _suggestions("tab")
        return False
    st.markdown("Knocked out: " + ", ".join(f"`{labels[h]}`" for h in ctl.ablate))
    return True


def _layer_groups() -> dict[str, tuple[Head, ...]]:
    """Each layer of each attention block, all of its heads together, by name."""
    return {
        f"{BLOCK_NAMES[code]} L{layer + 1} (all {limits.n_heads} heads)": tuple(
            (stack, kind, layer, head) for head in range(limits.n_heads)
        )
        for code, (stack, kind) in blocks.items()
        for layer in range(limits.layers_of(stack))
    }


def _layer_drops() -> dict[str, float] | None:
    """How far knocking out each layer's heads together lowers the log-probability of the output made
    with every head on (one teacher-forced pass per layer, cached); None when not computed (too costly
    unasked, and not asked)."""
    output_ids = tuple(page.result.output_ids)
    groups = _layer_groups()
    cost = work(page.bundle, len(groups), len(trace.src_pieces) + len(trace.tgt_pieces))
    if not asked(
        cost,
        False,
        "Find the layer whose heads matter most",
        "knockout-layers",
        f"One pass per layer ({len(groups)}) takes seconds at this model's size: the button runs them.",
    ):
        return None
    base = sum(engine.score(page.bundle, ctl.sentence, output_ids, ctl.interventions(), ctl.chat))
    return {
        name: base
        - sum(engine.score(page.bundle, ctl.sentence, output_ids, ctl.interventions(ablate=frozenset(heads)), ctl.chat))
        for name, heads in groups.items()
    }


def _suggestions(where: str) -> None:
    """One-click knock-outs with the largest effect on the output made with every head on: the layer whose
    heads matter most together, and the head the sweep found (when it ran)."""
    if ctl.ablate or not page.result.output_ids:
        return
    drops = _layer_drops()
    if drops:
        name = max(drops, key=drops.__getitem__)
        heads = _layer_groups()[name]
        st.button(
            f"Knock out {name}",
            key=f"knockout-layer-{where}",
            icon=":material/block:",
            on_click=set_value,
            args=("ablate", tuple(sorted(heads))),
            help="Sets the sidebar's “Knock out heads” to these heads; clear it there to bring them back.",
        )
        st.caption(
            f"Knocking out all the heads of one layer together, layer by layer: this one lowers the log-probability "
            f"of the {output_word} made with every head by **{drops[name]:.2f}**, the most of the {len(drops)} "
            f"layers (the next: {sorted(drops.values())[-2]:.2f})."
            if len(drops) > 1
            else f"It lowers the log-probability of the {output_word} by **{drops[name]:.2f}**."
        )
    stored = st.session_state.get("_anatomy_sweep")
    if stored and stored[0] == sweep_key and stored[1]:
        best = max(stored[1], key=lambda row: row["base_log_prob"] - row["log_prob"])
        drop = best["base_log_prob"] - best["log_prob"]
        st.button(
            f"Knock out {labels[best['head']]} alone",
            key=f"knockout-head-{where}",
            on_click=set_value,
            args=("ablate", (best["head"],)),
            help="The head whose knock-out lowered the log-probability most in the sweep below.",
        )
        st.caption(f"The single head whose knock-out lowers it most in the sweep: by {drop:.2g}.")


def _padding_demo(on: list[Trace], off: list[Trace]) -> int:
    """The shorter sentence of a padded batch of two, with the padding mask on and off; its row."""
    row = 1 if on[1].src_pieces.count(pad_piece) >= on[0].src_pieces.count(pad_piece) else 0
    n_pad = on[row].src_pieces.count(pad_piece)
    st.markdown(
        f"In one batch every row has the same length, so the shorter sentence gets **{n_pad}** "
        f"`{pad_piece}` pieces at the end."
        if n_pad
        else "Both sentences have the same length: make the second one shorter to see padding."
    )
    layer = min(ctl.layer, limits.n_encoder_layers - 1)
    _mask_effect(
        on[row].pattern("encoder", "self", layer),
        off[row].pattern("encoder", "self", layer),
        layer,
        on[row].src_pieces,
        "The shorter sentence, encoder self-attention",
        "padding mask",
        f"With the mask on, no query gives any weight to the {pad_piece} columns; with it off, real words "
        "leak attention into padding.",
        "padding",
        source,
    )
    return row


def encoder_lab() -> None:
    """Padding and knock-out for a model without a decoder, judged by the sentence embedding."""
    st.subheader("The causal mask")
    st.info(
        f"{page.bundle.name} is encoder-only: it has no decoder, so there is no causal mask. Its "
        "self-attention lets every piece look at every other, before and after it."
    )
    st.subheader("The padding mask: batching a shorter sentence")
    short = bind("short", st.text_input, label="A second sentence, batched with yours")
    try:
        alone = engine.encode(page.bundle, short, ctl.interventions())
        with_pad = engine.encode_batch(page.bundle, [ctl.sentence, short], ctl.interventions(padding_mask=True))
        without_pad = engine.encode_batch(page.bundle, [ctl.sentence, short], ctl.interventions(padding_mask=False))
    except AnatomyError as exc:
        st.error(md(str(exc)))
        return
    row = _padding_demo([r.trace for r in with_pad], [r.trace for r in without_pad])
    left, right = st.columns(2)
    left.metric(
        "Its embedding in the batch vs alone, padding mask on",
        f"{cosine(with_pad[row].embedding, alone.embedding):.4f}",
    )
    right.metric("the same with the padding mask off", f"{cosine(without_pad[row].embedding, alone.embedding):.4f}")
    st.caption(
        "Cosine similarity to the sentence encoded on its own (1 = the same embedding): with the mask, "
        "padding changes nothing; without it, the padding leaks into every vector."
    )

    if _knockout_heading():
        before = page.encode(ablate=frozenset())
        st.metric(
            "Cosine similarity of the sentence embedding with and without them",
            f"{cosine(before.embedding, page.result.embedding):.4f}",
        )
    st.subheader("Knock out each head in turn")
    heads = [h for h in all_heads(limits) if h not in ctl.ablate]
    st.caption(
        f"Knocks out each of the {len(heads)} heads in turn (on top of the sidebar's switches) and ranks them "
        "by how far the sentence embedding moves: 1 − its cosine similarity to the embedding with every head on."
    )
    if st.button("Run the knock-out sweep", icon=":material/play_arrow:"):
        st.session_state["_anatomy_embedding_sweep"] = (page.bundle.checkpoint_id, ctl.sentence, ctl.interventions())
    if st.session_state.get("_anatomy_embedding_sweep") == (
        page.bundle.checkpoint_id,
        ctl.sentence,
        ctl.interventions(),
    ):
        with st.spinner(f"Knocking out {len(heads)} heads ..."):
            frame = embedding_knockout_frame(
                engine.embedding_knockout(page.bundle, ctl.sentence, ctl.interventions(), heads), labels
            )
        page.show(
            shared(embedding_knockout_chart, frame, style),
            "The heads whose absence moves the embedding most.",
            key="embedding-sweep",
        )
        st.dataframe(frame, hide_index=True)


if page.encoder_only:
    encoder_lab()
    page.finish(globals())
    st.stop()


def causal_lab_decoder() -> None:
    """A decoder-only model: prompt and continuation read in one pass with the causal mask on and off, and
    the continuation generated with it off."""
    st.subheader("The causal mask: no peeking at later pieces")
    causal_on = page.translate(causal_mask=True)  # the page's own continuation when the sidebar's mask is on
    layer = min(ctl.layer, limits.n_decoder_layers - 1)
    # the same prompt and continuation in one pass, mask on and off: with the mask on, the continuation's own
    # trace is that pass (Bundle.generate builds it so); with it off, the pass stops at this layer
    seen_on = causal_on.trace
    on_pattern = seen_on.pattern("decoder", "self", layer)
    off_pattern = engine.teacher_forced_at(
        page.bundle,
        ctl.sentence,
        causal_on.output_ids,
        stages.attention("decoder", "self", layer, "pattern"),
        ctl.interventions(causal_mask=False),
        ctl.chat,
    )[0]
    _mask_effect(
        on_pattern,
        off_pattern,
        layer,
        seen_on.tgt_pieces,
        "Self-attention over prompt and continuation",
        "causal mask",
        "The prompt and the continuation made with the mask on, read in one pass with the mask on and off. "
        "With it off, every position also looks at the positions after it (right of the diagonal lights up): "
        "each position is there to predict the next piece, which it can now see. In training the model would "
        "copy the answer instead of learning to predict it. The pass without the mask runs only up to the layer "
        "on show (the layers after it would change nothing here), so a later layer takes a little longer the "
        "first time it is picked.",
        "causal",
        output,
    )
    left, right = st.columns(2)
    left.metric(
        f"Weight on later pieces, layer L{layer + 1}, mask on",
        f"{future_weight(on_pattern):.1%}",
    )
    right.metric("the same with the mask off", f"{future_weight(off_pattern):.1%}")
    st.caption(
        "The share of each position's attention that goes to pieces after it, averaged over heads and positions."
    )
    st.caption(
        "The continuation generated with the mask on, then off. While generating, a step can only read the pieces "
        "made before it, mask or no mask; without the mask, though, the prompt's pieces and those made so far "
        "read each other both ways, unlike anything the model saw in training. The probabilities below are the "
        "ones each step chose from:"
    )
    prompt, made = len(causal_on.prompt_ids), len(causal_on.output_ids)
    rereads = work(page.bundle, 1, made * prompt + made * (made + 1) // 2)  # every step re-reads all before it
    if not asked(
        rereads,
        engine.in_cache(
            page.bundle, ctl.sentence, ctl.interventions(causal_mask=False), ctl.beam_size, trace=False, chat=ctl.chat
        ),
        "Generate without the mask",
        "causal-off-continuation",
        "Without the mask, every step re-reads the prompt and the pieces made so far (no cache can hold "
        "them: each step changes them all), which takes seconds at this model's size: the button runs it.",
    ):
        return
    causal_off = page.translate(causal_mask=False, trace=False)
    two_translations(("", causal_on.translation), ("", causal_off.translation))
    page.show(
        shared(
            probability_comparison,
            causal_on.steps,
            causal_off.steps,
            style,
            "Probability of each new piece: causal mask on (before) and off (after)",
        ),
        key="causal-probs",
    )


def padding_lab_decoder() -> None:
    """A decoder-only model: the prompt batched with a shorter one in one pass, the padding mask on and off."""
    st.subheader("The padding mask: batching a shorter prompt")
    short = bind("short", st.text_input, label="A second prompt, batched with yours")
    try:
        texts = [ctl.sentence, short]  # with a chat message, both are wrapped by the chat template
        with_pad = engine.prompt_batch(page.bundle, texts, ctl.interventions(padding_mask=True), ctl.chat)
        without_pad = engine.prompt_batch(page.bundle, texts, ctl.interventions(padding_mask=False), ctl.chat)
    except AnatomyError as exc:
        st.error(md(str(exc)))
        return
    row = 1 if with_pad[1].tgt_pieces.count(pad_piece) >= with_pad[0].tgt_pieces.count(pad_piece) else 0
    pieces = with_pad[row].tgt_pieces
    n_pad = pieces.count(pad_piece)
    st.markdown(
        f"A decoder-only model has no source sentence to pad, and one prompt alone has no padding. In one "
        f"batch, though, every row has the same length, so the shorter prompt gets **{n_pad}** `{pad_piece}` "
        "pieces at the end."
        if n_pad
        else "Both prompts have the same length: make the second one shorter to see padding."
    )
    layer = min(ctl.layer, limits.n_decoder_layers - 1)
    _mask_effect(
        with_pad[row].pattern("decoder", "self", layer),
        without_pad[row].pattern("decoder", "self", layer),
        layer,
        pieces,
        "The shorter prompt, self-attention",
        "padding mask",
        "The shorter prompt's row of the batch, read in one pass with the padding mask on and "
        f"off (the {pad_piece} pieces at the end are its padding).",
        "padding",
        whole(len(pieces)),
    )
    real = len(pieces) - n_pad
    change = largest_change(
        with_pad[row].pattern("decoder", "self", layer), without_pad[row].pattern("decoder", "self", layer), real
    )
    st.metric(f"Largest change of a real piece's attention weight, layer L{layer + 1}", f"{change:.4f}")
    if ctl.causal:
        st.caption(
            "The real pieces' rows do not change: the padding comes after the text, and the causal mask already "
            "stops every piece from looking at later positions, so no real piece can see the padding, mask or no "
            "mask. Only the padding's own rows change. Turn the causal mask off in the sidebar to see the padding "
            "mask at work."
        )
    else:
        st.caption(
            "The causal mask is off, so real pieces can look ahead into the padding: with the padding mask on "
            "they give it no weight; with it off, they leak attention into it."
        )


def causal_lab() -> None:
    """The translation with the causal mask on and off, and one pass over it with the mask on and off."""
    st.subheader("The causal mask: no peeking at later words")
    causal_on = page.translate(causal_mask=True)
    causal_off = page.translate(causal_mask=False, trace=False)  # its text and steps: the trace below is one pass
    dec_layer = min(ctl.layer, limits.n_decoder_layers - 1)
    seen_on = causal_on.trace
    seen_off = engine.teacher_forced(
        page.bundle, ctl.sentence, causal_on.output_ids, ctl.interventions(causal_mask=False)
    )
    _mask_effect(
        seen_on.pattern("decoder", "self", dec_layer),
        seen_off.pattern("decoder", "self", dec_layer),
        dec_layer,
        seen_on.tgt_pieces,
        "Decoder self-attention",
        "causal mask",
        "The translation made with the mask on, read in one pass with the mask on and off. With it off, "
        "every position also looks at the positions after it (right of the diagonal lights up): in training "
        "the model would copy the answer instead of learning to predict it.",
        "causal",
        output,
    )
    st.caption(
        "Output with the mask on, then off. While decoding, a step can only read the pieces made before it, "
        "mask or no mask; without the mask, though, those pieces also read each other both ways, unlike "
        "anything the model saw in training. The probabilities below are the ones each step chose from:"
    )
    two_translations(("", causal_on.translation), ("", causal_off.translation))
    page.show(
        shared(
            probability_comparison,
            causal_on.steps,
            causal_off.steps,
            style,
            "Probability of each output piece: causal mask on (before) and off (after)",
        ),
        key="causal-probs",
    )


def padding_lab() -> None:
    """The sentence batched with a shorter one, translated with the padding mask on and off."""
    st.subheader("The padding mask: batching a shorter sentence")
    short = bind("short", st.text_input, label="A second sentence, batched with yours")
    try:
        with_pad = engine.translate_batch(page.bundle, [ctl.sentence, short], ctl.interventions(padding_mask=True))
        without_pad = engine.translate_batch(page.bundle, [ctl.sentence, short], ctl.interventions(padding_mask=False))
    except AnatomyError as exc:
        st.error(md(str(exc)))
    else:
        row = _padding_demo([r.trace for r in with_pad], [r.trace for r in without_pad])
        two_translations(
            ("Its translation with the padding mask on", with_pad[row].translation),
            ("and off", without_pad[row].translation),
        )


def knockout_lab() -> None:
    """The sidebar's knocked-out heads: the translation and its pieces' probabilities before and after."""
    if _knockout_heading():
        before = page.translate(ablate=frozenset())
        after = page.result
        two_translations(("All heads", before.translation), ("With the heads knocked out", after.translation))
        page.show(
            shared(
                probability_comparison,
                before.steps,
                after.steps,
                style,
                "Probability of each output piece, before and after the knock-out",
            ),
            f"Each step's chosen piece. Log-probability of the output: {before.log_prob:.2f} before, "
            f"{after.log_prob:.2f} after.",
            key="knockout-probs",
        )
        if before.output_ids:
            knocked = engine.score(page.bundle, ctl.sentence, before.output_ids, ctl.interventions(), ctl.chat)
            unchanged = engine.score(
                page.bundle, ctl.sentence, before.output_ids, ctl.interventions(ablate=frozenset()), ctl.chat
            )
            page.show(
                shared(
                    fixed_output_probabilities,
                    page.bundle.tokenizer.pieces(before.output_ids),
                    unchanged,
                    knocked,
                    style,
                ),
                f"The original {output_word}, each piece scored after the same earlier pieces, with and without the "
                f"heads: its log-probability goes from {sum(unchanged):.2f} to {sum(knocked):.2f}.",
                key="knockout-fixed",
            )


# Each experiment runs the model its own way (a translation without the mask, a padded batch twice,
# a translation with every head): only the one on show runs.
page_value(LAB)
experiment = bind(
    "lab", st.radio, label="Experiment", options=list(EXPERIMENTS), format_func=EXPERIMENTS.get, horizontal=True
)
if page.decoder_only:
    {"causal": causal_lab_decoder, "padding": padding_lab_decoder, "knockout": knockout_lab}[experiment]()
else:
    {"causal": causal_lab, "padding": padding_lab, "knockout": knockout_lab}[experiment]()

st.subheader("Knock out each head in turn")
heads = [h for h in all_heads(limits) if h not in ctl.ablate]
st.caption(
    f"Knocks out each of the {len(heads)} heads in turn (on top of the sidebar's switches"
    + (", so the heads already knocked out there are left out" if ctl.ablate else "")
    + "), scores the original output under each knock-out, and ranks heads by how much its log-probability "
    + (
        "falls; it also translates again to show whether the output itself changes"
        if not page.decoder_only
        else "falls; it also continues the prompt again to show whether the continuation itself changes"
    )
    + (f" (for the {RETRANSLATED} heads with the largest drops)." if len(heads) > RETRANSLATED else ".")
)
if st.button("Run the knock-out sweep", icon=":material/play_arrow:"):
    with st.spinner(f"Knocking out {len(heads)} heads ..."):
        try:
            rows = engine.knockout_sweep(
                page.bundle, ctl.sentence, ctl.interventions(), ctl.beam_size, heads, chat=ctl.chat
            )
        except AnatomyError as exc:
            st.error(md(str(exc)))
            rows = []
    st.session_state["_anatomy_sweep"] = (sweep_key, rows)
stored = st.session_state.get("_anatomy_sweep")
if stored and stored[0] == sweep_key and stored[1]:
    frame = knockout_frame(stored[1], labels, output_word)
    page.show(
        shared(knockout_chart, frame, style, output=output_word),
        knockout_caption(frame, output=output_word),
        key="sweep-chart",
    )
    if not ctl.ablate and not frame.empty and frame["log-prob drop"].max() < SMALL_DROP:
        _suggestions("sweep")
    st.dataframe(
        frame,
        hide_index=True,
        column_config={
            "log-prob drop": st.column_config.NumberColumn(format="%.3f"),
            "log-prob of the original output": st.column_config.NumberColumn(format="%.3f"),
        },
    )
elif stored and stored[0] != sweep_key:
    st.caption("The controls changed since the last sweep: run it again.")
page.finish(globals())
