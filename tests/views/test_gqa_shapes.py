"""The Tensor shapes page on a grouped-query model (fewer key/value heads than query heads, as SmolLM2-135M's
9 and 3): the weights table names W_K and W_V by h_kv·d_k, the stages table shows the keys and values as their
key/value heads computed and cached them before the repeat per query head, and the flow diagram says what a
rotary model adds to its embeddings (nothing). Models without shared heads look as before."""

from __future__ import annotations

import numpy as np
import pytest
from hf_fixtures import make_decoder_dir
from test_app import assert_clean, chart_titled, run
from test_app_models import texts

from model import load_bundle
from model.engine import stages
from viz.flow import flow_diagram
from viz.flow_boxes import attention_box, embedding_box
from viz.shapes import Blueprint, key_value_heads, stages_frame, weights_frame
from viz.style import Style

SMOLLM2 = Blueprint(
    norm="rms", norm_first=True, gated_ffn=True, positional="rotary", scale_embeddings=False, n_heads=9, d_k=64,
    d_model=576, kv_heads=3,
)  # fmt: skip
PAPER = Blueprint(n_heads=8, d_k=64, d_model=512)
W_K, W_Q = ("decoder.layers.0.self_attn.w_k.weight", "decoder.layers.0.self_attn.w_q.weight")
TINY = "tiny-llama-gqa"  # 9 query heads, 3 key/value heads of d_k 4 (d_model 36)
SENTENCE = "The small girl sees a white bird."


def _roles(blueprint: Blueprint, shapes: dict[str, tuple[int, ...]]) -> dict[str, tuple[str, str]]:
    frame = weights_frame(shapes, blueprint)
    return {row.parameter: (row.shape, row.role) for row in frame.itertuples()}


def test_the_weights_table_names_w_k_by_its_key_value_heads():
    roles = _roles(SMOLLM2, {W_K: (192, 576), W_Q: (576, 576)})
    assert roles[W_K] == (
        "192×576",
        "key projection: d_model → h_kv·d_k = 3 × 64 = 192 (3 key/value heads, each shared by 3 query heads)",
    )
    assert roles[W_Q] == ("576×576", "query projection: d_model → h·d_k")
    mqa = _roles(Blueprint(n_heads=8, d_k=16, d_model=128, kv_heads=1), {W_K: (16, 128)})
    assert (
        mqa[W_K][1]
        == "key projection: d_model → h_kv·d_k = 1 × 16 = 16 (1 key/value head, shared by all 8 query heads)"
    )
    for full in (PAPER, Blueprint(n_heads=8, d_k=64, d_model=512, kv_heads=8)):
        assert _roles(full, {W_K: (512, 512)})[W_K][1] == "key projection: d_model → h·d_k"


def _flow_text(blueprint: Blueprint) -> str:
    shapes = {
        stages.embedding("ids", "target"): (1, 5),
        stages.embedding("sum", "target"): (1, 5, 576),
        stages.DECODER_OUTPUT: (1, 5, 576),
        stages.LOGITS: (1, 5, 100),
    }
    fig = flow_diagram(shapes, Style(), blueprint=blueprint)
    return " ".join(a.text or "" for a in fig.layout.annotations)


def test_the_flow_diagram_adds_no_positions_to_a_rotary_models_embeddings():
    rotary = _flow_text(SMOLLM2)
    assert "token embedding<br>(no positions added: q, k turn)" in rotary and "positional enc." not in rotary
    assert "q, k turned by position (RoPE)" in rotary
    assert "keys, values: 3 heads, shared<br>cached as h_kv = 3, repeated to h = 9" in rotary
    sinusoid = _flow_text(PAPER)
    assert "embed ×√d_model<br>+ positional enc." in sinusoid
    assert "no positions added" not in sinusoid and "RoPE" not in sinusoid and "h_kv" not in sinusoid
    assert "embed ×√d_model<br>+ learned positions" in embedding_box(
        Blueprint(positional="learned"), "target", {}
    )  # GPT-2
    relative = Blueprint(positional="relative", scale_embeddings=False)  # T5: a bias on the scores instead
    assert embedding_box(relative, "source", {}) == "token embedding<br>(no positions added)"
    assert "computed as h_kv = 2, repeated to h = 4" in attention_box(
        "multi-head self-attention", "encoder", {}, Blueprint(n_heads=4, d_k=8, d_model=32, kv_heads=2)
    )


