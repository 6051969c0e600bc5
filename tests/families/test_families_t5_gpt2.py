"""T5 (both kinds: ReLU with a tied, rescaled head; gated GELU with a head of its own) and GPT-2
against transformers itself: token ids, every attention pattern and the logits under teacher
forcing, greedy and beam search, and the switches (positions off, a knocked-out head, padding,
the causal mask). The tiny checkpoints come from tests/hf_fixtures.py, sharpened as in
test_families.py so that patterns are peaked and outputs follow the input.
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from hf_fixtures import ENGLISH, FRENCH, GPT2_BPE_VOCAB, make_gpt2_dir, make_t5_dir, reference_gpt2, reference_t5
from safetensors.torch import load_file, save_file
from test_families import ATOL, _assert_marian_trace_equals, _max_diff

from model import DecodeOptions, InputError, Interventions, load_bundle
from model.engine.positional import relative_buckets
from model.engine.stages import position_bias

SENTENCES = ENGLISH[:10]
PROMPTS = ["The cat", "I see the white", "My sisters arrived", "Where is the", "The old man reads a book in"]
NEW = 12  # pieces a GPT-2 continuation runs to in the generation tests
T5_VARIANTS = ("t5", "flan")


EMBEDDINGS = (
    "shared.weight",
    "lm_head.weight",
    "wte.weight",
    "wpe.weight",
    "embed_tokens.weight",  # Llama, Qwen, Gemma
    "embed_in.weight",  # GPT-NeoX
    "embed_out.weight",
)


def _sharpen(path: Path, scale: float = 4.0) -> Path:
    """Rewrite the weights (model.safetensors, or each shard) with every weight matrix of the layers
    scaled by `scale`, in their own dtype, so that patterns are peaked and outputs follow the input;
    the embeddings and output head are left as they are, which keeps the logits in a range where 1e-4
    is a fair bound for float32."""
    for file in sorted(path.glob("*.safetensors")):
        tensors = load_file(str(file))
        for name, tensor in tensors.items():
            if tensor.dim() == 2 and not name.endswith(EMBEDDINGS):
                tensors[name] = (tensor.float() * scale).to(tensor.dtype)
        save_file(tensors, str(file), metadata={"format": "pt"})
    return path


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    torch.set_num_threads(1)
    yield


@pytest.fixture(scope="module", params=T5_VARIANTS)
def t5(request, tmp_path_factory):
    """(variant, bundle, transformers tokenizer, transformers model) of a sharpened tiny T5."""
    variant = request.param
    path = _sharpen(
        make_t5_dir(
            tmp_path_factory.mktemp(variant) / f"{variant}-tiny", variant=variant, task_prefix=variant == "t5", seed=2
        )
    )
    tokenizer, model = reference_t5(path)
    return variant, load_bundle(path), tokenizer, model


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    """(bundle, transformers tokenizer, transformers model) of a sharpened tiny GPT-2."""
    path = _sharpen(make_gpt2_dir(tmp_path_factory.mktemp("gpt2") / "gpt2-tiny", seed=2))
    tokenizer, model = reference_gpt2(path)
    return load_bundle(path), tokenizer, model


def _t5_source(bundle, tokenizer, sentence: str) -> list[int]:
    return tokenizer(bundle.task_prefix + sentence).input_ids


def _t5_forward(model, source: list[int], decoder_input: list[int]):
    with torch.no_grad():
        return model(
            input_ids=torch.tensor([source]), decoder_input_ids=torch.tensor([decoder_input]), output_attentions=True
        )


def _hf_new(row: list[int], skip: int, eos: int) -> list[int]:
    """A generate() row as our output ids: the first `skip` ids (start piece or prompt) dropped, cut after EOS."""
    ids = row[skip:]
    return ids[: ids.index(eos) + 1] if eos in ids else ids


def _hf_greedy(model, ids: list[int], new: int, eos: int, pad: int) -> list[int]:
    """transformers' greedy continuation of the prompt `ids` (at most `new` pieces), as our output ids."""
    with torch.no_grad():
        row = model.generate(torch.tensor([ids]), max_new_tokens=new, do_sample=False, num_beams=1, pad_token_id=pad)[
            0
        ].tolist()
    return _hf_new(row, len(ids), eos)


