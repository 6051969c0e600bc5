"""A loaded model's decoder weights laid out for decoding (transposed storage, the self-attention's
queries, keys and values in one block): the same parameters, values and training, and the same
outputs as the plain layout."""

import numpy as np
import torch

from model import Interventions, load_bundle
from model.checkpoints.checkpoint import load_checkpoint, save_checkpoint
from model.engine.hooks import recording

SENTENCE = "the cat sleeps on the mat."


def _plain(model):
    """The same model with every parameter a contiguous copy of its own (no block, no transposes)."""
    for param in model.parameters():
        param.data = param.data.clone(memory_format=torch.contiguous_format)
    return model


def _attention(bundle):
    return bundle.model.decoder.layers[0].self_attn


def test_the_decoder_self_attention_projects_with_its_block_only_without_gradients(tiny_checkpoint):
    bundle = load_bundle(tiny_checkpoint)
    attention = _attention(bundle)
    with torch.inference_mode():
        assert attention._fused_projection() is not None
    with torch.enable_grad():
        assert attention._fused_projection() is None
    assert bundle.model.encoder.layers[0].self_attn._fused is None


def test_the_laid_out_model_computes_what_the_plain_one_does(tiny_checkpoint):
    laid_out = load_bundle(tiny_checkpoint)
    plain = load_bundle(tiny_checkpoint)
    _plain(plain.model)
    with torch.inference_mode():
        assert _attention(plain)._fused_projection() is None  # its parameters are no views of the block
    a, b = laid_out.translate(SENTENCE), plain.translate(SENTENCE)
    assert a.output_ids == b.output_ids
    for name, tensor in b.trace.tensors.items():
        np.testing.assert_allclose(a.trace.tensors[name], tensor, rtol=1e-5, atol=1e-5, err_msg=name)


def test_an_update_in_place_reaches_the_block_and_a_replaced_parameter_leaves_it(tiny_checkpoint):
    bundle = load_bundle(tiny_checkpoint)
    attention = _attention(bundle)
    with torch.no_grad():
        attention.w_v.weight.mul_(0.5)
    weight, _, _ = attention._fused
    assert torch.equal(weight[-attention.w_v.weight.size(0) :], attention.w_v.weight)
    attention.w_k.weight.data = attention.w_k.weight.data.clone()
    with torch.inference_mode():
        assert attention._fused_projection() is None


def test_gradients_reach_every_projection_of_a_loaded_model(tiny_checkpoint):
    bundle = load_bundle(tiny_checkpoint)
    model = bundle.model
    src, tgt = torch.tensor([[5, 6, 7, 3]]), torch.tensor([[2, 8, 9]])
    with recording(keep_grad=True) as recorder:
        model(src, tgt, Interventions()).sum().backward()
    attention = _attention(bundle)
    for part in (attention.w_q, attention.w_k, attention.w_v):
        assert part.weight.grad is not None and part.weight.grad.abs().sum() > 0
    assert recorder.tensors["hook_logits"].requires_grad


def test_a_loaded_model_trains_and_saves_as_it_loaded(tiny_checkpoint, tmp_path):
    checkpoint = load_checkpoint(tiny_checkpoint)
    model = checkpoint.model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    src, tgt = torch.tensor([[5, 6, 7, 3]]), torch.tensor([[2, 8, 9]])
    model(src, tgt).logsumexp(-1).sum().backward()
    optimizer.step()
    model.eval()
    save_checkpoint(tmp_path, model, checkpoint.tokenizer, dict(checkpoint.card))
    again = load_checkpoint(tmp_path).model
    for (name, param), (other, loaded) in zip(model.named_parameters(), again.named_parameters(), strict=True):
        assert name == other and torch.equal(param, loaded), name
    with torch.inference_mode():
        torch.testing.assert_close(again(src, tgt), _plain(model)(src, tgt), rtol=1e-5, atol=1e-5)
