"""What the views say at a real decoder's size and with its habits, without the model: 30 layers x 9 heads
(SmolLM2-135M), a 512-piece sliding window past a 600-piece text (Gemma 3), a first piece that takes most of the
attention (a sink), byte-level pieces of characters outside ASCII. Each view stays readable, shows the first
piece where the weight lands, and says only what its figures support."""

from __future__ import annotations

import numpy as np
import pytest
from test_long_views import pieces, softmax_rows

from model.analysis.roles import role, role_scores
from model.analysis.sinks import QUIET, Sinks, first_share, first_shares, summary
from views.sinks import by_layer
from viz.attention import attention_heads, attention_map, model_view
from viz.cache import bytes_by_step, shared_heads_table
from viz.explain import lens_heatmap, roles_summary
from viz.flow_boxes import attention_box, embedding_box
from viz.labels import display_piece
from viz.levels import LEVELS, level_image, level_scale, level_ticks
from viz.shapes import Blueprint, weights_frame
from viz.sinks import sink_shares
from viz.style import Style
from viz.windows import MOST_CELLS, window_masks

SMOLLM2 = Blueprint(
    norm="rms", norm_first=True, gated_ffn=True, positional="rotary", scale_embeddings=False, n_heads=9, d_k=64,
    d_model=576, kv_heads=3,
)  # fmt: skip


