"""The Attention page's attention sinks, drawn from views/sinks.py: the share of attention on the first piece, the
residual stream's size, and the what-if hiding the first piece, whose second run waits for a button on a large
model. Gemma 3's sliding windows are ui/parts/windows.py."""

from __future__ import annotations

import streamlit as st

from model.results import Trace, TranslationResult
from ui.page.ondemand import second_continuation
from ui.page.start import Page
from ui.parts import windows as sliding_windows
from views import sinks
from views.sinks import by_layer as by_layer


def section(page: Page, trace: Trace, stack: str, pieces: list[str]) -> None:
    """Sink shares per layer × head, the residual norms per position, a paragraph with this model's figures,
    and the what-if that hides the first piece from every later query."""
    page.panels(sinks.section_panels(page.scene, trace, stack, pieces))
    _hide_first(page)


def prompt_shares(page: Page, prompt: Trace, stack: str = "decoder") -> None:
    """While the continuation or translation is written (ui/page/stream.py): each head's share of attention on
    the first piece over the prompt alone (the `stack` "encoder": over the sentence); the rest follows."""
    panel = sinks.prompt_panel(page.scene, prompt, stack)
    page.draw(panel.figure, key=panel.key)
    st.caption(panel.caption)


def _hide_first(page: Page) -> None:
    """The what-if: the first piece hidden from every later query (each still sees itself)."""
    scene = page.scene
    page.panels([sinks.what_if_heading(scene)])
    if page.encoder_only:
        page.panels(sinks.cosine_panels(scene, page.encode(), page.encode(hide_first=True)))
        return
    # the page's own result is this very run (a long text's trace may be too large for the results cache to keep)
    result = page.result if isinstance(page.result, TranslationResult) else page.translate()
    label = sinks.what_if_label(scene)
    if not second_continuation(
        page.bundle, page.controls, len(result.output_ids), label, "continue-hide-first", hide_first=True
    ):
        return
    hidden = page.translate(hide_first=True, trace=False)
    page.panels(sinks.hidden_panels(scene, result.translation, hidden.translation))


def windows(page: Page, pieces: list[str]) -> None:
    """A sliding-window layer's mask beside a full-attention layer's, over the text (ui/parts/windows.py)."""
    sliding_windows.section(page, pieces)
