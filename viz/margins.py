"""The room a figure's words take at its edges, worked out before a browser draws it.

Plotly's automargin measures every tick label, colour bar and legend in the browser and, when they do not fit
the margins asked for, draws the whole figure again with wider ones. On a real model's Attention page that
second drawing was most of chromium's work (bench/browser_work.py). `fit_margins` asks for margins that
already fit: the labels' widths come from the figures' font as chromium draws it (glyph_widths.json, measured by
bench/glyph_widths.py). Automargin stays on, so a wider font on someone's machine costs that second drawing
again, never a cut label. A fitted figure carries its template's looks itself (viz.looks.self_contained), so
that the copy Streamlit draws a second time redraws nothing either.
"""

from __future__ import annotations

import html
import json
import math
import re
import unicodedata
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TypeVar

import numpy as np
import plotly.graph_objects as go

from .looks import own_data, self_contained, set_unchecked
from .style import KEEPS_WIDTH, WIDE_FIGURE_PX

T = TypeVar("T")
GLYPHS_FILE = Path(__file__).with_name("glyph_widths.json")
# What bench/glyph_widths.py measures: Latin, Greek, punctuation, sub- and superscripts, arrows, maths,
# blocks and shapes (▁ ↵ ‖ · ×); a character outside them is a CJK one (one em) or taken as a wide letter
MEASURED_RANGES = ((32, 126), (160, 383), (900, 975), (8192, 8351), (8592, 8959), (9472, 9727))
WIDE_EM = 1.0
OTHER_EM = 0.7
LINE_EM = 1.3  # a label's height, in font sizes
# A chart's width on a 1440 px screen: a colour bar's room grows with the plot's width (plotly puts it 2% of that
# past the plot), so a narrower chart (a phone's 760 px panels) gets a few px more than it needs, and a wider one
# (a 1280 px projector's) up to COLOURBAR_SPARE_PX less
CHART_PX = 980
PHONE_CHART_PX = 358  # a chart on a 390 px phone (one that keeps viz.style.WIDE_FIGURE_PX aside)
TYPICAL_SIDES_PX = 130  # a map's side margins, its labels and colour bar: what its plot leaves of its width
LEAST_PLOT_PX = 64  # the plot automargin leaves at least (plotly's minreducedwidth and minreducedheight)
PLOTLY_MARGINS = {"l": 80, "r": 80, "t": 100, "b": 80}  # plotly's margins where a figure names none
SPARE_PX = 6  # rounding: plotly's own measure of a label differs from the sum of its characters by a pixel or two
# Where plotly puts a tick label: past the tick (its length, 5 px by default when ticks are outside) and a gap
TICK_GAP_PX = 3
AXIS_PAD_PX = {"x": 8, "y": 5}  # what Streamlit's plotly adds beyond an axis's labels, below and beside (measured)
TICK_GAP_EM = 0.5
TITLE_GAP_PX = 10
COLOURBAR_PAD_PX = 10  # plotly's colour bar xpad, on each side
# A colour bar's title is drawn a quarter larger than the layout's font; its x is a share of the plot's width,
# about this share of the figure's
COLOURBAR_TITLE_SCALE = 1.25
PLOT_SHARE = 0.9
TURNED_TITLE_EM = 1.8  # a title turned beside a colour bar's labels, with its gaps (measured in the app)
COLOURBAR_SPARE_PX = 6  # on a 1280 px projector the bars took up to 5 px more than the sum
LEGEND_ITEM_PX = 54  # a legend item's line or box, the gaps around it and the legend's padding, beside the words
UNLISTED_TRACES = ("heatmap", "contour", "histogram2d", "image")  # traces plotly keeps out of a legend unless asked
_FITTED: weakref.WeakValueDictionary[int, go.Figure] = weakref.WeakValueDictionary()  # by id: a figure has no hash
_TAG = re.compile(r"<[^>]*>")
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)


@cache
def _glyphs() -> dict[str, int]:
    return json.loads(GLYPHS_FILE.read_text())


def _em(character: str) -> float:
    width = _glyphs().get(character)
    if width is not None:
        return width / 1000
    return WIDE_EM if unicodedata.east_asian_width(character) in "WF" else OTHER_EM


def text_px(text: str, size: float) -> float:
    """How wide `text` (plotly's markup: <br> lines, tags, entities) is drawn at `size` px: its longest line."""
    lines = _BREAK.split(str(text))
    return max(sum(_em(c) for c in html.unescape(_TAG.sub("", line))) for line in lines) * size


def lines_of(text: str) -> int:
    """How many lines plotly draws `text` on."""
    return len(_BREAK.split(str(text)))


