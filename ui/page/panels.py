"""Panels (views.panels) drawn in a page: headings, words, figures and tables in order, a row's panels side by
side."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import groupby
from typing import Any, Protocol

import plotly.graph_objects as go
import streamlit as st

from ui.page.markup import big_text
from views.panels import Panel


class Page(Protocol):
    """What draws a figure on a page and keeps it for the page's download (ui.page.start.Page)."""

    def show(
        self, fig: go.Figure, caption: str = "", key: str | None = None, on_select: Any = "ignore", **kwargs: Any
    ) -> Any: ...


def _html(text: str) -> None:
    """HTML made by viz (every piece escaped there), drawn as it is."""
    st.markdown(text, unsafe_allow_html=True)


def _code(text: str) -> None:
    """Fixed-width text, as typed (no language to colour)."""
    st.code(text, language=None)


_TONES: dict[str, Callable[[str], Any]] = {
    "info": st.info,
    "warning": st.warning,
    "error": st.error,
    "html": _html,
    "code": _code,
    "plain": st.text,
}


def draw(page: Page, panels: Iterable[Panel]) -> dict[str, Any]:
    """Draw the panels in order (those sharing a `row` in columns) and return each figure's selection event by
    key (a chart that is not selectable gives None)."""
    events: dict[str, Any] = {}
    for row, group in groupby(panels, key=lambda panel: panel.row):
        together = list(group)
        if row and len(together) > 1:
            for column, panel in zip(st.columns([panel.width for panel in together]), together, strict=True):
                with column:
                    events[panel.key] = draw_one(page, panel)
        else:
            for panel in together:
                events[panel.key] = draw_one(page, panel)
    return events


def draw_one(page: Page, panel: Panel, on_select: Any = "ignore", **kwargs: Any) -> Any:
    """Draw one panel: its heading, words, figure (kept for the page's download) or table, and caption."""
    if panel.heading:
        st.subheader(panel.heading)
    if panel.large:
        _large(panel)
        return None
    if panel.metric:
        st.metric(panel.text, panel.metric)
    elif panel.text:
        _TONES.get(panel.tone, st.markdown)(panel.text)
    if panel.figure is not None:
        return page.show(panel.figure, panel.caption, key=panel.key, on_select=on_select, **kwargs)
    if panel.table is not None:
        st.dataframe(panel.table, key=panel.key, **kwargs)
    if panel.caption:
        st.caption(panel.caption)
    return None


def _large(panel: Panel) -> None:
    """Words said large (an output), their caption above them naming them."""
    if panel.caption:
        st.caption(panel.caption)
    big_text(panel.text, panel.large)
