"""Self-checks of tests/hf_fixtures.py: real-layout tiny Hugging Face checkpoints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from hf_fixtures import (ENGLISH, FRENCH, _bert_model, _marian_model, make_bert_dir,
                         make_marian_dir, reference_bert, reference_marian)

MARIAN_FILES = {"source.spm", "target.spm", "vocab.json", "tokenizer_config.json", "config.json",
                "generation_config.json", "model.safetensors"}
BERT_FILES = {"tokenizer.json", "vocab.txt", "tokenizer_config.json", "config.json",
              "model.safetensors"}


@pytest.fixture(scope="module")
def marian_dir(tmp_path_factory) -> Path:
    return make_marian_dir(tmp_path_factory.mktemp("marian") / "opus-mt-tiny")


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory) -> Path:
    return make_bert_dir(tmp_path_factory.mktemp("bert") / "bert-tiny")


@pytest.fixture(scope="module")
def marian_ref(marian_dir):
    return reference_marian(marian_dir)


@pytest.fixture(scope="module")
def bert_ref(bert_dir):
    return reference_bert(bert_dir)


def _config(path: Path) -> dict:
    return json.loads((path / "config.json").read_text(encoding="utf-8"))


def test_sentence_lists():
    assert len(ENGLISH) >= 30 and len(FRENCH) >= 30
    assert len(set(ENGLISH)) == len(ENGLISH) and len(set(FRENCH)) == len(FRENCH)


def test_marian_dir_layout(marian_dir):
    assert MARIAN_FILES <= {p.name for p in marian_dir.iterdir()}
    config = _config(marian_dir)
    assert config["model_type"] == "marian"
    vocab = json.loads((marian_dir / "vocab.json").read_text(encoding="utf-8"))
    assert vocab["</s>"] == 0 and vocab["<unk>"] == 1
    assert vocab["<pad>"] == len(vocab) - 1 == config["pad_token_id"] == config["decoder_start_token_id"]
    assert sorted(vocab.values()) == list(range(len(vocab)))  # dense, no piece twice
    assert "<s>" not in vocab
    assert config["vocab_size"] == config["decoder_vocab_size"] == len(vocab)
    assert config["activation_function"] == "swish" and config["scale_embedding"] is True
    generation = json.loads((marian_dir / "generation_config.json").read_text(encoding="utf-8"))
    assert generation["bad_words_ids"] == [[vocab["<pad>"]]]
    assert generation["decoder_start_token_id"] == vocab["<pad>"]
    assert generation["eos_token_id"] == generation["forced_eos_token_id"] == 0


def test_marian_tokenizer(marian_ref):
    tokenizer, _ = marian_ref
    ids = tokenizer(ENGLISH[0]).input_ids
    assert len(ids) > 1 and ids[-1] == 0 and 1 not in ids  # ends with </s>, no <unk>
    target = tokenizer(text_target=FRENCH[0]).input_ids
    assert target[-1] == 0 and 1 not in target
    assert tokenizer.decode(target, skip_special_tokens=True) == FRENCH[0]


def test_marian_weights_round_trip(marian_dir, marian_ref):
    _, model = marian_ref
    saved = load_file(str(marian_dir / "model.safetensors"))
    for name, tensor in saved.items():  # nothing saved is left at a constant default
        assert tensor.numel() == 1 or tensor.std() > 0, name
    expected = _marian_model(model.config, seed=0)
    assert torch.count_nonzero(saved["final_logits_bias"]) == saved["final_logits_bias"].numel()
    for name, tensor in expected.state_dict().items():
        assert torch.equal(model.state_dict()[name], tensor), name
    pad = model.config.pad_token_id
    assert torch.count_nonzero(model.get_input_embeddings().weight[pad]) > 0


def test_marian_generates(marian_ref):
    tokenizer, model = marian_ref
    with torch.no_grad():
        out = model.generate(**tokenizer(["the cat sleeps"], return_tensors="pt"), num_beams=1,
                             max_new_tokens=10)
    assert out[0, 0].item() == model.config.decoder_start_token_id
    assert 1 < out.shape[1] <= 11


def test_bert_dir_layout(bert_dir):
    assert BERT_FILES <= {p.name for p in bert_dir.iterdir()}
    config = _config(bert_dir)
    assert config["model_type"] == "bert"
    pieces = (bert_dir / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert pieces[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert len(set(pieces)) == len(pieces) == config["vocab_size"]
    assert any(p.startswith("##") for p in pieces) and "the" in pieces
    tokenizer_json = json.loads((bert_dir / "tokenizer.json").read_text(encoding="utf-8"))
    assert tokenizer_json["model"]["vocab"] == {p: i for i, p in enumerate(pieces)}


def test_bert_tokenizer(bert_dir, bert_ref):
    from tokenizers import Tokenizer

    tokenizer, _ = bert_ref
    assert tokenizer.do_lower_case
    ids = tokenizer(ENGLISH[0]).input_ids
    assert len(ids) > 2 and ids[0] == 2 and ids[-1] == 3 and 1 not in ids
    raw = Tokenizer.from_file(str(bert_dir / "tokenizer.json"))
    for text in ENGLISH[:5] + ["Hello, WORLD! Café?"]:
        assert tokenizer(text).input_ids == raw.encode(text).ids


def test_bert_weights_round_trip(bert_dir, bert_ref):
    tokenizer, model = bert_ref
    saved = load_file(str(bert_dir / "model.safetensors"))
    for name, tensor in saved.items():
        assert tensor.numel() == 1 or tensor.std() > 0, name
    expected = _bert_model(model.config, seed=0)
    for name, tensor in expected.state_dict().items():
        assert torch.equal(model.state_dict()[name], tensor), name
    with torch.no_grad():
        out = model(**tokenizer(ENGLISH[:2], return_tensors="pt", padding=True))
    assert out.last_hidden_state.shape[:2] == (2, max(len(tokenizer(s).input_ids) for s in ENGLISH[:2]))
    assert out.pooler_output.shape == (2, model.config.hidden_size)


def test_builders_are_deterministic(tmp_path, marian_dir, bert_dir):
    again = make_marian_dir(tmp_path / "m")
    for name in ("vocab.json", "source.spm", "target.spm", "config.json"):
        assert (again / name).read_bytes() == (marian_dir / name).read_bytes(), name
    a, b = load_file(str(again / "model.safetensors")), load_file(str(marian_dir / "model.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    other = make_bert_dir(tmp_path / "b", seed=1)
    assert (other / "vocab.txt").read_bytes() == (bert_dir / "vocab.txt").read_bytes()
    a, b = load_file(str(other / "model.safetensors")), load_file(str(bert_dir / "model.safetensors"))
    assert not torch.equal(a["embeddings.word_embeddings.weight"], b["embeddings.word_embeddings.weight"])
