"""How a view keeps its size at any sentence length: windows over the pieces, pooled bins, colour modes.

A window is a `Span`, (start, stop) in positions counted from 0, stop excluded. Pooling splits
positions into at most a fixed number of contiguous bins; a pooled attention cell is the mean over
its bin's queries of the weight summed over its bin's keys, so every pooled row still sums to 1.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np

from i18n import N_, _, listing

Span = tuple[int, int]

DETAIL = 40  # pieces per axis a detailed heatmap shows at once (every label readable)
# The rows (and columns) a projector's first picture shows at once around the step (presentation mode): every one
# labelled in its large type, the whole picture in the first screen, the window following the step as it plays.
PROJECTOR_ROWS = 10
MOST_SHOWN = 96  # the widest window a person may ask for
TILE_BINS = 32  # cells per axis of a pooled model-view tile

# The colour modes: codes of the URL (`colour=`), each with its name, said with i18n._(COLOUR_MODES[code]) where shown.
COLOUR_MODES = {
    "auto": N_("automatic"),
    "linear": N_("weight 0–1"),
    "row": N_("each row ÷ its largest weight"),
    "log": N_("log₁₀ weight"),
}
LOG_FLOOR = 1e-4  # the log scale's floor: smaller weights share its darkest colour


def whole(n: int) -> Span:
    """Every position of an axis of length n."""
    return 0, n


def clip(span: Span, n: int, most: int = MOST_SHOWN) -> Span:
    """`span` moved and cut to lie inside 0..n and hold at most `most` positions (at least one)."""
    start = min(max(0, span[0]), max(0, n - 1))
    stop = min(n, max(start + 1, span[1]), start + most)
    return start, stop


def window_note(
    rows: Span, columns: Span, n_queries: int, n_keys: int, first: bool = False, columns_as: str = "keys"
) -> str:
    """' · queries 0–39 of 413, keys ...' for a title, naming each axis the window cuts (empty if none), in the
    language of this run; `first`: the first key is shown too, before a key window that starts after it ("keys 0
    and 373–412"); `columns_as` names the columns: "keys", "output pieces" or "source positions"."""
    parts = []
    if rows[1] - rows[0] < n_queries:
        parts.append(_("queries {a}–{b} of {n}", a=rows[0], b=rows[1] - 1, n=n_queries))
    if columns[1] - columns[0] < n_keys:
        parts.append(_column_note(columns, n_keys, first and columns[0] > 0, columns_as))
    return f" · {listing(parts)}" if parts else ""


def _column_note(columns: Span, n: int, first: bool, columns_as: str) -> str:
    """The window over the columns, named as `columns_as` says (window_note)."""
    a, b = columns[0], columns[1] - 1
    if columns_as == "output pieces":
        return _("output pieces {a}–{b} of {n}", a=a, b=b, n=n)
    if columns_as == "source positions":
        return _("source positions {a}–{b} of {n}", a=a, b=b, n=n)
    if first:
        return _("keys 0 and {a}–{b} of {n}", a=a, b=b, n=n)
    return _("keys {a}–{b} of {n}", a=a, b=b, n=n)


def around(position: int, n: int, size: int = DETAIL) -> Span:
    """A window of `size` positions (or all n) that holds `position`, centred on it where it can be."""
    if n <= size:
        return 0, n
    start = min(max(0, position - size // 2), n - size)
    return start, start + size


def rows_shown(position: int, n: int, presentation: bool) -> Span:
    """The decoder positions a step's detailed heatmaps show around `position`: DETAIL of them, PROJECTOR_ROWS on a
    projector."""
    return around(position, n, PROJECTOR_ROWS if presentation else DETAIL)


def bins(n: int, most: int = TILE_BINS) -> list[Span]:
    """Positions 0..n split into at most `most` contiguous bins of near-equal size (one per position
    when n <= most)."""
    if n <= most:
        return [(i, i + 1) for i in range(n)]
    edges = np.linspace(0, n, most + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in pairwise(edges)]


def pooled(n: int) -> bool:
    """True when an axis of n positions is pooled into bins (longer than TILE_BINS)."""
    return n > TILE_BINS


def pool(pattern: np.ndarray, row_bins: list[Span], column_bins: list[Span]) -> np.ndarray:
    """[..., queries, keys] -> [..., row bins, column bins]: each cell is the mean over the bin's
    queries of the weight summed over the bin's keys (bins of one position leave values as they are)."""
    summed = np.add.reduceat(pattern, [a for a, _b in column_bins], axis=-1)
    rows = np.add.reduceat(summed, [a for a, _b in row_bins], axis=-2)
    sizes = np.array([b - a for a, b in row_bins], dtype=pattern.dtype)
    return rows / sizes[:, None]


def bin_label(labels: list[str], span: Span) -> str:
    """A bin named by its positions and its first and last pieces; one position keeps its own label."""
    a, b = span
    if b - a == 1:
        return labels[a]
    return f"{a}–{b - 1} {labels[a]}…{labels[b - 1]}"


def colour_mode(mode: str, n_keys: int) -> str:
    """The colour mode to draw with: 'auto' is linear while rows are short, per-row past DETAIL keys."""
    if mode == "auto":
        return "linear" if n_keys <= DETAIL else "row"
    if mode not in COLOUR_MODES:
        raise ValueError(f"unknown colour mode {mode!r}; expected one of {', '.join(COLOUR_MODES)}")
    return mode


def coloured(weights: np.ndarray, mode: str) -> np.ndarray:
    """Attention weights turned into colour values under a (resolved) mode; rows along the last axis."""
    if mode == "linear":
        return weights
    if mode == "row":
        peak = np.nan_to_num(weights, nan=0.0).max(axis=-1, keepdims=True)
        return np.divide(weights, peak, out=np.zeros_like(weights), where=peak > 0)
    if mode == "log":
        with np.errstate(invalid="ignore"):
            return np.log10(np.maximum(weights, LOG_FLOOR))
    raise ValueError(f"unknown colour mode {mode!r}")


def colour_range(mode: str) -> tuple[float, float, str]:
    """(zmin, zmax, colour-bar title) of a resolved colour mode, the title in the language of this run."""
    if mode == "log":
        return float(np.log10(LOG_FLOOR)), 0.0, _("log₁₀ weight")
    return 0.0, 1.0, _("weight ÷ row max") if mode == "row" else _("weight")
