"""The Masks and heads lab's head knock-outs as panels (views/masks.py draws the page): the heads the sidebar
knocks out and what the output (an encoder-only model's sentence embedding) does without them, the layer and the
head whose knock-out matters most, and the sweep that knocks out each head in turn."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

import i18n
from i18n import _, listing, n_, sentences
from model import EncodeResult, Interventions, Trace, TranslationResult, cosine
from model.analysis.forced import work
from model.analysis.knockout import RETRANSLATED
from model.engine.interventions import Head
from views.controls import BLOCK_NAMES, all_heads, head_label
from views.panels import Panel, side_by_side
from views.scene import Scene
from viz.masks import (
    OUTPUT_NOUNS,
    SMALL_DROP,
    embedding_knockout_chart,
    embedding_knockout_frame,
    fixed_output_probabilities,
    knockout_caption,
    knockout_chart,
    knockout_frame,
    probability_comparison,
)

# The sweep table's columns shown as numbers to 3 decimals (codes of viz.masks.knockout_frame)
NUMBERS = ("log-prob drop", "log-prob of the original output")
# The log-probabilities of the output made with every head on, each piece's, under some switches
Scores = Callable[[Interventions], list[float]]


def head_labels(scene: Scene) -> dict[Head, str]:
    """Every head's name ("decoder cross L1 H2"), in the language of this run."""
    return {head: head_label(head) for head in all_heads(scene.limits)}


def output_noun(scene: Scene) -> str:
    """What the model makes of the text, as a person reads it, in the language of this run."""
    return i18n._(OUTPUT_NOUNS[scene.output_noun])


def swept_heads(scene: Scene) -> list[Head]:
    """The heads the sweep knocks out in turn: all but those the sidebar knocks out already."""
    return [head for head in all_heads(scene.limits) if head not in scene.controls.ablate]


def column_names(scene: Scene) -> dict[str, str]:
    """The knock-out tables' columns (codes, viz/masks.py) named for a person."""
    word = scene.output_noun
    noun = output_noun(scene)
    return {
        "head": _("head"),
        f"{word} changed": _("{output} changed", output=noun),
        "log-prob drop": _("log-prob drop"),
        "log-prob of the original output": _("log-prob of the original output"),
        f"{word} with the head knocked out": _("{output} with the head knocked out", output=noun),
        "embedding shift": _("embedding shift"),
        "cosine to the original": _("cosine to the original"),
        "distance": _("distance"),
    }


def heading(scene: Scene) -> Panel:
    """The knock-out section's heading and the heads knocked out, or, with none, how to knock some out."""
    ctl = scene.controls
    key = scene.key("knockout-heading")
    title = _("Knock out heads")
    if ctl.ablate:
        labels = head_labels(scene)
        said = _("Knocked out: {heads}", heads=listing(f"`{labels[head]}`" for head in ctl.ablate))
        return Panel(key, heading=title, text=said)
    if scene.encoder_only:
        said = _(
            "No head is knocked out. Pick heads under “Knock out heads” in the sidebar to see what the model "
            "does without them."
        )
    else:
        said = _(
            "No head is knocked out. Pick heads under “Knock out heads” in the sidebar to see what the model "
            "does without them, or start from the knock-out that changes the most:"
        )
    return Panel(key, heading=title, text=said, tone="info")


def suggests(scene: Scene) -> bool:
    """Whether the page offers one-click knock-outs: none knocked out yet, and an output to lower."""
    result = scene.result
    return not scene.controls.ablate and isinstance(result, TranslationResult) and bool(result.output_ids)


def layer_groups(scene: Scene) -> dict[str, tuple[Head, ...]]:
    """Each layer of each attention block, all of its heads together, by name (in the language of this run)."""
    limits = scene.limits
    return {
        n_(
            "{block} L{layer} (all {n} head)",
            "{block} L{layer} (all {n} heads)",
            limits.n_heads,
            block=i18n._(BLOCK_NAMES[code]),
            layer=layer + 1,
        ): tuple((stack, kind, layer, head) for head in range(limits.n_heads))
        for code, (stack, kind) in limits.blocks.items()
        for layer in range(limits.layers_of(stack))
    }


def layer_drops_work(scene: Scene, trace: Trace) -> float:
    """What knocking out each layer's heads together costs: one teacher-forced pass per layer over the pieces of
    the lab's one pass (`trace`: the source's and the decoder's)."""
    return work(scene.bundle, len(layer_groups(scene)), len(trace.src_pieces) + len(trace.tgt_pieces))


def layer_drops_note(scene: Scene) -> str:
    """What the button that knocks out each layer in turn is for, at a costly size."""
    n = len(layer_groups(scene))
    return _("One pass per layer ({n}) takes seconds at this model's size: the button runs them.", n=n)


