"""The Attention page's panels as data (views/attention.py and the parts it draws: views/modelview.py, kvcache.py,
sinks.py, windows.py, lengths.py), by model kind and language: what the page's AppTest runs check of its pictures
(tests/app/test_app.py, test_app_decoder_only.py, test_app_chat.py, test_app_anatomy.py, test_long_views.py,
test_i18n_pages.py), read from the panels without Streamlit."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from fixtures import TINY, build_tiny_checkpoint, offered
from hf_fixtures import DECODER_FAMILIES, GEMMA_WINDOW, make_decoder_dir, make_gpt2_dir
from page_words import english_sentences

import views
from i18n import speaking
from model import ModelConfig
from model.analysis.sinks import SINK, sinks
from model.checkpoints.catalog import MINILM
from views import attention
from views import sinks as sink_views
from views.controls import CHAT_EXAMPLES, EXAMPLES
from views.lengths import block_windows
from views.models import open_model
from views.pages import ControlError
from views.panels import PageView, Panel
from viz.labels import axis_labels
from viz.lengths import MOST_SHOWN, around

SENTENCE = "The small girl sees a white bird."
GPT2, CHAT, GEMMA = "tiny-gpt2", "tiny-qwen2-chat", "tiny-gemma3-text"
SHALLOW = "tiny-shallow-encoder"  # one encoder layer under two decoder layers


def _family(family: str) -> str:
    return f"tiny-{family.replace('_', '-')}"


@pytest.fixture(scope="module", autouse=True)
def models(tmp_path_factory, tiny_checkpoint):
    """The tiny encoder-decoder as the default model; a tiny GPT-2, an instruct Qwen2 with a chat template, the
    five decoder families and an encoder-decoder whose encoder is shallower than its decoder in the Model menu."""
    root = tmp_path_factory.mktemp("attention")
    folders = [
        make_gpt2_dir(root / GPT2, seed=1),
        make_decoder_dir(root / CHAT, "qwen2", seed=2, chat_template=True),
        *(make_decoder_dir(root / _family(family), family, seed=3) for family in DECODER_FAMILIES),
        build_tiny_checkpoint(root / SHALLOW, ModelConfig.from_dict({**TINY.to_dict(), "n_encoder_layers": 1})),
    ]
    with offered(folders, str(tiny_checkpoint)):
        yield


def _show(text: str = SENTENCE, model: str | None = None, **controls) -> PageView:
    return views.show("attention", text, model=model, **controls)


def _z(panel: Panel, trace: int = 0) -> np.ndarray:
    return np.asarray(panel.figure.data[trace].z, dtype=float)


def _said(page: PageView) -> str:
    """Every word the panels say: headings, words and captions."""
    return "\n".join(f"{p.heading}\n{p.text}\n{p.caption}" for p in page).replace("\\", "")


# ---------------------------------------------------------------------------------------------
# An encoder-decoder (tests/app/test_app.py)


def test_an_encoder_decoder_draws_the_whole_page_in_order():
    page = _show()
    keys = [panel.key for panel in page]
    assert keys[:6] == ["step-said", "step-dec-self", "step-dec-cross", "step-caption", "kv-cache", "kv-bytes"]
    for block in ("enc-self", "dec-self", "dec-cross"):
        at = keys.index(f"layer-{block}")
        assert keys[at : at + 4] == [f"layer-{block}", f"heads-{block}", f"avg-{block}", f"one-{block}"]
        assert page[f"avg-{block}"].row == page[f"one-{block}"].row == f"layer-{block}"  # side by side
    view = keys.index("model-view-heading")
    assert keys[view:] == [
        "model-view-heading",
        "model-view",
        *(["model-view-legend"] if "model-view-legend" in keys else []),
        "view-large",
        "text-view-heading",
        "text-view",
        "kv-heads",
        "sink-shares",
        "sink-norms",
        "sink-why",
        "sink-decoder",
        "hide-first",
        "hide-first-read",
        "hide-first-hidden",
        "hide-first-said",
    ]
    assert len(keys) == len(set(keys)) and len(page.figures) >= 11
    for figure in page.figures:
        assert figure.data or figure.layout.shapes, figure.layout.title.text
    assert page["step-dec-self"].row == page["step-dec-cross"].row == "step"
    assert page["text-view"].tone == "html" and "<span" in page["text-view"].text
    assert page["model-view-heading"].heading == "Model view: all layers × all heads"


def test_the_causal_switch_changes_the_decoder_patterns():
    masked = _z(_show(layer=2)["heads-dec-self"])
    assert np.allclose(np.triu(masked, k=1), 0.0)
    off = _show(layer=2, causal="off")
    unmasked = _z(off["heads-dec-self"])
    # while decoding, later pieces did not exist yet; the earlier ones were recomputed seeing each other
    assert np.allclose(np.triu(unmasked, k=1), 0.0)
    assert masked.shape != unmasked.shape or np.abs(masked - unmasked).max() > 0.01
    assert off["mask-off"].tone == "info" and "causal mask is off" in off["mask-off"].text
    assert "mask-off" not in [panel.key for panel in _show(layer=2)]


def test_knocked_out_heads_are_named_and_left_out_of_the_average():
    page = _show(ablate="dec-cross-1-1", view="dec-cross", layer=1, head=1)
    assert page["one-dec-cross"].title.split(" · ")[0] == "Head H1 alone (knocked out)"
    assert page["view-large"].title.split(" · ")[0] == "Decoder cross-attention L1 H1 (knocked out)"
    assert page["step-dec-cross"].title.startswith("Decoder cross-attention · L1 H1 (knocked out)")
    assert "output is zeroed" in page["one-dec-cross"].caption and "left out" in page["avg-dec-cross"].caption
    every_head = page["heads-dec-cross"].figure.data
    live = [np.asarray(panel.z, dtype=float) for panel in every_head[1:]]  # H1 is knocked out
    average = page["avg-dec-cross"]
    assert average.title.split(" · ")[0] == f"Average of the {len(live)} heads still on"
    np.testing.assert_allclose(_z(average), np.mean(live, axis=0), atol=1e-6)
    assert "H1 (off)" in page["text-view"].text
    untouched = _show(view="dec-cross")
    assert untouched["one-dec-cross"].title.split(" · ")[0] == "Head H1 alone"
    assert untouched["avg-dec-cross"].title.split(" · ")[0] == "Average of the 4 heads"


def test_a_step_beyond_the_output_is_brought_inside_it(tiny_bundle):
    steps = len(tiny_bundle.translate("The cat sleeps").trace.tgt_pieces)
    page = _show("The cat sleeps", step=30)
    assert page["step-said"].text.startswith(f"Step **t = {steps}** of {steps} read")
    assert page["kv-cache"].heading == f"The KV cache after step t = {steps}"


def test_presentation_mode_and_the_layer_reach_every_figure():
    page = _show(layer=2, present="on")
    heads = page["heads-dec-self"].figure
    assert heads.layout.title.text.startswith("decoder masked self-attention, L2")
    assert heads.layout.font.size == 20 and heads.layout.xaxis.tickfont.size == 17  # its template's, written in


def test_a_layer_past_a_stacks_last_shows_its_last_and_says_so():
    page = _show(model=SHALLOW, layer=2)
    assert page["layer-enc-self"].heading == "Encoder self-attention · layer L1"
    assert page["layer-enc-self"].caption == "The encoder has 1 layer: showing its last."
    assert (
        page["layer-dec-self"].heading == "Decoder masked self-attention · layer L2"
        and not page["layer-dec-self"].caption
    )
    assert attention.shown_layer(views.scene_for("attention", SENTENCE, SHALLOW, layer=2), "encoder") == 0


def test_the_sinks_name_the_decoder_as_well_as_the_encoder(tiny_bundle):
    page = _show()
    assert page["sink-shares"].title.endswith(
        "encoder self-attention: share of each head's attention on the first piece"
    )
    decoder = sinks(tiny_bundle.translate(SENTENCE).trace, "decoder", tiny_bundle.config.norm_first)
    chart = page["sink-decoder"]
    assert chart.title.endswith("decoder self-attention: share of each head's attention on the first piece")
    heads = decoder.shares.shape[1]
    assert np.allclose(np.asarray(chart.figure.data[0].z, dtype=float)[:, :heads], decoder.shares)
    line = chart.caption
    assert line.startswith("In the decoder's self-attention, the heads put")
    assert f"**{decoder.mean_share:.0%}**" in line and f"**{decoder.sink_heads} of {decoder.shares.size}**" in line
    assert f"at least {SINK:.0%}" in line
    assert page["hide-first-read"].caption == "Translation as the model reads" and page["hide-first-read"].large


def test_a_second_copy_keeps_its_keys_apart():
    scene = views.scene_for("attention", SENTENCE)
    left = attention.panels(scene)
    right = attention.panels(dataclasses.replace(scene, prefix="right-"))
    assert [f"right-{panel.key}" for panel in left] == [panel.key for panel in right]


# ---------------------------------------------------------------------------------------------
# A decoder alone (tests/app/test_app_decoder_only.py) and a chat message (tests/app/test_app_chat.py)


def test_a_decoder_only_model_has_its_self_attention_alone():
    gpt2 = open_model(GPT2)
    page = _show(model=GPT2, layer=2, head=2, view="dec-cross")
    assert page["decoder-only"].tone == "info" and "no encoder and no cross-attention" in page["decoder-only"].text
    titles = [title.lower() for title in page.titles]
    assert titles and not any("cross" in t or "encoder" in t for t in titles)
    assert page["model-view"].title.startswith("Decoder masked self-attention: layers × heads")  # the view falls back
    expected = gpt2.generate(SENTENCE)
    n = len(expected.prompt_ids) + len(expected.output_ids) - 1
    pattern = _z(page["view-large"])
    assert page["view-large"].title.startswith("Decoder masked self-attention L2 H2")
    assert pattern.shape == (n, n) and np.allclose(np.triu(pattern, k=1), 0.0)
    assert page["step-said"].text.startswith("Step **t = 1**")
    assert f"decoder position {len(expected.prompt_ids) - 1}" in page["step-said"].text
    assert "Continuation so far" in page["step-said"].text
    assert page["hide-first-read"].caption == "Continuation as the model reads"


def test_an_answer_that_starts_with_a_line_break_shows_it_so_far():
    """Gemma's first new piece is often a line break: the step's words show it ("↵"), not "(nothing yet)"."""
    assert attention.written_so_far("\n", ["\n"]) == "↵"
    assert attention.written_so_far("Paris", ["▁Paris"]) == "Paris"
    assert attention.written_so_far("", []) == ""


def test_the_cache_title_counts_one_position_as_one():
    page = _show(step="1")
    assert page["kv-cache"].title.startswith("KV cache after step 1: 1 position × ")
    assert page["kv-cache"].title.endswith("key/value heads per layer")


def test_a_cross_attention_head_of_a_decoder_alone_is_refused():
    with pytest.raises(ControlError, match="ablate"):
        _show(model=GPT2, ablate="dec-cross-1-1")


def test_decoding_without_the_cache_is_measured_when_asked():
    assert "kv-without" not in [panel.key for panel in _show(model=GPT2)]
    page = _show(model=GPT2, nocache="on")
    assert page["kv-without"].text.startswith("Measured here, ")
    assert page["kv-without"].title == "Positions computed per step, with and without the cache"


def test_a_chat_message_is_read_wrapped_and_the_cache_holds_it():
    bundle = open_model(CHAT)
    chat = bundle.generate(SENTENCE, chat=True)
    page = _show(model=CHAT)
    header = page["step-said"].text
    assert f"of {len(chat.output_ids)} read" in header and "Answer so far" in header
    assert f"decoder position {len(chat.prompt_ids) - 1}," in header
    assert "The prompt is your chat message wrapped by the chat template" in page["decoder-only"].text
    keys = [str(label) for label in page["step-dec-self"].figure.data[0].x]
    start, stop = around(len(chat.prompt_ids) - 1, len(chat.trace.tgt_pieces))
    window, first = axis_labels(chat.trace.tgt_pieces)[start:stop], axis_labels(chat.trace.tgt_pieces)[0]
    assert keys == ([first] if window[0] != first else []) + window and keys[0].startswith("&lt;|im_start|&gt;")
    cache = page["kv-cache"].text
    assert cache.startswith("Each of the 2 layers keeps keys and values")
    assert f"**(1, 2, {len(chat.prompt_ids)}, 8)**" in cache
    assert f"read the {len(chat.prompt_ids)} pieces of the prompt at once" in cache
    assert page["hide-first-read"].caption == "Answer as the model reads"


def test_a_chat_model_opened_without_a_text_is_asked_its_first_question():
    assert views.scene_for("attention", None, CHAT).controls.sentence == CHAT_EXAMPLES[0]
    assert views.scene_for("attention", None, GPT2).controls.sentence == EXAMPLES[0]  # no chat template: a text


def test_new_pieces_let_a_continuation_run_longer_or_shorter():
    """`new=` caps a decoder alone's new pieces (its own 20 by default, up to 200); a bad value is refused as the
    URL's parsers refuse it, and a model that translates has no such control (its output ends at its end piece)."""
    default = views.scene_for("attention", SENTENCE, GPT2)
    assert default.controls.new_pieces == 20 and len(default.result.output_ids) == 20  # a tiny random GPT-2 never ends
    short, long = (views.scene_for("attention", SENTENCE, GPT2, new=n) for n in ("5", "45"))
    assert len(short.result.output_ids) == 5 and len(long.result.output_ids) == 45
    assert list(long.result.output_ids[:20]) == list(default.result.output_ids)  # greedy: the same first pieces
    for bad in ("0", "201", "many"):
        with pytest.raises(ControlError, match="new"):
            views.scene_for("attention", SENTENCE, GPT2, new=bad)
    assert views.scene_for("attention", SENTENCE).controls.new_pieces is None


