"""AppTest of every page on real-layout models: the packaged all-MiniLM-L6-v2 (encoder-only), tiny
random Marian, GPT-2 (decoder-only) and T5 directories made by transformers, and the model picker itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from hf_fixtures import make_gpt2_dir, make_marian_dir, make_t5_dir
from safetensors.torch import load_file, save_file
from streamlit.testing.v1 import AppTest
from test_app import ROOT, TIMEOUT, assert_clean, charts, run

MINILM = "all-MiniLM-L6-v2"
GPT2, FLAN, T5 = "tiny-gpt2", "tiny-flan-t5", "tiny-t5"
PAGE_FILES = [
    "pages/1_translate.py",
    "pages/2_attention.py",
    "pages/3_positional_encoding.py",
    "pages/4_tensor_shapes.py",
    "pages/5_masks_and_heads.py",
    "pages/6_design_choices.py",
    "pages/7_training.py",
    "pages/8_why.py",
]
# GPT-2's weight matrices x 20 (tests/families/test_families.py): peaked patterns, outputs that follow the prompt
SHARPEN = 20.0


def sharpen(path: Path, scale: float = SHARPEN) -> Path:
    """Rewrite path/model.safetensors with every 2-D weight scaled by `scale` (GPT-2's tied embedding too):
    the tiny random model's near-uniform attention and logits become peaked, so its output depends on its input."""
    file = path / "model.safetensors"
    tensors = load_file(str(file))
    save_file(
        {name: t * scale if t.dim() == 2 else t for name, t in tensors.items()}, str(file), metadata={"format": "pt"}
    )
    return path


def gpt2_folder(root: Path) -> Path:
    """A tiny GPT-2 folder (sharpened) named GPT2."""
    return sharpen(make_gpt2_dir(root / GPT2))


def flan_folder(root: Path) -> Path:
    """A tiny flan-t5 folder without a task prefix of its own, named FLAN."""
    return make_t5_dir(root / FLAN, variant="flan", task_prefix=False)


def t5_folder(root: Path) -> Path:
    """A tiny original T5 folder with "translate English to French: " as its task prefix, named T5."""
    return make_t5_dir(root / T5, variant="t5", task_prefix=True)


@pytest.fixture(scope="module")
def marian_dir(tmp_path_factory):
    """A tiny Marian checkpoint folder, offered to the app through $ANATOMY_MODELS."""
    return make_marian_dir(tmp_path_factory.mktemp("models") / "tiny-marian")


@pytest.fixture(scope="module")
def family_dirs(tmp_path_factory) -> list[Path]:
    """Tiny GPT-2, flan-t5 and T5 folders, offered to the app through $ANATOMY_MODELS too."""
    root = tmp_path_factory.mktemp("families")
    return [gpt2_folder(root), flan_folder(root), t5_folder(root)]


@pytest.fixture(autouse=True)
def models_env(marian_dir, family_dirs, monkeypatch):
    monkeypatch.setenv("ANATOMY_MODELS", ":".join(str(p) for p in [marian_dir, *family_dirs]))


def texts(at: AppTest) -> str:
    """Every markdown, caption and info text of the page, joined, without markdown's escaping backslashes."""
    joined = "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info])
    return joined.replace("\\", "")


# Every page on a Marian, a GPT-2 and both T5s, and on the five decoder families: their panels are drawn in
# tests/views/test_every_family.py; here the encoder-only kind's frame, one AppTest per page.
@pytest.mark.parametrize("page", PAGE_FILES)
def test_every_page_runs_on_minilm(page):
    at = run(page, {"model": MINILM, "layer": "6", "head": "12"})
    assert_clean(at)
    assert not at.warning, [w.value for w in at.warning]
    if page not in ("pages/7_training.py", "pages/8_why.py"):  # tables only for an encoder
        assert charts(at), "the page draws its charts"
    for spec in charts(at):
        assert spec["data"] or spec["layout"].get("shapes")
    assert at.sidebar.selectbox(key="w_model").value == MINILM


def test_encoder_only_pages_say_what_does_not_apply():
    at = run("pages/2_attention.py", {"model": MINILM})
    assert "no decoder" in texts(at)
    titles = [spec["layout"]["title"]["text"] for spec in charts(at)]
    assert titles and not any("decoder" in t.lower() or "cross" in t.lower() for t in titles)
    # the sidebar shows the switches that do not apply, disabled, with the reason
    disabled = [t for t in at.sidebar.toggle if t.disabled]
    assert {t.label for t in disabled} == {"Decoding", "Causal mask", "Scale embeddings by √d_model"}
    assert "encoder-only" in texts(at)


def test_sentence_page_compares_two_sentences():
    at = run(
        "pages/1_translate.py",
        {"model": MINILM, "sentence": "A man is playing a guitar.", "compare": "Someone plays an instrument."},
    )
    assert_clean(at)
    assert at.title[0].value == "Sentence"
    near = float(at.metric[0].value)
    at = run(
        "pages/1_translate.py",
        {"model": MINILM, "sentence": "A man is playing a guitar.", "compare": "The stock market fell sharply today."},
    )
    far = float(at.metric[0].value)
    assert 0.3 < near <= 1.0 and far < near - 0.2, (near, far)


def test_training_page_shows_the_card_of_a_real_model():
    at = run("pages/7_training.py", {"model": MINILM})
    assert_clean(at)
    text = texts(at)
    assert "apache-2.0" in text and "bert" in text and "trained elsewhere" in text


def test_unknown_model_in_the_url_falls_back_with_a_warning():
    at = run("pages/1_translate.py", {"model": "no-such-model"})
    assert_clean(at)
    assert any("no-such-model" in w.value.replace("\\", "") for w in at.warning), [w.value for w in at.warning]
    assert at.title[0].value == "Translate"


def test_switching_model_keeps_layer_and_head_inside_the_new_model():
    at = run("pages/2_attention.py", {"model": MINILM, "layer": "6", "head": "12"})
    assert_clean(at)
    at.sidebar.selectbox(key="w_model").set_value("default").run()
    assert_clean(at)
    layer, head = at.sidebar.selectbox(key="w_layer"), at.sidebar.selectbox(key="w_head")
    assert (layer.value, head.value) == (len(layer.options), len(head.options)) == (3, 4)  # clamped from 6, 12
    assert at.query_params["model"] == ["default"] or at.query_params["model"] == "default"


def test_the_entrypoint_runs_with_a_model_in_the_url():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.query_params["model"] = MINILM
    at.run()
    assert_clean(at)
    assert at.title[0].value == "Sentence"


@pytest.mark.parametrize("model", [None, T5])
def test_an_encoder_decoders_decoder_cache_grows_and_its_cross_attention_cache_is_made_once(model):
    """The shipped model and T5 show their decoder's KV cache at the step, its cross-attention part
    computed once from the source."""
    at = run(
        "pages/2_attention.py", {"sentence": "The cat sees the dog.", "step": "2"} | ({"model": model} if model else {})
    )
    assert_clean(at)
    assert "The KV cache after step t = 2" in [h.value for h in at.subheader]
    said = texts(at)
    assert "cross-attention cache (the source's keys and values) was computed once" in said


def test_at_a_costly_size_the_translation_without_a_sink_waits_for_its_button(monkeypatch):
    """Hiding the first piece translates the sentence again: at a real size (EAGER_WORK 0 stands in for
    it) that waits for its button, as a decoder-only model's second continuation does."""
    monkeypatch.setattr("ui.page.ondemand.EAGER_WORK", 0.0)
    at = run("pages/2_attention.py", {"sentence": "The old dog sees a small bird."})  # a sentence no test caches
    assert_clean(at)
    assert "Translation without a sink" not in texts(at) and "the button runs it" in texts(at)
    at.button(key="continue-hide-first").click().run()
    assert_clean(at)
    assert "Translation without a sink" in texts(at)


LEADING = ["pages/3_positional_encoding.py", "pages/4_tensor_shapes.py", "pages/6_design_choices.py"]  # Page.lead


@pytest.mark.parametrize("model", ["", MINILM, "tiny-marian", GPT2, T5])
@pytest.mark.parametrize("page", LEADING)
def test_presentation_mode_moves_a_pages_leading_words_and_drops_none(page, model):
    shown = {present: run(page, {"model": model, "present": present}) for present in ("off", "on")}
    for at in shown.values():
        assert_clean(at)
    said = {present: sorted(m.value for m in at.markdown) for present, at in shown.items()}
    assert said["on"] == said["off"]
