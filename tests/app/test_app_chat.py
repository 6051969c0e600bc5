"""A chat message is what every page reads and explains (an instruct decoder with a chat template, a tiny
Qwen2 folder written by transformers, offered through $ANATOMY_MODELS): the control is on by default,
shared by every page and carried in the URL; the Continue page's headline, candidates, pieces and player
are the answer's; every other page reads the wrapped prompt and explains the answer; a chat result and a
plain result never share a cache entry."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest
from hf_fixtures import make_decoder_dir
from streamlit.testing.v1 import AppTest
from test_app import ROOT, TIMEOUT, array, assert_clean, chart_titled, charts, run, translation
from test_app_models import texts
from test_app_why_families import METHOD_LINES, _method_lines, _piece_on_show
from test_families_t5_gpt2 import _sharpen

from model import DecodeOptions, InputError, Interventions, load_bundle
from model.analysis import attribute, logit_lens
from model.analysis.patching import mismatch, patch
from model.engine import stages
from ui.session import engine, explanations
from views.controls import CHAT_EXAMPLES, EXAMPLES
from viz.labels import axis_labels, display_piece, visible_breaks
from viz.lengths import around

SENTENCE = "The small girl sees a white bird."
DONOR = "The small bird sees a white girl."
INSTRUCT, PLAIN = "tiny-qwen2-chat", "tiny-qwen2-plain"
OTHER_PAGES = [
    "pages/2_attention.py",
    "pages/3_positional_encoding.py",
    "pages/4_tensor_shapes.py",
    "pages/5_masks_and_heads.py",
    "pages/6_design_choices.py",
    "pages/8_why.py",
]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """A tiny instruct Qwen2 (a ChatML chat template) and the same family without a template. Seed 2, sharpened
    2x: like the real SmolLM2-135M-Instruct, its continuation of the bare text reads as nothing (special pieces
    alone) while it answers the chat message with text, so the two cannot be mistaken for each other."""
    root = tmp_path_factory.mktemp("chat")
    return {
        "instruct": _sharpen(make_decoder_dir(root / INSTRUCT, "qwen2", seed=2, chat_template=True), 2.0),
        "plain": make_decoder_dir(root / PLAIN, "qwen2", seed=3),
    }


@pytest.fixture(autouse=True)
def models_env(folders, monkeypatch):
    monkeypatch.setenv("ANATOMY_MODELS", ":".join(str(path) for path in folders.values()))


@pytest.fixture(scope="module")
def bundle(folders):
    return load_bundle(folders["instruct"])


@pytest.fixture(scope="module")
def answer(bundle):
    """The instruct model's answer to SENTENCE as a chat message, and its continuation of the bare text."""
    return bundle.generate(SENTENCE, chat=True), bundle.generate(SENTENCE)


def _headline(at: AppTest) -> str:
    """The Continue page's large text, as read (ui.page.markup.big_text: whitespace runs shown as one space)."""
    return html.unescape(re.sub(r"<[^>]+>", "", translation(at))).replace("\xa0", " ").strip()


def _shown(text: str, empty: str = "(empty output)") -> str:
    """`text` as big_text shows it."""
    return " ".join(text.split()) or empty


def _param(at: AppTest, key: str) -> str:
    value = at.query_params[key]
    return value[0] if isinstance(value, list) else value


def _frame_ids(at: AppTest, heading: str) -> list[int]:
    """The ids of the pieces table under the Continue page's `heading` (its columns' order: prompt, then new)."""
    headings = [m.value for m in at.markdown if m.value.startswith("**") and "pieces**" in m.value]
    frames = [frame.value for frame in at.dataframe if "id" in frame.value.columns]
    return list(frames[headings.index(heading)]["id"])


