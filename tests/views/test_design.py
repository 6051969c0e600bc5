"""The Design choices page as data (views/design.py): each section's panels in order by kind of model, the
what-ifs measured, the recipe comparison and the page in Chinese. What the page's AppTest runs checked of its
pictures (tests/app/test_app.py, test_app_models.py, test_app_decoders.py, test_app_t5_gpt2_positions.py,
test_recipes.py, test_i18n_pages.py) is checked here on the panels."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from fixtures import offered
from hf_fixtures import make_decoder_dir, make_gpt2_dir, make_t5_dir
from page_words import english_sentences, layout_texts
from page_words import panel_keys as keys
from page_words import panel_words as said
from test_recipes import _write_runs

import views
from model.analysis.measures import mean_entropy
from model.checkpoints.catalog import MINILM
from model.training.recipe_results import RECIPES, SUMMARY
from model.training.recipes import summarize
from views import design
from views.pages import scene_for
from views.panels import PageView

PAGE = "design_choices"
SENTENCE = "The small girl sees a white bird."
LONG = (
    "The small girl sees a white bird and the old man reads a book in the garden while five boys often closed "
    "these blue windows but they will see their library and the red car drives far away into the night."
)
GPT2, T5, GEMMA = "tiny-gpt2", "tiny-t5", "tiny-gemma3"


@pytest.fixture(scope="module", autouse=True)
def folders(tmp_path_factory):
    """Tiny GPT-2 (learned positions), T5 (no √d_k, relative positions) and Gemma 3 (scaled embeddings, rotary
    positions) folders offered in the Model menu."""
    root = tmp_path_factory.mktemp("design")
    made = [
        make_gpt2_dir(root / GPT2),
        make_t5_dir(root / T5, variant="t5", task_prefix=True),
        make_decoder_dir(root / GEMMA, "gemma3_text", seed=3),
    ]
    with offered(made):
        yield made


def annotations(view: PageView) -> list[str]:
    """Every annotation of every figure (subplot titles among them)."""
    return [note.text for figure in view.figures for note in figure.layout.annotations]


def page_words(view: PageView) -> list[str]:
    """What a person reads of the panels: headings, words, captions, table headers and the figures' texts (not the
    model's outputs, said large)."""
    texts = [text for panel in view for text in (panel.heading, "" if panel.large else panel.text, panel.caption)]
    for panel in view:
        if panel.table is not None:
            texts += [str(column) for column in panel.table.columns]
    for figure in view.figures:
        spec = json.loads(figure.to_json())
        texts += list(layout_texts(spec["layout"]))
        texts += [trace.get(name) or "" for trace in spec["data"] for name in ("name", "hovertemplate")]
    return texts


# the last section (issue 51): one step's distribution at three temperatures, and its entropy against T
SAMPLING_SECTION = ["sampling-section", "temperature-lead", "temperature-bars", "temperature-entropy"]


