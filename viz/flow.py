"""The flow diagram of the Tensor shapes page: one layer of each stack the model has as boxes (their
labels and places: viz.flow_boxes), the tensor's shape on every arrow, a residual path around every
sublayer and each attention box split into its heads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import plotly.graph_objects as go

from i18n import _
from model.engine import stages

from .flow_boxes import ATTENTION_BOXES, Box, Metrics, decoder_boxes, encoder_boxes, head_counts, place_boxes
from .shapes import Blueprint, symbolic_shape
from .style import KEEPS_WIDTH, Style

MOST_HEADS = 6  # head boxes drawn in a row; past this, the first ones, an ellipsis and the last
WIDTH = 1100.0  # the diagram's x range, about a wide page's chart width in pixels
ARROW = dict(
    xref="x", yref="y", axref="x", ayref="y", showarrow=True, arrowhead=2, arrowwidth=1.6, arrowcolor="#333333"
)
RESIDUAL_COLOUR = "#2e7d32"
SHAPE_COLOUR = "#0b5394"  # the shapes written beside the arrows

Place = dict[str, tuple[float, float, float]]  # box key -> (x centre, y top, y bottom)


def _is_add(key: str) -> bool:
    return "_add" in key or "_norm" in key  # "add & norm" (post-LN) or "add (residual)" (pre-LN)


@dataclass
class _Drawing:
    """What the diagram draws, gathered box by box: the boxes' rectangles, the annotations (labels and
    arrows) and three traces of line segments, each segment followed by a None."""

    rects: list[dict] = field(default_factory=list)
    notes: list[dict] = field(default_factory=list)
    lines_x: list[float | None] = field(default_factory=list)  # residual paths, one trace of segments
    lines_y: list[float | None] = field(default_factory=list)
    fan_x: list[float | None] = field(default_factory=list)  # the lines into and out of the heads
    fan_y: list[float | None] = field(default_factory=list)
    head_x: list[float | None] = field(default_factory=list)  # head boxes as filled outlines
    head_y: list[float | None] = field(default_factory=list)

    def segment(self, x0: float, y0: float, x1: float, y1: float) -> None:
        self.lines_x.extend([x0, x1, None])
        self.lines_y.extend([y0, y1, None])

    def fan(self, x0: float, y0: float, x1: float, y1: float) -> None:
        self.fan_x.extend([x0, x1, None])
        self.fan_y.extend([y0, y1, None])


def _default_title(has_encoder: bool, has_decoder: bool) -> str:
    """The diagram's title, after the stacks it shows."""
    if has_encoder and has_decoder:
        return _("One encoder layer and one decoder layer, with shapes on the edges")
    if has_encoder:
        return _("One encoder layer, with shapes on the edges")
    return _("One decoder layer (no encoder, no cross-attention), with shapes on the edges")


def _shape_label(shapes: dict[str, tuple[int, ...]], name: str | None) -> str:
    """What an arrow carrying hook `name` says: its symbolic shape over its numbers ("?" when not recorded)."""
    if name not in shapes:
        return "?"
    return f"{symbolic_shape(name, len(shapes[name]))}<br>{'×'.join(str(d) for d in shapes[name])}"


def flow_diagram(
    shapes: dict[str, tuple[int, ...]], style: Style, title: str | None = None, blueprint: Blueprint = Blueprint()
) -> go.Figure:
    """Boxes for the stages of layer 0 of each stack the model has (an encoder, a decoder or both),
    labelled with its family's choices: each arrow carries the tensor's shape, a residual (skip)
    arrow goes around every sublayer to its add, and each attention box splits into its h heads and
    concatenates them back. Text is 14 px or more (more in presentation mode)."""
    has_encoder, has_decoder = stages.MEMORY in shapes, stages.DECODER_OUTPUT in shapes
    cross = stages.attention("decoder", "cross", 0, "out") in shapes
    if title is None:
        title = _default_title(has_encoder, has_decoder)
    columns = ([(_("Encoder layer"), encoder_boxes(shapes, blueprint))] if has_encoder else []) + (
        [(_("Decoder layer"), decoder_boxes(shapes, blueprint, cross))] if has_decoder else []
    )
    metrics = Metrics(
        font=max(14, style.font + 1),
        shape_font=max(14, style.tick + 3),
        box_width=420.0 if style.presentation else 330.0,
    )
    half = metrics.box_width / 2
    two = len(columns) > 1
    centres = [half + 60.0, WIDTH - half - 60.0] if two else [WIDTH / 2]
    heads = {key: head_counts(shapes, *block, blueprint) for key, block in ATTENTION_BOXES.items()}
    place = place_boxes(columns, centres, metrics, heads)
    bottom = min(b for _, _, b in place.values()) - (metrics.gap if stages.LOGITS in shapes else 20.0)
    drawing = _Drawing()
    for column, (heading, boxes) in enumerate(columns):
        # residual paths on the outer side; shape labels beside each arrow on the other side
        side = -1.0 if two and column == 0 else 1.0
        _draw_column(heading, boxes, centres[column], side, place, heads, shapes, metrics, style, drawing)
    if cross and has_encoder:
        _memory_arrow(place, shapes, metrics, drawing.notes)
    if stages.LOGITS in shapes and "logits" in place:
        _logits_arrow(place["logits"], shapes, metrics, drawing.notes)
    return _figure(drawing, style, title, bottom)


