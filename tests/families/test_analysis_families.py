"""The "Why this word?" analyses (model.analysis) on T5 (encoder-decoder with relative positions, a
task prefix and a rescaled output head) and GPT-2 (decoder-only: the prompt is the source), on tiny
random checkpoints that transformers writes (tests/hf_fixtures.py), sharpened as test_families does
so that outputs follow the input: attribution rows complete, the logit lens's last layer the model's
own logits, patching a sentence with itself changing nothing and a whole layer from another sentence
giving that one's output, and against transformers where it can compute the same thing."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hf_fixtures import make_gpt2_dir, make_t5_dir, reference_gpt2, reference_t5
from test_families import _sharpen, one_thread  # noqa: F401

from model import DecodeOptions, InputError, Interventions, load_bundle
from model.analysis import METHODS, attribute, forced, head_roles, logit_lens, patch, patch_grid, patched_translation
from model.analysis.attribution import baseline, padding_baseline
from model.analysis.patching import unpatched
from model.analysis.roles import trace_roles
from model.engine import stages
from model.engine.hooks import Patch

SENTENCE = "The small girl sees a white bird."
DONOR = "The small bird sees a white girl."  # two words swapped: as many pieces, other ids
OTHER = "My brother plays the guitar very well."
# T5 never divides its scores by sqrt(d_k): x 20 saturates every output, and from x 4 the log-probabilities jump so
# along the way from the baseline that no step count integrates them
T5_SHARPEN = 2.0
GPT2_SHARPEN = 20.0
PIECES = 6  # output pieces the tests teacher-force (the tiny T5 runs to its length limit)
FAMILIES = ("t5", "flan", "gpt2")


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("families")
    # t5: tied and rescaled head, ReLU, the task prefix (seed 1: seed 0 writes one piece whatever the sentence)
    return {
        "t5": _sharpen(make_t5_dir(root / "t5-tiny", variant="t5", seed=1), T5_SHARPEN),
        "flan": _sharpen(make_t5_dir(root / "flan-t5-tiny", variant="flan", task_prefix=False), T5_SHARPEN),
        "gpt2": _sharpen(make_gpt2_dir(root / "gpt2-tiny"), GPT2_SHARPEN),
    }


@pytest.fixture(scope="module")
def bundles(dirs):
    return {name: load_bundle(path) for name, path in dirs.items()}


def _output(bundle, sentence: str = SENTENCE) -> tuple[int, ...]:
    """The model's own first pieces: of its translation, or of its continuation of the prompt."""
    if bundle.capabilities.translates:
        return bundle.translate(sentence, trace=False).output_ids[:PIECES]
    return bundle.generate(sentence, options=DecodeOptions(max_len=PIECES), trace=False).output_ids


def _source_ids(bundle, sentence: str) -> list[int]:
    return forced.inputs(bundle, sentence, [bundle.specials.eos])[0][0].tolist()


def _f(bundle, sentence, output_ids, patches=None) -> torch.Tensor:
    src, tgt, produced = forced.inputs(bundle, sentence, output_ids)
    return forced.chosen(forced.log_probs(bundle, src, tgt, Interventions(), patches), produced)[0]


def _x0(bundle, sentence, output_ids) -> torch.Tensor:
    """(1, S, d) the baseline of integrated gradients and occlusion."""
    src, _, _ = forced.inputs(bundle, sentence, output_ids)
    return baseline(bundle, src, Interventions(), _x(bundle, sentence, output_ids))


def _x(bundle, sentence, output_ids) -> torch.Tensor:
    """(1, S, d) the source's (the prompt's) token embeddings as the model receives them."""
    src, tgt, _ = forced.inputs(bundle, sentence, output_ids)
    return forced.recorded(bundle, src, tgt, Interventions())[forced.embedding_stage(bundle)][:, : src.size(1)].clone()


def _at_source(bundle, value) -> dict[str, Patch]:
    return {forced.embedding_stage(bundle): Patch(value, range(value.size(1)))}