@dataclass(frozen=True)
class Margins:
    """Room at a figure's four edges, in px."""

    l: float = 0.0  # noqa: E741 (plotly's own name)
    r: float = 0.0
    t: float = 0.0
    b: float = 0.0

    def widest(self, other: Margins) -> Margins:
        return Margins(max(self.l, other.l), max(self.r, other.r), max(self.t, other.t), max(self.b, other.b))


def _nice_step(span: float) -> float:
    raw = span / 6
    power = 10 ** math.floor(math.log10(raw))
    return next(step * power for step in (1, 2, 5, 10) if step * power >= raw)


def _number_labels(values: Iterable[float]) -> list[str]:
    """The labels plotly would put along a numeric axis over `values` (nice steps, as many decimals as a step)."""
    try:
        array = np.asarray([v for v in values if v is not None], dtype=float)
    except (TypeError, ValueError):  # dates or objects: plotly's own labels, which automargin fits
        return []
    array = array[np.isfinite(array)]
    if array.size == 0:
        return ["0.0"]
    low, high = float(array.min()), float(array.max())
    if high == low:
        return [f"{low:.3g}"]
    if max(abs(low), abs(high)) >= 1e5 or max(abs(low), abs(high)) < 1e-3:
        return ["−5×10⁻⁵"]  # exponentformat="power": a mantissa, ×10 and a raised exponent
    step = _nice_step(high - low)
    decimals = max(0, -math.floor(math.log10(step)))
    ticks = np.arange(math.floor(low / step), math.ceil(high / step) + 1) * step
    return [f"{tick:.{decimals}f}".replace("-", "−") for tick in ticks]


def _flat(values: object) -> list:
    if values is None:
        return []
    array = np.asarray(values, dtype=object)
    return list(array.ravel())


@cache
def _on_axes(kind: str) -> bool:
    """Whether a trace of `kind` ("heatmap", "table") is drawn on x and y axes."""
    return "xaxis" in go.Figure(data=[dict(type=kind)]).data[0]


def _axis_values(traces: list[dict], axis_id: str) -> list:
    """The coordinates of the traces drawn on axis `axis_id` ("x", "x2", "y3")."""
    letter = axis_id[0]
    found: list = []
    for trace in traces:
        if not _on_axes(trace["type"]) or (trace.get(f"{letter}axis") or letter) != axis_id:
            continue
        values = trace.get(letter)
        if values is None and trace["type"] == "heatmap" and trace.get("z") is not None:
            z = np.asarray(trace["z"])
            count = z.shape[1] if letter == "x" else z.shape[0]
            values = list(range(count))
        found.extend(_flat(values))
    return found


def _labels(traces: list[dict], axis_id: str, axis: dict) -> list[str]:
    if axis.get("ticktext") is not None:
        return [str(text) for text in axis["ticktext"]]
    values = _axis_values(traces, axis_id)
    if axis.get("range") is not None:
        values = values + list(axis["range"])
    if any(isinstance(v, str) for v in values) or axis.get("type") == "category":
        return [str(v) for v in values]
    return _number_labels(values)


def _template_layout(layout: dict) -> dict:
    return (layout.get("template") or {}).get("layout") or {}


def _size(font: dict | None, default: float) -> float:
    return float((font or {}).get("size") or default)


def _axis_extent(
    traces: list[dict], axis_id: str, axis: dict, base_font: float, lengths_px: tuple[float, float]
) -> float:
    """How far an axis's tick labels and title reach out from its line, in px (an x axis `lengths_px` long on a
    wide screen and on a phone)."""
    if axis.get("visible", True) is False:
        return 0.0
    extent = AXIS_PAD_PX[axis_id[0]] + (float(axis.get("ticklen", 5)) if axis.get("ticks", "") == "outside" else 0.0)
    if axis.get("showticklabels", True):
        labels = [label for label in _labels(traces, axis_id, axis) if label != ""]
        size = _size(axis.get("tickfont"), base_font)
        if labels:
            widths = [text_px(label, size) for label in labels]
            height = max(lines_of(label) for label in labels) * size * LINE_EM
            angle = axis.get("tickangle", "auto")
            if axis_id[0] == "y":
                across = max(widths) if angle in ("auto", 0, None) else _turned(max(widths), height, angle, True)
            else:
                # left to itself plotly turns the labels by the room it finds: the most a phone's chart turns them
                auto = angle in ("auto", None)
                angles = [_auto_angle(widths, height, length) for length in lengths_px] if auto else [angle]
                across = max(_turned(max(widths), height, turn, False) for turn in angles)
            extent += across + max(TICK_GAP_PX, size * TICK_GAP_EM)
    title = (axis.get("title") or {}).get("text")
    if title:
        size = _size((axis.get("title") or {}).get("font"), base_font)
        extent += TITLE_GAP_PX + lines_of(title) * size * LINE_EM
    return extent


