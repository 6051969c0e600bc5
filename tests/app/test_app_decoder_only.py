"""What a person sees with a decoder-only GPT-2 (Continue, Attention, the Masks lab) and with a T5 on the
first page (its task prefix), on tiny folders made by transformers (tests/hf_fixtures.py)."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest
from test_app import array, assert_clean, chart_titled, charts, run, translation
from test_app_models import FLAN, GPT2, T5, flan_folder, gpt2_folder, t5_folder
from test_player import button, step_shown

from model import DecodeOptions, Interventions, load_bundle
from views.controls import SUGGESTED_PREFIX

CONTINUE, ATTENTION, MASKS = "pages/1_translate.py", "pages/2_attention.py", "pages/5_masks_and_heads.py"
PROMPT = "The small girl sees a white bird."


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    return {GPT2: gpt2_folder(root), FLAN: flan_folder(root), T5: t5_folder(root)}


@pytest.fixture(autouse=True)
def models_env(folders, monkeypatch):
    monkeypatch.setenv("ANATOMY_MODELS", ":".join(str(p) for p in folders.values()))


@pytest.fixture(scope="module")
def gpt2(folders):
    return load_bundle(folders[GPT2])


def shown(text: str) -> str:
    """Text as ui.page.markup.big_text draws it."""
    return html.escape(" ".join(text.split()))


def big(at) -> str:
    """The content of the page's first large text."""
    return re.sub(r"^<div[^>]*>|</div>$", "", translation(at))


def texts(at) -> str:
    joined = "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info])
    return joined.replace("\\", "")


# ---------------------------------------------------------------------------------------------
# Continue


def test_the_first_page_continues_the_prompt_as_bundle_generate_does(gpt2):
    at = run(CONTINUE, {"model": GPT2, "sentence": PROMPT})
    assert_clean(at)
    assert at.title[0].value == "Continue"
    assert [link.proto.label for link in at.sidebar.get("page_link")][0] == "Continue"
    expected = gpt2.generate(PROMPT, Interventions(), DecodeOptions())
    assert big(at) == shown(expected.continuation)
    assert expected.continuation.strip(), "the sharpened model writes something"
    assert any("decoder-only" in i.value and "no encoder" in i.value for i in at.info)
    assert at.text[0].value == PROMPT  # the prompt it read
    steps = chart_titled(at, "Top candidates")
    assert len(array(steps["data"][0]["z"])) == len(expected.steps)
    prompt_table, new_table = at.dataframe[0].value, at.dataframe[1].value
    assert list(prompt_table["id"]) == list(expected.prompt_ids)
    assert list(new_table["id"]) == list(expected.output_ids)
    text = texts(at)
    assert "Prompt pieces" in text and "New pieces" in text
    assert "Source" not in text and "cross-attention" not in text.replace("no cross-attention", "")
    assert "Ġ" not in "".join(prompt_table["reads"]), "the byte-level space marker is read as a word start"
    assert float(at.metric[0].value) == pytest.approx(expected.log_prob, abs=0.01)
    assert any("new pieces" in w.value for w in at.warning) == any("new pieces" in w for w in expected.warnings)


def test_the_new_pieces_control_lets_a_continuation_run_on(gpt2):
    """The sidebar's "New pieces at most" (`new=`): the model's own number first, a change reaches the URL and
    the continuation, and the warning that the continuation was cut names the new number."""
    at = run(CONTINUE, {"model": GPT2, "sentence": PROMPT})
    control = at.number_input(key="w_new")
    assert control.value == gpt2.default_new and (control.min, control.max) == (1, 200)
    control.set_value(33).run()
    assert_clean(at)
    expected = gpt2.generate(PROMPT, Interventions(), DecodeOptions(max_len=33))
    assert at.query_params["new"] in ("33", ["33"])
    assert list(at.dataframe[1].value["id"]) == list(expected.output_ids) and len(expected.output_ids) > 20
    assert big(at) == shown(expected.continuation)
    shipped = run(CONTINUE, {"sentence": PROMPT, "new": "5"})  # a model that translates has no such control
    assert not [box for box in shipped.number_input if box.key == "w_new"]


