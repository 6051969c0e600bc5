"""Translate: the output with its pieces and ids, every step's candidates, the beams.
For a decoder-only model (Continue): the same for its continuation of a prompt.
For an encoder-only model: the sentence, its pieces, its embedding and its similarity to another.
What it shows is views/translate.py's."""

from dataclasses import replace

import streamlit as st

from i18n import N_, _
from model.results import Written
from ui.page import player
from ui.page.binding import bind, page_value
from ui.page.markup import big_text, table_height
from ui.page.notices import VOCABULARY_KEYS, vocabulary_in
from ui.page.panels import draw_one
from ui.page.start import Page, start
from ui.page.stream import Preview
from ui.parts.answers import several_answers
from views import sampling as sampled
from views import translate as shown
from views.controls import MAX_PREFIX, SUGGESTED_PREFIX, typed_prefix
from views.panels import Panel
from viz.translate import steps_frame


def draw(page: Page, panels: list[Panel], whole: bool = False) -> None:
    """Panels in order, their tables without an index (with `whole`, every row in view, up to a height)."""
    for panel in panels:
        if panel.table is None:
            page.panels([panel])
        elif whole:
            draw_one(page, panel, hide_index=True, height=table_height(len(panel.table)))
        else:
            draw_one(page, panel, hide_index=True)


def sentence_page(page: Page) -> None:
    """What an encoder-only model does with a sentence: pieces, ids, and one vector for the whole."""
    scene = page.scene
    draw(page, shown.sentence(scene), whole=True)
    page_value(shown.COMPARE)
    other_text = bind("compare", st.text_input, label=_("A second sentence to compare with"), max_chars=2000)
    page.panels(shown.similarity(scene, page.encode(other_text)))
    page.finish(globals())


def task_prefix(page: Page) -> None:
    """What a T5 reads before the sentence: the checkpoint's own task prefix, or one the person types."""
    typed = typed_prefix(page.bundle)
    if typed:
        bind(
            "prefix",
            st.text_input,
            label=_("Task prefix, put before the sentence"),
            max_chars=MAX_PREFIX,
            placeholder=SUGGESTED_PREFIX,
            help=_("For example “{prefix}”. Clear it to give the model the sentence alone.", prefix=SUGGESTED_PREFIX),
        )
    page.panels(shown.prefix_note(page.scene, typed))


def growing(page: Page, written: list[Written]) -> None:
    """The Continue page while its continuation is written: the text so far and every step's candidates."""
    st.caption(shown.so_far(page.output_noun, len(written), written[-1].limit))
    big_text(written[-1].text + " …")
    st.dataframe(steps_frame([w.step for w in written]), hide_index=True)


page = start(
    N_("Translate"), encoder_title=N_("Sentence"), decoder_title=N_("Continue"), preview=Preview(pieces=growing)
)
if page.encoder_only:
    sentence_page(page)
    st.stop()
scene = page.scene
if page.decoder_only:
    with page.notes:
        page.panels(shown.decoder_only_note(scene))
else:
    task_prefix(page)

n_steps = len(page.result.steps)
player.DECODING.controls(n_steps, "translate", whole_at_rest=True)


def decoding(step: int) -> None:
    """The output and every step's candidates; while the player runs, up to step t only."""
    steps_shown = step + 1 if player.DECODING.engaged() else n_steps
    page.panels([shown.output(scene, steps_shown)])
    player.DECODING.steady_chart(
        page,
        "steps",
        lambda last: shown.candidates(scene, last),
        steps_shown - 1,
        caption=shown.steps_caption(scene, steps_shown < n_steps),
    )
    if sampled.sampling(scene) is not None:
        drawn_at = min(step, n_steps - 1)
        player.DECODING.steady_chart(
            page, "bars-draw", lambda at: sampled.draw_figure(scene, at), drawn_at, caption=sampled.draw_caption(scene)
        )


player.DECODING.run(decoding, n_steps, page)
page.panels(sampled.off_greedy(scene))
if sampled.sampling(scene) is not None:
    several_answers(page)
page.panels(shown.reference(scene) + shown.read(scene))
if page.bundle.capabilities.trained_here:  # the corpus lexicon is this project's own models' vocabulary
    opened = st.expander(_("What vocabulary does the model know?"), key=VOCABULARY_KEYS[1], on_change="rerun")
    vocabulary_in(opened, page.bundle)

page.panels([shown.pieces_heading(scene)])
for column, panel in zip(st.columns(2), shown.pieces(scene), strict=True):
    with column:
        draw(page, [panel], whole=True)

steps = shown.steps_table(scene)
with st.expander(steps.heading):
    chosen = _("p(chosen)")  # the column steps_frame names so
    progress = st.column_config.ProgressColumn(chosen, min_value=0.0, max_value=1.0, format="%.3f")
    draw_one(page, replace(steps, heading=""), hide_index=True, column_config={chosen: progress})

draw(page, shown.beams(scene))
page.panels([shown.log_prob(scene)])
page.finish(globals())
