"""The Design choices page's section on sampling (views/design.py's fifth): one step's distribution of the loaded
model at three temperatures, and its entropy against the temperature."""

from __future__ import annotations

import numpy as np
import torch

from i18n import _, sentences
from model import TranslationResult
from model.engine import stages
from views.panels import Panel, words
from views.scene import Scene
from viz.sampling import entropy_chart, temperature_chart

SHOWN_TEMPERATURES = (0.3, 1.0, 2.0)
PIECES = 12  # the most likely pieces the bars show
CURVE = np.geomspace(0.05, 5.0, 61)  # the temperatures the entropy is drawn at


def step_logits(scene: Scene, step: int) -> tuple[np.ndarray, int] | None:
    """The scores (vocab,) the model gave at decoding step `step` (from 0) of the scene's output, with the step
    they are at (the last one for a step past the output); None when the model decodes nothing or the run kept no
    trace."""
    result = scene.result
    if not isinstance(result, TranslationResult) or result.trace is None or not result.steps:
        return None
    logits = result.trace.tensors.get(stages.LOGITS)
    if logits is None:
        return None
    rows = logits[0][-len(result.steps) :]  # a continuation's prompt rows come first: the steps are the last rows
    shown = min(step, len(rows) - 1)
    return np.asarray(rows[shown], dtype=np.float64), shown


def tempered(logits: np.ndarray, temperature: float) -> np.ndarray:
    """softmax(logits / T)."""
    return torch.softmax(torch.from_numpy(logits) / temperature, dim=-1).numpy()


def entropy_bits(probs: np.ndarray) -> float:
    """The entropy of a distribution, in bits (0 log 0 taken as 0)."""
    nonzero = probs[probs > 0]
    return float(-(nonzero * np.log2(nonzero)).sum())


def panels(scene: Scene) -> list[Panel]:
    """The section's words and its two pictures at the step of the step slider; a note for a model that decodes
    nothing."""
    found = step_logits(scene, scene.controls.step)
    if found is None:
        said = _(
            "Not applicable: {model} decodes nothing, so there is no next piece to sample.", model=scene.bundle.name
        )
        return [words(scene.key("temperature-na"), said, "info")]
    logits, shown = found
    finite = np.where(np.isfinite(logits), logits, -np.inf)
    order = np.argsort(-finite, kind="stable")[:PIECES]
    pieces = scene.bundle.tokenizer.pieces(order.tolist())
    at = {t: tempered(finite, t)[order] for t in SHOWN_TEMPERATURES}
    bars = scene.figure(
        temperature_chart, pieces, at, scene.style, _("Step t = {t}: the next piece at three temperatures", t=shown + 1)
    )
    entropies = np.array([entropy_bits(tempered(finite, t)) for t in CURVE])
    curve = scene.figure(
        entropy_chart,
        CURVE,
        entropies,
        list(SHOWN_TEMPERATURES),
        scene.style,
        _("Step t = {t}: how uncertain the draw is, against the temperature", t=shown + 1),
    )
    return [
        words(scene.key("temperature-lead"), _lead()),
        Panel(scene.key("temperature-bars"), figure=bars, caption=_bars_caption()),
        Panel(scene.key("temperature-entropy"), figure=curve, caption=_entropy_caption(entropies)),
    ]


def _lead() -> str:
    return sentences(
        _(
            "The model gives a probability to every piece of its vocabulary; greedy decoding always takes the most "
            "likely one, so a prompt has one answer. A chat tool samples instead: it draws the next piece at random, "
            "each piece as likely as the model says, so the same prompt gets different answers."
        ),
        _(
            "The temperature T reshapes the distribution first: the scores are divided by T before the softmax. Below "
            "1 the likely pieces take even more of the probability (near 0 it is greedy decoding); above 1 it "
            "spreads over more pieces, and the answers grow more varied and less careful. Choose Sample under "
            "Decoding in the sidebar to draw an answer with a seed, and see each draw on the first page."
        ),
    )


def _bars_caption() -> str:
    return _(
        "The most likely pieces at this step, each with its probability at three temperatures: the order never "
        "changes, only how the probability is shared. Move the step slider to see another step."
    )


def _entropy_caption(entropies: np.ndarray) -> str:
    return _(
        "The entropy is how many bits of surprise a draw carries on average: 0 when one piece is certain, "
        "log₂(vocabulary) when every piece is equally likely. At this step it goes from {low} bits at T = 0.05 "
        "to {high} bits at T = 5.",
        low=f"{entropies[0]:.2f}",
        high=f"{entropies[-1]:.2f}",
    )
