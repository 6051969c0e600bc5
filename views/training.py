"""Training as panels: the time-lapse of attention over the training snapshots (views/timelapse.py), the loss and
validation curves and the learning-rate schedule of the run's log, the recipe comparison and the model card."""

from __future__ import annotations

import pandas as pd

from i18n import _, number, sentences
from model.checkpoints.catalog import Origin, origin
from model.checkpoints.checkpoint import read_train_log
from views import recipes as recipe_comparison
from views import timelapse
from views.markdown import md
from views.panels import Panel, words
from views.scene import Scene
from viz.training import (
    alignment_heatmap,
    card_frame,
    log_frame,
    loss_columns,
    loss_curves,
    lr_curve,
    metric_curves,
    scores_frame,
)

FIELDS = [timelapse.SNAPSHOT]
NEEDS_RESULT = False  # the page runs the sentence through the snapshots only, and its card needs no run
FOLDED = ("training-log", "card-all")  # the tables a page folds away under their heading (an expander)


def came_from(scene: Scene) -> Origin | None:
    """What a model trained elsewhere is and where it came from (None for this project's own)."""
    bundle = scene.bundle
    return None if bundle.capabilities.trained_here else origin(bundle.path, bundle.card)


def timelapse_heading(scene: Scene) -> Panel:
    """The time-lapse's heading."""
    return Panel(scene.key("timelapse"), heading=_("Attention over training: a time-lapse"))


def curves(scene: Scene, records: list[dict]) -> list[Panel]:
    """The training log's curves (loss, learning rate, validation scores) and the log itself, or why there are
    none."""
    heading = Panel(scene.key("curves"), heading=_("Curves of the training run"))
    if not records:
        return [heading, words(scene.key("curves-none"), _no_log(scene), "info")]
    frame = log_frame(records)
    loss = loss_curves(frame, scene.style)
    lr = lr_curve(frame, scene.style)
    metrics = metric_curves(frame, scene.style)
    shown = [heading]
    if loss is not None:
        shown.append(Panel(scene.key("loss"), loss, caption=_loss_caption(scene, frame)))
    schedule = _(
        "The paper's schedule: the learning rate grows linearly during warm-up, then decays with the "
        "inverse square root of the step."
    )
    if lr is not None or metrics is not None:  # side by side; an empty panel keeps its column
        shown.append(Panel(scene.key("lr"), lr, caption=schedule if lr is not None else "", row="schedule"))
        validated = _("Scores on the validation set during training.") if metrics is not None else ""
        shown.append(Panel(scene.key("metrics"), metrics, caption=validated, row="schedule"))
    if loss is None and lr is None and metrics is None:
        shown.append(
            words(scene.key("curves-none"), _("The training log has no loss or learning-rate columns to draw."), "info")
        )
    return shown + [Panel(scene.key("training-log"), table=frame, heading=_("The raw training log"))]


def _no_log(scene: Scene) -> str:
    """Why there are no curves: a model trained elsewhere carries no log, or this checkpoint has none."""
    if scene.bundle.capabilities.trained_here:
        return _("This checkpoint has no training log (train_log.jsonl), so there are no curves to draw.")
    came = came_from(scene)
    if came and came.maker:
        return _(
            "{model} was trained elsewhere by {maker}: its checkpoint carries no training log, so there are no "
            "curves to draw here. Its card below says what it is and where it came from.",
            model=md(scene.bundle.name),
            maker=md(came.maker),
        )
    return _(
        "{model} was trained elsewhere: its checkpoint carries no training log, so there are no curves to draw "
        "here. Its card below says what it is and where it came from.",
        model=md(scene.bundle.name),
    )


def _loss_caption(scene: Scene, frame: pd.DataFrame) -> str:
    """What the loss is (with the run's label smoothing), and where its generalization shows."""
    smoothing = scene.bundle.card.get("training", {}).get("label_smoothing")
    validated = any("valid" in column for column in loss_columns(frame))
    return sentences(
        _(
            "Cross-entropy per target piece, which falls as the model learns, with label smoothing "
            "{smoothing}: the model is trained to leave that share of probability to other pieces, so the "
            "loss levels off above zero even when every translation is right.",
            smoothing=smoothing,
        )
        if smoothing
        else _("Cross-entropy per target piece, which falls as the model learns."),
        _("The validation loss shows whether it generalizes to sentences it never trained on.")
        if validated
        else _("How well it generalizes shows in the validation scores below."),
    )