def _assert_beams_equal(bundle, result, out, skip: int, what: str) -> None:
    """Our beams are generate()'s (rows after their first `skip` ids), and a finished one scores the same."""
    eos = bundle.specials.eos
    rows = [_hf_new(row, skip, eos) for row in out.sequences.tolist()]
    assert list(result.output_ids) == rows[0], what
    for beam, row, score in zip(result.beams, rows, out.sequences_scores.tolist(), strict=True):
        finished = row[-1] == eos
        assert beam.pieces == bundle.tokenizer.pieces(row[:-1] if finished else row), what
        if finished:
            assert beam.score == pytest.approx(score, abs=ATOL), what


# ---------------------------------------------------------------------------------------------
# T5


def test_t5_bundle_reads_the_checkpoint_as_t5(t5):
    variant, bundle, tokenizer, model = t5
    cfg = bundle.config
    assert bundle.kind == "encoder-decoder" and bundle.family == "t5"
    assert bundle.specials.bos == bundle.specials.pad == model.config.decoder_start_token_id == 0
    assert bundle.specials.eos == tokenizer.eos_token_id == 1
    assert (cfg.norm, cfg.linear_bias, cfg.scale_scores, cfg.positional) == ("rms", False, False, "relative")
    assert cfg.gated_ffn == (variant == "flan") and cfg.output_tied == (variant == "t5") == cfg.rescale_output
    assert cfg.d_k == model.config.d_kv and bundle.position_table() is None
    assert bundle.task_prefix == ("translate English to French: " if variant == "t5" else "")
    names = {name for name, _ in bundle.model.named_parameters()}
    assert ("generator.weight" in names) == (variant == "flan")
    assert {"encoder.relative_bias.weight", "decoder.relative_bias.weight"} <= names


def test_t5_ids_equal_the_tokenizer_with_and_without_tokenizer_json(t5, tmp_path):
    variant, bundle, tokenizer, _ = t5
    spiece_only = Path(shutil.copytree(bundle.path, tmp_path / "spiece-only"))
    (spiece_only / "tokenizer.json").unlink()
    other = load_bundle(spiece_only)
    for sentence in SENTENCES + ["Café, naïve façade!", "<extra_id_0> and 🐱"]:
        theirs = _t5_source(bundle, tokenizer, sentence)
        assert bundle.encode_source(sentence)[1] == theirs, sentence
        assert other.encode_source(sentence)[1] == theirs, sentence
        assert other.tokenizer.pieces(theirs) == bundle.tokenizer.pieces(theirs)
    sentinel = tokenizer.convert_tokens_to_ids("<extra_id_0>")
    assert other.tokenizer.pieces([sentinel]) == bundle.tokenizer.pieces([sentinel]) == ["<extra_id_0>"]


@pytest.mark.parametrize("index", [0, 3, 6, 9])
def test_t5_patterns_and_logits_equal_transformers(t5, index):
    variant, bundle, tokenizer, model = t5
    sentence = SENTENCES[index]
    target = tokenizer(text_target=FRENCH[index]).input_ids
    trace = bundle.teacher_forced(sentence, target)
    source = _t5_source(bundle, tokenizer, sentence)
    assert list(trace.src_ids) == source and list(trace.tgt_ids) == [0] + target[:-1]
    out = _t5_forward(model, source, [0] + target[:-1])
    _assert_marian_trace_equals(trace, out, model.config.num_layers, f"{variant}: {sentence}")
    assert trace.pattern("encoder", "self", 0).max() > 0.5  # sharpened: not a near-uniform pattern
    for stack, block in (("encoder", model.encoder.block[0]), ("decoder", model.decoder.block[0])):
        bias = trace.tensor(position_bias(stack))[0]
        queries, keys = bias.shape[1:]
        with torch.no_grad():
            theirs = block.layer[0].SelfAttention.compute_bias(queries, keys)[0].numpy()
        assert _max_diff(bias, theirs) < 1e-6, stack


