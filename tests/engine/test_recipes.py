"""The recipe comparison: its setups, its summary and findings, and the pages that draw it."""

from __future__ import annotations

import json
import math
import shutil

from test_app import assert_clean, charts, run

from model.training.loop import learning_rate
from model.training.recipe_results import RECIPES, SUMMARY, findings, read_recipes
from model.training.recipes import WARMUP_STEPS, preset_for, summarize


def test_each_recipe_changes_only_what_it_names():
    presets = {r.name: preset_for(r, 11.0) for r in RECIPES}
    base = presets["post-ln-warmup"]
    assert not base.model.norm_first and base.warmup == WARMUP_STEPS and base.label_smoothing == 0.1
    assert presets["pre-ln-warmup"].model.norm_first
    assert presets["post-ln-no-warmup"].warmup == 1
    assert presets["pre-ln-warmup-ls0"].label_smoothing == 0.0 and presets["pre-ln-warmup-ls0"].model.norm_first
    assert {p.budget_minutes for p in presets.values()} == {11.0}
    for p in presets.values():  # nothing else differs from the comparison's base
        assert p.model.d_model == base.model.d_model and p.max_tokens == base.max_tokens
    # without warm-up the schedule starts at its peak: the inverse square root from step 1
    d = base.model.d_model
    assert learning_rate(1, d, 1, base.lr_factor) == base.lr_factor * d**-0.5
    assert learning_rate(1, d, 1, base.lr_factor) > 10 * learning_rate(WARMUP_STEPS, d, WARMUP_STEPS, base.lr_factor)


def _write_runs(path, diverge: str | None = None) -> None:
    path.mkdir(parents=True, exist_ok=True)
    for index, recipe in enumerate(RECIPES):
        records = []
        for step in range(100, 1100, 100):
            loss = float("nan") if recipe.name == diverge and step > 300 else 5.0 / math.sqrt(step / 100) + index / 10
            records.append({"step": step, "loss": loss, "lr": 1e-3})
            records.append(
                {
                    "step": step,
                    "valid_bleu": step / 20 - index,
                    "valid_loss": 2.0 - step / 1000 + index / 50,
                    "valid_exact_match": step / 30,
                }
            )
        (path / f"{recipe.name}.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")


def test_summary_and_findings_state_what_the_logs_say(tmp_path):
    _write_runs(tmp_path, diverge="post-ln-no-warmup")
    summary = summarize(tmp_path, 11.0)
    assert set(summary["runs"]) == {r.name for r in RECIPES}
    assert summary["runs"]["post-ln-no-warmup"]["diverged"] and not summary["runs"]["pre-ln-no-warmup"]["diverged"]
    said = findings(summary)
    assert said[0] == "Post-LN: validation BLEU 50.0 with the warm-up, 48.0 without (its training loss blew up)."
    assert said[1] == (
        "Pre-LN: validation BLEU 49.0 with the warm-up, 47.0 without (training loss 1.88 after "
        "1000 steps, against 1.68 after 1000 with it)."
    )
    assert said[2].startswith("Post-LN, label smoothing 0.1 against 0: validation cross-entropy 1.000 against 1.080")
    assert len(said) == 4


def test_reading_a_missing_or_broken_comparison_gives_nothing(tmp_path):
    assert read_recipes(tmp_path / "none") == ({}, {})
    _write_runs(tmp_path)
    (tmp_path / SUMMARY).write_text(json.dumps(summarize(tmp_path, 11.0)))
    with open(tmp_path / "pre-ln-warmup.jsonl", "a") as handle:
        handle.write('{"step": 12')  # a line cut short by an interrupted run
    summary, logs = read_recipes(tmp_path)
    assert summary["budget_minutes_each"] == 11.0 and len(logs) == len(RECIPES)


def test_design_and_training_pages_draw_the_shipped_comparison(tiny_checkpoint, tmp_path, monkeypatch):
    checkpoint = tmp_path / "with-recipes"
    shutil.copytree(tiny_checkpoint, checkpoint)
    _write_runs(checkpoint / "recipes")
    (checkpoint / "recipes" / SUMMARY).write_text(json.dumps(summarize(checkpoint / "recipes", 11.0)))
    monkeypatch.setenv("ANATOMY_CHECKPOINT", str(checkpoint))
    for page in ("pages/6_design_choices.py", "pages/7_training.py"):
        at = run(page)
        assert_clean(at)
        titles = [spec["layout"].get("title", {}).get("text", "") for spec in charts(at)]
        assert {
            "Training loss (label-smoothed where the run smooths)",
            "Validation cross-entropy (no smoothing)",
            "Validation BLEU",
        } <= set(titles), titles
        bleu = next(spec for spec in charts(at) if spec["layout"]["title"]["text"] == "Validation BLEU")
        assert len(bleu["data"]) == len(RECIPES)
        assert any("Measured here" in m.value for m in at.markdown)


def test_without_a_comparison_the_design_page_states_no_finding(tiny_checkpoint, monkeypatch):
    monkeypatch.setenv("ANATOMY_CHECKPOINT", str(tiny_checkpoint))
    at = run("pages/6_design_choices.py")
    assert_clean(at)
    assert any("this page states no finding" in i.value for i in at.info)


def test_the_shipped_comparison_reads_and_states_its_findings():
    from model import load_bundle

    summary, logs = read_recipes(load_bundle().path / "recipes")
    assert set(logs) == {r.name for r in RECIPES} and summary["budget_minutes_each"] > 0
    assert len(findings(summary)) == 4