def layer_drops(scene: Scene, score: Scores) -> dict[str, float]:
    """How far knocking out each layer's heads together lowers the log-probability of the output made with every
    head on (`score`: its pieces' log-probabilities under some switches)."""
    ctl = scene.controls
    base = sum(score(ctl.interventions()))
    return {
        name: base - sum(score(ctl.interventions(ablate=frozenset(heads))))
        for name, heads in layer_groups(scene).items()
    }


def strongest_layer(drops: dict[str, float]) -> str:
    """The layer whose heads, knocked out together, lower the output's log-probability most."""
    return max(drops, key=drops.__getitem__)


def layer_suggestion(scene: Scene, drops: dict[str, float]) -> Panel:
    """The strongest layer's knock-out (`text`: the app's button that knocks it out) and what it does, beside
    the others."""
    name = strongest_layer(drops)
    if len(drops) > 1:
        # i18n: {n} is 2 or more
        said = _(
            "Knocking out all the heads of one layer together, layer by layer: this one lowers the "
            "log-probability of the {output} made with every head by **{drop}**, the most of the {n} layers "
            "(the next: {next}).",
            output=output_noun(scene),
            drop=f"{drops[name]:.2f}",
            n=len(drops),
            next=f"{sorted(drops.values())[-2]:.2f}",
        )
    else:
        said = _(
            "It lowers the log-probability of the {output} by **{drop}**.",
            output=output_noun(scene),
            drop=f"{drops[name]:.2f}",
        )
    return Panel(scene.key("knockout-layer"), text=_("Knock out {heads}", heads=name), caption=said)


def strongest_head(rows: list[dict]) -> dict:
    """The sweep's row of the head whose knock-out lowers the output's log-probability most."""
    return max(rows, key=lambda row: row["base_log_prob"] - row["log_prob"])


def head_suggestion(scene: Scene, rows: list[dict]) -> Panel:
    """The sweep's strongest head's knock-out (`text`: the app's button that knocks it out alone) and how far it
    lowers the output's log-probability."""
    best = strongest_head(rows)
    drop = best["base_log_prob"] - best["log_prob"]
    return Panel(
        scene.key("knockout-head"),
        text=_("Knock out {head} alone", head=head_labels(scene)[best["head"]]),
        caption=_("The single head whose knock-out lowers it most in the sweep: by {drop}.", drop=f"{drop:.2g}"),
    )


def embedding_change(scene: Scene, before: EncodeResult) -> Panel:
    """An encoder-only model's sentence embedding with every head (`before`) and without the sidebar's."""
    if not isinstance(scene.result, EncodeResult):
        raise ValueError("the sentence embedding is an encoder-only model's")
    return Panel(
        scene.key("knockout-embedding"),
        text=_("Cosine similarity of the sentence embedding with and without them"),
        metric=f"{cosine(before.embedding, scene.result.embedding):.4f}",
    )


def before_and_after(scene: Scene, before: TranslationResult, score: Scores) -> list[Panel]:
    """The output with every head (`before`) and with the sidebar's heads knocked out (the scene's result), its
    pieces' probabilities, and the original output scored with and without the heads (`score`: its pieces'
    log-probabilities under some switches)."""
    after = scene.result
    if not isinstance(after, TranslationResult):
        raise ValueError("a knock-out's before and after compare two outputs")
    outputs = side_by_side(
        scene.key("knockout-outputs"),
        [before.translation, after.translation],
        [_("All heads"), _("With the heads knocked out")],
    )
    title = _("Probability of each output piece, before and after the knock-out")
    said = _(
        "Each step's chosen piece. Log-probability of the output: {before} before, {after} after.",
        before=f"{before.log_prob:.2f}",
        after=f"{after.log_prob:.2f}",
    )
    probabilities = scene.figure(probability_comparison, before.steps, after.steps, scene.style, title)
    shown = [*outputs, Panel(scene.key("knockout-probs"), figure=probabilities, caption=said)]
    if not before.output_ids:
        return shown
    return [*shown, _fixed_output(scene, before, score)]


def _fixed_output(scene: Scene, before: TranslationResult, score: Scores) -> Panel:
    """The output made with every head (`before`), each piece scored after the same earlier pieces with and
    without the sidebar's heads."""
    knocked = score(scene.controls.interventions())
    unchanged = score(scene.controls.interventions(ablate=frozenset()))
    pieces = scene.bundle.tokenizer.pieces(before.output_ids)
    fixed = scene.figure(fixed_output_probabilities, pieces, unchanged, knocked, scene.style)
    said = _(
        "The original {output}, each piece scored after the same earlier pieces, with and without the "
        "heads: its log-probability goes from {before} to {after}.",
        output=output_noun(scene),
        before=f"{sum(unchanged):.2f}",
        after=f"{sum(knocked):.2f}",
    )
    return Panel(scene.key("knockout-fixed"), figure=fixed, caption=said)


