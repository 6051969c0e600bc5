"""views.show draws every page outside Streamlit: on the shipped model, an encoder (MiniLM), the real SmolLM2 as a
chat model and a tiny Gemma 3, in English and Chinese; and what it draws is what the Streamlit page draws for the
same URL (the figures' titles, in order, against AppTest)."""

from __future__ import annotations

import json

import pytest
from hf_fixtures import make_decoder_dir
from page_words import english_sentences, figure_texts, panel_words
from plotly_form import assert_in_plotly_s_own_form
from streamlit.testing.v1 import AppTest

import views
from model.checkpoints.catalog import MINILM, SMOLLM2
from ui.session.nav import PAGES as MENU
from ui.session.nav import ROOT
from views.pages import PAGES, ControlError

GEMMA = "tiny-gemma3"
MODELS = (None, MINILM, SMOLLM2, GEMMA)
TEXTS = {None: "The small girl sees a white bird.", SMOLLM2: "What is the capital of France?"}
PAGE_FILES = {slug: str(ROOT / path) for path, _title, slug in MENU}


@pytest.fixture(scope="module", autouse=True)
def gemma(tmp_path_factory):
    """A tiny Gemma 3 (sliding windows, four norms a layer) offered in the Model menu."""
    folder = make_decoder_dir(tmp_path_factory.mktemp("decoders") / GEMMA, "gemma3_text", seed=3)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ANATOMY_MODELS", str(folder))
        yield folder


def test_a_drawing_put_together_unchecked_is_held_to_plotly_s_own_form():
    from viz.looks import self_contained
    from viz.style import Style

    style = Style()
    whole = style.drawing(
        [dict(type="heatmap", z=[[0.5]], colorscale=style.weights)], "T", 300, margin=dict(t=90), shapes=[]
    )
    assert_in_plotly_s_own_form(whole)
    assert whole.layout.margin.to_plotly_json() == dict(l=10, r=10, t=90, b=10)
    self_contained(whole)  # as every figure is drawn: its template's looks in it, no template left, not even None
    assert "template" not in whole.to_dict()["layout"] and whole.layout.font.size == style.font
    assert whole.layout.xaxis.ticks == "outside" and whole.data[0].colorbar.exponentformat == "power"
    assert "plotly-graph-div" in whole.to_html(full_html=False, include_plotlyjs=False)
    assert_in_plotly_s_own_form(whole)
    for shorthand in (dict(colorbar=dict(title="weight")), dict(colorscale="Viridis")):
        with pytest.raises(AssertionError):
            assert_in_plotly_s_own_form(style.drawing([dict(type="heatmap", z=[[0.5]], **shorthand)]))


def test_the_menu_and_views_know_the_same_pages():
    assert list(PAGES) == list(PAGE_FILES)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("page", list(PAGES))
def test_every_page_draws_on_every_kind_of_model(page, model, lang):
    shown = views.show(page, TEXTS.get(model, "The cat eats the apple."), model=model, lang=lang)
    keys = [panel.key for panel in shown]
    assert shown.panels and len(keys) == len(set(keys)), keys
    # a model not trained here has no curves to draw; an encoder alone writes no piece to explain or compare
    if (page != "training" or model is None) and (page not in ("why", "compare") or model != MINILM):
        assert shown.figures, f"{page} on {model} draws no figure"
    for figure in shown.figures:
        assert figure.data or figure.layout.shapes, figure.layout.title.text
        assert_in_plotly_s_own_form(figure)
    if lang == "zh":
        text = TEXTS.get(model, "The cat eats the apple.")
        words = [panel_words(shown, outputs=False)] + [word for panel in shown for word in figure_texts(panel)]
        assert not english_sentences(words, typed=[text])
    elif model == MINILM:  # an encoder reads any English sentence: nothing to warn of
        assert not [panel.text for panel in shown if panel.tone in ("warning", "error")]


def test_a_bad_control_is_refused_with_the_urls_own_message():
    with pytest.raises(ControlError, match="layer"):
        views.show("attention", "The cat eats the apple.", layer=99)
    with pytest.raises(ControlError, match="no control"):
        views.show("attention", "The cat eats the apple.", nonsense=1)
    with pytest.raises(ValueError, match="no page"):
        views.show("attn")


def _app_titles(page: str, model: str | None, text: str) -> list[str]:
    at = AppTest.from_file(PAGE_FILES[page], default_timeout=300)
    at.query_params["sentence"] = text
    if model:
        at.query_params["model"] = model
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return [json.loads(chart.proto.spec)["layout"].get("title", {}).get("text", "") for chart in at.get("plotly_chart")]


@pytest.mark.parametrize("model", [None, SMOLLM2])
@pytest.mark.parametrize("page", list(PAGES))
def test_a_notebook_draws_the_figures_the_page_draws(page, model):
    text = TEXTS[model]
    assert views.show(page, text, model=model).titles == _app_titles(page, model, text)
