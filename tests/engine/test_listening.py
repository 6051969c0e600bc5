"""A continuation heard while it is written (`Generator.generate(listener=...)`): the prompt's trace after the
first step, equal to the prompt's own teacher-forced pass; every new piece with its candidates and the text so
far, as the finished result has them; the result the same as without a listener; and a listener that raises
ends the decoding. A translation (`translate(listener=...)`) the same way: the encoder's trace, then each piece."""

from __future__ import annotations

import pytest
from hf_fixtures import make_decoder_dir
from test_decoding_trace import PROMPT, SWITCHES, assert_same_trace

from model import DecodeOptions, Interventions, load_bundle
from model.results import Listener, Trace, Written

NEW = 6


@pytest.fixture(scope="module")
def decoders(tmp_path_factory):
    root = tmp_path_factory.mktemp("heard")
    return {family: load_bundle(make_decoder_dir(root / family, family)) for family in ("llama", "gemma3_text")}


class Heard:
    def __init__(self) -> None:
        self.prompts: list[Trace] = []
        self.pieces: list[Written] = []
        self.listener = Listener(prompt=self.prompts.append, piece=self.pieces.append)


@pytest.mark.parametrize("family", ["llama", "gemma3_text"])
@pytest.mark.parametrize("switch", ["as trained", "a head knocked out", "first piece hidden"])
def test_the_prompts_trace_is_heard_first_and_is_the_prompts_own_pass(decoders, family, switch):
    bundle, iv = decoders[family], SWITCHES[switch]
    heard = Heard()
    result = bundle.generate(PROMPT, iv, DecodeOptions(max_len=NEW), listener=heard.listener)
    [prompt_trace] = heard.prompts
    one_pass = bundle.teacher_forced(PROMPT, result.output_ids[:1], iv)
    assert_same_trace(prompt_trace, one_pass, unprojected_rows=len(result.prompt_ids) - 1)
    assert len(prompt_trace.tgt_ids) == len(result.prompt_ids)


@pytest.mark.parametrize("family", ["llama", "gemma3_text"])
def test_every_piece_is_heard_as_the_result_has_it(decoders, family):
    bundle = decoders[family]
    heard = Heard()
    options = DecodeOptions(max_len=NEW)
    result = bundle.generate(PROMPT, options=options, listener=heard.listener)
    assert [w.step.position for w in heard.pieces] == list(range(len(result.steps)))
    assert all(w.limit == NEW for w in heard.pieces)
    for written, step in zip(heard.pieces, result.steps, strict=True):
        assert written.step.chosen == step.chosen
        assert written.step.probability == pytest.approx(step.probability, abs=1e-6)
        assert [piece for piece, _ in written.step.top] == [piece for piece, _ in step.top]
    assert heard.pieces[-1].text == result.continuation
    texts = [w.text for w in heard.pieces]
    assert all(later.startswith(earlier) for earlier, later in zip(texts, texts[1:], strict=False))


def test_a_listener_changes_nothing_in_the_result(decoders):
    bundle = decoders["llama"]
    options = DecodeOptions(max_len=NEW)
    plain = bundle.generate(PROMPT, options=options)
    heard = bundle.generate(PROMPT, options=options, listener=Heard().listener)
    assert heard.output_ids == plain.output_ids and heard.continuation == plain.continuation
    assert heard.trace is not None and plain.trace is not None
    assert_same_trace(heard.trace, plain.trace)


def test_without_a_trace_or_with_beams_only_the_pieces_or_nothing_is_heard(decoders):
    bundle = decoders["llama"]
    untraced = Heard()
    result = bundle.generate(PROMPT, options=DecodeOptions(max_len=NEW), trace=False, listener=untraced.listener)
    assert untraced.prompts == [] and len(untraced.pieces) == len(result.steps)
    unmasked = Heard()
    bundle.generate(PROMPT, Interventions(causal_mask=False), DecodeOptions(max_len=NEW), listener=unmasked.listener)
    assert unmasked.prompts == [] and len(unmasked.pieces) > 0
    beams = Heard()
    bundle.generate(PROMPT, options=DecodeOptions(max_len=NEW, beam_size=2), listener=beams.listener)
    assert beams.prompts == [] and beams.pieces == []


