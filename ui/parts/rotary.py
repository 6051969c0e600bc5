"""The Positional encoding page's part for a model with rotary positions (RoPE): its controls (the base
what-if, the key piece and the shift), the panels of views.rotary between them, and the continuation under
the base what-if beside the positions switch."""

from __future__ import annotations

import streamlit as st

from i18n import _
from model.results import Trace
from ui.page.binding import bind, page_value, set_value
from ui.page.markup import two_translations
from ui.page.ondemand import second_continuation
from ui.page.start import Page
from views import rotary as rope
from views.rotary import BASE, FACTORS, SHIFT, default_key, factor_label, key_field, key_labels


def section(page: Page, trace: Trace, pieces: list[str]) -> float:
    """Draw the rotary part of the page from `trace` (a run with the rotation on, as trained); return the
    base factor the person chose (1.0: as trained)."""
    scene = page.scene
    if page.controls.presentation:  # on a projector the picture comes first: what it means folds into the notes
        with page.notes:
            page.panels([rope.how_it_turns(scene, page_value(BASE))])
        page.panels([rope.frequency_panel(scene, page_value(BASE)), rope.frequency_heading(scene)])
        factor = _base_factor()
    else:
        page.panels([rope.how_it_turns(scene, page_value(BASE)), rope.frequency_heading(scene)])
        factor = _base_factor()
        page.panels([rope.frequency_panel(scene, factor)])
    page.panels([rope.angles_panel(scene, factor, pieces)])
    _relative(page, trace, pieces, factor)
    return factor


def _base_factor() -> float:
    """The base what-if's slider (`rbase=`): every base multiplied by the factor picked."""
    return bind("rbase", st.select_slider, label=_("Base × (what-if)"), options=list(FACTORS), format_func=factor_label)


def prompt_view(page: Page, prompt: Trace) -> None:
    """While a rotary model's continuation is written (ui/page/stream.py): how it turns its queries and keys,
    and the angle of each of the prompt's positions; the rest of the page follows when the continuation is
    whole. Nothing for a model that does not turn them."""
    if page.bundle.config.positional != "rotary":
        return
    scene, factor = page.scene, page_value(BASE)
    page.panels([rope.how_it_turns(scene, factor)])
    angles = rope.prompt_angles(scene, factor, prompt.tgt_pieces)
    st.subheader(angles.heading)
    page.draw(angles.figure, key=angles.key)  # not kept for the page's download: the finished page draws its own
    st.caption(angles.caption)


def _relative(page: Page, trace: Trace, pieces: list[str], factor: float) -> None:
    """The relative property: the text's last piece as the query and a key piece picked, their score, and
    the same with both moved by k positions."""
    scene = page.scene
    page.panels(rope.relative_heading(scene, len(pieces)))
    if len(pieces) < 2:
        return
    key, shift = _key_and_shift(pieces)
    demo = rope.relative_demo(scene, trace, len(pieces), key, shift, factor)
    for column, (label, value, change) in zip(st.columns(3), rope.relative_metrics(demo), strict=True):
        if change:
            column.metric(label, value, delta=change, delta_color="off")
        else:
            column.metric(label, value)
    page.panels(rope.relative_panels(scene, demo, pieces, factor))


def _key_and_shift(pieces: list[str]) -> tuple[int, int]:
    """The key piece n (the query is the last piece) and the shift k of both, side by side."""
    length, labels = len(pieces), key_labels(pieces)
    if page_value(key_field(length)) >= length:
        set_value("rkey", default_key(length))
    page_value(SHIFT)
    left, right = st.columns(2)
    with left:
        key = bind(
            "rkey",
            st.select_slider,
            label=_("Key piece n (the query is the last piece)"),
            options=list(range(length - 1)),
            format_func=lambda i: labels.get(i, str(i)),
        )
    with right:
        shift = bind("shift", st.slider, label=_("Move both by k positions"), min_value=0, max_value=4096, step=1)
    return key, shift


def what_if(page: Page, factor: float, steps: int, with_text: str) -> None:
    """The continuation with every base × `factor`, beside the one as trained (a button at a real size)."""
    if factor == 1.0 or not page.decoder_only:
        return
    times = f"{factor:g}"
    st.markdown(_("**What-if: every rotary base × {factor}.**", factor=times))
    if second_continuation(
        page.bundle,
        page.controls,
        steps,
        _("Continue with the base × {factor}", factor=times),
        "continue-rope-base",
        rotary_base_factor=factor,
    ):
        two_translations(
            (_("Answer as trained") if page.output_noun == "answer" else _("Continuation as trained"), with_text),
            (_("Base × {factor}", factor=times), page.translate(rotary_base_factor=factor, trace=False).translation),
            1.5,
        )
