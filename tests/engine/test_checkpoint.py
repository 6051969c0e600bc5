"""Checkpoints load only when whole and consistent, and never run code from disk."""

import json
import pickle
import shutil
import sys

import pytest
import torch
from fixtures import TINY, build_tiny_checkpoint

from model import CheckpointError, load_bundle
from model.checkpoints.checkpoint import CARD, CONFIG, TOKENIZER, WEIGHTS
from model.errors import REBUILD_HINT


@pytest.fixture()
def copy(tiny_checkpoint, tmp_path):
    target = tmp_path / "ckpt"
    shutil.copytree(tiny_checkpoint, target)
    return target


def refused(path, *phrases):
    with pytest.raises(CheckpointError) as info:
        load_bundle(path)
    message = str(info.value)
    assert REBUILD_HINT in message
    for phrase in phrases:
        assert phrase in message, message
    return message


def test_a_good_checkpoint_loads_and_round_trips(tiny_checkpoint, tiny_bundle):
    again = load_bundle(tiny_checkpoint)
    assert again.checkpoint_id == tiny_bundle.checkpoint_id
    for (name, a), (_, b) in zip(again.model.named_parameters(), tiny_bundle.model.named_parameters(), strict=True):
        assert torch.equal(a, b), name
    assert not again.model.training


def test_missing_directory(tmp_path):
    refused(tmp_path / "nowhere", "does not exist")


@pytest.mark.parametrize("name", [CONFIG, WEIGHTS, TOKENIZER, CARD])
def test_missing_file(copy, name):
    (copy / name).unlink()
    refused(copy, f"missing {name}")


def test_truncated_weights(copy):
    data = (copy / WEIGHTS).read_bytes()
    (copy / WEIGHTS).write_bytes(data[: len(data) // 2])
    refused(copy, WEIGHTS, "not a valid safetensors file")


def test_corrupted_header(copy):
    data = bytearray((copy / WEIGHTS).read_bytes())
    data[8:20] = b"\xff" * 12
    (copy / WEIGHTS).write_bytes(bytes(data))
    refused(copy, "not a valid safetensors file")


def test_non_finite_weights(copy):
    from safetensors.torch import load_file, save_file

    tensors = load_file(str(copy / WEIGHTS))
    name = sorted(tensors)[0]
    tensors[name][0] = float("nan")
    save_file(tensors, str(copy / WEIGHTS))
    refused(copy, name, "finite")


def test_config_that_does_not_match_the_weights(copy):
    config = json.loads((copy / CONFIG).read_text())
    config["d_model"] = TINY.d_model * 2
    (copy / CONFIG).write_text(json.dumps(config))
    refused(copy, "has shape")


def test_config_with_a_different_layer_count(copy):
    config = json.loads((copy / CONFIG).read_text())
    config["n_encoder_layers"] += 1
    (copy / CONFIG).write_text(json.dumps(config))
    refused(copy, "do not match the config", "encoder.layers.2")


@pytest.mark.parametrize(
    "text, phrase",
    [
        ("{not json", "not readable JSON"),
        ("[1, 2]", "JSON object"),
        ('{"d_model": 30, "n_heads": 4}', "divisible"),
        ('{"colour": "red"}', "unknown keys"),
    ],
)
def test_bad_config_json(copy, text, phrase):
    (copy / CONFIG).write_text(text)
    refused(copy, phrase)


def test_tokenizer_that_does_not_match_the_vocabulary(copy, tmp_path):
    other = build_tiny_checkpoint(tmp_path / "other", TINY.__class__(**{**TINY.to_dict(), "vocab_size": 340}))
    shutil.copy(other / TOKENIZER, copy / TOKENIZER)
    refused(copy, "tokenizer has", "vocab_size")


def test_tokenizer_file_that_is_not_sentencepiece(copy):
    (copy / TOKENIZER).write_bytes(b"\x00garbage" * 10)
    refused(copy, TOKENIZER)


class _Payload:
    def __reduce__(self):
        return (exec, (f"open({str(MARKER)!r}, 'w').write('pwned')",))


MARKER = None


def test_a_pickle_is_refused_and_never_executed(copy, tmp_path):
    global MARKER
    MARKER = tmp_path / "executed.txt"
    payload = pickle.dumps({"weights": _Payload()})
    pickle_target = copy / WEIGHTS
    pickle_target.write_bytes(payload)
    torch.save({"x": torch.zeros(2)}, copy / "other.pt")  # a torch pickle beside it is ignored too
    refused(copy, "not a valid safetensors file")
    assert not MARKER.exists(), "loading executed code from the checkpoint"
    # the payload is live: unpickling it would have written the marker
    pickle.loads(payload)
    assert MARKER.exists()
    MARKER.unlink()
    assert "pickle" not in sys.modules.get("model.checkpoints.checkpoint").__dict__
