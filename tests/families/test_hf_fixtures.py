"""Self-checks of tests/hf_fixtures.py: real-layout tiny Hugging Face checkpoints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from hf_fixtures import (
    ENGLISH,
    FRENCH,
    GPT2_EOT,
    T5_EXTRA_IDS,
    T5_SPM_VOCAB,
    T5_TASK_PREFIX,
    _bert_model,
    _gpt2_model,
    _marian_model,
    _t5_model,
    make_bert_dir,
    make_gpt2_dir,
    make_marian_dir,
    make_t5_dir,
    reference_bert,
    reference_gpt2,
    reference_marian,
    reference_t5,
)
from safetensors.torch import load_file

MARIAN_FILES = {
    "source.spm",
    "target.spm",
    "vocab.json",
    "tokenizer_config.json",
    "config.json",
    "generation_config.json",
    "model.safetensors",
}
BERT_FILES = {"tokenizer.json", "vocab.txt", "tokenizer_config.json", "config.json", "model.safetensors"}
T5_FILES = {
    "spiece.model",
    "tokenizer.json",
    "tokenizer_config.json",
    "config.json",
    "generation_config.json",
    "model.safetensors",
}
GPT2_FILES = {
    "tokenizer.json",
    "vocab.json",
    "merges.txt",
    "tokenizer_config.json",
    "config.json",
    "generation_config.json",
    "model.safetensors",
}
TEXTS = ENGLISH[:6] + FRENCH[:6] + [T5_TASK_PREFIX + ENGLISH[3], "Hello, WORLD! Café?  two  spaces"]


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
        out = model.generate(**tokenizer(["the cat sleeps"], return_tensors="pt"), num_beams=1, max_new_tokens=10)
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


# ---------------------------------------------------------------------------------------------
# T5


@pytest.fixture(scope="module", params=["flan", "t5"])
def t5_dir(request, tmp_path_factory) -> Path:
    return make_t5_dir(
        tmp_path_factory.mktemp("t5") / f"{request.param}-t5-tiny",
        variant=request.param,
        task_prefix=request.param == "t5",
    )


@pytest.fixture(scope="module")
def t5_ref(t5_dir):
    return reference_t5(t5_dir)


def test_t5_dir_layout(t5_dir, t5_ref):
    import sentencepiece as spm

    tokenizer, _ = t5_ref
    assert T5_FILES <= {p.name for p in t5_dir.iterdir()}
    config = _config(t5_dir)
    flan = t5_dir.name.startswith("flan")
    assert config["model_type"] == "t5" and "scale_decoder_outputs" not in config
    assert config["tie_word_embeddings"] is (not flan)
    assert config["feed_forward_proj"] == ("gated-gelu" if flan else "relu")
    assert config["relative_attention_num_buckets"] == 8 and config["relative_attention_max_distance"] == 16
    assert config["num_layers"] == config["num_decoder_layers"] == 2 and config["d_kv"] == 8
    assert (config["pad_token_id"], config["eos_token_id"], config["decoder_start_token_id"]) == (0, 1, 0)
    assert config["dropout_rate"] == 0.0 and config["layer_norm_epsilon"] == 1e-6
    if flan:
        assert "task_specific_params" not in config
    else:
        params = config["task_specific_params"]["translation_en_to_fr"]
        assert params["prefix"] == T5_TASK_PREFIX and params["num_beams"] == 4
    generation = json.loads((t5_dir / "generation_config.json").read_text(encoding="utf-8"))
    assert (generation["decoder_start_token_id"], generation["eos_token_id"], generation["pad_token_id"]) == (0, 1, 0)

    sp = spm.SentencePieceProcessor(model_file=str(t5_dir / "spiece.model"))
    assert sp.get_piece_size() == T5_SPM_VOCAB and sp.bos_id() == -1
    assert [sp.id_to_piece(i) for i in range(3)] == ["<pad>", "</s>", "<unk>"]
    assert (sp.pad_id(), sp.eos_id(), sp.unk_id()) == (0, 1, 2)
    assert len(tokenizer) == T5_SPM_VOCAB + T5_EXTRA_IDS < config["vocab_size"]  # as 32100 < 32128
    assert tokenizer.convert_tokens_to_ids("<extra_id_0>") == len(tokenizer) - 1  # as 32099
    vocab = json.loads((t5_dir / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    assert [piece for piece, _ in vocab[:T5_SPM_VOCAB]] == [sp.id_to_piece(i) for i in range(T5_SPM_VOCAB)]


def test_t5_tokenizer(t5_dir, t5_ref, tmp_path):
    """tokenizer.json, transformers' conversion of spiece.model alone, and sentencepiece + </s>
    give the same ids."""
    import sentencepiece as spm
    from transformers import T5Tokenizer

    tokenizer, _ = t5_ref
    for name in ("spiece.model", "tokenizer_config.json"):
        (tmp_path / name).write_bytes((t5_dir / name).read_bytes())
    converted = T5Tokenizer.from_pretrained(str(tmp_path))
    sp = spm.SentencePieceProcessor(model_file=str(t5_dir / "spiece.model"))
    for text in TEXTS:
        ids = tokenizer(text).input_ids
        assert ids == converted(text).input_ids == sp.encode(text) + [1], text
        assert ids[-1] == 1 and 0 not in ids
        assert 2 not in ids or text.startswith("Hello")  # <unk>: "WORLD" has unseen capitals
    assert tokenizer.decode(tokenizer(FRENCH[4]).input_ids, skip_special_tokens=True) == FRENCH[4]
    assert tokenizer("<extra_id_0> cat").input_ids[0] == len(tokenizer) - 1


def test_t5_weights_round_trip(t5_dir, t5_ref):
    _, model = t5_ref
    flan = t5_dir.name.startswith("flan")
    saved = load_file(str(t5_dir / "model.safetensors"))
    for name, tensor in saved.items():
        assert tensor.numel() == 1 or tensor.std() > 0, name
    norms = [name for name in saved if "layer_norm" in name]
    assert len(norms) == 2 * 2 + 2 * 3 + 2 and all(not torch.all(saved[n] == 1) for n in norms)
    biases = [name for name in saved if "relative_attention_bias" in name]
    assert biases == [n for n in biases if ".block.0." in n] and len(biases) == 2
    assert all(saved[n].shape == (8, 2) and saved[n].std() > 0 for n in biases)
    assert ("lm_head.weight" in saved) is flan and "shared.weight" in saved
    expected = _t5_model(model.config, seed=0, separate_head=flan)
    for name, tensor in expected.state_dict().items():
        assert torch.equal(model.state_dict()[name], tensor), name
    assert (model.lm_head.weight is model.shared.weight) is not flan
    assert model.config.scale_decoder_outputs is not flan  # t5 scales by d_model**-0.5, flan not


def test_t5_forward_and_buckets(t5_ref):
    tokenizer, model = t5_ref
    batch = tokenizer([T5_TASK_PREFIX + ENGLISH[0], ENGLISH[7]], return_tensors="pt", padding=True)
    with torch.no_grad():
        out = model(**batch, decoder_input_ids=torch.zeros((2, 3), dtype=torch.long))
        generated = model.generate(**batch, num_beams=1, max_new_tokens=5)
    assert out.logits.shape == (2, 3, model.config.vocab_size) and torch.isfinite(out.logits).all()
    assert (generated[:, 0] == 0).all() and generated.shape[1] <= 6
    # a tiny sentence already reaches every relative-position bucket that the encoder can use
    # (bidirectional: bucket 4, "distance 0 on the right", never occurs: distance 0 is bucket 0)
    attention = model.encoder.block[0].layer[0].SelfAttention
    positions = torch.arange(batch.input_ids.shape[1])
    buckets = attention._relative_position_bucket(
        positions[None, :] - positions[:, None], bidirectional=True, num_buckets=8, max_distance=16
    )
    assert buckets.unique().tolist() == [0, 1, 2, 3, 5, 6, 7]


# ---------------------------------------------------------------------------------------------
# GPT-2


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory) -> Path:
    return make_gpt2_dir(tmp_path_factory.mktemp("gpt2") / "gpt2-tiny")


@pytest.fixture(scope="module")
def gpt2_ref(gpt2_dir):
    return reference_gpt2(gpt2_dir)


def test_gpt2_dir_layout(gpt2_dir, gpt2_ref):
    tokenizer, _ = gpt2_ref
    assert GPT2_FILES <= {p.name for p in gpt2_dir.iterdir()}
    config = _config(gpt2_dir)
    assert config["model_type"] == "gpt2" and config["architectures"] == ["GPT2LMHeadModel"]
    vocab = json.loads((gpt2_dir / "vocab.json").read_text(encoding="utf-8"))
    eot = len(vocab) - 1
    assert vocab[GPT2_EOT] == eot == config["bos_token_id"] == config["eos_token_id"]  # as 50256
    assert sorted(vocab.values()) == list(range(len(vocab))) and len(vocab) == 300
    assert len(tokenizer) == len(vocab) == config["vocab_size"]
    assert config["activation_function"] == "gelu_new" and config["n_inner"] is None
    assert config["n_positions"] == config["n_ctx"] == 64 and config["layer_norm_epsilon"] == 1e-5
    assert config["resid_pdrop"] == config["embd_pdrop"] == config["attn_pdrop"] == 0.0
    generation = json.loads((gpt2_dir / "generation_config.json").read_text(encoding="utf-8"))
    assert generation["bos_token_id"] == generation["eos_token_id"] == eot
    merges = (gpt2_dir / "merges.txt").read_text(encoding="utf-8").splitlines()
    assert merges[0].startswith("#version") and len(merges) - 1 == len(vocab) - 256 - 1
    tokenizer_json = json.loads((gpt2_dir / "tokenizer.json").read_text(encoding="utf-8"))
    assert tokenizer_json["model"]["vocab"] == vocab
    assert [" ".join(m) for m in tokenizer_json["model"]["merges"]] == merges[1:]
    assert tokenizer_json["pre_tokenizer"]["type"] == "ByteLevel"
    assert tokenizer_json["pre_tokenizer"]["add_prefix_space"] is False
    assert tokenizer_json["decoder"]["type"] == "ByteLevel"


def test_gpt2_tokenizer(gpt2_dir, gpt2_ref, tmp_path):
    """tokenizer.json, vocab.json + merges.txt alone, and the raw `tokenizers` file agree."""
    from tokenizers import Tokenizer
    from transformers import GPT2Tokenizer

    tokenizer, _ = gpt2_ref
    for name in ("vocab.json", "merges.txt", "tokenizer_config.json"):
        (tmp_path / name).write_bytes((gpt2_dir / name).read_bytes())
    from_files = GPT2Tokenizer.from_pretrained(str(tmp_path))
    raw = Tokenizer.from_file(str(gpt2_dir / "tokenizer.json"))
    eot = tokenizer.convert_tokens_to_ids(GPT2_EOT)
    for text in TEXTS + [GPT2_EOT + "The cat", " leading space", "日本"]:
        ids = tokenizer(text).input_ids
        assert ids == from_files(text).input_ids == raw.encode(text).ids, text
        assert tokenizer.decode(ids) == text  # byte-level: lossless
    assert tokenizer(ENGLISH[0]).input_ids[-1] != eot  # GPT-2 adds no special token
    assert tokenizer(GPT2_EOT + "The").input_ids[0] == eot


def test_gpt2_weights_round_trip(gpt2_dir, gpt2_ref):
    tokenizer, model = gpt2_ref
    saved = load_file(str(gpt2_dir / "model.safetensors"))
    assert "wte.weight" in saved and "lm_head.weight" not in saved
    assert not any(name.startswith("transformer.") for name in saved)  # gpt2's own names
    mask = torch.tril(torch.ones(64, 64)).view(1, 1, 64, 64)
    assert torch.equal(saved["h.0.attn.bias"], mask) and torch.equal(saved["h.1.attn.bias"], mask)
    for name, tensor in saved.items():
        assert tensor.numel() == 1 or tensor.std() > 0, name
    assert all(not torch.all(saved[n] == 1) for n in saved if ".ln_" in n and n.endswith(".weight"))
    expected = _gpt2_model(model.config, seed=0)
    for name, tensor in expected.state_dict().items():
        assert torch.equal(model.state_dict()[name], tensor), name
    assert model.lm_head.weight is model.transformer.wte.weight
    with torch.no_grad():
        out = model(**tokenizer([ENGLISH[0]], return_tensors="pt"))
        generated = model.generate(
            **tokenizer([ENGLISH[0]], return_tensors="pt"),
            do_sample=False,
            max_new_tokens=4,
            pad_token_id=model.config.eos_token_id,
        )
    assert out.logits.shape == (1, len(tokenizer(ENGLISH[0]).input_ids), 300)
    assert generated.shape[1] <= len(tokenizer(ENGLISH[0]).input_ids) + 4


def test_t5_gpt2_builders_are_deterministic(tmp_path, gpt2_dir):
    flan = make_t5_dir(tmp_path / "flan")
    again = make_t5_dir(tmp_path / "flan2")
    for name in ("spiece.model", "tokenizer.json", "config.json"):
        assert (again / name).read_bytes() == (flan / name).read_bytes(), name
    a, b = load_file(str(again / "model.safetensors")), load_file(str(flan / "model.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    other = make_gpt2_dir(tmp_path / "g", seed=1, hub_layout=False)
    for name in ("vocab.json", "merges.txt", "tokenizer.json"):
        assert (other / name).read_bytes() == (gpt2_dir / name).read_bytes(), name
    a, b = load_file(str(other / "model.safetensors")), load_file(str(gpt2_dir / "model.safetensors"))
    assert "transformer.wte.weight" in a and not any(".attn.bias" in k for k in a)  # save_pretrained's names
    assert not torch.equal(a["transformer.wte.weight"], b["wte.weight"])
    _, model = reference_gpt2(other)
    expected = _gpt2_model(model.config, seed=1)
    assert all(torch.equal(model.state_dict()[k], t) for k, t in expected.state_dict().items())
