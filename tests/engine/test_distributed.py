"""torchrun: two CPU processes (DistributedDataParallel over gloo) train exactly what one process
trains on the same global batches, write a checkpoint that loads, and resume."""

import json
import os
import subprocess

import pytest
from live_server import ROOT
from safetensors.torch import load_file

from model import load_bundle
from model.checkpoints.checkpoint import read_train_log
from model.training.distributed import launcher
from model.training.presets import PRESETS
from model.training.train import ensure_corpus

pytestmark = pytest.mark.slow


def _train(out, data, steps: int, processes: int = 1, accumulate: int = 1, resume: bool = False) -> None:
    command = (
        launcher(processes)
        + [
            "-m",
            "model.train",
            "--preset",
            "tiny",
            "--out",
            str(out),
            "--data",
            str(data),
            "--seed",
            "3",
            "--max-steps",
            str(steps),
            "--threads",
            "1",
            "--no-progress",
            "--accumulate",
            str(accumulate),
        ]
        + (["--resume"] if resume else [])
    )
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    done = subprocess.run(
        command, cwd=ROOT, env={**env, "OMP_NUM_THREADS": "1"}, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]


def _largest_difference(a, b) -> float:
    first, second = load_file(str(a / "model.safetensors")), load_file(str(b / "model.safetensors"))
    assert first.keys() == second.keys()
    return max(float((first[name] - second[name]).abs().max()) for name in first)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("ddp")
    ensure_corpus(root / "data", PRESETS["tiny"], 3)
    _train(root / "two", root / "data", 6, processes=2)
    _train(root / "one", root / "data", 6, accumulate=2)
    return root


def test_two_processes_equal_one_process_on_the_same_global_batches(runs):
    assert _largest_difference(runs / "two", runs / "one") <= 1e-6


def test_the_comparison_can_fail_half_the_batch_trains_other_weights(runs):
    _train(runs / "half", runs / "data", 6)
    assert _largest_difference(runs / "two", runs / "half") > 1e-3


def test_the_card_records_the_world_and_the_global_batch(runs):
    training = json.loads((runs / "two" / "card.json").read_text())["training"]
    assert training["world_size"] == 2 and training["accumulate"] == 1
    assert training["global_batch_tokens"] == 2 * PRESETS["tiny"].max_tokens
    assert training["steps"] == 6
    alone = json.loads((runs / "one" / "card.json").read_text())["training"]
    assert alone["world_size"] == 1 and alone["global_batch_tokens"] == training["global_batch_tokens"]
    # one log, written by rank 0 alone: each logged step once, the same loss as the single process
    assert [r["step"] for r in read_train_log(runs / "two") if "loss" in r] == [6]
    losses = [r["loss"] for run in ("two", "one") for r in read_train_log(runs / run) if "loss" in r]
    assert losses[0] == pytest.approx(losses[1], abs=1e-4)


def test_a_checkpoint_written_under_torchrun_loads_and_translates(runs):
    bundle = load_bundle(runs / "two")
    assert bundle.translate("The cat sleeps.", trace=False).output_ids


def test_resume_under_torchrun_continues_where_it_stopped(runs):
    _train(runs / "two", runs / "data", 9, processes=2, resume=True)
    _train(runs / "one", runs / "data", 9, accumulate=2, resume=True)
    assert json.loads((runs / "two" / "card.json").read_text())["training"]["steps"] == 9
    assert _largest_difference(runs / "two", runs / "one") <= 1e-6
