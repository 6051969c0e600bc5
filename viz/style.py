"""Looks shared by every figure: normal screen or presentation mode (projector)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import plotly.graph_objects as go
from plotly.basedatatypes import BasePlotlyType

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
# takes an object in a copy of the figure for a new one, and redraws the chart (see DATA_REVISION)
KEEPS_WIDTH = "keeps-width"


# Viridis as plotly's checks write a named scale out (its stops, to the last digit), for a figure put together
# without those checks (Style.drawing)
VIRIDIS = [[place, colour] for place, colour in go.Heatmap(colorscale="Viridis").colorscale]

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
    def diverging(self) -> str:
        """Diverging colour scale for signed values (colourblind-safe)."""
        return "RdBu_r"

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
    meta = fig.layout.meta
    labelled = fig.layout.xaxis.tickvals
    title_lines = re.sub(r"<(?!br)[^>]*>", "", fig.layout.title.text or "").split("<br>")
    # a second x axis that is not drawn over the first one (the model view's captions' is)
    side_by_side = any(axis.overlaying is None for axis in list(fig.select_xaxes())[1:])
    return (
        side_by_side
        or (labelled is not None and len(labelled) * LABEL_PX > PHONE_CELLS_PX)
        or max(len(html.unescape(line)) for line in title_lines) > PHONE_TITLE_CHARS
        or meta == KEEPS_WIDTH
    )


# Streamlit draws each chart twice: Plotly.react of the figure, then of a copy of it (its theme's pass, even with
# theme=None). Plotly redraws a copy from scratch when the copy's data arrays are new objects without a
# `datarevision` to say they are the same, and when its template is a new object: with the template written into
# the figure itself and a data revision, the second Plotly.react changes nothing and costs a millisecond. Every
# new figure is a new chart element (Streamlit names an element by its spec), so one revision serves them all.
DATA_REVISION = 1


def self_contained(fig: go.Figure) -> go.Figure:
    """`fig` with its template's looks written into its own layout and traces, where it sets none of its own (as
    plotly.js applies a template), the template taken away, and a data revision: a copy of it then redraws
    nothing in Plotly.react (DATA_REVISION). Returns `fig`; a figure without a template is left as it is."""
    template = fig.layout.template
    if template is None or template.layout is None:
        return fig
    looks = template.to_plotly_json()
    shown = looks.get("layout", {})
    layout = {name: value for name, value in fig.layout.to_plotly_json().items() if name != "template"}
    written = {
        name: _merged(value, layout.get(name)) for name, value in shown.items() if name not in ("xaxis", "yaxis")
    }
    gridless = _position_axes(fig)
    for kind in ("xaxis", "yaxis"):  # every axis of the figure: those its layout names, those its traces use
        named = {name for name in layout if re.fullmatch(f"{kind}\\d*", name)} | {kind}
        named |= {kind + trace[kind][1:] for trace in fig.data if kind in trace and trace[kind]}
        for name in named:
            own = layout.get(name)
            axis = _merged_axis(shown.get(kind, {}), own if isinstance(own, dict) else {})
            if name in gridless:  # see _position_axes
                for line, colour in (("showgrid", "gridcolor"), ("zeroline", "zerolinecolor")):
                    if isinstance(own, dict) and (line in own or colour in own):
                        continue
                    axis[line] = False
            written[name] = axis
    written["datarevision"] = DATA_REVISION
    # the template's values are plotly's own form already, and the figure's own were checked or written so: each
    # property is set as it is, not through update_layout's checks (7 ms a figure, more than the figure's drawing)
    with _checked(fig.layout, False):
        for name, value in written.items():
            fig.layout[name] = value
    with _checked(fig.layout, True):  # checked, plotly removes the template altogether (see _checked)
        fig.layout.template = None
    for trace in fig.data:
        for kind_looks in looks.get("data", {}).get(trace.type, [])[:1]:
            with _checked(trace, False):
                for name, value in kind_looks.items():
                    if name != "type":
                        trace[name] = _merged(value, _own(trace, name))
    return fig


def _own(holder: BasePlotlyType, name: str) -> object:
    """What a layout or trace sets of `name` itself, as plain data (None: nothing)."""
    value = holder[name]
    return value.to_plotly_json() if isinstance(value, BasePlotlyType) else value


@contextmanager
def _checked(holder: BasePlotlyType, checking: bool) -> Iterator[None]:
    """Within: `holder`'s properties set with plotly's checks or without them. Unchecked, a value is kept as it is
    given; checked, plotly writes it in its own form, and a template set to None is taken away altogether (not an
    empty one, which plotly.js takes in a copy for a new one, and redraws; not None, on which plotly's own to_html
    fails: a notebook's display, the page's download). plotly keeps this switch in a private attribute, the one
    its `_validate=False` sets."""
    was = holder._validate
    holder._validate = checking
    try:
        yield
    finally:
        holder._validate = was


def _merged_axis(looks: dict, own: dict) -> dict:
    """An axis's own settings over its template's."""
    merged = _merged(looks, own)
    assert isinstance(merged, dict)
    return merged


def _merged(looks: object, own: object) -> object:
    """A template's `looks` under a figure's `own` value: its own where set, the dicts' keys merged, the looks where
    nothing is set."""
    if own is None or own == {}:
        return looks
    if isinstance(looks, dict) and isinstance(own, dict):
        return {
            **{k: _merged(v, own.get(k)) for k, v in looks.items()},
            **{k: v for k, v in own.items() if k not in looks},
        }
    return own


# Traces whose position axis plotly.js draws without grid or zero lines unless the axis says otherwise
ORIENTED_TRACES = ("bar", "box", "histogram", "violin", "funnel", "waterfall")


def _position_axes(fig: go.Figure) -> set[str]:
    """The axes along which `fig`'s bars (boxes, histograms ...) stand. plotly.js draws grid and zero lines on them
    only when the axis sets a grid or zero line colour itself, not when its template does: with the template's
    colours written into the figure, those lines must be turned off there in so many words."""
    axes = set()
    for trace in fig.data:
        if trace.type not in ORIENTED_TRACES:
            continue
        given_x, given_y = trace["x"] is not None, trace["y"] is not None
        lying = (given_y and not given_x) if trace.type == "histogram" else (given_x and not given_y)
        horizontal = trace.orientation == "h" if trace.orientation is not None else lying
        kind, ref = ("yaxis", trace.yaxis) if horizontal else ("xaxis", trace.xaxis)
        axes.add(kind + (ref or "x")[1:])
    return axes