def test_a_listener_that_raises_ends_the_decoding(decoders):
    bundle = decoders["llama"]
    pieces: list[Written] = []

    def stop_at_two(written: Written) -> None:
        pieces.append(written)
        if len(pieces) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        bundle.generate(PROMPT, options=DecodeOptions(max_len=NEW), listener=Listener(piece=stop_at_two))
    assert len(pieces) == 2


@pytest.mark.parametrize("causal", [True, False])
def test_beam_search_tells_each_step_its_best_live_beam_and_changes_nothing(decoders, causal):
    bundle, iv = decoders["llama"], Interventions(causal_mask=causal)
    options = DecodeOptions(max_len=NEW, beam_size=3)
    told: list[tuple[int, int, str]] = []
    heard = bundle.generate(PROMPT, iv, options, listener=Listener(beam=lambda *step: told.append(step)))
    plain = bundle.generate(PROMPT, iv, options)
    assert heard.output_ids == plain.output_ids and heard.beams == plain.beams
    assert [step for step, _, _ in told] == list(range(len(told))) and told
    assert {limit for _, limit, _ in told} == {bundle.max_new(len(plain.prompt_ids), options)}
    if any("stopped at its limit" in warning for warning in plain.warnings):  # no beam ended: the best live wins
        assert len(told) == NEW and told[-1][2] == plain.continuation


@pytest.fixture(scope="module")
def marian(tmp_path_factory):
    from hf_fixtures import make_marian_dir

    return load_bundle(make_marian_dir(tmp_path_factory.mktemp("heard") / "opus-mt-tiny"))


SENTENCE = "The girl sees the red house near the river."


@pytest.mark.parametrize("switch", ["as trained", "a head knocked out"])
def test_a_translation_tells_the_encoders_trace_then_every_piece_and_changes_nothing(marian, switch):
    iv = SWITCHES[switch]
    heard = Heard()
    result = marian.translate(SENTENCE, iv, listener=heard.listener)
    plain = marian.translate(SENTENCE, iv)
    assert result.output_ids == plain.output_ids and result.translation == plain.translation
    assert result.trace is not None and plain.trace is not None
    assert_same_trace(result.trace, plain.trace)
    [encoded] = heard.prompts  # the encoder's own pass, told before the first piece: no decoder rows
    assert encoded.src_ids == plain.trace.src_ids and encoded.tgt_ids == ()
    told = [name for name, _ in encoded.stages]  # the whole trace's first stages, in the order they ran
    assert told == [name for name, _ in plain.trace.stages][: len(told)]
    assert any(name.startswith("encoder.") for name in told) and not any("decoder" in name for name in told)
    for name in told:
        assert (encoded.tensor(name) == plain.trace.tensor(name)).all(), name
    assert [w.step.position for w in heard.pieces] == list(range(len(plain.steps)))
    for written, step in zip(heard.pieces, plain.steps, strict=True):
        assert written.step.chosen == step.chosen
        assert written.step.probability == pytest.approx(step.probability, abs=1e-6)
    assert heard.pieces[-1].text == plain.translation


def test_a_translations_beam_search_tells_each_step(marian):
    options = DecodeOptions(beam_size=3)
    told: list[tuple[int, int, str]] = []
    heard = marian.translate(SENTENCE, options=options, listener=Listener(beam=lambda *step: told.append(step)))
    plain = marian.translate(SENTENCE, options=options)
    assert heard.output_ids == plain.output_ids and heard.beams == plain.beams
    assert told and [step for step, _, _ in told] == list(range(len(told)))