def _sinks(layer_shares: list[float], heads: int = 3, positions: int = 10, seeing: int | None = None) -> Sinks:
    """Figures of a block whose every head of layer l puts layer_shares[l] on the first piece; the first
    position's residual norm 100 at the middle layer, 10 after the last, the others 1."""
    layers = len(layer_shares)
    norms = np.ones((layers + 1, positions))
    norms[layers // 2, 0], norms[-1, 0] = 100.0, 10.0
    shares = np.repeat(np.array(layer_shares)[:, None], heads, axis=1)
    seen = np.full(layers, positions - 1 if seeing is None else seeing)
    return Sinks("decoder", shares, norms, 10.0, seen)


def test_a_share_counts_the_queries_after_the_first_that_a_window_lets_see_the_first_piece():
    queries, window = 10, 4
    pattern = np.zeros((2, queries, queries))
    pattern[:, 0, 0] = 1.0  # the first query sees itself only
    pattern[:, 1:window, 0] = 0.8  # inside the window: most of the weight on the first piece
    pattern[:, 1:, 1] += 1 - pattern[:, 1:, 0]  # the rest elsewhere; past the window nothing on it (hidden)
    assert np.allclose(first_share(pattern), 0.8 * 3 / 9)  # every query after the first
    assert np.allclose(first_share(pattern, window), 0.8)  # only those that can see it: queries 1-3
    assert np.allclose(first_shares([pattern, pattern], (window, 0)), [[0.8, 0.8], [0.8 / 3, 0.8 / 3]])
    single = np.ones((1, 1, 1))
    assert first_share(single)[0] == 1.0  # one query: its own weight


def test_a_head_is_tagged_sink_by_the_share_the_sink_chart_shows():
    """The first query, which can see nothing but the first piece, no longer tips a head over 0.5: the model
    view's "sink" tags are the sink chart's heads at 0.5 or more."""
    n = 8
    pattern = np.zeros((n, n))
    pattern[0, 0] = 1.0
    for query in range(1, n):
        pattern[query, 0] = 0.45
        pattern[query, 1 : query + 1] = 0.55 / query
    scores = role_scores(pattern, True, True, False)
    assert scores["first"] == pytest.approx(0.45) == first_share(pattern[None])[0]
    assert role(scores) != "sink"  # counted with the first query it would read (1 + 7 x 0.45) / 8 = 0.52
    windowed = pattern.copy()
    windowed[3:, 0] = 0.0  # a window of 3 hides it from queries 3 and on
    windowed[3:, 1] += 0.45
    assert role_scores(windowed, True, True, False, window=3)["first"] == pytest.approx(0.45)
    assert role_scores(windowed, True, True, False)["first"] < 0.2


def test_the_sink_paragraph_names_the_layers_and_only_what_the_figures_support():
    quiet_then_sinks = _sinks([0.05, 0.02, 0.6, 0.7, 0.1, 0.8])
    said = summary(quiet_then_sinks)
    assert (said.weakest, said.strongest, said.later, said.quiet) == (1, 5, (3, 5), ((0, 1), (4, 4)))
    assert said.later_range == pytest.approx((0.1, 0.8)) and said.peak_ratio == 3
    text = by_layer(quiet_then_sinks)
    assert "from **2%** in L2 to **80%** in L6" in text
    assert "the later layers, L4–L6, put **10%–80%** there" in text
    assert f"while L1–L2 and L5 stay under {QUIET:.0%}" in text
    assert "**100×** the median of the others after L3, and **10×** after the last layer" in text
    assert "Little of a sink" not in text
    random_like = by_layer(_sinks([0.12, 0.2, 0.18, 0.3]))
    assert "Little of a sink here" in random_like  # said only when no layer reaches the sink share
    assert "tiny random" not in random_like  # the figures say it of any model, trained or not
    quiet_later = by_layer(_sinks([0.3, 0.12, 0.13]))
    assert "the later layers, L2–L3, put **12%–13%** there." in quiet_later
    assert "stay under" not in quiet_later and "stays under" not in quiet_later  # not the same layers said twice
    assert f"there, while L1 stays under {QUIET:.0%}." in by_layer(_sinks([0.05, 0.12, 0.13]))
    windowed = by_layer(_sinks([0.3, 0.6], positions=600, seeing=511), windows=(512, 512))
    assert "a query at position 512 or later cannot see the first piece" in windowed


def test_the_sink_chart_ends_with_each_layers_mean():
    shares = np.random.default_rng(0).uniform(size=(30, 9))
    fig = sink_shares(shares, Style(), "shares", 0.5)
    heatmap = fig.data[0]
    assert list(heatmap.x[-2:]) == ["\u200b", "layer mean"] and len(heatmap.y) == 30
    assert np.allclose(np.array(heatmap.z)[:, -1], shares.mean(axis=1), atol=1e-6)
    assert np.isnan(np.array(heatmap.z)[:, -2]).all()  # a gap between the heads and the means
    assert [row[-1] for row in heatmap.text] == [f"{m:.0%}" for m in shares.mean(axis=1)]
    for layer, row in enumerate(heatmap.text):  # a head's own figure only where it is a sink
        assert [cell != "" for cell in row[:9]] == list(shares[layer] >= 0.5)


def test_the_first_key_stays_beside_a_window_of_keys_that_leaves_it_out():
    n = 60
    pattern = softmax_rows((9, n, n))
    pattern[:, :, 0] += 5.0  # a sink: most of every row's weight on the first piece
    pattern /= pattern.sum(axis=-1, keepdims=True)
    labels = pieces(n)
    window = (10, 50)
    heatmap = attention_map(pattern[0], labels, labels, Style(), "head", rows=window, columns=window, first=True)
    z = np.array(heatmap.data[0].z)
    assert z.shape == (40, 41) and np.allclose(z[:, 0], pattern[0, 10:50, 0])
    assert np.allclose(z[:, 1:], pattern[0, 10:50, 10:50])
    assert heatmap.data[0].x[0].endswith("₀") and "keys 0 and 10–49 of 60" in heatmap.layout.title.text
    assert any(shape.type == "line" for shape in heatmap.layout.shapes)  # the divider after the first key
    heads = attention_heads(pattern, labels, labels, Style(), "heads", rows=window, columns=window, first=True)
    assert all(np.array(panel.z).shape == (40, 41) for panel in heads.data)
    plain = attention_map(pattern[0], labels, labels, Style(), "head", rows=window, columns=window)
    assert np.array(plain.data[0].z).shape == (40, 40) and "keys 10–49 of 60" in plain.layout.title.text
    whole = attention_map(pattern[0], labels, labels, Style(), "head", rows=(0, 40), columns=(0, 40), first=True)
    assert np.array(whole.data[0].z).shape == (40, 40)  # a window from the first key needs nothing added


def test_thirty_layers_of_nine_heads_fit_in_the_model_view():
    labels = pieces(44)
    deep = model_view([softmax_rows((9, 44, 44), seed=s) for s in range(30)], labels, labels, Style(), "view", group=3)
    assert deep.layout.height <= 2600  # 5,180 px at the shallow models' tile height
    shallow = model_view([softmax_rows((12, 10, 10), seed=s) for s in range(6)], pieces(10), pieces(10), Style(), "v")
    assert shallow.layout.height == 80 + 6 * 170  # a model of 12 layers or fewer keeps its tall tiles


def test_thirty_layers_tiles_too_small_to_point_at_go_as_a_byte_a_cell_the_same_picture():
    """SmolLM2's view of an 81-piece prompt: 2.5 px cells, sent as colour levels with no hover of their own (the
    tile's marker names its head); 5.3 MB of the page's 6 MB before, under 1 MB now."""
    labels = pieces(81)
    patterns = [softmax_rows((9, 81, 81), seed=s) for s in range(30)]
    fig = model_view(patterns, labels, labels, Style(), "view", group=3, colour="auto")
    tiles, markers = fig.data[0], fig.data[1]
    levels = np.asarray(tiles.z)
    assert levels.dtype == np.uint8 and tiles.customdata is None and tiles.hoverinfo == "skip"
    assert len(fig.to_json()) < 1_000_000
    assert markers.hoverinfo == "text" and "click to open this head" in markers.hovertext[0]
    # the same colours: a tile's level is its colour value (weight ÷ its row's largest) on LEVELS steps
    first = levels[levels.any(axis=1)][:32, :32].astype(float)  # L1 H1's 32 × 32 pooled cells
    assert first.min() >= 1 and (np.round((first - 1) / LEVELS, 2) <= 1).all()
    assert (first.max(axis=1) == 1 + LEVELS).all()  # each row's largest is the scale's top, as in "row" colours
    assert (levels == 0).any() and tiles.colorscale[0][1] == "rgba(0,0,0,0)"  # the gaps, clear
    assert list(tiles.colorbar.ticktext) == ["0", "0.2", "0.4", "0.6", "0.8", "1"]
    shallow = model_view([softmax_rows((12, 10, 10), seed=s) for s in range(6)], pieces(10), pieces(10), Style(), "v")
    assert np.asarray(shallow.data[0].z).dtype == np.float32 and "weight" in shallow.data[0].hovertemplate


def test_colour_levels_stand_for_their_values():
    values = np.array([[np.nan, -4.0, -2.0, 0.0, 3.0]])
    assert level_image(values, -4.0, 0.0).tolist() == [[0, 1, 1 + LEVELS // 2, 1 + LEVELS, 1 + LEVELS]]
    assert level_ticks(-4.0, 0.0) == {
        "tickvals": [1.0, 64.5, 128.0, 191.5, 255.0],
        "ticktext": ["−4", "−3", "−2", "−1", "0"],
    }
    scale = level_scale("Viridis")
    assert scale[0] == [0.0, "rgba(0,0,0,0)"] and scale[2] == [1 / 255, "#440154"] and scale[-1] == [1.0, "#fde725"]


def test_a_window_past_the_text_draws_its_band_at_a_fixed_size_with_positions_on_the_axes():
    n, window = 641, 512
    rows, cols = np.indices((n, n))
    sliding, full = (cols <= rows) & (cols > rows - window), cols <= rows
    fig = window_masks([sliding, full], ["sliding", "full"], pieces(n), Style(), "masks", window)
    z = np.array(fig.data[0].z)
    assert max(z.shape) <= MOST_CELLS and "one position in 4 drawn" in fig.layout.title.text
    shown = np.array(fig.data[0].x)
    assert shown[0] == 0 and shown[-1] == 640 and fig.layout.xaxis.type == "linear"  # positions, not hidden labels
    assert np.array_equal(~np.isnan(z), sliding[np.ix_(shown, shown)])
    assert [s.y0 for s in fig.layout.shapes] == [window - 0.5]  # the first query the first piece is out of reach for
    short = window_masks([sliding[:12, :12], full[:12, :12]], ["s", "f"], pieces(12), Style(), "masks", window)
    assert short.layout.xaxis.type == "category" and not short.layout.shapes  # a short text: its pieces named


def test_byte_level_pieces_outside_ascii_read_as_the_characters_they_spell():
    assert display_piece("âĢĵ") == "–" and display_piece("ĠâĢľ") == "“"  # GPT-2's byte stand-ins for e2 80 93
    assert display_piece("ĠcafÃ©") == "café" and display_piece("ðŁĺĢ") == "😀"
    assert display_piece("ĊâĢĵ") == "↵–"
    assert display_piece("âĢ") == "⟨E2 80⟩"  # part of a character's bytes: marked as bytes, never mojibake
    assert display_piece("été") == "été" and display_piece("▁été") == "été" and display_piece("##é") == "##é"


def test_the_lens_of_thirty_layers_fits_and_a_small_model_keeps_its_rows():
    final = np.random.default_rng(1).uniform(size=(30, 8))
    tops = [["▁a"] * 8 for _ in range(30)]
    assert lens_heatmap(final, tops, pieces(8), Style()).layout.height <= 1600  # 2,860 px at 90 a row
    assert lens_heatmap(final[:3], tops[:3], pieces(8), Style()).layout.height == 90 * 3 + 160


def test_roles_are_counted_in_a_sentence():
    import pandas as pd

    roles = pd.DataFrame({"role": ["sink"] * 5 + ["previous"] * 2 + [None] * 3})
    assert roles_summary(roles) == "Of the 10 heads on this text: 5 sink, 2 previous; 3 untagged."


def test_the_cache_is_read_in_mib_and_the_windows_get_their_column():
    self_bytes = np.array([1_704_960, 1_751_040, 1_797_120])
    fig = bytes_by_step(self_bytes, np.zeros(3), 1, Style(), "bytes")
    assert fig.layout.yaxis.title.text == "MiB held" and np.allclose(fig.data[0].y, self_bytes / 1024**2)
    assert bytes_by_step(np.array([46_080]), np.zeros(1), 0, Style(), "b").layout.yaxis.title.text == "KiB held"
    lengths = {"this text": 641, "32k": 32768}
    shared, full = {"this text": 100, "32k": 1000}, {"this text": 400, "32k": 4000}
    table = shared_heads_table(lengths, shared, full, {"this text": 90, "32k": 180}, "with the windows")
    assert list(table.columns)[-1] == "with the windows" and table.loc["32k", "with the windows"] == "180 B"
    assert "with the windows" not in shared_heads_table(lengths, shared, full).columns


def test_the_shapes_say_rotary_positions_and_shared_key_value_heads():
    assert "no positions added" in embedding_box(SMOLLM2, "target", {})
    box = attention_box("masked multi-head self-attention", "decoder", {}, SMOLLM2)
    assert "q, k turned by position (RoPE)" in box and "keys, values: 3 heads, shared" in box
    frame = weights_frame(
        {"decoder.layers.0.self_attn.w_k.weight": (192, 576), "decoder.layers.0.self_attn.w_q.weight": (576, 576)},
        SMOLLM2,
    )
    roles = dict(zip(frame["parameter"], frame["role"], strict=True))
    assert roles["decoder.layers.0.self_attn.w_k.weight"] == (
        "key projection: d_model → h_kv·d_k = 3 × 64 = 192 (3 key/value heads, each shared by 3 query heads)"
    )
    assert roles["decoder.layers.0.self_attn.w_q.weight"] == "query projection: d_model → h·d_k"
    paper = attention_box("multi-head self-attention", "encoder", {}, Blueprint(n_heads=8, d_k=64, d_model=512))
    assert "RoPE" not in paper and "shared" not in paper and "of its output" not in paper
    gemma = Blueprint(norm="rms_plus_one", norm_first=True, sandwich_norm=True, positional="rotary", n_heads=4, d_k=256)
    sandwich = attention_box("masked multi-head self-attention", "decoder", {}, gemma)
    assert sandwich.startswith("RMS norm (1 + w), then") and "then RMS norm (1 + w) of its output" in sandwich


def test_a_half_width_map_thins_its_key_labels_so_that_none_overlaps():
    n = 41  # SmolLM2's wrapped question and the first key: more labels than half a page holds
    pattern = softmax_rows((n, n))
    full = attention_map(pattern, pieces(n), pieces(n), Style(), "head")
    half = attention_map(pattern, pieces(n), pieces(n), Style(), "head", width_px=1150 / 2)
    assert len(full.layout.xaxis.ticktext) == n
    shown = len(half.layout.xaxis.ticktext)
    assert shown < n and (1150 / 2 - 250) / shown >= Style().tick * 1.3  # a label's height of room each
