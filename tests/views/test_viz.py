"""viz/: pure figure and table builders (no streamlit), checked on real traces of the tiny model."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest

from i18n import speaking
from model import Interventions
from model.results import Step
from ui.page.markup import APP_CSS, CJK_CSS, HIDE_OLD_PAGE, PLAYING_CSS, PRESENTATION_CSS
from viz.attention import (
    attention_heads,
    attention_map,
    check_pattern,
    model_view,
    model_view_cell,
    model_view_legend,
)
from viz.export import page_html, toolbar_config
from viz.flow import flow_diagram
from viz.labels import axis_labels, display_piece, distinct_labels, escape_plotly, thin_ticks
from viz.masks import (
    fixed_output_probabilities,
    knockout_frame,
    mask_comparison,
    probability_comparison,
    score_pipeline,
)
from viz.positional import encoding_curves, similarity_matrix, vector_sizes, wavelength
from viz.shapes import as_matrix, stage_stats, stages_frame, symbolic_shape, tensor_heatmap
from viz.style import WIDE_FIGURE_PX, Style, keeps_its_width
from viz.tiles import TILE_CAPTION
from viz.training import card_frame, log_frame, loss_curves, lr_curve, metric_curves
from viz.translate import beams_frame, pieces_frame, step_candidates, steps_frame

VIZ = Path(__file__).resolve().parents[2] / "viz"


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """Like the app (ui.session.engine): small matrices run fastest on one thread, above all on a busy machine."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def result(tiny_bundle):
    return tiny_bundle.translate("The small girl sees a white bird")


