"""Masks and heads lab: scores -> masked -> softmax, the causal and padding masks, head knock-out.
A decoder-only model (GPT-2) reads its prompt and continuation in one pass here. What it shows is views/masks.py's."""

import streamlit as st

import i18n
from i18n import N_, _
from ui.page.binding import bind, page_value, set_value
from ui.page.start import start
from ui.parts import knockout, lengths, masks
from ui.session import explanations
from views import masks as shown
from views.controls import BLOCK_NAMES

page = start(N_("Masks and heads lab"))
scene = page.scene
ctl = page.controls
page.panels(shown.intro(scene))
if shown.needs_pass(scene):
    # the page's output, all of it read in one pass under the sidebar's switches
    output_ids = page.result.output_ids
    trace = explanations.teacher_forced(page.bundle, ctl.sentence, output_ids, ctl.interventions(), ctl.chat)
else:
    trace = page.result.trace
set_value("block", shown.block_shown(page.limits, page_value(shown.BLOCK)))
page_value(shown.SHORT)

# 1. scores -> masked scores -> softmax
page.panels([shown.pipeline_heading(scene)])
block = next(iter(page.limits.blocks))
if len(page.limits.blocks) > 1:  # a decoder alone, or an encoder alone, has its one block: nothing to pick
    block = bind(
        "block",
        st.radio,
        label=_("Attention block"),
        options=list(page.limits.blocks),
        horizontal=True,
        format_func=lambda b: i18n._(BLOCK_NAMES[b]).capitalize(),
    )
source = lengths.source_window(len(trace.src_pieces))  # long sentences: every heatmap here shows a window
page.panels(shown.pipeline(scene, trace, block, source))
lab = knockout.Lab(page, scene, trace)

if page.encoder_only:  # padding and knock-out, judged by the sentence embedding
    page.panels(shown.no_causal_mask(scene))
    if masks.padding_encoder(page, scene, source):
        knockout.embedding(lab)
    page.finish(globals())
    st.stop()

# Each experiment runs the model its own way (a translation without the mask, a padded batch twice,
# a translation with every head): only the one on show runs.
page_value(shown.LAB)
experiment = bind(
    "lab",
    st.radio,
    label=_("Experiment"),
    options=list(shown.EXPERIMENTS),
    format_func=lambda code: i18n._(shown.EXPERIMENTS[code]),
    horizontal=True,
)
if experiment == "causal":
    masks.causal(page, scene, shown.step_window(scene, trace))
elif experiment == "padding":
    masks.padding(page, scene, source)
else:
    knockout.before_and_after(lab)
knockout.sweep(lab)
page.finish(globals())
