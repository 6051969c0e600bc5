"""Training: a time-lapse of attention over the training snapshots, loss and validation curves, the
learning-rate schedule, the recipe comparison and the model card."""

import streamlit as st

from i18n import N_, _, number, sentences
from model.checkpoints.catalog import origin
from model.checkpoints.checkpoint import read_train_log
from ui.page.start import start
from ui.parts import recipes, timelapse
from views.markdown import md
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


def _role(kind: str, chat: bool) -> str:
    """What kind of model it is, for its card's first line (model.checkpoints.catalog.Origin.what)."""
    if kind == "encoder":
        return _("encoder-only chat model") if chat else _("encoder-only model")
    if kind == "decoder":
        return _("decoder-only chat model") if chat else _("decoder-only model")
    return _("encoder-decoder chat model") if chat else _("encoder-decoder model")


page = start(N_("Training"), needs_result=False)
style, bundle = page.style, page.bundle
came_from = None if bundle.capabilities.trained_here else origin(bundle.path, bundle.card)

st.subheader(_("Attention over training: a time-lapse"))
timelapse.show(page)

st.subheader(_("Curves of the training run"))
records = read_train_log(bundle.path)
if not records and not bundle.capabilities.trained_here:
    st.info(
        _(
            "{model} was trained elsewhere by {maker}: its checkpoint carries no training log, so there are no "
            "curves to draw here. Its card below says what it is and where it came from.",
            model=md(bundle.name),
            maker=md(came_from.maker),
        )
        if came_from and came_from.maker
        else _(
            "{model} was trained elsewhere: its checkpoint carries no training log, so there are no curves to draw "
            "here. Its card below says what it is and where it came from.",
            model=md(bundle.name),
        )
    )
elif not records:
    st.info(_("This checkpoint has no training log (train_log.jsonl), so there are no curves to draw."))
else:
    frame = log_frame(records)
    loss, lr, metrics = loss_curves(frame, style), lr_curve(frame, style), metric_curves(frame, style)
    if loss is not None:
        smoothing = bundle.card.get("training", {}).get("label_smoothing")
        validated = any("valid" in column for column in loss_columns(frame))
        page.show(
            loss,
            sentences(
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
            ),
            key="loss",
        )
    left, right = st.columns(2)
    with left:
        if lr is not None:
            page.show(
                lr,
                _(
                    "The paper's schedule: the learning rate grows linearly during warm-up, then decays with the "
                    "inverse square root of the step."
                ),
                key="lr",
            )
    with right:
        if metrics is not None:
            page.show(metrics, _("Scores on the validation set during training."), key="metrics")
    if loss is None and lr is None and metrics is None:
        st.info(_("The training log has no loss or learning-rate columns to draw."))
    with st.expander(_("The raw training log")):
        st.dataframe(frame, hide_index=True)

if bundle.capabilities.trained_here:  # a comparison this project runs on its own models
    st.subheader(_("The recipes, measured"))
    if not recipes.show(page):
        st.caption(
            _("This checkpoint ships no recipe comparison (`recipes/`): `python -m model.recipes` measures one.")
        )

st.subheader(_("Model card"))
n_params = sum(p.numel() for p in bundle.model.parameters())
cfg = bundle.config
card = bundle.card
if came_from is not None:  # what it is and where it came from, first; the file or folder here, last
    about = came_from.what(_role(bundle.kind, bundle.chat is not None))
    card = {**card, "about": about, "source": came_from.where()}
    st.markdown(
        _(
            "**{about}**.  \n{where}  \nOpened in this app's own engine through its {family} converter · "
            "Weights: {size} MB",
            about=md(about),
            where=md(came_from.where()),
            family=md(bundle.family),
            size=number(card.get("weights_bytes", 0) / 1e6, 1),
        )
    )
    stored = card.get("stored_as", "float32")
    st.caption(
        sentences(
            _(
                "Stored as {stored}, run here as float32 on the CPU: {size} MB of weights in memory.",
                stored=md(stored),
                size=number(card.get("memory_bytes", 0) / 1e6, 0),
            )
            if stored != "float32"
            else "",
            _("On this machine: {place}", place=md(came_from.location)),
        )
    )
cols = st.columns(4)
cols[0].metric(_("Parameters"), number(n_params))
cols[1].metric(
    _("Layers"),
    _("{n} encoder", n=cfg.n_encoder_layers)
    if bundle.capabilities.encoder_only
    else _("{n} decoder", n=cfg.n_decoder_layers)
    if bundle.capabilities.decoder_only
    else f"{cfg.n_encoder_layers} + {cfg.n_decoder_layers}",
)
cols[2].metric(_("d_model / heads"), f"{cfg.d_model} / {cfg.n_heads}")
cols[3].metric(_("Vocabulary"), number(cfg.vocab_size))
scores = scores_frame(bundle.card)
if not scores.empty:
    st.dataframe(scores, hide_index=True, width="stretch")
alignment = bundle.card.get("alignment", {}).get("per_layer_head")
if alignment:
    page.show(
        alignment_heatmap(alignment, style),
        _(
            "For each decoder layer and head: the share of French words whose most-attended English word (in the "
            "row that predicts the word) is the word the corpus generator aligned it to. High values mark heads "
            "that learned the alignment."
        ),
        key="alignment",
    )
with st.expander(_("Everything in the model card")):
    st.dataframe(card_frame(card, cfg.to_dict()), hide_index=True, width="stretch")
page.finish(globals())
