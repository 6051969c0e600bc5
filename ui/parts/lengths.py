"""The controls of a page that draws attention at any length: the window of source pieces and the colour mode."""

from __future__ import annotations

import streamlit as st

import i18n
from i18n import _, n_, sentences
from ui.page.binding import bind, page_value, set_value
from views.controls import COLOUR, WINDOW
from views.lengths import block_windows as block_windows  # the Masks lab's heatmaps read it here too
from views.lengths import source_span
from viz.lengths import COLOUR_MODES, DETAIL, MOST_SHOWN, Span, clip


def source_window(n: int) -> Span:
    """Past DETAIL source pieces, a range slider over them (`window=` in the URL, at most MOST_SHOWN
    pieces wide); the whole sentence otherwise."""
    span = source_span(page_value(WINDOW), n)
    if n <= DETAIL:
        return span
    set_value("window", span)
    return bind(
        "window",
        st.slider,
        label=_("Source pieces shown in the detailed heatmaps"),
        min_value=0,
        max_value=n - 1,
        to_widget=lambda s: (s[0], s[1] - 1),
        from_widget=lambda v: clip((v[0], v[1] + 1), n),
        help=sentences(
            n_("The sentence has {n} piece.", "The sentence has {n} pieces.", n),
            _(
                "The heatmaps below show this window of them at full resolution (at most {most} at once; {detail} "
                "keep every label readable); the model view pools the whole sentence, and the text view reads it "
                "all.",
                most=MOST_SHOWN,
                detail=DETAIL,
            ),
        ),
    )


def colour() -> str:
    """The colour mode of the attention heatmaps (`colour=` in the URL)."""
    page_value(COLOUR)
    return bind(
        "colour",
        st.radio,
        label=_("Colour scale"),
        options=list(COLOUR_MODES),
        horizontal=True,
        format_func=lambda mode: i18n._(COLOUR_MODES[mode]).capitalize(),
        help=_(
            "Automatic: the weight on a 0–1 scale while rows are short, each row divided by its own largest "
            "weight past {detail} keys (a long row spreads its weight thin, and on a 0–1 scale everything looks "
            "dark). Log: log₁₀ of the weight, from 10⁻⁴. The hover always shows the real weight.",
            detail=DETAIL,
        ),
    )
