"""The sidebar's switches (masks, positions, scales, the masked score, knocked-out heads), which of them
apply to the loaded model, and the banner under every page's title while any is away from the model as
trained."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from i18n import N_, _, language, sentences
from model import Bundle
from ui.page.binding import bind, not_applicable, stored_values
from views.controls import (
    Limits,
    all_heads,
    changed_switches,
    head_label,
    trained_switches,
)
from views.markdown import md

NO_DECODER = N_("This model is encoder-only: it has no decoder.")


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
    # each phrase may hold a comma: English sets them apart with "; ", Chinese with its own "；"
    text = ("；" if language() == "zh" else "; ").join(said)
    with st.container(horizontal=True, vertical_alignment="center", wrap=False, key="switches-banner"):
        st.warning(
            _(
                "**Not the model as trained:** {changes}. Every page shows the model this way until the switches "
                "are reset.",
                changes=md(text[0].upper() + text[1:]),
            ),
            icon=":material/tune:",
        )
        st.button(_("Reset switches"), icon=":material/restart_alt:", key="reset-switches", on_click=_reset_switches)


_POSITIONAL_NOTES = {
    "learned": N_("Off: the learned position table is not added."),
    "relative": N_("Off: no relative-position bias on the scores (nothing positional is added to the embeddings)."),
}


def _positional_help(positional: str) -> str:
    """What the positional switch turns off in this model."""
    if positional == "relative":
        return _(
            "Off: the relative-position bias is dropped. This model adds nothing positional to its embeddings; "
            "every self-attention score gets a learned bias for the distance between query and key instead."
        )
    if positional == "learned":
        return _(
            "Off: the learned position table (one trained vector per position) is no longer added to the embeddings."
        )
    return _("Add position information (the sinusoid table) to the embeddings.")


def switch_controls(bundle: Bundle, limits: Limits) -> None:
    """The sidebar's switches, each greyed out with the reason where it does not apply to the model."""
    heads = all_heads(limits)
    by_label = {head_label(h): h for h in heads}
    cfg = bundle.config
    decoder_only = bundle.capabilities.decoder_only
    st.markdown(_("### Switches"))
    switchable = applies(bundle)
    if not switchable("causal"):
        not_applicable(
            N_("Causal mask"),
            sentences(_(NO_DECODER), _("Its encoder reads every piece at once, so there is no causal mask to switch.")),
        )
    else:
        bind(
            "causal",
            st.toggle,
            label=_("Causal mask"),
            help=_("Decoder self-attention may not look at later positions."),
        )
    _padding_control(decoder_only)
    bind("pe", st.toggle, label=_("Positional encoding"), help=_positional_help(cfg.positional))
    if cfg.positional in _POSITIONAL_NOTES:
        st.caption(_(_POSITIONAL_NOTES[cfg.positional]))
    _scale_controls(bundle, switchable)
    bind(
        "fill",
        st.radio,
        label=_("Masked scores set to"),
        options=["-inf", "-1e9"],
        horizontal=True,
        format_func=lambda v: "−∞" if v == "-inf" else "−10⁹",
        help=_(
            "What a mask writes into the scores it hides before the softmax: −∞ gives exactly 0 weight; "
            "−10⁹ gives 0 in every row that keeps a real key, and a uniform row where every key is masked."
        ),
    )
    bind(
        "ablate",
        st.multiselect,
        label=_("Knock out heads"),
        options=list(by_label),
        to_widget=lambda hs: [head_label(h) for h in hs],
        from_widget=lambda labels: tuple(sorted(by_label[x] for x in labels)),
        placeholder=_("Choose heads to zero"),
        help=_("A knocked-out head's output is set to zero in every step."),
    )


def _padding_control(decoder_only: bool) -> None:
    """The padding mask's switch, and for a decoder-only model where padding appears at all."""
    if decoder_only:
        bind(
            "padding",
            st.toggle,
            label=_("Padding mask"),
            help=_(
                "No query looks at padding positions. A decoder-only model has no source sentence to pad, "
                "and one prompt has no padding at all: padding appears only when prompts share a batch "
                "(the Masks and heads lab), after each text, where the causal mask already hides it."
            ),
        )
        st.caption(_("No source sentence to pad: it acts only on a batch of prompts (Masks and heads lab)."))
    else:
        bind("padding", st.toggle, label=_("Padding mask"), help=_("No query looks at <pad> positions."))


def _scale_controls(bundle: Bundle, switchable: Callable[[str], bool]) -> None:
    """The two scales' switches, each greyed out with the reason where the model has no such scale."""
    if switchable("scale"):
        bind(
            "scale",
            st.toggle,
            label=_("Scale scores by 1/√d_k"),
            help=_("Divide every query-key dot product by √d_k before the softmax (off: the raw QKᵀ)."),
        )
    else:
        not_applicable(
            N_("Scale scores by 1/√d_k"),
            _(
                "{model} never divides its scores by √d_k (T5 folds that scale into the initialisation of its query "
                "weights), so there is no scaling to switch off.",
                model=bundle.name,
            ),
        )
    if switchable("embscale"):
        bind(
            "embscale",
            st.toggle,
            label=_("Scale embeddings by √d_model"),
            help=_("Multiply token embeddings by √d_model before the positions are added."),
        )
    else:
        not_applicable(
            N_("Scale embeddings by √d_model"),
            _(
                "{model} never scales its token embeddings: it adds token, position and token-type vectors and "
                "normalizes the sum with a LayerNorm instead.",
                model=bundle.name,
            )
            if bundle.config.embed_norm
            else _("{model} never scales its token embeddings.", model=bundle.name),
        )