def test_the_preview_draws_the_prompt_alone():
    scene = views.scene_for("attention", SENTENCE, GPT2, layer=2, head=2)
    prompt = scene.result.trace  # what the preview reads of a trace: the decoder rows, or the encoder's
    panel = attention.prompt_panel(scene, prompt)
    assert panel.key == "prompt-heads" and panel.heading == "The prompt's self-attention"
    assert panel.title.startswith("Decoder self-attention over the prompt · L2 H2")
    shares = sink_views.prompt_panel(scene, prompt)
    assert shares.key == "prompt-sinks" and shares.caption.startswith("Averaged over the prompt's queries")
    encoder = views.scene_for("attention", SENTENCE)
    panel = attention.prompt_panel(encoder, encoder.result.trace)
    assert panel.heading == "The sentence's self-attention"
    assert panel.title.startswith("Encoder self-attention over the sentence · L1 H1")


# ---------------------------------------------------------------------------------------------
# Today's decoders (tests/app/test_app_anatomy.py)


@pytest.mark.parametrize("family", DECODER_FAMILIES)
def test_each_family_names_the_cache_the_shared_heads_and_sinks(family):
    page = _show(model=_family(family), step=3)
    said = _said(page)
    assert "cache" in said and "sink" in said and "past_key_values" in said
    if family != "gpt_neox":
        assert any(word in said for word in ("grouped", "GQA", "MQA", "shared"))
    assert page["kv-cache"].heading == "The KV cache after step t = 3"
    assert page["kv-heads"].table is not None and len(page["kv-heads"].table) == 3


