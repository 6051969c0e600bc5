"""The public API on a tiny fixture checkpoint: translate, traces, decoding and bad input."""

import numpy as np
import pytest
import torch

from model import DecodeOptions, InputError, Interventions
from model.analysis.experiments import translate_batch
from model.engine.beam import beam_search
from model.engine.decoding import greedy
from model.engine.hooks import recording
from model.engine.tokenizer import MAX_CHARS, normalize_source
from model.engine.tokens import BOS_ID, EOS_ID


def test_translate_returns_the_documented_fields(tiny_bundle):
    result = tiny_bundle.translate("The cat sleeps.", Interventions(), DecodeOptions(beam_size=1))
    trace = result.trace
    assert isinstance(result.translation, str)
    assert trace.src_pieces[-1] == "</s>" and trace.tgt_pieces[0] == "<s>"
    cfg = tiny_bundle.config
    for stack, kind, layers in (
        ("encoder", "self", cfg.n_encoder_layers),
        ("decoder", "self", cfg.n_decoder_layers),
        ("decoder", "cross", cfg.n_decoder_layers),
    ):
        for layer in range(layers):
            pattern = trace.pattern(stack, kind, layer)
            keys = trace.src_pieces if (stack, kind) != ("decoder", "self") else trace.tgt_pieces
            queries = trace.src_pieces if stack == "encoder" else trace.tgt_pieces
            assert pattern.shape == (cfg.n_heads, len(queries), len(keys))
    assert trace.stages[0] == ("src_embed.hook_ids", (1, len(trace.src_pieces)))
    assert trace.stages[-1] == ("hook_logits", (1, len(trace.tgt_pieces), cfg.vocab_size))
    assert len(result.steps) == len(trace.out_pieces) == len(trace.tgt_pieces)
    for step in result.steps:
        probabilities = [p for _, p in step.top]
        assert len(step.top) == 5 and probabilities == sorted(probabilities, reverse=True)
        assert 0.0 < step.probability <= probabilities[0] + 1e-7


def test_row_t_of_the_decoder_is_what_step_t_saw(tiny_bundle):
    result = tiny_bundle.translate("The dog eats an apple.")
    ids = list(result.trace.tgt_ids)
    assert ids[0] == BOS_ID
    assert result.trace.out_pieces[:-1] == result.trace.tgt_pieces[1:]


def test_typed_variations_give_the_same_input_and_output(tiny_bundle):
    variants = [
        "The small girl sees a white bird.",
        "the small girl sees a white bird",
        "  THE small   girl sees a white bird .  ",
        "The small girl sees a white bird!!",
    ]
    results = [tiny_bundle.translate(v) for v in variants]
    assert len({r.source for r in results}) == 1
    assert len({r.translation for r in results}) == 1
    assert len({r.trace.src_ids for r in results}) == 1


@pytest.mark.parametrize("sentence", ["", "   ", "\n\t", "...", "\x00\x01"])
def test_empty_input_raises_a_plain_value_error(tiny_bundle, sentence):
    with pytest.raises(InputError, match="Type an English sentence") as info:
        tiny_bundle.translate(sentence)
    assert isinstance(info.value, ValueError)


def test_overlong_input_is_truncated_with_a_warning(tiny_bundle):
    result = tiny_bundle.translate("the cat sleeps " * 1000)
    assert len(result.trace.src_ids) == tiny_bundle.config.max_len
    assert any(f"first {MAX_CHARS}" in w for w in result.warnings)
    assert any("pieces" in w and "cut" in w for w in result.warnings)


@pytest.mark.parametrize(
    "sentence",
    ["The 🐱 sleeps 😀", "<script>alert(1)</script>", "**bold** # title", "القط ينام", "猫は寝る", "a\x00b\u200bc"],
)
def test_odd_text_translates_without_error(tiny_bundle, sentence):
    result = tiny_bundle.translate(sentence)
    assert "⁇" not in "".join(result.trace.src_pieces)
    for layer in range(tiny_bundle.config.n_encoder_layers):
        np.testing.assert_allclose(result.trace.pattern("encoder", "self", layer).sum(-1), 1.0, atol=1e-5)