def _draw_column(
    heading: str,
    boxes: list[Box],
    x: float,
    side: float,
    place: Place,
    heads: dict[str, tuple[int, int]],
    shapes: dict[str, tuple[int, ...]],
    metrics: Metrics,
    style: Style,
    drawing: _Drawing,
) -> None:
    """One column of boxes at x: its heading, each box with its label (an attention box with its heads
    inside), the arrow into it with the shape it carries and, into each add, the residual path around
    the sublayer above it; `side`: the side of the residual paths (-1 left, 1 right)."""
    half = metrics.box_width / 2
    colour = "#dbeafe" if boxes and boxes[0][0] == "src_ids" else "#fde2c8"  # the encoder's column starts there
    box_font = dict(size=metrics.font, color="#111111")
    drawing.notes.append(
        dict(x=x, y=metrics.heading_y, text=f"<b>{heading}</b>", showarrow=False, font=dict(size=style.font + 2))
    )
    for row, (key, label, hook) in enumerate(boxes):
        _x, top, low = place[key]
        drawing.rects.append(
            dict(
                type="rect",
                x0=x - half,
                x1=x + half,
                y0=low,
                y1=top,
                line=dict(color="#333333", width=1.5),
                fillcolor=colour,
                layer="below",
            )
        )
        if key in ATTENTION_BOXES and heads[key][0]:
            _attention_inside(
                label, x, top, heads[key], metrics, drawing.notes, drawing.fan, drawing.head_x, drawing.head_y
            )
        else:
            drawing.notes.append(dict(x=x, y=(top + low) / 2, text=label, showarrow=False, font=box_font))
        if row:
            _arrow_in(x, top, place[boxes[row - 1][0]][2], side, _shape_label(shapes, hook), metrics, drawing.notes)
        if _is_add(key) and row >= 2:  # around the sublayer above: from the arrow into it to this add
            sub_top = place[boxes[row - 1][0]][1]
            fork = (place[boxes[row - 2][0]][2] + sub_top) / 2
            _residual(x, fork, (top + low) / 2, side, metrics, drawing)


def _arrow_in(x: float, top: float, above: float, side: float, text: str, metrics: Metrics, notes: list[dict]) -> None:
    """The arrow from the bottom of the box above (`above`) to the top of a box, and the shape it carries
    written beside it, on the side away from the residual paths."""
    notes.append(dict(x=x, y=top, ax=x, ay=above, **ARROW))
    notes.append(
        dict(
            x=x - side * 10,
            y=(top + above) / 2,
            text=text,
            showarrow=False,
            xanchor="right" if side > 0 else "left",
            font=dict(size=metrics.shape_font, color=SHAPE_COLOUR),
        )
    )


def _residual(x: float, fork: float, middle: float, side: float, metrics: Metrics, drawing: _Drawing) -> None:
    """A residual path: out sideways from the arrow into a sublayer (at y `fork`), down beside it, and back
    into the middle of its add as a green arrow, named "residual" along the way."""
    half = metrics.box_width / 2
    out = x + side * (half + 40)
    drawing.segment(x, fork, out, fork)
    drawing.segment(out, fork, out, middle)
    drawing.notes.append(
        dict(x=x + side * half, y=middle, ax=out, ay=middle, **ARROW) | dict(arrowcolor=RESIDUAL_COLOUR, arrowwidth=2)
    )
    drawing.notes.append(
        dict(  # between the path and the boxes, where it cannot leave the figure
            x=out - side * 5,
            y=(fork + middle) / 2,
            text=_("residual"),
            textangle=-90,
            showarrow=False,
            xanchor="right" if side > 0 else "left",
            font=dict(size=metrics.shape_font, color=RESIDUAL_COLOUR),
        )
    )


