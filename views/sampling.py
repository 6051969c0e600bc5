"""What a sampled answer shows (`decode=sample`, pages/1_translate.py): how each step's piece was drawn, which
pieces greedy decoding would not have chosen, and several answers drawn with seeds one after another."""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go

from i18n import _, listing, sentences
from model import TranslationResult
from model.engine.draws import Sampling
from views.panels import Panel, words
from views.scene import Scene
from viz.labels import display_piece, reads_bytes
from viz.sampling import draw_chart

ANSWERS = 5  # "Five answers": seeds drawn one after another from the one in the address


def sampling(scene: Scene) -> Sampling | None:
    """How the scene's answer was drawn, or None when it was decoded greedily or with beams."""
    return scene.controls.sampling


def _result(scene: Scene) -> TranslationResult:
    if not isinstance(scene.result, TranslationResult):
        raise ValueError("a sampled answer's pictures need a decoded output")
    return scene.result


def sampled_label(output: str, drawn: Sampling) -> str:
    """What the output is called over it when it was sampled (`output`: answer, continuation or translation)."""
    cuts = []
    if drawn.top_k:
        cuts.append(_("top-k {k}", k=drawn.top_k))
    if drawn.top_p < 1:
        cuts.append(_("top-p {p}", p=f"{drawn.top_p:g}"))
    if cuts:
        return _(
            "{output} (sampled: temperature {t}, {cuts}, seed {seed})",
            output=output,
            t=f"{drawn.temperature:g}",
            cuts=listing(cuts),
            seed=drawn.seed,
        )
    return _(
        "{output} (sampled: temperature {t}, seed {seed})", output=output, t=f"{drawn.temperature:g}", seed=drawn.seed
    )


def draw_figure(scene: Scene, step: int) -> go.Figure:
    """How step `step` (from 0) of the sampled answer was drawn."""
    result = _result(scene)
    drawn = sampling(scene)
    if drawn is None or not result.draws:
        raise ValueError("only a sampled answer has draws to show")
    draw = result.draws[min(step, len(result.draws) - 1)]
    pieces = scene.bundle.tokenizer.pieces(list(draw.ids))
    byte_level = reads_bytes(scene.bundle.tokenizer.pieces(list(result.output_ids)))
    title = _(
        "Step t = {t}: how “{drawn}” was drawn",
        t=min(step, len(result.draws) - 1) + 1,
        drawn=display_piece(scene.bundle.tokenizer.pieces([draw.piece])[0], byte_level),
    )
    return scene.figure(draw_chart, pieces, draw, drawn.temperature, scene.style, title)


def draw_caption(scene: Scene) -> str:
    """What the draw's picture shows, with the cuts this answer asked for."""
    drawn = sampling(scene)
    if drawn is None:
        return ""
    how = _(
        "Grey: the model's probability for each of the most likely pieces; blue: after dividing the scores by the "
        "temperature T = {t} before the softmax (below 1 sharper, above 1 flatter).",
        t=f"{drawn.temperature:g}",
    )
    cut = _(
        "Top-k keeps the k most likely pieces, then top-p the most likely ones whose probabilities, renormalized, "
        "reach p; the pieces they cut are faded, and the kept ones renormalized."
    )
    drawn_words = _(
        "A number u is drawn uniformly from 0 to 1 with the seed's own random generator: the drawn piece is the first "
        "whose cumulative probability, most likely first, passes u. The step slider and Play move the picture."
    )
    return sentences(how, cut if drawn.top_k or drawn.top_p < 1 else "", drawn_words)


def draw_panels(scene: Scene, step: int) -> list[Panel]:
    """A sampled answer's draw at `step` (from 0) with its caption, and the pieces greedy would not have chosen;
    nothing for greedy decoding and beams."""
    if sampling(scene) is None or not _result(scene).draws:
        return []
    figure = draw_figure(scene, step)
    return [Panel(scene.key("draw"), figure=figure, caption=draw_caption(scene)), *off_greedy(scene)]


def off_greedy(scene: Scene) -> list[Panel]:
    """The sampled pieces greedy decoding would not have chosen at their step (those not ranked first), named with
    their step and rank; or that every piece drawn was the most likely one."""
    result = _result(scene)
    if sampling(scene) is None or not result.draws:
        return []
    pieces = scene.bundle.tokenizer.pieces(list(result.output_ids))
    byte_level = reads_bytes(pieces)
    named = [
        _("step {t}: “{drawn}” (rank {r})", t=step + 1, drawn=display_piece(pieces[step], byte_level), r=draw.rank + 1)
        for step, draw in enumerate(result.draws)
        if draw.rank > 0 and step < len(pieces)
    ]
    if not named:
        said = _("Every piece drawn was the most likely one at its step: this answer is greedy decoding's.")
    else:
        said = _("Drawn where greedy decoding would have taken another piece: {pieces}.", pieces=listing(named))
    return [words(scene.key("off-greedy"), said)]


@dataclass(frozen=True)
class Answer:
    """One of several sampled answers: its seed, text, log-probability under the model, and the step (from 0)
    where it first left the greedy answer (None: it is the greedy answer)."""

    seed: int
    text: str
    log_prob: float
    leaves_greedy_at: int | None


def first_difference(ids: tuple[int, ...], greedy: tuple[int, ...]) -> int | None:
    """The first step at which `ids` differs from `greedy` (a shorter one differs where it ends); None if equal."""
    for step, (mine, theirs) in enumerate(zip(ids, greedy, strict=False)):
        if mine != theirs:
            return step
    return None if len(ids) == len(greedy) else min(len(ids), len(greedy))


def seeds_from(seed: int, count: int = ANSWERS) -> list[int]:
    """The seeds of "Five answers": the address's seed and the ones after it."""
    return [seed + offset for offset in range(count)]