def test_control_characters_are_removed_with_a_warning():
    normalized = normalize_source("The cat\x00 sleeps\u200b.")
    assert normalized.text == "the cat sleeps"
    assert normalized.warnings and "control" in normalized.warnings[0]


def test_unknown_words_are_flagged(tiny_bundle):
    result = tiny_bundle.translate("The zebra sleeps.")
    assert result.unknown_words == ["zebra"]
    assert any("zebra" in w for w in result.warnings)
    assert {"the", "cat"} <= tiny_bundle.known_words
    punctuated = tiny_bundle.translate("The cat, (the zebra) don't; 7")
    assert punctuated.unknown_words == ["zebra", "don't", "7"]


def test_ablating_a_head_that_does_not_exist_is_refused(tiny_bundle):
    with pytest.raises(InputError, match="no decoder cross-attention layer 0 head 9"):
        tiny_bundle.translate("The cat sleeps.", Interventions(ablate=frozenset({("decoder", "cross", 0, 9)})))


def test_without_trace_the_translation_is_the_same(tiny_bundle):
    traced = tiny_bundle.translate("I drink water.")
    plain = tiny_bundle.translate("I drink water.", trace=False)
    assert plain.trace is None
    assert plain.translation == traced.translation and plain.log_prob == pytest.approx(traced.log_prob)


@pytest.mark.parametrize(
    "iv",
    [
        Interventions(),
        Interventions(causal_mask=False),
        Interventions(scale_embeddings=False, causal_mask=False),
        Interventions(scale_scores=False, mask_value="-1e9"),
        Interventions(positional_encoding=False, ablate=frozenset({("decoder", "cross", 0, 1)})),
    ],
    ids=["default", "causal-off", "babbling", "raw-scores", "no-positions-knocked-out"],
)
@pytest.mark.parametrize("beam_size", [1, 3])
def test_the_translation_alone_is_the_one_translate_gives(tiny_bundle, iv, beam_size):
    options = DecodeOptions(beam_size=beam_size)
    for sentence in ("The cat sleeps.", "My sisters will see the old house.", "Do you love the red car?"):
        assert (
            tiny_bundle.translation(sentence, iv, options)
            == tiny_bundle.translate(sentence, iv, options, trace=False).translation
        )


def _reference_greedy(model, src, iv, max_len):
    """Recompute the whole prefix at every step (no cache): the definition of greedy decoding."""
    tokens = [BOS_ID]
    with torch.inference_mode():
        for _ in range(max_len):
            logits = model(src, torch.tensor([tokens]), iv)[0, -1]
            tokens.append(int(logits.argmax()))
            if tokens[-1] == EOS_ID:
                return tokens[1:-1]
    return tokens[1:]


@pytest.mark.parametrize("causal", [True, False])
def test_cached_greedy_equals_recomputing_greedy(tiny_bundle, causal):
    model, iv = tiny_bundle.model, Interventions(causal_mask=causal)
    for sentence in ("The cat sleeps.", "I see the white bird.", "We are happy."):
        _, ids, _ = tiny_bundle.encode_source(sentence)
        src = torch.tensor([ids])
        with torch.inference_mode():
            memory, mask = model.encode(src, iv)
            [(fast, _)] = greedy(model, memory, mask, iv, 20)
        assert fast == _reference_greedy(model, src, iv, 20)


def test_beam_scores_match_a_full_recomputation(tiny_bundle):
    model, iv = tiny_bundle.model, Interventions()
    _, ids, _ = tiny_bundle.encode_source("The small girl sees a white bird.")
    src = torch.tensor([ids])
    with torch.inference_mode():
        memory, mask = model.encode(src, iv)
        hypotheses = beam_search(model, memory, mask, iv, beam_size=4, max_len=12, length_penalty=1.0)
        assert len(hypotheses) == 4
        assert [h.score for h in hypotheses] == sorted((h.score for h in hypotheses), reverse=True)
        for h in hypotheses:
            produced = list(h.ids) + ([EOS_ID] if h.finished else [])
            logits = model(src, torch.tensor([[BOS_ID] + produced[:-1]]), iv)[0]
            expected = logits.log_softmax(-1)[torch.arange(len(produced)), torch.tensor(produced)].sum()
            assert h.log_prob == pytest.approx(float(expected), abs=1e-4)