def test_an_instruct_model_starts_as_a_chat_message_and_continue_shows_the_answer(bundle, answer):
    chat, plain = answer
    assert chat.prompt_ids != plain.prompt_ids and chat.continuation != plain.continuation
    at = run("pages/1_translate.py", {"model": INSTRUCT, "sentence": SENTENCE})
    assert_clean(at)
    assert at.checkbox(key="w_chat").value is True and _param(at, "chat") == "on"
    assert _headline(at) == _shown(chat.continuation)  # the headline is the answer, not the bare text's continuation
    assert _shown(plain.continuation) == "(empty output)" != _shown(chat.continuation)
    assert "Answer (greedy)" in [c.value for c in at.caption]
    # "The model read": the wrapped prompt, its special pieces and line breaks visible
    wrapped = visible_breaks(chat.prompt).rstrip("\n")  # st.code drops the last newline
    assert wrapped in [block.value for block in at.code]
    assert wrapped.startswith("<|im_start|>user↵\n" + SENTENCE + "<|im_end|>↵\n") and wrapped.endswith("assistant↵")
    assert "Wrapped by the chat template" not in texts(at)  # the separate chat heading is gone
    assert len([m for m in at.markdown if m.value.startswith("<div style='font-size")]) == 1
    # the pieces, the candidates and the log-probability are the answer's
    assert _frame_ids(at, "**Wrapped prompt pieces** (read first)") == list(chat.prompt_ids)
    assert _frame_ids(at, "**Answer pieces** (one per decoding step)") == list(chat.output_ids)
    steps = chart_titled(at, "Top candidates")
    assert array(steps["data"][0]["z"]).shape[0] == len(chat.steps) > 1
    assert at.metric[0].label == "Log-probability of the answer" and at.metric[0].value == f"{chat.log_prob:.2f}"
    # the player plays the answer: enabled, one step per answer piece
    assert not at.button(key="play-translate").disabled
    at.button(key="pagedown-translate").click().run()
    assert_clean(at)
    assert f"Answer (greedy), step t = 2 of {len(chat.steps)}" in [c.value for c in at.caption]
    assert _headline(at) == _shown(bundle.tokenizer.decode(list(chat.output_ids[:2])) + " …")
    assert "every page reads the wrapped text" in texts(at)


def test_beam_search_answers_the_chat_message_too(bundle):
    beams = bundle.generate(SENTENCE, options=DecodeOptions(beam_size=3), chat=True)
    at = run("pages/1_translate.py", {"model": INSTRUCT, "sentence": SENTENCE, "decode": "beam", "beam": "3"})
    assert_clean(at)
    assert _headline(at) == _shown(beams.continuation)
    assert "Answer (beam search, 3 beams)" in [c.value for c in at.caption]
    table = next(frame.value for frame in at.dataframe if "answer" in frame.value.columns)
    assert list(table["answer"]) == [beam.translation for beam in beams.beams]


def test_turning_it_off_continues_the_bare_text(answer):
    chat, plain = answer
    at = run("pages/1_translate.py", {"model": INSTRUCT, "sentence": SENTENCE})
    at.checkbox(key="w_chat").uncheck().run()
    assert_clean(at)
    assert _param(at, "chat") == "off"
    assert _headline(at) == _shown(plain.continuation)
    assert not at.code and plain.prompt in [t.value for t in at.text]
    assert _frame_ids(at, "**Prompt pieces** (read first)") == list(plain.prompt_ids)
    assert "every page reads the wrapped text" not in texts(at)
    opened = run("pages/1_translate.py", {"model": INSTRUCT, "sentence": SENTENCE, "chat": "off"})  # the link
    assert opened.checkbox(key="w_chat").value is False and _headline(opened) == _headline(at)
    opened.run()  # a rerun keeps it
    assert opened.checkbox(key="w_chat").value is False and _param(opened, "chat") == "off"


def test_a_bad_chat_value_in_the_url_warns_and_keeps_the_default(answer):
    chat, _ = answer
    at = run("pages/1_translate.py", {"model": INSTRUCT, "sentence": SENTENCE, "chat": "maybe"})
    assert not at.exception and at.checkbox(key="w_chat").value is True
    assert any("URL parameter chat" in w.value for w in at.warning) and _param(at, "chat") == "on"
    assert _headline(at) == _shown(chat.continuation)


def test_a_model_without_a_chat_template_offers_no_chat_message(folders):
    at = run("pages/1_translate.py", {"model": PLAIN, "sentence": SENTENCE, "chat": "on"})
    assert_clean(at)
    assert not [box for box in at.checkbox if "chat message" in box.label]
    assert _headline(at) == _shown(load_bundle(folders["plain"]).generate(SENTENCE).continuation)
    assert "every page reads the wrapped text" not in texts(at)


