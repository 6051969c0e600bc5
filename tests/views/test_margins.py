"""viz.margins: the margins a figure's words need, worked out on the server so that plotly draws each chart once
(issue 54). Whether they are right in a browser is the browser tests' (chart_text.WIDENED and CUT_WORDS on
every page); here, that they follow the words."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from viz.looks import own_data
from viz.margins import GLYPHS_FILE, MEASURED_RANGES, PLOTLY_MARGINS, Margins, fit_margins, fitted, needed, text_px
from viz.style import Style, keeps_its_width

PLAIN = Style()


def _map(queries: list[str], keys: list[str], style: Style = PLAIN, **axis: object) -> go.Figure:
    fig = style.figure()
    fig.add_trace(go.Heatmap(z=np.random.default_rng(0).random((len(queries), len(keys))), x=keys, y=queries))
    fig.update_layout(xaxis={"tickangle": -90, **axis}, yaxis=dict(autorange="reversed"))
    return style.apply(fig, "A map")


def test_the_glyph_table_holds_every_measured_character_once():
    widths = json.loads(GLYPHS_FILE.read_text())
    expected = {chr(code) for first, last in MEASURED_RANGES for code in range(first, last + 1)}
    assert set(widths) == expected
    assert all(0 <= width <= 2000 for width in widths.values())


def test_text_is_as_wide_as_its_longest_line_at_its_size():
    assert text_px("WWWW", 10) > text_px("iiii", 10) * 2  # the font's own widths, not a character count
    assert text_px("abc", 22) == pytest.approx(2 * text_px("abc", 11))
    assert text_px("ab<br>abcd", 11) == pytest.approx(text_px("abcd", 11))
    assert text_px("<b>abcd</b>", 11) == pytest.approx(text_px("abcd", 11))
    widths = json.loads(GLYPHS_FILE.read_text())
    assert text_px("&lt;s&gt;", 11) == pytest.approx((widths["<"] + widths["s"] + widths[">"]) * 11 / 1000)
    assert text_px("猫猫", 10) == pytest.approx(20)  # a CJK character is one em


def test_the_left_margin_follows_the_longest_query_label():
    short = needed(_map(["a", "b"], ["a", "b"]))
    long = needed(_map(["a", "a much longer piece"], ["a", "b"]))
    assert long.l - short.l == pytest.approx(text_px("a much longer piece", 11) - text_px("a", 11), abs=0.5)
    assert long.b == pytest.approx(short.b)  # the keys did not change


def test_turned_key_labels_take_their_length_below_and_flat_ones_a_line():
    turned = needed(_map(["a"], ["a very long key label", "b"]))
    flat = needed(_map(["a"], ["a very long key label", "b"], tickangle=0))
    assert turned.b > flat.b + text_px("a very long key label", 11) * 0.8
    assert flat.b < 40


def test_a_colour_bar_and_an_axis_title_take_room():
    plain = needed(_map(["a"], ["b"]))
    assert plain.r > 14 + text_px("0.8", 13)  # the bar and its labels, at the right
    titled = _map(["a"], ["b"])
    titled.update_layout(yaxis_title_text="query")
    assert needed(titled).l > plain.l + 13


def test_presentation_type_needs_more_room():
    assert needed(_map(["a piece"], ["b"], Style(presentation=True))).l > needed(_map(["a piece"], ["b"])).l


def test_fit_widens_only_what_is_too_narrow_and_a_second_fit_changes_nothing():
    fig = _map(["a fairly long piece"], ["b"])
    fig.update_layout(margin_t=123)
    fit_margins(fig)
    assert fig.layout.margin.t == 123 and fig.layout.margin.l > 10
    before = fig.layout.margin.to_plotly_json()
    fit_margins(fig)
    assert fig.layout.margin.to_plotly_json() == before


def test_a_figure_without_margins_keeps_plotlys_where_they_suffice():
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]))
    fit_margins(fig)
    assert fig.layout.margin.l is None or fig.layout.margin.l >= PLOTLY_MARGINS["l"]


def test_a_legend_at_the_right_takes_its_longest_name():
    fig = Style().figure()
    fig.add_trace(go.Bar(x=["a"], y=[1], name="short"))
    fig.add_trace(go.Bar(x=["a"], y=[2], name="a rather long legend entry"))
    alone = Style().figure()
    alone.add_trace(go.Bar(x=["a"], y=[1], name="a rather long legend entry"))  # one trace: plotly lists none
    assert needed(fig).r > text_px("a rather long legend entry", 13) > needed(alone).r


def test_what_is_not_a_figure_passes_through():
    assert fitted("<p>html</p>") == "<p>html</p>"
    assert isinstance(fitted(_map(["a"], ["b"])), go.Figure)


def _legend_figure(*names: str) -> go.Figure:
    fig = Style().figure()
    for name in names:
        fig.add_trace(go.Scatter(x=[1, 2], y=[3, 4], name=name))
    return Style().apply(fig, "Scores")


def test_words_that_would_squeeze_a_phones_plot_keep_a_wide_figure_and_wider_ones_are_left_to_plotly():
    fig = fit_margins(_legend_figure("best head agrees with the alignment", "test BLEU"))
    assert 200 < fig.layout.margin.r and keeps_its_width(fig)  # a phone draws it 760 px wide, its legend fitted
    assert not keeps_its_width(fit_margins(_legend_figure("a", "b")))
    huge = fit_margins(_legend_figure("an entry " * 60, "b"))
    assert huge.layout.margin.r == 10  # automargin keeps the plot some room, as before


def test_dates_and_empty_figures_need_nothing_they_cannot_read():
    fig = Style().figure()
    fig.add_trace(go.Scatter(x=np.array(["2026-01-01", "2026-02-01"], dtype="datetime64[D]"), y=[1, 2]))
    fig.add_trace(go.Heatmap(z=[[np.nan]]))
    assert needed(fig).b >= 0  # no error; plotly's automargin fits what is not read here
    assert needed(Style().figure()) == needed(Style().figure())


def test_a_figure_is_read_as_the_plain_data_plotly_sends():
    """own_data is plotly's own store: the same properties its JSON is made of, after checked updates too."""
    fig = _map(["a", "b"], ["x", "y", "z"])
    fig.add_trace(go.Scatter(x=[1, 2], y=[3, 4], xaxis="x2", name="line"))
    fig.update_layout(xaxis2=dict(title=dict(text="t")), legend=dict(orientation="h"))
    fig.add_vline(x=1)
    drawing = PLAIN.drawing([dict(type="bar", x=["a"], y=[1.5])], "Bars", 300, yaxis=dict(rangemode="tozero"))
    for figure in (fig, drawing):
        traces, layout = own_data(figure)
        rebuilt = go.Figure(dict(data=traces, layout=layout), _validate=False)
        assert json.loads(pio.to_json(rebuilt, validate=False)) == json.loads(pio.to_json(figure, validate=False))