def test_viz_never_imports_streamlit_or_torch():
    for path in VIZ.glob("*.py"):
        tree = ast.parse(path.read_text())
        names = {
            alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
        }
        names |= {(node.module or "").split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert not names & {"streamlit", "torch"}, path.name


def test_labels_strip_the_word_marker_and_make_repeats_distinct():
    assert display_piece("▁cat") == "cat"
    assert display_piece("▁") == "␣"
    assert distinct_labels(["▁le", "▁chat", "▁le", "</s>"]) == ["le₀", "chat", "le₂", "</s>"]
    assert len(set(distinct_labels(["a"] * 120))) == 120
    assert axis_labels(["<s>", "▁a&b", "<0xF0>"]) == ["&lt;s&gt;", "a&amp;b", "⟨F0⟩"]  # a byte fallback piece
    assert escape_plotly("<b>x</b>") == "&lt;b&gt;x&lt;/b&gt;"


@pytest.mark.parametrize("n", [1, 5, 12, 40, 90])
def test_thinned_ticks_never_overlap(n):
    axis_px, font = 300.0, 11
    positions, texts = thin_ticks([str(i) for i in range(n)], axis_px, font)
    assert positions[0] == 0 and len(positions) == len(texts)
    spacing = axis_px / n * (positions[1] - positions[0]) if len(positions) > 1 else axis_px
    assert spacing >= font * 1.3 - 1e-9


def test_pattern_shape_mismatch_is_explained():
    with pytest.raises(ValueError, match="does not match 2 query tokens x 3 key tokens"):
        check_pattern(np.zeros((4, 3, 3)), ["a", "b"], ["a", "b", "c"])


def test_attention_heads_one_panel_per_head_on_a_fixed_scale(result):
    trace = result.trace
    pattern = trace.pattern("decoder", "cross", 0)
    fig = attention_heads(
        pattern, trace.tgt_pieces, trace.src_pieces, Style(), "cross", highlight_row=2, knocked_out=(1,)
    )
    assert len(fig.data) == pattern.shape[0]
    assert (fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax) == (0.0, 1.0)
    assert [a.text for a in fig.layout.annotations][:2] == ["H1", "H2 (knocked out)"]
    assert len(fig.layout.shapes) == pattern.shape[0]  # the step-t row outlined in every head
    assert "&lt;s&gt;" in fig.data[0].y and "<s>" not in fig.data[0].y
    assert "query" in fig.data[0].hovertemplate and "key" in fig.data[0].hovertemplate


def test_head_average_and_presentation_style(result):
    trace = result.trace
    pattern = trace.pattern("encoder", "self", 1)
    fig = attention_map(pattern.mean(axis=0), trace.src_pieces, trace.src_pieces, Style(presentation=True), "avg")
    assert fig.layout.template.layout.font.size == 20 and fig.data[0].colorscale is not None
    assert fig.layout.template.layout.xaxis.tickfont.size == 17 and fig.layout.title.font.size == 26
    assert np.allclose(np.asarray(fig.data[0].z).sum(axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize("colour", ["linear", "row", "log"])
def test_a_maps_cells_print_the_weights_in_every_colour_scale(result, colour):
    """Under a per-row or log₁₀ colour the cells still print the weights themselves (they once printed "-":
    plotly's heatmap text knows no customdata)."""
    trace = result.trace
    pattern = trace.pattern("encoder", "self", 0)[0]
    pieces = trace.src_pieces
    fig = attention_map(pattern, pieces, pieces, Style(), "head", colour=colour, show_values=True)
    heatmap = fig.data[0]
    assert heatmap.texttemplate == "%{text}"
    printed = np.array([[float(cell) for cell in row] for row in heatmap.text])
    assert printed.shape == pattern.shape
    assert np.allclose(printed, pattern, atol=0.005 + 1e-9)


def test_model_view_tiles_every_layer_and_head_and_maps_clicks_back(result):
    trace = result.trace
    n = 20  # short enough that no tile is pooled: every weight is drawn as it is
    patterns = [trace.pattern("decoder", "self", layer)[:, :n, :n] for layer in range(2)]
    pieces = trace.tgt_pieces[:n]
    fig = model_view(patterns, pieces, pieces, Style(), "view", selected=(1, 2))
    z = np.asarray(fig.data[0].z, dtype=float)
    assert np.isclose(np.nansum(z), sum(p.sum() for p in patterns), rtol=1e-4)
    assert len(set(fig.data[0].x)) == len(fig.data[0].x) and len(set(fig.data[0].y)) == len(fig.data[0].y)
    for layer in range(2):
        for head in range(patterns[0].shape[0]):
            x = next(label for label in fig.data[0].x if label.startswith(f"H{head + 1} · "))
            y = next(label for label in fig.data[0].y if label.startswith(f"L{layer + 1} · "))
            assert model_view_cell(x, y) == (layer, head)
    assert model_view_cell("\u200b\u200b", "L1 · x") is None


def test_translate_tables_and_candidates(result, tiny_bundle):
    trace = result.trace
    frame = pieces_frame(trace.src_pieces, list(trace.src_ids))
    assert list(frame.columns) == ["position", "piece", "reads", "id"] and len(frame) == len(trace.src_pieces)
    steps = steps_frame(result.steps)
    assert len(steps) == len(result.steps) and "#5" in steps.columns
    fig = step_candidates(result.steps, Style())
    assert np.asarray(fig.data[0].z).shape == (len(result.steps), 5)
    beams = tiny_bundle.translate("I drink water", options=__import__("model").DecodeOptions(beam_size=3)).beams
    assert list(beams_frame(beams)["rank"]) == list(range(1, len(beams) + 1))


def test_candidates_whose_words_overflow_a_phones_cells_keep_their_width():
    """A phone keeps the candidates' words (they are the picture): words wider than a phone's cells have the chart
    kept 760 px wide and scrolled sideways, short ones leave it at the phone's width."""
    short = [Step(i, "a", 0.5, [("a", 0.5), ("b", 0.2), ("c", 0.1)]) for i in range(3)]
    assert not keeps_its_width(step_candidates(short, Style()))
    long = [
        Step(i, "capital", 0.5, [("capital", 0.5), ("Capital", 0.2), ("answer", 0.1), ("most", 0.1), ("cap", 0.05)])
        for i in range(3)
    ]
    assert keeps_its_width(step_candidates(long, Style()))


def test_positional_figures(tiny_bundle, result):
    from model.engine.positional import sinusoidal_encoding

    table = sinusoidal_encoding(48, 32).numpy()
    curves = encoding_curves(table, [0, 1, 10], Style())
    assert [t.name.split(" ")[1] for t in curves.data] == ["0", "1", "10"]
    assert wavelength(0, 32) == pytest.approx(2 * np.pi)
    sim = np.asarray(similarity_matrix(table, Style()).data[0].z)
    assert np.allclose(np.diag(sim), 1.0, atol=1e-5)
    trace = result.trace
    sizes = vector_sizes(
        trace.tensor("src_embed.hook_token")[0],
        trace.tensor("src_embed.hook_scaled")[0],
        trace.tensor("src_embed.hook_position")[0],
        trace.src_pieces,
        Style(),
    )
    token, scaled = (np.asarray(bar.y) for bar in sizes.data[:2])
    assert np.allclose(scaled, token * np.sqrt(32), rtol=1e-4)
    with pytest.raises(ValueError):
        encoding_curves(table, [32], Style())


def test_every_stage_has_a_symbolic_shape_matching_its_numbers(result, tiny_bundle):
    trace, cfg = result.trace, tiny_bundle.config
    sizes = {
        "B": 1,
        "S": len(trace.src_pieces),
        "T": len(trace.tgt_pieces),
        "h": cfg.n_heads,
        "d_k": cfg.d_k,
        "d_model": cfg.d_model,
        "h·d_k": cfg.d_attention,
        "d_ff": cfg.d_ff,
        "vocab": cfg.vocab_size,
    }
    for name, shape in trace.stages:
        symbols = symbolic_shape(name, len(shape)).strip("()").split(", ")
        assert tuple(sizes[s] for s in symbols) == shape, name
    frame = stages_frame(trace.tensors)
    assert list(frame["stage"]) == [name for name, _ in trace.stages]
    assert frame["stage"].iloc[0] == "src_embed.hook_ids" and frame["stage"].iloc[-1] == "hook_logits"


def test_masked_scores_statistics_count_the_minus_infinities(result):
    masked = result.trace.tensor("decoder.layers.0.self_attn.hook_masked_scores")
    stats = stage_stats(masked)
    t = masked.shape[-1]
    assert stats["masked"] == masked.shape[1] * t * (t - 1) // 2
    assert np.isfinite(stats["min"])


def test_tensor_heatmap_and_flow_diagram(result):
    trace = result.trace
    matrix = as_matrix(trace.tensor("decoder.layers.0.self_attn.hook_masked_scores"), head=1)
    fig = tensor_heatmap(matrix, trace.tgt_pieces, Style(), "masked")
    assert np.isnan(np.asarray(fig.data[0].z, dtype=float)).any()  # -inf drawn as blank
    cross = as_matrix(trace.tensor("decoder.layers.0.cross_attn.hook_pattern"))
    keyed = tensor_heatmap(cross, trace.tgt_pieces, Style(), "cross", "key", trace.src_pieces)
    assert list(keyed.data[0].x) == axis_labels(trace.src_pieces) and keyed.layout.xaxis.title.text == "key"
    flow = flow_diagram(dict(trace.stages), Style())
    texts = " ".join(a.text or "" for a in flow.layout.annotations)
    assert "(B, S, d_model)" in texts and f"1×{len(trace.src_pieces)}×32" in texts and "(B, T, vocab)" in texts


def _first_head_pipeline(trace, title: str):
    """The decoder's first self-attention head, scores to mask to softmax, as the Masks lab draws it."""
    prefix = "decoder.layers.0.self_attn."
    return score_pipeline(
        trace.tensor(prefix + "hook_scores")[0, 0],
        trace.tensor(prefix + "hook_masked_scores")[0, 0],
        trace.tensor(prefix + "hook_pattern")[0, 0],
        trace.tgt_pieces,
        trace.tgt_pieces,
        Style(),
        title,
    )


def test_score_pipeline_and_mask_comparison(tiny_bundle, result):
    trace = result.trace
    fig = _first_head_pipeline(trace, "p")
    # the three panels, then the masked cells as one grey area with a legend entry (no "−∞" in any cell)
    assert [t.type for t in fig.data[:3]] == ["heatmap"] * 3 and fig.data[3].name == "masked (−∞)"
    off = tiny_bundle.teacher_forced(result.source, result.output_ids, Interventions(causal_mask=False))
    comparison = mask_comparison(
        trace.pattern("decoder", "self", 0)[0],
        off.pattern("decoder", "self", 0)[0],
        trace.tgt_pieces,
        trace.tgt_pieces,
        Style(),
        "causal",
    )
    assert np.triu(np.asarray(comparison.data[1].z), 1).max() > 0


def test_probability_comparison_and_knockout_ranking(result):
    fig = probability_comparison(result.steps, result.steps, Style())
    assert [t.name for t in fig.data] == ["before", "after"]
    rows = [
        {
            "head": ("decoder", "cross", 0, h),
            "translation": "x" if h == 2 else "base",
            "log_prob": -10.0 - h,
            "base_translation": "base",
            "base_log_prob": -10.0,
        }
        for h in range(4)
    ]
    frame = knockout_frame(rows, {("decoder", "cross", 0, h): f"decoder cross L1 H{h + 1}" for h in range(4)})
    assert list(frame["head"]) == [f"decoder cross L1 H{h}" for h in (4, 3, 2, 1)]
    assert list(frame["translation changed"]) == [False, True, False, False]
    fig = fixed_output_probabilities(["▁le", "</s>"], [-0.1, -0.2], [-1.0, -0.2], Style())
    assert np.allclose(fig.data[1].y, np.exp([-1.0, -0.2]))
    assert "&lt;/s&gt;" in fig.data[0].x[1]


def test_training_curves_from_the_engine_log_format():
    records = [
        {"step": s, "epoch": 0, "loss": 7 - s / 100, "lr": s * 1e-6, "tokens_per_s": 4000.0} for s in range(25, 500, 25)
    ]
    records += [
        {"step": 250, "valid_bleu": 20.0, "valid_chrf": 50.0, "valid_exact_match": 5.0},
        {"step": 500, "valid_bleu": 33.0, "valid_chrf": 60.0, "valid_exact_match": 9.0},
    ]
    frame = log_frame(records)
    # the legends name the trainer's columns in words, not as the log's keys ("valid_chrf")
    assert [t.name for t in loss_curves(frame, Style()).data] == ["training loss"]
    assert [t.name for t in lr_curve(frame, Style()).data] == ["learning rate"]
    scores = metric_curves(frame, Style())
    assert [t.name for t in scores.data] == ["validation BLEU", "validation chrF", "validation exact match (%)"]
    assert scores.layout.xaxis.title.text == "step"
    with speaking("zh"):
        assert [t.name for t in loss_curves(frame, Style()).data] == ["训练损失"]
    unknown = log_frame([{"iter": 1, "my_loss": 2.0}, {"iter": 2, "my_loss": 1.0}])
    assert [t.name for t in loss_curves(unknown, Style()).data] == ["my_loss"]  # a column of another trainer
    assert loss_curves(log_frame([{"step": 1}]), Style()) is None
    card = card_frame(
        {"name": "m", "known_words": list("abcdefghijklmnop"), "validation": {"bleu": 33.2}}, {"d_model": 32}
    )
    values = dict(zip(card["field"], card["value"], strict=True))
    assert (
        values["known_words"] == "16 items" and values["validation.bleu"] == "33.2" and values["config.d_model"] == "32"
    )


def test_page_html_is_self_contained(result):
    fig = step_candidates(result.steps, Style())
    html = page_html("A <title>", [("first <b>", fig), ("second", fig)], intro="typed <script>", image_format="svg")
    assert html.count("plotly.js v") == 1  # the library is inlined once
    assert not re.search(r"<script[^>]*\ssrc=", html) and not re.search(r"<link[^>]*href=", html)  # nothing fetched
    assert "A &lt;title&gt;" in html and "typed &lt;script&gt;" in html and "first &lt;b&gt;" in html
    assert html.count('"format": "svg"') == 2 or html.count('"format":"svg"') == 2
    assert toolbar_config("png")["toImageButtonOptions"] == {
        "format": "png",
        "scale": 3,
        "filename": "transformer-anatomy",
    }
    with pytest.raises(ValueError):
        toolbar_config("gif")


def test_no_colour_collides_with_streamlit_theme_placeholders(result):
    """Streamlit's frontend rewrites colours #000001.. in chart JSON; Inferno's #000004 turned lavender."""
    trace = result.trace
    for presentation in (False, True):
        style = Style(presentation=presentation)
        figures = [
            attention_map(trace.pattern("encoder", "self", 0)[0], trace.src_pieces, trace.src_pieces, style, "a"),
            step_candidates(result.steps, style),
            probability_comparison(result.steps, result.steps, style),
        ]
        for fig in figures:
            assert not re.search(r"#0000(0[1-9a-f]|[1-9a-f][0-9a-f])\b", fig.to_json(), re.IGNORECASE)


def test_alignment_heatmap_and_scores_from_a_card():
    from viz.style import Style
    from viz.training import alignment_heatmap, scores_frame

    card = {
        "test": {"bleu": 99.5, "chrf": 99.9, "exact_match": 98.0, "n": 2000},
        "typed_variations": {"identical_share": 100.0, "sentences": 200, "variants_each": 4},
        "alignment": {
            "per_layer_head": [[10.0, 20.0], [85.5, 40.0]],
            "best": {"layer": 1, "head": 0, "agreement": 85.5},
        },
    }
    fig = alignment_heatmap(card["alignment"]["per_layer_head"], Style())
    assert fig.data[0].z[1][0] == 85.5 and list(fig.data[0].y) == ["L1", "L2"]
    assert (fig.data[0].zmin, fig.data[0].zmax) == (0, 100)
    frame = scores_frame(card)
    assert list(frame["value"]) == ["99.50", "99.90", "98.00", "100.0", "85.5"]
    assert "decoder layer 2, head 1" in frame["measured on"].iloc[-1]
    assert scores_frame({}).empty


def test_mean_norms_are_measured_not_assumed():
    from viz.positional import mean_norms

    token = np.array([[3.0, 4.0], [0.0, 1.0]])
    assert mean_norms(token, token * 2, np.zeros((2, 2))) == pytest.approx((3.0, 6.0, 0.0))


def test_model_view_marks_knocked_out_heads(result):
    trace = result.trace
    patterns = [trace.pattern("decoder", "cross", layer) for layer in range(trace.n_layers("decoder"))]
    fig = model_view(patterns, trace.tgt_pieces, trace.src_pieces, Style(), "view", knocked_out={(0, 1)})
    tiles = fig.data[1]
    heads = patterns[0].shape[0]
    assert tiles.marker.symbol[1] == "x" and tiles.marker.symbol.count("x") == 1
    assert "knocked out" in tiles.hovertext[1] and "knocked out" not in tiles.hovertext[heads]


def test_model_view_frames_each_group_of_query_heads_sharing_a_key_value_head():
    rng = np.random.default_rng(0)
    layers, heads, n = 4, 6, 5
    patterns = [rng.dirichlet(np.ones(n), size=(heads, n)) for _ in range(layers)]
    pieces = [f"p{i}" for i in range(n)]
    fig = model_view(patterns, pieces, pieces, Style(), "view", group=3)
    frames = [s for s in fig.layout.shapes if s.type == "rect" and s.line.dash == "dot"]
    assert len(frames) == 2, "one frame per key/value head, down every layer"
    names = [a.text for a in fig.layout.annotations if a.text.startswith("K/V")]
    assert names == ["K/V 1 (H1-H3)", "K/V 2 (H4-H6)"]
    xs = list(fig.data[0].x)
    first, second = sorted(frames, key=lambda s: s.x0)
    # the first frame holds heads 1-3 and the second heads 4-6, each from the first layer's tiles to the last's
    assert first.x0 < xs.index("H1 · p0") and xs.index("H3 · p4") < first.x1 < xs.index("H4 · p0")
    assert first.x1 <= second.x0 < xs.index("H4 · p0") and second.x1 > xs.index("H6 · p4")
    ys = list(fig.data[0].y)
    assert first.y0 < ys.index("L1 · p0") and first.y1 > ys.index("L4 · p4")
    assert not [s for s in model_view(patterns, pieces, pieces, Style(), "view").layout.shapes if s.line.dash == "dot"]


def test_model_view_writes_each_tagged_heads_role_inside_its_own_tile(result):
    trace = result.trace
    patterns = [trace.pattern("decoder", "cross", layer) for layer in range(trace.n_layers("decoder"))]
    heads = patterns[0].shape[0]
    fig = model_view(patterns, trace.tgt_pieces, trace.src_pieces, Style(), "view", roles={(1, 0): "last"})
    [caption] = _captions(fig)
    ys = list(fig.data[0].y)
    first_row = next(i for i, y in enumerate(ys) if model_view_cell("H1 · x", y) == (1, 0) and "\u200b" not in y)
    assert caption.text == ("last",) and (caption.x, caption.y) == ((-0.5,), (first_row - 0.5,))  # the tile's edge
    assert caption.textposition == "top right"  # over the gap above the tile, not on its cells
    # on hidden axes over the tiles' own, numbered by cell: the caption's coordinates are the tiles' rows and columns
    assert fig.layout.xaxis2.overlaying == "x" and tuple(fig.layout.xaxis2.range) == (-0.5, len(fig.data[0].x) - 0.5)
    assert fig.layout.yaxis2.overlaying == "y" and tuple(fig.layout.yaxis2.range) == (len(ys) - 0.5, -0.5)
    assert not fig.layout.annotations and not keeps_its_width(fig)  # no annotation to measure; not panels
    assert "role: last" in fig.data[1].hovertext[heads]
    assert model_view_legend({(1, 0): "last"}, set(), len(patterns), heads) == "L2 H1: last"


@pytest.mark.parametrize("presentation", [False, True])
@pytest.mark.parametrize(("layers", "pieces"), [(3, 9), (30, 44), (30, 300)])
def test_a_tile_caption_fits_the_gap_above_its_tile(layers, pieces, presentation):
    """A caption written over a tile hid its first rows (issue 50: "alignment (corpus)" over the model view's top
    row); the gap above each tile is now at least a caption's height, at SmolLM2's 30 layers and pooled too."""
    rng = np.random.default_rng(0)
    patterns = [rng.dirichlet(np.ones(pieces), size=(4, pieces)).astype(np.float32) for _ in range(layers)]
    words = [f"w{i}" for i in range(pieces)]
    style = Style(presentation=presentation)
    roles = {(layer, head): "alignment (corpus)" for layer in range(layers) for head in range(4) if head != 3}
    fig = model_view(patterns, words, words, style, "view", roles=roles)
    ys = list(fig.data[0].y)
    gap_rows = [y for y in ys if y.startswith("L2 · \u200b")]
    margin = fig.layout.margin
    row_px = (fig.layout.height - margin.t - margin.b) / len(ys)
    assert len(gap_rows) * row_px >= style.tick + 6, (len(gap_rows), row_px)
    tile_rows = len([y for y in ys if y.startswith("L2 · ")]) - len(gap_rows)
    assert len(gap_rows) <= tile_rows  # the tile keeps most of its layer's height
    [caption] = _captions(fig)
    assert caption.textposition == "top right" and len(caption.text) == len(roles)


def test_model_view_says_a_role_every_head_shares_once_in_its_title(result):
    trace = result.trace
    patterns = [trace.pattern("decoder", "cross", layer) for layer in range(trace.n_layers("decoder"))]
    heads = patterns[0].shape[0]
    every = {(layer, head): "alignment (corpus)" for layer in range(len(patterns)) for head in range(heads)}
    fig = model_view(patterns, trace.tgt_pieces, trace.src_pieces, Style(), "view", roles=every)
    assert not _captions(fig) and "every head: alignment (corpus)" in fig.layout.title.text
    assert model_view_legend(every, set(), len(patterns), heads) == ""
    some = dict(list(every.items())[:-1])  # one head without: then each tagged tile says it
    [caption] = _captions(model_view(patterns, trace.tgt_pieces, trace.src_pieces, Style(), "v", roles=some))
    assert len(caption.text) == len(some)


def _captions(fig: go.Figure) -> list:
    """The model view's trace of tile captions (none when no tile has one)."""
    return [trace for trace in fig.data if trace.name == TILE_CAPTION]


# ---- issue 32: honest small effects, readable numbers --------------------------------------------


def _texts(fig) -> list[str]:
    """Every text a figure writes: trace texts, text templates and annotations."""
    found = []
    for trace in fig.data:
        for name in ("text", "texttemplate"):
            value = getattr(trace, name, None)
            if value is not None:
                found += [str(v) for v in np.asarray(value, dtype=object).ravel()]
    return found + [a.text or "" for a in fig.layout.annotations]


@pytest.mark.parametrize("presentation", [False, True])
def test_masked_cells_are_one_grey_area_with_a_legend_entry_and_no_cell_text(result, presentation):
    trace = result.trace
    prefix = "decoder.layers.0.self_attn."
    scores = trace.tensor(prefix + "hook_scores")[0, 0]
    masked = trace.tensor(prefix + "hook_masked_scores")[0, 0]
    fig = score_pipeline(
        scores,
        masked,
        trace.tensor(prefix + "hook_pattern")[0, 0],
        trace.tgt_pieces,
        trace.tgt_pieces,
        Style(presentation=presentation),
        "p",
    )
    assert not any("∞" in text for text in _texts(fig))  # no per-cell "−∞" labels, in either mode
    overlay = next(t for t in fig.data if t.type == "heatmap" and t.name == "masked (−∞)")
    grey = np.isfinite(np.asarray(overlay.z, dtype=float))
    np.testing.assert_array_equal(grey, ~np.isfinite(masked))  # exactly the masked cells: the upper triangle
    assert grey.sum() == len(trace.tgt_pieces) * (len(trace.tgt_pieces) - 1) // 2
    assert overlay.xaxis == "x2" and overlay.showscale is False  # on the middle panel, no colour bar of its own
    legend = [t for t in fig.data if t.showlegend]
    assert [t.name for t in legend] == ["masked (−∞)"] and fig.layout.showlegend
    # under the toolbar plotly shows at the top right on hover, in a top margin grown to hold it
    assert fig.layout.legend.yref == "container" and fig.layout.legend.y * fig.layout.height <= fig.layout.height - 28
    assert fig.layout.margin.t >= 88


def test_a_block_without_a_mask_draws_no_masked_area(result):
    trace = result.trace
    prefix = "encoder.layers.0.self_attn."  # one sentence: no padding, no causal mask
    scores = trace.tensor(prefix + "hook_scores")[0, 0]
    fig = score_pipeline(
        scores,
        trace.tensor(prefix + "hook_masked_scores")[0, 0],
        trace.tensor(prefix + "hook_pattern")[0, 0],
        trace.src_pieces,
        trace.src_pieces,
        Style(),
        "p",
    )
    assert len(fig.data) == 3 and not any(t.showlegend for t in fig.data)


def test_a_minus_1e9_fill_is_named_as_such():
    from viz.masks import masked_cells

    scores = np.array([[1.0, 2.0], [0.5, -0.5]], dtype=np.float32)
    masked = np.array([[1.0, -1e9], [0.5, -0.5]], dtype=np.float32)
    assert masked_cells(scores, masked).tolist() == [[False, True], [False, False]]
    fig = score_pipeline(scores, masked, np.array([[1.0, 0.0], [0.7, 0.3]]), ["a", "b"], ["a", "b"], Style(), "p")
    assert [t.name for t in fig.data if t.showlegend] == ["masked (set to −10⁹)"]


def test_probability_axes_stop_at_one(result):
    for fig in (
        probability_comparison(result.steps, result.steps, Style()),
        fixed_output_probabilities(["▁le", "</s>"], [-0.1, -0.2], [-1.0, -0.2], Style()),
    ):
        assert tuple(fig.layout.yaxis.range) == (0, 1)


def _sweep(drops: list[float], changed: list[bool]) -> list[dict]:
    return [
        {
            "head": ("decoder", "cross", 0, h),
            "translation": "other" if moved else "base",
            "log_prob": -1.0 - drop,
            "base_translation": "base",
            "base_log_prob": -1.0,
        }
        for h, (drop, moved) in enumerate(zip(drops, changed, strict=True))
    ]


LABELS = {("decoder", "cross", 0, h): f"decoder cross L1 H{h + 1}" for h in range(4)}


@pytest.mark.parametrize(
    "drops, changed",
    [
        ([0.0088, 0.006, 0.004, -0.001], [False] * 4),  # the shipped model's sweep: nothing matters alone
        ([2.5, 0.6, 0.01, 0.0], [True, False, False, False]),
        ([3.0, 2.0, 1.0, 0.5], [True] * 4),
    ],
)
def test_knockout_caption_says_red_only_when_a_bar_is_red(drops, changed):
    from viz.masks import SMALL_DROP, knockout_caption, knockout_chart

    frame = knockout_frame(_sweep(drops, changed), LABELS)
    fig = knockout_chart(frame, Style())
    bar_colours = list(fig.data[0].marker.color)
    red = Style().palette[3]
    caption = knockout_caption(frame)
    assert ("red" in caption) == (red in bar_colours)
    assert ("every bar is blue" in caption) == (red not in bar_colours)
    within = max(drops) < SMALL_DROP and not any(changed)
    assert ("No single head matters much" in caption) == within
    if within:
        assert f"{max(drops):.2g}" in caption and "0.9%" in caption  # 1 - exp(-0.0088)
    assert fig.layout.xaxis.exponentformat not in (None, "SI", "B")  # 0.0004 is never written "400μ"


def test_patch_grid_and_lens_colour_bars_write_no_si_prefix():
    from viz.explain import lens_heatmap, patch_effect, patch_grid_map

    grid = np.array([[0.0, -8.1e-4, 2e-4], [1e-4, -5e-4, 3e-4]])
    fig = patch_grid_map(grid, ["source embeddings", "encoder layer 1"], ["▁a", "▁b", "</s>"], Style(), "t")
    assert fig.data[0].colorbar.exponentformat == "power"
    lens = lens_heatmap(np.full((2, 3), 0.5), [["▁a"] * 3] * 2, ["▁a", "▁b", "</s>"], Style())
    assert lens.data[0].colorbar.exponentformat == "power"
    effect = patch_effect(np.array([-0.1, -0.2]), np.array([-0.1, -0.2005]), ["▁a", "</s>"], Style(), "t")
    assert effect.layout.yaxis.exponentformat == "power"


def test_doubts_flag_methods_below_half_agreement_from_the_card_figures():
    from viz.explain import doubts

    agreement = {"attention": 92.2, "rollout": 70.1, "gradient": 20.2, "integrated-gradients": 85.7, "occlusion": 82.8}
    rows = {  # the shipped model on "oiseau": gradient gives "bird" (position 2) the other sign
        "attention": np.array([0.0, 0.1, 0.9]),
        "rollout": np.array([0.2, 0.1, 0.7]),
        "gradient": np.array([0.001, 0.002, -0.013]),
        "integrated-gradients": np.array([0.1, 0.0, 3.6]),
        "occlusion": np.array([0.0, 0.2, 6.7]),
    }
    [doubt] = doubts(agreement, rows)
    assert doubt.method == "gradient" and doubt.agreement == 20.2 and doubt.others_top == 2 and doubt.top == 2
    assert doubt.opposite == ("integrated-gradients", "occlusion") and doubt.peak == pytest.approx(0.013)
    assert doubts({**agreement, "gradient": 60.0}, rows) == []  # the flag follows the card's figure
    rows["gradient"] = np.array([0.02, 0.001, 0.013])
    [doubt] = doubts(agreement, rows)
    assert doubt.top == 0 and doubt.opposite == ()
    assert doubts({}, rows) == []  # a card without explanations flags nothing


def test_design_log_axes_have_plain_power_of_two_ticks():
    from viz.design import softmax_against_width, variance_against_width

    dims = [2, 4, 8, 16, 32, 64, 128, 256, 512]
    for style in (Style(), Style(presentation=True)):
        fig = variance_against_width(dims, np.array(dims, dtype=float) * 1.02, style, "t")
        for axis in (fig.layout.xaxis, fig.layout.yaxis):
            assert axis.type == "log" and axis.tickmode == "array"
            values = list(axis.tickvals)
            assert all(np.log2(v) == int(np.log2(v)) for v in values)  # powers of two
            assert list(axis.ticktext) == [f"{v:g}" for v in values]  # plain numbers, no "5", "2" minor labels
            assert len(values) <= (5 if style.presentation else 9)
        curves = {"largest": np.ones(9), "entropy": np.ones(9), "gradient": np.ones(9)}
        panels = softmax_against_width(dims, curves, curves, style, "t")
        for name in ("xaxis", "xaxis2", "xaxis3"):
            axis = panels.layout[name]
            assert axis.tickmode == "array" and len(axis.tickvals) <= 4 and "2" in axis.ticktext


def _flow_texts(fig) -> str:
    return " ".join(a.text or "" for a in fig.layout.annotations)


@pytest.mark.parametrize("presentation", [False, True])
def test_the_flow_diagram_draws_residuals_and_the_head_split_in_readable_text(result, presentation):
    style = Style(presentation=presentation)
    shapes = dict(result.trace.stages)
    fig = flow_diagram(shapes, style)
    texts = _flow_texts(fig)
    h, d_k = shapes["encoder.layers.0.self_attn.hook_q"][1], shapes["encoder.layers.0.self_attn.hook_q"][3]
    # a split into the h heads and a concat back in each of the three attention boxes
    assert texts.count(f"split into h = {h} heads of d_k = {d_k}") == 3
    assert texts.count(f"concat {h} × {d_k} = {h * d_k} → W_O") == 3
    heads = next(t for t in fig.data if t.name == "heads")
    assert list(heads.x).count(None) == 3 * h  # one outline per head in every box
    # a residual path around each of the five sublayers (2 encoder, 3 decoder), ending in an arrow
    residual = next(t for t in fig.data if t.name == "residual paths")
    assert list(residual.x).count(None) == 2 * 5 and texts.count("residual") == 5
    # every label 14 px or more, larger in presentation mode
    sizes = [a.font.size for a in fig.layout.annotations if a.text]
    assert min(sizes) >= (19 if presentation else 14)


def test_the_flow_diagram_of_a_pre_ln_model_adds_around_each_sublayer(result):
    from viz.shapes import Blueprint

    shapes = dict(result.trace.stages)
    fig = flow_diagram(shapes, Style(), blueprint=Blueprint(norm_first=True, n_heads=4, d_k=8, d_model=32))
    texts = _flow_texts(fig)
    assert texts.count("add (residual)") == 5 and texts.count("residual") == 5 + 5


def test_a_line_break_in_a_bold_line_is_shown_and_sharing_nothing_saves_nothing():
    from viz.cache import _saved
    from viz.labels import NEWLINE_SIGN, on_one_line

    assert on_one_line("Paris.\nThe answer is:  2018\n") == f"Paris. {NEWLINE_SIGN} The answer is: 2018 {NEWLINE_SIGN}"
    assert "\n" not in on_one_line("a\n\nb")
    assert _saved(12 * 64, 12 * 64) == "nothing" and _saved(9 * 64, 3 * 64) == "3× less" and _saved(5, 0) == ""


def test_panels_side_by_side_and_the_flow_keep_their_width_on_a_phone(result):
    """viz.style.keeps_its_width marks what a phone draws 760 px wide and scrolls (ui.page.markup's phone CSS)."""
    trace = result.trace
    cross = as_matrix(trace.tensor("decoder.layers.0.cross_attn.hook_pattern"))
    single = tensor_heatmap(cross, trace.tgt_pieces, Style(), "cross")
    pipeline = _first_head_pipeline(trace, "L1 H1")
    assert not keeps_its_width(single)
    assert keeps_its_width(pipeline) and keeps_its_width(flow_diagram(dict(trace.stages), Style()))
    assert keeps_its_width(fixed_output_probabilities(["▁le", "</s>"], [-0.1, -0.2], [-1.0, -0.2], Style()))
    assert f"min-width: {WIDE_FIGURE_PX}px" in APP_CSS


def test_no_style_rule_asks_the_whole_app_what_it_holds():
    """A :has() on the app's root made chromium match the whole page again at each label plotly measures (0.3-0.4 s
    of a real model's Attention page, bench/browser_work.py): the busy sign reads the app's run state, and the rules
    that hide the old page under a stream come with the stream's mark (ui/page/stream.py)."""
    for css in (APP_CSS, PRESENTATION_CSS, CJK_CSS, HIDE_OLD_PAGE, PLAYING_CSS):
        assert '[data-testid="stApp"]:has(' not in css
    assert '[data-test-script-state="running"]' in APP_CSS
    assert '[data-stale="true"] { display: none; }' in HIDE_OLD_PAGE


def test_a_map_with_more_labelled_columns_than_a_phone_holds_keeps_its_width(result):
    cross = as_matrix(result.trace.tensor("decoder.layers.0.cross_attn.hook_pattern"))
    pieces = [f"▁w{i}" for i in range(40)]
    wide = tensor_heatmap(np.zeros((40, 40)), pieces, Style(), "self", "key", pieces)
    assert keeps_its_width(wide) and not keeps_its_width(tensor_heatmap(cross, result.trace.tgt_pieces, Style(), "x"))


def test_a_chart_whose_title_is_longer_than_a_phones_line_keeps_its_width():
    short = Style().apply(go.Figure(), "L1 H1")
    long = Style().apply(go.Figure(), "Average of the 9 heads · " + "x" * 40)
    marked_up = Style().apply(go.Figure(), "<b>" + "a" * 30 + "</b><br>" + "b" * 30)  # two lines, 30 letters each
    assert keeps_its_width(long) and not keeps_its_width(short) and not keeps_its_width(marked_up)


def _panels_side_by_side(style: Style) -> dict[str, go.Figure]:
    """Every figure drawn as subplots (plotly's make_subplots), on small inputs."""
    from viz.cache import cache_growth
    from viz.design import softmax_against_width
    from viz.relative_bias import bias_against_distance
    from viz.rotary import two_bases
    from viz.windows import window_masks

    rng = np.random.default_rng(0)
    pieces = [f"w{k}" for k in range(6)]
    causal = np.tril(np.ones((6, 6), bool))
    curves = {name: rng.random(3) for name in ("largest", "entropy", "gradient")}
    distances = np.arange(-8, 9)
    return {
        "windows": window_masks([causal, causal], ["a", "b"], pieces, style, "t"),
        "design": softmax_against_width([8, 16, 32], curves, curves, style, "t"),
        "bias": bias_against_distance(distances, abs(distances) // 3, rng.normal(size=(2, 17)), style, "t", 8),
        "rotary": two_bases([rng.random((6, 4)), rng.random((6, 4))], ["a", "b"], style, "t"),
        "cache": cache_growth(rng.random((6, 2, 2)), rng.random((6, 2, 2)), pieces, 4, 1, style, "t"),
    }


@pytest.mark.parametrize("presentation", [False, True])
def test_subplots_are_drawn_on_the_style_s_template_alone(presentation):
    """make_subplots starts from plotly's own template: set on it afterwards, the style's was merged into it (its
    grid, its colour bars' look, 6 kB more per chart sent and 15 ms more to build each)."""
    style = Style(presentation=presentation)
    for name, fig in _panels_side_by_side(style).items():
        assert fig.layout.template == go.layout.Template(style.template), name
