"""Long sentences: every view keeps a bounded size (windows, pooled tiles, text) and stays honest about it."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from viz.attention import attention_heads, attention_map, model_view, model_view_cell
from viz.focus import shaded_text
from viz.labels import axis_labels, running_text
from viz.lengths import DETAIL, MOST_SHOWN, TILE_BINS, around, bins, clip, colour_mode, coloured, pool
from viz.shapes import tensor_heatmap
from viz.style import Style
from viz.tiles import TILE_CAPTION

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from chart_bytes import paragraph  # noqa: E402

PAGES = [
    "pages/1_translate.py",
    "pages/2_attention.py",
    "pages/3_positional_encoding.py",
    "pages/4_tensor_shapes.py",
    "pages/5_masks_and_heads.py",
    "pages/6_design_choices.py",
    "pages/7_training.py",
]
CHART_BUDGET = 10e6  # bytes of chart specs one page may send, at any length the sentence box accepts


def softmax_rows(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    scores = np.random.default_rng(seed).normal(size=shape).astype(np.float32) * 3
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return weights / weights.sum(axis=-1, keepdims=True)


def pieces(n: int) -> list[str]:
    words = ["▁the", "▁cat", "▁sat", "▁on", "▁a", "▁mat", "s", "▁and"]
    return [words[i % len(words)] for i in range(n)]


def test_bins_cover_every_position_once_in_near_equal_parts():
    for n in (1, 5, TILE_BINS, TILE_BINS + 1, 100, 437):
        spans = bins(n)
        assert spans[0][0] == 0 and spans[-1][1] == n and len(spans) == min(n, TILE_BINS)
        assert all(a < b == c for (a, b), (c, _) in zip(spans, spans[1:] + [(n, n)], strict=True))
        sizes = [b - a for a, b in spans]
        assert max(sizes) - min(sizes) <= 1


def test_pooling_keeps_rows_summing_to_one_and_means_queries_sums_keys():
    pattern = softmax_rows((2, 3, 90, 70))
    pooled = pool(pattern, bins(90), bins(70))
    assert pooled.shape == (2, 3, TILE_BINS, TILE_BINS)
    np.testing.assert_allclose(pooled.sum(axis=-1), 1.0, atol=1e-5)
    (a, b), (c, d) = bins(90)[5], bins(70)[7]
    np.testing.assert_allclose(pooled[1, 2, 5, 7], pattern[1, 2, a:b, c:d].sum(axis=-1).mean(), rtol=1e-5)
    small = softmax_rows((4, 12, 9))
    np.testing.assert_array_equal(pool(small, bins(12), bins(9)), small)  # short: nothing pooled


def test_windows_stay_inside_the_sentence_and_hold_the_step():
    assert clip((500, 900), 437) == (436, 437)
    assert clip((10, 400), 437) == (10, 10 + MOST_SHOWN)
    assert clip((0, 40), 12) == (0, 12)
    for step in (0, 5, 100, 436):
        start, stop = around(step, 437)
        assert start <= step < stop and stop - start == DETAIL and 0 <= start and stop <= 437
    assert around(3, 10) == (0, 10)


def test_colour_modes_are_labelled_and_resolve_by_row_length():
    weights = softmax_rows((5, 100))
    assert colour_mode("auto", DETAIL) == "linear" and colour_mode("auto", DETAIL + 1) == "row"
    np.testing.assert_allclose(coloured(weights, "row").max(axis=-1), 1.0)
    assert coloured(weights, "log").min() >= -4 and coloured(weights, "log").max() <= 0
    with pytest.raises(ValueError, match="unknown colour mode"):
        colour_mode("rainbow", 3)


def test_model_view_of_a_paragraph_costs_what_a_short_one_costs():
    sizes = {}
    for n in (TILE_BINS, 437):
        patterns = [softmax_rows((12, n, n), seed) for seed in range(6)]
        fig = model_view(patterns, pieces(n), pieces(n), Style(), "view")
        sizes[n] = len(fig.to_json())
        tiles = np.asarray(fig.data[0].z)  # twelve heads' cells are too narrow to hover: colour levels, 0 a gap
        assert (tiles > 0).sum() == 6 * 12 * TILE_BINS * TILE_BINS
    assert sizes[437] < 1.5 * sizes[TILE_BINS] and sizes[437] < 1.5e6, sizes
    assert "pooled to 32×32" in fig.layout.title.text
    assert any("–" in label and "…" in label for label in fig.data[0].x)  # a pooled bin names its positions


def test_model_view_tiles_are_clicked_anywhere_and_open_their_head():
    n = 60
    patterns = [softmax_rows((4, n, n), seed) for seed in range(3)]
    fig = model_view(patterns, pieces(n), pieces(n), Style(), "view", knocked_out={(2, 3)})
    image, xs, ys = np.asarray(fig.data[0].z, dtype=float), list(fig.data[0].x), list(fig.data[0].y)
    tiles = fig.data[1]
    assert len(tiles.x) == 3 * 4
    for i, (x, y) in enumerate(zip(tiles.x, tiles.y, strict=True)):
        assert np.isfinite(image[ys.index(y), xs.index(x)]), "a tile's marker sits on its own data"
        assert model_view_cell(x, y) == divmod(i, 4)
    assert tiles.marker.color == "rgba(0,0,0,0)" and tiles.marker.size > 100  # unseen, and as large as a tile
    assert fig.layout.hoverdistance >= tiles.marker.size / 2  # a click near a tile's edge still finds its head
    assert tiles.marker.symbol[-1] == "x" and "knocked out" in tiles.hovertext[-1]
    [caption] = [trace for trace in fig.data if trace.name == TILE_CAPTION]  # at its tile's top left edge
    column, row = int(caption.x[0] + 0.5), int(caption.y[0] + 0.5)
    assert "knocked out" in caption.text[0] and model_view_cell(xs[column], ys[row]) == (2, 3)


def test_detailed_heatmaps_show_a_window_numbered_in_the_whole_sentence():
    n = 300
    pattern = softmax_rows((4, n, n))
    fig = attention_heads(
        pattern,
        pieces(n),
        pieces(n),
        Style(),
        "heads",
        highlight_row=105,
        rows=(100, 140),
        columns=(100, 140),
        colour="linear",
    )
    assert np.asarray(fig.data[0].z).shape == (40, 40)
    assert list(fig.data[0].y) == axis_labels(pieces(n))[100:140]
    assert "queries 100–139 of 300, keys 100–139 of 300" in fig.layout.title.text
    assert fig.layout.shapes[0].y0 == 4.5  # the step's row outlined at its place in the window
    single = attention_map(
        pattern[0], pieces(n), pieces(n), Style(), "one", rows=(0, 40), columns=(0, 40), colour="auto"
    )
    row_max = pattern[0, :40].max(axis=1, keepdims=True)  # each row scaled by its largest weight in the whole row
    np.testing.assert_allclose(np.asarray(single.data[0].z, dtype=float), pattern[0, :40, :40] / row_max, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(single.data[0].customdata, dtype=float), pattern[0, :40, :40], rtol=1e-6)
    assert "customdata" in single.data[0].hovertemplate and single.data[0].colorbar.title.text == "weight ÷ row max"


def test_tensor_heatmap_windows_rows_and_keeps_the_whole_colour_scale():
    matrix = np.random.default_rng(1).normal(size=(300, 64))
    fig = tensor_heatmap(matrix, pieces(300), Style(), "stage", rows=(50, 90))
    assert np.asarray(fig.data[0].z).shape == (40, 64) and "rows 50–89 of 300" in fig.layout.title.text
    assert fig.data[0].zmax == pytest.approx(np.abs(matrix).max())


def test_text_view_shades_every_piece_and_escapes_them():
    keys = ["▁<b>", "▁cat", "s", "▁&"]
    weights = np.array([[0.1, 0.6, 0.2, 0.1], [0.25, 0.25, 0.25, 0.25]])
    html = shaded_text(weights, keys, ["H1", "average"], Style(), own=1)
    assert "<b>" not in html.replace("<b style", "") and "&lt;b&gt;" in html
    assert html.count("<span title=") == 8 and "rgba(255,45,149,1.00)" in html and "outline" in html
    assert running_text(keys) == ["<b>", " cat", "s", " &"]
    assert running_text(["[CLS]", "play", "##ing", "."]) == ["[CLS]", " play", "ing", " ."]
    with pytest.raises(ValueError, match="do not match"):
        shaded_text(weights, keys[:3], ["H1", "average"], Style())


def text_view_size(n: int) -> int:
    return len(shaded_text(softmax_rows((13, n)), pieces(n), [f"H{i}" for i in range(13)], Style()))


def test_text_view_grows_linearly():
    assert text_view_size(400) < 4.5 * text_view_size(100)


def _app(page: str, model: str, params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(ROOT / page), default_timeout=300)
    at.query_params["model"] = model
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


@pytest.mark.slow
@pytest.mark.parametrize("model", ["all-MiniLM-L6-v2", "default"])
@pytest.mark.parametrize("page", PAGES)
def test_every_page_of_a_pasted_paragraph_stays_small(shipped_model, page, model):
    at = _app(page, model, {"sentence": paragraph(2000)})
    assert not at.exception, at.exception[0].message if at.exception else ""
    sizes = [len(chart.proto.spec) for chart in at.get("plotly_chart")]
    assert sum(sizes) <= CHART_BUDGET, sizes
    for chart in at.get("plotly_chart"):  # no axis promises more ticks than fit (labels stay readable)
        spec = json.loads(chart.proto.spec)
        for name, axis in spec["layout"].items():
            if re.fullmatch(r"[xy]axis\d*", name) and axis.get("tickmode") == "array":
                assert len(axis.get("ticktext", [])) <= MOST_SHOWN, (page, name)


@pytest.mark.slow
def test_the_window_and_colour_travel_in_the_url(shipped_model):
    at = _app(
        "pages/2_attention.py", "all-MiniLM-L6-v2", {"sentence": paragraph(2000), "window": "200-259", "colour": "log"}
    )
    assert not at.exception and not at.warning, [w.value for w in at.warning]
    assert at.slider(key="w_window").value == (200, 259)
    heads = next(
        json.loads(c.proto.spec)
        for c in at.get("plotly_chart")
        if "every head" in json.loads(c.proto.spec)["layout"]["title"]["text"]
    )
    assert "queries 200–259" in heads["layout"]["title"]["text"]
    assert heads["layout"]["coloraxis"]["colorbar"]["title"]["text"] == "log₁₀ weight"
    at.slider(key="w_window").set_value((10, 30)).run()
    assert at.query_params["window"] == "10-30" and not at.exception
    wide = _app("pages/2_attention.py", "all-MiniLM-L6-v2", {"sentence": paragraph(2000), "window": "0-400"})
    assert wide.slider(key="w_window").value == (0, MOST_SHOWN - 1)  # at most MOST_SHOWN pieces at once
    short = _app("pages/2_attention.py", "default", {"sentence": "The cat eats the apple.", "window": "5-9"})
    assert not short.exception and not [s for s in short.slider if s.key == "w_window"]  # nothing to window
    bad = _app("pages/2_attention.py", "default", {"window": "9-2"})
    assert any("window" in w.value for w in bad.warning)