def _hooks(bundle) -> list[str]:
    """Hook points before, inside and after the stacks (T5's relative-position bias too)."""
    cfg = bundle.config
    if bundle.capabilities.encoder:
        return [
            stages.embedding("sum"),
            stages.position_bias("encoder"),
            stages.layer_output("encoder", 0, True),
            stages.MEMORY,
            stages.position_bias("decoder"),
            stages.layer_output("decoder", 0, True),
        ]
    return [
        stages.embedding("sum", "target"),
        stages.embedding("position", "target"),
        stages.attention("decoder", "self", 0, "pattern"),
        stages.layer_output("decoder", 0, cfg.norm_first),
        stages.DECODER_OUTPUT,
    ]


def test_the_fixtures_are_sharp_and_the_donor_lines_up(bundles):
    """Guards the fixtures: outputs follow the sentence, and the donor has as many pieces."""
    for name, bundle in bundles.items():
        assert _output(bundle) != _output(bundle, OTHER), name
        ours, theirs = _source_ids(bundle, SENTENCE), _source_ids(bundle, DONOR)
        assert len(ours) == len(theirs) and ours != theirs, name
    assert bundles["t5"].task_prefix and not bundles["flan"].task_prefix


# ---- attribution ------------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_every_method_gives_a_finite_row_per_output_piece_and_a_column_per_source_piece(bundles, family):
    bundle = bundles[family]
    out = _output(bundle)
    source = _source_ids(bundle, SENTENCE)
    if family == "t5":  # the task prefix is part of what the model reads: its pieces are columns too
        prefix = bundle.tokenizer.encode_source(bundle.task_prefix.strip())[:-1]
        assert source[: len(prefix)] == prefix
    for method in METHODS:
        rows = attribute(bundle, SENTENCE, out, method, steps=8)
        assert rows.shape == (len(out), len(source)) and np.isfinite(rows).all(), method
    attention = attribute(bundle, SENTENCE, out, "attention")
    rollout = attribute(bundle, SENTENCE, out, "rollout")
    if bundle.capabilities.encoder:  # cross-attention rows (and their rollout) are distributions over the source
        np.testing.assert_allclose(attention.sum(1), 1.0, atol=1e-5)
        np.testing.assert_allclose(rollout.sum(1), 1.0, atol=1e-5)
    else:  # self-attention rows over the prompt's columns: the rest of the weight is on the new pieces
        assert (attention >= 0).all() and (attention.sum(1) <= 1 + 1e-5).all()
        # piece 0's row is the prompt's last position: it sees the prompt only
        assert attention[0].sum() == pytest.approx(1.0, abs=1e-5)


def test_decoder_only_attention_is_the_last_layers_self_attention_and_rollout_follows_it(bundles):
    bundle = bundles["gpt2"]
    out = _output(bundle)
    trace = bundle.teacher_forced(SENTENCE, out)
    prompt = len(_source_ids(bundle, SENTENCE))
    means = [trace.pattern("decoder", "self", layer).mean(0) for layer in range(trace.n_layers("decoder"))]
    rows = slice(prompt - 1, prompt - 1 + len(out))
    np.testing.assert_allclose(attribute(bundle, SENTENCE, out, "attention"), means[-1][rows, :prompt], atol=1e-6)
    rolled = np.eye(len(trace.tgt_ids))
    for mean in means[:-1]:
        rolled = (0.5 * mean + 0.5 * np.eye(len(rolled))) @ rolled
    np.testing.assert_allclose(
        attribute(bundle, SENTENCE, out, "rollout"), (means[-1] @ rolled)[rows, :prompt], atol=1e-6
    )


@pytest.mark.parametrize("family", FAMILIES)
def test_input_times_gradient_sums_to_the_derivative_along_the_input(bundles, family):
    bundle = bundles[family]
    out = _output(bundle)
    x = _x(bundle, SENTENCE, out)
    eps = 1e-3  # (f(x(1 + e)) - f(x(1 - e))) / 2e = df . x = the row's sum
    up, down = (_f(bundle, SENTENCE, out, _at_source(bundle, x * (1 + s * eps))) for s in (1, -1))
    along = ((up - down) / (2 * eps)).numpy()
    rows = attribute(bundle, SENTENCE, out, "gradient").sum(1)
    np.testing.assert_allclose(rows, along, atol=2e-3 + 2e-2 * float(np.abs(along).max()), rtol=2e-2)


