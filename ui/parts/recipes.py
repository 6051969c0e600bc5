"""The recipe comparison (Post-LN / Pre-LN, warm-up, label smoothing), drawn where a page asks."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

import i18n
from i18n import N_, _
from model.training.recipe_results import findings, read_recipes
from ui.page.start import Page
from ui.session.cache import FIGURES
from views.markdown import md
from viz.style import Style
from viz.training import recipe_curves

# Each curve's title and value axis, and what it shows, said in the run's language where drawn
CURVES = {
    "loss": (N_("Training loss (label-smoothed where the run smooths)"), N_("cross-entropy")),
    "valid_loss": (N_("Validation cross-entropy (no smoothing)"), N_("nats per piece")),
    "valid_bleu": (N_("Validation BLEU"), "BLEU"),
}
CAPTIONS = {
    "loss": N_(
        "What each run optimized. A smoothed run's loss cannot fall as low: it keeps 10% of every "
        "target's probability spread over the other pieces."
    ),
    "valid_loss": N_("The same held-out pairs for every run, scored without smoothing: perplexity is e to this."),
    "valid_bleu": N_("Greedy translations of 300 held-out sentences."),
}


def _figures(checkpoint_id: str, style: Style, logs: dict) -> list[go.Figure | None]:
    """The three curve figures, drawn once per checkpoint, style and language and kept with the shared figures
    (figures are only read when shown)."""

    def draw() -> list[go.Figure | None]:
        return [
            recipe_curves(logs, column, style, i18n._(title), i18n._(axis)) for column, (title, axis) in CURVES.items()
        ]

    return FIGURES.get(("recipes", checkpoint_id, style, i18n.language()), draw)


def show(page: Page) -> bool:
    """Draw the runs' curves and the measured findings; False (and nothing drawn) when there are none."""
    summary, logs = read_recipes(page.bundle.path / "recipes")
    if not logs:
        return False
    budget = summary.get("budget_minutes_each", "?")
    st.markdown(
        _(
            "Six runs of this model's shape on its corpus, same seed, **{budget} minutes each** on one core (two "
            "at a time), measured with `python -m model.recipes`: Post-LN (solid) and Pre-LN (dashed), with the "
            "paper's warm-up ({warmup} steps) or without it (the inverse square root from step 1, whose first "
            "steps are 14 times the warmed-up peak), label smoothing 0.1 or 0.",
            budget=budget,
            warmup=summary.get("warmup_steps", "?"),
        )
    )
    for (column, caption), figure in zip(
        CAPTIONS.items(), _figures(page.bundle.checkpoint_id, page.style, logs), strict=True
    ):
        if figure is not None:
            page.show(figure, i18n._(caption), key=f"recipe-{column}")
    said = findings(summary)
    if said:
        st.markdown("\n".join([_("**Measured here:**"), *(f"- {md(str(line))}" for line in said)]))
    return True