def test_the_shipped_model_measures_every_choice():
    view = views.show(PAGE, SENTENCE)
    assert keys(view) == [
        "design-lead",
        "dk-section",
        "dk-lead",
        "dk-heads",
        "dk-random",
        "dk-softmax",
        "dk-switch",
        "dk-live",
        "dk-outputs-0",
        "dk-outputs-1",
        "dmodel-section",
        "dmodel-sizes",
        "dmodel-outputs-0",
        "dmodel-outputs-1",
        "fill-section",
        "fill-lead",
        "fill-demo",
        "fill-nan",
        "fill-uniform",
        "fill-engine",
        "recipes-section",
        "recipe-runs",
        "recipe-loss",
        "recipe-valid_loss",
        "recipe-valid_bleu",
        "recipe-findings",
        *SAMPLING_SECTION,
    ]
    assert [p.heading for p in view if p.key.endswith("-section")] == list(design.SECTIONS.values())
    assert view["dk-switch"].heading == "The switch, on the live model" and not view["dk-switch"].text
    assert len(view.figures) >= 7  # tests/app/test_app.py's count for the page
    for figure in view.figures:
        assert figure.data or figure.layout.shapes, figure.layout.title.text
    heads = view["dk-heads"].figure
    assert heads.layout.title.text == "Variance of the raw q·k of every encoder head"
    assert [t.name for t in heads.data] == ["H1", "H2", "H3", "H4"] and list(heads.data[0].x) == ["L1", "L2", "L3"]
    random_row = [(p.row, p.width) for p in (view["dk-random"], view["dk-softmax"])]
    assert random_row == [("dk-random", 2), ("dk-random", 3)]  # two fifths and three fifths of one row
    live = view["dk-live"].figure
    assert live.layout.title.text.startswith("Encoder self-attention L1 H1")
    assert [note.text for note in live.layout.annotations][:2] == ["scores / √d_k", "raw scores"]
    assert len(live.data[0].x) == len(live.data[0].y) == len(view.result.trace.src_pieces)  # short: every piece
    on, off = view["dk-outputs-0"], view["dk-outputs-1"]  # the translations with the switch on and off
    assert (on.caption, off.caption) == ("With the scaling", "Without it") and on.row == off.row
    assert on.text == view.result.translation and on.large == off.large == 1.3


def test_the_empty_row_is_nan_with_minus_inf_and_uniform_with_minus_1e9():
    view = views.show(PAGE, SENTENCE)
    caption = view["fill-nan"].caption
    assert caption.startswith("The first NaN appears at encoder.layers.0.self_attn.hook_pattern")
    assert "the NaN enters at decoder.layers.0.cross_attn" in caption
    assert caption.endswith("Your own sentence, in the same batch, has no NaN at all.")
    uniform = view["fill-uniform"].figure
    assert uniform.layout.title.text.startswith("The empty row with −10⁹: encoder self-attention L1 H1")
    weights = np.array(uniform.data[0].z, dtype=float)
    np.testing.assert_allclose(weights, np.full_like(weights, weights.mean()), rtol=1e-6)


def test_the_live_switch_shows_the_what_if_it_measures():
    scene = scene_for(PAGE, SENTENCE, layer=2)
    what_if = design.WhatIf(scene)
    on, off = what_if.first_stack_pattern(scale_scores=True), what_if.first_stack_pattern(scale_scores=False)
    np.testing.assert_array_equal(on, scene.result.trace.pattern("encoder", "self", 1))  # the page's own run
    assert what_if.same(scale_scores=True) and not what_if.same(scale_scores=False)
    assert mean_entropy(off) < mean_entropy(on)  # raw scores sharpen every head
    [live] = design.live_scores(scene, what_if)
    assert f"{mean_entropy(on):.3f} nats with the scaling, {mean_entropy(off):.3f} without" in live.caption
    assert live.figure.layout.title.text.startswith("Encoder self-attention L2 H1")


def test_a_long_sentences_live_switch_shows_the_urls_window():
    assert len(design.pieces(scene_for(PAGE, LONG))) > 50
    first, later = (views.show(PAGE, LONG, window=window)["dk-live"].figure for window in ("0-39", "10-49"))
    assert len(later.data[0].x) == len(later.data[0].y) == 40
    assert list(later.data[0].x)[:30] == list(first.data[0].x)[10:], "ten pieces on"


def test_minilm_normalizes_its_embeddings_instead_of_scaling_them():
    view = views.show(PAGE, SENTENCE, model=MINILM, layer=6, head=12)
    assert view["dk-live"].figure.layout.title.text.startswith("Encoder self-attention L6 H12")
    assert (
        view["dmodel-unscaled"].tone == "info" and "normalizes the sum with a LayerNorm" in view["dmodel-unscaled"].text
    )
    assert "fill-nan" in keys(view)  # an encoder batched with an empty row
    assert view["recipes-none"].tone == "info" and "was trained elsewhere" in view["recipes-none"].text
    assert not any("decoder" in title.lower() or "cross" in title.lower() for title in view.titles)


