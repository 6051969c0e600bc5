"""The first page as data (views.translate): Translate on the shipped model, Continue on a tiny GPT-2 and on an
instruct Qwen2 answering a chat message, a T5 with a typed or its own task prefix, Sentence on MiniLM, in English
and Chinese: the output and its label, each step's candidates (the player's frames too), what the model read, the
pieces with their ids, the beams and the log-probability are the page's."""

from __future__ import annotations

import numpy as np
import pytest
from fixtures import offered
from hf_fixtures import make_decoder_dir
from page_words import english_sentences, layout_texts
from page_words import panel_keys as keys
from page_words import panel_words as said
from test_app_models import FLAN, GPT2, T5, flan_folder, gpt2_folder, t5_folder
from test_families_t5_gpt2 import _sharpen

import views
from model import DecodeOptions, Interventions
from model.checkpoints.catalog import MINILM, SMOLLM2
from views import translate
from views.controls import SUGGESTED_PREFIX
from views.models import open_model
from views.pages import scene_for
from views.panels import PageView
from viz.labels import visible_breaks

GIRL = "The small girl sees a white bird."
PROMPT = "The small girl sees a white bird."
CHAT = "tiny-qwen2-chat"


@pytest.fixture(scope="module", autouse=True)
def models(tmp_path_factory):
    """The shipped model as the default; a tiny sharpened GPT-2, an instruct Qwen2 and two T5s in the Model menu."""
    root = tmp_path_factory.mktemp("translate-models")
    folders = [
        gpt2_folder(root),
        _sharpen(make_decoder_dir(root / CHAT, "qwen2", seed=2, chat_template=True), 2.0),
        flan_folder(root),
        t5_folder(root),
    ]
    with offered(folders):
        yield


def ids(shown: PageView, key: str) -> list[int]:
    table = shown[key].table
    assert table is not None
    return list(table["id"])


# ---------------------------------------------------------------------------------------------
# Translate: the shipped model


def test_the_shipped_model_translates_and_shows_how_in_the_pages_order():
    bundle = open_model(None)
    expected = bundle.translate(GIRL)
    shown = views.show("translate", GIRL)
    assert keys(shown) == [
        "output",
        "steps",
        "reference",
        "read-note",
        "read",
        "pieces-heading",
        "pieces-read",
        "pieces-made",
        "steps-table",
        "log-prob",
    ]
    output = shown["output"]
    assert (output.text, output.caption, output.large) == (expected.translation, "French translation (greedy)", 2.2)
    steps = shown["steps"]
    assert steps.title == "Top candidates at every decoding step"
    assert np.asarray(steps.figure.data[0].z).shape[0] == len(expected.steps)
    assert "The outlined row" not in steps.caption and "Beam search keeps" not in steps.caption
    assert shown["reference"].text.startswith("**Reference** (the corpus grammar's translation): La petite fille")
    assert shown["reference"].text.endswith("✔ The model's output matches it.")
    assert (shown["read-note"].caption, shown["read"].text, shown["read"].tone) == (
        "The model read:",
        expected.source,
        "plain",
    )
    assert shown["pieces-read"].text == "**Source pieces** (encoder input)"
    assert ids(shown, "pieces-read") == list(expected.trace.src_ids)
    assert ids(shown, "pieces-made") == list(expected.output_ids)
    assert shown["pieces-read"].row == shown["pieces-made"].row != ""
    assert shown["steps-table"].heading == "Every step's candidates as a table"
    log_prob = shown["log-prob"]
    assert (log_prob.text, log_prob.metric) == ("Log-probability of the output", f"{expected.log_prob:.2f}")


def test_a_new_sentence_is_read_and_translated():
    sentence = "The old man reads a book in the garden"
    shown = views.show("translate", sentence)
    assert shown["read"].text == "the old man reads a book in the garden"  # the canonical text the model read
    assert shown["output"].text == open_model(None).translate(sentence).translation


def test_knocked_out_heads_change_the_log_probability():
    plain = views.show("translate", GIRL)["log-prob"].metric
    knocked = views.show("translate", GIRL, ablate="dec-cross-1-1,dec-cross-2-1,dec-cross-3-1")["log-prob"].metric
    assert knocked != plain


def test_typed_html_stays_text_in_the_candidates():
    shown = views.show("translate", "<script>alert(1)</script> <b>the cat</b> <img src=x onerror=alert(2)>")
    for row in shown["steps"].figure.data[0].text:
        for cell in row:
            assert "<" not in cell.replace("&lt;", "")
    assert "Flagged, never seen in training" in shown["unknown-words"].text


