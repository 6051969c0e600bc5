"""Tensor shapes: every stage from ids to logits, its shape, statistics, a flow diagram and a heatmap. What each
part shows: views/shapes.py."""

from unicodedata import east_asian_width

import streamlit as st

from i18n import N_, _
from model.results import Trace
from ui.page.binding import bind, page_value, set_value
from ui.page.panels import draw_one
from ui.page.start import Page, start
from ui.page.stream import Preview
from ui.parts import lengths
from views import shapes
from views.shapes import COLUMNS, STATISTICS, WEIGHT_COLUMNS
from viz.lengths import Span


def stage_columns(names: list[str]) -> dict[str, object]:
    """How the stages table shows its columns: their names in the language of this run, and widths (the stage
    column wide enough for its longest name, whole: 7 px a character at the table's font, twice that for a wide
    one such as a Chinese character)."""
    longest = max((sum(2 if east_asian_width(c) in "WF" else 1 for c in name) for name in names), default=8)
    widths = {"stage": 7 * longest + 24, "masked": 64, **dict.fromkeys(STATISTICS, 76)}
    config: dict[str, object] = {"#": st.column_config.NumberColumn("#", width=40)}
    for column, label in COLUMNS.items():
        if column in ("stage", "shape", "symbolic"):
            config[column] = st.column_config.TextColumn(_(label), width=widths.get(column))
        else:
            number = "%.4f" if column in STATISTICS else None
            config[column] = st.column_config.NumberColumn(_(label), format=number, width=widths[column])
    return config


def prompt_stages(page: Page, prompt: Trace) -> None:
    """While the continuation or translation is written: every stage of the prompt's pass and its shape (an
    encoder-decoder's: the encoder's over the sentence), its caption above the table."""
    shown = shapes.prompt_stages(page.scene, prompt)
    assert shown.table is not None, "the prompt's stages are a table"
    st.subheader(shown.heading)
    st.caption(shown.caption)
    with st.container(key=shown.key):
        columns = stage_columns(list(shown.table["stage"]))
        st.dataframe(shown.table, hide_index=True, height=420, column_config=columns)


def draw_stages(page: Page, trace: Trace) -> None:
    """Every recorded stage as a table row: its shape and statistics."""
    table = shapes.stages_panel(page.scene, trace)
    assert table.table is not None, "the stages are a table"
    draw_one(page, table, hide_index=True, height=420, column_config=stage_columns(list(table.table["stage"])))


def draw_one_stage(page: Page, trace: Trace, source: Span) -> None:
    """One stage picked in a box, drawn as a heatmap of its values."""
    default = shapes.default_stage(page.scene, trace)
    asked = page_value(shapes.stage_field(default))
    page.panels(shapes.stage_heading(page.scene, trace, asked))
    names = shapes.stage_labels(trace)
    if asked not in names:
        set_value("stage", default)
    name = bind("stage", st.selectbox, label=_("Stage"), options=list(names), format_func=names.get)
    page.panels([shapes.stage_panel(page.scene, trace, name, source)])


def draw_weights(page: Page) -> None:
    """Every parameter outside the layers, and the first layer's of each stack."""
    columns = {column: st.column_config.Column(_(label)) for column, label in WEIGHT_COLUMNS.items()}
    draw_one(page, shapes.weights_panel(page.scene), hide_index=True, width="stretch", column_config=columns)


page = start(N_("Tensor shapes"), preview=Preview(prompt=prompt_stages))
scene, trace = page.scene, page.result.trace
page.lead(shapes.letters(scene, trace))
for note in shapes.notes(scene):
    page.lead(f"- {note}")
page_value(shapes.stage_field(shapes.default_stage(scene, trace)))
source = lengths.source_window(len(trace.src_pieces))

if page.controls.presentation:  # a projector's first screen shows one stage whole: the flow is taller than any screen
    draw_one_stage(page, trace, source)
page.panels([shapes.flow_panel(scene, trace)])
draw_stages(page, trace)
if not page.controls.presentation:
    draw_one_stage(page, trace, source)
draw_weights(page)
page.finish(globals())