def _turned(width: float, height: float, angle: float, vertical_axis: bool) -> float:
    """How far a label `width` wide and `height` high, turned by `angle` degrees, reaches across its axis."""
    radians = math.radians(float(angle))
    if vertical_axis:
        return abs(width * math.cos(radians)) + abs(height * math.sin(radians))
    return abs(width * math.sin(radians)) + abs(height * math.cos(radians))


def _auto_angle(widths: list[float], height: float, length_px: float) -> float:
    """The angle plotly turns an x axis's labels by when left to itself: flat if they fit side by side, else 30°,
    else upright."""
    room = length_px / max(1, len(widths))
    if max(widths) + 4 < room:
        return 0
    if height / math.sin(math.radians(30)) < room:
        return 30
    return 90


def _domain(axis: dict) -> tuple[float, float]:
    low, high = axis.get("domain") or (0.0, 1.0)
    return float(low), float(high)


def _axes(traces: list[dict], layout: dict) -> dict[str, dict]:
    """Every axis of the figure (its `layout` as a dict) by its id ("x", "y2"), its own settings over the
    template's."""
    template = {letter: _template_layout(layout).get(f"{letter}axis") or {} for letter in "xy"}
    found: dict[str, dict] = {}
    for name, settings in layout.items():
        match = re.fullmatch(r"([xy])axis(\d*)", name)
        if match and isinstance(settings, dict):
            found[match[1] + match[2]] = {**template[match[1]], **settings}
    for trace in traces:  # an axis a trace draws on that the layout never named
        for letter in "xy":
            if _on_axes(trace["type"]):
                found.setdefault(trace.get(f"{letter}axis") or letter, template[letter])
    return found


def _base_font(layout: dict) -> float:
    size = (layout.get("font") or {}).get("size") or (_template_layout(layout).get("font") or {}).get("size")
    return float(size or 12)


def _axis_margins(traces: list[dict], layout: dict, width_px: float) -> Margins:
    axes = _axes(traces, layout)
    base = _base_font(layout)
    found = Margins()
    for axis_id, axis in axes.items():
        if axis.get("overlaying") or (axis.get("matches") and not axis.get("showticklabels", True)):
            continue
        letter = axis_id[0]
        other = axes.get(axis.get("anchor") or ("y" if letter == "x" else "x"), {})
        low, high = _domain(other)
        span = _domain(axis)[1] - _domain(axis)[0]
        lengths = ((width_px - TYPICAL_SIDES_PX) * span, (PHONE_CHART_PX - TYPICAL_SIDES_PX) * span)
        extent = _axis_extent(traces, axis_id, axis, base, lengths)
        side = axis.get("side") or ("bottom" if letter == "x" else "left")
        if side in ("left", "bottom") and low <= 0.01:
            found = found.widest(Margins(l=extent) if letter == "y" else Margins(b=extent))
        elif side in ("right", "top") and high >= 0.99:
            found = found.widest(Margins(r=extent) if letter == "y" else Margins(t=extent))
    return found


def _colour_bars(traces: list[dict], layout: dict) -> list[tuple[dict, list]]:
    """Each colour bar drawn (its settings) with the values its scale spans."""
    bars: list[tuple[dict, list]] = []
    for name, settings in layout.items():
        if re.fullmatch(r"coloraxis\d*", name) and isinstance(settings, dict) and settings.get("showscale", True):
            ends = [settings.get("cmin"), settings.get("cmax")]
            if None in ends:
                ends = [v for trace in traces if trace.get("coloraxis") == name for v in _z_range(trace)]
            bars.append((settings.get("colorbar") or {}, ends))
    for trace in traces:
        if trace["type"] not in ("heatmap", "contour", "histogram2d"):
            continue
        if trace.get("showscale") is not False and not trace.get("coloraxis"):
            ends = [trace.get("zmin"), trace.get("zmax")]
            bars.append((trace.get("colorbar") or {}, ends if None not in ends else _z_range(trace)))
    return bars


def _z_range(trace: dict) -> list[float]:
    if trace.get("z") is None:
        return []
    z = np.asarray(trace["z"], dtype=float)
    z = z[np.isfinite(z)]
    return [float(z.min()), float(z.max())] if z.size else []


