"""The Masks and heads lab as data (views.masks, views.mask_experiments, views.knockout): on the shipped model, a
tiny GPT-2, a tiny instruct Qwen2 read as a chat message, MiniLM, Marian and T5, in English and Chinese, the panels
a notebook gets are the page's: the step-by-step head in its windows, the experiment on show alone (the causal
mask on and off, the padded batch, the heads knocked out, the sweep's ranking and its words), what waits for a
button at a real size says so instead, and the keys of a second copy never meet the first's."""

from __future__ import annotations

import numpy as np
import pytest
from fixtures import offered
from hf_fixtures import make_decoder_dir, make_marian_dir
from page_words import english_sentences, layout_texts, panel_words
from page_words import panel_keys as keys
from test_app_models import GPT2, T5, gpt2_folder, t5_folder
from test_families_t5_gpt2 import _sharpen

import views
from model import DecodeOptions, InputError, Interventions
from model.analysis import knockout as sweeps
from model.checkpoints.catalog import MINILM, SMOLLM2
from views import knockout, mask_experiments, masks
from views.controls import BLOCKS
from views.markdown import md
from views.models import open_model
from views.pages import scene_for
from views.panels import PageView, Panel
from viz.labels import axis_labels
from viz.lengths import around

GIRL = "The small girl sees a white bird."
PROMPT = "The small girl sees a white bird."
CHAT, MARIAN = "tiny-qwen2-chat", "tiny-marian"
RED = "#D55E00"  # the sweep's colour of a knock-out that changes the output


@pytest.fixture(scope="module", autouse=True)
def models(tmp_path_factory):
    """The shipped model as the default; a tiny sharpened GPT-2, an instruct Qwen2, Marian and T5 in the Model
    menu."""
    root = tmp_path_factory.mktemp("masks-models")
    folders = [
        gpt2_folder(root),
        _sharpen(make_decoder_dir(root / CHAT, "qwen2", seed=2, chat_template=True), 2.0),
        make_marian_dir(root / MARIAN),
        t5_folder(root),
    ]
    with offered(folders):
        yield


def said(shown: PageView) -> str:
    """Every word the panels say, the model's outputs said large aside."""
    return panel_words(shown, outputs=False)


def z(panel: Panel, trace: int = 0) -> np.ndarray:
    assert panel.figure is not None
    return np.asarray(panel.figure.data[trace].z, dtype=float)


# ---------------------------------------------------------------------------------------------
# The shipped model: the step-by-step head and the experiment on show


def test_the_lab_draws_the_head_step_by_step_then_the_causal_experiment():
    shown = views.show("masks_and_heads", GIRL)
    assert keys(shown) == [
        "lab-intro",
        "pipeline-heading",
        "pipeline",
        "causal-heading",
        "causal",
        "causal-note",
        "causal-outputs-0",
        "causal-outputs-1",
        "causal-probs",
        "sweep-heading",
    ]
    assert shown["lab-intro"].caption.startswith("This lab looks at one pass over the whole translation")
    assert shown["pipeline-heading"].heading == "One head, step by step: scores → mask → softmax"
    pipeline = shown["pipeline"]
    assert pipeline.title == "Decoder masked self-attention L1 H1"
    assert "the grey “masked” cells)" in pipeline.caption  # the causal mask forbids pairs in this block
    assert [trace.name for trace in pipeline.figure.data if trace.name] == ["masked (−∞)", "masked (−∞)"]
    titles = shown.titles
    assert not any("shorter sentence" in t or "knock-out" in t for t in titles)
    assert shown["causal"].title == "Decoder self-attention L1 H1"
    assert shown["causal-probs"].title == "Probability of each output piece: causal mask on (before) and off (after)"
    assert shown["causal-outputs-0"].large and shown["causal-outputs-0"].row == shown["causal-outputs-1"].row
    assert shown["sweep-heading"].heading == "Knock out each head in turn"
    assert "It also translates again" in shown["sweep-heading"].caption


def test_the_pipeline_shows_the_block_asked_for_and_says_when_no_mask_forbids_a_pair():
    shown = views.show("masks_and_heads", GIRL, block="enc-self", layer=2, head=3)
    pipeline = shown["pipeline"]
    assert pipeline.title == "Encoder self-attention L2 H3"
    assert "none here: no mask forbids a pair in this block" in pipeline.caption
    raw, masked, weights = (z(pipeline, i) for i in range(3))
    assert raw.shape == masked.shape == weights.shape == (len(shown.result.trace.src_pieces),) * 2
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-5)