def test_gemma_names_its_window_in_the_sinks_the_cache_and_the_band():
    page = _show(model=_family("gemma3_text"))
    assert f"a query at position {GEMMA_WINDOW} or later cannot see the first piece at all" in page["sink-why"].text
    assert f"transformers' cache keeps just their last {GEMMA_WINDOW - 1} positions" in page["kv-heads"].caption
    band = page["windows"]
    assert band.heading == "Sliding windows" and band.title.endswith("which keys each query may read")
    assert f"from query {GEMMA_WINDOW} on the first piece is out of the sliding layers' reach" in band.caption
    assert "windows" not in [panel.key for panel in _show(model=GPT2)]


# ---------------------------------------------------------------------------------------------
# An encoder alone, and texts longer than a heatmap shows (tests/app/test_long_views.py)


def test_an_encoder_alone_has_its_self_attention_and_no_cache():
    page = _show(model=MINILM, view="dec-cross", focus=3)
    keys = [panel.key for panel in page]
    assert keys[:5] == ["encoder-only", "layer-enc-self", "heads-enc-self", "avg-enc-self", "one-enc-self"]
    assert not [key for key in keys if key.startswith(("step-", "kv-", "layer-dec"))]
    assert page["model-view"].title.startswith("Encoder self-attention: layers × heads")
    assert "query piece 3 " in page["text-view"].caption
    assert page["hide-first-cosine"].metric and page["hide-first-cosine"].text.startswith("Cosine similarity")


