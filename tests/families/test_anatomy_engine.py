"""The engine's side of today's decoders opened up, on the five tiny families and a T5: the rotation's
relative property (every pattern unchanged when every position moves by k, with the engine's own
rotation tables), the cache's shapes equal to transformers' past_key_values at every step, the cache's
bytes, the first piece hidden, sink shares and the sliding window's mask."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hf_fixtures import DECODER_FAMILIES, GEMMA_WINDOW, make_decoder_dir, reference_decoder
from test_families_t5_gpt2 import PROMPTS, _sharpen

from model import DecodeOptions, Interventions, load_bundle
from model.analysis import rotary
from model.analysis.cache import cache_step, kv_bytes, window_masks, without_cache
from model.analysis.roles import block_roles, role
from model.analysis.sinks import first_shares, sinks
from model.engine import stages
from model.engine.hooks import recording


@pytest.fixture(scope="module", params=DECODER_FAMILIES)
def decoder(request, tmp_path_factory):
    family = request.param
    path = _sharpen(make_decoder_dir(tmp_path_factory.mktemp(family) / family, family, seed=3), 4.0)
    return family, path, load_bundle(path)


def _patterns(bundle, ids: torch.Tensor) -> list[np.ndarray]:
    with torch.inference_mode(), recording() as recorder:
        bundle.model.decode(ids, None, None, Interventions())
    return [
        recorder.tensors[stages.attention("decoder", "self", i, "pattern")][0].numpy()
        for i in range(bundle.config.n_decoder_layers)
    ]


@pytest.mark.parametrize("shift", [1, 7, 100])
def test_rotary_patterns_do_not_change_when_every_position_moves_by_k(decoder, shift, monkeypatch):
    """The engine's rotation tables asked for positions k.. instead of 0.. (every base, Gemma 3's two):
    every layer's pattern is the same to 1e-5, though the queries and keys themselves turned."""
    _, _, bundle = decoder
    ids = torch.tensor([bundle.tokenizer.encode_source(PROMPTS[2])])
    plain = _patterns(bundle, ids)
    with torch.inference_mode(), recording() as recorder:
        bundle.model.decode(ids, None, None, Interventions())
    q_plain = recorder.tensors[stages.attention("decoder", "self", 0, "q")].clone()
    stack = bundle.model.decoder
    for name in ("rotary", "rotary_local"):
        if hasattr(stack, name):
            table = getattr(stack, name)
            original = table.forward
            monkeypatch.setattr(
                table, "forward", lambda start, length, factor=1.0, o=original: o(start + shift, length, factor)
            )
    moved = _patterns(bundle, ids)
    with torch.inference_mode(), recording() as recorder:
        bundle.model.decode(ids, None, None, Interventions())
    assert not torch.allclose(recorder.tensors[stages.attention("decoder", "self", 0, "q")], q_plain, atol=1e-3)
    for layer, (a, b) in enumerate(zip(plain, moved, strict=True)):
        assert np.abs(a - b).max() < 1e-5, (layer, np.abs(a - b).max())


def test_the_relative_demo_depends_on_the_distance_alone(decoder):
    _, _, bundle = decoder
    trace = bundle.generate(PROMPTS[2], options=DecodeOptions(max_len=3)).trace
    query = len(trace.tgt_pieces) - 1
    demo = rotary.relative_demo(bundle.config, trace, 1, 1, query, query - 3, shift=57)
    assert abs(demo.at_text - demo.at_shifted) < 1e-4
    assert np.abs(demo.scores - demo.shifted).max() < 1e-4
    diagonal = np.array([demo.grid[i + 3, i] for i in range(demo.grid.shape[0] - 3)])
    assert np.ptp(diagonal) < 1e-4 and abs(diagonal[0] - demo.at_text) < 1e-4  # the text's pair: m − n = 3
    scores = trace.tensor(stages.attention("decoder", "self", 1, "scores"))[0, 1]
    assert abs(scores[query, query - 3] - demo.at_text) < 1e-4  # the engine's own score of that pair
    assert np.ptp(demo.scores) > 1e-3  # the offset matters