def _memory_arrow(place: Place, shapes: dict[str, tuple[int, ...]], metrics: Metrics, notes: list[dict]) -> None:
    """The arrow rising from the encoder's memory into the decoder's cross-attention, with the memory's shape."""
    half = metrics.box_width / 2
    x0, _top0, low0 = place["memory"]
    x1, top1, low1 = place["dec_cross"]
    start, end = (x0 + half, low0 + 24), (x1 - half, (top1 + low1) / 2)
    notes.append(dict(x=end[0], y=end[1], ax=start[0], ay=start[1], **ARROW))
    notes.append(
        dict(
            x=(start[0] + end[0]) / 2 + 8,
            y=(start[1] + end[1]) / 2 - 8,
            text=_shape_label(shapes, stages.MEMORY),
            showarrow=False,
            xanchor="left",
            yanchor="top",
            font=dict(size=metrics.shape_font, color=SHAPE_COLOUR),
        )
    )  # below and right of the rising arrow


def _logits_arrow(
    box: tuple[float, float, float], shapes: dict[str, tuple[int, ...]], metrics: Metrics, notes: list[dict]
) -> None:
    """The arrow out of the bottom of the last box (x, top, bottom), with the logits' shape."""
    x, _top, low = box
    notes.append(dict(x=x, y=low - metrics.gap + 6, ax=x, ay=low, **ARROW))
    notes.append(
        dict(
            x=x - 10,
            y=low - metrics.gap / 2,
            text=_shape_label(shapes, stages.LOGITS),
            showarrow=False,
            xanchor="right",
            font=dict(size=metrics.shape_font, color=SHAPE_COLOUR),
        )
    )


def _figure(drawing: _Drawing, style: Style, title: str, bottom: float) -> go.Figure:
    """The figure of a finished drawing, down to y `bottom`: the boxes and annotations in its layout, and
    its residual paths, head fans and head outlines as three traces of segments."""
    fig = style.figure(
        shapes=drawing.rects,
        annotations=drawing.notes,
        showlegend=False,
        meta=KEEPS_WIDTH,  # its words sit at fixed places: squeezed, they run into each other
        xaxis=dict(visible=False, range=[0, WIDTH], fixedrange=True),
        yaxis=dict(visible=False, range=[bottom, 0], fixedrange=True),
    )
    segments = (
        (drawing.lines_x, drawing.lines_y, "residual paths", dict(line=dict(color=RESIDUAL_COLOUR, width=2))),
        (drawing.fan_x, drawing.fan_y, "head fans", dict(line=dict(color="#777777", width=1.2))),
        (
            drawing.head_x,
            drawing.head_y,
            "heads",
            dict(fill="toself", fillcolor="#ffffff", line=dict(color="#555555", width=1.2)),
        ),
    )
    for x, y, name, looks in segments:
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", hoverinfo="skip", name=name, **looks))
    return style.apply(fig, title, height=int(-bottom + 80))


def _attention_inside(
    label: str,
    x: float,
    top: float,
    heads: tuple[int, int],
    metrics: Metrics,
    notes: list[dict],
    fan: Callable[[float, float, float, float], None],
    head_x: list[float | None],
    head_y: list[float | None],
) -> None:
    """An attention box's inside, top down: its label, the split into h heads of d_k, a row of head
    boxes with fans into and out of it, and the concatenation back through W_O."""
    h, d_k = heads
    lines = label.count("<br>") + 1
    font = dict(size=metrics.font, color="#111111")
    y = top - 9 - lines * metrics.line / 2
    notes.append(dict(x=x, y=y, text=label, showarrow=False, font=font))
    y -= lines * metrics.line / 2 + metrics.line / 2
    split = _("split into h = {h} heads of d_k = {d_k}", h=h, d_k=d_k)
    notes.append(dict(x=x, y=y, text=split, showarrow=False, font=font))
    fork = y - metrics.line / 2 - 2
    row_top = fork - 14
    row_low = row_top - metrics.head_row + 4
    names = [f"H{i + 1}" for i in range(h)] if h <= MOST_HEADS else ["H1", "H2", "H3", "…", f"H{h}"]
    width = metrics.box_width - 40
    slot = width / len(names)
    join = row_low - 12
    for i, name in enumerate(names):
        cx = x - width / 2 + slot * (i + 0.5)
        notes.append(dict(x=cx, y=(row_top + row_low) / 2, text=name, showarrow=False, font=font))
        if name == "…":
            continue
        w = min(slot - 8, metrics.font * 3.2) / 2
        head_x.extend([cx - w, cx + w, cx + w, cx - w, cx - w, None])
        head_y.extend([row_top, row_top, row_low, row_low, row_top, None])
        fan(x, fork, cx, row_top)
        fan(cx, row_low, x, join)
    notes.append(
        dict(
            x=x,
            y=join - metrics.line / 2,
            text=_("concat {h} × {d_k} = {width} → W_O", h=h, d_k=d_k, width=h * d_k),
            showarrow=False,
            font=font,
        )
    )
