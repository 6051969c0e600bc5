"""The recipe comparison (Post-LN / Pre-LN, warm-up, label smoothing) as panels: the runs' curves and the findings
measured, which the Design choices and Training pages both show."""

from __future__ import annotations

import plotly.graph_objects as go

import i18n
from i18n import N_, _
from model.training.recipe_results import findings, read_recipes
from views.markdown import md
from views.panels import Panel, words
from views.scene import Scene
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


def read(scene: Scene) -> tuple[dict, dict[str, list[dict]]]:
    """(summary, run name -> log records) of the checkpoint's recipe comparison; empty when it ships none."""
    return read_recipes(scene.bundle.path / "recipes")


def curves(logs: dict[str, list[dict]], style: Style) -> list[go.Figure | None]:
    """The three curve figures (None for a column no run logged), in the run's language."""
    return [recipe_curves(logs, column, style, i18n._(title), i18n._(axis)) for column, (title, axis) in CURVES.items()]


def comparison(
    scene: Scene, summary: dict, logs: dict[str, list[dict]], figures: list[go.Figure | None]
) -> list[Panel]:
    """What the runs were, their curves (`figures`, from `curves`) and what they show; none without runs."""
    if not logs:
        return []
    shown = [
        words(
            scene.key("recipe-runs"),
            _(
                "Six runs of this model's shape on its corpus, same seed, **{budget} minutes each** on one core (two "
                "at a time), measured with `python -m model.recipes`: Post-LN (solid) and Pre-LN (dashed), with the "
                "paper's warm-up ({warmup} steps) or without it (the inverse square root from step 1, whose first "
                "steps are 14 times the warmed-up peak), label smoothing 0.1 or 0.",
                budget=summary.get("budget_minutes_each", "?"),
                warmup=summary.get("warmup_steps", "?"),
            ),
        )
    ]
    for (column, caption), figure in zip(CAPTIONS.items(), figures, strict=True):
        if figure is not None:
            shown.append(Panel(scene.key(f"recipe-{column}"), figure, caption=i18n._(caption)))
    said = findings(summary)
    if said:
        measured = "\n".join([_("**Measured here:**"), *(f"- {md(str(line))}" for line in said)])
        shown.append(words(scene.key("recipe-findings"), measured))
    return shown


def panels(scene: Scene) -> list[Panel]:
    """The comparison the checkpoint ships, drawn now (a notebook); none when it ships none."""
    summary, logs = read(scene)
    return comparison(scene, summary, logs, curves(logs, scene.style) if logs else [])
