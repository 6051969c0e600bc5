"""Greedy decoding's trace made from its own steps (decoding.stepped_trace) and its KV cache grown in place
(attention.KVCache.append): the same Trace as the one teacher-forced pass over everything the decoder read,
and as the way before (a pass over the new pieces after decoding, a cache grown by concatenation), for
every family and with the switches that change what a step computes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from fixtures import build_tiny_checkpoint
from hf_fixtures import GEMMA_WINDOW, make_decoder_dir, make_t5_dir

from model import DecodeOptions, Interventions, load_bundle
from model.engine import stages
from model.engine.attention import KVCache
from model.engine.decoding import greedy, stepped_trace
from model.engine.transformer import layers_of
from model.results import Trace

PROMPT = "The old man reads a book in the garden and the small girl sees a white bird."
SENTENCE = "The small girl sees a white bird."
NEW = 6
SWITCHES = {
    "as trained": Interventions(),
    "a head knocked out": Interventions(ablate=frozenset({("decoder", "self", 1, 1)})),
    "positions off": Interventions(positional_encoding=False),
    "first piece hidden": Interventions(hide_first=True),
    "unscaled, -1e9": Interventions(scale_scores=False, mask_value="-1e9"),
}


def _same(ours: np.ndarray, theirs: np.ndarray, name: str, tolerance: float = 1e-5) -> None:
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, name
    if not np.issubdtype(ours.dtype, np.floating):
        assert np.array_equal(ours, theirs), name
        return
    finite = np.isfinite(theirs)
    assert np.array_equal(np.isfinite(ours), finite), f"{name}: -inf/NaN elsewhere"
    assert np.array_equal(ours[~finite], theirs[~finite], equal_nan=True), name
    if finite.any():
        assert np.abs(ours[finite] - theirs[finite]).max() < tolerance, name


def assert_same_trace(ours: Trace, theirs: Trace, unprojected_rows: int = 0) -> None:
    """Every hook point, in the same order, of the same shape, equal to 1e-5; the logits of the first
    `unprojected_rows` rows (a prompt's, which no step projects) left out."""
    assert list(ours.tensors) == list(theirs.tensors)
    assert ours.tgt_ids == theirs.tgt_ids and ours.src_ids == theirs.src_ids
    for name, array in ours.tensors.items():
        other = theirs.tensors[name]
        if name == stages.LOGITS and unprojected_rows:
            assert np.isnan(array[:, :unprojected_rows]).all()
            array, other = array[:, unprojected_rows:], other[:, unprojected_rows:]
        _same(array, other, name)


@pytest.fixture(scope="module")
def decoders(tmp_path_factory):
    root = tmp_path_factory.mktemp("stepped")
    return {
        family: load_bundle(make_decoder_dir(root / family, family))
        for family in ("llama", "qwen2", "gemma3_text", "gpt_neox")
    }


@pytest.mark.parametrize("family", ["llama", "qwen2", "gemma3_text", "gpt_neox"])
@pytest.mark.parametrize("switch", list(SWITCHES))
def test_a_continuations_trace_is_the_one_teacher_forced_pass(decoders, family, switch):
    bundle, iv = decoders[family], SWITCHES[switch]
    options = DecodeOptions(max_len=NEW)
    result = bundle.generate(PROMPT, iv, options)
    prompt = len(result.prompt_ids)
    if family == "gemma3_text":
        assert prompt > 2 * GEMMA_WINDOW, "the prompt is longer than the window"
    assert result.trace is not None and len(result.output_ids) > 1
    one_pass = bundle.teacher_forced(PROMPT, result.output_ids, iv)
    assert_same_trace(result.trace, one_pass, unprojected_rows=prompt - 1)
    before = bundle.generate(PROMPT, iv, options, second_pass=True)
    assert before.output_ids == result.output_ids and before.trace is not None
    assert_same_trace(result.trace, before.trace, unprojected_rows=prompt - 1)
    assert [s.probability for s in result.steps] == pytest.approx([s.probability for s in before.steps], abs=1e-6)
    assert result.cache is not None and before.cache is not None
    for ours, theirs in zip(result.cache.self_attention, before.cache.self_attention, strict=True):
        assert np.array_equal(ours.keys, theirs.keys) and np.array_equal(ours.values, theirs.values)
    for step in range(len(result.output_ids)):
        for ours, theirs in zip(result.cache.at(step), before.cache.at(step), strict=True):
            assert np.array_equal(ours.keys, theirs.keys) and np.array_equal(ours.values, theirs.values)


def test_a_one_piece_continuation_is_the_prompts_pass(decoders):
    bundle = decoders["llama"]
    result = bundle.generate(PROMPT, options=DecodeOptions(max_len=1))
    assert len(result.output_ids) == 1 and result.trace is not None
    one_pass = bundle.teacher_forced(PROMPT, result.output_ids)
    assert_same_trace(result.trace, one_pass, unprojected_rows=len(result.prompt_ids) - 1)


def test_beams_and_the_causal_mask_off_keep_their_pass_after_decoding(decoders):
    bundle = decoders["qwen2"]
    beams = bundle.generate(PROMPT, options=DecodeOptions(max_len=NEW, beam_size=3))
    assert beams.trace is not None
    assert_same_trace(beams.trace, bundle.teacher_forced(PROMPT, beams.output_ids))
    off = bundle.generate(PROMPT, Interventions(causal_mask=False), DecodeOptions(max_len=NEW))
    assert off.trace is not None and off.cache is None
    assert (
        off.output_ids
        == bundle.generate(PROMPT, Interventions(causal_mask=False), DecodeOptions(max_len=NEW), trace=False).output_ids
    )


@pytest.fixture(scope="module")
def translators(tmp_path_factory):
    root = tmp_path_factory.mktemp("translators")
    return {
        "ours": load_bundle(build_tiny_checkpoint(root / "tiny")),
        "t5": load_bundle(make_t5_dir(root / "t5", variant="t5", seed=2)),
    }


def _stepped_translation(bundle, sentence: str, iv: Interventions) -> tuple[dict[str, np.ndarray], list[int], KVCache]:
    """The decoder's recording of a greedy translation made from its steps (decoding.stepped_trace), its
    logits included; the pieces produced; the cache."""
    model = bundle.model
    _, src_ids, _ = bundle.encode_source(sentence)
    steps: list = []
    seen: list[torch.Tensor] = []
    cache = KVCache()
    with torch.inference_mode():
        memory, mask = model.encode(torch.tensor([src_ids]), iv)
        [(ids, end)] = greedy(model, memory, mask, iv, NEW, bundle.specials, seen, cache=cache, recorded_steps=steps)
        tensors = stepped_trace(model, steps, cache, iv)
    tensors[stages.LOGITS] = torch.stack(seen, dim=1)
    return {name: t.numpy() for name, t in tensors.items()}, [*ids, *([] if end is None else [end])], cache


@pytest.mark.parametrize("which", ["ours", "t5"])
@pytest.mark.parametrize("switch", [*SWITCHES, "a cross head knocked out"])
def test_an_encoder_decoders_stepped_trace_is_the_one_teacher_forced_pass(translators, which, switch):
    """translate keeps its pass after decoding (its trace equals teacher_forced bit for bit); the engine's
    stepped trace of an encoder-decoder (cross-attention, T5's relative position bias) equals it to 1e-5."""
    bundle = translators[which]
    iv = SWITCHES.get(switch) or Interventions(ablate=frozenset({("decoder", "cross", 0, 1)}))
    tensors, produced, cache = _stepped_translation(bundle, SENTENCE, iv)
    assert len(produced) > 1
    one_pass = bundle.teacher_forced(SENTENCE, produced, iv)
    decoder = [
        name
        for name in one_pass.tensors
        if stages.parse(name).side != "source" and stages.parse(name).stack != "encoder"
    ]
    assert list(tensors) == decoder
    for name in decoder:
        _same(tensors[name], one_pass.tensors[name], name)
    result = bundle.translate(SENTENCE, iv, DecodeOptions(max_len=NEW))
    assert list(result.output_ids) == produced and result.cache is not None
    layers = layers_of(bundle.model.decoder)
    for ours, layer in zip(result.cache.self_attention, layers, strict=True):
        keys, values = cache.store[layer.self_attn]
        assert np.array_equal(ours.keys, keys[0].numpy()) and np.array_equal(ours.values, values[0].numpy())
    for ours, layer in zip(result.cache.cross_attention, layers, strict=True):
        assert np.array_equal(ours.keys, cache.store[layer.cross_attn][0][0].numpy())


def test_the_cache_grows_in_place_and_doubles_without_a_reservation():
    block = torch.nn.Identity()
    grown, joined = KVCache(), KVCache(in_place=False)
    rows = [torch.randn(2, 3, n, 4) for n in (5, 1, 1, 1, 1, 1, 1)]
    rooms = []
    for piece in rows:
        ours = grown.append(block, piece, -piece)
        theirs = joined.append(block, piece, -piece)
        assert torch.equal(ours[0], theirs[0]) and torch.equal(ours[1], theirs[1])
        rooms.append(grown._buffers[block][0].size(2))
    assert rooms == [5, 10, 10, 10, 10, 10, 20]
    reserved = KVCache(capacity=40)
    first = reserved.append(block, rows[0], rows[0])[0]
    for piece in rows[1:]:
        keys, _ = reserved.append(block, piece, piece)
        assert keys.data_ptr() == first.data_ptr(), "one buffer, written in place"


def test_a_prefix_and_a_reordered_cache_leave_the_original_alone():
    block = torch.nn.Identity()
    cache = KVCache(capacity=16)
    whole = torch.randn(3, 2, 6, 4)
    cache.append(block, whole, whole + 1)
    cut = cache.prefix(4)
    cut.append(block, torch.zeros(3, 2, 1, 4), torch.zeros(3, 2, 1, 4))
    assert torch.equal(cache.store[block][0], whole), "the prefix wrote into a buffer of its own"
    assert torch.equal(cut.store[block][0][:, :, 4], torch.zeros(3, 2, 4))
    index = torch.tensor([2, 0])
    cache.reorder(index)
    assert torch.equal(cache.store[block][0], whole[index]) and torch.equal(cache.store[block][1], whole[index] + 1)
    new = torch.randn(2, 2, 1, 4)
    keys, _ = cache.append(block, new, new)
    assert torch.equal(keys, torch.cat([whole[index], new], dim=2))


def test_a_cache_in_an_autograd_graph_concatenates():
    block = torch.nn.Identity()
    cache = KVCache(capacity=8)
    leaf = torch.randn(1, 2, 3, 4, requires_grad=True)
    cache.append(block, leaf * 2, leaf * 3)
    keys, values = cache.append(block, leaf[:, :, :1] * 2, leaf[:, :, :1])
    (keys.sum() + values.sum()).backward()
    assert leaf.grad is not None and keys.size(2) == 4


def test_a_greedy_continuation_takes_no_pass_after_decoding(decoders, monkeypatch):
    """The default path makes no second pass: neither the pass over the new pieces nor the one over the output."""
    import model.engine.continuation as continuation

    def refused(*args, **kwargs):
        raise AssertionError("a pass after decoding")

    monkeypatch.setattr(continuation, "decoded_logits", refused)
    monkeypatch.setattr(continuation, "continued_trace", refused)
    result = decoders["gpt_neox"].generate(PROMPT, options=DecodeOptions(max_len=NEW))
    assert result.trace is not None and len(result.trace.tgt_ids) == len(result.prompt_ids) + len(result.output_ids) - 1
