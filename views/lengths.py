"""Which pieces a detailed attention heatmap shows at any length: the window of source pieces, and the query rows
and key columns of each attention block (the window controls themselves are ui/parts/lengths.py)."""

from __future__ import annotations

from viz.lengths import DETAIL, Span, clip, whole


def source_span(wanted: Span, n: int) -> Span:
    """The source pieces the detailed heatmaps show: the whole sentence up to DETAIL pieces, else the `window=`
    asked for, moved and cut to fit the sentence."""
    if n <= DETAIL:
        return whole(n)
    return clip(wanted, n)


def block_windows(block: str, source: Span, output: Span) -> dict[str, Span]:
    """The query rows and key columns an attention block's detailed heatmaps show: source pieces
    through the source window, decoder positions through the window around the step."""
    return dict(rows=source if block == "enc-self" else output, columns=output if block == "dec-self" else source)
