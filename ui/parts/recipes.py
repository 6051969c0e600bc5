"""The recipe comparison (Post-LN / Pre-LN, warm-up, label smoothing), its curves kept with the shared figures
(views/recipes.py says what it shows)."""

from __future__ import annotations

import plotly.graph_objects as go

import i18n
from ui.page.start import Page
from ui.session.cache import FIGURES
from views import recipes
from views.panels import Panel
from viz.style import Style


def _figures(checkpoint_id: str, style: Style, logs: dict) -> list[go.Figure | None]:
    """The three curve figures, drawn once per checkpoint, style and language and kept with the shared figures
    (figures are only read when shown)."""
    return FIGURES.get(("recipes", checkpoint_id, style, i18n.language()), lambda: recipes.curves(logs, style))


def panels(page: Page) -> list[Panel]:
    """The runs' curves and the measured findings; none when the checkpoint ships no comparison."""
    scene = page.scene
    summary, logs = recipes.read(scene)
    figures = _figures(page.bundle.checkpoint_id, page.style, logs) if logs else []
    return recipes.comparison(scene, summary, logs, figures)
