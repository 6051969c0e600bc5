"""The Training page as data (views/training.py, views/timelapse.py, views/recipes.py): the time-lapse at the
URL's snapshot, the log's curves, the recipe comparison and the model card, by kind of model and in Chinese. What
the page's AppTest runs checked of its pictures and words (tests/app/test_app.py, test_timelapse.py, test_recipes.py,
test_app_models.py, test_i18n_pages.py) is checked here on the panels."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from page_words import english_sentences
from page_words import panel_keys as keys
from page_words import panel_words as said
from test_design import page_words
from test_recipes import _write_runs

import views
from model import load_bundle
from model.checkpoints.catalog import MINILM, SMOLLM2
from model.training.recipe_results import RECIPES, SUMMARY
from model.training.recipes import summarize

PAGE = "training"
SENTENCE = "The small girl sees a white bird."
SHIPPED = Path(__file__).resolve().parents[2] / "checkpoints" / "default"
LOG = [
    {"step": s, "train_loss": 5 / (1 + s / 100), "lr": min(s / 50, 1) * 1e-3 / max(1, s / 50) ** 0.5}
    for s in range(0, 500, 25)
]
VALIDATION = [{"step": s, "valid_loss": 5.5 / (1 + s / 100), "valid_bleu": s / 20} for s in range(0, 500, 100)]


def logged(checkpoint: Path, folder: Path, records: list[dict]) -> Path:
    """A copy of `checkpoint` with `records` as its training log."""
    shutil.copytree(checkpoint, folder)
    (folder / "train_log.jsonl").write_text("\n".join(json.dumps(record) for record in records) + "\n")
    return folder


def sizes(view) -> dict[str, str]:
    """The model card's sizes, said large side by side: label -> value."""
    return {panel.text: panel.metric for panel in view if panel.row == "card-sizes"}


def test_the_shipped_model_plays_its_time_lapse_and_shows_its_runs_and_card():
    view = views.show(PAGE, SENTENCE)
    steps = load_bundle().snapshots
    assert keys(view) == [
        "timelapse",
        "snapshot-view",
        "snapshot-head",
        "snapshot-outputs-0",
        "snapshot-outputs-1",
        "snapshot-scores",
        "snapshot-curves",
        "timelapse-about",
        "curves",
        "loss",
        "lr",
        "metrics",
        "training-log",
        "recipes",
        "recipe-runs",
        "recipe-loss",
        "recipe-valid_loss",
        "recipe-valid_bleu",
        "recipe-findings",
        "card",
        "card-parameters",
        "card-layers",
        "card-width",
        "card-vocabulary",
        "card-scores",
        "alignment",
        "card-all",
    ]
    assert view.result is None  # the page runs no sentence of its own: the snapshots read it
    last = f"{steps[-1]:,}"
    assert view.titles[:3] == [
        f"Cross-attention at step {last}: layers × heads",
        f"L3 H1 at step {last}",  # the head the card names as agreeing most with the alignment
        "Scores of every snapshot",
    ]
    assert [(view[k].row, view[k].width) for k in ("snapshot-view", "snapshot-head")] == [
        ("snapshot", 3),
        ("snapshot", 2),
    ]
    assert [view[k].caption for k in ("snapshot-outputs-0", "snapshot-outputs-1")] == [
        f"At step {last}",
        "After training",
    ]
    assert view["snapshot-scores"].caption.startswith(f"At step {last}, on the 2000 test sentences: exact match")
    assert view["timelapse-about"].text.endswith(
        "Watch decoder layer L3 head H1, enlarged on the right: the head that ends up agreeing most with the word "
        "alignment (90.7%)."
    )
    assert view.titles[3:6] == ["Loss", "Learning-rate schedule", "Validation scores"]
    assert view["lr"].row == view["metrics"].row == "schedule"
    assert "with label smoothing 0.1" in view["loss"].caption
    assert len(view["recipe-valid_bleu"].figure.data) == len(RECIPES)
    assert sizes(view) == {
        "Parameters": "1,542,144",
        "Layers": "3 + 3",
        "d_model / heads": "128 / 4",
        "Vocabulary": "1,200",
    }
    assert view["alignment"].figure.layout.title.text == "Cross-attention agrees with the word alignment (%)"
    assert [view[k].heading for k in ("training-log", "card-all")] == [
        "The raw training log",
        "Everything in the model card",
    ]
    assert list(view["card-scores"].table.columns) == ["score", "value", "measured on"]


def test_the_url_picks_the_snapshot_and_the_sidebar_the_head():
    view = views.show(PAGE, SENTENCE, snapshot=2, layer=2, head=3)
    steps = load_bundle().snapshots
    second = f"{steps[1]:,}"
    assert view.titles[:2] == [f"Cross-attention at step {second}: layers × heads", f"L2 H3 at step {second}"]
    curves = view["snapshot-curves"].figure
    assert {trace.name for trace in curves.data} == {
        "best head agrees with the alignment",
        "test exact match",
        "test BLEU",
    }
    assert list(curves.data[0].x) == steps
    [line] = curves.layout.shapes
    assert line.x0 == steps[1] == line.x1, "the step on show is marked"
    assert view["snapshot-outputs-0"].text == load_bundle(SHIPPED, snapshot=steps[1]).translation(SENTENCE)
    assert view["timelapse-about"].text.endswith(
        "Enlarged on the right: decoder layer L2 head H3, picked in the sidebar."
    )