@pytest.mark.parametrize("family", FAMILIES)
def test_integrated_gradients_are_complete(bundles, family):
    """A row sums to f(x) - f(x'): the source (prompt) embeddings against the baseline's (zeros; T5's:
    padding), every other input kept."""
    bundle = bundles[family]
    out = _output(bundle)
    blank = _at_source(bundle, _x0(bundle, SENTENCE, out))
    gap = (_f(bundle, SENTENCE, out) - _f(bundle, SENTENCE, out, blank)).numpy()
    rows = attribute(bundle, SENTENCE, out, "integrated-gradients", steps=64).sum(1)
    np.testing.assert_allclose(rows, gap, atol=0.02 + 0.02 * float(np.abs(gap).max()))


def test_the_baseline_is_padding_where_a_zero_embedding_meets_a_norm_alone(bundles):
    """T5 adds nothing to its token embeddings and normalizes them first: along the way from zero, f
    jumps within the first thousandth (RMS norm sends any non-zero vector to unit size), where the
    midpoint rule never looks. GPT-2 adds its positions, unless they are switched off."""
    off = Interventions(positional_encoding=False)
    assert padding_baseline(bundles["t5"], Interventions()) and padding_baseline(bundles["flan"], Interventions())
    assert not padding_baseline(bundles["gpt2"], Interventions()) and padding_baseline(bundles["gpt2"], off)
    bundle = bundles["flan"]
    out = _output(bundle)
    x = _x(bundle, SENTENCE, out)
    tiny, zero = (_f(bundle, SENTENCE, out, _at_source(bundle, x * scale)) for scale in (1e-3, 0.0))
    cliff = tiny - zero
    assert float(cliff.abs().max()) > 1.0
    # GPT-2 without its positions: complete against a prompt of <|endoftext|> pieces
    gpt2 = bundles["gpt2"]
    out = _output(gpt2)
    src, tgt, produced = forced.inputs(gpt2, SENTENCE, out)
    pad = forced.source_embedding(gpt2, torch.full_like(src, gpt2.specials.pad), off, forced.embedding_stage(gpt2))

    def f(patches=None):
        return forced.chosen(forced.log_probs(gpt2, src, tgt, off, patches), produced)[0]

    gap = (f() - f(_at_source(gpt2, pad))).numpy()
    rows = attribute(gpt2, SENTENCE, out, "integrated-gradients", off, steps=64).sum(1)
    np.testing.assert_allclose(rows, gap, atol=0.02 + 0.02 * float(np.abs(gap).max()))


@pytest.mark.parametrize("family", FAMILIES)
def test_occlusion_is_the_drop_without_one_piece(bundles, family):
    bundle = bundles[family]
    out = _output(bundle)
    occlusion = attribute(bundle, SENTENCE, out, "occlusion")
    for iv in (Interventions(), Interventions(causal_mask=False)):  # a row alone: its pass stops there if it may
        whole = attribute(bundle, SENTENCE, out, "occlusion", iv)
        np.testing.assert_allclose(attribute(bundle, SENTENCE, out, "occlusion", iv, pieces=[3]), whole[[3]], atol=1e-4)
        gradient = attribute(bundle, SENTENCE, out, "gradient", iv)
        np.testing.assert_allclose(
            # float32 sums in another order: a gradient of 19.39 may differ in its seventh digit
            attribute(bundle, SENTENCE, out, "gradient", iv, pieces=[4, 1]),
            gradient[[4, 1]],
            atol=1e-5,
            rtol=1e-6,
        )
    x = _x(bundle, SENTENCE, out)
    x[0, 2] = _x0(bundle, SENTENCE, out)[0, 2]
    drop = _f(bundle, SENTENCE, out) - _f(bundle, SENTENCE, out, _at_source(bundle, x))
    np.testing.assert_allclose(occlusion[:, 2], drop.numpy(), atol=1e-4)


