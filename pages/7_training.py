"""Training: a time-lapse of attention over the training snapshots, loss and validation curves, the
learning-rate schedule, the recipe comparison and the model card (views/training.py says what each shows)."""

from itertools import groupby

import streamlit as st

from i18n import N_
from model.checkpoints.checkpoint import read_train_log
from ui.page.start import start
from ui.parts import recipes, timelapse
from views import training
from views.panels import Panel


def _table(panel: Panel) -> None:
    """A table as this page draws it: the long ones folded away under their heading, the others in full."""
    if panel.key in {scene.key(name) for name in training.FOLDED}:
        with st.expander(panel.heading):
            st.dataframe(panel.table, hide_index=True, width="stretch")
    else:
        st.dataframe(panel.table, hide_index=True, width="stretch")


def _draw(panels: list[Panel]) -> None:
    """The panels in order: figures and words as every page draws them, tables as this one does."""
    for tables, group in groupby(panels, key=lambda panel: panel.table is not None):
        if tables:
            for panel in group:
                _table(panel)
        else:
            page.panels(group)


page = start(N_("Training"), needs_result=False)
scene = page.scene
_draw([training.timelapse_heading(scene)])
timelapse.show(page)
_draw(training.curves(scene, read_train_log(page.bundle.path)))
_draw(training.recipes(scene, recipes.panels(page)))
_draw(training.card(scene))
page.finish(globals())