def test_an_instruct_model_is_asked_a_question_and_offered_questions(bundle, monkeypatch):
    """Opened with no text, an instruct model answers its first example question (not the EN→FR corpus's first
    sentence); its Examples and its random pick are questions; a person who switches to it from the shipped model
    with the corpus's first sentence untouched gets the question, and back again, while a typed text stays."""
    at = run("pages/1_translate.py", {"model": INSTRUCT})
    assert_clean(at)
    assert _param(at, "sentence") == CHAT_EXAMPLES[0]
    assert _headline(at) == _shown(bundle.generate(CHAT_EXAMPLES[0], chat=True).continuation)
    assert at.selectbox(key="w_example").options == CHAT_EXAMPLES
    assert "Random question" in [b.label for b in at.button] and "Random sentence" not in [b.label for b in at.button]
    monkeypatch.setenv("ANATOMY_CHECKPOINT", "")
    shipped = run("pages/1_translate.py")
    assert _param(shipped, "sentence") == EXAMPLES[0] and shipped.selectbox(key="w_example").options == EXAMPLES
    shipped.selectbox(key="w_model").set_value(INSTRUCT).run()
    assert_clean(shipped)
    assert _param(shipped, "model") == INSTRUCT and _param(shipped, "sentence") == CHAT_EXAMPLES[0]
    shipped.selectbox(key="w_model").set_value("default").run()
    assert _param(shipped, "sentence") == EXAMPLES[0]
    asked_so = run("pages/1_translate.py", {"model": INSTRUCT, "sentence": EXAMPLES[0]})  # a text given is kept
    assert _param(asked_so, "sentence") == EXAMPLES[0]
    shipped.text_input(key="w_sentence").set_value("The cat eats the apple.").run()
    shipped.selectbox(key="w_model").set_value(INSTRUCT).run()
    assert _param(shipped, "sentence") == "The cat eats the apple."


def test_the_control_follows_the_person_to_every_page_in_the_url(answer):
    chat, plain = answer
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.query_params.update({"model": INSTRUCT, "sentence": SENTENCE})
    at.run()
    assert _param(at, "chat") == "on" and _headline(at) == _shown(chat.continuation)
    for page in OTHER_PAGES:  # switching pages keeps it, and every page reads the wrapped prompt
        at.switch_page(page).run()
        assert_clean(at)
        assert at.checkbox(key="w_chat").value is True and _param(at, "chat") == "on", page
        assert "every page reads the wrapped text" in texts(at), page
    at.switch_page("pages/1_translate.py").run()
    at.checkbox(key="w_chat").uncheck().run()
    at.switch_page("pages/8_why.py").run()
    assert_clean(at)
    assert at.checkbox(key="w_chat").value is False and _param(at, "chat") == "off"
    assert _piece_on_show(at).startswith("#### New piece ")  # a piece of the bare text's continuation
    assert "**Prompt**" in texts(at) and "**Answer**" not in texts(at)


def _key_labels(spec: dict) -> list[str]:
    return [str(label) for label in spec["data"][0]["x"]]


def _step_window(chat) -> list[str]:
    """The decoder positions' labels a page's heatmap shows around the first step (its row: the wrapped
    prompt's last piece): the wrapped prompt's pieces, then the answer's."""
    pieces = chat.trace.tgt_pieces
    start, stop = around(len(chat.prompt_ids) - 1, len(pieces))
    return axis_labels(pieces)[start:stop]


def test_attention_reads_the_wrapped_prompt_and_the_kv_cache_holds_it(bundle, answer):
    chat, _ = answer
    at = run("pages/2_attention.py", {"model": INSTRUCT, "sentence": SENTENCE})
    assert_clean(at)
    first = bundle.tokenizer.decode(list(chat.output_ids[:1])).strip()
    header = next(m.value for m in at.markdown if m.value.startswith("Step **t = 1**"))
    assert f"of {len(chat.output_ids)} read" in header and "Answer so far" in header
    assert f"decoder position {len(chat.prompt_ids) - 1}," in header and first in header.replace("\\", "")
    # the keys the model reads: the wrapped prompt's pieces (ChatML's markers first), then the answer's
    assert len(chat.trace.tgt_pieces) == len(chat.prompt_ids) + len(chat.output_ids) - 1
    keys = _key_labels(chart_titled(at, "Decoder masked self-attention · L1 H1"))
    window, first = _step_window(chat), axis_labels(chat.trace.tgt_pieces)[0]
    # the first piece (ChatML's first marker), where a trained model's heads park their weight, stays in view
    assert keys == ([first] if window[0] != first else []) + window and keys[0].startswith("&lt;|im_start|&gt;")
    cache = next(m.value for m in at.markdown if m.value.startswith("Each of the 2 layers keeps keys and values"))
    assert f"**(1, 2, {len(chat.prompt_ids)}, 8)**" in cache  # step 1 read the wrapped prompt at once
    assert f"read the {len(chat.prompt_ids)} pieces of the prompt at once" in cache


