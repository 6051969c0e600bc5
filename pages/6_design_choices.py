"""Design choices: the tutorials' "why" questions, each measured on the loaded model and sentence (views/design.py
says what each section shows; a decoder-only model's second continuation waits here for its button at a real
size)."""

from typing import Any

import plotly.graph_objects as go
import streamlit as st

from i18n import N_, _, language
from ui.page.ondemand import second_continuation
from ui.page.start import start
from ui.parts import lengths, recipes
from ui.session import engine, experiments, explanations
from views import design, temperature
from views.what_if import Passes, WhatIf, pieces
from viz.style import Style

# The what-ifs' passes, through the app's caches
PASSES = Passes(
    encode=engine.encode,
    teacher_forced=explanations.teacher_forced,
    teacher_forced_at=explanations.teacher_forced_at,
    empty_source=experiments.empty_source,
    output_text=engine.translation_text,
)


@st.cache_resource(show_spinner=False)
def _random_figures(style: Style, words: str) -> tuple[go.Figure, go.Figure]:
    """The same for every visitor and sentence: measured and drawn once per process, style and language
    (`words`: the run's, whose words the figures say; figures are only read when shown, never changed)."""
    return design.random_figures(style)


def _continued(changes: dict[str, Any], name: str) -> bool:
    """Whether a decoder-only model's continuation with the switches changed is shown: the page's own,
    or another one (on a button at a real model's size); `name` (said) names the change."""
    return what_if.same(**changes) or second_continuation(
        page.bundle,
        page.controls,
        len(page.result.output_ids),
        _("Continue {how}", how=name),
        f"continue-{'-'.join(f'{k}-{v}' for k, v in changes.items())}",
        **changes,
    )


def _compared(section: str) -> None:
    """The outputs with the section's switch on and off, side by side (for an encoder-only model, how alike the
    embeddings are); a decoder-only model's continuation under the other switch may wait for its button."""
    if not design.compares(scene, section):
        return
    switch = design.SWITCHES[section]
    named = zip(({switch: True}, {switch: False}), design.sides(), strict=True)
    if page.decoder_only and not all(_continued(changes, name) for changes, name in named):
        return
    page.panels(design.compared(scene, what_if, section))


page = start(N_("Design choices"))
scene = page.scene
what_if = WhatIf(scene, PASSES)
page.lead(design.intro(scene).text)

# 1. sqrt(d_k)
st.header(design.section_title("dk"))
page.lead(design.scores_lead(scene).text)
page.panels(design.scores(scene, _random_figures(page.style, language())))
page.panels([design.live_heading(scene)])
if page.bundle.config.scale_scores:
    window = None if page.decoder_only else lengths.source_window(len(pieces(scene)))
    page.panels(design.live_scores(scene, what_if, window))
_compared("dk")

# 2. sqrt(d_model)
st.header(design.section_title("dmodel"))
page.panels(design.embedding_scale(scene, what_if))
_compared("dmodel")

# 3. -inf or -1e9
st.header(design.section_title("fill"))
page.panels(design.fill(scene, what_if))

# 4. recipes
st.header(design.section_title("recipes"))
page.panels(design.recipes(scene, recipes.panels(page)))

# 5. sampling and temperature
st.header(design.section_title("sampling"))
page.panels(temperature.panels(scene))
page.finish(globals())
