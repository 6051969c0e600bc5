"""The Tensor shapes page as data (views.shapes): on the shipped model, a tiny flan-T5 (relative positions, heads
narrower than d_model / h, RMS norms, a gated feed-forward), a tiny GPT-2 (decoder-only), a tiny Llama with shared
key/value heads and a tiny chat decoder, in English and Chinese: the letters and notes, the flow, the stages
table, one stage as a heatmap (which rows and columns, which window, which caption) and the weights."""

from __future__ import annotations

import json

import numpy as np
import pytest
from fixtures import offered
from hf_fixtures import make_decoder_dir, make_gpt2_dir, make_t5_dir
from page_words import english_sentences, layout_texts
from page_words import panel_keys as keys
from page_words import panel_words as said

import views
from model.checkpoints.catalog import MINILM
from model.engine import stages
from views import shapes
from views.models import open_model
from views.pages import ControlError, scene_for
from views.panels import Panel
from viz.labels import axis_labels

PAGE = "tensor_shapes"
SENTENCE = "The small girl sees a white bird."
FLAN, GPT2, GQA, CHAT = "tiny-flan", "tiny-gpt2", "tiny-llama-gqa", "tiny-chat"


@pytest.fixture(scope="module", autouse=True)
def models(tmp_path_factory):
    """The shipped model as the default, and a tiny flan-T5, GPT-2, grouped-query Llama (9 query heads, 3 key/value
    heads) and chat Qwen2 in the Model menu."""
    root = tmp_path_factory.mktemp("shapes-models")
    folders = [
        make_t5_dir(root / FLAN, variant="flan", task_prefix=False, d_kv=4),
        make_gpt2_dir(root / GPT2),
        make_decoder_dir(
            root / GQA, "llama", seed=3, shapes=dict(hidden_size=36, num_attention_heads=9, num_key_value_heads=3)
        ),
        make_decoder_dir(root / CHAT, "qwen2", seed=3, chat_template=True),
    ]
    with offered(folders):
        yield


def annotations(panel: Panel) -> str:
    assert panel.figure is not None
    return " ".join(note.text or "" for note in panel.figure.layout.annotations)


def test_the_shipped_model_in_the_pages_order_and_on_a_projector():
    shown = views.show(PAGE, SENTENCE)
    cfg = open_model(None).config
    trace = shown.result.trace
    assert keys(shown) == ["lead-0", "flow", "stages", "stage-heading", "stage-heatmap", "weights"]
    letters = shown["lead-0"].text
    assert letters.startswith(f"B = batch (1), S = source pieces ({len(trace.src_pieces)}), T = target pieces (")
    assert f"d_model = {cfg.d_model}" in letters and f"vocab = {cfg.vocab_size:,}." in letters
    flow = shown["flow"]
    assert flow.heading == "The flow through one encoder layer and one decoder layer"
    assert flow.title.startswith("One encoder layer and one decoder layer") and "residual" in flow.caption
    table = shown["stages"].table
    assert list(table["stage"]) == [name for name, _tensor in trace.stages]
    assert (
        shown["stages"].heading == "Every stage, in the order it runs" and "'masked' counts" in shown["stages"].caption
    )
    heatmap = shown["stage-heatmap"]
    assert heatmap.title == f"{stages.attention('decoder', 'cross', 0, 'pattern')} (1, {cfg.n_heads}, " + (
        f"{len(trace.tgt_pieces)}, {len(trace.src_pieces)}), head H1"
    )
    weights = shown["weights"].table
    assert shown["weights"].heading == "The weights of one layer" and "(3 encoder and 3 decoder layers in all)" in (
        shown["weights"].caption
    )
    assert not weights["parameter"].str.contains(r"\.layers\.1\.").any()
    projector = views.show(PAGE, SENTENCE, present="on")
    assert keys(projector) == ["lead-0", "stage-heading", "stage-heatmap", "flow", "stages", "weights"]


def test_cross_attentions_keys_and_values_are_labelled_with_the_source():
    for stage, axis in (("decoder.layers.0.cross_attn.hook_k", "y"), ("decoder.layers.0.cross_attn.hook_pattern", "x")):
        shown = views.show(PAGE, "We are happy", stage=stage)
        trace = shown.result.trace
        assert list(getattr(shown["stage-heatmap"].figure.data[0], axis)) == axis_labels(trace.src_pieces), stage


