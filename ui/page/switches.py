"""The sidebar's switches (masks, positions, scales, the masked score, knocked-out heads), which of them
apply to the loaded model, and the banner under every page's title while any is away from the model as
trained."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from model import Bundle
from ui.page.binding import bind, not_applicable, stored_values
from ui.page.markup import md
from ui.session.urlstate import (
    Limits,
    all_heads,
    changed_switches,
    head_label,
    trained_switches,
)

NO_DECODER = "This model is encoder-only: it has no decoder."


def applies(bundle: Bundle) -> Callable[[str], bool]:
    """Which switches change this model (T5 never scales its scores, BERT has no causal mask, ...)."""
    cfg = bundle.config
    missing = {
        "causal": bundle.capabilities.encoder_only,
        "scale": not cfg.scale_scores,
        "embscale": not cfg.scale_embeddings,
    }
    return lambda key: not missing.get(key, False)


def _reset_switches() -> None:
    stored_values().update(trained_switches())


def switches_banner(bundle: Bundle) -> None:
    """Under the title of every page: what is switched away from the model as trained, and one button back."""
    said = changed_switches(stored_values(), applies(bundle))
    if not said:
        return
    text = "; ".join(said)
    with st.container(horizontal=True, vertical_alignment="center", wrap=False, key="switches-banner"):
        st.warning(
            f"**Not the model as trained:** {md(text[0].upper() + text[1:])}. Every page shows the model this way "
            "until the switches are reset.",
            icon=":material/tune:",
        )
        st.button("Reset switches", icon=":material/restart_alt:", key="reset-switches", on_click=_reset_switches)


_POSITIONAL_NOTES = {
    "learned": "Off: the learned position table is not added.",
    "relative": "Off: no relative-position bias on the scores (nothing positional is added to the embeddings).",
}


def _positional_help(positional: str) -> str:
    """What the positional switch turns off in this model."""
    if positional == "relative":
        return (
            "Off: the relative-position bias is dropped. This model adds nothing positional to its embeddings; "
            "every self-attention score gets a learned bias for the distance between query and key instead."
        )
    if positional == "learned":
        return "Off: the learned position table (one trained vector per position) is no longer added to the embeddings."
    return "Add position information (the sinusoid table) to the embeddings."


def switch_controls(bundle: Bundle, limits: Limits) -> None:
    """The sidebar's switches, each greyed out with the reason where it does not apply to the model."""
    heads = all_heads(limits)
    by_label = {head_label(h): h for h in heads}
    cfg = bundle.config
    decoder_only = bundle.capabilities.decoder_only
    st.markdown("### Switches")
    switchable = applies(bundle)
    if not switchable("causal"):
        not_applicable(
            "Causal mask",
            f"{NO_DECODER} Its encoder reads every piece at once, so there is no causal mask to switch.",
        )
    else:
        bind("causal", st.toggle, label="Causal mask", help="Decoder self-attention may not look at later positions.")
    if decoder_only:
        bind(
            "padding",
            st.toggle,
            label="Padding mask",
            help="No query looks at padding positions. A decoder-only model has no source sentence to pad, "
            "and one prompt has no padding at all: padding appears only when prompts share a batch "
            "(the Masks and heads lab), after each text, where the causal mask already hides it.",
        )
        st.caption("No source sentence to pad: it acts only on a batch of prompts (Masks and heads lab).")
    else:
        bind("padding", st.toggle, label="Padding mask", help="No query looks at <pad> positions.")
    bind("pe", st.toggle, label="Positional encoding", help=_positional_help(cfg.positional))
    if cfg.positional in _POSITIONAL_NOTES:
        st.caption(_POSITIONAL_NOTES[cfg.positional])
    if switchable("scale"):
        bind(
            "scale",
            st.toggle,
            label="Scale scores by 1/√d_k",
            help="Divide every query-key dot product by √d_k before the softmax (off: the raw QKᵀ).",
        )
    else:
        not_applicable(
            "Scale scores by 1/√d_k",
            f"{bundle.name} never divides its scores by √d_k (T5 folds that scale into the "
            "initialisation of its query weights), so there is no scaling to switch off.",
        )
    if switchable("embscale"):
        bind(
            "embscale",
            st.toggle,
            label="Scale embeddings by √d_model",
            help="Multiply token embeddings by √d_model before the positions are added.",
        )
    else:
        not_applicable(
            "Scale embeddings by √d_model",
            f"{bundle.name} never scales its token embeddings"
            + (
                ": it adds token, position and token-type vectors and normalizes the sum with a LayerNorm instead."
                if bundle.config.embed_norm
                else "."
            ),
        )
    bind(
        "fill",
        st.radio,
        label="Masked scores set to",
        options=["-inf", "-1e9"],
        horizontal=True,
        format_func=lambda v: "−∞" if v == "-inf" else "−10⁹",
        help="What a mask writes into the scores it hides before the softmax: −∞ gives exactly 0 weight; "
        "−10⁹ gives 0 in every row that keeps a real key, and a uniform row where every key is masked.",
    )
    bind(
        "ablate",
        st.multiselect,
        label="Knock out heads",
        options=list(by_label),
        to_widget=lambda hs: [head_label(h) for h in hs],
        from_widget=lambda labels: tuple(sorted(by_label[x] for x in labels)),
        placeholder="Choose heads to zero",
        help="A knocked-out head's output is set to zero in every step.",
    )
