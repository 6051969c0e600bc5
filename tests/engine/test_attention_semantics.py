"""Masks, softmax rows, positional encoding and head ablation do what the paper says."""

import math
from dataclasses import FrozenInstanceError

import numpy as np
import pytest
import torch

from model import Interventions
from model.engine.config import ModelConfig
from model.engine.hooks import recording
from model.engine.positional import sinusoidal_encoding
from model.engine.tokens import PAD_ID
from model.engine.transformer import Transformer

CFG = ModelConfig(
    vocab_size=60, d_model=32, n_heads=4, d_ff=64, n_encoder_layers=2, n_decoder_layers=2, dropout=0.0, max_len=32
)


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(3)
    return Transformer(CFG).eval()


def record(model, src, tgt, iv=Interventions()):
    with torch.inference_mode(), recording() as recorder:
        model(src, tgt, iv)
    return {name: t.numpy() for name, t in recorder.tensors.items()}


SRC = torch.tensor([[10, 11, 12, 13, 14, 3]])
TGT = torch.tensor([[2, 20, 21, 22, 23, 24, 25]])


def patterns(tensors):
    return {name: array for name, array in tensors.items() if name.endswith("hook_pattern")}


def test_every_pattern_row_sums_to_one(model):
    found = patterns(record(model, SRC, TGT))
    assert len(found) == CFG.n_encoder_layers + 2 * CFG.n_decoder_layers
    for name, pattern in found.items():
        np.testing.assert_allclose(pattern.sum(-1), 1.0, atol=1e-5, err_msg=name)


def test_causal_mask_zeroes_the_future_exactly(model):
    tensors = record(model, SRC, TGT)
    for layer in range(CFG.n_decoder_layers):
        pattern = tensors[f"decoder.layers.{layer}.self_attn.hook_pattern"][0]  # (h, T, T)
        future = np.triu(np.ones(pattern.shape[-2:], dtype=bool), k=1)
        assert (pattern[:, future] == 0.0).all()
        assert (pattern[:, ~future] > 0.0).all()
        masked = tensors[f"decoder.layers.{layer}.self_attn.hook_masked_scores"][0]
        assert np.isneginf(masked[:, future]).all()


def test_changing_a_later_token_leaves_earlier_positions_alone_only_with_the_mask(model):
    changed = TGT.clone()
    changed[0, 4] = 40
    for causal in (True, False):
        iv = Interventions(causal_mask=causal)
        before = record(model, SRC, TGT, iv)["decoder.hook_output"][0]
        after = record(model, SRC, changed, iv)["decoder.hook_output"][0]
        same_prefix = np.allclose(before[:4], after[:4], atol=1e-6)
        assert same_prefix == causal


def test_padding_mask_hides_padded_keys_and_switching_it_off_shows_them(model):
    src = torch.tensor([[10, 11, 12, 13, 14, 3], [15, 16, 3, PAD_ID, PAD_ID, PAD_ID]])
    tgt = torch.tensor([[2, 20, 21, 22], [2, 30, PAD_ID, PAD_ID]])
    on = record(model, src, tgt)
    assert (on["encoder.layers.0.self_attn.hook_pattern"][1][..., 3:] == 0.0).all()
    assert (on["decoder.layers.1.cross_attn.hook_pattern"][1][..., 3:] == 0.0).all()
    assert (on["decoder.layers.0.self_attn.hook_pattern"][1][..., 2:] == 0.0).all()
    off = record(model, src, tgt, Interventions(padding_mask=False))
    assert (off["encoder.layers.0.self_attn.hook_pattern"][1][..., 3:] > 0.0).all()
    # the unpadded sentence is unaffected by padding in its batch neighbour
    single = record(model, src[:1], tgt[:1])
    np.testing.assert_allclose(on["hook_logits"][0], single["hook_logits"][0], atol=1e-5)


def test_sinusoidal_encoding_is_the_papers_formula():
    table = sinusoidal_encoding(50, 16).numpy()
    for pos in (0, 1, 7, 49):
        for i in range(8):
            angle = pos / 10000 ** (2 * i / 16)
            assert table[pos, 2 * i] == pytest.approx(math.sin(angle), abs=1e-6)
            assert table[pos, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-6)


