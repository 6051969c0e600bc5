"""What a page shows, as data: panels (a figure, a table or words, with a title, a caption and a key) and a
page's panels in order, which a Streamlit page draws one by one and a notebook displays as HTML."""

from __future__ import annotations

import html
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd
import plotly.graph_objects as go

from i18n import _

if TYPE_CHECKING:
    from pandas.io.formats.style import Styler


@dataclass(frozen=True)
class Panel:
    """One thing a page shows: a plotly figure, a pandas table or words (markdown), with the words said above it
    (`heading`), under it (`caption`) and a key unique on the page. Panels that share a `row` are drawn side by
    side."""

    key: str
    figure: go.Figure | None = None
    table: pd.DataFrame | Styler | None = None  # a frame, or a styled one (viz.explain.lens_table)
    text: str = ""  # markdown: the panel's words, when it has no figure or table, or words above one
    heading: str = ""  # a subheader above the panel
    caption: str = ""
    row: str = ""  # panels with the same non-empty row sit in columns of one row
    # for words: "info", "warning", "error", "html" (HTML made by viz, drawn as it is), "code" (fixed-width, as
    # typed), "plain" (text as it is, no markdown) or "" (markdown)
    tone: str = ""
    width: float = 1.0  # its share of its row's width (a row of 3 and 2 gives it three fifths)
    # a number said large (a metric), `text` naming it
    metric: str = ""
    # words said large, this many rem high (an output), their `caption` naming them above them
    large: float = 0.0

    def __post_init__(self) -> None:
        if not self.key:
            raise ValueError("a panel needs a key")
        if self.figure is not None and self.table is not None:
            raise ValueError(f"panel {self.key!r}: a figure or a table, not both")

    @property
    def title(self) -> str:
        """The figure's own title, else the heading."""
        if self.figure is not None and self.figure.layout.title.text:
            return str(self.figure.layout.title.text)
        return self.heading

    def _repr_html_(self) -> str:
        return panel_html(self)


def words(key: str, text: str, tone: str = "") -> Panel:
    """A panel of words alone (markdown)."""
    return Panel(key, text=text, tone=tone)


def side_by_side(key: str, texts: Sequence[str], captions: Sequence[str] = ("", ""), size: float = 1.3) -> list[Panel]:
    """An experiment's outputs side by side (its before and after), said large (`size` rem high), each named by
    its caption above it; an empty one says so (ui.page.markup.two_translations' look)."""
    return [
        Panel(f"{key}-{side}", text=text or _("(empty)"), caption=caption, row=key, large=size)
        for side, (text, caption) in enumerate(zip(texts, captions, strict=True))
    ]


@dataclass
class PageView:
    """A page as a notebook gets it: the engine's result the panels were drawn from, and the panels in the page's
    order. In Jupyter it displays itself as the page's pictures and words."""

    page: str  # the page's URL path
    result: Any
    panels: list[Panel] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the page says of the controls (a bad URL value …)

    @property
    def figures(self) -> list[go.Figure]:
        """The plotly figures alone, in order."""
        return [panel.figure for panel in self.panels if panel.figure is not None]

    @property
    def titles(self) -> list[str]:
        """Every figure's title, in order."""
        return [str(figure.layout.title.text or "") for figure in self.figures]

    def __getitem__(self, key: str) -> Panel:
        for panel in self.panels:
            if panel.key == key:
                return panel
        raise KeyError(f"no panel {key!r} on {self.page}: {', '.join(p.key for p in self.panels)}")

    def __iter__(self) -> Iterator[Panel]:
        return iter(self.panels)

    def __len__(self) -> int:
        return len(self.panels)

    def _repr_html_(self) -> str:
        notes = "".join(f"<p style='color:#9a6700'>{html.escape(note)}</p>" for note in self.notes)
        first = True
        parts = []
        for panel in self.panels:
            parts.append(panel_html(panel, include_plotlyjs=first))
            first = first and panel.figure is None
        return notes + "".join(parts)


def panel_html(panel: Panel, include_plotlyjs: bool | str = True) -> str:
    """A panel as HTML for a notebook: its heading, words, figure or table, and caption."""
    parts = []
    if panel.heading:
        parts.append(f"<h3>{html.escape(panel.heading)}</h3>")
    if panel.large:
        return "".join(parts) + _large_html(panel)
    if panel.metric:
        parts.append(f"<p><small>{html.escape(panel.text)}</small><br><b style='font-size:1.8rem'>")
        parts.append(f"{html.escape(panel.metric)}</b></p>")
    elif panel.text and panel.tone == "html":
        parts.append(panel.text)
    elif panel.text and panel.tone in ("code", "plain"):
        parts.append(f"<pre>{html.escape(panel.text)}</pre>")
    elif panel.text:
        colour = {"info": "#0b5394", "warning": "#9a6700", "error": "#b00020"}.get(panel.tone, "inherit")
        parts.append(f"<p style='color:{colour}'>{html.escape(panel.text)}</p>")
    if panel.figure is not None:
        parts.append(panel.figure.to_html(full_html=False, include_plotlyjs=include_plotlyjs))
    if panel.table is not None:
        parts.append(panel.table.to_html())
    if panel.caption:
        parts.append(f"<p style='color:#666'><small>{html.escape(panel.caption)}</small></p>")
    return "".join(parts)


def _large_html(panel: Panel) -> str:
    """Words said large, their caption above them."""
    named = f"<p style='color:#666'><small>{html.escape(panel.caption)}</small></p>" if panel.caption else ""
    return named + f"<div style='font-size:{panel.large}rem;font-weight:600'>{html.escape(panel.text)}</div>"
