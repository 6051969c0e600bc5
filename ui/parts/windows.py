"""The Attention page's sliding windows (Gemma 3), drawn from views/windows.py: a sliding-window layer's mask beside
a full-attention layer's, over the text."""

from __future__ import annotations

from ui.page.start import Page
from views import windows


def section(page: Page, pieces: list[str]) -> None:
    """A sliding-window layer's mask beside a full-attention layer's, over the text (a model with sliding windows)."""
    page.panels(windows.panels(page.scene, pieces))
