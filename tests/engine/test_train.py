"""The `tiny` preset end to end: corpus, tokenizer, training, log, checkpoint, resume."""

import shutil
from itertools import pairwise

import pytest
import torch
from live_server import ROOT
from safetensors.torch import load_file

from model import CheckpointError, load_bundle
from model.checkpoints.checkpoint import read_train_log
from model.training.batches import make_batches
from model.training.loop import learning_rate
from model.training.train import train

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def trained(trained_tiny):
    """The shared `tiny` run (conftest.trained_tiny): 120 steps, four snapshots, scored."""
    return trained_tiny


def test_loss_falls_and_the_log_records_training_and_validation(trained):
    root, card = trained
    log = read_train_log(root / "ckpt")
    losses = [r["loss"] for r in log if "loss" in r]
    assert len(losses) >= 4 and losses[-1] < 0.8 * losses[0]
    assert all({"step", "lr", "tokens_per_s"} <= set(r) for r in log if "loss" in r)
    validations = [r for r in log if "valid_bleu" in r]
    assert validations and {"valid_chrf", "valid_exact_match"} <= set(validations[-1])
    assert card["training"]["steps"] == 120
    assert not (root / "ckpt" / ".tokenizer-in-training.model").exists(), "the staged tokenizer is cleaned up"
    assert {"bleu", "chrf", "exact_match"} <= set(card["validation"])


def test_the_checkpoint_loads_and_translates(trained):
    root, card = trained
    bundle = load_bundle(root / "ckpt")
    assert bundle.config.to_dict() == card["config"]
    result = bundle.translate("The cat sleeps.")
    assert result.trace is not None and result.steps
    assert "cat" in bundle.known_words


def test_snapshots_are_log_spaced_float16_and_end_with_the_final_weights(trained):
    root, _ = trained
    bundle = load_bundle(root / "ckpt")
    # candidates at 50, 62, 78, 98 and the final 120; the even log spacing 50 -> 120 in 3 gaps is
    # 50, 67, 90, 120: 62 and 98 are the closest
    assert bundle.snapshots == [50, 62, 98, 120]
    assert bundle.snapshot is None
    folder = root / "ckpt" / "snapshots"
    assert sorted(p.name for p in folder.iterdir()) == [f"step-{s:06d}.safetensors" for s in (50, 62, 98, 120)]
    final = load_bundle(root / "ckpt", snapshot=120)
    assert final.snapshot == 120 and final.checkpoint_id != bundle.checkpoint_id
    half = load_file(str(folder / "step-000120.safetensors"))
    assert {t.dtype for t in half.values()} == {torch.float16}
    for name, param in bundle.model.named_parameters():
        assert torch.equal(dict(final.model.named_parameters())[name], param.half().float()), name
    early = load_bundle(root / "ckpt", snapshot=50)
    assert not torch.equal(early.model.src_embed.token.weight, final.model.src_embed.token.weight)


def test_a_missing_snapshot_is_refused_with_the_steps_there_are(trained):
    root, _ = trained
    with pytest.raises(CheckpointError, match=r"no snapshot at step 51 \(snapshots: 50, 62, 98, 120\)"):
        load_bundle(root / "ckpt", snapshot=51)


def test_log_spacing_keeps_the_ends_and_the_closest_steps():
    from model.checkpoints.snapshots import is_candidate, log_spaced

    grid = [s for s in range(1, 6597) if is_candidate(s)]
    assert grid[:5] == [50, 62, 78, 98, 122] and len(grid) == 22 and grid[-1] == 5421
    chosen = log_spaced(grid + [6597], 8)
    assert chosen[0] == 50 and chosen[-1] == 6597 and len(chosen) == 8
    ratios = [b / a for a, b in pairwise(chosen)]
    assert all(1.6 < r < 2.6 for r in ratios), ratios  # an even spacing would be 2.01 each
    assert log_spaced([50, 80], 8) == [50, 80]


def test_snapshot_edge_cases_are_refused_or_cleaned(tmp_path):
    from model.checkpoints.snapshots import drop_after, log_spaced, steps
    from model.training.batches import step_batches
    from model.training.distributed import World

    with pytest.raises(ValueError):
        log_spaced([50, 62, 78], 1)
    with pytest.raises(ValueError, match="--snapshots"):
        train("tiny", tmp_path / "x", tmp_path / "data", snapshots=1)
    folder = tmp_path / "ckpt" / "snapshots"
    folder.mkdir(parents=True)
    for step in (50, 62, 78, 98):
        (folder / f"step-{step:06d}.safetensors").write_bytes(b"")
    drop_after(tmp_path / "ckpt", 62)  # a resumed run from step 62 will not have the later weights
    assert steps(tmp_path / "ckpt") == [50, 62]
    assert list(step_batches([[0], [1], [2], [3], [4]], World(1, 2), 2)) == [[[2], [3]]]
    with pytest.raises(ValueError, match="fewer than one step takes"):
        list(step_batches([[0], [1], [2]], World(0, 2), 2))


def test_evaluate_scores_every_snapshot(trained):
    _, card = trained  # the shared run is scored by evaluate(n_alignment=30, n_variants=5)
    rows = card["snapshots"]
    assert [r["step"] for r in rows] == [50, 62, 98, 120]
    assert all(set(r) == {"step", "exact_match", "bleu", "alignment"} for r in rows)
    assert all(0 <= r["alignment"] <= 100 and 0 <= r["bleu"] <= 100 for r in rows)
    assert rows[-1]["bleu"] > rows[0]["bleu"]


def test_resume_continues_from_the_saved_step(trained, tmp_path):
    shared, _ = trained
    root = tmp_path / "copy"
    for part in ("ckpt", "data"):
        shutil.copytree(shared / part, root / part)
    card = train(
        "tiny", root / "ckpt", root / "data", seed=3, budget_minutes=10, max_steps=140, resume=True, progress=False
    )
    assert card["training"]["steps"] == 140
    steps = [r["step"] for r in read_train_log(root / "ckpt") if "loss" in r]
    assert steps == sorted(steps) and steps[-1] == 140


def test_the_learning_rate_warms_up_then_decays_as_the_paper_says():
    rates = [learning_rate(step, 512, 4000, 1.0) for step in (1, 2000, 4000, 16000)]
    assert rates[0] < rates[1] < rates[2] and rates[3] == pytest.approx(rates[2] / 2)
    assert rates[2] == pytest.approx(512**-0.5 * 4000**-0.5)


def test_batches_group_similar_lengths_within_the_token_budget():
    import random

    lengths = [random.Random(i).randint(2, 40) for i in range(1000)]
    batches = make_batches(lengths, 300, random.Random(0))
    assert sorted(i for b in batches for i in b) == list(range(1000))
    for batch in batches:
        widths = [lengths[i] for i in batch]
        assert max(widths) * len(batch) <= 300 or len(batch) == 1
        assert max(widths) - min(widths) <= 2 or len(batch) < 10


def test_the_app_opens_the_trained_checkpoint_and_draws_its_log(trained, monkeypatch):
    from streamlit.testing.v1 import AppTest

    root, _ = trained
    monkeypatch.setenv("ANATOMY_CHECKPOINT", str(root / "ckpt"))
    for page, charts in (("pages/7_training.py", 3), ("pages/1_translate.py", 1)):
        at = AppTest.from_file(str(ROOT / page), default_timeout=120).run()
        assert not at.exception, [e.message for e in at.exception]
        assert not at.error, [e.value for e in at.error]
        assert len(at.get("plotly_chart")) >= charts