def test_a_sentence_outside_the_grammar_is_said_to_be_a_guess():
    shown = views.show("translate", "The zebra juggles quantum pineapples")
    assert shown["reference"].tone == "warning" and "outside the language the model was trained on" in said(shown)


def test_beam_search_names_its_beams():
    shown = views.show("translate", GIRL, decode="beam", beam=3)
    assert shown["output"].caption == "French translation (beam search, 3 beams)"
    assert "Beam search keeps the pieces of the best whole output" in shown["steps"].caption
    assert shown["beams-heading"].heading == "Final beams"
    beams = shown["beams"].table
    assert "translation" in beams.columns and len(beams) == len(shown.result.beams)


def test_the_player_shows_the_output_up_to_the_step():
    scene = scene_for("translate", GIRL)
    result = scene.result
    frame = translate.output(scene, 2)
    assert frame.caption == f"French translation (greedy), step t = 2 of {len(result.steps)}"
    assert frame.text == scene.bundle.tokenizer.decode(result.output_ids[:2]) + " …"
    assert "The outlined row is the step being produced." in translate.steps_caption(scene, True)
    grid = translate.candidates(scene, 1)
    assert np.asarray(grid.data[0].z).shape[0] == 2
    assert translate.so_far("translation", 3, 40).startswith("Translation so far: 3 of at most 40 pieces")


# ---------------------------------------------------------------------------------------------
# Continue: a decoder-only GPT-2, a chat message


def test_a_decoder_only_model_continues_the_prompt():
    gpt2 = open_model(GPT2)
    expected = gpt2.generate(PROMPT, Interventions(), DecodeOptions())
    shown = views.show("translate", PROMPT, model=GPT2)
    assert keys(shown)[0] == "decoder-only" and "reference" not in keys(shown)
    assert "decoder-only" in shown["decoder-only"].text and "no encoder" in shown["decoder-only"].text
    assert shown["output"].text == expected.continuation and expected.continuation.strip()
    assert shown["output"].caption == "Continuation (greedy)"
    assert shown["read-note"].caption == "The model read (its prompt):" and shown["read"].text == PROMPT
    assert np.asarray(shown["steps"].figure.data[0].z).shape[0] == len(expected.steps)
    assert ids(shown, "pieces-read") == list(expected.prompt_ids)
    assert ids(shown, "pieces-made") == list(expected.output_ids)
    assert shown["pieces-read"].text == "**Prompt pieces** (read first)"
    assert shown["pieces-made"].text == "**New pieces** (one per decoding step)"
    text = said(shown)
    assert "Source" not in text and "cross-attention" not in text.replace("no cross-attention", "")
    assert "Ġ" not in "".join(shown["pieces-read"].table["reads"]), (
        "the byte-level space marker is read as a word start"
    )
    assert shown["log-prob"].text == "Log-probability of the continuation"
    assert float(shown["log-prob"].metric) == pytest.approx(expected.log_prob, abs=0.01)


def test_beam_search_continues_with_beams():
    expected = open_model(GPT2).generate(PROMPT, Interventions(), DecodeOptions(beam_size=3))
    shown = views.show("translate", PROMPT, model=GPT2, decode="beam", beam=3)
    assert shown["output"].text == expected.continuation
    assert shown["output"].caption == "Continuation (beam search, 3 beams)"
    beams = shown["beams"].table
    assert "continuation" in beams.columns and "translation" not in beams.columns
    assert len(beams) == len(expected.beams)


def test_a_chat_message_is_answered_and_read_wrapped():
    bundle = open_model(CHAT)
    chat = bundle.generate(PROMPT, chat=True)
    shown = views.show("translate", PROMPT, model=CHAT)
    assert shown["output"].text == (chat.continuation or "(empty output)")
    assert shown["output"].caption == "Answer (greedy)"
    assert "the continuation is the assistant's answer" in shown["decoder-only"].text
    read = shown["read"]
    assert read.tone == "code" and read.text == visible_breaks(chat.prompt)
    assert read.text.startswith("<|im_start|>user↵\n" + PROMPT + "<|im_end|>↵\n")
    assert f"{len(chat.prompt_ids)} pieces" in shown["read-note"].caption
    assert shown["pieces-read"].text == "**Wrapped prompt pieces** (read first)"
    assert ids(shown, "pieces-read") == list(chat.prompt_ids)
    assert shown["pieces-made"].text == "**Answer pieces** (one per decoding step)"
    assert ids(shown, "pieces-made") == list(chat.output_ids)
    assert "turn markers" in shown["pieces-heading"].caption
    assert (shown["log-prob"].text, shown["log-prob"].metric) == (
        "Log-probability of the answer",
        f"{chat.log_prob:.2f}",
    )
    scene = scene_for("translate", PROMPT, model=CHAT)
    assert translate.output(scene, 2).caption == f"Answer (greedy), step t = 2 of {len(chat.steps)}"