@pytest.mark.parametrize("page", OTHER_PAGES)
def test_every_page_explains_the_answer(page, bundle, answer):
    chat, plain = answer
    at = run(page, {"model": INSTRUCT, "sentence": SENTENCE})
    assert_clean(at)
    note = texts(at)
    assert f"Its answer: **{chat.continuation}" in note or page == "pages/8_why.py"
    if page == "pages/4_tensor_shapes.py":
        positions = len(chat.prompt_ids) + len(chat.output_ids) - 1
        assert f"T = decoder positions ({positions}: your chat message wrapped by the chat template" in note
        heatmap = chart_titled(at, stages.attention("decoder", "self", 0, "pattern"))
        assert f"(1, 4, {positions}, {positions})" in heatmap["layout"]["title"]["text"]  # the chat trace's stage
    elif page == "pages/5_masks_and_heads.py":
        pipeline = chart_titled(at, "Decoder masked self-attention L1 H1")
        assert _key_labels(pipeline) == _step_window(chat)
        shown = [m.value for m in at.markdown if m.value.startswith("<div style='font-size")]
        assert shown and chat.continuation.split()[0] in shown[0]  # the answer generated with the mask on
    elif page in ("pages/3_positional_encoding.py", "pages/6_design_choices.py"):
        captions = [c.value for c in at.caption]
        assert any(c.startswith("Answer with") for c in captions) or "With the scaling" in captions
        shown = [m.value for m in at.markdown if m.value.startswith("<div style='font-size")]
        assert " ".join(chat.continuation.split()) in shown[0]
    elif page == "pages/8_why.py":
        first = display_piece(bundle.tokenizer.pieces(list(chat.output_ids))[0])
        assert _piece_on_show(at).startswith(f"#### Answer piece 1, **{first}")
        assert _method_lines(at) == METHOD_LINES
        assert f"**Answer** {chat.continuation}"[:30] in note
        shaded = next(m.value for m in at.markdown if "<span title=" in m.value)
        columns = re.findall(r'<span title="([^"]*?): ', shaded)  # a piece with its position: one per column
        assert len(set(columns)) == len(chat.prompt_ids)  # one column per piece of the wrapped prompt
        assert 'title="&lt;|im_start|&gt;₀:' in shaded
        lens = at.dataframe[0].value
        assert lens.iloc[-1, 0].startswith("✓")  # the last layer's lens is the model itself: it wrote that piece
        assert "(your chat message, wrapped by the chat template)" in note
    elif page == "pages/2_attention.py":
        assert "The prompt is your chat message wrapped by the chat template" in note


def test_why_teacher_forced_passes_read_the_wrapped_prompt_and_the_answer(bundle, answer):
    chat, plain = answer
    iv = Interventions()
    wrapped = bundle.read_input(SENTENCE, len(chat.output_ids), chat=True)
    assert tuple(wrapped) == chat.prompt_ids and tuple(bundle.read_input(SENTENCE)) == plain.prompt_ids
    occlusion = attribute(bundle, SENTENCE, chat.output_ids, "occlusion", iv, chat=True)
    assert occlusion.shape == (len(chat.output_ids), len(chat.prompt_ids))
    lens = logit_lens(bundle, SENTENCE, chat.output_ids, iv, chat=True)
    assert list(lens[-1].argmax(-1)) == list(chat.output_ids)  # greedy: the model's own choices, piece by piece
    scores = bundle.score(SENTENCE, chat.output_ids, iv, chat=True)
    assert np.isclose(sum(scores), chat.log_prob, atol=1e-4)
    assert not np.isclose(sum(bundle.score(SENTENCE, chat.output_ids, iv)), chat.log_prob, atol=1e-3)
    differ = mismatch(bundle, DONOR, SENTENCE, chat.output_ids, chat=True)
    assert differ.receiver[0] == "<|im_start|>" and differ.positions and min(differ.positions) > 2
    itself = patch(bundle, SENTENCE, SENTENCE, chat.output_ids, stages.embedding("sum", "target"), None, iv, chat=True)
    chosen = itself[np.arange(len(chat.output_ids)), list(chat.output_ids)]
    assert np.allclose(chosen, scores, atol=1e-4)  # patching the wrapped prompt with itself changes nothing
    forced = bundle.teacher_forced(SENTENCE, chat.output_ids, iv, chat=True)
    assert list(forced.tgt_ids) == [*chat.prompt_ids, *chat.output_ids[:-1]]
    assert np.allclose(forced.pattern("decoder", "self", 1), chat.trace.pattern("decoder", "self", 1), atol=1e-5)