def _their_rows(family, model, src, out, method):
    """Input x gradient or occlusion computed on transformers' own model, through inputs_embeds (T5's
    encoder input, GPT-2's prompt positions; positions and relative bias are added inside). Occlusion
    puts the baseline in: zeros for GPT-2, the pad piece's embedding for T5."""
    out = list(out)
    if family == "gpt2":
        ids = torch.tensor([src + out[:-1]])
        embeds = model.get_input_embeddings()(ids).detach()
        first = len(src) - 1

        def f(prompt):  # (B, T) log-probabilities of the output pieces, prompt embeddings (B, P, d)
            rest = embeds[:, len(src) :].expand(prompt.size(0), -1, -1)
            logits = model(inputs_embeds=torch.cat([prompt, rest], dim=1)).logits[:, first:]
            return logits.float().log_softmax(-1)[:, torch.arange(len(out)), out]

        x, blank = embeds[:, : len(src)], torch.zeros(embeds.size(-1))  # positions are added to it
    else:
        decoder_input = torch.tensor([[model.config.decoder_start_token_id] + out[:-1]])
        x = model.get_encoder().embed_tokens(torch.tensor([src])).detach()
        blank = model.get_encoder().embed_tokens.weight[model.config.pad_token_id].detach()  # nothing is added to it

        def f(inputs):
            logits = model(inputs_embeds=inputs, decoder_input_ids=decoder_input.expand(inputs.size(0), -1)).logits
            return logits.float().log_softmax(-1)[:, torch.arange(len(out)), out]

    if method == "occlusion":
        occluded = x.expand(len(src), -1, -1).clone()
        occluded[torch.arange(len(src)), torch.arange(len(src))] = blank
        with torch.no_grad():
            return (f(x)[0][None, :] - f(occluded)).T.numpy()
    rows = x.expand(len(out), -1, -1).clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(f(rows).diagonal().sum(), rows)
    return (grad * x[0]).sum(-1).numpy()


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("method", ["gradient", "occlusion"])
def test_attributions_equal_those_computed_on_transformers(dirs, bundles, family, method):
    bundle = bundles[family]
    reference = reference_gpt2 if family == "gpt2" else reference_t5
    _, model = reference(dirs[family])
    out = _output(bundle)
    theirs = _their_rows(family, model, _source_ids(bundle, SENTENCE), out, method)
    np.testing.assert_allclose(attribute(bundle, SENTENCE, out, method), theirs, atol=1e-3, rtol=1e-3)


# ---- logit lens -------------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_the_logit_lens_last_layer_is_the_models_own(dirs, bundles, family):
    """Through project(): for the tied t5, the d_model^-0.5 rescale before the output projection."""
    bundle = bundles[family]
    out = _output(bundle)
    lens = logit_lens(bundle, SENTENCE, out)
    assert lens.shape == (bundle.config.n_decoder_layers, len(out), bundle.config.vocab_size)
    np.testing.assert_allclose(lens[-1], unpatched(bundle, SENTENCE, out), atol=1e-5)
    off = Interventions(causal_mask=False)  # the one-pass view: every row sees the whole output
    np.testing.assert_allclose(
        logit_lens(bundle, SENTENCE, out, off)[-1], unpatched(bundle, SENTENCE, out, off), atol=1e-5
    )
    np.testing.assert_allclose(np.exp(lens).sum(-1), 1.0, atol=1e-4)
    ours = np.array(bundle.score(SENTENCE, out))  # what decoding gave each piece
    np.testing.assert_allclose(lens[-1][np.arange(len(out)), list(out)], ours, atol=1e-4)
    _, model = (reference_gpt2 if family == "gpt2" else reference_t5)(dirs[family])
    src = _source_ids(bundle, SENTENCE)
    with torch.no_grad():
        if family == "gpt2":
            logits = model(input_ids=torch.tensor([src + list(out[:-1])])).logits[0, len(src) - 1 :]
        else:
            logits = model(
                input_ids=torch.tensor([src]),
                decoder_input_ids=torch.tensor([[model.config.decoder_start_token_id, *out[:-1]]]),
            ).logits[0]
    np.testing.assert_allclose(lens[-1], logits.float().log_softmax(-1).numpy(), atol=1e-4)


# ---- patching ---------------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_patching_a_sentence_with_itself_changes_nothing_exactly(bundles, family):
    bundle = bundles[family]
    out = _output(bundle)
    own = unpatched(bundle, SENTENCE, out)
    for hook in _hooks(bundle):
        assert np.array_equal(patch(bundle, SENTENCE, SENTENCE, out, hook), own), hook