def test_a_chat_message_answered_by_beam_search_and_the_bare_text_continued():
    beams = open_model(CHAT).generate(PROMPT, options=DecodeOptions(beam_size=3), chat=True)
    shown = views.show("translate", PROMPT, model=CHAT, decode="beam", beam=3)
    assert shown["output"].caption == "Answer (beam search, 3 beams)"
    assert list(shown["beams"].table["answer"]) == [beam.translation for beam in beams.beams]
    plain = open_model(CHAT).generate(PROMPT)
    bare = views.show("translate", PROMPT, model=CHAT, chat="off")
    assert bare["output"].text == (plain.continuation or "(empty output)")
    assert bare["read"].tone == "plain" and bare["read"].text == plain.prompt
    assert bare["pieces-read"].text == "**Prompt pieces** (read first)"


# ---------------------------------------------------------------------------------------------
# T5's task prefix, the encoder-only Sentence page, Chinese


def test_a_t5_without_a_prefix_reads_the_one_typed_before_the_sentence():
    flan = open_model(FLAN)
    shown = views.show("translate", PROMPT, model=FLAN)
    assert "no task prefix of its own" in shown["typed-prefix"].caption
    assert shown["read"].text == SUGGESTED_PREFIX + PROMPT
    assert shown["output"].text == flan.translate(SUGGESTED_PREFIX + PROMPT).translation
    assert shown["output"].caption == "Translation (greedy)"
    assert ids(shown, "pieces-read") == flan.encode_source(SUGGESTED_PREFIX + PROMPT)[1]
    assert views.show("translate", PROMPT, model=FLAN, prefix="summarize: ")["read"].text == "summarize: " + PROMPT


def test_a_t5_with_its_own_prefix_says_the_model_reads_it_first():
    shown = views.show("translate", PROMPT, model=T5)
    note = shown["task-prefix"]
    assert note.tone == "info" and "translate English to French: " in note.text and "before the sentence" in note.text
    assert shown["read"].text == "translate English to French: " + PROMPT


def test_an_encoder_only_model_compares_two_sentences():
    near = views.show("translate", "A man is playing a guitar.", model=MINILM, compare="Someone plays an instrument.")
    assert keys(near) == [
        "encoder-only",
        "read",
        "pieces-heading",
        "source-pieces",
        "similarity-heading",
        "similarity",
        "embeddings",
    ]
    assert "is an encoder-only model (bert)" in near["encoder-only"].text
    assert (near["read"].caption, near["read"].large) == ("The model read:", 1.6)
    assert "between [CLS] and [SEP]" in near["pieces-heading"].caption
    assert ids(near, "source-pieces") == list(near.result.trace.src_ids)
    assert near["similarity"].text == "Cosine similarity of the two sentence embeddings"
    assert near["embeddings"].title == "Sentence embeddings (384 dimensions)"
    assert "the mean of its pieces’ final vectors" in near["embeddings"].caption
    far = views.show("translate", "A man is playing a guitar.", model=MINILM, compare="The stock market fell sharply.")
    assert 0.3 < float(near["similarity"].metric) <= 1.0
    assert float(far["similarity"].metric) < float(near["similarity"].metric) - 0.2


@pytest.mark.parametrize("model", [None, MINILM, CHAT])
def test_the_page_in_chinese_says_no_english_sentence(model):
    shown = views.show("translate", GIRL, model=model, lang="zh")
    words = [f"{p.heading}\n{p.caption}\n{p.metric}" for p in shown]
    words += [p.text for p in shown if not p.large and p.tone not in ("code", "plain") and p.key != "reference"]
    words += [text for figure in shown.figures for text in layout_texts(figure.to_plotly_json()["layout"])]
    tables = [str(column) for panel in shown if panel.table is not None for column in panel.table.columns]
    assert english_sentences(words + tables, [GIRL]) == []
    assert shown.panels[0].key in ("output", "encoder-only", "decoder-only")


def test_the_real_smollm2_answers_the_chat_message():
    shown = views.show("translate", "What is the capital of France?", model=SMOLLM2)
    assert shown["output"].caption == "Answer (greedy)" and "Paris" in shown["output"].text
    assert shown["read"].tone == "code" and shown["read"].text.startswith("<|im_start|>system↵")
    assert shown["log-prob"].text == "Log-probability of the answer"
    assert shown["pieces-read"].text == "**Wrapped prompt pieces** (read first)"