def test_the_why_pages_notes_fold_on_a_projector_as_every_pages_do():
    at = run("pages/8_why.py", {"model": GPT2, "sentence": PROMPT, "present": "on", "new": "3"})
    assert_clean(at)
    [notes] = [box for box in at.expander if box.label == "Notes on this run"]
    assert [w.value.replace("\\", "") for w in notes.warning] == [
        "The continuation stopped at its limit of 3 new pieces."
    ]
    assert not [w for w in at.main.warning if w not in notes.warning]


def test_beam_search_continues_with_beams(gpt2):
    at = run(CONTINUE, {"model": GPT2, "sentence": PROMPT, "decode": "beam", "beam": "3"})
    assert_clean(at)
    expected = gpt2.generate(PROMPT, Interventions(), DecodeOptions(beam_size=3))
    assert big(at) == shown(expected.continuation)
    assert any("beam search, 3 beams" in c.value for c in at.caption)
    beams = at.dataframe[-1].value
    assert "continuation" in beams.columns and "translation" not in beams.columns
    assert len(beams) == len(expected.beams)


def test_the_play_button_builds_the_continuation_piece_by_piece():
    at = run(CONTINUE, {"model": GPT2, "sentence": PROMPT})
    full = translation(at)
    button(at, "Play decoding").click().run()
    assert_clean(at)
    assert any("step t = 1 of" in c.value for c in at.caption)
    assert translation(at) != full and "…" in translation(at)
    at.run()
    assert any("step t = 2 of" in c.value for c in at.caption)
    button(at, "Pause").click().run()
    button(at, "Show the whole output").click().run()
    assert translation(at) == full


@pytest.mark.parametrize("text", ["", "   ", "x" * 10_000, "The 🐱 sleeps 😀", "<script>alert(1)</script> **b**"])
@pytest.mark.parametrize("page", [CONTINUE, ATTENTION, MASKS])
def test_bad_prompts_never_show_a_traceback(page, text):
    at = run(page, {"model": GPT2})
    at.sidebar.text_input(key="w_sentence").input(text).run()
    assert not at.exception, [e.message for e in at.exception]
    if not text.strip():
        assert at.error, "an empty prompt is refused with a message"
    else:
        assert_clean(at)
    for block in at.markdown:
        assert "<script" not in block.value


# ---------------------------------------------------------------------------------------------
# Attention


def test_the_attention_page_shows_decoder_self_attention_alone(gpt2):
    at = run(ATTENTION, {"model": GPT2, "layer": "2", "head": "2", "view": "dec-cross"})
    assert_clean(at)
    assert "no encoder and no cross-attention" in texts(at)
    titles = [spec["layout"]["title"]["text"].lower() for spec in charts(at)]
    assert titles and not any("cross" in t or "encoder" in t for t in titles)
    assert any(t.startswith("decoder masked self-attention") for t in titles)
    assert at.radio(key="w_view").options == ["Decoder masked self-attention"]
    layer, head = at.sidebar.selectbox(key="w_layer"), at.sidebar.selectbox(key="w_head")
    assert (len(layer.options), len(head.options)) == (gpt2.config.n_decoder_layers, gpt2.config.n_heads)
    assert not any("cross" in o for o in at.sidebar.multiselect(key="w_ablate").options)
    # rows and columns: the prompt's pieces, then each new piece fed back in; the step outlined after the prompt
    expected = gpt2.generate(PROMPT, Interventions(), DecodeOptions())
    pattern = array(chart_titled(at, "Decoder masked self-attention L2 H2")["data"][0]["z"])
    n = len(expected.prompt_ids) + len(expected.output_ids) - 1
    assert pattern.shape == (n, n) and np.allclose(np.triu(pattern, k=1), 0.0)
    assert step_shown(at) == 1
    assert f"decoder position {len(expected.prompt_ids) - 1}" in texts(at)


def test_the_attention_page_steps_through_the_new_pieces():
    at = run(ATTENTION, {"model": GPT2, "step": "3"})
    assert_clean(at)
    assert step_shown(at) == 3
    button(at, "Play decoding").click().run()  # goes on from the step on show
    assert_clean(at)
    assert step_shown(at) == 4
    at.run()
    assert step_shown(at) == 5


def test_a_cross_attention_head_in_the_url_is_refused_with_a_note():
    at = run(ATTENTION, {"model": GPT2, "ablate": "dec-cross-1-1"})
    assert_clean(at)
    assert any("URL parameter ablate" in w.value for w in at.warning)


# ---------------------------------------------------------------------------------------------
# Masks lab


