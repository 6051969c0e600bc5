"""The Training page's time-lapse as panels: the sentence through the weights kept at one training snapshot (its
cross-attention, every layer and head and the focused head large), that snapshot's scores, and what it all is."""

from __future__ import annotations

from i18n import _, n_, sentences
from model import Trace, TranslationResult, load_bundle
from views.fields import Field, int_in
from views.markdown import md
from views.panels import Panel, side_by_side, words
from views.runs import main_result
from views.scene import Scene
from viz.attention import attention_map, model_view
from viz.training import snapshot_curves

# On a projector the layers × heads view is at most this tall, so that it is whole in a 720-px first screen
PROJECTED_VIEW_PX = 400
SNAPSHOT = Field("snapshot", 10_000, int_in(1, 10_000))  # which snapshot, counted from 1; past the last: the last


def missing(scene: Scene) -> Panel | None:
    """Why this model has no time-lapse (trained elsewhere, no snapshots kept, no cross-attention); None when it
    has one."""
    bundle = scene.bundle
    if not bundle.capabilities.trained_here:
        why = _(
            "{model} was trained elsewhere: its checkpoint keeps no snapshots of its training, so there is no "
            "time-lapse to play. Models trained here can keep them.",
            model=bundle.name,
        )
    elif not bundle.snapshots:
        why = _(
            "This checkpoint keeps no training snapshots, so there is no time-lapse to play. "
            "`python -m model.train --snapshots 8` keeps eight, and `python -m model.evaluate` scores them."
        )
    elif scene.encoder_only:  # never for this project's own models today; said rather than drawn wrong
        why = _("The time-lapse follows cross-attention, which an encoder-only model does not have.")
    else:
        return None
    return words(scene.key("timelapse-none"), why, "info")


def _best(scene: Scene) -> dict | None:
    """The decoder head the card names as agreeing most with the word alignment."""
    return scene.bundle.card.get("alignment", {}).get("best")


def focus(scene: Scene) -> tuple[int, int]:
    """The decoder (layer, head) enlarged: the one the card names best, unless the sidebar picks another than its
    first layer and head."""
    cfg, ctl, best = scene.bundle.config, scene.controls, _best(scene)
    if best and (ctl.layer, ctl.head) == (0, 0) and best["layer"] < cfg.n_decoder_layers:
        return best["layer"], best["head"]
    return min(ctl.layer, cfg.n_decoder_layers - 1), ctl.head


def about(scene: Scene) -> Panel:
    """What the time-lapse shows: the snapshots kept, and which head is enlarged and why."""
    steps, best = scene.bundle.snapshots, _best(scene)
    layer, head = focus(scene)
    said = sentences(
        n_(
            "This model kept its weights at {n} step of its training, spaced evenly on a log scale from step "
            "{first:,} to the end (step {last:,}). Move the slider, or press play, to run the sentence in the "
            "sidebar through each of them: the translation, and the cross-attention of the final translation fed "
            "through that snapshot, so that every frame has the same rows and columns.",
            "This model kept its weights at {n} steps of its training, spaced evenly on a log scale from step "
            "{first:,} to the end (step {last:,}). Move the slider, or press play, to run the sentence in the "
            "sidebar through each of them: the translation, and the cross-attention of the final translation fed "
            "through that snapshot, so that every frame has the same rows and columns.",
            len(steps),
            first=steps[0],
            last=steps[-1],
        ),
        _(
            "Watch decoder layer L{layer} head H{head}, enlarged on the right: the head that ends up agreeing most "
            "with the word alignment ({agreement:.1f}%).",
            layer=best["layer"] + 1,
            head=best["head"] + 1,
            agreement=best["agreement"],
        )
        if best and (layer, head) == (best["layer"], best["head"])
        else _(
            "Enlarged on the right: decoder layer L{layer} head H{head}, picked in the sidebar.",
            layer=layer + 1,
            head=head + 1,
        ),
    )
    return words(scene.key("timelapse-about"), said)


