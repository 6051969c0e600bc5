"""Every page on the five families of today's decoders (tiny Llama, Qwen2, Qwen3, Gemma 3 and GPT-NeoX
folders written by transformers, offered through $ANATOMY_MODELS), and the Why page's attribution, lens
and patching on them, as on GPT-2 (tests/app/test_app_why_families.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hf_fixtures import DECODER_FAMILIES, make_decoder_dir
from test_app import assert_clean, chart_titled, charts, run, translation
from test_app_models import PAGE_FILES, texts
from test_app_why_families import METHOD_LINES, _method_lines, _piece_on_show
from test_families_t5_gpt2 import _sharpen

SENTENCE = "The small girl sees a white bird."
DONOR = "The small bird sees a white girl."


def _name(family: str) -> str:
    return f"tiny-{family.replace('_', '-')}"


INSTRUCT = "tiny-qwen2-instruct"


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """The five families (sharpened) and an instruct Qwen2 with a chat template."""
    root = tmp_path_factory.mktemp("decoders")
    made = {
        family: _sharpen(make_decoder_dir(root / _name(family), family, seed=3), 4.0) for family in DECODER_FAMILIES
    }
    made["instruct"] = make_decoder_dir(root / INSTRUCT, "qwen2", seed=3, chat_template=True)
    return made


@pytest.fixture(autouse=True)
def models_env(folders, monkeypatch):
    monkeypatch.setenv("ANATOMY_MODELS", ":".join(str(path) for path in folders.values()))


# One family's frame in AppTest (the decoder-only kind: its sidebar and notices); every page's panels on all five
# families: tests/views/test_every_family.py.
@pytest.mark.parametrize("family", ["gemma3_text"])
@pytest.mark.parametrize("page", PAGE_FILES)
def test_every_page_opens_on_each_family(page, family):
    at = run(page, {"model": _name(family), "sentence": SENTENCE, "layer": "2", "head": "2"})
    assert_clean(at)
    if page != "pages/7_training.py":
        assert charts(at)
    assert at.sidebar.selectbox(key="w_model").value == _name(family)


@pytest.mark.parametrize("family", DECODER_FAMILIES)
def test_why_explains_a_continuation_by_every_method(family):
    at = run("pages/8_why.py", {"model": _name(family), "sentence": SENTENCE, "donor": DONOR})
    assert_clean(at)
    assert _piece_on_show(at).startswith("#### New piece 1,")
    assert _method_lines(at) == METHOD_LINES
    layers = 3 if family == "gemma3_text" else 2
    lens = at.dataframe[0].value
    assert list(lens.index) == [f"layer {i + 1}" for i in range(layers)] and lens.iloc[-1, 0].startswith("✓")
    grid = chart_titled(at, "New piece 1")
    assert list(grid["data"][0]["y"]) == ["prompt embeddings"] + [f"decoder layer {i + 1}" for i in range(layers)]
    assert any(m.value.startswith("The biggest change") for m in at.markdown)
    assert "decoder-only" in texts(at)


# A chat message on every page (on by default, in the URL, the Continue page's answer): tests/app/test_app_chat.py.


def test_a_chat_template_that_fails_warns_and_the_plain_prompt_stays(folders, tmp_path, monkeypatch):
    broken = Path(shutil.copytree(folders["instruct"], tmp_path / "tiny-broken-chat"))
    (broken / "chat_template.jinja").write_text("{{ raise_exception('no user turns here') }}")
    monkeypatch.setenv("ANATOMY_MODELS", str(broken))
    at = run("pages/1_translate.py", {"model": "tiny-broken-chat", "sentence": SENTENCE})
    at.checkbox(key="w_chat").check().run()
    assert not at.exception and not at.error
    assert any("could not wrap the text" in w.value and "no user turns here" in w.value for w in at.warning)
    assert translation(at)  # the plain continuation is still on show
