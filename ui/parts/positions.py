"""The Positional encoding page's table of absolute positions (the formula's, or a learned one): its title, and
its picture while a translation or a continuation is written, which needs no run of the model."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from i18n import _, n_
from model.engine.config import ModelConfig
from model.results import Trace
from ui.page.start import Page
from ui.parts import rotary
from ui.session.figures import shared
from viz.positional import encoding_heatmap

SHOWN = 128  # positions drawn: a sentence uses few, and 512 rows would only slow the page down


def table_title(cfg: ModelConfig) -> str:
    """The table's title: a learned table or the formula's, all its positions or the first SHOWN."""
    learned, n, d = cfg.positional == "learned", cfg.max_len, cfg.d_model
    if n > SHOWN:
        if learned:
            return _("Learned position table (first {shown} of {n} positions × {d})", shown=SHOWN, n=n, d=d)
        return _("Encoding matrix (first {shown} of {n} positions × {d})", shown=SHOWN, n=n, d=d)
    if learned:
        return n_("Learned position table ({n} position × {d})", "Learned position table ({n} positions × {d})", n, d=d)
    return n_("Encoding matrix ({n} position × {d})", "Encoding matrix ({n} positions × {d})", n, d=d)


def table_figure(page: Page) -> go.Figure:
    """The table as a heatmap, shared by every session."""
    cfg = page.bundle.config
    table = page.bundle.position_table()
    assert table is not None, "a model whose positions are a formula or a learned table has one"
    return shared(encoding_heatmap, table[:SHOWN], page.style, table_title(cfg), cfg.positional == "learned")


def prompt_view(page: Page, prompt: Trace) -> None:
    """While the translation or continuation is written (ui/page/stream.py): the table the model adds to its
    embeddings, or for a rotary model how it turns the prompt's queries and keys (ui.parts.rotary); nothing for
    T5's bias, which the finished result's trace holds."""
    positional = page.bundle.config.positional
    if positional == "rotary":
        rotary.prompt_view(page, prompt)
        return
    if positional == "relative":
        return
    st.subheader(_("What each position adds"))
    page.draw(table_figure(page), key="prompt-pe-table")
    st.caption(
        _(
            "Each row is the vector added to the embedding at one position, whatever the text. The rest of the page "
            "follows when the model has written its output."
        )
    )
