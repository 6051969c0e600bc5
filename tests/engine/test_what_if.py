"""The what-if switches: scores without 1/sqrt(d_k), embeddings without sqrt(d_model), and the
fill for masked scores (-inf or -1e9), in one pass, in decoding and in every trace."""

from __future__ import annotations

import math

import numpy as np
import pytest

from model import DecodeOptions, InputError, Interventions
from model.analysis.experiments import empty_source

SENTENCES = [
    "The small girl sees a white bird.",
    "My sisters will see the old house.",
    "The boys did not close the blue door.",
    "Do you love the red car?",
    "Five boys often closed these blue windows but they will see their library.",
]


def entropy(pattern: np.ndarray) -> float:
    """Mean entropy (nats) of the softmax rows of a [heads, queries, keys] pattern."""
    p = np.clip(pattern, 1e-12, 1.0)
    return float(-(pattern * np.log(p)).sum(axis=-1).mean())


def test_raw_scores_are_sqrt_dk_times_the_scaled_ones_and_sharpen_the_patterns(tiny_bundle):
    d_k = tiny_bundle.config.d_k
    on = tiny_bundle.translate(SENTENCES[0], Interventions())
    off = tiny_bundle.translate(SENTENCES[0], Interventions(scale_scores=False))
    name = "encoder.layers.0.self_attn.hook_scores"
    np.testing.assert_allclose(off.trace.tensor(name), on.trace.tensor(name) * math.sqrt(d_k), rtol=1e-5, atol=1e-5)
    assert entropy(off.trace.pattern("encoder", "self", 0)) < entropy(on.trace.pattern("encoder", "self", 0))


def test_embeddings_without_scaling_equal_the_token_stage(tiny_bundle):
    off = tiny_bundle.translate(SENTENCES[1], Interventions(scale_embeddings=False)).trace
    on = tiny_bundle.translate(SENTENCES[1], Interventions()).trace
    for side in ("src_embed", "tgt_embed"):
        np.testing.assert_array_equal(off.tensor(f"{side}.hook_scaled"), off.tensor(f"{side}.hook_token"))
    scale = math.sqrt(tiny_bundle.config.d_model)
    np.testing.assert_allclose(on.tensor("src_embed.hook_scaled"), on.tensor("src_embed.hook_token") * scale, rtol=1e-6)


@pytest.mark.parametrize("beam", [1, 4])
@pytest.mark.parametrize("causal", [True, False])
def test_minus_1e9_gives_the_same_translation_and_patterns_on_normal_sentences(tiny_bundle, beam, causal):
    options = DecodeOptions(beam_size=beam)
    for sentence in SENTENCES:
        inf = tiny_bundle.translate(sentence, Interventions(causal_mask=causal), options)
        big = tiny_bundle.translate(sentence, Interventions(causal_mask=causal, mask_value="-1e9"), options)
        assert inf.output_ids == big.output_ids
        for name, array in inf.trace.tensors.items():
            if name.endswith("hook_masked_scores"):  # the one stage where the fill itself shows
                continue
            np.testing.assert_allclose(big.trace.tensors[name], array, atol=1e-6, rtol=0, err_msg=name)


def test_masked_weights_are_exactly_zero_with_either_fill(tiny_bundle):
    for fill in ("-inf", "-1e9"):
        trace = tiny_bundle.translate(SENTENCES[2], Interventions(mask_value=fill)).trace
        pattern = trace.pattern("decoder", "self", 0)
        assert (np.triu(pattern, k=1) == 0).all()  # exp(-1e9 - max) underflows to exactly 0 in float32


def test_fully_masked_rows_are_nan_with_minus_inf_and_uniform_with_minus_1e9(tiny_bundle):
    sentence, _ = empty_source(tiny_bundle, SENTENCES[0], Interventions())
    _, empty = empty_source(tiny_bundle, SENTENCES[0], Interventions())
    assert not any(np.isnan(t).any() for t in sentence.tensors.values())  # the real row is untouched
    assert np.isnan(empty.pattern("encoder", "self", 0)).all()
    assert np.isnan(empty.tensor("hook_logits")).all()  # the NaN spreads to the very end
    _, uniform = empty_source(tiny_bundle, SENTENCES[0], Interventions(mask_value="-1e9"))
    pattern = uniform.pattern("encoder", "self", 0)
    np.testing.assert_allclose(pattern, np.full_like(pattern, 1 / pattern.shape[-1]), rtol=1e-6)
    assert not any(np.isnan(t).any() for t in uniform.tensors.values())


def test_switches_hash_and_refuse_bad_values():
    assert len({Interventions(scale_scores=False), Interventions(scale_scores=False), Interventions()}) == 2
    with pytest.raises(InputError, match="mask_value"):
        Interventions(mask_value="-1e4")
    with pytest.raises(InputError, match="scale_scores"):
        Interventions(scale_scores="no")