def test_without_the_causal_mask_the_future_lights_up_in_one_pass():
    shown = views.show("masks_and_heads", GIRL, causal="off")
    on, off = z(shown["causal"], 0), z(shown["causal"], 1)
    assert np.allclose(np.triu(on, k=1), 0.0) and np.triu(off, k=1).max() > 0.01
    assert shown["causal"].figure.layout.annotations[0].text == "causal mask on"


def test_the_padding_experiment_batches_the_short_sentence():
    shown = views.show("masks_and_heads", GIRL, lab="padding", short="I see")
    assert keys(shown)[3:] == [
        "padding-heading",
        "padding-pad",
        "padding",
        "padding-outputs-0",
        "padding-outputs-1",
        "sweep-heading",
    ]
    assert shown["padding-heading"].heading == "The padding mask: batching a shorter sentence"
    assert "the shorter sentence gets **" in shown["padding-pad"].text and "`<pad>`" in shown["padding-pad"].text
    assert shown["padding"].title == "The shorter sentence, encoder self-attention L1 H1"
    assert not any("causal mask on" in title for title in shown.titles)
    with_mask = z(shown["padding"], 0)
    pieces = list(shown["padding"].figure.data[0].x)
    pads = [i for i, label in enumerate(pieces) if "pad" in label]
    assert pads and np.allclose(with_mask[:, pads], 0.0), "with the mask no query looks at the padding"
    assert shown["padding-outputs-0"].caption == "Its translation with the padding mask on"


def test_a_batch_the_model_cannot_read_says_why_in_an_error():
    scene = scene_for("masks_and_heads", GIRL, lab="padding")
    failed = mask_experiments.failed(scene, "padding-error", InputError("Type an English sentence."))
    assert (failed.key, failed.tone, failed.text) == ("padding-error", "error", md("Type an English sentence."))


# ---------------------------------------------------------------------------------------------
# Knock-outs on the shipped model (issue 32's honest small effects)


def test_with_no_head_knocked_out_the_tab_offers_the_layer_that_changes_the_most():
    shown = views.show("masks_and_heads", GIRL, lab="knockout")
    assert keys(shown)[3:] == ["knockout-heading", "knockout-layer", "sweep-heading"]
    assert shown["knockout-heading"].tone == "info" and "start from the knock-out" in shown["knockout-heading"].text
    layer = shown["knockout-layer"]
    assert layer.text == "Knock out decoder cross-attention L3 (all 4 heads)"  # measured: a drop of 7.16
    assert "the most of the 9 layers" in layer.caption


def test_knocked_out_heads_compare_the_output_before_and_after():
    shown = views.show("masks_and_heads", GIRL, lab="knockout", ablate="dec-cross-3-1,dec-cross-3-2")
    assert shown["knockout-heading"].text == "Knocked out: `decoder cross L3 H1`, `decoder cross L3 H2`"
    assert [panel.title for panel in shown if panel.figure is not None][1:] == [
        "Probability of each output piece, before and after the knock-out",
        "The same output, scored with and without the knock-out",
    ]
    assert shown["knockout-outputs-0"].caption == "All heads"
    assert shown["knockout-outputs-0"].text == "La petite fille voit un oiseau blanc."
    assert list(shown["knockout-probs"].figure.layout.yaxis.range) == [0, 1]
    assert "The original translation, each piece scored" in shown["knockout-fixed"].caption


def test_the_sweep_ranks_every_head_left_and_says_no_single_head_matters():
    scene = scene_for("masks_and_heads", GIRL, lab="knockout")
    ctl = scene.controls
    heads = knockout.swept_heads(scene)
    rows = sweeps.sweep(scene.bundle, ctl.sentence, ctl.interventions(), ctl.options(), heads)
    chart, table = knockout.sweep(scene, rows)
    assert chart.key == "sweep-chart" and chart.title.startswith("Heads ranked by the drop")
    assert RED not in chart.figure.data[0].marker.color  # the shipped model: no single head changes the output
    assert chart.caption.startswith("The 20 heads") and "every bar is blue" in chart.caption
    assert "No single head matters much" in chart.caption and "red" not in chart.caption
    assert chart.figure.layout.xaxis.exponentformat == "power"
    assert len(table.table) == len(heads) == 36 and "translation changed" in table.table.columns
    frame = knockout.sweep_frame(scene, rows)
    assert knockout.flat_sweep(scene, frame)  # so the page offers the knock-outs that do matter
    best = knockout.head_suggestion(scene, rows)
    assert best.text.startswith("Knock out ") and best.text.endswith(" alone")


def test_the_sweep_leaves_out_the_heads_already_knocked_out():
    scene = scene_for("masks_and_heads", GIRL, lab="knockout", ablate="dec-cross-1-1,dec-cross-2-3")
    assert len(knockout.swept_heads(scene)) == 34
    assert "so the heads already knocked out there are left out" in knockout.sweep_heading(scene).caption