def test_the_window_and_colour_reach_the_heatmaps():
    long = " ".join(["The small girl sees a white bird near the old house."] * 8)
    page = _show(long, model=MINILM, window="20-39", colour="log")
    heads = page["heads-enc-self"].figure
    assert "queries 20–39" in heads.layout.title.text
    assert heads.layout.coloraxis.colorbar.title.text == "log₁₀ weight"
    assert "Colours: log₁₀ of the weight." in page["model-view"].caption
    wide = _show(long, model=MINILM, window="0-400")["heads-enc-self"].figure.layout.title.text
    assert f"queries 0–{MOST_SHOWN - 1}" in wide  # at most MOST_SHOWN pieces at once
    short = _show("The cat eats the apple.", window="5-9")["heads-enc-self"].figure.layout.title.text
    assert "queries" not in short  # nothing to window
    with pytest.raises(ControlError, match="window"):
        _show(window="9-2")


def test_the_block_windows_show_source_rows_and_decoder_columns():
    source, output = (0, 40), (10, 50)
    assert block_windows("enc-self", source, output) == {"rows": source, "columns": source}
    assert block_windows("dec-self", source, output) == {"rows": output, "columns": output}
    assert block_windows("dec-cross", source, output) == {"rows": output, "columns": source}


# ---------------------------------------------------------------------------------------------
# Chinese (tests/app/test_i18n_pages.py)


@pytest.mark.parametrize("model", [None, GPT2, CHAT, MINILM])
def test_the_page_in_chinese_says_no_english_sentence(model):
    page = _show(model=model, lang="zh", causal="off", ablate="" if model else "dec-cross-1-1")
    texts = [*page.titles, *(f"{p.heading} {p.caption} {p.text}" for p in page)]
    assert english_sentences(texts, [SENTENCE]) == []
    with speaking("zh"):
        assert re.search(r"[\u4e00-\u9fff]", page["model-view-heading"].heading)