def recipes(scene: Scene, comparison: list[Panel]) -> list[Panel]:
    """The recipe comparison (`comparison`, views.recipes) of a model trained here, or how to measure one; nothing
    for a model trained elsewhere."""
    if not scene.bundle.capabilities.trained_here:  # a comparison this project runs on its own models
        return []
    heading = Panel(scene.key("recipes"), heading=_("The recipes, measured"))
    if comparison:
        return [heading, *comparison]
    how = _("This checkpoint ships no recipe comparison (`recipes/`): `python -m model.recipes` measures one.")
    return [heading, Panel(scene.key("recipes-none"), caption=how)]


def _role(kind: str, chat: bool) -> str:
    """What kind of model it is, for its card's first line (model.checkpoints.catalog.Origin.what)."""
    if kind == "encoder":
        return _("encoder-only chat model") if chat else _("encoder-only model")
    if kind == "decoder":
        return _("decoder-only chat model") if chat else _("decoder-only model")
    return _("encoder-decoder chat model") if chat else _("encoder-decoder model")


def card(scene: Scene) -> list[Panel]:
    """The model card: what a model trained elsewhere is and where it came from, its sizes, its held-out scores,
    the heads that learned the alignment, and every field of the card."""
    bundle, cfg = scene.bundle, scene.bundle.config
    shown = [Panel(scene.key("card"), heading=_("Model card"))]
    fields = bundle.card
    came = came_from(scene)
    if came is not None:  # what it is and where it came from, first; the file or folder here, last
        about = came.what(_role(bundle.kind, bundle.chat is not None))
        fields = {**fields, "about": about, "source": came.where()}
        shown.append(_origin(scene, came, about))
    shown += _sizes(scene)
    scores = scores_frame(bundle.card)
    if not scores.empty:
        shown.append(Panel(scene.key("card-scores"), table=scores))
    alignment = bundle.card.get("alignment", {}).get("per_layer_head")
    if alignment:
        agreeing = _(
            "For each decoder layer and head: the share of French words whose most-attended English word (in the "
            "row that predicts the word) is the word the corpus generator aligned it to. High values mark heads "
            "that learned the alignment."
        )
        shown.append(Panel(scene.key("alignment"), alignment_heatmap(alignment, scene.style), caption=agreeing))
    every = card_frame(fields, cfg.to_dict())
    return shown + [Panel(scene.key("card-all"), table=every, heading=_("Everything in the model card"))]


def _origin(scene: Scene, came: Origin, about: str) -> Panel:
    """What a model trained elsewhere is, where it came from and how it is run here."""
    card = scene.bundle.card
    what = _(
        "**{about}**.  \n{where}  \nOpened in this app's own engine through its {family} converter · "
        "Weights: {size} MB",
        about=md(about),
        where=md(came.where()),
        family=md(scene.bundle.family),
        size=number(card.get("weights_bytes", 0) / 1e6, 1),
    )
    stored = card.get("stored_as", "float32")
    run_as = sentences(
        _(
            "Stored as {stored}, run here as float32 on the CPU: {size} MB of weights in memory.",
            stored=md(stored),
            size=number(card.get("memory_bytes", 0) / 1e6, 0),
        )
        if stored != "float32"
        else "",
        _("On this machine: {place}", place=md(came.location)),
    )
    return Panel(scene.key("card-origin"), text=what, caption=run_as)


def _sizes(scene: Scene) -> list[Panel]:
    """The model's sizes side by side, each said large: parameters, layers, width and heads, vocabulary."""
    bundle, cfg = scene.bundle, scene.bundle.config
    if bundle.capabilities.encoder_only:
        layers = _("{n} encoder", n=cfg.n_encoder_layers)
    elif bundle.capabilities.decoder_only:
        layers = _("{n} decoder", n=cfg.n_decoder_layers)
    else:
        layers = f"{cfg.n_encoder_layers} + {cfg.n_decoder_layers}"
    sizes = {
        "parameters": (_("Parameters"), number(sum(p.numel() for p in bundle.model.parameters()))),
        "layers": (_("Layers"), layers),
        "width": (_("d_model / heads"), f"{cfg.d_model} / {cfg.n_heads}"),
        "vocabulary": (_("Vocabulary"), number(cfg.vocab_size)),
    }
    return [
        Panel(scene.key(f"card-{name}"), text=label, metric=value, row="card-sizes")
        for name, (label, value) in sizes.items()
    ]


def panels(scene: Scene) -> list[Panel]:
    """The page as a notebook gets it: the time-lapse at the URL's snapshot, the curves, the recipes and the
    card."""
    return [
        timelapse_heading(scene),
        *timelapse.panels(scene),
        *curves(scene, read_train_log(scene.bundle.path)),
        *recipes(scene, recipe_comparison.panels(scene)),
        *card(scene),
    ]