def _colour_bar_margin(traces: list[dict], layout: dict, width_px: float) -> float:
    """The room at the right the colour bars take (plotly's default: just right of the plot)."""
    base = _base_font(layout)
    room = 0.0
    for bar, values in _colour_bars(traces, layout):
        if bar.get("orientation", "v") != "v" or bar.get("xref") == "container":
            continue
        size = _size(bar.get("tickfont"), base)
        if bar.get("tickvals") is not None and bar.get("ticktext") is not None:
            labels = [str(t) for t in bar["ticktext"]]
        else:
            labels = _number_labels(values)
        body = bar.get("thickness", 30) + max((text_px(label, size) for label in labels), default=0.0) + 1
        title = bar.get("title") or {}
        if title.get("text"):
            title_size = _size(title.get("font"), base)
            if title.get("side") == "right":  # turned, beside the labels
                body += title_size * TURNED_TITLE_EM
            else:  # above the bar
                body = max(body, text_px(title["text"], title_size) * COLOURBAR_TITLE_SCALE)
        outer = body + 2 * bar.get("xpad", COLOURBAR_PAD_PX) + COLOURBAR_SPARE_PX
        x = bar.get("x", 1.02)
        anchor = bar.get("xanchor", "left")
        reach = outer if anchor == "left" else outer / 2 if anchor == "center" else 0
        room = max(room, reach + max(0.0, x - 1) * width_px * PLOT_SHARE)
    return room


def _legend_margins(traces: list[dict], layout: dict, width_px: float) -> Margins:
    """The room a legend outside the plot takes (a vertical one at the right, a flat one above or below)."""
    listed = [
        trace
        for trace in traces
        if trace.get("showlegend") is True or (trace.get("showlegend") is None and trace["type"] not in UNLISTED_TRACES)
    ]
    shown = layout.get("showlegend")
    if not listed or shown is False or (shown is None and len(listed) < 2):  # plotly lists one trace alone: none
        return Margins()
    names = [trace.get("name") or f"trace {index}" for index, trace in enumerate(listed)]
    legend = layout.get("legend") or {}
    size = _size(legend.get("font"), _base_font(layout))
    widest = max(text_px(name, size) for name in names) + LEGEND_ITEM_PX
    y = legend.get("y")
    if legend.get("orientation") == "h":
        rows = max(lines_of(name) for name in names) * size * LINE_EM + 10
        if y is not None and y >= 1:
            return Margins(t=rows)
        if y is not None and y < 0:
            return Margins(b=rows)
        return Margins()
    x = 1.02 if legend.get("x") is None else legend["x"]
    if x >= 1 and legend.get("xref") != "container":
        return Margins(r=widest + (x - 1) * width_px * PLOT_SHARE)
    return Margins()


def needed(fig: go.Figure, width_px: float = CHART_PX) -> Margins:
    """The margins `fig`'s words need at the edges, drawn `width_px` wide."""
    traces, layout = own_data(fig)
    found = _axis_margins(traces, layout, width_px).widest(_legend_margins(traces, layout, width_px))
    return found.widest(Margins(r=_colour_bar_margin(traces, layout, width_px)))


def fit_margins(fig: go.Figure, width_px: float = CHART_PX) -> go.Figure:
    """Widen `fig`'s margins to what its words need, so that plotly draws it once (see the module's note); a
    margin already wide enough is kept. Returns `fig`."""
    if _FITTED.get(id(fig)) is fig:  # a shared figure is fitted when drawn, then only read (ui/session/figures.py)
        return fig
    need = needed(fig, width_px)
    _, layout = own_data(fig)
    margin = layout.get("margin") or {}
    asked = Margins(*(margin.get(side, PLOTLY_MARGINS[side]) for side in "lrtb"))
    wider = {
        side: math.ceil(getattr(need, side) + SPARE_PX)
        for side in "lrtb"
        if getattr(need, side) and getattr(need, side) + SPARE_PX > getattr(asked, side)
    }
    # Margins asked for are kept however narrow the chart is drawn, where automargin would leave the plot some
    # room: words that would leave a phone's chart too little plot have it drawn WIDE_FIGURE_PX wide (and
    # scrolled sideways, viz.style.keeps_its_width), and sides too wide even for that (or for the chart's
    # height) stay automargin's.
    sides_px = max(need.l, asked.l) + max(need.r, asked.r) + 2 * SPARE_PX
    if sides_px > PHONE_CHART_PX - LEAST_PLOT_PX and layout.get("meta") is None:
        set_unchecked(fig, meta=KEEPS_WIDTH)
    if sides_px > WIDE_FIGURE_PX - LEAST_PLOT_PX:
        wider = {side: px for side, px in wider.items() if side not in "lr"}
    height = layout.get("height")
    if height is not None and max(need.t, asked.t) + max(need.b, asked.b) > height - LEAST_PLOT_PX:
        wider = {side: px for side, px in wider.items() if side not in "tb"}
    if wider:
        set_unchecked(fig, margin={**margin, **wider})
    self_contained(fig)  # and Streamlit's second Plotly.react of it redraws nothing
    _FITTED[id(fig)] = fig
    return fig


def fitted(drawn: T) -> T:
    """`fit_margins` of what a drawing function returned, if a figure; anything else (an HTML string) as it is."""
    return fit_margins(drawn) if isinstance(drawn, go.Figure) else drawn