def test_beam_search_is_at_least_as_likely_as_greedy(tiny_bundle):
    options = DecodeOptions(beam_size=4, length_penalty=0.0, max_len=8)
    greedy_result = tiny_bundle.translate("The cat sleeps.", options=DecodeOptions(max_len=8))
    beam_result = tiny_bundle.translate("The cat sleeps.", options=options)
    assert beam_result.beams[0].log_prob >= greedy_result.log_prob - 1e-4
    assert len(beam_result.beams) == 4


def test_bad_decode_options_are_refused():
    with pytest.raises(InputError):
        DecodeOptions(beam_size=0)
    with pytest.raises(InputError):
        DecodeOptions(length_penalty=-1)


def test_a_batch_row_matches_the_sentence_alone_and_shows_its_padding(tiny_bundle):
    long, short = "The small girl sees a white bird.", "The cat sleeps."
    rows = translate_batch(tiny_bundle, [long, short], max_len=10)
    alone = [tiny_bundle.translate(s, options=DecodeOptions(max_len=10)) for s in (long, short)]
    for row, single in zip(rows, alone, strict=True):
        assert row.translation == single.translation
    padded = rows[1].trace
    pads = [i for i, p in enumerate(padded.src_pieces) if p == "<pad>"]
    assert pads and len(padded.src_pieces) == len(rows[0].trace.src_pieces)
    assert (padded.pattern("encoder", "self", 0)[..., pads] == 0).all()
    unmasked = translate_batch(tiny_bundle, [long, short], Interventions(padding_mask=False), max_len=10)
    assert (unmasked[1].trace.pattern("encoder", "self", 0)[..., pads] > 0).all()


def test_score_of_the_output_matches_its_log_prob_and_moves_under_ablation(tiny_bundle):
    result = tiny_bundle.translate("The cat sleeps.", options=DecodeOptions(max_len=10))
    scored = tiny_bundle.score("The cat sleeps.", result.output_ids)
    assert sum(scored) == pytest.approx(result.log_prob, abs=1e-4)
    assert [s.probability for s in result.steps] == pytest.approx([float(np.exp(x)) for x in scored], abs=1e-5)
    knocked = tiny_bundle.score(
        "The cat sleeps.", result.output_ids, Interventions(ablate=frozenset({("decoder", "cross", 1, 0)}))
    )
    assert sum(knocked) != pytest.approx(sum(scored), abs=1e-6)


SWITCHES = [
    Interventions(),
    Interventions(causal_mask=False),
    Interventions(causal_mask=False, positional_encoding=False),
]


@pytest.mark.parametrize("iv", SWITCHES, ids=["default", "causal-off", "causal-and-positions-off"])
def test_each_step_shows_the_distribution_greedy_decoding_chose_from(tiny_bundle, iv):
    """Greedy keeps each step's most likely piece, so the steps shown must say so, also with the
    causal mask off (where one pass over the finished output would let a step see the future)."""
    for sentence in ("The small girl sees a white bird.", "My sister will give the red apple to the old teacher."):
        result = tiny_bundle.translate(sentence, iv, DecodeOptions(max_len=16))
        assert [step.top[0][0] for step in result.steps] == [step.chosen for step in result.steps]
        assert result.log_prob == pytest.approx(sum(np.log(step.probability) for step in result.steps), abs=1e-4)
        for row in translate_batch(tiny_bundle, [sentence, "The cat sleeps."], iv, max_len=16):
            assert [step.top[0][0] for step in row.steps] == [step.chosen for step in row.steps]


def test_beam_log_prob_is_the_one_beam_search_ranked_by_with_the_causal_mask_off(tiny_bundle):
    result = tiny_bundle.translate(
        "The small girl sees a white bird.", Interventions(causal_mask=False), DecodeOptions(beam_size=3, max_len=16)
    )
    assert result.log_prob == pytest.approx(result.beams[0].log_prob, abs=1e-4)