def test_embeddings_are_scaled_and_positions_added(model):
    tensors = record(model, SRC, TGT)
    np.testing.assert_allclose(
        tensors["src_embed.hook_scaled"], tensors["src_embed.hook_token"] * math.sqrt(CFG.d_model), rtol=1e-6
    )
    np.testing.assert_allclose(
        tensors["src_embed.hook_position"][0],
        sinusoidal_encoding(CFG.max_len, CFG.d_model)[: SRC.size(1)].numpy(),
        atol=1e-7,
    )


def test_switching_positional_encoding_off_changes_the_encoder_output(model):
    off = record(model, SRC, TGT, Interventions(positional_encoding=False))
    on = record(model, SRC, TGT)
    assert (off["src_embed.hook_position"] == 0).all()
    assert not np.allclose(off["encoder.hook_memory"], on["encoder.hook_memory"], atol=1e-3)


def test_ablating_a_head_zeroes_its_context_keeps_its_pattern_and_changes_the_output(model):
    head = ("encoder", "self", 1, 2)
    on = record(model, SRC, TGT)
    off = record(model, SRC, TGT, Interventions(ablate=frozenset({head})))
    context = off["encoder.layers.1.self_attn.hook_context"][0]
    assert (context[2] == 0).all() and (context[[0, 1, 3]] != 0).any()
    np.testing.assert_array_equal(
        off["encoder.layers.1.self_attn.hook_pattern"], on["encoder.layers.1.self_attn.hook_pattern"]
    )
    assert not np.allclose(off["hook_logits"], on["hook_logits"], atol=1e-4)


@pytest.mark.parametrize("kind", ["self", "cross"])
def test_decoder_heads_can_be_ablated(model, kind):
    off = record(model, SRC, TGT, Interventions(ablate=frozenset({("decoder", kind, 0, 1)})))
    assert (off[f"decoder.layers.0.{kind}_attn.hook_context"][0, 1] == 0).all()


def test_bad_ablations_fail_with_a_clear_message():
    with pytest.raises(ValueError, match="cross"):
        Interventions(ablate=frozenset({("encoder", "cross", 0, 0)}))
    with pytest.raises(ValueError, match="non-negative"):
        Interventions(ablate=frozenset({("decoder", "self", -1, 0)}))


def test_bad_configs_fail_at_construction():
    with pytest.raises(ValueError, match="divisible"):
        ModelConfig(d_model=30, n_heads=4)
    with pytest.raises(ValueError, match="activation"):
        ModelConfig(activation="tanh")
    with pytest.raises(ValueError, match="unknown keys"):
        ModelConfig.from_dict({"d_model": 64, "layers": 2})


def test_interventions_are_frozen_hashable_values():
    a = Interventions(ablate=frozenset({("decoder", "cross", 1, 2)}))
    b = Interventions(ablate={("decoder", "cross", 1, 2)})
    assert a == b and hash(a) == hash(b) and len({a, b, Interventions()}) == 2
    with pytest.raises(FrozenInstanceError):
        a.causal_mask = False


@pytest.mark.parametrize(
    "changes", [{"positional": "learned"}, {"tie_embeddings": False}, {"norm_first": True, "activation": "gelu"}]
)
def test_config_options_build_run_and_round_trip(tmp_path, changes):
    from model import load_bundle
    from model.checkpoints.checkpoint import save_checkpoint
    from model.engine.tokenizer import Tokenizer

    tokenizer = Tokenizer.train(["the cat sleeps", "le chat dort."] * 20, 300)
    cfg = ModelConfig(**{**CFG.to_dict(), "vocab_size": tokenizer.vocab_size, **changes})
    torch.manual_seed(0)
    model = Transformer(cfg).eval()
    names = dict(model.named_parameters())
    assert ("src_embed.positions.table" in names) == (cfg.positional == "learned")
    assert ("generator.weight" in names) == (not cfg.tie_embeddings)
    save_checkpoint(tmp_path, model, tokenizer, {})
    loaded = load_bundle(tmp_path)
    model.store_for_decoding()  # as loading lays out the decoder's matrices: the same bits in the same order
    with torch.inference_mode():
        torch.testing.assert_close(loaded.model(SRC, TGT), model(SRC, TGT), rtol=0, atol=0)
