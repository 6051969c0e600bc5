"""Direct logit attribution (model.analysis.shares) on every family against transformers itself, on tiny random
checkpoints it writes (tests/hf_fixtures.py), sharpened as the other families tests do: the shares of a piece's
logit add up to transformers' own logit, every attention head's share equals the one computed from transformers'
modules (tests/dla_reference.py: the output projection's input split by head, carried through the norms frozen at
what transformers' norms read), a knocked-out head's share is zero while the rest still add up to the knocked-out
model's logit, and the output's own trace gives the shares and the routes a pass gives. GPT-2, Llama, Qwen2, Qwen3,
Gemma 3 (sandwich norms, (1 + w) RMSNorm, windows), GPT-NeoX (parallel residual), T5 (tied, rescaled head),
flan-T5 (separate head) and Marian (post-LN, a bias on the logits); a chat message on the families with a chat
template."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch
from dla_reference import head_shares
from hf_fixtures import (
    END_OF_TURN,
    make_decoder_dir,
    make_gpt2_dir,
    make_marian_dir,
    make_t5_dir,
    reference_decoder,
    reference_gpt2,
    reference_marian,
    reference_t5,
)
from test_families import EOS_BOOST, one_thread  # noqa: F401
from test_families import _sharpen as _sharpen_all
from test_families_t5_gpt2 import _sharpen as _sharpen_layers

from model import DecodeOptions, Interventions, load_bundle
from model.analysis import forced
from model.analysis.routes import routes
from model.analysis.shares import BIAS, EMBEDDINGS, logit_contributions, logit_shares
from model.engine import stages

FAMILIES = ("gpt2", "llama", "qwen2", "qwen3", "gemma3_text", "gpt_neox", "t5", "flan", "marian")
CHAT = tuple(END_OF_TURN)  # the families whose instruct checkpoints have a chat template
TEXT = "The small girl sees a white bird."
QUESTION = "Where is the train station?"
PIECES = 7  # output pieces teacher-forced
SUM_TOLERANCE, HEAD_TOLERANCE = 1e-3, 1e-4  # of the logit's size (at least 1)


def _build(family: str, root):
    """(our bundle, transformers' tokenizer, transformers' model) of the family's sharpened tiny checkpoint."""
    if family == "marian":
        path = _sharpen_all(make_marian_dir(root / "marian"), eos_boost=EOS_BOOST)
        return load_bundle(path), *reference_marian(path)
    if family in ("t5", "flan"):  # as test_analysis_families: t5's seed 0 writes one piece whatever the sentence
        path = make_t5_dir(root / family, variant=family, seed=1 if family == "t5" else 0, task_prefix=family == "t5")
        _sharpen_all(path, 2.0)
        return load_bundle(path), *reference_t5(path)
    if family == "gpt2":
        path = _sharpen_all(make_gpt2_dir(root / "gpt2"))
        return load_bundle(path), *reference_gpt2(path)
    path = _sharpen_layers(make_decoder_dir(root / family, family, seed=3, chat_template=family in CHAT))
    return load_bundle(path), *reference_decoder(path)


@pytest.fixture(scope="module", params=FAMILIES)
def family(request, tmp_path_factory):
    """(family, our bundle, transformers' tokenizer, transformers' model)."""
    return request.param, *_build(request.param, tmp_path_factory.mktemp(request.param))


def _cases(family: str) -> list[tuple[str, bool]]:
    """(text, chat): a plain text, and a chat message where the family has a template."""
    return [(TEXT, False)] + ([(QUESTION, True)] if family in CHAT else [])


def _output(bundle, text: str, chat: bool) -> tuple[int, ...]:
    """The model's own first pieces: of its translation, or of its continuation (its answer)."""
    if bundle.capabilities.translates:
        return bundle.translate(text, trace=False).output_ids[:PIECES]
    return bundle.generate(text, options=DecodeOptions(max_len=PIECES), trace=False, chat=chat).output_ids


