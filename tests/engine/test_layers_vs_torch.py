"""Our blocks against PyTorch's own on copied weights."""

import pytest
import torch
from torch import nn

from model.engine.attention import MultiHeadAttention
from model.engine.config import ModelConfig
from model.engine.hooks import name_hook_points, recording
from model.engine.layers import TransformerLayer
from model.engine.masks import subsequent_mask

D, H, FF = 32, 4, 64


def config(norm_first: bool = False, activation: str = "relu") -> ModelConfig:
    return ModelConfig(
        vocab_size=50,
        d_model=D,
        n_heads=H,
        d_ff=FF,
        n_encoder_layers=1,
        n_decoder_layers=1,
        dropout=0.0,
        norm_first=norm_first,
        activation=activation,
    )


def copy_attention(ours: MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
        theirs.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
        theirs.out_proj.weight.copy_(ours.w_o.weight)
        theirs.out_proj.bias.copy_(ours.w_o.bias)


def copy_layer(ours: TransformerLayer, theirs: nn.Module, cross: bool) -> None:
    copy_attention(ours.self_attn, theirs.self_attn)
    norms = [(ours.norm_self, theirs.norm1)]
    if cross:
        copy_attention(ours.cross_attn, theirs.multihead_attn)
        norms += [(ours.norm_cross, theirs.norm2), (ours.norm_ffn, theirs.norm3)]
    else:
        norms += [(ours.norm_ffn, theirs.norm2)]
    with torch.no_grad():
        for mine, torchs in norms + [(ours.ffn.w_1, theirs.linear1), (ours.ffn.w_2, theirs.linear2)]:
            torchs.weight.copy_(mine.weight)
            torchs.bias.copy_(mine.bias)


@pytest.mark.parametrize("masked", [False, True])
def test_attention_matches_torch_multihead_attention(masked):
    torch.manual_seed(0)
    ours = MultiHeadAttention(config()).eval()
    name_hook_points(ours)
    theirs = nn.MultiheadAttention(D, H, dropout=0.0, batch_first=True).eval()
    copy_attention(ours, theirs)
    x, memory = torch.randn(2, 5, D), torch.randn(2, 7, D)
    query, keys = (x, x) if masked else (x, memory)
    keep = subsequent_mask(5) if masked else None
    with recording() as recorder:
        out = ours(query, keys, keep)
    expected, weights = theirs(
        query, keys, keys, attn_mask=None if keep is None else ~keep, need_weights=True, average_attn_weights=False
    )
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(recorder.tensors["hook_pattern"], weights, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer_matches_torch(norm_first, activation):
    torch.manual_seed(1)
    ours = TransformerLayer(config(norm_first, activation), cross=False).eval()
    theirs = nn.TransformerEncoderLayer(
        D, H, FF, dropout=0.0, activation=activation, batch_first=True, norm_first=norm_first
    ).eval()
    copy_layer(ours, theirs, cross=False)
    x = torch.randn(3, 6, D)
    with torch.no_grad():
        torch.testing.assert_close(ours(x, None), theirs(x), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_matches_torch(norm_first):
    torch.manual_seed(2)
    ours = TransformerLayer(config(norm_first), cross=True).eval()
    theirs = nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, batch_first=True, norm_first=norm_first).eval()
    copy_layer(ours, theirs, cross=True)
    x, memory = torch.randn(2, 5, D), torch.randn(2, 8, D)
    causal = subsequent_mask(5)
    with torch.no_grad():
        torch.testing.assert_close(
            ours(x, causal, memory, None), theirs(x, memory, tgt_mask=~causal), atol=1e-5, rtol=1e-5
        )


@pytest.mark.parametrize("norm_first", [False, True])
def test_a_decoder_only_model_is_a_causal_stack_without_cross_attention(norm_first):
    """The engine with no encoder layers (GPT-2's shape): each decoder layer has self-attention and a
    feed-forward only, and the stack equals PyTorch's layer stack under a causal mask."""
    from model import Interventions
    from model.engine import stages
    from model.engine.transformer import Transformer

    torch.manual_seed(2)
    cfg = ModelConfig(
        vocab_size=50,
        d_model=D,
        n_heads=H,
        d_ff=FF,
        n_encoder_layers=0,
        n_decoder_layers=2,
        dropout=0.0,
        norm_first=norm_first,
        positional="learned",
    )
    model = Transformer(cfg).eval()
    assert cfg.kind == "decoder" and not cfg.cross_attention and not hasattr(model, "encoder")
    theirs = [
        nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, batch_first=True, norm_first=norm_first).eval()
        for _ in range(2)
    ]
    for mine, torchs in zip(model.decoder.layers, theirs, strict=True):
        copy_layer(mine, torchs, cross=False)
    ids = torch.tensor([[3, 9, 4, 7, 1]])
    with torch.inference_mode(), recording() as recorder:
        logits = model(None, ids, Interventions())
    names = list(recorder.tensors)
    assert not any(stages.parse(n).source_rows or stages.parse(n).kind == "cross" for n in names)
    assert stages.layers(names, "decoder") == 2 and stages.layers(names, "encoder") == 0
    pattern = recorder.tensors[stages.attention("decoder", "self", 1, "pattern")]
    assert pattern.shape == (1, H, 5, 5) and torch.equal(torch.triu(pattern[0], 1), torch.zeros_like(pattern[0]))
    x = recorder.tensors[stages.embedding("sum", "target")]
    with torch.no_grad():
        for layer in theirs:
            x = layer(x, src_mask=~subsequent_mask(5), is_causal=True)
        x = model.decoder.final_norm(x)
        torch.testing.assert_close(recorder.tensors[stages.DECODER_OUTPUT], x, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(logits, x @ model.tgt_embed.token.weight.T, atol=1e-5, rtol=1e-5)


def test_a_model_needs_at_least_one_stack():
    with pytest.raises(ValueError, match="encoder layers, decoder layers or both"):
        ModelConfig(n_encoder_layers=0, n_decoder_layers=0)