def test_bases_say_each_layer_type_and_partial_rotary(decoder):
    family, _, bundle = decoder
    found = rotary.bases(bundle.config)
    cfg = bundle.config
    assert sum(len(b.layers) for b in found) == cfg.n_decoder_layers
    assert all(len(b.frequencies) == cfg.rotary_dims // 2 for b in found)
    assert all(abs(b.frequencies[0] - 1.0) < 1e-7 for b in found)
    if family == "gemma3_text":
        assert {(b.kind, b.base) for b in found} == {
            ("sliding-window layers", 100.0),
            ("full-attention layers", 10000.0),
        }
    else:
        assert len(found) == 1 and found[0].kind == "every layer"
    if family == "gpt_neox":
        assert cfg.rotary_dims == cfg.d_k // 2


def test_a_base_what_if_changes_the_continuation_and_its_default_is_the_model(decoder):
    _, _, bundle = decoder
    text = PROMPTS[2]
    plain = bundle.generate(text, options=DecodeOptions(max_len=8), trace=False)
    same = bundle.generate(text, Interventions(rotary_base_factor=1.0), DecodeOptions(max_len=8), trace=False)
    assert plain.output_ids == same.output_ids
    fast = bundle.generate(text, Interventions(rotary_base_factor=0.01), DecodeOptions(max_len=8))
    base = bundle.generate(text, options=DecodeOptions(max_len=8))
    assert np.abs(fast.trace.pattern("decoder", "self", 1) - base.trace.pattern("decoder", "self", 1)).max() > 1e-3


def test_the_cache_shapes_equal_past_key_values_at_every_step(decoder):
    """Step by step, transformers' past_key_values over the pieces read so far has the shape our cache
    reports at that step (a sliding layer there keeps only its last window - 1 positions)."""
    _, path, bundle = decoder
    _, model = reference_decoder(path)
    result = bundle.generate(PROMPTS[2], options=DecodeOptions(max_len=6))
    cache, fed = result.cache, list(result.trace.tgt_ids)
    cfg = bundle.config
    for step in range(len(result.output_ids)):
        ours = cache_step(cache, step)
        with torch.no_grad():
            past = model(input_ids=torch.tensor([fed[: ours.positions]]), use_cache=True).past_key_values
        for layer, theirs in enumerate(past.layers):
            shape = tuple(theirs.keys.shape)
            expected = ours.layer_shape
            if cfg.window(layer):
                expected = (*expected[:2], min(expected[2], GEMMA_WINDOW - 1), expected[3])
            assert shape == expected == tuple(theirs.values.shape), (step, layer)
        assert ours.self_bytes == kv_bytes(cfg, ours.positions, 4)
        assert ours.added == (len(result.prompt_ids) if step == 0 else 1)


def test_kv_bytes_against_one_head_per_query_head():
    from model.engine.config import ModelConfig

    cfg = ModelConfig(n_encoder_layers=0, n_decoder_layers=30, d_model=576, n_heads=9, n_kv_heads=3)
    assert kv_bytes(cfg, 1, 2) == 2 * 30 * 3 * 64 * 2  # SmolLM2-135M in bfloat16: 23,040 bytes a piece
    assert kv_bytes(cfg, 4096, 2, kv_heads=9) == 3 * kv_bytes(cfg, 4096, 2)


def test_without_the_cache_gives_the_same_pieces_reading_every_prefix(decoder):
    _, _, bundle = decoder
    prompt = bundle.tokenizer.encode_source(PROMPTS[2])
    measured = without_cache(bundle, prompt, 5)
    assert measured.same_ids
    assert list(measured.pieces_with) == [len(prompt), 1, 1, 1, 1]
    assert list(measured.pieces_without) == [len(prompt) + t for t in range(5)]


def test_hiding_the_first_piece(decoder):
    """No later query reads the first piece; the first still reads itself; the continuation is not the same
    computation (its logits move)."""
    _, _, bundle = decoder
    text = PROMPTS[2]
    hidden = bundle.generate(text, Interventions(hide_first=True), DecodeOptions(max_len=4))
    plain = bundle.generate(text, options=DecodeOptions(max_len=4))
    for layer in range(bundle.config.n_decoder_layers):
        pattern = hidden.trace.pattern("decoder", "self", layer)
        assert np.all(pattern[:, 1:, 0] == 0) and np.allclose(pattern[:, 0, 0], 1)
    assert np.abs(hidden.trace.tensor(stages.LOGITS)[0, -1] - plain.trace.tensor(stages.LOGITS)[0, -1]).max() > 1e-4


def test_sink_shares_and_the_sink_tag(decoder):
    _, _, bundle = decoder
    trace = bundle.generate(PROMPTS[2], options=DecodeOptions(max_len=3)).trace
    found = sinks(trace, "decoder", bundle.config.norm_first)
    n = len(trace.tgt_pieces)
    assert found.shares.shape == (bundle.config.n_decoder_layers, bundle.config.n_heads)
    assert found.norms.shape == (bundle.config.n_decoder_layers + 1, n)
    pattern = trace.pattern("decoder", "self", 0)
    assert np.allclose(found.shares[0], pattern[:, 1:, 0].mean(axis=1))
    only_first = np.zeros((1, 4, 4))
    only_first[0, :, 0] = 1.0
    assert first_shares([only_first])[0, 0] == 1.0
    assert (
        role({"previous": 0.1, "same": 0.1, "first": 0.8, "last": np.nan, "broad": 0.2, "alignment": np.nan}) == "sink"
    )


def test_sink_shares_count_the_queries_a_sliding_window_lets_see_the_first_piece(decoder):
    """Gemma 3's window (4 pieces in the tiny model) hides the first piece from every later query of its sliding
    layers: their shares average the queries that can see it, and the figures say which layers those are."""
    _, _, bundle = decoder
    cfg = bundle.config
    trace = bundle.generate(PROMPTS[2], options=DecodeOptions(max_len=3)).trace
    found = sinks(trace, "decoder", cfg.norm_first, cfg.windows)
    n = len(trace.tgt_pieces)
    for layer in range(cfg.n_decoder_layers):
        pattern = trace.pattern("decoder", "self", layer)
        window = cfg.window(layer)
        stop = min(n, window) if window else n
        assert np.allclose(found.shares[layer], pattern[:, 1:stop, 0].mean(axis=1))
        assert found.seeing[layer] == stop - 1
        if window:
            assert np.all(pattern[:, stop:, 0] == 0)  # out of the window: nothing can land on it
    assert found.windowed == tuple(layer for layer in range(cfg.n_decoder_layers) if 0 < cfg.window(layer) < n)
    roles = block_roles(
        [trace.pattern("decoder", "self", layer) for layer in range(cfg.n_decoder_layers)],
        "decoder",
        "self",
        windows=cfg.windows,
    )
    tagged = {cell for cell, tag in roles.items() if tag == "sink"}
    assert tagged <= {(layer, head) for layer, head in zip(*np.nonzero(found.shares >= 0.5), strict=True)}


def test_the_cache_with_the_windows_keeps_window_minus_one_positions_in_a_sliding_layer(decoder):
    _, _, bundle = decoder
    cfg = bundle.config
    per_position = 2 * cfg.kv_heads * cfg.d_k * 4
    kept = sum(min(100, cfg.window(layer) - 1) if cfg.window(layer) else 100 for layer in range(cfg.n_decoder_layers))
    assert kv_bytes(cfg, 100, 4, windowed=True) == per_position * kept
    assert (kv_bytes(cfg, 100, 4, windowed=True) < kv_bytes(cfg, 100, 4)) == bool(cfg.windows)


def test_gemma_window_masks_show_the_band(decoder):
    family, _, bundle = decoder
    masks = window_masks(bundle.config, 12)
    if family != "gemma3_text":
        assert masks == []
        return
    (_, window, sliding), (_, full_window, full) = masks
    assert window == GEMMA_WINDOW and full_window == 0
    assert np.array_equal(full, np.tril(np.ones((12, 12), dtype=bool)))
    rows, cols = np.indices((12, 12))
    assert np.array_equal(sliding, (cols <= rows) & (cols > rows - window))


@pytest.mark.parametrize(
    "changes", [{}, {"causal_mask": False}, {"scale_scores": False}, {"positional_encoding": False}]
)
def test_one_stage_of_a_teacher_forced_pass_is_the_whole_trace_s(decoder, tiny_bundle, changes):
    """Bundle.teacher_forced_at stops the pass at one hook point (the pages' what-ifs at one layer): what it
    gives is the whole teacher-forced trace's tensor there, bit for bit, for a decoder alone and for an
    encoder-decoder, and a hook point the pass never reaches is refused."""
    _, _, bundle = decoder
    for model_, text in ((bundle, PROMPTS[2]), (tiny_bundle, "the cat eats the apple .")):
        iv = Interventions(**changes)
        output = (
            model_.generate(text, options=DecodeOptions(max_len=4), trace=False).output_ids
            if model_.capabilities.decoder_only
            else model_.translate(text, trace=False).output_ids
        )
        whole = model_.teacher_forced(text, output, iv)
        for layer in (0, model_.config.n_decoder_layers - 1):
            for part in ("scores", "pattern"):
                name = stages.attention("decoder", "self", layer, part)
                assert np.array_equal(
                    model_.teacher_forced_at(text, output, name, iv), whole.tensor(name), equal_nan=True
                )
        with pytest.raises(ValueError, match="never fired"):
            model_.teacher_forced_at(text, output, stages.attention("decoder", "self", 99, "pattern"), iv)