def test_unscored_snapshots_say_how_to_score_them(tmp_path, monkeypatch):
    unscored = shutil.copytree(SHIPPED, tmp_path / "unscored")
    card = json.loads((unscored / "card.json").read_text())
    del card["snapshots"]
    (unscored / "card.json").write_text(json.dumps(card))
    monkeypatch.setenv("ANATOMY_CHECKPOINT", str(unscored))
    view = views.show(PAGE, SENTENCE)
    assert "snapshot-scores" not in keys(view)
    curves = view["snapshot-curves"]
    assert curves.figure is None and "have not been scored yet" in curves.caption


def test_a_log_draws_its_curves(tiny_checkpoint, tmp_path, monkeypatch):
    monkeypatch.setenv("ANATOMY_CHECKPOINT", str(logged(tiny_checkpoint, tmp_path / "logged", LOG + VALIDATION)))
    view = views.show(PAGE, SENTENCE)
    none = view["timelapse-none"]
    assert none.tone == "info" and "keeps no training snapshots" in none.text and "--snapshots" in none.text
    assert view.titles == ["Loss", "Learning-rate schedule", "Validation scores"]
    assert {trace.name for trace in view["loss"].figure.data} == {"training loss", "validation loss"}
    assert view["loss"].caption.endswith(
        "The validation loss shows whether it generalizes to sentences it never trained on."
    )
    assert not view["training-log"].table.empty


def test_a_log_without_validation_keeps_the_schedule_in_its_column(tiny_checkpoint, tmp_path, monkeypatch):
    monkeypatch.setenv("ANATOMY_CHECKPOINT", str(logged(tiny_checkpoint, tmp_path / "logged", LOG)))
    view = views.show(PAGE, SENTENCE)
    assert view.titles == ["Loss", "Learning-rate schedule"]
    assert view["loss"].caption.endswith("How well it generalizes shows in the validation scores below.")
    metrics = view["metrics"]  # an empty panel: the schedule stays in the left half of its row
    assert metrics.figure is None and not metrics.caption and metrics.row == view["lr"].row


def test_without_a_log_or_runs_the_page_says_so_and_shows_the_card(tiny_checkpoint, monkeypatch):
    monkeypatch.setenv("ANATOMY_CHECKPOINT", str(tiny_checkpoint))
    view = views.show(PAGE, SENTENCE)
    assert "no training log" in view["curves-none"].text and "training-log" not in keys(view)
    assert "ships no recipe comparison" in view["recipes-none"].caption
    assert not view["card-all"].table.empty


def test_a_checkpoint_with_its_recipes_shows_the_comparison(tiny_checkpoint, tmp_path, monkeypatch):
    checkpoint = shutil.copytree(tiny_checkpoint, tmp_path / "with-recipes")
    _write_runs(checkpoint / "recipes")
    (checkpoint / "recipes" / SUMMARY).write_text(json.dumps(summarize(checkpoint / "recipes", 11.0)))
    monkeypatch.setenv("ANATOMY_CHECKPOINT", str(checkpoint))
    view = views.show(PAGE, SENTENCE)
    assert view.titles == [
        "Training loss (label-smoothed where the run smooths)",
        "Validation cross-entropy (no smoothing)",
        "Validation BLEU",
    ]
    assert keys(view)[keys(view).index("recipes") + 1] == "recipe-runs"
    assert view["recipe-findings"].text.startswith("**Measured here:**")


def test_a_model_trained_elsewhere_shows_its_card():
    view = views.show(PAGE, SENTENCE, model=MINILM)
    assert not view.figures and "recipes" not in keys(view)
    assert "was trained elsewhere" in view["timelapse-none"].text
    assert "was trained elsewhere by" in view["curves-none"].text
    text = said(view)
    assert "apache-2.0" in text and "bert" in text and "On this machine:" in text
    assert sizes(view)["Layers"] == "6 encoder"


def test_a_chat_model_says_what_it_is_and_how_it_is_stored():
    view = views.show(PAGE, model=SMOLLM2)
    origin = view["card-origin"]
    assert "decoder-only chat model" in origin.text.replace("\\", "") and origin.caption.startswith("Stored as ")
    assert sizes(view)["Layers"] == "30 decoder"


@pytest.mark.parametrize("model", [None, MINILM])
def test_the_page_in_chinese_says_no_english_sentence(model):
    english, chinese = (views.show(PAGE, SENTENCE, model=model, lang=lang) for lang in ("en", "zh"))
    assert keys(chinese) == keys(english)
    assert english_sentences(page_words(chinese), [SENTENCE]) == []
    assert len(english_sentences(page_words(english), [SENTENCE])) > 5, "the check can fail: English is English"
