"""The position, shape and design pages on T5 (both variants) and GPT-2 folders that transformers makes
(tests/hf_fixtures.py), offered through $ANATOMY_MODELS; and the pure figures of T5's relative-position
bias against what the engine's own bucketing gives."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hf_fixtures import make_gpt2_dir, make_t5_dir
from test_app import array, assert_clean, chart_titled, charts, run
from test_app_models import texts

from model import load_bundle
from model.engine import stages
from model.engine.positional import relative_buckets
from views.controls import PREFIX, typed_prefix
from viz.flow import flow_diagram
from viz.relative_bias import bias_against_distance, bias_heatmaps, bucket_spans, distance_profile
from viz.shapes import Blueprint, symbolic_shape, weights_frame
from viz.style import Style

T5, FLAN, GPT2 = "tiny-t5", "tiny-flan", "tiny-gpt2"
MODELS = (T5, FLAN, GPT2)
PAGES = [
    "pages/3_positional_encoding.py",
    "pages/4_tensor_shapes.py",
    "pages/6_design_choices.py",
    "pages/7_training.py",
]
SENTENCE = "the cat sat on the mat"


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """T5 with its task prefix (ReLU, tied head), flan-T5 without one and with heads narrower than
    d_model / h (gated GELU, its own head), and GPT-2."""
    root = tmp_path_factory.mktemp("models")
    return {
        T5: make_t5_dir(root / T5, variant="t5"),
        FLAN: make_t5_dir(root / FLAN, variant="flan", task_prefix=False, d_kv=4),
        GPT2: make_gpt2_dir(root / GPT2),
    }


@pytest.fixture(autouse=True)
def models_env(folders, monkeypatch):
    monkeypatch.setenv("ANATOMY_MODELS", ":".join(str(path) for path in folders.values()))


@pytest.fixture(scope="module")
def bundles(folders):
    return {name: load_bundle(path) for name, path in folders.items()}


def _open(page: str, model: str, **params: str):
    at = run(page, {"model": model, "sentence": SENTENCE, **params})
    assert_clean(at)
    return at


def _titles(at) -> list[str]:
    return [spec["layout"].get("title", {}).get("text", "") for spec in charts(at)]


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("page", PAGES)
def test_every_page_runs_on_t5_and_gpt2(page, model):
    at = _open(page, model)
    assert at.title[0].value
    if page != "pages/7_training.py":
        assert charts(at), "the page draws its charts"
    for spec in charts(at):
        assert spec["data"] or spec["layout"].get("shapes")


@pytest.mark.parametrize("model", [T5, GPT2])
@pytest.mark.parametrize("page", PAGES[:3])
def test_a_long_text_is_shown_through_windows(page, model):
    at = _open(page, model, sentence=" ".join([SENTENCE] * 6))
    for spec in charts(at):
        assert spec["data"] or spec["layout"].get("shapes")


# ---- Positional encoding -------------------------------------------------------------------------


@pytest.mark.parametrize("model", [T5, FLAN])
def test_t5_shows_the_bias_of_every_head_over_the_text(model, bundles):
    at = _open("pages/3_positional_encoding.py", model)
    bundle = bundles[model]
    heads = bundle.config.n_heads
    text = texts(at)
    assert "adds nothing to its embeddings" in text.replace("*", "")
    assert "cross-attention gets none" in text
    assert not any(title.startswith(("Encoding matrix", "Learned position table")) for title in _titles(at))
    typed = PREFIX.default if typed_prefix(bundle) else ""  # flan-t5's page reads the prefix box's text first
    trace = bundle.translate(typed + SENTENCE).trace
    for stack, pieces in (("encoder", trace.src_pieces), ("decoder", trace.tgt_pieces)):
        direction = "bidirectional" if stack == "encoder" else "causal"
        spec = chart_titled(at, f"{stack.capitalize()} self-attention: the bias each head adds ({direction} buckets)")
        assert len(spec["data"]) == heads
        shown = len(array(spec["data"][0]["z"]))
        _, bias = bundle.relative_bias(stack, len(pieces), len(pieces))
        for head, trace_json in enumerate(spec["data"]):
            assert np.allclose(array(trace_json["z"]), bias[head, :shown, :shown], atol=1e-6)
        assert "distance" in spec["data"][0]["hovertemplate"] and "bucket" in spec["data"][0]["hovertemplate"]


@pytest.mark.parametrize("model", [T5, FLAN])
def test_t5_shows_the_bias_against_distance_with_its_buckets(model, bundles):
    at = _open("pages/3_positional_encoding.py", model)
    cfg = bundles[model].config
    for stack, bidirectional in (("encoder", True), ("decoder", False)):
        spec = chart_titled(at, f"{stack.capitalize()}: each head's bias against distance")
        lines = [t for t in spec["data"] if t.get("name", "").startswith("H")]
        assert len(lines) == cfg.n_heads
        distances = array(lines[0]["x"]).astype(int)
        assert distances.min() < -cfg.relative_max_distance and distances.max() > cfg.relative_max_distance
        expected = relative_buckets(
            torch.from_numpy(distances), bidirectional, cfg.relative_buckets, cfg.relative_max_distance
        ).numpy()
        [staircase] = [t for t in spec["data"] if t.get("name") == "bucket" and t.get("mode") == "lines"]
        assert np.array_equal(array(staircase["y"]).astype(int), expected)
        # every other bucket's run of distances is a shaded band with its edges half-way between distances
        bands = sorted((s["x0"], s["x1"]) for s in spec["layout"]["shapes"] if s["type"] == "rect")
        changes = distances[1:][np.diff(expected) != 0]  # the first distance of every bucket but the first
        edges = np.concatenate([[distances[0]], changes, [distances[-1] + 1]]) - 0.5
        assert bands == [(edges[i], edges[i + 1]) for i in range(1, len(edges) - 1, 2)]
        marks = {s["x0"] for s in spec["layout"]["shapes"] if s["type"] == "line"}
        assert {-cfg.relative_max_distance, cfg.relative_max_distance} <= marks
        # past max_distance every key is in the last bucket: the curves are flat there
        far = np.abs(distances) >= cfg.relative_max_distance
        side = distances > 0 if bidirectional else distances < 0
        for line in lines:
            assert np.ptp(array(line["y"])[far & side]) == 0


def test_switching_t5s_bias_off_changes_its_encoder_patterns():
    at = _open("pages/3_positional_encoding.py", T5)
    spec = chart_titled(at, "Encoder self-attention L1 H1")
    difference = array(spec["data"][2]["z"])
    assert np.abs(difference).max() > 1e-3, "without the bias the encoder attends differently"
    captions = [c.value for c in at.caption]
    assert "Translation with the bias" in captions and "Translation without the bias" in captions


def test_t5_with_the_switch_off_still_shows_the_bias_it_would_add():
    at = _open("pages/3_positional_encoding.py", T5, pe="false")
    assert "switch is off" in texts(at)
    assert chart_titled(at, "Encoder self-attention: the bias each head adds")


def test_gpt2_shows_its_learned_table_on_the_decoder_side(bundles):
    at = _open("pages/3_positional_encoding.py", GPT2)
    bundle = bundles[GPT2]
    table = bundle.position_table()
    spec = chart_titled(at, f"Learned position table ({len(table)} positions × {bundle.config.d_model})")
    assert np.allclose(array(spec["data"][0]["z"]), table, atol=1e-6)
    assert chart_titled(at, "Position similarity") and chart_titled(at, "Chosen dimensions against position")
    assert "decoder-only" in texts(at) and "no source" in texts(at)
    assert not any("bias" in title for title in _titles(at))
    sizes = chart_titled(at, "Sizes (L2 norm)")
    result = bundle.generate(SENTENCE)
    assert len(sizes["data"][0]["x"]) == len(result.trace.tgt_pieces)
    experiment = chart_titled(at, "Decoder self-attention L1 H1")
    assert "Continuation with the learned positions" in [c.value for c in at.caption]
    assert np.abs(array(experiment["data"][2]["z"])).max() > 0


# ---- Tensor shapes -------------------------------------------------------------------------------


def test_tensor_shapes_of_t5_show_the_bias_stage_and_the_gated_weights():
    at = _open("pages/4_tensor_shapes.py", FLAN)
    stages_table = at.dataframe[0].value
    row = stages_table[stages_table["stage"] == stages.position_bias("encoder")].iloc[0]
    assert row["symbolic"] == "(1, h, S, S)"
    assert stages.embedding("position") not in set(stages_table["stage"])
    text = texts(at)
    assert "h × d_k = 2 × 4 = d_attention = 8" in text and "RMS norm" in text and "gated" in text
    weights = at.dataframe[1].value
    gate = weights[weights["parameter"] == "encoder.layers.0.ffn.w_3.weight"].iloc[0]
    assert gate["shape"] == "32×16" and "gate" in gate["role"]
    assert not weights["parameter"].str.contains(r"\.layers\.1\.").any()
    flow = chart_titled(at, "One encoder layer and one decoder layer")
    labels = " ".join(a.get("text", "") for a in flow["layout"]["annotations"])
    assert "+ position bias (1, h, S, S)" in labels and "+ position bias (1, h, T, T)" in labels
    assert "gated feed-forward" in labels and "RMS norm" in labels and "h × d_k = 2 × 4 = 8 wide" in labels


def test_tensor_shapes_of_gpt2_run_from_the_prompt_to_the_logits(bundles):
    at = _open("pages/4_tensor_shapes.py", GPT2)
    frame = at.dataframe[0].value
    assert frame["stage"].iloc[0] == stages.embedding("ids", "target") and frame["stage"].iloc[-1] == stages.LOGITS
    assert not frame["stage"].str.startswith(("src_", "encoder")).any()
    assert not frame["stage"].str.contains("cross").any()
    assert "decoder-only" in texts(at) and "S = source" not in texts(at)
    flow = chart_titled(at, "One decoder layer (no encoder, no cross-attention)")
    labels = " ".join(a.get("text", "") for a in flow["layout"]["annotations"])
    assert "Encoder layer" not in labels and "cross-attention" not in labels and "learned positions" in labels
    assert chart_titled(at, stages.attention("decoder", "self", 0, "pattern"))


def test_symbolic_shapes_match_the_numbers_of_t5_and_gpt2(bundles):
    for name, bundle in bundles.items():
        cfg = bundle.config
        result = bundle.translate(SENTENCE) if bundle.capabilities.encoder else bundle.generate(SENTENCE)
        trace = result.trace
        sizes = {
            "1": 1,
            "B": 1,
            "S": len(trace.src_pieces),
            "T": len(trace.tgt_pieces),
            "h": cfg.n_heads,
            "d_k": cfg.d_k,
            "h·d_k": cfg.d_attention,
            "d_model": cfg.d_model,
            "d_ff": cfg.d_ff,
            "vocab": cfg.vocab_size,
        }
        for stage, shape in trace.stages:
            symbols = symbolic_shape(stage, len(shape)).strip("()").split(", ")
            assert tuple(sizes[s] for s in symbols) == shape, (name, stage)


def test_weights_frame_names_w3_only_for_a_gated_feed_forward(bundles):
    for name, bundle in bundles.items():
        frame = weights_frame(
            {k: tuple(v.shape) for k, v in bundle.model.state_dict().items()}, Blueprint.of(bundle.config)
        )
        gated = frame["parameter"].str.endswith("ffn.w_3.weight").any()
        assert gated == bundle.config.gated_ffn, name
        assert (frame["role"] != "").all(), frame[frame["role"] == ""]


def test_flow_diagram_of_a_decoder_only_model_has_one_column(bundles):
    trace = bundles[GPT2].generate(SENTENCE).trace
    fig = flow_diagram(dict(trace.stages), Style(), blueprint=Blueprint.of(bundles[GPT2].config))
    headings = [a.text for a in fig.layout.annotations if a.text and a.text.startswith("<b>")]
    assert headings == ["<b>Decoder layer</b>"]
    assert len({shape.x0 for shape in fig.layout.shapes}) == 1


# ---- Design choices ------------------------------------------------------------------------------


@pytest.mark.parametrize("model", [T5, FLAN])
def test_design_choices_say_t5_never_divides_by_sqrt_dk(model):
    at = _open("pages/6_design_choices.py", model)
    text = texts(at)
    assert "never divides its scores by √d_k" in text and "changes nothing" in text
    assert not any(
        "scores / √d_k" in " ".join(a.get("text", "") for a in spec["layout"].get("annotations", []))
        for spec in charts(at)
    ), "no on/off comparison of identical scores"
    assert "adds nothing positional" in text


def test_design_choices_say_why_gpt2_has_no_empty_source_demo():
    at = _open("pages/6_design_choices.py", GPT2)
    text = texts(at)
    assert "decoder-only model has no source" in text
    assert not any(title.startswith("The empty row") for title in _titles(at))
    assert chart_titled(at, "Variance of the raw q·k of every decoder self-attention head")
    assert chart_titled(at, "Decoder self-attention L1 H1")


# ---- Pure figures --------------------------------------------------------------------------------


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("n_buckets, max_distance", [(32, 128), (8, 16)])
def test_bucket_spans_are_the_engines_buckets(bidirectional, n_buckets, max_distance):
    distances = np.arange(-2 * max_distance, 2 * max_distance + 1)
    buckets = relative_buckets(torch.from_numpy(distances), bidirectional, n_buckets, max_distance).numpy()
    spans = bucket_spans(distances, buckets)
    assert [first for _, first, _ in spans][1:] == list(distances[1:][np.diff(buckets) != 0])
    for bucket, first, last in spans:
        assert (buckets[(distances >= first) & (distances <= last)] == bucket).all()
    # exact buckets near zero, then wider and wider ones, the last one reaching past max_distance
    exact = (n_buckets // 2 if bidirectional else n_buckets) // 2
    widths = [last - first + 1 for _, first, last in spans if last < 0]
    assert widths[-exact + 1 :] == [1] * (exact - 1) and widths[0] > max_distance
    logarithmic = widths[1 : len(widths) - exact + 1]  # between the last bucket and the exact ones, far to near
    assert -spans[0][2] <= max_distance and (len(logarithmic) < 2 or logarithmic[0] > logarithmic[-1])


def test_distance_profile_reads_every_distance_of_the_engine(bundles):
    bundle, reach = bundles[T5], 20
    for stack, bidirectional in (("encoder", True), ("decoder", False)):
        distances, buckets, bias = distance_profile(*bundle.relative_bias(stack, reach + 1, reach + 1))
        assert list(distances) == list(range(-reach, reach + 1))
        cfg = bundle.config
        assert np.array_equal(
            buckets,
            relative_buckets(
                torch.from_numpy(distances), bidirectional, cfg.relative_buckets, cfg.relative_max_distance
            ).numpy(),
        )
        table = (
            bundle.model.encoder.relative_bias.weight
            if stack == "encoder"
            else bundle.model.decoder.relative_bias.weight
        )  # (buckets, heads)
        assert np.allclose(bias, table.detach().numpy()[buckets].T)


def test_bias_figures_draw_every_head_and_mark_the_buckets():
    heads, n = 3, 9
    distances = np.arange(-(n - 1), n)
    buckets = relative_buckets(torch.from_numpy(distances), True, 8, 6).numpy()
    bias = np.random.default_rng(0).normal(size=(heads, len(distances)))
    fig = bias_against_distance(distances, buckets, bias, Style(), "t", max_distance=6, reach=4)
    assert [t.name for t in fig.data] == ["H1", "H2", "H3", "bucket", "bucket"]
    bands = [s for s in fig.layout.shapes if s.type == "rect"]
    assert len(bands) == len(bucket_spans(distances, buckets)) // 2
    assert {s.x0 for s in fig.layout.shapes if s.type == "line"} >= {-6, 6, -4, 4}
    long = 30  # a text longer than the profile: its far pairs share the end buckets
    pieces = [f"▁w{i}" for i in range(long)]
    grid = bias_heatmaps(
        np.random.default_rng(1).normal(size=(heads, long, long)),
        pieces,
        pieces,
        distances,
        buckets,
        Style(),
        "g",
        rows=(0, 25),
        columns=(0, 25),
    )
    assert len(grid.data) == heads and np.asarray(grid.data[0].z).shape == (25, 25)
    cells = np.asarray(grid.data[0].customdata)  # (query, key, [distance, bucket])
    every = np.arange(25)[None, :] - np.arange(25)[:, None]
    assert np.array_equal(cells[..., 0], every)
    assert np.array_equal(cells[..., 1], relative_buckets(torch.from_numpy(every), True, 8, 6).numpy())
    assert grid.layout.coloraxis.cmin == -grid.layout.coloraxis.cmax
    with pytest.raises(ValueError):
        bias_heatmaps(np.zeros((heads, long, long)), pieces[:-1], pieces, distances, buckets, Style(), "bad")


def test_a_learned_tables_colour_scale_fits_its_values():
    from viz.positional import encoding_heatmap

    table = np.random.default_rng(2).normal(scale=0.02, size=(64, 16))
    table[0, 0] = 3.0  # one outlier, as GPT-2 has at its first positions
    learned = encoding_heatmap(table, Style(), learned=True).data[0]
    assert learned.zmax == -learned.zmin and 0.03 < learned.zmax < 0.1
    assert encoding_heatmap(table, Style()).data[0].zmax == 3.0  # a formula's table keeps its whole range
