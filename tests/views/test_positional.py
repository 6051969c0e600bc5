"""The Positional encoding page as data (views.positional, views.rotary): on the shipped model (the formula),
MiniLM (a learned table, encoder-only), a tiny GPT-2 (a learned table, decoder-only), tiny T5s (the relative bias),
tiny Llama and Gemma 3 (rotary positions, one base and two) and a tiny chat decoder, in English and Chinese: the
panels a notebook gets are the page's, with their keys, titles, data, captions and the experiment that switches
positions off."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from fixtures import offered
from hf_fixtures import make_decoder_dir, make_gpt2_dir, make_t5_dir
from page_words import english_sentences, figure_texts
from page_words import panel_keys as keys
from page_words import panel_words as said

import views
from model.analysis import rotary as rope
from model.checkpoints.catalog import MINILM
from model.engine.positional import relative_buckets
from views import positional, rotary
from views.models import open_model
from views.pages import ControlError, scene_for
from views.panels import Panel

PAGE = "positional_encoding"
SENTENCE = "The small girl sees a white bird."
T5, FLAN, GPT2, LLAMA, GEMMA, CHAT = "tiny-t5", "tiny-flan", "tiny-gpt2", "tiny-llama", "tiny-gemma3", "tiny-chat"


@pytest.fixture(scope="module", autouse=True)
def models(tmp_path_factory):
    """The shipped model as the default, and tiny T5s, GPT-2, Llama, Gemma 3 and a chat Qwen2 in the Model menu."""
    root = tmp_path_factory.mktemp("positional-models")
    folders = [
        make_t5_dir(root / T5, variant="t5", task_prefix=True),
        make_t5_dir(root / FLAN, variant="flan", task_prefix=False, d_kv=4),
        make_gpt2_dir(root / GPT2),
        make_decoder_dir(root / LLAMA, "llama", seed=3),
        make_decoder_dir(root / GEMMA, "gemma3_text", seed=3),
        make_decoder_dir(root / CHAT, "qwen2", seed=3, chat_template=True),
    ]
    with offered(folders):
        yield


def z(panel: Panel, trace: int = 0) -> np.ndarray:
    assert panel.figure is not None
    return np.asarray(panel.figure.data[trace].z, dtype=float)


EXPERIMENT = ["pe-experiment-heading", "pe-outputs-0", "pe-outputs-1", "pe-experiment"]


# ---- A table of absolute positions ---------------------------------------------------------------------------


def test_the_shipped_models_formula_its_similarity_curves_sizes_and_experiment():
    shown = views.show(PAGE, SENTENCE)
    bundle = open_model(None)
    cfg = bundle.config
    assert keys(shown) == ["lead", "pe-table", "pe-sim", "pe-curves", "pe-sizes", *EXPERIMENT]
    assert shown["lead"].text.startswith("Attention by itself does not know word order")
    table = shown["pe-table"]
    assert table.title == positional.table_title(cfg) == f"Encoding matrix ({cfg.max_len} positions × {cfg.d_model})"
    assert np.allclose(z(table), bundle.position_table()[: positional.SHOWN], atol=1e-6)
    assert (table.row, table.width) == (shown["pe-sim"].row, 3) and shown["pe-sim"].width == 2
    assert shown["pe-sim"].title == "Position similarity" and "every position gets a unique pattern" in table.caption
    curves = shown["pe-curves"]
    assert curves.title == "Chosen dimensions against position" and "hands of a clock" in curves.caption
    half = cfg.d_model // 2
    assert [trace.name.split(" (")[0] for trace in curves.figure.data] == [
        f"dim {d}" for d in positional.curve_dims((0, half))
    ]
    sizes = shown["pe-sizes"]
    trace = shown.result.trace
    assert sizes.heading == "Why the embeddings are multiplied by √d_model" and not sizes.text  # it scales them
    assert len(sizes.figure.data[0].x) == len(trace.src_pieces) and "multiplied by √" in sizes.caption
    experiment = shown["pe-experiment"]
    assert experiment.title == "Encoder self-attention L1 H1"
    assert len(experiment.figure.data) >= 3 and "loses word order" in experiment.caption
    assert shown["pe-experiment-heading"].heading == "Experiment: switch the encoding off"
    assert [shown[f"pe-outputs-{n}"].caption for n in (0, 1)] == [
        "Translation with the encoding",
        "Translation without the encoding",
    ]
    assert shown["pe-outputs-0"].text == shown.result.translation and shown["pe-outputs-0"].large == 1.5


def test_the_dimensions_picked_and_one_kept_from_a_wider_model():
    d_model = open_model(None).config.d_model
    curves = views.show(PAGE, SENTENCE, dims="3-9")["pe-curves"]
    assert [t.name.split(" (")[0] for t in curves.figure.data] == [f"dim {d}" for d in (3, 4, 6, 8, 9)]
    wide = views.show(PAGE, SENTENCE, dims="5-900")["pe-curves"]  # the page's slider ends at the last dimension
    assert wide.figure.data[-1].name.startswith(f"dim {d_model - 1} ")
    with pytest.raises(ValueError, match=f"0 <= a < b < {d_model}"):
        positional.dims_field(d_model).parse("0-900")  # the page's URL refuses it with this reason
    with pytest.raises(ControlError):
        views.show(PAGE, SENTENCE, dims="9-3")
    assert positional.shown_dims(None, 128) == (0, 64) and positional.shown_dims((100, 300), 128) == (100, 127)


def test_minilm_shows_its_learned_table_and_the_embeddings_cosine():
    shown = views.show(PAGE, SENTENCE, model=MINILM)
    cfg = open_model(MINILM).config
    assert keys(shown) == ["lead", "pe-intro", "pe-table", "pe-sim", "pe-curves", "pe-sizes"] + [
        "pe-experiment-heading",
        "pe-similarity",
        "pe-experiment",
    ]
    assert shown["pe-intro"].tone == "info" and "learns its position vectors" in shown["pe-intro"].text
    assert "decoder-only" not in shown["pe-intro"].text
    assert shown["pe-table"].title == f"Learned position table (first 128 of {cfg.max_len} positions × {cfg.d_model})"
    assert "whatever training found useful" in shown["pe-table"].caption
    assert "BERT adds token, position" in shown["pe-sizes"].text and shown["pe-sizes"].tone == "info"
    metric = shown["pe-similarity"]
    assert metric.text == "Cosine similarity of the sentence embeddings with and without positions"
    assert -1.0 <= float(metric.metric) <= 1.0
    assert shown["pe-experiment-heading"].heading == "Experiment: switch the learned positions off"


def test_gpt2_shows_its_learned_table_on_the_decoder_side():
    shown = views.show(PAGE, "the cat sat on the mat", model=GPT2)
    bundle = open_model(GPT2)
    table = bundle.position_table()
    assert shown["pe-table"].title == f"Learned position table ({len(table)} positions × {bundle.config.d_model})"
    assert np.allclose(z(shown["pe-table"]), table, atol=1e-6)
    assert "decoder-only" in shown["pe-intro"].text and "no source" in shown["pe-intro"].text
    assert not any("bias" in title for title in shown.titles)
    assert len(shown["pe-sizes"].figure.data[0].x) == len(shown.result.trace.tgt_pieces)
    experiment = shown["pe-experiment"]
    assert (
        experiment.title == "Decoder self-attention L1 H1" and "your prompt and the continuation" in experiment.caption
    )
    assert np.abs(z(experiment, 2)).max() > 0
    # the continuation without positions waits for a button at a real size: a notebook leaves it out
    assert "pe-outputs-0" not in keys(shown)


def test_gpt2s_pattern_without_positions_reads_the_continuation_made_with_them():
    scene = scene_for(PAGE, "the cat sat on the mat", model=GPT2, layer=2, head=2)
    result = scene.result
    off = scene.bundle.teacher_forced_at(
        scene.controls.sentence,
        list(result.output_ids),
        positional.positionless_stage(scene, result.trace),
        scene.controls.interventions(positional_encoding=False),
    )[0]
    shown = positional.experiment_panel(scene, result, off)
    assert shown.title == "Decoder self-attention L2 H2"
    assert np.allclose(z(shown, 1), off[1][: len(z(shown, 1)), : len(z(shown, 1))], atol=1e-6)
    assert np.allclose(z(shown, 0), result.trace.pattern("decoder", "self", 1)[1][: len(z(shown, 0))], atol=1e-6)


# ---- T5's relative bias --------------------------------------------------------------------------------------


@pytest.mark.parametrize("model", [T5, FLAN])
def test_t5_shows_the_bias_of_every_head_and_against_distance(model):
    shown = views.show(PAGE, "the cat sat on the mat", model=model)
    bundle = open_model(model)
    cfg, trace = bundle.config, shown.result.trace
    assert keys(shown) == ["lead", "bias-intro", "bias-heading", "bias-encoder", "bias-decoder"] + [
        "distance-encoder",
        "distance-decoder",
        *EXPERIMENT,
    ]
    intro = shown["bias-intro"]
    assert intro.tone == "info" and "adds **nothing** to its embeddings" in intro.text
    assert "cross-attention gets none" in intro.text and f"{cfg.relative_buckets} buckets" in intro.text
    assert not any(title.startswith(("Encoding matrix", "Learned position table")) for title in shown.titles)
    assert shown["bias-heading"].heading == "The bias over your text"
    for stack, pieces in (("encoder", trace.src_pieces), ("decoder", trace.tgt_pieces)):
        heatmaps = shown[f"bias-{stack}"]
        direction = "bidirectional" if stack == "encoder" else "causal"
        assert heatmaps.title.startswith(f"{stack.capitalize()} self-attention: the bias each head adds ({direction} ")
        assert len(heatmaps.figure.data) == cfg.n_heads
        _buckets, bias = bundle.relative_bias(stack, len(pieces), len(pieces))
        shown_rows = len(z(heatmaps))  # a long output: the window around the step
        for head in range(cfg.n_heads):
            assert np.allclose(z(heatmaps, head), bias[head, :shown_rows, :shown_rows], atol=1e-6)
        assert "distance" in heatmaps.figure.data[0].hovertemplate
        distance = shown[f"distance-{stack}"]
        assert distance.title == f"{stack.capitalize()}: each head's bias against distance, with its buckets"
        lines = [t for t in distance.figure.data if (t.name or "").startswith("H")]
        assert len(lines) == cfg.n_heads
        distances = np.asarray(lines[0].x).astype(int)
        assert distances.min() < -cfg.relative_max_distance < cfg.relative_max_distance < distances.max()
        [staircase] = [t for t in distance.figure.data if t.name == "bucket" and t.mode == "lines"]
        expected = relative_buckets(
            torch.from_numpy(distances), stack == "encoder", cfg.relative_buckets, cfg.relative_max_distance
        ).numpy()
        assert np.array_equal(np.asarray(staircase.y).astype(int), expected)
    assert shown["distance-encoder"].heading == "The bias against distance" and not shown["distance-decoder"].heading
    assert shown["pe-experiment-heading"].heading == "Experiment: switch the bias off"


def test_switching_t5s_bias_off_changes_its_encoder_patterns_and_the_page_still_shows_it():
    shown = views.show(PAGE, "the cat sat on the mat", model=T5)
    experiment = shown["pe-experiment"]
    assert experiment.title == "Encoder self-attention L1 H1"
    assert np.abs(z(experiment, 2)).max() > 1e-3, "without the bias the encoder attends differently"
    captions = [shown[f"pe-outputs-{n}"].caption for n in (0, 1)]
    assert captions == ["Translation with the bias", "Translation without the bias"]
    off = views.show(PAGE, "the cat sat on the mat", model=T5, pe="off")
    assert "switch is off" in off["bias-off"].caption and "bias-encoder" in keys(off)
    assert np.allclose(z(off["bias-encoder"]), z(shown["bias-encoder"]))  # the bias as the model adds it


def test_a_long_text_shows_t5s_bias_through_the_source_window():
    text = " ".join(["the cat sat on the mat"] * 6)
    shown = views.show(PAGE, text, model=T5, window="3-12")
    pieces = shown.result.trace.src_pieces
    assert len(pieces) > 40 and z(shown["bias-encoder"]).shape == (10, 10)
    assert positional.source_span(scene_for(PAGE, text, model=T5, window="3-12"), len(pieces)) == (3, 13)


# ---- Rotary positions ----------------------------------------------------------------------------------------


ROTARY = ["lead", "rope-how", "rope-freq-heading", "rope-freq", "rope-angles", "rope-relative-heading", "rope-scores"]


def test_llama_turns_its_queries_and_keys_by_one_base():
    shown = views.show(PAGE, SENTENCE, model=LLAMA)
    cfg = open_model(LLAMA).config
    assert keys(shown) == [*ROTARY, "rope-relative", "rope-grid", "pe-experiment-heading", "pe-experiment"]
    how = shown["rope-how"]
    assert how.tone == "info" and "RoPE" in said(shown) and "rotary" in said(shown)
    assert f"θ base {rotary.base_text(cfg.rotary_base)} in every layer" in how.text
    frequencies = shown["rope-freq"]
    assert frequencies.title == f"{LLAMA}: θᵢ of each pair, {cfg.rotary_dims // 2} pairs per head"
    assert "what-if" in shown["rope-freq-heading"].caption
    angles = shown["rope-angles"]
    assert angles.title == "Rotation angle per position × pair (first 64 positions)"
    assert "The outlined row is the text's last piece." in angles.caption
    typed = positional.typed_pieces(scene_for(PAGE, SENTENCE, model=LLAMA))
    query = len(typed) - 1
    assert f"Score at m = {query}, n = {rotary.default_key(len(typed))}" in shown["rope-scores"].text
    line, grid = shown["rope-relative"], shown["rope-grid"]
    assert line.title.startswith("L1 H1: query “") and (line.width, grid.width) == (3, 2) and line.row == grid.row
    assert "depends on m − n alone" in line.caption and grid.title == "Score for the query at m and the key at n"
    assert shown["pe-experiment-heading"].heading == "Experiment: switch the rotation off"
    assert shown["pe-experiment"].title.startswith("Decoder self-attention L1 H1")


def test_the_base_what_if_the_key_piece_and_the_shift():
    shown = views.show(PAGE, SENTENCE, model=LLAMA, rbase="10", rkey="2", shift="7")
    base = open_model(LLAMA).config.rotary_base
    assert [t.name for t in shown["rope-freq"].figure.data][0] == f"base {rotary.base_text(base * 10)}: every layer"
    scores = shown["rope-scores"].text
    assert ", n = 2:" in scores and "Both moved by k = 7:" in scores and "Without any rotation" in scores
    query = len(positional.typed_pieces(scene_for(PAGE, SENTENCE, model=LLAMA))) - 1
    demo = rope.relative_demo(open_model(LLAMA).config, shown.result.trace, 0, 0, query, 2, 7, what_if=10.0)
    assert f"**{demo.at_text:.4f}**" in scores
    with pytest.raises(ControlError):
        views.show(PAGE, SENTENCE, model=LLAMA, rbase="3")
    assert rotary.key_piece(None, 9) == 5 and rotary.key_piece(40, 9) == 5 and rotary.key_piece(2, 9) == 2
    with pytest.raises(ValueError, match="from 0 to 8"):
        rotary.key_field(9).parse("9")


def test_one_piece_is_too_short_to_compare_a_query_with_a_key():
    scene = scene_for(PAGE, "a", model=LLAMA)
    one = positional.typed_pieces(scene)[:1]
    shown = rotary.panels(scene, scene.result.trace, one)
    assert [panel.key for panel in shown] == [*ROTARY[1:-1], "rope-too-short"]
    assert shown[-1].caption == "Type at least two pieces to compare a query with a key."


def test_gemma_turns_by_two_bases_and_names_them():
    shown = views.show(PAGE, SENTENCE, model=GEMMA)
    found = rope.bases(open_model(GEMMA).config)
    assert len(found) == 2
    assert len(shown["rope-freq"].figure.data) >= 2
    assert "Each panel is one base" in shown["rope-angles"].caption
    assert "sliding-window layer" in shown["rope-how"].text and "full-attention layer" in shown["rope-how"].text
    assert "L1's own base" in shown["rope-relative"].caption


def test_a_chat_models_outputs_are_answers():
    scene = scene_for(PAGE, SENTENCE, model=CHAT)
    assert scene.chat and positional.output_labels(scene) == ("Answer with the rotation", "Answer without the rotation")
    plain = scene_for(PAGE, SENTENCE, model=CHAT, chat="off")
    assert positional.output_labels(plain) == ("Continuation with the rotation", "Continuation without the rotation")
    shown = views.show(PAGE, SENTENCE, model=CHAT)
    assert shown["pe-experiment"].title.startswith("Decoder self-attention L1 H1")
    # the figures read the wrapped prompt: the typed text's pieces are the chat template's prompt
    assert len(positional.typed_pieces(scene)) == len(scene.result.prompt_ids)


# ---- Chinese --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("model", [None, MINILM, T5, GPT2, LLAMA])
def test_the_page_in_chinese_says_no_english_sentence(model):
    shown = views.show(PAGE, SENTENCE, model=model, lang="zh")
    # the outputs said large are the model's own words (translations with and without positions)
    texts = [f"{p.heading}\n{'' if p.large else p.text}\n{p.caption}\n{p.metric}" for p in shown]
    texts += [text for panel in shown for text in figure_texts(panel)]
    typed = [SENTENCE]
    assert english_sentences(texts, typed) == []
    assert shown["lead"].text.startswith("注意力") or "注意力" in shown["lead"].text
