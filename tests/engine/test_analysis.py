"""The analyses (model.analysis): attribution, logit lens, patching and head roles, each checked
against its definition, and on Marian against `transformers`."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_families import FRENCH, SENTENCES, bert, bert_dir, marian, marian_dir, marian_ref, one_thread  # noqa: F401

from model import InputError, Interventions, load_bundle
from model.analysis import METHODS, attribute, forced, head_roles, logit_lens, patch, patch_grid, patched_translation
from model.analysis.attribution import EMBEDDING
from model.analysis.patching import unpatched
from model.analysis.roles import layer_scores, role, role_scores
from model.engine import stages
from model.engine.hooks import Patch
from model.engine.tokenizer import normalize_source
from model.training.corpus import generate, tokenize_fr
from model.training.evaluate import alignment_examples
from model.training.evaluation import alignment_agreement, alignment_cases
from model.training.explanations import lens_by_class, word_classes

SENTENCE = "the old teacher gives the red book to my sister ."
OTHER = "the small girl sees a white bird ."


@pytest.fixture(scope="module")
def output(tiny_bundle):
    return tiny_bundle.translate(SENTENCE, trace=False).output_ids


def _f(bundle, sentence, output_ids, patches=None):
    src, tgt, produced = forced.inputs(bundle, sentence, output_ids)
    return forced.chosen(forced.log_probs(bundle, src, tgt, Interventions(), patches), produced)


def test_attention_and_rollout_follow_their_definitions(tiny_bundle, output):
    trace = tiny_bundle.teacher_forced(SENTENCE, output)
    cfg = tiny_bundle.config
    last = trace.pattern("decoder", "cross", cfg.n_decoder_layers - 1).mean(0)
    np.testing.assert_allclose(attribute(tiny_bundle, SENTENCE, output, "attention"), last, atol=1e-6)
    rolled = np.eye(len(trace.src_ids))
    for layer in range(cfg.n_encoder_layers):
        rolled = (0.5 * trace.pattern("encoder", "self", layer).mean(0) + 0.5 * np.eye(len(trace.src_ids))) @ rolled
    rollout = attribute(tiny_bundle, SENTENCE, output, "rollout")
    np.testing.assert_allclose(rollout, last @ rolled, atol=1e-6)
    np.testing.assert_allclose(rollout.sum(1), 1.0, atol=1e-5)  # rows of a product of stochastic matrices


def test_input_times_gradient_sums_to_the_derivative_along_the_input(tiny_bundle, output):
    src, tgt, produced = forced.inputs(tiny_bundle, SENTENCE, output)
    x = forced.recorded(tiny_bundle, src, tgt, Interventions())[EMBEDDING].clone()
    eps = 1e-3  # f(x(1 + e)) - f(x(1 - e)) / 2e = df . x = the row's sum
    up, down = (_f(tiny_bundle, SENTENCE, output, {EMBEDDING: Patch(x * (1 + s * eps))})[0] for s in (1, -1))
    along = ((up - down) / (2 * eps)).numpy()
    rows = attribute(tiny_bundle, SENTENCE, output, "gradient").sum(1)
    np.testing.assert_allclose(rows, along, atol=2e-3, rtol=2e-2)


def test_integrated_gradients_are_complete(tiny_bundle, output):
    src, tgt, _ = forced.inputs(tiny_bundle, SENTENCE, output)
    x = forced.recorded(tiny_bundle, src, tgt, Interventions())[EMBEDDING].clone()
    gap = _f(tiny_bundle, SENTENCE, output)[0] - _f(tiny_bundle, SENTENCE, output, {EMBEDDING: Patch(x * 0)})[0]
    rows = attribute(tiny_bundle, SENTENCE, output, "integrated-gradients", steps=64).sum(1)
    np.testing.assert_allclose(rows, gap.numpy(), atol=0.02 + 0.02 * float(gap.abs().max()))


@pytest.fixture(scope="module")
def default_bundle():
    return load_bundle(None)


def test_integrated_gradients_on_the_shipped_model_are_complete_within_one_percent(default_bundle):
    """The shipped model's feed-forward is ReLU, so the path has kinks and the midpoint rule converges
    as 1/steps: measured, the worst row is 1.1-2.6% off at 64 steps and under 0.8% at 128."""
    for sentence in (SENTENCE, OTHER):
        out = default_bundle.translate(sentence, trace=False).output_ids
        src, tgt, _ = forced.inputs(default_bundle, sentence, out)
        x = forced.recorded(default_bundle, src, tgt, Interventions())[EMBEDDING].clone()
        gap = _f(default_bundle, sentence, out)[0] - _f(default_bundle, sentence, out, {EMBEDDING: Patch(x * 0)})[0]
        rows = attribute(default_bundle, sentence, out, "integrated-gradients", steps=128).sum(1)
        np.testing.assert_allclose(rows, gap.double().numpy(), rtol=0.01, atol=1e-3)


@pytest.mark.parametrize("method", METHODS)
def test_rows_for_some_pieces_are_those_of_the_whole_table(tiny_bundle, output, method):
    whole = attribute(tiny_bundle, SENTENCE, output, method, steps=8)
    for pieces in ([2], [len(output) - 1, 0]):
        np.testing.assert_allclose(
            attribute(tiny_bundle, SENTENCE, output, method, steps=8, pieces=pieces), whole[pieces], atol=1e-5
        )


def test_integrated_gradients_report_progress_up_to_done(tiny_bundle, output):
    heard = []
    attribute(tiny_bundle, SENTENCE, output, "integrated-gradients", steps=40, progress=heard.append)
    assert len(heard) == -(-40 * len(output) // 32) and heard == sorted(heard) and heard[-1] == 1.0


def test_occlusion_is_the_drop_without_one_piece(tiny_bundle, output):
    occlusion = attribute(tiny_bundle, SENTENCE, output, "occlusion")
    src, tgt, _ = forced.inputs(tiny_bundle, SENTENCE, output)
    x = forced.recorded(tiny_bundle, src, tgt, Interventions())[EMBEDDING].clone()
    x[0, 2] = 0.0
    drop = _f(tiny_bundle, SENTENCE, output)[0] - _f(tiny_bundle, SENTENCE, output, {EMBEDDING: Patch(x)})[0]
    np.testing.assert_allclose(occlusion[:, 2], drop.numpy(), atol=1e-5)
    assert occlusion.shape == (len(output), len(src[0]))


def test_bad_requests_are_refused(tiny_bundle, output, bert):  # noqa: F811
    with pytest.raises(InputError, match="Unknown attribution method"):
        attribute(tiny_bundle, SENTENCE, output, "saliency")
    with pytest.raises(InputError, match="among the"):
        attribute(tiny_bundle, SENTENCE, output, "gradient", pieces=[len(output)])
    with pytest.raises(InputError, match="does not translate"):
        attribute(bert, "The cat sleeps.", [5, 6], "gradient")
    with pytest.raises(InputError, match="not the name of a hook point"):
        patch(tiny_bundle, OTHER, SENTENCE, output, "encoder.layers.0.nowhere")


def test_the_logit_lens_last_layer_is_the_models_own(tiny_bundle, output):
    lens = logit_lens(tiny_bundle, SENTENCE, output)
    assert lens.shape == (tiny_bundle.config.n_decoder_layers, len(output), tiny_bundle.config.vocab_size)
    np.testing.assert_allclose(lens[-1], unpatched(tiny_bundle, SENTENCE, output), atol=1e-5)
    np.testing.assert_allclose(np.exp(lens).sum(-1), 1.0, atol=1e-4)


def test_the_logit_lens_of_some_pieces_is_those_rows_of_the_whole(tiny_bundle, output):
    """The Why page's table at a real size: the lens of the piece on show alone, not every piece's."""
    whole = logit_lens(tiny_bundle, SENTENCE, output)
    for pieces in ([0], [len(output) - 1, 1]):
        np.testing.assert_allclose(
            logit_lens(tiny_bundle, SENTENCE, output, pieces=pieces), whole[:, pieces], atol=1e-6
        )


def test_patching_a_sentence_with_itself_changes_nothing_exactly(tiny_bundle, output):
    own = unpatched(tiny_bundle, SENTENCE, output)
    for hook in (
        stages.embedding("sum"),
        stages.attention("encoder", "self", 0, "pattern"),
        stages.MEMORY,
        stages.layer_output("decoder", 0, tiny_bundle.config.norm_first),
    ):
        assert np.array_equal(patch(tiny_bundle, SENTENCE, SENTENCE, output, hook), own), hook


def test_patching_from_a_donor_moves_the_receiver_only_where_asked(tiny_bundle, output):
    own = unpatched(tiny_bundle, SENTENCE, output)
    memory = patch(tiny_bundle, OTHER, SENTENCE, output, stages.embedding("sum"), positions=[1, 2])
    assert not np.allclose(memory, own)
    decoder = stages.layer_output("decoder", 0, tiny_bundle.config.norm_first)
    late = patch(tiny_bundle, OTHER, SENTENCE, output, decoder, positions=[len(output) - 1])
    np.testing.assert_array_equal(late[:-1], own[:-1])  # a decoder position changes no earlier one
    with pytest.raises(InputError):  # the whole memory of sentences of different lengths
        patch(tiny_bundle, OTHER, SENTENCE, output, stages.MEMORY)


def test_role_scores_follow_their_definitions():
    n = 5
    shifted = np.eye(n, k=-1)
    shifted[0, 0] = 1.0
    assert role_scores(shifted, True, False, False)["previous"] == 1.0
    assert role(role_scores(shifted, True, False, False)) == "previous"
    assert role(role_scores(np.eye(n), True, False, False)) == "same"
    sink = np.zeros((n, n))
    sink[:, -1] = 1.0
    assert role(role_scores(sink, False, False, True)) == "last"
    uniform = np.full((n, n), 1 / n)
    scores = role_scores(uniform, True, False, True)
    assert scores["broad"] == pytest.approx(1.0) and role(scores) == "broad"
    causal = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]
    assert role_scores(causal, True, True, False)["broad"] == pytest.approx(1.0)


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("window", [0, 3])
def test_a_layers_heads_scored_at_once_score_as_each_head_alone(causal, window):
    weights = np.random.default_rng(1).random((6, 97, 97)).astype(np.float32)
    if causal:
        weights = np.tril(weights)
    patterns = weights / weights.sum(axis=-1, keepdims=True)
    together = layer_scores(patterns, True, causal, True, window)
    for head, pattern in enumerate(patterns):
        alone = role_scores(pattern, True, causal, True, window)
        assert {name: float(values[head]) for name, values in together.items()} == pytest.approx(alone, nan_ok=True)
        assert [float(together[name][head]) for name in ("previous", "same", "last", "broad")] == [
            alone[name] for name in ("previous", "same", "last", "broad")
        ]  # to the last digit: the page's table and its tags come from the layer's


def test_head_roles_score_every_head(tiny_bundle, bert):  # noqa: F811
    frame = head_roles(tiny_bundle, [SENTENCE, OTHER])
    cfg = tiny_bundle.config
    assert len(frame) == cfg.n_heads * (cfg.n_encoder_layers + 2 * cfg.n_decoder_layers)
    assert frame[["first", "broad"]].apply(lambda c: c.between(0, 1)).all().all()
    assert frame.loc[frame.kind == "cross", ["previous", "same"]].isna().all().all()
    assert len(head_roles(bert, ["The cat sleeps."])) == bert.config.n_heads * bert.config.n_encoder_layers


# ---- against transformers -------------------------------------------------------------------


@pytest.mark.parametrize("index", [0, 3])
def test_marian_lens_and_attention_equal_transformers(marian, marian_ref, index):  # noqa: F811
    tokenizer, model = marian_ref
    target = tokenizer(text_target=FRENCH[index]).input_ids
    src = tokenizer(SENTENCES[index]).input_ids
    decoder_input = [model.config.decoder_start_token_id] + target[:-1]
    with torch.no_grad():
        out = model(
            input_ids=torch.tensor([src]), decoder_input_ids=torch.tensor([decoder_input]), output_attentions=True
        )
    theirs = out.logits[0].float().log_softmax(-1).numpy()
    np.testing.assert_allclose(logit_lens(marian, SENTENCES[index], target)[-1], theirs, atol=1e-4)
    np.testing.assert_allclose(
        attribute(marian, SENTENCES[index], target, "attention"), out.cross_attentions[-1][0].mean(0).numpy(), atol=1e-5
    )
    for method in METHODS:
        assert attribute(marian, SENTENCES[index], target, method).shape == (len(target), len(src))


def test_patching_an_encoder_moves_its_sentence_embedding(bert):  # noqa: F811
    sentence, other = "The cat sleeps.", "A dog runs fast."
    own = bert.encode(sentence).embedding
    hook = stages.layer_output("encoder", 0, bert.config.norm_first)
    assert np.array_equal(patch(bert, sentence, sentence, [], hook), own)
    moved = patch(bert, other, sentence, [], hook, positions=[1])
    assert moved.shape == own.shape and not np.allclose(moved, own)


def test_heads_that_follow_the_gold_alignment_are_tagged_so():
    bundle = load_bundle()  # the shipped model: trained on the grammar whose alignments these are
    rows = [(e.en, e.fr, e.alignment_str()) for e in generate(12, seed=7)]
    sources = [normalize_source(en).text for en, _, _ in rows]
    examples = alignment_examples(rows, sources)
    cases = alignment_cases(bundle.tokenizer, bundle.config.max_len, examples, tokenize_fr)
    frame = head_roles(bundle, sources, gold=cases)
    per_head, _ = alignment_agreement(bundle.model, bundle.tokenizer, examples, tokenize_fr)
    cross = frame[frame.kind == "cross"].sort_values(["layer", "head"])
    np.testing.assert_allclose(cross.alignment.to_numpy(), per_head.ravel(), atol=1e-12)  # the card's measure
    assert frame.loc[frame.kind != "cross", "alignment"].isna().all()
    assert (cross.role == "alignment").sum() >= 1 and cross.alignment.max() > 0.7


def _their_attribution(model, src, decoder_input, target, method, steps=8):
    """The same attribution computed on transformers' Marian: its scaled token embeddings fed as
    inputs_embeds (positions are added inside its encoder, as ours are after the hook)."""
    ids = torch.tensor([src])
    x = (model.get_encoder().embed_tokens(ids) * model.get_encoder().embed_scale).detach()

    def f(embeds):
        logits = model(inputs_embeds=embeds, decoder_input_ids=torch.tensor([decoder_input] * embeds.size(0))).logits
        return logits.float().log_softmax(-1)[:, torch.arange(len(target)), target]  # (B, T)

    if method == "occlusion":
        occluded = x.expand(len(src), -1, -1).clone()
        occluded[torch.arange(len(src)), torch.arange(len(src))] = 0.0
        with torch.no_grad():
            return (f(x)[0][None, :] - f(occluded)).T.numpy()
    alphas = [1.0] if method == "gradient" else [(k + 0.5) / steps for k in range(steps)]
    total = torch.zeros(len(target), *x.shape[1:])
    for alpha in alphas:
        rows = (x * alpha).expand(len(target), -1, -1).clone().requires_grad_(True)
        (grad,) = torch.autograd.grad(f(rows).diagonal().sum(), rows)
        total += grad
    return (total / len(alphas) * x[0]).sum(-1).numpy()


@pytest.mark.parametrize("method", ["gradient", "integrated-gradients", "occlusion"])
def test_marian_attributions_equal_those_computed_on_transformers(marian, marian_ref, method):  # noqa: F811
    tokenizer, model = marian_ref
    target = tokenizer(text_target=FRENCH[2]).input_ids
    src = tokenizer(SENTENCES[2]).input_ids
    decoder_input = [model.config.decoder_start_token_id] + target[:-1]
    theirs = _their_attribution(model, src, decoder_input, target, method)
    ours = attribute(marian, SENTENCES[2], target, method, steps=8)
    np.testing.assert_allclose(ours, theirs, atol=2e-4, rtol=1e-3)


def test_the_logit_lens_by_word_class_counts_every_scored_word():
    classes = word_classes()
    assert (classes["cat"], classes["sees"], classes["the"], classes["very"], classes["blue"]) == (
        "noun",
        "verb",
        "determiner",
        "adverb",
        "adjective",
    )
    bundle = load_bundle()
    rows = [(e.en, e.fr, e.alignment_str()) for e in generate(6, seed=11)]
    sources = [normalize_source(en).text for en, _, _ in rows]
    examples = alignment_examples(rows, sources)
    by_class = lens_by_class(bundle, rows, sources, examples)
    cases = alignment_cases(bundle.tokenizer, bundle.config.max_len, examples, tokenize_fr)
    assert sum(c["french_words"] for c in by_class.values()) == sum(len(case.words) for case in cases)
    assert all(len(c["top1_by_layer"]) == bundle.config.n_decoder_layers for c in by_class.values())
    assert min(c["top1_by_layer"][-1] for c in by_class.values()) >= 90.0  # the model itself, on its training language


def test_patching_the_whole_memory_from_a_same_length_donor_gives_the_donors_output(tiny_bundle, output):
    donor = "the old teacher gives the blue book to my sister ."  # one word changed: the same pieces count
    src_a, _, _ = forced.inputs(tiny_bundle, SENTENCE, output)
    src_b, _, _ = forced.inputs(tiny_bundle, donor, output)
    assert src_a.shape == src_b.shape and not torch.equal(src_a, src_b)
    patched = patch(tiny_bundle, donor, SENTENCE, output, stages.MEMORY)
    np.testing.assert_array_equal(patched, unpatched(tiny_bundle, donor, output))


def test_a_patch_grid_cell_is_the_patch_of_that_one_position(tiny_bundle, output):
    hooks = [stages.embedding("sum"), stages.layer_output("encoder", 0, tiny_bundle.config.norm_first), stages.MEMORY]
    piece = 3
    grid = patch_grid(tiny_bundle, OTHER, SENTENCE, output, piece, hooks)
    both = min(len(tiny_bundle.encode_source(s)[1]) for s in (OTHER, SENTENCE))
    assert grid.shape == (3, both)
    own = unpatched(tiny_bundle, SENTENCE, output)[piece, output[piece]]
    for row, hook in enumerate(hooks):
        for position in (0, both - 1):
            moved = patch(tiny_bundle, OTHER, SENTENCE, output, hook, [position])[piece, output[piece]]
            assert grid[row, position] == pytest.approx(moved - own, abs=1e-4)
    # itself: nothing but float rounding (the activations were recorded in a pass of one row)
    assert abs(patch_grid(tiny_bundle, SENTENCE, SENTENCE, output, piece, hooks)).max() < 1e-5
    with pytest.raises(InputError, match="source positions"):
        patch_grid(tiny_bundle, OTHER, SENTENCE, output, piece, [stages.DECODER_OUTPUT])


def test_patching_the_one_word_that_differs_carries_it_over(default_bundle):
    """A minimal pair on the shipped model: the girl's translation, with the source embedding of
    'boy' put in the place of 'girl', becomes the boy's (the grid finds that place first)."""
    girl, boy = "the small girl sees a white bird .", "the small boy sees a white bird ."
    out = default_bundle.translate(girl, trace=False).output_ids
    pieces = default_bundle.tokenizer.pieces(out)
    noun = next(i for i, p in enumerate(pieces) if "fille" in p)
    source = default_bundle.encode_source(girl)[1]
    where = next(i for i, p in enumerate(default_bundle.tokenizer.pieces(source)) if "girl" in p)
    grid = patch_grid(default_bundle, boy, girl, out, noun, [stages.embedding("sum"), stages.MEMORY])
    assert int(grid[0].argmin()) == where and grid[0, where] < -5.0
    carried = patched_translation(default_bundle, boy, girl, stages.embedding("sum"), [where])
    assert carried == list(default_bundle.translate(boy, trace=False).output_ids)


