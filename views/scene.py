"""What a page's panels are drawn from: the model, its limits, the controls, the looks, the main result and the
page's own controls, with the prefix that keeps a second copy's keys apart (a Compare page's right side)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import plotly.graph_objects as go

from model import Bundle, EncodeResult, TranslationResult
from views.controls import Controls, Limits
from viz.margins import fitted
from viz.style import Style


def _drawn_here(draw: Callable[..., go.Figure], *args: Any, **kwargs: Any) -> go.Figure:
    """draw(*args, **kwargs), drawn now, its margins fitted to its words (viz/margins.py)."""
    return fitted(draw(*args, **kwargs))


def limits_of(bundle: Bundle) -> Limits:
    """What the model allows the controls to pick."""
    cfg = bundle.config
    return Limits(cfg.n_encoder_layers, cfg.n_decoder_layers, cfg.n_heads, cfg.max_len, cfg.cross_attention)


@dataclass(frozen=True)
class Scene:
    """One page's inputs: everything a view function reads, and nothing Streamlit holds."""

    bundle: Bundle
    controls: Controls
    result: TranslationResult | EncodeResult | None = None
    values: Mapping[str, Any] = field(default_factory=dict)  # the page's own controls (window=, colour=, view= …)
    prefix: str = ""  # put before every panel key: two copies of a part on one page never share a key
    notes: tuple[str, ...] = ()  # what the page says of its controls (a chat template that cannot wrap the text)
    # How a figure is drawn: directly (a notebook), or through the app's figures shared by every session
    # (ui.session.figures.shared), called as draw(viz_function, *args, **kwargs)
    draw: Callable[..., go.Figure] = _drawn_here

    @property
    def limits(self) -> Limits:
        """What the model allows the controls to pick."""
        return limits_of(self.bundle)

    @property
    def style(self) -> Style:
        """The figures' looks: large type in presentation mode."""
        return Style(presentation=self.controls.presentation)

    @property
    def encoder_only(self) -> bool:
        """A model without a decoder (BERT)."""
        return self.bundle.capabilities.encoder_only

    @property
    def decoder_only(self) -> bool:
        """A model without an encoder (GPT-2, SmolLM2): it continues the text."""
        return self.bundle.capabilities.decoder_only

    @property
    def chat(self) -> bool:
        """The text is read as a chat message (an instruct decoder with `chat=on`)."""
        return self.controls.chat

    @property
    def output_noun(self) -> str:
        """What the model makes of the text, a code (ui.page.start.Page.output_noun's): "answer" (to a chat
        message), "continuation" or "translation"."""
        return "answer" if self.chat else "continuation" if self.decoder_only else "translation"

    def figure(self, draw: Callable[..., go.Figure], *args: Any, **kwargs: Any) -> go.Figure:
        """A viz function's figure, drawn the scene's way (shared by every session in the app)."""
        return self.draw(draw, *args, **kwargs)

    def key(self, name: str) -> str:
        """A panel's or an element's key on the page."""
        return f"{self.prefix}{name}"

    def value(self, key: str, default: Any = None) -> Any:
        """A page's own control, by its URL name."""
        return self.values.get(key, default)