def test_the_causal_experiment_shows_the_future_leaking(gpt2):
    at = run(MASKS, {"model": GPT2, "sentence": PROMPT, "lab": "causal", "layer": "2"})
    assert_clean(at)
    spec = chart_titled(at, "Self-attention over prompt and continuation")
    on, off = array(spec["data"][0]["z"]), array(spec["data"][1]["z"])
    expected = gpt2.generate(PROMPT, Interventions(), DecodeOptions())
    n = len(expected.prompt_ids) + len(expected.output_ids) - 1
    assert on.shape == off.shape == (n, n)
    assert np.allclose(np.triu(on, k=1), 0.0) and np.triu(off, k=1).max() > 0.01, "mask off: later pieces seen"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Weight on later pieces, layer L2, mask on"] == "0.0%"
    assert float(metrics["the same with the mask off"].rstrip("%")) > 1.0
    without = gpt2.generate(PROMPT, Interventions(causal_mask=False), DecodeOptions())
    large = [m.value for m in at.markdown if m.value.startswith("<div style='font-size")]
    assert [re.sub(r"^<div[^>]*>|</div>$", "", v) for v in large] == [
        shown(expected.continuation) or "(empty)",
        shown(without.continuation) or "(empty)",
    ]
    assert chart_titled(at, "Probability of each new piece")


def test_the_padding_experiment_says_the_causal_mask_already_hides_right_padding():
    at = run(MASKS, {"model": GPT2, "lab": "padding", "short": "I see"})
    assert_clean(at)
    assert "no source sentence to pad" in texts(at)
    assert chart_titled(at, "The shorter prompt, self-attention")
    assert at.metric[0].value == "0.0000" and "causal mask already" in texts(at)
    at.sidebar.toggle(key="w_causal").set_value(False).run()
    assert_clean(at)
    assert float(at.metric[0].value) > 0, "without the causal mask, real pieces leak into the padding"


def test_the_knock_out_experiment_and_sweep_work():
    at = run(MASKS, {"model": GPT2, "lab": "knockout", "ablate": "dec-self-1-1"})
    assert_clean(at)
    assert chart_titled(at, "Probability of each output piece, before and after")
    assert any("original continuation" in c.value for c in at.caption)
    button(at, "Run the knock-out sweep").click().run()
    assert_clean(at)
    frame = at.dataframe[-1].value
    assert "continuation changed" in frame.columns and len(frame) == 3  # 4 heads, one already off


# ---------------------------------------------------------------------------------------------
# Switches and T5


def test_switches_say_what_they_do_or_why_they_do_not_apply():
    at = run(CONTINUE, {"model": GPT2})
    toggles = {t.label: t for t in at.sidebar.toggle}
    assert "no source sentence" in toggles["Padding mask"].help
    assert "learned position table" in toggles["Positional encoding"].help
    assert not toggles["Scale scores by 1/√d_k"].disabled
    notes = " ".join(c.value for c in at.sidebar.caption).replace("\\", "")
    assert "No source sentence to pad" in notes and "learned position table is not added" in notes
    at = run(CONTINUE, {"model": FLAN})
    toggles = {t.label: t for t in at.sidebar.toggle}
    assert toggles["Scale scores by 1/√d_k"].disabled and "never divides" in toggles["Scale scores by 1/√d_k"].help
    assert "relative-position bias" in toggles["Positional encoding"].help


def test_a_t5_without_a_prefix_takes_one_typed_before_the_sentence(folders):
    at = run(CONTINUE, {"model": FLAN, "sentence": PROMPT})
    assert_clean(at)
    assert at.title[0].value == "Translate"
    prefix = at.text_input(key="w_prefix")
    assert prefix.value == SUGGESTED_PREFIX
    assert "no task prefix of its own" in texts(at)
    assert at.text[0].value == SUGGESTED_PREFIX + PROMPT  # what the model read
    flan = load_bundle(folders[FLAN])
    assert big(at) == shown(flan.translate(SUGGESTED_PREFIX + PROMPT).translation)
    assert list(at.dataframe[0].value["id"]) == flan.encode_source(SUGGESTED_PREFIX + PROMPT)[1]
    prefix.input("summarize: ").run()
    assert_clean(at)
    assert at.text[0].value == "summarize: " + PROMPT
    assert at.query_params["prefix"] in ("summarize: ", ["summarize: "])
    at.text_input(key="w_prefix").input("").run()
    assert_clean(at)
    assert at.text[0].value == PROMPT
    other = run(CONTINUE, {"model": FLAN, "sentence": PROMPT})  # another person's session
    assert other.text[0].value == SUGGESTED_PREFIX + PROMPT
    assert other.text_input(key="w_prefix").value == SUGGESTED_PREFIX


