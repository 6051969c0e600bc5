"""Every page's panels on every family the app reads (tiny real-layout folders written by transformers: Marian,
GPT-2, flan-T5, T5 and the five decoder families, sharpened as the app tests sharpen them), drawn by views.show:
what the AppTest matrices of tests/app/test_app_models.py and tests/app/test_app_decoders.py checked per page
(no error, every chart drawn, none empty), without a Streamlit run per page. One AppTest per page and model kind
stays in tests/app/ for the frame (the controls, notices and the URL)."""

from __future__ import annotations

import pytest
from fixtures import offered
from hf_fixtures import DECODER_FAMILIES, make_decoder_dir, make_marian_dir
from test_app_models import FLAN, GPT2, T5, flan_folder, gpt2_folder, t5_folder
from test_families_t5_gpt2 import _sharpen

import views
from views.pages import PAGES

MARIAN = "tiny-marian"
SENTENCE = "The small girl sees a white bird."
# (model, its controls): the URL each AppTest of the matrices opened
MODELS = {
    MARIAN: {},
    GPT2: {"layer": 2, "head": 2},
    FLAN: {},
    T5: {},
    **{f"tiny-{family.replace('_', '-')}": {"layer": 2, "head": 2} for family in DECODER_FAMILIES},
}


@pytest.fixture(scope="module", autouse=True)
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("families")
    made = [make_marian_dir(root / MARIAN), gpt2_folder(root), flan_folder(root), t5_folder(root)]
    made += [
        _sharpen(make_decoder_dir(root / f"tiny-{family.replace('_', '-')}", family, seed=3), 4.0)
        for family in DECODER_FAMILIES
    ]
    with offered(made):
        yield made


@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("page", list(PAGES))
def test_every_page_draws_on_every_family(page, model):
    shown = views.show(page, SENTENCE, model=model, **MODELS[model])
    assert not [panel.text for panel in shown if panel.tone == "error"]
    if page != "training":  # a model not trained here has no training curves
        assert shown.figures, f"{page} on {model} draws no figure"
    for figure in shown.figures:
        assert figure.data or figure.layout.shapes, figure.layout.title.text