def test_t5_buckets_are_transformers_buckets(t5):
    _, _, _, model = t5
    attention = model.encoder.block[0].layer[0].SelfAttention
    distance = torch.arange(-300, 301)
    for bidirectional in (True, False):
        theirs = attention._relative_position_bucket(
            distance,
            bidirectional=bidirectional,
            num_buckets=attention.relative_attention_num_buckets,
            max_distance=attention.relative_attention_max_distance,
        )
        ours = relative_buckets(
            distance, bidirectional, attention.relative_attention_num_buckets, attention.relative_attention_max_distance
        )
        assert torch.equal(ours, theirs)


def test_t5_greedy_equals_generate(t5):
    variant, bundle, tokenizer, model = t5
    cap = 24
    outputs = set()
    for sentence in SENTENCES:
        result = bundle.translate(sentence, options=DecodeOptions(max_len=cap))
        with torch.no_grad():
            row = model.generate(
                torch.tensor([_t5_source(bundle, tokenizer, sentence)]),
                num_beams=1,
                do_sample=False,
                max_length=cap + 1,
            )[0].tolist()
        theirs = _hf_new(row, 1, tokenizer.eos_token_id)
        assert list(result.output_ids) == theirs, sentence
        assert result.translation == tokenizer.decode(theirs, skip_special_tokens=True), sentence
        assert result.trace.pattern("decoder", "cross", 0).shape[1:] == (len(theirs), len(result.trace.src_ids))
        outputs.add(tuple(theirs))
    assert len(outputs) >= 5  # the outputs follow the source


@pytest.mark.parametrize("length_penalty", [1.0, 0.6])
def test_t5_beam_search_equals_generate(t5, length_penalty):
    variant, bundle, tokenizer, model = t5
    cap = 16
    for sentence in SENTENCES[:5]:
        result = bundle.translate(
            sentence, options=DecodeOptions(beam_size=4, max_len=cap, length_penalty=length_penalty)
        )
        with torch.no_grad():
            out = model.generate(
                torch.tensor([_t5_source(bundle, tokenizer, sentence)]),
                num_beams=4,
                num_return_sequences=4,
                early_stopping=True,
                length_penalty=length_penalty,
                do_sample=False,
                max_length=cap + 1,
                output_scores=True,
                return_dict_in_generate=True,
            )
        _assert_beams_equal(bundle, result, out, 1, sentence)