def test_t5_never_divides_by_sqrt_dk():
    view = views.show(PAGE, SENTENCE, model=T5)
    text = said(view)
    assert "never divides its scores by √d_k" in text and "changes nothing" in text
    assert view["dk-switch"].tone == "info" and view["dk-switch"].text.startswith("Not shown for")
    assert "dk-live" not in keys(view)
    assert not any("scores / √d_k" in note for note in annotations(view)), "no on/off comparison of identical scores"
    assert "adds nothing positional" in view["dmodel-unscaled"].text


def test_gpt2_reads_its_decoder_and_has_no_empty_source():
    view = views.show(PAGE, SENTENCE, model=GPT2)
    assert "Variance of the raw q·k of every decoder self-attention head" in view.titles
    live = view["dk-live"]
    assert live.figure.layout.title.text.startswith("Decoder self-attention L1 H1")
    assert "Both read the same text" in live.caption
    assert "decoder-only model has no source" in view["fill-none"].text
    assert not any(title.startswith("The empty row") for title in view.titles)
    assert "learned position vectors" in view["dmodel-unscaled"].text


def test_gemma_scales_its_embeddings_with_no_position_vector():
    view = views.show(PAGE, SENTENCE, model=GEMMA)
    loud = view["dmodel-loud"]
    assert loud.tone == "info" and "though it adds no position vector" in loud.text
    assert "dmodel-sizes" not in keys(view)
    assert view["dk-live"].figure.layout.title.text.startswith("Decoder self-attention L1 H1")


def test_without_the_padding_mask_nothing_is_masked():
    view = views.show(PAGE, SENTENCE, padding="off")
    assert "The padding mask is off in the sidebar" in view["fill-none"].text
    assert "fill-nan" not in keys(view) and keys(view)[keys(view).index("fill-none") + 1] == "fill-engine"


def test_a_checkpoint_with_its_recipes_shows_the_comparison(tiny_checkpoint, tmp_path, monkeypatch):
    checkpoint = tmp_path / "with-recipes"
    shutil.copytree(tiny_checkpoint, checkpoint)
    _write_runs(checkpoint / "recipes")
    (checkpoint / "recipes" / SUMMARY).write_text(json.dumps(summarize(checkpoint / "recipes", 11.0)))
    monkeypatch.setenv("ANATOMY_CHECKPOINT", str(checkpoint))
    view = views.show(PAGE, SENTENCE)
    recipes = view.titles.index("Validation BLEU")
    assert view.titles[recipes - 2 : recipes + 1] == [
        "Training loss (label-smoothed where the run smooths)",
        "Validation cross-entropy (no smoothing)",
        "Validation BLEU",
    ]
    assert len(view["recipe-valid_bleu"].figure.data) == len(RECIPES)
    assert "**11.0 minutes each**" in view["recipe-runs"].text
    assert view["recipe-findings"].text.startswith("**Measured here:**")


def test_without_a_comparison_the_page_states_no_finding(tiny_checkpoint, monkeypatch):
    monkeypatch.setenv("ANATOMY_CHECKPOINT", str(tiny_checkpoint))
    view = views.show(PAGE, SENTENCE)
    assert keys(view)[-len(SAMPLING_SECTION) - 1 :] == ["recipes-none", *SAMPLING_SECTION]
    assert "this page states no finding" in view["recipes-none"].text


@pytest.mark.parametrize("model", [None, MINILM, GPT2])
def test_the_page_in_chinese_says_no_english_sentence(model):
    english, chinese = (views.show(PAGE, SENTENCE, model=model, lang=lang) for lang in ("en", "zh"))
    assert keys(chinese) == keys(english)
    assert english_sentences(page_words(chinese), [SENTENCE]) == []
    assert len(english_sentences(page_words(english), [SENTENCE])) > 10, "the check can fail: English is English"
    sections = [[p.heading for p in view if p.key.endswith("-section")] for view in (english, chinese)]
    assert all(ours != theirs for ours, theirs in zip(*sections, strict=True))
