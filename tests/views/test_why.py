"""The Why this word? page as data (views.why): on the shipped model, a tiny T5 and a tiny GPT-2, MiniLM and the
real SmolLM2 as a chat model, in English and Chinese, the panels a notebook gets are the page's: the piece on
show and every method's line, the whole table, what the methods say, the lens, the patching grid, its biggest
change and your own patch, the heads' roles; what waits for a button at a real size says so instead; and the words
and tables are those the Streamlit page draws for the same URL."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from fixtures import offered
from hf_fixtures import make_gpt2_dir, make_t5_dir
from page_words import english_sentences, figure_texts
from page_words import panel_words as said
from streamlit.testing.v1 import AppTest
from test_analysis_families import GPT2_SHARPEN, T5_SHARPEN
from test_app import ROOT
from test_families import _sharpen

import views
from model.checkpoints.catalog import MINILM, SMOLLM2
from views import why as view
from views.explained import explained
from views.models import open_model
from views.pages import ControlError, scene_for
from views.panels import PageView, Panel

GIRL = "The small girl sees a white bird."
BOY = "The small boy sees a white bird."
DONOR = "The small bird sees a white girl."  # as many pieces as GIRL in both tiny vocabularies
LONG = "My sister will give the red apple to the old teacher."
METHOD_LINES = ["attention", "rollout", "gradient", "integrated-gradients", "occlusion"]
QUESTION = "What is the capital of France?"
SHARES_KEYS = ["why-shares", "why-shares-top", "why-writes", "why-routes"]  # "Which heads wrote it"'s figures


@pytest.fixture(scope="module", autouse=True)
def models(tmp_path_factory):
    """The shipped model as the default, and a tiny T5 and GPT-2 offered in the Model menu (sharpened, as the
    app's family tests do, so that their attention is not uniform)."""
    root = tmp_path_factory.mktemp("why-models")
    folders = [
        _sharpen(make_t5_dir(root / "t5-tiny", variant="t5", seed=1), T5_SHARPEN),
        _sharpen(make_gpt2_dir(root / "gpt2-tiny"), GPT2_SHARPEN),
    ]
    with offered(folders):
        yield


def method_lines(shown: PageView) -> list[str]:
    """The methods' names heading the lines of shaded text."""
    return re.findall(r"<b style=\"min-width:[\d.]+em\">([^<]+)</b>", shown["why-methods"].text)


def frame(panel: Panel) -> pd.DataFrame:
    """A panel's table as a frame (the lens table is a styled one)."""
    return getattr(panel.table, "data", panel.table)


def z(panel: Panel) -> np.ndarray:
    return np.asarray(panel.figure.data[0].z, dtype=float)


@pytest.fixture(scope="module")
def shipped() -> PageView:
    return views.show("why", GIRL, step=4, donor=BOY)  # "La petite fille ...": piece 4 is "fille"


def test_the_shipped_model_explains_the_piece_on_show_in_the_pages_order(shipped):
    keys = [panel.key for panel in shipped]
    assert keys[:3] == ["why-piece", "why-methods", "attribution"] and keys[-2:] == ["why-roles-summary", "why-roles"]
    order = ["why-methods-say", "why-lens-table", "lens", "why-patching", "patch-grid", "why-biggest", "patch"]
    assert [key for key in keys if key in order] == order
    assert shipped["why-piece"].text.startswith("#### Output piece 4, **fille**")
    assert method_lines(shipped) == METHOD_LINES
    table = shipped["attribution"]
    assert table.title == "Attribution: occlusion" and table.figure.layout.xaxis.title.text.startswith("source piece")
    assert z(table).shape[1] == len(shipped.result.trace.src_pieces)
    assert "Rows are the output pieces, columns the source pieces" in table.caption


def test_the_lens_table_checks_the_piece_the_model_wrote(shipped):
    lens = shipped["why-lens-table"]
    assert lens.heading == "What each decoder layer would already write"
    assert list(lens.table.data.index) == ["layer 1", "layer 2", "layer 3"]
    assert lens.table.data.iloc[-1, 0].startswith("✓ fille")  # the last layer's first choice is what was written
    assert shipped["lens"].title.startswith("Logit lens")


def test_the_patching_grid_finds_the_word_that_differs_and_translates_with_it(shipped):
    grid = shipped["patch-grid"]
    assert grid.title.startswith("Output piece 4")
    rows = list(grid.figure.data[0].y)
    assert rows[0] == "source embeddings" and rows[-1] == "encoder layer 3 (memory)"
    assert grid.figure.layout.xaxis.title.text.startswith("source position")
    biggest = shipped["why-biggest"].text
    assert "at position 2 (**girl**" in biggest, "positions count from 0, as on every page"
    assert shipped["why-patched-text"].text.startswith("> ") and "garçon" in shipped["why-patched-text"].text
    own = shipped["patch"]
    assert own.title.startswith("Your translation's pieces, the source embeddings at positions 1-")


def test_a_donor_equal_to_the_sentence_changes_nothing():
    shown = views.show("why", GIRL, donor=GIRL)
    assert (abs(z(shown["patch-grid"])) < 1e-4).all()  # float rounding at most
    assert shown["why-no-single-position"].caption.startswith("No single position changes the piece")
    assert "why-biggest" not in [panel.key for panel in shown] and "patch" not in [panel.key for panel in shown]


def test_a_change_within_rounding_is_said_in_words_and_the_pieces_it_moves_are_offered():
    shown = views.show("why", GIRL, step=7, donor=BOY)  # "oiseau": the grid's biggest cell is below 0.005
    assert 1e-4 < abs(z(shown["patch-grid"])).max() < 0.005
    caption = shown["why-no-single-position"].caption
    assert "**oiseau**" in caption and "**girl** (donor: **boy**)" in caption and "shown as 0.00" in caption
    assert shown["why-moved-lead"].text.startswith("With all of those words from the donor")
    offered = [label.split(" (")[0] for label in shown["why-moved"].text.split(" · ")]
    assert {"L", "a", "petite", "fille"} <= set(offered) and "oiseau" not in offered


def test_a_costly_whole_table_says_it_waits_for_its_button():
    """Integrated gradients over a ten-word sentence's thirteen output pieces cost more than the page computes
    unasked: the page shows the piece on show's lines and says so where the table would be."""
    shown = views.show("why", LONG, method="integrated-gradients")
    assert not any(title.startswith("Attribution") for title in shown.titles)
    assert "costs more than this page computes unasked" in shown["why-whole-table"].caption
    assert method_lines(shown) == METHOD_LINES


def test_the_card_doubts_input_times_gradient_with_its_own_figure(shipped):
    doubt = shipped["why-doubt-gradient"].caption
    figure = open_model(None).card["explanations"]["attribution_agreement"]["gradient"]
    assert "known to disagree" in doubt and f"**{figure:g}%**" in doubt and "input × gradient" in doubt.lower()


def test_a_t5_translation_is_explained_its_task_prefix_included():
    shown = views.show("why", GIRL, model="t5-tiny", donor=DONOR, step=2)
    assert shown["why-piece"].text.startswith("#### Output piece 2,")
    assert method_lines(shown) == METHOD_LINES
    words = said(shown)
    assert "task prefix" in words and "translate English to French:" in words
    assert "start from the padding piece's embedding" in words and "positions are a bias" in words
    assert "rescale by 1/√d_model" in words  # the tied t5 head: the lens goes through project()
    assert shown["attribution"].figure.layout.xaxis.title.text.startswith("source piece")
    lens = shown["why-lens-table"].table.data  # a styled frame: the piece written is shaded
    assert list(lens.index) == ["layer 1", "layer 2"] and lens.iloc[-1, 0].startswith("✓")
    rows = list(shown["patch-grid"].figure.data[0].y)
    assert rows == ["source embeddings", "encoder layer 1", "encoder layer 2", "encoder memory"]
    assert shown["why-biggest"].text.startswith("The biggest change") and "why-patched-text" in shown_keys(shown)
    assert set(shown["why-roles"].table["block"]) == {"encoder self", "decoder self", "decoder cross"}


def shown_keys(shown: PageView) -> list[str]:
    return [panel.key for panel in shown]


def test_a_gpt2_continuation_is_explained_over_its_prompt():
    shown = views.show("why", GIRL, model="gpt2-tiny", donor=DONOR)
    prompt = shown.result.prompt_ids
    assert shown["why-prompt"].text.startswith("**Prompt**") and "**Continuation**" in shown["why-prompt"].text
    assert shown["why-piece"].text.startswith("#### New piece 1,")
    assert method_lines(shown) == METHOD_LINES
    subscript = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")  # each piece's position, after it (viz.labels.at_position)
    found = re.findall(r'<span title="[^"]*?([₀-₉]+): ', shown["why-methods"].text)
    assert {int(at.translate(subscript)) for at in found} == set(range(len(prompt)))  # the prompt's pieces
    words = said(shown)
    assert "decoder-only" in words and "no cross-attention" in words
    grid = shown["patch-grid"]
    assert list(grid.figure.data[0].y) == ["prompt embeddings", "decoder layer 1", "decoder layer 2"]
    assert grid.figure.layout.xaxis.title.text.startswith("prompt position")
    assert "continued with that one activation" in shown["why-made-again"].text
    lens = shown["why-lens-table"].table.data  # a styled frame: the piece written is shaded
    assert list(lens.index) == ["layer 1", "layer 2"] and lens.iloc[-1, 0].startswith("✓")
    roles = shown["why-roles"].table
    assert set(roles["block"]) == {"decoder self"} and "last" not in roles.columns and "alignment" not in roles.columns
    assert "no alignment with a gold word alignment" in words and "no encoder heads" in words


def test_a_gpt2_prompt_patched_with_itself_changes_nothing():
    shown = views.show("why", GIRL, model="gpt2-tiny", donor=GIRL, step=3)
    assert shown["why-piece"].text.startswith("#### New piece 3,")
    assert shown["why-no-single-position"].caption.startswith("No single position changes the piece")


def test_at_a_costly_size_what_waits_for_a_button_says_so():
    """At a real size (no work spare beside the continuation), integrated gradients and occlusion of the piece,
    the whole table, every piece's lens and the patching grid wait for their buttons; attention, rollout and the
    lens of the piece on show come at once."""
    scene = scene_for("why", "The old man reads a book.", model="gpt2-tiny")
    why = explained(scene, lambda bundle, steps: 0.0)
    shown = PageView("why", scene.result, view.explanation(why, 0))
    assert method_lines(shown) == ["attention", "rollout"]
    assert "cost more than this page computes unasked" in shown["why-costly-methods"].caption
    assert "costs more than this page computes unasked" in shown["why-whole-table"].caption
    assert "computed when you ask" in shown["why-lens-all"].caption
    assert "computed when you ask" in shown["why-patch-grid"].caption
    # only "Which heads wrote it" is drawn: it reads the continuation's own trace, with no pass of its own
    assert [panel.key for panel in shown if panel.figure is not None] == SHARES_KEYS
    lens = shown["why-lens-table"].table.data  # a styled frame: the piece written is shaded
    assert list(lens.index) == ["layer 1", "layer 2"] and lens.iloc[-1, 0].startswith("✓")


def test_an_encoder_alone_has_nothing_to_explain_but_its_heads_roles():
    shown = views.show("why", GIRL, model=MINILM)
    assert shown_keys(shown) == ["why-no-output", "why-roles-summary", "why-roles"]
    assert shown["why-no-output"].tone == "info" and "does not translate" in shown["why-no-output"].text
    assert set(shown["why-roles"].table["block"]) == {"encoder self"}
    assert "(</s> or [SEP])" in shown["why-roles"].caption


@pytest.fixture(scope="module")
def smollm2() -> PageView:
    return views.show("why", QUESTION, model=SMOLLM2)


def test_the_real_smollm2_explains_its_answer_to_a_chat_message(smollm2):
    result = smollm2.result
    assert smollm2["why-chat"].text.startswith("**Chat message**") and "**Answer**" in smollm2["why-chat"].text
    assert f"wrapped by the chat template: {len(result.prompt_ids)} pieces" in smollm2["why-chat-pieces"].caption
    assert smollm2["why-piece"].text.startswith("#### Answer piece 1,")
    columns = re.findall(r'<span title="([^"]*?): ', smollm2["why-methods"].text)
    assert len(set(columns)) == len(result.prompt_ids)  # one column per piece of the wrapped prompt
    assert 'title="&lt;|im_start|&gt;₀:' in smollm2["why-methods"].text
    sink = smollm2["why-sink"].caption.replace("\\", "")
    assert "first to **&lt;|im_start|&gt;**, the first piece" in sink  # where its heads park their attention
    assert "(your chat message, wrapped by the chat template)" in said(smollm2)
    assert smollm2["why-lens-table"].table.data.iloc[-1, 0].startswith("✓")
    assert smollm2["why-patching"].heading == "Patching: activations from another prompt"
    assert set(smollm2["why-roles"].table["block"]) == {"decoder self"}


@pytest.mark.parametrize("model", [None, "gpt2-tiny"])
def test_the_page_in_chinese_says_no_english_sentence(model):
    shown = views.show("why", GIRL, model=model, lang="zh")
    texts = [f"{p.heading}\n{p.text}\n{p.caption}" for p in shown]
    texts += [text for panel in shown for text in figure_texts(panel)]
    texts += [str(column) for panel in shown if panel.table is not None for column in frame(panel).columns]
    assert english_sentences(texts, [GIRL]) == []
    assert not shown["why-piece"].text.startswith(("#### Output piece", "#### New piece"))


def test_a_method_the_page_does_not_have_is_refused_with_the_urls_own_message():
    with pytest.raises(ControlError, match="expected one of"):
        views.show("why", GIRL, method="saliency")


def test_the_panels_are_what_the_streamlit_page_draws():
    """The same URL on the app: its captions, markdown, tables and figures' titles are the panels' own."""
    shown = views.show("why", GIRL, step=4, donor=BOY)
    at = AppTest.from_file(str(ROOT / "pages/8_why.py"), default_timeout=300)
    for key, value in {"sentence": GIRL, "step": "4", "donor": BOY}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    captions = [c.value for c in at.main.caption]
    markdown = [m.value for m in at.main.markdown]
    assert [p.caption for p in shown if p.caption] == [c for c in captions if c in {p.caption for p in shown}]
    assert [p.text for p in shown if p.text] == [m for m in markdown if m in {p.text for p in shown}]
    assert shown.titles == [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]
    assert [h.value for h in at.main.subheader] == [p.heading for p in shown if p.heading]
    assert at.dataframe[0].value.equals(shown["why-lens-table"].table.data)