def test_t5_switches_equal_transformers_with_the_same_change(t5):
    """Positions off is T5 without its relative bias; a knocked-out head is T5 with that head's
    columns of the output projection zeroed; padding in a batch changes nothing with the mask."""
    variant, bundle, tokenizer, model = t5
    sentence, target = SENTENCES[4], tokenizer(text_target=FRENCH[4]).input_ids
    source, decoder_input = _t5_source(bundle, tokenizer, sentence), [0] + target[:-1]

    flat = copy.deepcopy(model)
    with torch.no_grad():
        for stack in (flat.encoder, flat.decoder):
            stack.block[0].layer[0].SelfAttention.relative_attention_bias.weight.zero_()
    trace = bundle.teacher_forced(sentence, target, Interventions(positional_encoding=False))
    assert position_bias("encoder") not in trace.tensors
    _assert_marian_trace_equals(
        trace, _t5_forward(flat, source, decoder_input), model.config.num_layers, "positions off"
    )

    d_k = model.config.d_kv
    for stack, kind, layer, head in (("encoder", "self", 1, 0), ("decoder", "self", 0, 1), ("decoder", "cross", 1, 1)):
        knocked = copy.deepcopy(model)
        block = (knocked.encoder if stack == "encoder" else knocked.decoder).block[layer]
        attention = block.layer[1].EncDecAttention if kind == "cross" else block.layer[0].SelfAttention
        with torch.no_grad():
            attention.o.weight[:, head * d_k : (head + 1) * d_k] = 0.0
        trace = bundle.teacher_forced(sentence, target, Interventions(ablate=frozenset({(stack, kind, layer, head)})))
        _assert_marian_trace_equals(
            trace,
            _t5_forward(knocked, source, decoder_input),
            model.config.num_layers,
            f"{stack} {kind} {layer}.{head} knocked out",
        )

    scaled = bundle.teacher_forced(sentence, target, Interventions(scale_scores=False))
    assert np.array_equal(scaled.tensor("hook_logits"), bundle.teacher_forced(sentence, target).tensor("hook_logits"))

    short, long = (bundle.encode_source(s)[1] for s in (SENTENCES[0], SENTENCES[7]))
    alone = bundle.teacher_forced_rows([short], [target], Interventions())[0]
    padded, second = bundle.teacher_forced_rows([short, long], [target, target], Interventions())
    bias = second.tensor(position_bias("encoder"))  # computed once for the batch: every row's
    assert bias.shape[:2] == (1, model.config.num_heads) and bias.shape[2] == len(long)
    n = len(short)
    assert _max_diff(padded.pattern("encoder", "self", 1)[:, :n, :n], alone.pattern("encoder", "self", 1)) < ATOL
    assert _max_diff(padded.tensor("hook_logits"), alone.tensor("hook_logits")) < ATOL


def test_t5_translates_through_its_prefix_or_none(t5):
    variant, bundle, tokenizer, _ = t5
    trace = bundle.translate("The cat sleeps.").trace
    if variant == "t5":
        assert "".join(trace.src_pieces).replace("▁", " ").strip().startswith("translate English to French:")
    else:
        assert trace.src_pieces[0] == "▁The"
    with pytest.raises(InputError):
        bundle.translate("   ")


# ---------------------------------------------------------------------------------------------
# GPT-2


def test_gpt2_bundle_is_a_decoder_that_does_not_translate(gpt2):
    bundle, tokenizer, model = gpt2
    caps = bundle.capabilities
    assert bundle.kind == "decoder" and bundle.family == "gpt2"
    assert caps.decoder and not caps.encoder and not caps.cross_attention and not caps.translates
    assert bundle.specials.eos == tokenizer.eos_token_id == model.config.eos_token_id
    assert bundle.position_table().shape == tuple(model.transformer.wpe.weight.shape)
    with pytest.raises(InputError, match="decoder-only"):
        bundle.translate("The cat sleeps.")


def test_gpt2_ids_equal_the_tokenizer_with_and_without_tokenizer_json(gpt2, tmp_path):
    bundle, tokenizer, _ = gpt2
    merges_only = Path(shutil.copytree(bundle.path, tmp_path / "merges-only"))
    (merges_only / "tokenizer.json").unlink()
    other = load_bundle(merges_only)
    for text in PROMPTS + ENGLISH[10:20] + ["Café 🐱 <b>bold</b>", "a<|endoftext|>b"]:
        theirs = tokenizer(text).input_ids
        assert bundle.generate(text, options=DecodeOptions(max_len=1), trace=False).prompt_ids == tuple(theirs), text
        assert other.tokenizer.encode_source(text) == theirs, text
        assert bundle.tokenizer.decode(theirs) == tokenizer.decode(theirs, skip_special_tokens=True), text


SPACED = ["The  cat\tsleeps.\nThe dog   runs ", "  Two leading,\r\n\ttrailing\t", "ﬁne Ｆｕｌｌ width"]