@pytest.mark.parametrize("iv", SWITCHES, ids=["default", "causal-off", "causal-and-positions-off"])
def test_scoring_the_output_gives_back_its_log_prob_under_every_switch(tiny_bundle, iv):
    """The knock-out ranking subtracts score() from translate()'s log-probability: the two must agree
    when nothing is knocked out, the causal mask off included."""
    result = tiny_bundle.translate("The small girl sees a white bird.", iv, DecodeOptions(max_len=16))
    scored = tiny_bundle.score("The small girl sees a white bird.", result.output_ids, iv)
    assert sum(scored) == pytest.approx(result.log_prob, abs=1e-4)


def test_with_the_causal_mask_off_row_t_of_the_trace_is_what_step_t_computed(tiny_bundle):
    iv = Interventions(causal_mask=False)
    result = tiny_bundle.translate("The small girl sees a white bird.", iv, DecodeOptions(max_len=12))
    trace, model = result.trace, tiny_bundle.model
    src, tgt = torch.tensor([list(trace.src_ids)]), torch.tensor([list(trace.tgt_ids)])
    names = (
        "decoder.layers.1.self_attn.hook_pattern",
        "decoder.layers.1.self_attn.hook_k",
        "decoder.layers.1.cross_attn.hook_pattern",
        "decoder.hook_output",
        "hook_logits",
    )
    with torch.inference_mode():
        memory, mask = model.encode(src, iv)
        for t in range(tgt.size(1)):
            with recording() as step:
                model.decode(tgt[:, : t + 1], memory, mask, iv)
            for name in names:
                row = step.tensors[name].numpy()[..., t, :]
                np.testing.assert_allclose(trace.tensor(name)[..., t, : row.shape[-1]], row, atol=1e-6, err_msg=name)
    pattern = trace.tensor("decoder.layers.1.self_attn.hook_pattern")[0]
    assert (np.triu(pattern, k=1) == 0).all()  # keys after t did not exist yet when step t ran
    np.testing.assert_allclose(pattern.sum(-1), 1.0, atol=1e-5)
    probs = torch.tensor(trace.tensor("hook_logits")[0]).softmax(-1).numpy()
    chosen = [probs[t, tiny_bundle.tokenizer.sp.piece_to_id(step.chosen)] for t, step in enumerate(result.steps)]
    np.testing.assert_allclose(chosen, [step.probability for step in result.steps], atol=1e-5)


def test_teacher_forced_reads_the_whole_output_at_once(tiny_bundle):
    result = tiny_bundle.translate("The small girl sees a white bird.", options=DecodeOptions(max_len=12))
    masked = tiny_bundle.teacher_forced("The small girl sees a white bird.", result.output_ids)
    # greedy keeps the logits its cached steps chose from: the one pass's, up to float rounding
    np.testing.assert_allclose(masked.tensor("hook_logits"), result.trace.tensor("hook_logits"), rtol=0, atol=1e-5)
    for name, array in masked.tensors.items():
        if name != "hook_logits":
            np.testing.assert_array_equal(array, result.trace.tensor(name), err_msg=name)
    unmasked = tiny_bundle.teacher_forced(
        "The small girl sees a white bird.", result.output_ids, Interventions(causal_mask=False)
    )
    assert unmasked.tgt_pieces == result.trace.tgt_pieces
    assert np.triu(unmasked.pattern("decoder", "self", 0)[0], k=1).max() > 0.01


def test_without_a_trace_the_causal_off_steps_are_the_ones_the_search_chose_from(tiny_bundle):
    """Greedy keeps each step's logits; with the causal mask off and no trace, they are used as they
    are instead of a second pass over every prefix, and give the same steps."""
    off = Interventions(causal_mask=False)
    traced = tiny_bundle.translate("the old man reads a book in the garden", off)
    bare = tiny_bundle.translate("the old man reads a book in the garden", off, trace=False)
    assert bare.trace is None and bare.output_ids == traced.output_ids
    assert bare.log_prob == pytest.approx(traced.log_prob, abs=1e-4)
    assert len(bare.steps) == len(traced.steps)
    for ours, theirs in zip(bare.steps, traced.steps, strict=True):
        assert ours.chosen == theirs.chosen and [p for p, _ in ours.top] == [p for p, _ in theirs.top]
        np.testing.assert_allclose([q for _, q in ours.top], [q for _, q in theirs.top], atol=1e-5)