def test_a_trace_off_the_axes_needs_no_axis_room():
    table = Style().figure()
    table.add_trace(go.Table(header=dict(values=["a very long header that no axis shows"]), cells=dict(values=[[1]])))
    assert needed(table) == Margins()
    bars = Style().figure()
    bars.add_trace(go.Bar(x=["a very long category name"], y=[1]))
    assert needed(bars).b > 0


def test_short_arrays_of_bars_and_lines_are_sent_as_lists_and_a_maps_as_typed_arrays():
    """plotly.js redraws the copy Streamlit draws of a bar chart or a line sent as typed arrays (viz.looks)."""
    fig = PLAIN.figure()
    fig.add_trace(go.Bar(x=np.array([0.5, np.nan, 2.0]), y=np.arange(3)))
    fig.add_trace(go.Scatter(x=np.arange(3), y=np.array([1.0, 2.0, 3.0])))
    fig.add_trace(go.Heatmap(z=np.eye(3)))
    sent = json.loads(pio.to_json(fit_margins(PLAIN.apply(fig, "Bars")), validate=False))["data"]
    assert sent[0]["x"] == [0.5, None, 2.0] and sent[0]["y"] == [0, 1, 2]
    assert sent[1]["x"] == [0, 1, 2] and sent[1]["y"] == [1.0, 2.0, 3.0]
    assert "bdata" in sent[2]["z"]