def _tensors(kv: np.ndarray, group: int) -> dict[str, np.ndarray]:
    """A decoder block's q, k, v and scores as the engine records them: k and v repeated per query head."""
    per_query = np.repeat(kv, group, axis=1)
    heads, length = per_query.shape[1], kv.shape[2]
    return {
        stages.attention("decoder", "self", 0, "q"): np.ones_like(per_query),
        stages.attention("decoder", "self", 0, "k"): per_query,
        stages.attention("decoder", "self", 0, "v"): -per_query,
        stages.attention("decoder", "self", 0, "scores"): np.zeros((1, heads, length, length)),
    }


def test_the_stages_table_shows_the_key_value_heads_before_the_repeat():
    kv = np.random.default_rng(0).normal(size=(1, 3, 5, 4))
    tensors = _tensors(kv, 3)
    key = stages.attention("decoder", "self", 0, "k")
    assert np.array_equal(key_value_heads(tensors[key], 3), kv)
    frame = stages_frame(tensors, kv_heads=3)
    assert list(frame["#"]) == list(range(1, 7))
    assert list(frame["stage"])[1:3] == [key.rpartition(".")[0] + ".k: 3 key/value heads (as cached)", key]
    cached, repeated = frame.iloc[1], frame.iloc[2]
    assert (cached["shape"], cached["symbolic"]) == ("(1, 3, 5, 4)", "(B, h_kv, T, d_k)")
    assert (repeated["shape"], repeated["symbolic"]) == ("(1, 9, 5, 4)", "(B, h, T, d_k)")
    assert cached["mean"] == pytest.approx(kv.mean())
    assert frame.iloc[3]["stage"].endswith(".v: 3 key/value heads (as cached)")
    plain = stages_frame(tensors)  # no grouping known, or one key/value head per query head: as before
    assert list(plain["stage"]) == list(tensors) and plain.equals(stages_frame(tensors, kv_heads=9))


@pytest.fixture(scope="module")
def tiny_gqa(tmp_path_factory):
    """A tiny random Llama with 9 query heads and 3 key/value heads (SmolLM2-135M's grouping)."""
    shapes = dict(hidden_size=36, num_attention_heads=9, num_key_value_heads=3)
    return make_decoder_dir(tmp_path_factory.mktemp("gqa") / TINY, "llama", seed=3, shapes=shapes)


def test_the_rows_before_the_repeat_are_the_kv_cache(tiny_gqa):
    bundle = load_bundle(tiny_gqa)
    assert (bundle.config.n_heads, bundle.config.kv_heads) == (9, 3)
    result = bundle.generate(SENTENCE)
    assert result.cache is not None and result.trace is not None
    for layer, cached in enumerate(result.cache.self_attention):
        for kind, kept in (("k", cached.keys), ("v", cached.values)):
            recorded = result.trace.tensor(stages.attention("decoder", "self", layer, kind))
            assert np.allclose(key_value_heads(recorded, 3)[0], kept, atol=1e-6)


def test_the_tensor_shapes_page_names_the_key_value_heads(tiny_gqa, monkeypatch):
    monkeypatch.setenv("ANATOMY_MODELS", str(tiny_gqa))
    at = run("pages/4_tensor_shapes.py", {"model": TINY, "sentence": SENTENCE})
    assert_clean(at)
    text = texts(at)
    assert "h = 9 heads, h_kv = 3 key/value heads" in text
    assert "groups of query heads share key/value heads (9 query heads, 3 key/value heads, 3 query heads per " in text
    assert "W_K and W_V project d_model → h_kv·d_k = 3 × 4 = 12, not h·d_k = 36" in text
    assert "computed and cached as (B, h_kv, T, d_k)" in text and "to (B, h, T, d_k)" in text
    frame, weights = at.dataframe[0].value, at.dataframe[1].value
    key = stages.attention("decoder", "self", 0, "k")
    at_key = list(frame["stage"]).index(key)
    cached = frame.iloc[at_key - 1]
    assert cached["stage"].endswith("3 key/value heads (as cached)") and cached["symbolic"] == "(B, h_kv, T, d_k)"
    assert cached["shape"].startswith("(1, 3, ") and frame.iloc[at_key]["shape"].startswith("(1, 9, ")
    w_k = weights[weights["parameter"] == "decoder.layers.0.self_attn.w_k.weight"].iloc[0]
    assert w_k["shape"] == "12×36" and "d_model → h_kv·d_k = 3 × 4 = 12" in w_k["role"]
    flow = chart_titled(at, "One decoder layer")
    labels = " ".join(a.get("text", "") for a in flow["layout"]["annotations"])
    assert "no positions added" in labels and "positional enc." not in labels
    assert "cached as h_kv = 3, repeated to h = 9" in labels