def pictures(scene: Scene, trace: Trace, step: int) -> list[Panel]:
    """A snapshot's cross-attention over the final translation (`trace`, teacher-forced through the snapshot):
    every decoder layer and head, and the focused head large beside it."""
    layer, head = focus(scene)
    patterns = [trace.pattern("decoder", "cross", i) for i in range(scene.bundle.config.n_decoder_layers)]
    every = scene.figure(
        model_view,
        patterns,
        trace.tgt_pieces,
        trace.src_pieces,
        scene.style,
        _("Cross-attention at step {step:,}: layers × heads", step=step),
        (layer, head),
        most_px=PROJECTED_VIEW_PX if scene.controls.presentation else None,
    )
    one = scene.figure(
        attention_map,
        patterns[layer][head],
        trace.tgt_pieces,
        trace.src_pieces,
        scene.style,
        _("L{layer} H{head} at step {step:,}", layer=layer + 1, head=head + 1, step=step),
    )
    every_caption = _(
        "Every decoder layer (rows) and head (columns). Early in training the weights are spread out or "
        "all on one piece; a head that has learned the alignment shows a bright diagonal-like path from "
        "each French piece to the English word it translates."
    )
    one_caption = _("The head named above, large (pick another layer and head in the sidebar).")
    return [
        Panel(scene.key("snapshot-view"), every, caption=every_caption, row="snapshot", width=3),
        Panel(scene.key("snapshot-head"), one, caption=one_caption, row="snapshot", width=2),
    ]


def outputs(scene: Scene, step: int, text: str, final: str) -> list[Panel]:
    """The snapshot's translation beside the final weights'."""
    named = (_("At step {step:,}", step=step), _("After training"))
    return side_by_side(scene.key("snapshot-outputs"), (text, final), named)


def scores(scene: Scene, step: int) -> list[Panel]:
    """What the card measured of a snapshot (on the test sentences), and every snapshot's scores with this step
    marked."""
    card = scene.bundle.card
    shown: list[Panel] = []
    row: dict = next((row for row in card.get("snapshots", []) if row.get("step") == step), {})
    if row:
        measured = dict(step=step, exact=row["exact_match"], bleu=row["bleu"], alignment=row["alignment"])
        tested = card.get("test", {}).get("n")
        said = (
            _(
                "At step {step:,}, on the {n} test sentences: exact match {exact:.1f}%, BLEU {bleu:.1f}; the best "
                "head agrees with the word alignment {alignment:.1f}%.",
                n=tested,
                **measured,
            )
            if tested is not None
            else _(
                "At step {step:,}, on the held-out test sentences: exact match {exact:.1f}%, BLEU {bleu:.1f}; the "
                "best head agrees with the word alignment {alignment:.1f}%.",
                **measured,
            )
        )
        shown.append(Panel(scene.key("snapshot-scores"), caption=said))
    return shown + [_curves(scene, step)]


def _curves(scene: Scene, step: int) -> Panel:
    """The test scores of every snapshot, the step on show marked (or why there are none)."""
    curves = scene.figure(snapshot_curves, scene.bundle.card.get("snapshots", []), scene.style, step)
    if curves is None:
        unscored = _(
            "The snapshots have not been scored yet: python -m model.evaluate measures each one (test "
            "exact match, BLEU and the best head's agreement with the alignment)."
        )
        return Panel(scene.key("snapshot-curves"), caption=md(unscored))
    said = _(
        "Measured on every snapshot by python -m model.evaluate, over the whole test split; the dotted "
        "line is the step on show."
    )
    return Panel(scene.key("snapshot-curves"), curves, caption=said)


def shown_snapshot(scene: Scene) -> int:
    """The index of the snapshot the URL's `snapshot=` shows (counted from 1 there; past the last: the last)."""
    return min(max(scene.value(SNAPSHOT.key, SNAPSHOT.default), 1), len(scene.bundle.snapshots)) - 1


def panels(scene: Scene) -> list[Panel]:
    """The time-lapse paused at the URL's snapshot (a notebook): the pictures, the scores and what it is; or why
    this model has none."""
    none = missing(scene)
    if none is not None:
        return [none]
    step = scene.bundle.snapshots[shown_snapshot(scene)]
    final = main_result(scene.bundle, scene.controls)
    assert isinstance(final, TranslationResult)  # an encoder-only model has no time-lapse (missing says why)
    ctl, snapshot = scene.controls, load_bundle(scene.bundle.path, snapshot=step)
    trace = snapshot.teacher_forced(ctl.sentence, final.output_ids, ctl.interventions())
    text = snapshot.translation(ctl.sentence, ctl.interventions(), ctl.options())
    shown = pictures(scene, trace, step) + outputs(scene, step, text, final.translation) + scores(scene, step)
    return shown + [about(scene)]
