"""A large heatmap's colours sent as bytes: each cell's place on the colour scale in LEVELS steps, one byte a cell
where a float took four, for a picture whose cells are too small to hover one by one.

SmolLM2's model view is 1,290 × 328 cells: its colour values and the weights under them for the hover were 5.3 MB
of the Attention page's 6 MB, which the browser parsed, copied and decoded for each of the chart's two draws
(bench/browser_work.py). As levels, the same picture is 0.6 MB: the colour scale is spread over the levels, a gap
is level 0 and drawn clear, and the colour bar names its ticks by the values they stand for. 254 steps is finer
than the colour scales' own stops (Viridis has ten), so no two neighbouring levels differ to the eye.
"""

from __future__ import annotations

import numpy as np
import plotly.colors

LEVELS = 254  # a value's place on the scale: level 1 (the scale's low end) to 1 + LEVELS (its high end)
TOP = LEVELS + 1
CLEAR = "rgba(0,0,0,0)"
BAR_STEPS = (0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 5.0)
MOST_TICKS = 6


def level_image(values: np.ndarray, low: float, high: float) -> np.ndarray:
    """`values` (NaN in the gaps) as bytes: 1 + their place between `low` and `high` in LEVELS steps (clipped to
    the scale), 0 in a gap."""
    place = np.clip((np.nan_to_num(values, nan=low) - low) / (high - low), 0.0, 1.0)
    return np.where(np.isnan(values), 0, 1 + np.round(place * LEVELS)).astype(np.uint8)


def level_scale(colorscale: str | list[list]) -> list[list]:
    """A colour scale (plotly's name, or its [place, colour] stops) spread over the levels (zmin 0, zmax TOP):
    level 0 clear, level 1 the scale's first colour, TOP its last."""
    stops = plotly.colors.get_colorscale(colorscale) if isinstance(colorscale, str) else colorscale
    return [[0.0, CLEAR], [0.5 / TOP, CLEAR]] + [[(1 + place * LEVELS) / TOP, colour] for place, colour in stops]


def level_ticks(low: float, high: float) -> dict:
    """The colour bar's tickvals (levels) and ticktext (the values they stand for) over the scale from `low` to
    `high`: a round step, at most MOST_TICKS of them, as plotly would put them on the values themselves."""
    span = high - low
    step = next((s for s in BAR_STEPS if span / s <= MOST_TICKS), span)
    values = np.arange(np.ceil(low / step - 1e-9), np.floor(high / step + 1e-9) + 1) * step
    return dict(
        tickvals=[float(1 + (v - low) / span * LEVELS) for v in values],
        ticktext=[f"{v:g}".replace("-", "−") for v in values + 0.0],  # + 0.0: no "−0"
    )