def test_gpt2_reads_the_prompt_as_typed_spaces_tabs_and_newlines_included(gpt2, tmp_path):
    """A real model's prompt is not normalised (only this project's models are): a double space, a tab, a
    newline, leading and trailing whitespace and compatibility characters give exactly the tokenizer's ids."""
    bundle, tokenizer, _ = gpt2
    merges_only = Path(shutil.copytree(bundle.path, tmp_path / "merges-only"))
    (merges_only / "tokenizer.json").unlink()
    for text in SPACED:
        result = bundle.generate(text, options=DecodeOptions(max_len=1), trace=False)
        assert result.prompt == text and list(result.prompt_ids) == tokenizer(text).input_ids, repr(text)
        assert load_bundle(merges_only).tokenizer.encode_source(text) == tokenizer(text).input_ids, repr(text)
    warned = bundle.generate("The\x00 cat\x07 sleeps", options=DecodeOptions(max_len=1), trace=False)
    assert warned.prompt == "The cat sleeps" and "Removed 2 invisible or control characters." in warned.warnings
    for empty in ("", " \t\n", "\x00"):
        with pytest.raises(InputError, match="Type some text, for example"):
            bundle.generate(empty, options=DecodeOptions(max_len=1), trace=False)
    long = bundle.generate("ab " * 4000, options=DecodeOptions(max_len=1), trace=False)
    assert any("cut to its first 2000 of 12000 characters" in w for w in long.warnings)


def test_gpt2_ids_beyond_its_tokenizer_are_shown_as_such(tmp_path):
    """A GPT-2 whose embedding has more rows than its tokenizer has tokens (a fine-tune padded to 50,304) names
    such an id as the other families do, never as <|endoftext|>."""
    path = make_gpt2_dir(tmp_path / "gpt2-padded", vocab_size=GPT2_BPE_VOCAB + 20, seed=2)
    tokenizer, _ = reference_gpt2(path)
    bundle = load_bundle(path)
    lacking = bundle.config.vocab_size - 1
    assert lacking >= len(tokenizer) and tokenizer.convert_ids_to_tokens(lacking) is None
    assert bundle.tokenizer.pieces([100, lacking]) == [
        tokenizer.convert_ids_to_tokens(100),
        f"<id {lacking}: not in the tokenizer>",
    ]
    assert bundle.tokenizer.decode([100, lacking]) == tokenizer.decode([100])
    trace = bundle.teacher_forced(PROMPTS[0], [lacking, lacking])
    assert trace.out_pieces[-1] == f"<id {lacking}: not in the tokenizer>"
    assert bundle.tokenizer.pieces([GPT2_BPE_VOCAB - 1]) == ["<|endoftext|>"]  # the real one keeps its name


@pytest.mark.parametrize("index", range(len(PROMPTS)))
def test_gpt2_patterns_and_logits_equal_transformers(gpt2, index):
    bundle, tokenizer, model = gpt2
    prompt = PROMPTS[index]
    continuation = tokenizer(" " + ENGLISH[index + 10]).input_ids
    trace = bundle.teacher_forced(prompt, continuation)
    fed = tokenizer(prompt).input_ids + continuation[:-1]
    assert list(trace.tgt_ids) == fed and not trace.src_ids
    with torch.no_grad():
        out = model(input_ids=torch.tensor([fed]), output_attentions=True)
    for layer in range(model.config.n_layer):
        diff = _max_diff(trace.pattern("decoder", "self", layer), out.attentions[layer][0].numpy())
        assert diff < ATOL, f"{prompt}: layer {layer} differs by {diff}"
    assert _max_diff(trace.tensor("hook_logits")[0], out.logits[0].numpy()) < ATOL
    assert not any(name.startswith(("src_embed", "encoder")) or "cross" in name for name in trace.tensors)


