"""The `tiny` preset end to end: corpus, tokenizer, training, log, checkpoint, resume."""

import json

import pytest

from model import load_bundle
from live_server import ROOT
from model.checkpoint import read_train_log
from model.train import learning_rate, make_batches, train

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("train")
    card = train("tiny", root / "ckpt", root / "data", seed=3, budget_minutes=10, max_steps=120, progress=False)
    return root, card


def test_loss_falls_and_the_log_records_training_and_validation(trained):
    root, card = trained
    log = read_train_log(root / "ckpt")
    losses = [r["loss"] for r in log if "loss" in r]
    assert len(losses) >= 4 and losses[-1] < 0.8 * losses[0]
    assert all({"step", "lr", "tokens_per_s"} <= set(r) for r in log if "loss" in r)
    validations = [r for r in log if "valid_bleu" in r]
    assert validations and {"valid_chrf", "valid_exact_match"} <= set(validations[-1])
    assert card["training"]["steps"] == 120
    assert {"bleu", "chrf", "exact_match"} <= set(card["validation"])


def test_the_checkpoint_loads_and_translates(trained):
    root, card = trained
    bundle = load_bundle(root / "ckpt")
    assert bundle.config.to_dict() == card["config"]
    result = bundle.translate("The cat sleeps.")
    assert result.trace is not None and result.steps
    assert "cat" in bundle.known_words


def test_resume_continues_from_the_saved_step(trained):
    root, _ = trained
    card = train("tiny", root / "ckpt", root / "data", seed=3, budget_minutes=10, max_steps=140, resume=True,
                 progress=False)
    assert card["training"]["steps"] == 140
    steps = [r["step"] for r in read_train_log(root / "ckpt") if "loss" in r]
    assert steps == sorted(steps) and steps[-1] == 140


def test_the_learning_rate_warms_up_then_decays_as_the_paper_says():
    rates = [learning_rate(step, 512, 4000, 1.0) for step in (1, 2000, 4000, 16000)]
    assert rates[0] < rates[1] < rates[2] and rates[3] == pytest.approx(rates[2] / 2)
    assert rates[2] == pytest.approx(512 ** -0.5 * 4000 ** -0.5)


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