def test_a_stage_of_ids_and_the_logits_of_a_large_vocabulary():
    ids = views.show(PAGE, SENTENCE, stage="src_embed.hook_ids")["stage-heatmap"]
    assert ids.title == "src_embed.hook_ids (1, 9)" or ids.title.startswith("src_embed.hook_ids (1, ")
    assert ids.figure.layout.xaxis.title.text == "position (colour: the token id)"
    logits = views.show(PAGE, SENTENCE, stage=stages.LOGITS)
    vocabulary = f"{open_model(None).config.vocab_size:,}"
    assert f"Only 60 of the {vocabulary} vocabulary columns are drawn" in logits["stage-heatmap"].caption
    assert len(logits["stage-heatmap"].figure.data[0].x) == shapes.LOGIT_COLUMNS


def test_a_stage_the_trace_lacks_is_said_and_the_first_attention_shown():
    shown = views.show(PAGE, SENTENCE, stage="no.such")
    default = stages.attention("decoder", "cross", 0, "pattern")
    warning = shown["stage-missing"]
    assert warning.tone == "warning" and "no stage 'no.such'" in warning.text.replace("\\", "")
    assert shown["stage-heatmap"].title.startswith(default)
    with pytest.raises(ControlError, match="not a stage name"):
        views.show(PAGE, SENTENCE, stage="Bad Stage")
    scene = scene_for(PAGE, SENTENCE)
    assert shapes.stage_field(default).default == default and shapes.default_stage(scene, scene.result.trace) == default


def test_flan_t5_shows_the_bias_stage_and_the_gated_weights():
    shown = views.show(PAGE, "the cat sat on the mat", model=FLAN)
    table = shown["stages"].table
    row = table[table["stage"] == stages.position_bias("encoder")].iloc[0]
    assert row["symbolic"] == "(1, h, S, S)" and stages.embedding("position") not in set(table["stage"])
    text = said(shown)
    assert "h × d_k = 2 × 4 = d_attention = 8" in text and "RMS norm" in text and "gated" in text
    assert "There is no `" in text and "Pre-LN" in text
    weights = shown["weights"].table
    gate = weights[weights["parameter"] == "encoder.layers.0.ffn.w_3.weight"].iloc[0]
    assert gate["shape"] == "32×16" and "gate" in gate["role"]
    flow = shown["flow"]
    assert flow.title.startswith("One encoder layer and one decoder layer")
    labels = annotations(flow)
    assert "+ position bias (1, h, S, S)" in labels and "+ position bias (1, h, T, T)" in labels
    assert "gated feed-forward" in labels and "RMS norm" in labels and "h × d_k = 2 × 4 = 8 wide" in labels


def test_gpt2s_stages_run_from_the_prompt_to_the_logits():
    shown = views.show(PAGE, "the cat sat on the mat", model=GPT2)
    frame = shown["stages"].table
    assert frame["stage"].iloc[0] == stages.embedding("ids", "target") and frame["stage"].iloc[-1] == stages.LOGITS
    assert not frame["stage"].str.startswith(("src_", "encoder")).any()
    assert not frame["stage"].str.contains("cross").any()
    text = said(shown)
    assert "decoder-only" in text and "S = source" not in text
    assert shown["flow"].heading == "The flow through one decoder layer"
    assert shown["flow"].title.startswith("One decoder layer (no encoder, no cross-attention)")
    labels = annotations(shown["flow"])
    assert "Encoder layer" not in labels and "cross-attention" not in labels and "learned positions" in labels
    assert shown["stage-heatmap"].title.startswith(stages.attention("decoder", "self", 0, "pattern"))
    assert "1 decoder layer" in shown["weights"].caption or "decoder layers in all" in shown["weights"].caption


