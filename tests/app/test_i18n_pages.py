"""Every page in Chinese, as AppTest sees it: on the shipped model, the packaged MiniLM and a tiny chat
decoder, no English sentence of four or more words is left in what the page itself says (tests/page_words.py
leaves out what the person typed, the model's pieces and output, names and code); the language switch keeps
the page, the sentence and every control; English is what it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from hf_fixtures import make_decoder_dir
from page_words import english_on_page
from streamlit.testing.v1 import AppTest
from test_app import assert_clean, charts
from test_app_models import PAGE_FILES

from i18n import speaking

ROOT = Path(__file__).resolve().parents[2]
SENTENCE = "The small girl sees a white bird."
DECODER = "tiny-qwen2-instruct"
MODELS = {"shipped": None, "minilm": "all-MiniLM-L6-v2", "decoder": DECODER}
TIMEOUT = 300


@pytest.fixture(scope="module")
def decoder_dir(tmp_path_factory):
    return make_decoder_dir(tmp_path_factory.mktemp("zh") / DECODER, "qwen2", seed=3, chat_template=True)


@pytest.fixture(autouse=True)
def models_env(decoder_dir, monkeypatch):
    monkeypatch.delenv("ANATOMY_CHECKPOINT", raising=False)
    monkeypatch.setenv("ANATOMY_MODELS", str(decoder_dir))


def run(page: str, model: str | None, **params: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / page), default_timeout=TIMEOUT)
    for key, value in {"sentence": SENTENCE, **({"model": model} if model else {}), **params}.items():
        at.query_params[key] = value
    return at.run()


@pytest.mark.parametrize("model", sorted(MODELS))
@pytest.mark.parametrize("page", PAGE_FILES)
def test_a_page_in_chinese_says_no_english_sentence(page, model):
    at = run(page, MODELS[model], lang="zh")
    assert_clean(at)
    assert english_on_page(at, [SENTENCE]) == []
    assert at.sidebar.radio(key="w_lang").value == "zh"


def test_the_scan_finds_english_on_an_english_page():
    """The check above can fail: the same page in English is full of sentences."""
    at = run("pages/2_attention.py", None, lang="en")
    assert len(english_on_page(at, [SENTENCE])) > 20


def test_changing_the_language_keeps_the_page_the_sentence_and_every_control():
    at = run("pages/2_attention.py", None, lang="zh", layer="2", head="3", causal="off", present="on")
    assert_clean(at)
    title = at.title[0].value
    figures = len(charts(at))
    # AppTest says a widget's options again in the test's own thread, with their format_func: in the page's language
    with speaking("zh"):
        at.sidebar.radio(key="w_lang").set_value("en").run()
    assert_clean(at)
    assert at.title[0].value == "Attention" != title
    assert len(charts(at)) == figures
    params = dict(at.query_params)
    for key, value in {"lang": "en", "layer": "2", "head": "3", "causal": "off", "present": "on"}.items():
        assert params[key] in (value, [value]), key
    assert params["sentence"] in (SENTENCE, [SENTENCE])
    at.sidebar.radio(key="w_lang").set_value("zh").run()
    assert at.title[0].value == title