@pytest.mark.parametrize("family", FAMILIES)
def test_patching_a_whole_layer_from_a_same_length_donor_gives_the_donors_output(bundles, family):
    bundle = bundles[family]
    out = _output(bundle)
    stack = "encoder" if bundle.capabilities.encoder else "decoder"
    theirs = unpatched(bundle, DONOR, out)
    assert not np.allclose(theirs, unpatched(bundle, SENTENCE, out))
    for layer in range(bundle.config.n_encoder_layers or bundle.config.n_decoder_layers):
        moved = patch(bundle, DONOR, SENTENCE, out, stages.layer_output(stack, layer, bundle.config.norm_first))
        np.testing.assert_allclose(moved, theirs, atol=1e-5)
    with pytest.raises(InputError):  # a whole activation of a sentence of another length does not fit
        patch(bundle, OTHER, SENTENCE, out, stages.layer_output(stack, 0, bundle.config.norm_first))


def test_a_decoder_only_patch_moves_no_earlier_position(bundles):
    bundle = bundles["gpt2"]
    out = _output(bundle)
    own = unpatched(bundle, SENTENCE, out)
    prompt = len(_source_ids(bundle, SENTENCE))
    hook = stages.layer_output("decoder", 0, bundle.config.norm_first)
    late = patch(bundle, DONOR, SENTENCE, out, hook, positions=[prompt + 1])  # the decoder row that chose piece 2
    np.testing.assert_array_equal(late[:2], own[:2])
    assert not np.allclose(late[2:], own[2:])


@pytest.mark.parametrize("family", FAMILIES)
def test_a_patch_grid_cell_is_the_patch_of_that_one_position(bundles, family):
    bundle = bundles[family]
    out = _output(bundle)
    cfg = bundle.config
    stack = "encoder" if bundle.capabilities.encoder else "decoder"
    hooks = [forced.embedding_stage(bundle, "sum"), stages.layer_output(stack, 0, cfg.norm_first)]
    piece = 2
    grid = patch_grid(bundle, OTHER, SENTENCE, out, piece, hooks)
    both = min(len(_source_ids(bundle, s)) for s in (OTHER, SENTENCE))
    assert grid.shape == (2, both) and np.abs(grid).max() > 1e-3
    own = unpatched(bundle, SENTENCE, out)[piece, out[piece]]
    for row, hook in enumerate(hooks):
        for position in (0, both - 1):
            moved = patch(bundle, OTHER, SENTENCE, out, hook, [position])[piece, out[piece]]
            assert grid[row, position] == pytest.approx(moved - own, abs=1e-4)
    assert abs(patch_grid(bundle, SENTENCE, SENTENCE, out, piece, hooks)).max() < 1e-4
    outside = stages.DECODER_OUTPUT if bundle.capabilities.encoder else stages.MEMORY
    with pytest.raises(InputError, match="positions"):
        patch_grid(bundle, OTHER, SENTENCE, out, piece, [outside])


@pytest.mark.parametrize("family", FAMILIES)
def test_a_patched_translation_or_continuation_from_itself_or_a_donor(bundles, family):
    """The source (prompt) embeddings at every position from the donor: the donor's output. (A decoder
    layer's output at the prompt's positions would not do: the new pieces' own rows of that layer read
    the receiver's prompt.)"""
    bundle = bundles[family]
    hook = forced.embedding_stage(bundle, "sum")
    every = list(range(len(_source_ids(bundle, SENTENCE))))

    def plain(sentence):
        if bundle.capabilities.translates:
            return list(bundle.translate(sentence, trace=False).output_ids)
        return list(bundle.generate(sentence, trace=False).output_ids)

    assert patched_translation(bundle, SENTENCE, SENTENCE, hook, every) == plain(SENTENCE)
    assert patched_translation(bundle, DONOR, SENTENCE, hook, every) == plain(DONOR)
    if not bundle.capabilities.encoder:
        with pytest.raises(InputError, match="prompt positions"):
            patched_translation(bundle, DONOR, SENTENCE, hook, [len(every)])
        off = Interventions(causal_mask=False)  # every step a pass over the whole prefix, patched
        assert patched_translation(bundle, DONOR, SENTENCE, hook, every, off) == list(
            bundle.generate(DONOR, off, trace=False).output_ids
        )