# ---------------------------------------------------------------------------------------------
# A decoder-only GPT-2 and a chat model


def test_gpt2s_causal_experiment_shows_the_future_leaking():
    gpt2 = open_model(GPT2)
    shown = views.show("masks_and_heads", PROMPT, model=GPT2, lab="causal", layer=2)
    assert shown["lab-intro"].caption.startswith("This lab looks at one pass over the prompt and its continuation")
    assert shown["causal-heading"].heading == "The causal mask: no peeking at later pieces"
    effect = shown["causal"]
    assert effect.title == "Self-attention over prompt and continuation L2 H1"
    expected = gpt2.generate(PROMPT, Interventions(), DecodeOptions())
    n = len(expected.prompt_ids) + len(expected.output_ids) - 1
    on, off = z(effect, 0), z(effect, 1)
    assert on.shape == off.shape == (n, n)
    assert np.allclose(np.triu(on, k=1), 0.0) and np.triu(off, k=1).max() > 0.01, "mask off: later pieces seen"
    assert (
        shown["causal-on"].text == "Weight on later pieces, layer L2, mask on" and shown["causal-on"].metric == "0.0%"
    )
    assert float(shown["causal-off"].metric.rstrip("%")) > 1.0
    without = gpt2.generate(PROMPT, Interventions(causal_mask=False), DecodeOptions())
    assert shown["causal-outputs-0"].text == (expected.continuation or "(empty)")
    assert shown["causal-outputs-1"].text == (without.continuation or "(empty)")
    assert shown["causal-probs"].title == "Probability of each new piece: causal mask on (before) and off (after)"


def test_at_a_costly_size_the_continuation_without_the_mask_waits_for_its_button(monkeypatch):
    monkeypatch.setattr(masks, "EAGER_WORK", 0.0)
    shown = views.show("masks_and_heads", "The old man reads", model=GPT2)
    assert shown["causal"].title.startswith("Self-attention over prompt and continuation")
    assert "re-reads the prompt" in shown["causal-off-continuation"].caption
    assert "causal-probs" not in keys(shown)


def test_gpt2s_padding_experiment_says_the_causal_mask_already_hides_right_padding():
    shown = views.show("masks_and_heads", PROMPT, model=GPT2, lab="padding", short="I see")
    assert shown["padding-heading"].heading == "The padding mask: batching a shorter prompt"
    assert "no source sentence to pad" in shown["padding-pad"].text
    assert shown["padding"].title.startswith("The shorter prompt, self-attention")
    change = shown["padding-change"]
    assert change.metric == "0.0000" and "causal mask already" in change.caption
    without = views.show("masks_and_heads", PROMPT, model=GPT2, lab="padding", short="I see", causal="off")
    assert float(without["padding-change"].metric) > 0, "without the causal mask, real pieces leak into the padding"
    assert "The causal mask is off" in without["padding-change"].caption


def test_gpt2s_knock_out_experiment_and_sweep():
    shown = views.show("masks_and_heads", PROMPT, model=GPT2, lab="knockout", ablate="dec-self-1-1")
    assert shown["knockout-probs"].title.startswith("Probability of each output piece, before and after")
    assert "original continuation" in shown["knockout-fixed"].caption
    assert "It also continues the prompt again" in shown["sweep-heading"].caption
    scene = scene_for("masks_and_heads", PROMPT, model=GPT2, lab="knockout", ablate="dec-self-1-1")
    ctl = scene.controls
    rows = sweeps.sweep(scene.bundle, ctl.sentence, ctl.interventions(), ctl.options(), knockout.swept_heads(scene))
    frame = knockout.sweep(scene, rows)[1].table
    assert "continuation changed" in frame.columns and len(frame) == 3  # 4 heads, one already off


def test_a_block_the_model_lacks_falls_back_to_its_own():
    assert masks.block_shown(scene_for("masks_and_heads", PROMPT, model=GPT2).limits, "dec-cross") == "dec-self"
    shown = views.show("masks_and_heads", PROMPT, model=GPT2, block="enc-self")
    assert shown["pipeline"].title == "Decoder masked self-attention L1 H1"


def test_a_chat_message_is_read_wrapped_and_its_answer_made_with_the_mask():
    bundle = open_model(CHAT)
    chat = bundle.generate(PROMPT, chat=True)
    shown = views.show("masks_and_heads", PROMPT, model=CHAT)
    pieces = chat.trace.tgt_pieces
    start, stop = around(len(chat.prompt_ids) - 1, len(pieces))  # the window around the first step
    assert list(shown["pipeline"].figure.data[0].x) == axis_labels(pieces)[start:stop]
    assert chat.continuation.split()[0] in shown["causal-outputs-0"].text  # the answer generated with the mask on
    assert knockout.output_noun(scene_for("masks_and_heads", PROMPT, model=CHAT)) == "answer"