def test_a_model_that_translates_reads_no_chat_message(tiny_bundle):
    with pytest.raises(InputError, match="not a chat message"):
        tiny_bundle.read_input("The cat sleeps.", chat=True)
    with pytest.raises(InputError, match="reads no chat message"):
        engine.translate(tiny_bundle, "The cat sleeps.", Interventions(), chat=True)


def test_a_chat_result_and_a_plain_result_never_share_a_cache_entry(bundle, answer):
    chat, plain = answer
    iv = Interventions()
    assert not engine.in_cache(bundle, DONOR, iv, chat=True)
    made = engine.generate(bundle, DONOR, iv, chat=True)
    assert engine.in_cache(bundle, DONOR, iv, chat=True) and not engine.in_cache(bundle, DONOR, iv)
    bare = engine.generate(bundle, DONOR, iv)
    assert made is not bare and made.prompt_ids != bare.prompt_ids
    assert made.prompt == bundle.chat_prompt(DONOR) and bare.prompt == DONOR
    assert engine.generate(bundle, DONOR, iv, chat=True) is made  # a hit is the stored result itself
    ids = chat.output_ids
    with_chat = explanations.teacher_forced(bundle, SENTENCE, ids, iv, chat=True)
    without = explanations.teacher_forced(bundle, SENTENCE, ids, iv)
    assert list(with_chat.tgt_ids[: len(chat.prompt_ids)]) == list(chat.prompt_ids)
    assert list(without.tgt_ids[: len(plain.prompt_ids)]) == list(plain.prompt_ids)
    name = stages.attention("decoder", "self", 0, "pattern")
    assert explanations.teacher_forced_at(bundle, SENTENCE, ids, name, iv, chat=True).shape[-1] == len(
        with_chat.tgt_ids
    )
    assert explanations.teacher_forced_at(bundle, SENTENCE, ids, name, iv).shape[-1] == len(without.tgt_ids)
    assert explanations.score(bundle, SENTENCE, ids, iv, chat=True) != explanations.score(bundle, SENTENCE, ids, iv)
    for method in ("attention", "occlusion"):
        wide = explanations.attribution(bundle, SENTENCE, ids, method, iv, pieces=(0,), chat=True)
        narrow = explanations.attribution(bundle, SENTENCE, ids, method, iv, pieces=(0,))
        assert wide.shape[1] == len(chat.prompt_ids) and narrow.shape[1] == len(plain.prompt_ids)
        assert explanations.attribution_cached(bundle, SENTENCE, ids, method, iv, pieces=(0,), chat=True)
    assert (
        explanations.lens(bundle, SENTENCE, ids, iv, chat=True).firsts
        != explanations.lens(bundle, SENTENCE, ids, iv).firsts
    )
    assert engine.translation_text(bundle, SENTENCE, iv, chat=True) == chat.continuation
    assert engine.translation_text(bundle, SENTENCE, iv) == plain.continuation
    wrapped_rows = engine.prompt_batch(bundle, [SENTENCE, "I see."], iv, chat=True)
    bare_rows = engine.prompt_batch(bundle, [SENTENCE, "I see."], iv)
    assert wrapped_rows[0].tgt_ids[: len(chat.prompt_ids)] == chat.prompt_ids  # both prompts wrapped, then padded
    assert wrapped_rows[1].tgt_pieces[0] == "<|im_start|>" != bare_rows[1].tgt_pieces[0]
    assert not explanations.roles(bundle, SENTENCE, iv, chat=True).equals(explanations.roles(bundle, SENTENCE, iv))


def test_a_chat_template_that_fails_warns_on_every_page_and_the_plain_prompt_stays(folders, tmp_path, monkeypatch):
    import shutil

    broken = shutil.copytree(folders["instruct"], tmp_path / "tiny-broken-chat")
    (broken / "chat_template.jinja").write_text("{{ raise_exception('no user turns here') }}")
    monkeypatch.setenv("ANATOMY_MODELS", str(broken))
    plain = load_bundle(broken).generate(SENTENCE)
    for page in ("pages/1_translate.py", "pages/8_why.py"):
        at = run(page, {"model": "tiny-broken-chat", "sentence": SENTENCE})
        assert not at.exception and not at.error
        assert any("could not wrap the text" in w.value and "no user turns here" in w.value for w in at.warning)
        assert "every page reads the wrapped text" not in texts(at)
    assert _headline(run("pages/1_translate.py", {"model": "tiny-broken-chat", "sentence": SENTENCE})) == _shown(
        plain.continuation
    )
    assert charts(at)