@pytest.mark.parametrize("family", FAMILIES)
def test_a_patched_output_is_the_greedy_choice_of_the_same_patch_teacher_forced(bundles, family):
    """Inside a stack, at the later half of the source (prompt): every piece decoding chose under the patch is
    the first choice of the teacher-forced pass under that patch (with the causal mask on they agree)."""
    bundle = bundles[family]
    stack = "encoder" if bundle.capabilities.encoder else "decoder"
    both = min(len(_source_ids(bundle, s)) for s in (OTHER, SENTENCE))
    hook, positions = stages.layer_output(stack, 0, bundle.config.norm_first), list(range(both // 2, both))
    moved = patched_translation(bundle, OTHER, SENTENCE, hook, positions)
    own = (
        bundle.translate(SENTENCE, trace=False)
        if bundle.capabilities.translates
        else bundle.generate(SENTENCE, trace=False)
    )
    assert moved != list(own.output_ids)
    forced_choice = patch(bundle, OTHER, SENTENCE, moved, hook, positions).argmax(-1)
    assert list(forced_choice) == moved


# ---- head roles -------------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_head_roles_score_every_head_the_model_has(bundles, family):
    bundle = bundles[family]
    cfg = bundle.config
    frame = head_roles(bundle, [SENTENCE, OTHER])
    blocks = cfg.n_encoder_layers + (2 if bundle.capabilities.cross_attention else 1) * cfg.n_decoder_layers
    assert len(frame) == cfg.n_heads * blocks
    assert frame[["first", "broad"]].apply(lambda c: c.between(0, 1)).all().all()
    if not bundle.capabilities.encoder:  # no source: "last" does not apply, nor does a gold alignment
        assert (
            set(zip(frame["stack"], frame["kind"], strict=True)) == {("decoder", "self")} and frame["last"].isna().all()
        )
        with pytest.raises(InputError, match="no cross-attention"):
            head_roles(bundle, [SENTENCE], gold=[None])


@pytest.mark.parametrize("family", FAMILIES)
def test_trace_roles_of_the_pages_own_result_are_head_roles_on_the_sentence(bundles, family):
    bundle = bundles[family]
    result = bundle.translate(SENTENCE) if bundle.capabilities.translates else bundle.generate(SENTENCE)
    ours, table = trace_roles(result.trace), head_roles(bundle, [SENTENCE])
    columns = ["previous", "same", "first", "last", "broad"]
    np.testing.assert_allclose(ours[columns].to_numpy(dtype=float), table[columns].to_numpy(dtype=float), atol=1e-5)
    assert list(ours["role"].fillna("-")) == list(table["role"].fillna("-"))


@pytest.mark.parametrize("family", ["t5", "gpt2"])
def test_attention_rollout_and_the_lens_read_the_outputs_own_trace_as_a_pass_would(bundles, family):
    """Given the translation's or continuation's own trace (causal mask on), attention, rollout and the
    lens read its tensors instead of a teacher-forced pass, and give the same numbers; a trace of
    another input, or under other switches, is not read."""
    from model.analysis import attribute, logit_lens

    bundle = bundles[family]
    for text in ("The cat sleeps.",):
        result = bundle.translate(text) if bundle.capabilities.encoder else bundle.generate(text)
        out = result.output_ids
        for method in ("attention", "rollout"):
            assert np.allclose(
                attribute(bundle, text, out, method, trace=result.trace),
                attribute(bundle, text, out, method),
                atol=1e-5,
            )
        assert np.allclose(logit_lens(bundle, text, out, trace=result.trace), logit_lens(bundle, text, out), atol=1e-4)
        src, tgt, _ = forced.inputs(bundle, text, out)
        read = forced.recorded(bundle, src, tgt, Interventions(), result.trace)
        assert all(np.shares_memory(read[name].numpy(), array) for name, array in result.trace.tensors.items())
        other = bundle.translate("I see the white bird.") if bundle.capabilities.encoder else bundle.generate("I see")
        assert not any(
            np.shares_memory(tensor.numpy(), other.trace.tensors[name])
            for name, tensor in forced.recorded(bundle, src, tgt, Interventions(), other.trace).items()
            if name in other.trace.tensors
        )
        assert np.allclose(
            attribute(bundle, text, out, "attention", trace=other.trace), attribute(bundle, text, out, "attention")
        )
