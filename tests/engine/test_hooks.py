"""Hook points: the exact ordered stages, capture that changes nothing, and no state left behind."""

import threading

import numpy as np
import pytest
import torch

from model import Interventions
from model.engine.config import ModelConfig
from model.engine.hooks import Patch, active_recorder, patching, recording
from model.engine.transformer import Transformer

SMALL = ModelConfig(
    vocab_size=50, d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1, n_decoder_layers=1, dropout=0.0, max_len=16
)
B, S, T, D, HEADS, DK, FF, V = 1, 4, 3, 16, 2, 8, 32, 50


def _attention(prefix, queries, keys):
    return [
        (f"{prefix}.hook_q", (B, HEADS, queries, DK)),
        (f"{prefix}.hook_k", (B, HEADS, keys, DK)),
        (f"{prefix}.hook_v", (B, HEADS, keys, DK)),
        (f"{prefix}.hook_scores", (B, HEADS, queries, keys)),
        (f"{prefix}.hook_masked_scores", (B, HEADS, queries, keys)),
        (f"{prefix}.hook_pattern", (B, HEADS, queries, keys)),
        (f"{prefix}.hook_context", (B, HEADS, queries, DK)),
        (f"{prefix}.hook_concat", (B, queries, D)),
        (f"{prefix}.hook_out", (B, queries, D)),
    ]


def _embed(prefix, length):
    return [(f"{prefix}.hook_ids", (B, length))] + [
        (f"{prefix}.hook_{stage}", (B, length, D)) for stage in ("token", "scaled", "position", "sum")
    ]


def _ffn(prefix, length):
    return [
        (f"{prefix}.ffn.hook_hidden", (B, length, FF)),
        (f"{prefix}.ffn.hook_out", (B, length, D)),
        (f"{prefix}.hook_resid_ffn", (B, length, D)),
        (f"{prefix}.hook_norm_ffn", (B, length, D)),
    ]


EXPECTED_POST_LN = (
    _embed("src_embed", S)
    + _attention("encoder.layers.0.self_attn", S, S)
    + [("encoder.layers.0.hook_resid_self", (B, S, D)), ("encoder.layers.0.hook_norm_self", (B, S, D))]
    + _ffn("encoder.layers.0", S)
    + [("encoder.hook_memory", (B, S, D))]
    + _embed("tgt_embed", T)
    + _attention("decoder.layers.0.self_attn", T, T)
    + [("decoder.layers.0.hook_resid_self", (B, T, D)), ("decoder.layers.0.hook_norm_self", (B, T, D))]
    + _attention("decoder.layers.0.cross_attn", T, S)
    + [("decoder.layers.0.hook_resid_cross", (B, T, D)), ("decoder.layers.0.hook_norm_cross", (B, T, D))]
    + _ffn("decoder.layers.0", T)
    + [("decoder.hook_output", (B, T, D)), ("hook_logits", (B, T, V))]
)


def run(model, src, tgt, iv=Interventions()):
    with torch.inference_mode(), recording() as recorder:
        logits = model(src, tgt, iv)
    return logits, recorder.tensors


@pytest.fixture(scope="module")
def small():
    torch.manual_seed(0)
    return Transformer(SMALL).eval()


SRC, TGT = torch.tensor([[5, 6, 7, 3]]), torch.tensor([[2, 8, 9]])


def test_stage_names_and_shapes_are_pinned_post_ln(small):
    _, tensors = run(small, SRC, TGT)
    assert [(name, tuple(t.shape)) for name, t in tensors.items()] == EXPECTED_POST_LN
    assert sorted(tensors) == sorted(small.hook_names), "every hook point fires exactly once"


def test_pre_ln_records_the_norm_before_each_sublayer():
    torch.manual_seed(0)
    model = Transformer(ModelConfig(**{**SMALL.to_dict(), "norm_first": True})).eval()
    names = list(run(model, SRC, TGT)[1])
    layer = [n for n in names if n.startswith("encoder.layers.0.") and ".self_attn." not in n and ".ffn." not in n]
    assert layer == [
        "encoder.layers.0.hook_norm_self",
        "encoder.layers.0.hook_resid_self",
        "encoder.layers.0.hook_norm_ffn",
        "encoder.layers.0.hook_resid_ffn",
    ]
    assert names.index("encoder.layers.0.hook_norm_self") < names.index("encoder.layers.0.self_attn.hook_q")


def test_capture_on_equals_capture_off(small):
    with torch.inference_mode():
        plain = small(SRC, TGT)
    captured, _ = run(small, SRC, TGT)
    torch.testing.assert_close(captured, plain, rtol=0, atol=0)


def _no_hooks_anywhere(model):
    for module in model.modules():
        for registry in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks"):
            assert not getattr(module, registry), f"{registry} left on {type(module).__name__}"
    assert active_recorder() is None


def test_nothing_is_left_behind_after_a_call_or_an_error(small):
    run(small, SRC, TGT)
    _no_hooks_anywhere(small)
    with pytest.raises(ValueError):
        run(small, torch.ones(1, SMALL.max_len + 1, dtype=torch.long), TGT)  # too long: fails mid-pass
    _no_hooks_anywhere(small)


def test_same_input_twice_gives_bitwise_identical_records(small):
    first, second = run(small, SRC, TGT)[1], run(small, SRC, TGT)[1]
    assert all(torch.equal(first[name], second[name]) for name in first)


