"""Issue 51: sampling the next piece. The draws follow the distribution after temperature, top-k and top-p (a
chi-square test over 20,000 seeded draws); top-p keeps the shortest start of the ranking that reaches p; top-k = 1
and a temperature near 0 are greedy decoding; one seed gives one answer, in threads at once too; a sampled answer's
trace is the trace of its pieces, for a translation and for a decoder-only continuation."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch
from hf_fixtures import make_decoder_dir

from model import DecodeOptions, InputError, Interventions, Sampling, load_bundle
from model.engine import stages
from model.engine.sampling import SHOWN_PIECES, Sampler, _draw, cut, drawn_ranks
from model.results import Listener

SENTENCE = "The small girl sees a white bird."


def _chi_square_p(observed: np.ndarray, expected: np.ndarray) -> float:
    """The chi-square test's p-value, bins expected fewer than 5 times pooled into one."""
    small = expected < 5
    observed = np.append(observed[~small], observed[small].sum())
    expected = np.append(expected[~small], expected[small].sum())
    if expected[-1] == 0:
        observed, expected = observed[:-1], expected[:-1]
    statistic = float(((observed - expected) ** 2 / expected).sum())
    freedom = len(expected) - 1
    return float(torch.special.gammaincc(torch.tensor(freedom / 2, dtype=torch.float64), torch.tensor(statistic / 2)))


@pytest.mark.parametrize(
    "sampling",
    [Sampling(seed=11), Sampling(temperature=0.7, top_k=8, seed=12), Sampling(temperature=1.6, top_p=0.6, seed=13)],
    ids=["plain", "cold-top-k", "hot-top-p"],
)
def test_twenty_thousand_draws_follow_the_distribution_after_the_cuts(tiny_bundle, sampling):
    trace = tiny_bundle.teacher_forced(SENTENCE, tiny_bundle.translate(SENTENCE, trace=False).output_ids)
    scores = torch.from_numpy(trace.tensor(stages.LOGITS)[0, 1]).float()  # one step of a random tiny model
    expected = cut(scores, sampling).sampled().double().numpy()
    draws = 20_000
    uniforms = torch.rand(draws, generator=torch.Generator().manual_seed(sampling.seed), dtype=torch.float64)
    whole = cut(scores, sampling, whole=True)
    chosen = whole.ranking[drawn_ranks(whole, uniforms)]
    counts = np.bincount(chosen.numpy(), minlength=scores.numel())
    assert counts[expected == 0].sum() == 0, "a piece the cuts removed was drawn"
    assert _chi_square_p(counts.astype(float), expected * draws) > 0.001


def test_the_sampler_draws_with_its_own_generator_what_drawn_ranks_gives():
    scores = torch.randn(300, generator=torch.Generator().manual_seed(1))
    sampling = Sampling(temperature=1.3, top_p=0.9, seed=21)
    sampler = Sampler(sampling)
    drawn = [int(sampler(scores[None])[0]) for _ in range(200)]
    uniforms = torch.rand(200, generator=torch.Generator().manual_seed(21), dtype=torch.float64)
    whole = cut(scores, sampling, whole=True)
    assert drawn == whole.ranking[drawn_ranks(whole, uniforms)].tolist()
    assert [draw.uniform for draw in sampler.draws] == uniforms.tolist()