def test_gpt2_greedy_equals_generate(gpt2):
    bundle, tokenizer, model = gpt2
    continuations = set()
    for prompt in PROMPTS + ENGLISH[20:25]:
        result = bundle.generate(prompt, options=DecodeOptions(max_len=NEW))
        ids = tokenizer(prompt).input_ids
        theirs = _hf_greedy(model, ids, NEW, tokenizer.eos_token_id, tokenizer.eos_token_id)
        assert list(result.output_ids) == theirs, prompt
        assert result.continuation == tokenizer.decode(theirs, skip_special_tokens=True), prompt
        fed = ids + theirs[:-1]
        assert list(result.trace.tgt_ids) == fed and len(result.steps) == len(theirs)
        for layer in range(model.config.n_layer):
            assert result.trace.pattern("decoder", "self", layer).shape == (model.config.n_head, len(fed), len(fed))
        assert [step.chosen for step in result.steps] == tokenizer.convert_ids_to_tokens(theirs)
        continuations.add(tuple(theirs))
    assert len(continuations) >= 5


@pytest.mark.parametrize("length_penalty", [1.0, 0.6])
def test_gpt2_beam_search_equals_generate(gpt2, length_penalty):
    bundle, tokenizer, model = gpt2
    for prompt in PROMPTS:
        result = bundle.generate(prompt, options=DecodeOptions(beam_size=4, max_len=8, length_penalty=length_penalty))
        ids = tokenizer(prompt).input_ids
        with torch.no_grad():
            out = model.generate(
                torch.tensor([ids]),
                num_beams=4,
                num_return_sequences=4,
                early_stopping=True,
                length_penalty=length_penalty,
                do_sample=False,
                max_new_tokens=8,
                output_scores=True,
                return_dict_in_generate=True,
                pad_token_id=tokenizer.eos_token_id,
            )
        _assert_beams_equal(bundle, result, out, len(ids), prompt)


def test_gpt2_switches_equal_transformers_with_the_same_change(gpt2):
    bundle, tokenizer, model = gpt2
    prompt, continuation = PROMPTS[4], tokenizer(" " + ENGLISH[14]).input_ids
    fed = torch.tensor([tokenizer(prompt).input_ids + continuation[:-1]])

    def assert_equals(trace, reference, what):
        with torch.no_grad():
            out = reference(input_ids=fed, output_attentions=True)
        for layer in range(model.config.n_layer):
            assert _max_diff(trace.pattern("decoder", "self", layer), out.attentions[layer][0].numpy()) < ATOL, what
        assert _max_diff(trace.tensor("hook_logits")[0], out.logits[0].numpy()) < ATOL, what

    flat = copy.deepcopy(model)
    with torch.no_grad():
        flat.transformer.wpe.weight.zero_()
    assert_equals(
        bundle.teacher_forced(prompt, continuation, Interventions(positional_encoding=False)), flat, "positions off"
    )
    d_k = model.config.n_embd // model.config.n_head
    knocked = copy.deepcopy(model)
    with torch.no_grad():
        knocked.transformer.h[1].attn.c_proj.weight[d_k : 2 * d_k] = 0.0  # Conv1D (in, out): head 1's rows
    assert_equals(
        bundle.teacher_forced(prompt, continuation, Interventions(ablate=frozenset({("decoder", "self", 1, 1)}))),
        knocked,
        "head 1 of layer 1 knocked out",
    )

    leaking = bundle.teacher_forced(prompt, continuation, Interventions(causal_mask=False)).pattern(
        "decoder", "self", 0
    )
    assert leaking[:, 0, 1:].sum() > 0.1  # the first position reads pieces after it
    masked = bundle.teacher_forced(prompt, continuation).pattern("decoder", "self", 0)
    assert not np.triu(masked, k=1).any()