def test_a_t5_prefix_reaches_the_other_pages_and_an_empty_sentence_is_still_refused():
    at = run(ATTENTION, {"model": FLAN, "sentence": PROMPT, "prefix": "summarize: "})
    assert_clean(at)
    assert any("summarize: " in c.value for c in at.sidebar.caption)
    at.sidebar.text_input(key="w_sentence").input("   ").run()
    assert not at.exception and at.error


def test_a_t5_with_its_own_prefix_says_the_model_reads_it_first():
    at = run(CONTINUE, {"model": T5, "sentence": PROMPT})
    assert_clean(at)
    assert not [t for t in at.text_input if t.key == "w_prefix"]
    assert any("translate English to French: " in i.value and "before the sentence" in i.value for i in at.info)
    assert at.text[0].value == "translate English to French: " + PROMPT


def test_at_a_costly_size_the_causal_experiment_generates_without_the_mask_when_asked(gpt2, monkeypatch):
    """A model too large for every step to re-read the whole text unasked (EAGER_WORK 0 stands in for a
    real-size GPT-2): the one-pass view at once, the continuation without the mask behind a button."""
    monkeypatch.setattr("ui.page.ondemand.EAGER_WORK", 0.0)
    at = run(MASKS, {"model": GPT2, "sentence": "The old man reads", "lab": "causal"})
    assert_clean(at)
    assert chart_titled(at, "Self-attention over prompt and continuation")
    assert "re-reads the prompt" in texts(at)
    with pytest.raises(AssertionError):
        chart_titled(at, "Probability of each new piece")
    at.button(key="causal-off-continuation").click().run()
    assert_clean(at)
    assert chart_titled(at, "Probability of each new piece: causal mask on (before) and off (after)")


@pytest.mark.parametrize(
    "page, key",
    [
        ("pages/3_positional_encoding.py", "continue-without-positions"),
        ("pages/6_design_choices.py", "continue-scale_scores-False"),
    ],
)
def test_at_a_costly_size_a_second_continuation_waits_for_its_button(page, key, monkeypatch):
    """Continuing the text again under another switch (positions off, no 1/sqrt(d_k)) costs a whole
    continuation: at a real GPT-2's size (EAGER_WORK 0 stands in for it) it waits for its button."""
    monkeypatch.setattr("ui.page.ondemand.EAGER_WORK", 0.0)
    prompt = "I drink water every"  # a continuation no other test has cached
    at = run(page, {"model": GPT2, "sentence": prompt})
    assert_clean(at)
    assert "the button runs it" in texts(at)
    before = len([m for m in at.markdown if m.value.startswith("<div style='font-size")])
    at.button(key=key).click().run()
    assert_clean(at)
    assert len([m for m in at.markdown if m.value.startswith("<div style='font-size")]) == before + 2


@pytest.mark.parametrize(
    "page, prompt",
    [
        (CONTINUE, "A red car drives in the"),
        (ATTENTION, "A blue car drives in the"),
        ("pages/8_why.py", "A car drives"),
    ],
)
def test_at_a_costly_size_the_continuation_without_the_causal_mask_waits_for_its_button(page, prompt, monkeypatch):
    """With the causal mask off every step re-reads the whole text (no cache can hold it): at a real size
    (EAGER_WORK 0 stands in for it) the page's own continuation waits for a button, then shows, and stays."""
    monkeypatch.setattr("ui.page.ondemand.EAGER_WORK", 0.0)
    at = run(page, {"model": GPT2, "sentence": prompt, "causal": "off"})  # a prompt no other test continues so
    assert_clean(at)
    assert "re-reads the prompt" in texts(at) and "Continuation" not in texts(at) and not at.get("plotly_chart")
    at.button(key="continue-without-causal-mask").click().run()
    assert_clean(at)
    assert "Continuation" in texts(at)  # the page's own, drawn from it (the Why page's charts wait for buttons)
    at.run()
    assert "Continuation" in texts(at) and "re-reads the prompt" not in texts(at)
    assert not [b for b in at.button if b.key == "continue-without-causal-mask"]