def test_sixteen_threads_each_get_their_own_single_threaded_trace(tiny_bundle):
    sentences = [f"The {w} sleeps." for w in ("cat", "dog", "girl", "boy")] + [
        "I see the white bird.",
        "The small girl sees a white bird.",
        "My sisters arrived yesterday.",
        "Do you see the cat?",
        "I do not have a car.",
        "We are happy.",
        "I drink water.",
        "The old man reads a book in the garden.",
        "They will go to the school tomorrow.",
        "The teacher gives the answer to the students.",
        "The dog eats an apple.",
        "The cat eats.",
    ]
    ivs = [Interventions(causal_mask=i % 3 != 0, ablate=frozenset({("decoder", "cross", 0, i % 4)})) for i in range(16)]
    alone = [tiny_bundle.translate(s, iv).trace for s, iv in zip(sentences, ivs, strict=True)]
    results, errors = [None] * 16, []
    barrier = threading.Barrier(16)

    def work(i):
        try:
            barrier.wait()
            for _ in range(3):
                results[i] = tiny_bundle.translate(sentences[i], ivs[i]).trace
                assert active_recorder() is None
        except Exception as exc:  # reported below with its thread
            errors.append((i, exc))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    for i, (mine, single) in enumerate(zip(results, alone, strict=True)):
        assert mine.src_pieces == single.src_pieces and mine.tgt_ids == single.tgt_ids, i
        assert list(mine.tensors) == list(single.tensors)
        for name in single.tensors:
            assert np.array_equal(mine.tensors[name], single.tensors[name], equal_nan=True), (i, name)
    _no_hooks_anywhere(tiny_bundle.model)


# ---- patching -------------------------------------------------------------------------------


def _recorded(model, src, tgt, iv=Interventions()):
    with torch.inference_mode(), recording() as recorder:
        logits = model(src, tgt, iv)
    return logits, recorder.tensors


def test_patching_a_run_with_its_own_activations_changes_nothing_exactly(small):
    src, tgt = torch.tensor([[5, 6, 7, 2]]), torch.tensor([[1, 8, 9]])
    logits, tensors = _recorded(small, src, tgt)
    for name in (
        "src_embed.hook_token",
        "encoder.layers.0.self_attn.hook_pattern",
        "encoder.hook_memory",
        "decoder.layers.0.cross_attn.hook_out",
        "decoder.layers.0.hook_resid_ffn",
    ):
        for positions in (None, [0, 2]):
            with torch.inference_mode(), patching({name: Patch(tensors[name], positions)}) as active:
                again = small(src, tgt, Interventions())
            assert active.applied == {name}
            assert torch.equal(again, logits), (name, positions)


def test_a_patch_changes_the_run_only_inside_its_context_and_only_at_its_positions(small):
    src, other, tgt = torch.tensor([[5, 6, 7, 2]]), torch.tensor([[11, 12, 13, 2]]), torch.tensor([[1, 8, 9]])
    logits, tensors = _recorded(small, src, tgt)
    _, donor = _recorded(small, other, tgt)
    name = "src_embed.hook_sum"
    with torch.inference_mode(), patching({name: Patch(donor[name], [1])}), recording() as recorder:
        patched = small(src, tgt, Interventions())
    seen = recorder.tensors[name]  # a recorder active at the same time records the patched value
    assert torch.equal(seen[:, 1], donor[name][:, 1])
    assert torch.equal(seen[:, [0, 2, 3]], tensors[name][:, [0, 2, 3]])
    assert not torch.equal(patched, logits)
    after, _ = _recorded(small, src, tgt)
    assert torch.equal(after, logits)  # gone after the context


def test_a_patch_that_does_not_fit_is_refused(small):
    src, tgt = torch.tensor([[5, 6, 7, 2]]), torch.tensor([[1, 8, 9]])
    _, tensors = _recorded(small, src, tgt)
    name = "encoder.layers.0.hook_resid_ffn"
    with torch.inference_mode(), patching({name: Patch(tensors[name][:, :2])}), pytest.raises(ValueError):
        small(src, tgt, Interventions())
    with torch.inference_mode(), patching({name: Patch(tensors[name], [5])}), pytest.raises(ValueError):
        small(src, tgt, Interventions())


def test_two_threads_patching_different_things_at_once_do_not_see_each_other(small):
    src, tgt = torch.tensor([[5, 6, 7, 2]]), torch.tensor([[1, 8, 9]])
    logits, tensors = _recorded(small, src, tgt)
    name = "encoder.hook_memory"
    changes = {"zeros": torch.zeros_like(tensors[name]), "ones": torch.ones_like(tensors[name])}
    expected = {}
    for key, value in changes.items():
        with torch.inference_mode(), patching({name: Patch(value)}):
            expected[key] = small(src, tgt, Interventions())
    barrier, results, errors = threading.Barrier(3), {}, []

    def run(key):
        try:
            with torch.inference_mode():
                if key == "none":
                    barrier.wait(10)
                    results[key] = [small(src, tgt, Interventions()) for _ in range(20)]
                    return
                with patching({name: Patch(changes[key])}):
                    barrier.wait(10)
                    results[key] = [small(src, tgt, Interventions()) for _ in range(20)]
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(key,)) for key in ("zeros", "ones", "none")]
    [t.start() for t in threads]
    [t.join(30) for t in threads]
    assert not errors
    assert all(torch.equal(out, expected["zeros"]) for out in results["zeros"])
    assert all(torch.equal(out, expected["ones"]) for out in results["ones"])
    assert all(torch.equal(out, logits) for out in results["none"])


def test_recording_with_gradients_reaches_the_token_embeddings(small):
    src, tgt = torch.tensor([[5, 6, 7, 2]]), torch.tensor([[1, 8, 9]])
    with recording(keep_grad=True) as recorder:
        logits = small(src, tgt, Interventions())
    token = recorder.tensors["src_embed.hook_token"]
    assert token.requires_grad
    (grad,) = torch.autograd.grad(logits[0, -1].log_softmax(-1)[4], token)
    assert grad.shape == token.shape and grad.abs().sum() > 0