def test_gpt2_generation_with_the_causal_mask_off_shows_each_step_as_it_was(gpt2):
    """Without the mask, the prompt's rows come from the first step (which read the whole prompt),
    and each new row from its own step: no row reads a piece that did not exist yet."""
    bundle, tokenizer, _ = gpt2
    prompt = PROMPTS[1]
    result = bundle.generate(prompt, Interventions(causal_mask=False), DecodeOptions(max_len=6))
    unmasked = bundle.generate(prompt, Interventions(causal_mask=False), DecodeOptions(max_len=6), trace=False)
    assert result.output_ids == unmasked.output_ids
    n = len(result.prompt_ids)
    pattern = result.trace.pattern("decoder", "self", 0)
    assert pattern[:, :n, :n].min() > 0 and not pattern[:, :n, n:].any()
    for row in range(n, pattern.shape[1]):
        assert not pattern[:, row, row + 1 :].any() and pattern[:, row, : row + 1].sum(-1) == pytest.approx(1.0)
    assert [round(s.probability, 5) for s in result.steps] == [round(s.probability, 5) for s in unmasked.steps]


def test_gpt2_refuses_what_a_prompt_cannot_be(gpt2):
    bundle, _, _ = gpt2
    for text in ("", "   \n"):
        with pytest.raises(InputError):
            bundle.generate(text)
    long = bundle.generate("word " * 5000, options=DecodeOptions(max_len=4), trace=False)
    assert len(long.prompt_ids) + 4 <= bundle.config.max_len and any("cut" in w for w in long.warnings)


def test_gpt2_reads_an_endoftext_inside_its_prompt(gpt2):
    """GPT-2's <|endoftext|> is also the id it pads with: inside a prompt it is read, not hidden."""
    bundle, tokenizer, model = gpt2
    text = "The cat<|endoftext|>The dog"
    result = bundle.generate(text, options=DecodeOptions(max_len=4))
    ids = tokenizer(text).input_ids
    assert result.prompt_ids == tuple(ids) and tokenizer.eos_token_id in ids[:-1]
    fed = ids + list(result.output_ids[:-1])
    with torch.no_grad():
        out = model(input_ids=torch.tensor([fed]), output_attentions=True)
    assert _max_diff(result.trace.pattern("decoder", "self", 1), out.attentions[1][0].numpy()) < ATOL


@pytest.mark.parametrize("scale_scores", [True, False])
def test_gpt2_generation_trace_is_the_one_pass_over_prompt_and_continuation(gpt2, scale_scores):
    """Generating greedily builds its trace from its own first step and cache, plus a pass over the
    new pieces alone: every recorded tensor is the one pass over the prompt and the continuation
    (the logits at the prompt's rows but its last, which generating never projects, are NaN)."""
    bundle, _, _ = gpt2
    iv = Interventions(scale_scores=scale_scores)
    for prompt in PROMPTS[:3]:
        result = bundle.generate(prompt, iv, DecodeOptions(max_len=7))
        one_pass = bundle.teacher_forced(prompt, result.output_ids, iv)
        assert list(result.trace.tensors) == list(one_pass.tensors)
        first = len(result.prompt_ids) - 1
        for name, theirs in one_pass.tensors.items():
            ours = result.trace.tensors[name]
            if name == "hook_logits":
                assert np.isnan(ours[:, :first]).all()
                ours, theirs = ours[:, first:], theirs[:, first:]
            assert ours.shape == theirs.shape, name
            assert np.allclose(ours, theirs, atol=1e-5, equal_nan=True), (name, np.nanmax(np.abs(ours - theirs)))


def test_gpt2_opens_as_transformers_saves_it_too(tmp_path):
    """The hub's gpt2 files name weights `h.0...` with causal-mask buffers beside them; a folder saved by
    transformers 5 names them `transformer.h.0...` without the buffers: both are the same model."""
    hub = load_bundle(make_gpt2_dir(tmp_path / "hub", seed=5))
    saved = load_bundle(make_gpt2_dir(tmp_path / "saved", seed=5, hub_layout=False))
    ids = hub.tokenizer.encode_source("The old man reads a book.")
    assert np.array_equal(
        hub.teacher_forced("The old", ids[2:]).tensor("hook_logits"),
        saved.teacher_forced("The old", ids[2:]).tensor("hook_logits"),
    )
