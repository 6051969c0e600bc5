"""Training: a time-lapse of attention over the training snapshots, loss and validation curves, the
learning-rate schedule, the recipe comparison and the model card."""

import streamlit as st

from model.checkpoints.catalog import origin
from model.checkpoints.checkpoint import read_train_log
from ui.page.markup import md
from ui.page.start import start
from ui.parts import recipes, timelapse
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

page = start("Training", needs_result=False)
style, bundle = page.style, page.bundle
came_from = None if bundle.capabilities.trained_here else origin(bundle.path, bundle.card)

st.subheader("Attention over training: a time-lapse")
timelapse.show(page)

st.subheader("Curves of the training run")
records = read_train_log(bundle.path)
if not records and not bundle.capabilities.trained_here:
    maker = f" by {came_from.maker}" if came_from and came_from.maker else ""
    st.info(
        f"{md(bundle.name)} was trained elsewhere{md(maker)}: its checkpoint carries no training log, so there are "
        "no curves to draw here. Its card below says what it is and where it came from."
    )
elif not records:
    st.info("This checkpoint has no training log (train_log.jsonl), so there are no curves to draw.")
else:
    frame = log_frame(records)
    loss, lr, metrics = loss_curves(frame, style), lr_curve(frame, style), metric_curves(frame, style)
    if loss is not None:
        smoothing = bundle.card.get("training", {}).get("label_smoothing")
        validated = any("valid" in column for column in loss_columns(frame))
        page.show(
            loss,
            "Cross-entropy per target piece, which falls as the model learns"
            + (
                f", with label smoothing {smoothing}: the model is trained to leave that share of probability "
                "to other pieces, so the loss levels off above zero even when every translation is right"
                if smoothing
                else ""
            )
            + (
                ". The validation loss shows whether it generalizes to sentences it never trained on."
                if validated
                else ". How well it generalizes shows in the validation scores below."
            ),
            key="loss",
        )
    left, right = st.columns(2)
    with left:
        if lr is not None:
            page.show(
                lr,
                "The paper's schedule: the learning rate grows linearly during warm-up, then "
                "decays with the inverse square root of the step.",
                key="lr",
            )
    with right:
        if metrics is not None:
            page.show(metrics, "Scores on the validation set during training.", key="metrics")
    if loss is None and lr is None and metrics is None:
        st.info("The training log has no loss or learning-rate columns to draw.")
    with st.expander("The raw training log"):
        st.dataframe(frame, hide_index=True)

if bundle.capabilities.trained_here:  # a comparison this project runs on its own models
    st.subheader("The recipes, measured")
    if not recipes.show(page):
        st.caption("This checkpoint ships no recipe comparison (`recipes/`): `python -m model.recipes` measures one.")

st.subheader("Model card")
n_params = sum(p.numel() for p in bundle.model.parameters())
cfg = bundle.config
card = bundle.card
if came_from is not None:  # what it is and where it came from, first; the file or folder here, last
    stacks = {"encoder": "encoder-only", "decoder": "decoder-only"}.get(bundle.kind, bundle.kind)
    about = came_from.what(f"{stacks}{' chat' if bundle.chat is not None else ''} model")
    card = {**card, "about": about, "source": came_from.where()}
    st.markdown(
        f"**{md(about)}**.  \n{md(came_from.where())}  \n"
        f"Opened in this app's own engine through its {md(bundle.family)} converter · "
        f"Weights: {card.get('weights_bytes', 0) / 1e6:,.1f} MB"
    )
    stored = card.get("stored_as", "float32")
    st.caption(
        (
            f"Stored as {md(stored)}, run here as float32 on the CPU: "
            f"{card.get('memory_bytes', 0) / 1e6:,.0f} MB of weights in memory. "
            if stored != "float32"
            else ""
        )
        + f"On this machine: {md(came_from.location)}"
    )
cols = st.columns(4)
cols[0].metric("Parameters", f"{n_params:,}")
cols[1].metric(
    "Layers",
    f"{cfg.n_encoder_layers} encoder"
    if bundle.capabilities.encoder_only
    else f"{cfg.n_decoder_layers} decoder"
    if bundle.capabilities.decoder_only
    else f"{cfg.n_encoder_layers} + {cfg.n_decoder_layers}",
)
cols[2].metric("d_model / heads", f"{cfg.d_model} / {cfg.n_heads}")
cols[3].metric("Vocabulary", f"{cfg.vocab_size:,}")
scores = scores_frame(bundle.card)
if not scores.empty:
    st.dataframe(scores, hide_index=True, width="stretch")
alignment = bundle.card.get("alignment", {}).get("per_layer_head")
if alignment:
    page.show(
        alignment_heatmap(alignment, style),
        "For each decoder layer and head: the share of French words whose most-attended English word "
        "(in the row that predicts the word) is the word the corpus generator aligned it to. "
        "High values mark heads that learned the alignment.",
        key="alignment",
    )
with st.expander("Everything in the model card"):
    st.dataframe(card_frame(card, cfg.to_dict()), hide_index=True, width="stretch")
page.finish(globals())
