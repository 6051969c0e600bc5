"""Weights over a sentence as highlighted text, a line per row, linear in length: one query's attention
(a line per head), or one output piece's attribution (a line per method)."""

from __future__ import annotations

import html

import numpy as np

from .labels import at_position, display_piece, reads_bytes, running_text
from .style import Style

SHADE = (255, 45, 149)  # the normal style's highlight colour
SHADE_PRESENTATION = (0, 150, 255)
NEGATIVE = (40, 90, 220)  # signed weights below zero (an attribution that lowers the piece)
NEGATIVE_PRESENTATION = (230, 120, 0)


LINES_CLASS = "anatomy-lines"  # the shaded lines' block (ui.page.markup.APP_CSS keeps what follows it below it)


def shaded_text(
    weights: np.ndarray | list[np.ndarray],
    keys: list[str],
    names: list[str],
    style: Style,
    own: int | None = None,
    signed: bool = False,
) -> str:
    """HTML, one line per row of `weights` ([lines, keys]): the key pieces as running text, each
    shaded by its weight divided by the line's largest weight, with the exact weight on hover.
    `own` outlines the key at the query's own position. With `signed`, the shade is |weight| over
    the line's largest |weight|, in a second colour below zero. Every piece is HTML-escaped."""
    weights = np.asarray(weights)
    if weights.ndim != 2 or weights.shape != (len(names), len(keys)):
        raise ValueError(
            f"weights of shape {tuple(weights.shape)} do not match {len(names)} lines x {len(keys)} key pieces"
        )
    above = SHADE_PRESENTATION if style.presentation else SHADE
    below = NEGATIVE_PRESENTATION if style.presentation else NEGATIVE
    size = style.font + 2
    spacing, margin = ("1.35", "0") if style.presentation else ("1.6", "0.15em")  # a projector's lines are large
    texts = running_text(keys)
    family = style.template["layout"]["font"]["family"]
    number = ".4g" if signed else ".3f"  # attributions can be tiny: significant digits
    width = max(5.5, 0.6 * max(map(len, names), default=0))  # em: the names' column
    lines, byte_level = [], reads_bytes(keys)
    for name, row in zip(names, np.nan_to_num(weights, nan=0.0), strict=True):
        peak = float((np.abs(row) if signed else row).max()) if row.size else 0.0
        spans = []
        for position, (piece, text, weight) in enumerate(zip(keys, texts, row, strict=True)):
            alpha = abs(weight) / peak if peak > 0 else 0.0
            red, green, blue = below if weight < 0 else above
            label = html.escape(
                f"{at_position(display_piece(piece, byte_level), position)}: {weight:{number}}", quote=True
            )
            outline = "outline:2px solid #111;" if position == own else ""
            # the space between words stays outside the shaded span, so long lines can wrap there
            spans.append(
                f'{" " if text.startswith(" ") else ""}<span title="{label}" style="background:'
                f'rgba({red},{green},{blue},{alpha:.2f});{outline}">{html.escape(text.lstrip(" "))}</span>'
            )
        lines.append(
            f'<div style="display:flex;gap:0.8em;margin:{margin} 0"><b style="min-width:{width:.1f}em">'
            f'{html.escape(name)}</b><span style="line-height:{spacing}">{"".join(spans)}</span></div>'
        )
    return f'<div class="{LINES_CLASS}" style="font-size:{size}px;font-family:{family}">' + "".join(lines) + "</div>"