def _pieces(out) -> list[int]:
    return sorted({0, len(out) // 2, len(out) - 1})


def _their_inputs(bundle, tokenizer, text: str, out, chat: bool) -> tuple[dict[str, torch.Tensor], int]:
    """transformers' forward arguments for the teacher-forced pass over `out`, and the row predicting piece 0;
    the ids read by transformers' tokenizer (its chat template for a chat message), checked against ours."""
    src, tgt, _ = forced.inputs(bundle, text, out, chat)
    if bundle.capabilities.encoder:
        read = tokenizer((bundle.task_prefix or "") + text).input_ids
        assert src[0].tolist() == read and tgt[0, 1:].tolist() == list(out[:-1])
        return {"input_ids": src, "decoder_input_ids": tgt}, 0  # tgt[0, 0]: the start piece, checked by generate
    if chat:
        message = [{"role": "user", "content": text}]
        read = list(tokenizer.apply_chat_template(message, add_generation_prompt=True, return_dict=True)["input_ids"])
    else:
        read = tokenizer(text).input_ids
    assert src[0].tolist() == read and tgt[0].tolist() == [*read, *out[:-1]]
    return {"input_ids": tgt}, len(read) - 1


def _size(logit: float) -> float:
    return max(1.0, abs(logit))


def test_the_fixtures_are_the_families_they_stand_for(family):
    name, bundle, _, model = family
    cfg = bundle.config
    assert cfg.parallel_residual == (name == "gpt_neox") == bool(getattr(model.config, "use_parallel_residual", False))
    assert cfg.sandwich_norm == (name == "gemma3_text") and (cfg.norm == "rms_plus_one") == (name == "gemma3_text")
    assert cfg.norm_first == (name != "marian") and cfg.logits_bias == (name == "marian")
    if name == "marian":  # post-LN, and a bias on the logits that the fixture made random
        assert float(model.final_logits_bias.abs().max()) > 0.1
    assert cfg.rescale_output == (name == "t5") == bool(getattr(model.config, "scale_decoder_outputs", False))
    assert bundle.capabilities.cross_attention == (name in ("t5", "flan", "marian"))
    assert (bundle.chat is not None) == (name in CHAT)
    assert all(len(_output(bundle, text, chat)) >= 3 for text, chat in _cases(name))


def test_the_shares_add_up_to_transformers_own_logit(family):
    name, bundle, tokenizer, model = family
    worst = 0.0
    for text, chat in _cases(name):
        out = _output(bundle, text, chat)
        inputs, first = _their_inputs(bundle, tokenizer, text, out, chat)
        with torch.no_grad():
            logits = model(**inputs).logits[0]
        for piece in _pieces(out):
            shares = logit_contributions(bundle, text, out, piece, chat=chat)
            theirs = float(logits[first + piece, out[piece]])
            worst = max(worst, abs(float(shares.sum()) - theirs) / _size(theirs))
            heads = [label for label in shares.index if isinstance(label, tuple) and label[1] != "ffn"]
            assert {EMBEDDINGS, BIAS} <= set(shares.index) and len(heads) == _heads(bundle)
    assert worst <= SUM_TOLERANCE, f"{name}: the shares' sum is off by {worst:.2e} of the logit"


def _heads(bundle) -> int:
    cfg = bundle.config
    return cfg.n_heads * cfg.n_decoder_layers * (2 if bundle.capabilities.cross_attention else 1)


def test_each_heads_share_equals_the_one_computed_from_transformers(family):
    name, bundle, tokenizer, model = family
    worst = 0.0
    for text, chat in _cases(name):
        out = _output(bundle, text, chat)
        inputs, first = _their_inputs(bundle, tokenizer, text, out, chat)
        for piece in _pieces(out):
            ours = logit_contributions(bundle, text, out, piece, chat=chat)
            theirs, logit = head_shares(model, inputs, first + piece, out[piece])
            assert len(theirs) == _heads(bundle)
            worst = max(worst, max(abs(ours[label] - share) for label, share in theirs.items()) / _size(logit))
            assert max(abs(share) for share in theirs.values()) > 1e-3 * _size(logit)  # the heads say something
    assert worst <= HEAD_TOLERANCE, f"{name}: a head's share is off by {worst:.2e} of the logit"


def test_a_knocked_out_heads_share_is_zero_and_the_rest_add_up_to_the_knocked_out_logit(family):
    name, bundle, _, _ = family
    kinds = ("self", "cross") if bundle.capabilities.cross_attention else ("self",)
    text, chat = _cases(name)[-1]
    out = _output(bundle, text, chat)
    for kind in kinds:
        head = ("decoder", kind, 1, 1)
        iv = Interventions(ablate=frozenset({head}))
        logits = bundle.teacher_forced(text, out, iv, chat=chat).tensor(stages.LOGITS)[0]
        src, _, _ = forced.inputs(bundle, text, out, chat)
        for piece in _pieces(out):
            knocked = logit_shares(bundle, text, out, piece, iv, chat)
            assert knocked.shares[head] == 0.0
            logit = float(logits[forced.first_row(bundle, src) + piece, out[piece]])
            assert knocked.logit == pytest.approx(logit, abs=1e-5)
            assert abs(float(knocked.shares.sum()) - logit) <= SUM_TOLERANCE * _size(logit), (kind, piece)
            whole = logit_contributions(bundle, text, out, piece, chat=chat)
            assert whole[head] != 0.0 and not whole.drop(head).equals(knocked.shares.drop(head))


def test_the_outputs_own_trace_gives_the_shares_and_routes_of_a_pass(family):
    """Given the translation's or continuation's own trace, the shares and the routes read it instead of a pass, and
    are the same."""
    name, bundle, _, _ = family
    text, chat = _cases(name)[-1]
    if bundle.capabilities.translates:
        result = bundle.translate(text)
    else:
        result = bundle.generate(text, options=DecodeOptions(max_len=PIECES), chat=chat)
    out = result.output_ids
    src, tgt, _ = forced.inputs(bundle, text, out, chat)
    logits = forced.recorded(bundle, src, tgt, Interventions(), result.trace)[stages.LOGITS]
    assert np.shares_memory(logits.numpy(), result.trace.tensors[stages.LOGITS])  # the trace is read, not a pass
    for piece in _pieces(out):
        read = logit_shares(bundle, text, out, piece, chat=chat, trace=result.trace)
        passed = logit_shares(bundle, text, out, piece, chat=chat)
        assert np.allclose(read.shares.to_numpy(float), passed.shares.to_numpy(float), atol=1e-5)
        read_routes = routes(bundle, text, out, piece, chat=chat, trace=result.trace)
        passed_routes = routes(bundle, text, out, piece, chat=chat)
        assert replace(read_routes, edges=()) == replace(passed_routes, edges=())
        for ours, theirs in zip(read_routes.edges, passed_routes.edges, strict=True):
            assert _shape(ours) == _shape(theirs) and np.allclose(_weights(ours), _weights(theirs), atol=1e-5)


def _shape(edge) -> tuple:
    """An edge but its weights: a decoding's stepped trace equals a pass to float rounding, not bit for bit."""
    return edge.kind, edge.layer, edge.source, edge.target, tuple(head for head, _ in edge.heads)


def _weights(edge) -> list[float]:
    return [edge.weight, *(weight for _, weight in edge.heads)]