def sweep_heading(scene: Scene) -> Panel:
    """The sweep's heading and what it does, over its button."""
    n = len(swept_heads(scene))
    if scene.encoder_only:
        said = n_(
            "Knocks out the {n} head (on top of the sidebar's switches) and measures how far the sentence "
            "embedding moves: 1 − its cosine similarity to the embedding with every head on.",
            "Knocks out each of the {n} heads in turn (on top of the sidebar's switches) and ranks them by how far "
            "the sentence embedding moves: 1 − its cosine similarity to the embedding with every head on.",
            n,
        )
    else:
        said = sentences(_sweep_does(scene, n), _sweep_again(scene, n))
    return Panel(scene.key("sweep-heading"), heading=_("Knock out each head in turn"), caption=said)


def _sweep_does(scene: Scene, n: int) -> str:
    """What the sweep of `n` heads measures, in words."""
    if scene.controls.ablate:
        return n_(
            "Knocks out the {n} head (on top of the sidebar's switches, so the heads already knocked out there are "
            "left out), scores the original output under its knock-out, and measures how much the output's "
            "log-probability falls.",
            "Knocks out each of the {n} heads in turn (on top of the sidebar's switches, so the heads already "
            "knocked out there are left out), scores the original output under each knock-out, and ranks heads by "
            "how much the output's log-probability falls.",
            n,
        )
    return n_(
        "Knocks out the {n} head (on top of the sidebar's switches), scores the original output under its "
        "knock-out, and measures how much the output's log-probability falls.",
        "Knocks out each of the {n} heads in turn (on top of the sidebar's switches), scores the original output "
        "under each knock-out, and ranks heads by how much the output's log-probability falls.",
        n,
    )


def _sweep_again(scene: Scene, n: int) -> str:
    """What the sweep makes again for the heads that matter most, in words."""
    if scene.decoder_only:
        if n <= RETRANSLATED:
            return _("It also continues the prompt again to show whether the continuation itself changes.")
        return n_(
            "It also continues the prompt again, for the {n} head with the largest drop, to show whether the "
            "continuation itself changes.",
            "It also continues the prompt again, for the {n} heads with the largest drops, to show whether the "
            "continuation itself changes.",
            RETRANSLATED,
        )
    if n <= RETRANSLATED:
        return _("It also translates again to show whether the output itself changes.")
    return n_(
        "It also translates again, for the {n} head with the largest drop, to show whether the output itself changes.",
        "It also translates again, for the {n} heads with the largest drops, to show whether the output "
        "itself changes.",
        RETRANSLATED,
    )


def sweep_frame(scene: Scene, rows: list[dict]) -> pd.DataFrame:
    """The sweep's rows (model.analysis.knockout.sweep), ranked by the drop of the original output's
    log-probability (columns: codes)."""
    return knockout_frame(rows, head_labels(scene), scene.output_noun)


def sweep_chart(scene: Scene, frame: pd.DataFrame) -> Panel:
    """The heads ranked by the drop their knock-out causes, the changed outputs marked."""
    word = scene.output_noun
    figure = scene.figure(knockout_chart, frame, scene.style, output=word)
    return Panel(scene.key("sweep-chart"), figure=figure, caption=knockout_caption(frame, output=word))


def flat_sweep(scene: Scene, frame: pd.DataFrame) -> bool:
    """Whether no single head matters much (every drop small, none knocked out yet): then the page offers the
    knock-outs that do."""
    return not scene.controls.ablate and not frame.empty and frame["log-prob drop"].max() < SMALL_DROP


def table(scene: Scene, key: str, frame: pd.DataFrame) -> Panel:
    """A knock-out table, its columns named for a person."""
    return Panel(scene.key(key), table=frame.rename(columns=column_names(scene)))


def embedding_sweep(scene: Scene, rows: list[dict]) -> list[Panel]:
    """An encoder-only model's heads ranked by how far their knock-out moves the sentence embedding, and the
    table of it (`rows`: model.analysis.knockout.embedding_sweep's)."""
    frame = embedding_knockout_frame(rows, head_labels(scene))
    figure = scene.figure(embedding_knockout_chart, frame, scene.style)
    said = _("The heads whose absence moves the embedding most.")
    return [Panel(scene.key("embedding-sweep"), figure=figure, caption=said), table(scene, "embedding-table", frame)]


def sweep(scene: Scene, rows: list[dict]) -> list[Panel]:
    """What the sweep found (`rows`: model.analysis.knockout.sweep's): the heads ranked by the drop their
    knock-out causes, and the table of it (the app offers its one-click knock-outs between the two when no head
    matters much)."""
    frame = sweep_frame(scene, rows)
    return [sweep_chart(scene, frame), table(scene, "sweep-table", frame)]
