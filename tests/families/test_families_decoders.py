"""Today's decoders (Llama as SmolLM2, Qwen2 as Qwen2.5, Qwen3, Gemma 3 as its 270M, GPT-NeoX as Pythia)
against transformers itself, on tiny random checkpoints it builds and saves (tests/hf_fixtures.py),
sharpened as the T5 and GPT-2 ones are: the prompt ids, every attention pattern per query head, the
logits, 8-piece greedy continuations, the positions switch (transformers with its rotation removed),
a knocked-out query head (its columns of the output projection zeroed), Gemma 3's sliding window, the
KV cache (transformers' past_key_values), both config forms, bfloat16 and sharded files, a vocabulary
larger than the tokenizer, and the refusals."""

from __future__ import annotations

import copy
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from hf_fixtures import (
    DECODER_FAMILIES,
    DECODER_TOKENS,
    END_OF_TURN,
    ENGLISH,
    GEMMA_WINDOW,
    make_decoder_dir,
    make_instruct,
    reference_decoder,
)
from test_families import _max_diff
from test_families_t5_gpt2 import PROMPTS, SPACED, _hf_greedy, _sharpen, one_thread  # noqa: F401
from transformers.convert_slow_tokenizer import bytes_to_unicode

from model import CheckpointError, DecodeOptions, InputError, Interventions, load_bundle

PATTERN_ATOL, LOGITS_ATOL = 2e-4, 1e-3
NEW = 8  # pieces of a greedy continuation
SHARPEN = 4.0
# how each family's tiny checkpoint is saved: SmolLM2, Qwen and Gemma ship bfloat16; Gemma 3's in shards
SAVED = {"llama": {"dtype": torch.bfloat16}, "gemma3_text": {"shard": "20KB"}, "qwen2": {"dtype": torch.bfloat16}}


def _built(family: str, tmp_path_factory):
    path = make_decoder_dir(tmp_path_factory.mktemp(family) / f"{family}-tiny", family, seed=3, **SAVED.get(family, {}))
    _sharpen(path, SHARPEN)
    tokenizer, model = reference_decoder(path)
    return family, load_bundle(path), tokenizer, model


@pytest.fixture(scope="module", params=DECODER_FAMILIES)
def decoder(request, tmp_path_factory):
    """(family, bundle, transformers tokenizer, transformers model) of a sharpened tiny decoder."""
    return _built(request.param, tmp_path_factory)


@pytest.fixture(scope="module")
def gemma(tmp_path_factory):
    """The same for Gemma 3 alone (the family with sliding windows)."""
    return _built("gemma3_text", tmp_path_factory)


def _layers(model) -> list:
    """transformers' decoder layers of any of the five."""
    return list(model.gpt_neox.layers if hasattr(model, "gpt_neox") else model.model.layers)


def _output_projection(layer) -> torch.nn.Linear:
    return layer.attention.dense if hasattr(layer, "attention") else layer.self_attn.o_proj


def _fed(tokenizer, prompt: str, index: int) -> list[int]:
    return tokenizer(prompt).input_ids + tokenizer(" " + ENGLISH[index + 10], add_special_tokens=False).input_ids


def _assert_equal(trace, reference, fed: list[int], what: str) -> None:
    """Every self-attention pattern per query head (2e-4) and every logit row (1e-3) equal transformers'."""
    with torch.no_grad():
        out = reference(input_ids=torch.tensor([fed]), output_attentions=True)
    assert len(out.attentions) == trace.n_layers("decoder")
    for layer, theirs in enumerate(out.attentions):
        diff = _max_diff(trace.pattern("decoder", "self", layer), theirs[0].numpy())
        assert diff < PATTERN_ATOL, f"{what}: layer {layer} patterns differ by {diff}"
    diff = _max_diff(trace.tensor("hook_logits")[0], out.logits[0].numpy())
    assert diff < LOGITS_ATOL, f"{what}: logits differ by {diff}"


def _teacher_forced(bundle, tokenizer, prompt: str, index: int, iv: Interventions = Interventions()):
    fed = _fed(tokenizer, prompt, index)
    prompt_ids = tokenizer(prompt).input_ids
    trace = bundle.teacher_forced(prompt, fed[len(prompt_ids) :] + [0], iv)
    assert list(trace.tgt_ids) == fed
    return trace, fed