def test_shared_key_value_heads_are_named_everywhere():
    shown = views.show(PAGE, SENTENCE, model=GQA)
    text = said(shown)
    assert "h = 9 heads, h_kv = 3 key/value heads" in text
    assert "groups of query heads share key/value heads (9 query heads, 3 key/value heads, 3 query heads per " in text
    assert "W_K and W_V project d_model → h_kv·d_k = 3 × 4 = 12, not h·d_k = 36" in text
    assert "computed and cached as (B, h_kv, T, d_k)" in text and "to (B, h, T, d_k)" in text
    assert "RoPE" in text and "Pre-LN" in text
    frame, weights = shown["stages"].table, shown["weights"].table
    key = stages.attention("decoder", "self", 0, "k")
    at_key = list(frame["stage"]).index(key)
    cached = frame.iloc[at_key - 1]
    assert cached["stage"].endswith("3 key/value heads (as cached)") and cached["symbolic"] == "(B, h_kv, T, d_k)"
    assert cached["shape"].startswith("(1, 3, ") and frame.iloc[at_key]["shape"].startswith("(1, 9, ")
    assert "Keys and values appear twice: as their 3 key/value heads cached them" in shown["stages"].caption
    w_k = weights[weights["parameter"] == "decoder.layers.0.self_attn.w_k.weight"].iloc[0]
    assert w_k["shape"] == "12×36" and "d_model → h_kv·d_k = 3 × 4 = 12" in w_k["role"]
    labels = annotations(shown["flow"])
    assert "no positions added" in labels and "positional enc." not in labels
    assert "cached as h_kv = 3, repeated to h = 9" in labels
    assert "each repeated for its 3 query heads" in shown["flow"].caption


def test_a_chat_message_counts_the_wrapped_prompt():
    shown = views.show(PAGE, SENTENCE, model=CHAT)
    result = shown.result
    positions = len(result.prompt_ids) + len(result.output_ids) - 1
    assert f"T = decoder positions ({positions}: your chat message wrapped by the chat template" in said(shown)
    heatmap = shown["stage-heatmap"]
    assert heatmap.title.startswith(stages.attention("decoder", "self", 0, "pattern"))
    assert f"(1, 4, {positions}, {positions})" in heatmap.title
    plain = views.show(PAGE, SENTENCE, model=CHAT, chat="off")
    assert "T = decoder positions (" in said(plain) and "your text, then each new piece" in said(plain)


def test_minilm_stops_at_the_encoder():
    shown = views.show(PAGE, SENTENCE, model=MINILM)
    assert "encoder-only" in shown["lead-1"].text and "T = " not in shown["lead-0"].text
    assert shown["flow"].heading == "The flow through one encoder layer"
    assert stages.LOGITS not in set(shown["stages"].table["stage"])
    assert shown["stage-heatmap"].title.startswith("src_embed.hook_ids")


def test_the_prompts_stages_while_the_output_is_written():
    for model, heading in ((None, "The encoder's stages"), (GPT2, "The prompt's stages")):
        scene = scene_for(PAGE, "the cat sat on the mat", model=model)
        panel = shapes.prompt_stages(scene, scene.result.trace)
        assert panel.key == "prompt-stages" and panel.heading == heading and "statistics join" in panel.caption
        assert panel.table is not None and "mean" not in panel.table.columns


def test_a_second_copy_keeps_its_keys_apart():
    scene = scene_for(PAGE, SENTENCE)
    right = type(scene)(scene.bundle, scene.controls, scene.result, scene.values, prefix="right-")
    assert {panel.key for panel in shapes.panels(right)} == {f"right-{key}" for key in keys(views.show(PAGE, SENTENCE))}


@pytest.mark.parametrize("model", [None, MINILM, GQA, CHAT])
def test_the_page_in_chinese_says_no_english_sentence(model):
    shown = views.show(PAGE, SENTENCE, model=model, lang="zh")
    texts = [f"{p.heading}\n{p.text}\n{p.caption}" for p in shown]
    for panel in shown.panels:
        if panel.figure is not None:
            spec = json.loads(panel.figure.to_json())
            texts += list(layout_texts(spec.get("layout", {})))
    assert english_sentences(texts, [SENTENCE]) == []
    assert shown["stages"].heading != "Every stage, in the order it runs"
    assert np.isfinite(shown["stages"].table["mean"].dropna()).all()
