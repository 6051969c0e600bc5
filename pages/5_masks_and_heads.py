"""Masks and heads lab: scores -> masked -> softmax, the causal and padding masks, head knock-out.
A decoder-only model (GPT-2) reads its prompt and continuation in one pass here."""

import streamlit as st

import i18n
from i18n import N_, _, later
from model.engine import stages
from ui.page.binding import bind, page_value, set_value
from ui.page.start import start
from ui.parts import knockout, lengths, masks
from ui.session import explanations
from ui.session.figures import shared
from views.controls import BLOCK_NAMES, BLOCKS, Field, all_heads, head_label
from viz.lengths import around
from viz.masks import masked_cells, score_pipeline

page = start(N_("Masks and heads lab"))
ctl, style, limits = page.controls, page.style, page.limits
if page.encoder_only:
    st.caption(_("This lab looks at the encoder's one pass over the sentence: the padding mask and knocked-out heads."))
    trace = page.result.trace
elif page.decoder_only:
    st.caption(
        _(
            "This lab looks at one pass over the prompt and its continuation with every piece fed at once, as in "
            "training, which is where the masks do their work."
        )
    )
    # with the causal mask on, the continuation's own trace is that pass (Bundle.generate builds it so)
    trace = (
        page.result.trace
        if ctl.causal
        else explanations.teacher_forced(
            page.bundle, ctl.sentence, page.result.output_ids, ctl.interventions(), ctl.chat
        )
    )
else:
    st.caption(
        _(
            "This lab looks at one pass over the whole translation with every piece fed at once, as in training, "
            "which is where the masks do their work."
        )
    )
    # the page's translation, all of it read in one pass under the sidebar's switches
    trace = explanations.teacher_forced(page.bundle, ctl.sentence, page.result.output_ids, ctl.interventions())
blocks = limits.blocks
# what the model makes of the sentence (of a chat message: its answer): a code, said by viz.masks.OUTPUT_NOUNS
output_word = "answer" if page.chat else "continuation" if page.decoder_only else "translation"


def _block(text: str) -> str:
    if text not in BLOCKS:
        raise ValueError(later("expected one of {options}", options=", ".join(BLOCKS)))
    return text


def _short(text: str) -> str:
    if not text.strip() or len(text) > 500:
        raise ValueError(later("expected a short sentence"))
    return text


if page_value(Field("block", "dec-self", _block)) not in blocks:
    set_value("block", next(iter(blocks)))
page_value(Field("short", "I see a bird.", _short))

# 1. scores -> masked scores -> softmax
st.subheader(_("One head, step by step: scores → mask → softmax"))
block = bind(
    "block",
    st.radio,
    label=_("Attention block"),
    options=list(blocks),
    horizontal=True,
    format_func=lambda b: i18n._(BLOCK_NAMES[b]).capitalize(),
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
        f"{i18n._(BLOCK_NAMES[block]).capitalize()} L{layer + 1} H{ctl.head + 1}",
        **lengths.block_windows(block, source, output),
    ),
    _(
        "Left: how well each query matches each key (QKᵀ/√d_k). Middle: the mask sets forbidden pairs to −∞ (the "
        "grey “masked” cells). Right: softmax turns each row into weights that sum to 1; −∞ becomes exactly 0."
    )
    if masked_cells(raw_scores, masked_scores).any()
    else _(
        "Left: how well each query matches each key (QKᵀ/√d_k). Middle: the mask sets forbidden pairs to −∞ (the "
        "grey “masked” cells, none here: no mask forbids a pair in this block). Right: softmax turns each row into "
        "weights that sum to 1; −∞ becomes exactly 0."
    ),
    key="pipeline",
)


labels = {h: head_label(h) for h in all_heads(limits)}
sweep_key = (page.bundle.checkpoint_id, ctl.sentence, ctl.interventions(), ctl.beam_size, ctl.chat)  # the sweep's
lab = knockout.Lab(page, labels, sweep_key, len(trace.src_pieces) + len(trace.tgt_pieces), output_word)
# The experiments: codes of the URL (`lab=`), each with its name, said with i18n._ where shown
EXPERIMENTS = {"causal": N_("The causal mask"), "padding": N_("The padding mask"), "knockout": N_("Knock out heads")}


def _experiment(text: str) -> str:
    if text not in EXPERIMENTS:
        raise ValueError(later("expected one of {options}", options=", ".join(EXPERIMENTS)))
    return text


LAB = Field("lab", "causal", _experiment)


def encoder_lab() -> None:
    """Padding and knock-out for a model without a decoder, judged by the sentence embedding."""
    st.subheader(_("The causal mask"))
    st.info(
        _(
            "{model} is encoder-only: it has no decoder, so there is no causal mask. Its self-attention lets every "
            "piece look at every other, before and after it.",
            model=page.bundle.name,
        )
    )
    if masks.padding_encoder(page, source):
        knockout.embedding(lab)


if page.encoder_only:
    encoder_lab()
    page.finish(globals())
    st.stop()


# Each experiment runs the model its own way (a translation without the mask, a padded batch twice,
# a translation with every head): only the one on show runs.
page_value(LAB)
experiment = bind(
    "lab",
    st.radio,
    label=_("Experiment"),
    options=list(EXPERIMENTS),
    format_func=lambda code: i18n._(EXPERIMENTS[code]),
    horizontal=True,
)
if page.decoder_only:
    {
        "causal": lambda: masks.causal_decoder(page, output),
        "padding": lambda: masks.padding_decoder(page),
        "knockout": lambda: knockout.before_and_after(lab),
    }[experiment]()
else:
    {
        "causal": lambda: masks.causal(page, output),
        "padding": lambda: masks.padding(page, source),
        "knockout": lambda: knockout.before_and_after(lab),
    }[experiment]()

knockout.sweep(lab)
page.finish(globals())