# ---------------------------------------------------------------------------------------------
# An encoder-only model, the other families, Chinese, a second copy


def test_an_encoder_only_model_shows_padding_and_knock_outs_without_a_causal_mask():
    shown = views.show("masks_and_heads", GIRL, model=MINILM, layer=6, head=12)
    assert keys(shown)[3:] == [
        "no-causal-mask",
        "padding-heading",
        "padding-pad",
        "padding",
        "padding-on",
        "padding-off",
        "padding-note",
        "knockout-heading",
        "sweep-heading",
    ]
    assert "is encoder-only: it has no decoder, so there is no causal mask" in shown["no-causal-mask"].text
    assert shown["pipeline"].title == "Encoder self-attention L6 H12"
    assert float(shown["padding-on"].metric) == pytest.approx(1.0, abs=1e-3)  # the mask keeps the embedding
    assert shown["padding-on"].row == shown["padding-off"].row != ""
    assert "ranks them by how far the sentence embedding moves" in shown["sweep-heading"].caption
    knocked = views.show("masks_and_heads", GIRL, model=MINILM, ablate="enc-self-1-1")
    assert knocked["knockout-embedding"].text == "Cosine similarity of the sentence embedding with and without them"
    assert 0.0 < float(knocked["knockout-embedding"].metric) < 1.0


def test_an_encoder_only_sweep_ranks_heads_by_how_far_the_embedding_moves():
    scene = scene_for("masks_and_heads", GIRL, model=MINILM)
    heads = knockout.swept_heads(scene)[:6]
    rows = sweeps.embedding_sweep(scene.bundle, scene.controls.sentence, scene.controls.interventions(), heads)
    chart, table = knockout.embedding_sweep(scene, rows)
    assert chart.key == "embedding-sweep" and chart.title.startswith("Heads ranked by how far knocking them out")
    assert list(table.table.columns) == ["head", "embedding shift", "cosine to the original", "distance"]


@pytest.mark.parametrize("model", [MARIAN, T5])
def test_the_lab_draws_on_other_encoder_decoders(model):
    shown = views.show("masks_and_heads", "I see.", model=model)
    assert shown.titles[0].startswith("Decoder masked self-attention L1 H1")  # a window past 40 positions
    assert shown.titles[1].startswith("Decoder self-attention L1 H1")
    assert all(figure.data for figure in shown.figures)


@pytest.mark.parametrize("model", [None, MINILM, CHAT])
def test_the_lab_in_chinese_says_no_english_sentence(model):
    shown = views.show("masks_and_heads", GIRL, model=model, lang="zh")
    texts = [said(shown)] + [
        text for figure in shown.figures for text in layout_texts(figure.to_plotly_json()["layout"])
    ]
    assert english_sentences(texts, [GIRL]) == []
    assert shown["pipeline-heading"].heading != "One head, step by step: scores → mask → softmax"


def test_a_second_copy_keeps_its_own_keys():
    scene = scene_for("masks_and_heads", GIRL)
    right = masks.panels(type(scene)(scene.bundle, scene.controls, scene.result, scene.values, prefix="right-"))
    assert all(panel.key.startswith("right-") for panel in right)
    assert [panel.key for panel in right] == [f"right-{key}" for key in keys(views.show("masks_and_heads", GIRL))]


def test_every_block_the_model_has_draws_its_head():
    scene = scene_for("masks_and_heads", GIRL)
    trace = scene.bundle.teacher_forced(GIRL, list(scene.result.output_ids), scene.controls.interventions())
    for block in scene.limits.blocks:
        (panel,) = masks.pipeline(scene, trace, block, (0, len(trace.src_pieces)))
        stack, kind = BLOCKS[block]
        assert panel.title.lower().startswith(f"{stack} ") and len(panel.figure.data) >= 3, block


def test_the_real_smollm2_reads_its_chat_message_and_leaves_its_costly_parts_to_buttons():
    shown = views.show("masks_and_heads", "What is the capital of France?", model=SMOLLM2, lab="causal")
    assert shown["pipeline"].title.startswith("Decoder masked self-attention L1 H1 · queries")  # a window
    assert "re-reads the prompt" in shown["causal-off-continuation"].caption  # generating without the mask
    assert "causal-probs" not in keys(shown)
    knocked = views.show("masks_and_heads", "What is the capital of France?", model=SMOLLM2, lab="knockout")
    assert knocked["knockout-layers"].caption.startswith("One pass per layer (30) takes seconds")
    assert "It also continues the prompt again" in knocked["sweep-heading"].caption
