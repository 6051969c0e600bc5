"""Looks shared by every figure: normal screen or presentation mode (projector)."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

import plotly.graph_objects as go

from .looks import own_data

# Plotly's stock templates are large, and copying them dominated figure build time: each Style
# has its own small template instead, which also carries the fonts, so that a figure needs no
# update pass over its axes (plotly validates every property it sets, and that is slow).
_AXIS = dict(
    gridcolor="#e5e5e5",
    linecolor="#444444",
    zerolinecolor="#cccccc",
    ticks="outside",
    tickcolor="#444444",
    showline=True,
    automargin=True,
    exponentformat="power",  # 5×10⁻⁴, never plotly's SI prefixes ("500μ", which no student reads as 0.0005)
)
_COLOURBAR = dict(exponentformat="power")
# Latin first, then fonts with CJK glyphs (Chinese words and pieces): the browser takes each glyph from the first
# font that has it
FONT_FAMILY = (
    "Inter, Helvetica, Arial, 'Noto Sans CJK SC', 'Noto Sans SC', 'Source Han Sans SC', 'PingFang SC', "
    "'Microsoft YaHei', sans-serif"
)
PROJECTOR_PICTURE_PX = 380
# The narrowest width at which panels side by side, or a drawing with words at fixed places, read whole: on a
# narrower screen (a phone) such a figure keeps this width and scrolls sideways alone (ui.page.markup)
WIDE_FIGURE_PX = 760
# A 390 px phone's chart has about 200 px for its cells (the pieces beside it and the colour bar aside); a
# piece's label, at the ticks' type turned on its side, takes about 14 px: more labels than fit keep
# WIDE_FIGURE_PX too
PHONE_CELLS_PX = 200
LABEL_PX = 14
# A title is one line: at a phone's 12 px type (ui.page.markup) about 55 characters fit its 358 px
PHONE_TITLE_CHARS = 55
RIGHT_LEGEND = dict(orientation="v", yanchor="top", y=1, x=1.01, xanchor="left")
# A figure's layout.meta when it keeps WIDE_FIGURE_PX on a phone (keeps_its_width). A word, not an object: plotly.js
# takes an object in a copy of the figure for a new one, and redraws the chart (see viz.looks.DATA_REVISION)
KEEPS_WIDTH = "keeps-width"


# Viridis and reversed RdBu as plotly's checks write a named scale out (its stops, to the last digit), for a figure
# put together without those checks (Style.drawing)
VIRIDIS = [[place, colour] for place, colour in go.Heatmap(colorscale="Viridis").colorscale]
RDBU_R = [[place, colour] for place, colour in go.Heatmap(colorscale="RdBu_r").colorscale]

# Inferno with its first colour nudged: Streamlit's frontend rewrites the colours #000001..#0000NN
# in a chart's JSON (its theme placeholders), which turned Inferno's "#000004" lavender.
INFERNO = [
    [i / 9, c]
    for i, c in enumerate(
        ["#010006", "#1b0c41", "#4a0c6b", "#781c6d", "#a52c60", "#cf4446", "#ed6925", "#fb9b06", "#f7d13d", "#fcffa4"]
    )
]


@dataclass(frozen=True)
class Style:
    """Fonts and colour scales; presentation mode is large and high-contrast."""

    presentation: bool = False

    @property
    def font(self) -> int:
        """Base font size in pixels."""
        return 20 if self.presentation else 13

    @property
    def tick(self) -> int:
        """Tick label size in pixels."""
        return 17 if self.presentation else 11

    @property
    def title(self) -> int:
        """Figure title size in pixels."""
        return 26 if self.presentation else 16

    @property
    def weights(self) -> list[list]:
        """Sequential colour scale for values in [0, 1] (colourblind-safe), as its [place, colour] stops."""
        return INFERNO if self.presentation else VIRIDIS

    @property
    def diverging(self) -> list[list]:
        """Diverging colour scale for signed values (colourblind-safe), as its [place, colour] stops."""
        return RDBU_R

    @property
    def highlight(self) -> str:
        """Outline colour drawn over heatmaps."""
        return "#00e5ff" if self.presentation else "#ff2d95"

    @property
    def line_width(self) -> float:
        """Width of curves and outlines."""
        return 4.0 if self.presentation else 2.0

    @property
    def picture_px(self) -> int | None:
        """How tall a page's first picture may be, title and labels included: on a projector what fits under the
        page's title and the step's controls at 1280×720 (the first screen); None on a screen, which scrolls."""
        return PROJECTOR_PICTURE_PX if self.presentation else None

    @property
    def palette(self) -> list[str]:
        """Okabe-Ito colours, distinguishable with every common colour vision deficiency."""
        return ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]

    @property
    def template(self) -> dict:
        """Plotly template: white background, this style's fonts and colours on every axis, and numbers
        in plain or scientific notation on axes and colour bars."""
        axis = dict(_AXIS, tickfont=dict(size=self.tick))
        return dict(
            data=dict(
                heatmap=[dict(type="heatmap", colorbar=_COLOURBAR)], contour=[dict(type="contour", colorbar=_COLOURBAR)]
            ),
            layout=dict(
                coloraxis=dict(colorbar=_COLOURBAR),
                paper_bgcolor="white",
                plot_bgcolor="white",
                xaxis=axis,
                yaxis=axis,
                font=dict(family=FONT_FAMILY, size=self.font, color="#111111"),
                colorway=self.palette,
                # plotly's hover labels take Arial, not the layout's font (annotations and titles do): the same
                # family here, for the CJK glyphs
                hoverlabel=dict(font=dict(family=FONT_FAMILY, size=self.font)),
            ),
        )

    def figure(self, **layout: object) -> go.Figure:
        """An empty figure on this style's template, with `layout` set."""
        return go.Figure(layout=dict(template=self.template, **layout))

    def drawing(
        self, traces: list[dict], title: str | None = None, height: int | None = None, **layout: object
    ) -> go.Figure:
        """A figure on this style's template made of `traces` (each a dict with its "type") and `layout`, with the
        margins, title and height `apply` would set, put together at once without plotly's check of each property:
        a fifth of the time for a page's large heatmaps. So every property must be written as those checks would
        leave it: a title as {"text": ...}, a colour scale as its stops (tests/views/test_every_page.py holds every
        page's figures to that form). Later updates of the figure are not checked either."""
        whole: dict = dict(template=self.template, **self._frame(title, height))
        for name, value in layout.items():
            if value is None or value == []:  # as plotly's checks leave them: unset
                continue
            whole[name] = {**whole[name], **value} if name == "margin" and isinstance(value, dict) else value
        return go.Figure(dict(data=traces, layout=whole), _validate=False)

    def apply(self, fig: go.Figure, title: str | None = None, height: int | None = None) -> go.Figure:
        """Set the margins and (optionally) the title and height of `fig`, in one update."""
        fig.update_layout(self._frame(title, height))
        return fig

    def _frame(self, title: str | None, height: int | None) -> dict:
        """The layout's margins, and its title and height when given."""
        layout: dict = dict(margin=dict(l=10, r=10, t=60 if title else 30, b=10))
        if title is not None:
            layout["title"] = dict(text=title, font=dict(size=self.title), x=0, xanchor="left")
        if height is not None:
            layout["height"] = height
        return layout


def keeps_its_width(fig: go.Figure) -> bool:
    """Whether `fig` is laid out WIDE_FIGURE_PX wide at least: panels side by side, more labelled columns than
    a phone's width holds, a title longer than a phone's line, or a drawing that says so in its layout's meta
    (KEEPS_WIDTH)."""
    _, layout = own_data(fig)  # read as plain data: a page asks this of every figure it draws
    labelled = (layout.get("xaxis") or {}).get("tickvals")
    title = (layout.get("title") or {}).get("text") or ""
    title_lines = re.sub(r"<(?!br)[^>]*>", "", title).split("<br>")
    # a second x axis that is not drawn over the first one (the model view's captions' is)
    side_by_side = any(
        re.fullmatch(r"xaxis\d+", name) and (axis or {}).get("overlaying") is None for name, axis in layout.items()
    )
    return (
        side_by_side
        or (labelled is not None and len(labelled) * LABEL_PX > PHONE_CELLS_PX)
        or max(len(html.unescape(line)) for line in title_lines) > PHONE_TITLE_CHARS
        or layout.get("meta") == KEEPS_WIDTH
    )