def test_each_family_reads_as_itself(decoder):
    family, bundle, tokenizer, model = decoder
    cfg, hf = bundle.config, model.config
    caps = bundle.capabilities
    assert bundle.family == family and caps.decoder_only and not caps.translates
    assert cfg.positional == "rotary" and bundle.position_table() is None
    assert cfg.n_heads == hf.num_attention_heads and cfg.kv_heads == getattr(hf, "num_key_value_heads", cfg.n_heads)
    assert cfg.d_k == (getattr(hf, "head_dim", None) or hf.hidden_size // hf.num_attention_heads)
    assert cfg.output_tied == bool(hf.tie_word_embeddings)
    assert cfg.windows == ((GEMMA_WINDOW, GEMMA_WINDOW, 0) if family == "gemma3_text" else ())
    assert (cfg.rotary_fraction, cfg.parallel_residual) == ((0.5, True) if family == "gpt_neox" else (1.0, False))
    assert (cfg.norm == "rms_plus_one") == cfg.sandwich_norm == cfg.scale_embeddings == (family == "gemma3_text")
    assert cfg.qk_norm == (family in ("qwen3", "gemma3_text")) and cfg.qkv_bias == (family == "qwen2")
    assert all(p.dtype == torch.float32 for p in bundle.model.parameters())
    stored = "bfloat16" if SAVED.get(family, {}).get("dtype") == torch.bfloat16 else "float32"
    assert bundle.card["stored_as"] == stored
    assert bundle.card["memory_bytes"] == 4 * sum(p.numel() for p in bundle.model.parameters())
    assert (bundle.path / "model.safetensors.index.json").is_file() == (family == "gemma3_text")


def test_prompt_ids_equal_the_tokenizer_bos_where_the_file_adds_it(decoder):
    family, bundle, tokenizer, _ = decoder
    bos = DECODER_TOKENS[family][1]
    for text in PROMPTS + ENGLISH[10:20] + ["Café 🐱 <b>bold</b>", "x=1; y=[2, 3]!"]:
        theirs = tokenizer(text).input_ids
        result = bundle.generate(text, options=DecodeOptions(max_len=1), trace=False)
        assert list(result.prompt_ids) == theirs, text
        assert bos is None or theirs[0] == tokenizer.convert_tokens_to_ids(bos), text
        assert bos is not None or theirs == tokenizer(text, add_special_tokens=False).input_ids, text
        assert bundle.tokenizer.pieces(theirs) == tokenizer.convert_ids_to_tokens(theirs), text
        assert bundle.tokenizer.decode(theirs) == tokenizer.decode(theirs, skip_special_tokens=True), text


def test_a_prompt_is_read_as_typed_spaces_tabs_and_newlines_included(decoder):
    """No normalising for a real model: a double space, a tab and a newline give exactly the tokenizer's ids."""
    family, bundle, tokenizer, _ = decoder
    for text in SPACED:
        result = bundle.generate(text, options=DecodeOptions(max_len=1), trace=False)
        assert result.prompt == text and list(result.prompt_ids) == tokenizer(text).input_ids, f"{family}: {text!r}"


@pytest.mark.parametrize("index", range(len(PROMPTS)))
def test_patterns_per_query_head_and_logits_equal_transformers(decoder, index):
    family, bundle, tokenizer, model = decoder
    trace, fed = _teacher_forced(bundle, tokenizer, PROMPTS[index], index)
    _assert_equal(trace, model, fed, f"{family}: {PROMPTS[index]}")
    assert trace.pattern("decoder", "self", 0).shape == (model.config.num_attention_heads, len(fed), len(fed))
    assert trace.pattern("decoder", "self", 1).max() > 0.5  # sharpened: not near-uniform


def test_gemma_sliding_window_over_a_prompt_longer_than_it(gemma):
    family, bundle, tokenizer, model = gemma
    trace, fed = _teacher_forced(bundle, tokenizer, ENGLISH[10], 4)
    assert len(fed) > 3 * GEMMA_WINDOW
    _assert_equal(trace, model, fed, "longer than the window")
    query, key = np.indices((len(fed), len(fed)))
    outside = key <= query - GEMMA_WINDOW
    for layer, window in enumerate(bundle.config.windows):
        pattern = trace.pattern("decoder", "self", layer)
        assert (pattern[:, outside] == 0).all() == bool(window), layer
    result = bundle.generate(ENGLISH[10], options=DecodeOptions(max_len=NEW))  # cached steps see the window too
    ids = tokenizer(ENGLISH[10]).input_ids
    assert list(result.output_ids) == _hf_greedy(model, ids, NEW, tokenizer.eos_token_id, 0)


def _shown_text(tokenizer, ids: list[int]) -> str:
    """transformers' text of `ids` as a continuation shows it: less the � transformers writes for a last character
    whose bytes stop short (a random model's continuation cut in the middle of one), as Vocabulary.decode does."""
    text = tokenizer.decode(ids, skip_special_tokens=True)
    byte_of = {ch: b for b, ch in bytes_to_unicode().items()}
    tokens = tokenizer.convert_ids_to_tokens([i for i in ids if i not in tokenizer.added_tokens_decoder])
    data = bytes(byte_of[ch] for token in tokens if all(ch in byte_of for ch in token) for ch in token)
    lead = next((i for i in range(len(data) - 1, max(len(data) - 4, -1), -1) if not 0x80 <= data[i] < 0xC0), None)
    if lead is None or not text.endswith("\ufffd"):
        return text
    try:
        data[lead:].decode("utf-8")
    except UnicodeDecodeError as error:
        return text[:-1] if error.reason == "unexpected end of data" else text
    return text


def test_greedy_continuations_of_8_pieces_are_identical(decoder):
    family, bundle, tokenizer, model = decoder
    continuations = set()
    for prompt in PROMPTS + ENGLISH[20:23]:
        result = bundle.generate(prompt, options=DecodeOptions(max_len=NEW))
        ids = tokenizer(prompt).input_ids
        theirs = _hf_greedy(model, ids, NEW, tokenizer.eos_token_id, tokenizer.eos_token_id)
        assert list(result.output_ids) == theirs, f"{family}: {prompt}"
        assert result.continuation == _shown_text(tokenizer, theirs), prompt
        continuations.add(tuple(theirs))
    assert len(continuations) >= 4, "the continuations follow the prompt"


def test_positions_off_equal_transformers_without_its_rotation(decoder, monkeypatch):
    family, bundle, tokenizer, model = decoder
    trace, fed = _teacher_forced(bundle, tokenizer, PROMPTS[3], 3, Interventions(positional_encoding=False))
    modelling = sys.modules[type(_layers(model)[0]).__module__]
    monkeypatch.setattr(modelling, "apply_rotary_pos_emb", lambda q, k, cos, sin, *args, **kwargs: (q, k))
    _assert_equal(trace, model, fed, f"{family}: positions off")
    monkeypatch.undo()
    with torch.no_grad():
        turned = model(input_ids=torch.tensor([fed])).logits[0].numpy()
    assert _max_diff(trace.tensor("hook_logits")[0], turned) > 1e-3, "the switch changes something"


@pytest.mark.parametrize("layer, head", [(0, 0), (1, 3)])
def test_a_knocked_out_query_head_equals_zeroing_its_output_columns(decoder, layer, head):
    family, bundle, tokenizer, model = decoder
    iv = Interventions(ablate=frozenset({("decoder", "self", layer, head)}))
    trace, fed = _teacher_forced(bundle, tokenizer, PROMPTS[4], 4, iv)
    knocked = copy.deepcopy(model)
    d_k = bundle.config.d_k
    with torch.no_grad():
        _output_projection(_layers(knocked)[layer]).weight[:, head * d_k : (head + 1) * d_k] = 0.0
    _assert_equal(trace, knocked, fed, f"{family}: layer {layer} head {head} knocked out")
    assert not np.array_equal(
        trace.tensor("hook_logits"), bundle.teacher_forced(PROMPTS[4], fed[-3:]).tensor("hook_logits")
    )


def test_the_kv_cache_equals_past_key_values(decoder):
    """Generating keeps each layer's keys and values as (n_kv_heads, positions, d_head): transformers'
    past_key_values over the same input, layer for layer (a sliding layer there keeps only its last
    window - 1 positions: ours holds every position, the last ones equal)."""
    family, bundle, tokenizer, model = decoder
    result = bundle.generate(PROMPTS[2], options=DecodeOptions(max_len=6))
    fed = list(result.trace.tgt_ids)
    cache = result.cache
    assert cache is not None and cache.first == len(result.prompt_ids) and cache.positions == len(fed)
    with torch.no_grad():
        past = model(input_ids=torch.tensor([fed]), use_cache=True).past_key_values
    kv_heads, d_k = bundle.config.kv_heads, bundle.config.d_k
    for layer, (ours, theirs) in enumerate(zip(cache.self_attention, past.layers, strict=True)):
        keys, values = theirs.keys[0].numpy(), theirs.values[0].numpy()
        assert ours.keys.shape == (kv_heads, len(fed), d_k) == ours.values.shape
        held = keys.shape[1]
        assert held == (min(len(fed), GEMMA_WINDOW - 1) if bundle.config.window(layer) else len(fed))
        assert _max_diff(ours.keys[:, -held:], keys) < 1e-5 and _max_diff(ours.values[:, -held:], values) < 1e-5
    step = cache.at(2)
    assert step[0].keys.shape[1] == cache.first + 2
    assert np.array_equal(step[1].values, cache.self_attention[1].values[:, : cache.first + 2])


def test_both_config_forms_give_the_same_model(decoder, tmp_path):
    """transformers 5's rope_parameters and the older rope_theta / rope_local_base_freq / rotary_pct /
    rotary_emb_base keys (as hub configs from before 5.0 have them)."""
    family, bundle, tokenizer, _ = decoder
    old = Path(shutil.copytree(bundle.path, tmp_path / "old-form"))
    config = json.loads((old / "config.json").read_text())
    params = config.pop("rope_parameters")
    if family == "gemma3_text":
        config.update(
            rope_theta=params["full_attention"]["rope_theta"],
            rope_local_base_freq=params["sliding_attention"]["rope_theta"],
        )
        config.pop("layer_types")
        config["sliding_window_pattern"] = 3
    elif family == "gpt_neox":
        config.update(rotary_emb_base=params["rope_theta"], rotary_pct=params["partial_rotary_factor"])
    else:
        config.update(rope_theta=params["rope_theta"], rope_scaling=None)
    (old / "config.json").write_text(json.dumps(config))
    other = load_bundle(old)
    assert other.config == bundle.config
    fed = _fed(tokenizer, PROMPTS[0], 0)
    ids = tokenizer(PROMPTS[0]).input_ids
    assert np.array_equal(
        other.teacher_forced(PROMPTS[0], fed[len(ids) :]).tensor("hook_logits"),
        bundle.teacher_forced(PROMPTS[0], fed[len(ids) :]).tensor("hook_logits"),
    )


def _rewritten(path: Path, where: Path, **changes) -> Path:
    copy_ = Path(shutil.copytree(path, where))
    config = json.loads((copy_ / "config.json").read_text())
    config.update(changes)
    (copy_ / "config.json").write_text(json.dumps(config))
    return copy_


def test_refusals_are_one_clear_sentence(decoder, tmp_path):
    family, bundle, _, _ = decoder
    scaled = {"rope_type": "linear", "factor": 2.0}
    with pytest.raises(CheckpointError, match=r"rotary positions are scaled .*'linear'\); only the default"):
        load_bundle(_rewritten(bundle.path, tmp_path / "scaled", rope_scaling=scaled))
    if family != "gemma3_text":
        with pytest.raises(CheckpointError, match=r"rope type 'yarn'"):
            load_bundle(
                _rewritten(bundle.path, tmp_path / "yarn", rope_parameters={"rope_type": "yarn", "rope_theta": 1e4})
            )
    with pytest.raises(CheckpointError, match=r"model_type 'mistral' is not a supported family"):
        load_bundle(_rewritten(bundle.path, tmp_path / "mistral", model_type="mistral"))
    untokenized = Path(shutil.copytree(bundle.path, tmp_path / "no-tokenizer"))
    (untokenized / "tokenizer.json").unlink()
    with pytest.raises(CheckpointError, match=r"missing tokenizer\.json"):
        load_bundle(untokenized)


def test_ids_the_tokenizer_lacks_are_shown_as_such(decoder):
    """Qwen's embedding has more rows than its tokenizer has tokens: such an id is named, never a crash."""
    family, bundle, tokenizer, model = decoder
    extra = bundle.config.vocab_size - len(tokenizer)
    assert extra == (13 if family == "qwen2" else 0) and model.config.vocab_size == bundle.config.vocab_size
    if not extra:
        return
    lacking = bundle.config.vocab_size - 1
    assert bundle.tokenizer.pieces([lacking]) == [f"<id {lacking}: not in the tokenizer>"]
    assert bundle.tokenizer.decode([100, lacking]) == tokenizer.decode([100])
    trace = bundle.teacher_forced(PROMPTS[0], [lacking, lacking])
    assert trace.out_pieces[-1] == f"<id {lacking}: not in the tokenizer>"


@pytest.mark.parametrize("family", ["qwen2", "gemma3_text", "llama"])
def test_a_chat_message_is_wrapped_as_apply_chat_template_wraps_it(family, tmp_path):
    path = make_decoder_dir(tmp_path / family, family, chat_template=True)
    tokenizer, _ = reference_decoder(path)
    bundle = load_bundle(path)
    assert bundle.chat is not None
    for text in ["The cat sleeps.", "Where is the train station?", 'Say "hi" in <b>bold</b> ✓']:
        message = [{"role": "user", "content": text}]
        wrapped = tokenizer.apply_chat_template(message, add_generation_prompt=True, tokenize=False)
        ids = tokenizer.apply_chat_template(message, add_generation_prompt=True, tokenize=True, return_dict=True)
        result = bundle.generate(text, options=DecodeOptions(max_len=3), chat=True)
        assert bundle.chat_prompt(text) == wrapped == result.prompt
        assert list(result.prompt_ids) == list(ids["input_ids"]), text
        assert "\n" in result.prompt and list(result.trace.tgt_ids[: len(result.prompt_ids)]) == list(result.prompt_ids)


def _hf_continuations(model, ids: list[int], beams: int, eos: list[int] | None, new: int = 10) -> list[list[int]]:
    """generate()'s rows (every beam) after the prompt, cut after the first piece that ends them."""
    with torch.no_grad():
        rows = model.generate(
            torch.tensor([ids]),
            max_new_tokens=new,
            do_sample=False,
            num_beams=beams,
            num_return_sequences=beams,
            early_stopping=True,
            pad_token_id=0,
            **({} if eos is None else {"eos_token_id": eos}),
        ).tolist()
    cut = [row[len(ids) :] for row in rows]
    return [next((row[: t + 1] for t, i in enumerate(row) if i in (eos or ())), row) for row in cut]


@pytest.mark.parametrize("family, beams", [("gemma3_text", (1, 3)), ("qwen3", (1,))])
def test_every_eos_id_a_generation_config_lists_ends_decoding(family, beams, tmp_path):
    """An instruct checkpoint's generation config lists several eos ids (Gemma-3-it's [1, 106]: <eos> and
    <end_of_turn>): each ends greedy and beam decoding, as in transformers' generate. The tiny checkpoint is
    made to say its end of turn (hf_fixtures.make_instruct) where it would have said a piece it says."""
    path = make_decoder_dir(tmp_path / family, family, seed=3, chat_template=True)
    tokenizer, model = reference_decoder(path)
    text = "Where is the train station?"
    message = [{"role": "user", "content": text}]
    ids = list(tokenizer.apply_chat_template(message, add_generation_prompt=True, return_dict=True)["input_ids"])
    said = _hf_continuations(model, ids, max(beams), None)[0]  # the best path without any eos
    end = make_instruct(path, said[2] if family == "gemma3_text" else said[3])
    tokenizer, model = reference_decoder(path)
    bundle = load_bundle(path)
    eos = [tokenizer.eos_token_id, end]
    assert model.generation_config.eos_token_id == eos and bundle.specials.ends == tuple(eos)
    for beam in beams:
        theirs = _hf_continuations(model, ids, beam, eos)
        assert theirs[0][-1] == end and len(theirs[0]) < 10, "the second eos id is produced and ends the turn"
        assert end in _hf_continuations(model, ids, beam, eos[:1], new=len(theirs[0]) + 3)[0][:-1], "only one runs on"
        result = bundle.generate(text, options=DecodeOptions(max_len=10, beam_size=beam), chat=True)
        assert list(result.prompt_ids) == ids
        assert list(result.output_ids) == theirs[0], f"{family}, {beam} beams"
        assert result.continuation == _shown_text(tokenizer, theirs[0])
        assert result.steps[-1].chosen == END_OF_TURN[family] and not result.warnings
        for ours, row in zip(result.beams, theirs, strict=True):
            finished = row[-1] in eos
            assert ours.finished == finished and ours.pieces == bundle.tokenizer.pieces(row[:-1] if finished else row)


def test_a_template_that_fails_says_so_and_the_plain_prompt_still_works(tmp_path):
    path = make_decoder_dir(tmp_path / "qwen2", "qwen2", chat_template=True)
    (path / "chat_template.jinja").write_text("{{ raise_exception('only system messages, please') }}")
    bundle = load_bundle(path)
    with pytest.raises(InputError, match=r"chat template could not wrap the text .*only system messages"):
        bundle.generate("The cat sleeps.", chat=True)
    assert bundle.generate("The cat sleeps.", options=DecodeOptions(max_len=2)).prompt == "The cat sleeps."
    plain = load_bundle(make_decoder_dir(tmp_path / "plain", "qwen2"))
    assert plain.chat is None
    with pytest.raises(InputError, match="has no chat template"):
        plain.generate("The cat sleeps.", chat=True)


def test_gemma_generation_trace_is_the_one_pass_window_included(gemma):
    """Generating builds its trace from the cached steps (decoding.continued_trace): with sliding windows,
    every pattern equals the one teacher-forced pass over the prompt and the continuation."""
    family, bundle, _, _ = gemma
    result = bundle.generate(ENGLISH[11], options=DecodeOptions(max_len=NEW))
    one_pass = bundle.teacher_forced(ENGLISH[11], result.output_ids)
    for layer in range(bundle.config.n_decoder_layers):
        diff = _max_diff(result.trace.pattern("decoder", "self", layer), one_pass.pattern("decoder", "self", layer))
        assert diff < 1e-5, layer


def test_an_encoder_decoders_cache_equals_past_key_values(tmp_path):
    """The decoder of an encoder-decoder (T5) keeps its cache as data too: self-attention per layer over
    the decoder input, cross-attention over the source, as transformers' EncoderDecoderCache."""
    from hf_fixtures import make_t5_dir, reference_t5

    path = make_t5_dir(tmp_path / "t5", variant="t5", seed=2)
    tokenizer, model = reference_t5(path)
    bundle = load_bundle(path)
    result = bundle.translate(ENGLISH[3], options=DecodeOptions(max_len=6))
    cache = result.cache
    assert cache is not None and cache.first == 1 and len(cache.cross_attention) == model.config.num_layers
    with torch.no_grad():
        past = model(
            input_ids=torch.tensor([list(result.trace.src_ids)]),
            decoder_input_ids=torch.tensor([list(result.trace.tgt_ids)]),
            use_cache=True,
        ).past_key_values
    for ours, theirs in zip(cache.self_attention, past.self_attention_cache.layers, strict=True):
        assert (
            _max_diff(ours.keys, theirs.keys[0].numpy()) < 1e-5
            and _max_diff(ours.values, theirs.values[0].numpy()) < 1e-5
        )
    for ours, theirs in zip(cache.cross_attention, past.cross_attention_cache.layers, strict=True):
        assert (
            _max_diff(ours.keys, theirs.keys[0].numpy()) < 1e-5
            and _max_diff(ours.values, theirs.values[0].numpy()) < 1e-5
        )
    assert bundle.translate(ENGLISH[3], options=DecodeOptions(max_len=6, beam_size=2)).cache is None  # beams reorder it