def test_block_roles_tag_the_heads_head_roles_tags(default_bundle):
    from model.analysis.roles import block_roles

    table = head_roles(default_bundle, [SENTENCE])
    trace = default_bundle.teacher_forced(SENTENCE, default_bundle.translate(SENTENCE, trace=False).output_ids)
    tagged = 0
    for stack, kind in stages.BLOCKS:
        patterns = [trace.pattern(stack, kind, layer) for layer in range(trace.n_layers(stack))]
        block = table[(table["stack"] == stack) & (table["kind"] == kind)]
        expected = {(int(r.layer), int(r.head)): r.role for r in block.itertuples() if isinstance(r.role, str)}
        assert block_roles(patterns, stack, kind) == expected
        tagged += len(expected)
    assert tagged


def test_the_shipped_card_tags_alignment_heads_for_the_model_view(default_bundle):
    from model.analysis.roles import card_roles

    cross = card_roles(default_bundle.card, "decoder", "cross")
    assert cross and set(cross.values()) == {"alignment"}
    assert card_roles({}, "decoder", "cross") == {}


def test_trace_roles_are_head_roles_on_the_sentence(default_bundle):
    from model.analysis.roles import trace_roles

    table = head_roles(default_bundle, [SENTENCE])
    ours = trace_roles(default_bundle.translate(SENTENCE).trace)
    pd_cols = ["previous", "same", "first", "last", "broad"]
    np.testing.assert_allclose(ours[pd_cols].to_numpy(dtype=float), table[pd_cols].to_numpy(dtype=float), atol=1e-5)
    assert list(ours["role"].fillna("-")) == list(table["role"].fillna("-"))
