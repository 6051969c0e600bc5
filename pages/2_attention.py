"""Attention: every head of the chosen layer, the head average, and the all-layers model view.
A decoder-only model (GPT-2) has decoder self-attention alone, over its prompt and continuation.
The panels are views/attention.py's; this script adds the step slider, the player and the pickers."""

import streamlit as st

from i18n import N_, _
from model.results import Trace
from ui.page import player
from ui.page.binding import bind, page_value, set_value, stored
from ui.page.notices import hidden_until_the_reveal
from ui.page.start import Page, start
from ui.page.stream import Preview
from ui.parts import kvcache, lengths, modelview, sinks, windows
from ui.room import presenter, questions
from views import attention
from views.sinks import sink_stack, stack_pieces
from viz.lengths import Span, around


def prompt_heads(page: Page, prompt: Trace) -> None:
    """While the continuation or translation is written: the chosen head's self-attention over the prompt alone,
    its last pieces' rows; for an encoder-decoder, the encoder's over the sentence. Then the prompt's sinks."""
    scene = page.scene
    panel = attention.prompt_panel(scene, prompt)
    st.subheader(panel.heading)
    page.draw(panel.figure, key=panel.key)
    st.caption(panel.caption)
    sinks.prompt_shares(page, prompt, sink_stack(scene))


page = start(N_("Attention"), preview=Preview(prompt=prompt_heads))
scene, trace, ctl = page.scene, page.result.trace, page.controls
# while the room votes on where cross-attention looks, its pictures wait for the reveal (here and on every phone)
hidden = ("dec-cross",) if presenter.asking(page.room) else ()
n_steps, first = attention.decoding_steps(scene)
blocks = page.limits.blocks  # an encoder-only model has one, a decoder-only model one
if page_value(attention.VIEW) not in blocks:  # a decoder view kept from another model
    set_value("view", attention.shown_view(scene, page_value(attention.VIEW)))


def _step_header(step: int) -> int:
    """The step slider (the player moves it too) and what step t did; returns the step from 0."""
    if n_steps > 1:
        step = (
            bind(
                "step",
                st.slider,
                label=_("Decoding step t (outlined row in the decoder plots)"),
                min_value=1,
                max_value=n_steps,
                moving=player.DECODING.playing(),
            )
            - 1
        )
    page.panels([attention.step_words(scene, step)])
    return step


def _step_view(step: int, source: Span, colour: str) -> None:
    """The moving picture under the step control: the chosen head's decoder self-attention and
    cross-attention, the step's row (`step`) outlined."""
    decoding = attention.decoding_blocks(scene)
    for column, block in zip(st.columns(len(decoding)), decoding, strict=True):

        def at_row(row: int, block: str = block):
            return attention.step_figure(scene, block, row, source, colour)

        with column:
            if block in hidden:
                hidden_until_the_reveal(scene.key(f"step-{block}"))
            else:
                player.DECODING.steady_chart(page, scene.key(f"step-{block}"), at_row, step, first)
    st.caption(attention.step_caption(len(decoding) > 1, player.DECODING.playing()))


def body(step: int) -> None:
    """Everything that follows the decoding step: drawn again at every step while playing."""
    picture = st.container()  # the step's picture first; the controls that shape it sit below it
    t = step
    if not page.encoder_only:
        with picture:
            t = _step_header(step)
            step = first + t  # from here on: the decoder row of the step
            moving = st.container()
    source = lengths.source_window(len(trace.src_pieces))
    output = around(step, len(trace.tgt_pieces))
    colour = lengths.colour()
    outlined = not player.DECODING.playing()
    if not page.encoder_only:
        with moving:
            _step_view(step, source, colour)
            kvcache.cache_at_step(page, t, trace.tgt_pieces)
    page.panels(attention.mask_off_panels(scene))
    for block in blocks:
        if block in hidden:
            hidden_until_the_reveal(scene.key(f"layer-{block}"))
        else:
            page.panels(attention.layer_panels(scene, block, step, source, output, colour, outlined))
    modelview.section(page, trace, step, source, output, colour, outlined=outlined, hidden=hidden)
    if (stored("layer"), stored("head")) != (ctl.layer + 1, ctl.head + 1):
        st.rerun()  # a tile was clicked inside the player: redraw the whole page, sidebar pickers included


note = attention.model_note(scene)
if page.encoder_only:
    page.panels([note] if note else [])
    body(0)
else:
    if note is not None:
        with page.notes:
            page.panels([note])
    # A step kept from a longer output (or a URL) is brought inside this output before the slider sees it.
    set_value("step", attention.kept_step(scene, n_steps) + 1)
    player.DECODING.controls(n_steps, "attention")
    player.DECODING.run(body, n_steps, page)
    if not page.decoder_only:
        presenter.offer(
            page.room, lambda: questions.attention(trace, ctl.layer, ctl.head, stored("step") - 1), questions.NO_CROSS
        )
    kvcache.without_cache(page)
    kvcache.shared_heads(page, len(trace.tgt_pieces))
stack = sink_stack(scene)
sinks.section(page, trace, stack, stack_pieces(trace, stack))
windows.section(page, trace.tgt_pieces)
page.finish(globals())