@pytest.mark.parametrize(
    "sampling", [Sampling(), Sampling(temperature=3.0), Sampling(top_p=0.999, temperature=4.0), Sampling(top_k=700)]
)
def test_the_start_of_the_ranking_draws_what_the_whole_ranking_draws(sampling):
    """A step sorts its PREFIX most likely pieces, not the whole vocabulary; a number drawn past them (-1) sorts the
    whole: every number draws the same piece either way, ties at the cut included."""
    scores = torch.randn(5000, generator=torch.Generator().manual_seed(2)).round(decimals=1)  # many ties
    scores[[7, 9]] = float("-inf")
    start, whole = cut(scores, sampling), cut(scores, sampling, whole=True)
    assert (start.kept, start.after_top_k, start.uncut) == (whole.kept, whole.after_top_k, whole.uncut)
    assert torch.equal(start.ranking, whole.ranking[: len(start.ranking)])
    uniforms = torch.rand(5000, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    from_start, from_whole = drawn_ranks(start, uniforms), drawn_ranks(whole, uniforms)
    found = from_start >= 0
    assert torch.equal(from_start[found], from_whole[found]) and bool((from_whole[~found] >= len(start.ranking)).all())
    sampler = Sampler(sampling)
    drawn = [int(sampler(scores[None])[0]) for _ in range(300)]
    assert (
        drawn
        == whole.ranking[from_whole[:300] if sampling.seed == 3 else drawn_ranks(whole, _uniforms(0, 300))].tolist()
    )


def _uniforms(seed: int, count: int) -> torch.Tensor:
    return torch.rand(count, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_the_chi_square_test_can_fail():
    """The test above would see a wrong distribution: draws from one compared with another."""
    expected = np.array([0.5, 0.3, 0.2]) * 20_000
    assert _chi_square_p(np.array([10_400.0, 5_800.0, 3_800.0]), expected) < 0.001


def test_top_p_keeps_the_shortest_start_of_the_ranking_that_reaches_p():
    scores = torch.log(torch.tensor([0.05, 0.5, 0.15, 0.3]))
    assert cut(scores, Sampling(top_p=0.79)).kept == 2  # 0.5 + 0.3 reaches 0.79
    assert cut(scores, Sampling(top_p=0.81)).kept == 3
    assert cut(scores, Sampling(top_p=1.0)).kept == 4
    assert cut(scores, Sampling(top_p=0.4)).kept == 1
    assert cut(scores, Sampling(top_p=0.4)).ranking.tolist() == [1, 3, 2, 0]
    tied = cut(torch.tensor([0.0, 1.0, 1.0, 1.0]), Sampling(top_p=0.5))  # ties ranked by id, as argmax takes them
    assert tied.ranking[: tied.kept].tolist() == [1, 2]
    assert cut(torch.tensor([1.0, 0.0, float("-inf")]), Sampling(top_k=3)).kept == 2  # a banned piece is never kept


def test_the_ranges_are_checked():
    for wrong in ({"temperature": 0.0}, {"temperature": 6}, {"top_k": -1}, {"top_p": 0.0}, {"seed": -3}):
        with pytest.raises(InputError):
            Sampling(**wrong)
    with pytest.raises(InputError):
        DecodeOptions(beam_size=2, sampling=Sampling())


def test_top_k_one_and_a_cold_temperature_are_greedy(tiny_bundle):
    greedy = tiny_bundle.translate(SENTENCE, trace=False)
    for sampling in (Sampling(top_k=1, temperature=5.0, seed=3), Sampling(temperature=0.05, seed=4)):
        sampled = tiny_bundle.translate(SENTENCE, options=DecodeOptions(sampling=sampling), trace=False)
        assert sampled.output_ids == greedy.output_ids
        assert [draw.rank for draw in sampled.draws] == [0] * len(sampled.output_ids)


def test_one_seed_one_answer_and_another_seed_another(tiny_bundle):
    answers = {
        seed: tiny_bundle.translate(
            SENTENCE, options=DecodeOptions(max_len=12, sampling=Sampling(temperature=2.0, seed=seed))
        )
        for seed in (1, 2)
    }
    again = tiny_bundle.translate(
        SENTENCE, options=DecodeOptions(max_len=12, sampling=Sampling(temperature=2.0, seed=1))
    )
    assert again.output_ids == answers[1].output_ids and again.draws == answers[1].draws
    assert answers[1].output_ids != answers[2].output_ids
    torch.manual_seed(0)  # torch's global generator is not the run's: moving it changes nothing
    assert tiny_bundle.translate(
        SENTENCE, options=DecodeOptions(max_len=12, sampling=Sampling(temperature=2.0, seed=1))
    ).output_ids == (answers[1].output_ids)


def test_sessions_sampling_at_once_get_their_own_answers(tiny_bundle):
    seeds = list(range(8))

    def options(seed: int) -> DecodeOptions:
        return DecodeOptions(max_len=12, sampling=Sampling(temperature=2.0, top_p=0.95, seed=seed))

    alone = {seed: tiny_bundle.translate(SENTENCE, options=options(seed), trace=False).output_ids for seed in seeds}
    together: dict[int, tuple[int, ...]] = {}
    start = threading.Barrier(len(seeds))

    def run(seed: int) -> None:
        start.wait()
        together[seed] = tiny_bundle.translate(SENTENCE, options=options(seed), trace=False).output_ids

    threads = [threading.Thread(target=run, args=(seed,)) for seed in seeds]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert together == alone
    assert len(set(alone.values())) > 1


def test_a_sampled_translations_trace_is_the_trace_of_its_pieces(tiny_bundle):
    iv = Interventions(ablate=frozenset({("decoder", "self", 0, 1)}))
    result = tiny_bundle.translate(SENTENCE, iv, DecodeOptions(sampling=Sampling(temperature=2.0, seed=5)))
    assert any(draw.rank > 0 for draw in result.draws), "the seed should leave greedy's path"
    forced = tiny_bundle.teacher_forced(SENTENCE, result.output_ids, iv)
    for name, tensor in forced.tensors.items():
        np.testing.assert_allclose(result.trace.tensor(name), tensor, atol=1e-5, err_msg=name)
    assert [draw.piece for draw in result.draws] == list(result.output_ids)
    assert all(len(draw.ids) in (SHOWN_PIECES, SHOWN_PIECES + 1) for draw in result.draws)


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return load_bundle(make_decoder_dir(tmp_path_factory.mktemp("llama") / "llama", "llama"))


def test_a_sampled_continuation_streams_and_its_trace_is_the_trace_of_its_pieces(llama):
    heard: list[int] = []
    options = DecodeOptions(max_len=12, sampling=Sampling(temperature=1.5, top_k=50, seed=9))
    result = llama.generate("the cat", options=options, listener=Listener(piece=lambda written: heard.append(1)))
    assert len(heard) == len(result.output_ids)
    forced = llama.teacher_forced("the cat", result.output_ids)
    for name, tensor in forced.tensors.items():
        if name == stages.LOGITS:
            continue  # a continuation's prompt rows are NaN but the last (no step projects them)
        np.testing.assert_allclose(result.trace.tensor(name), tensor, atol=1e-4, err_msg=name)
    again = llama.generate("the cat", options=options, trace=False)
    assert again.output_ids == result.output_ids


def test_a_draw_ranked_below_the_shown_pieces_is_shown_last_with_its_rank():
    scores = torch.arange(100, 0, -1, dtype=torch.float32)  # id i ranks i
    step = cut(scores, Sampling(temperature=5.0), whole=True)
    low = _draw(step, 0.99, 30)
    assert low.ranks == (*range(SHOWN_PIECES), 30) and low.piece == 30 and low.ids[-1] == 30
    high = _draw(step, 0.01, 3)
    assert high.ranks == tuple(range(SHOWN_PIECES)) and high.piece == 3
