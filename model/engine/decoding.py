"""Greedy decoding that honours the interventions at every step, and the steps beam search (beam.py)
shares with it.

With the causal mask on, each step feeds only its new piece and reuses the keys and values of
earlier steps (a KV cache, written in place), and greedy decoding's trace is put together from the
steps' own recorded passes (`stepped_trace`). With it off, earlier positions may look at later
ones, so their states change as the output grows: every step then recomputes the whole prefix,
which is what the switched-off mask really means.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

import torch

from . import stages
from .attention import KVCache
from .hooks import Recorder, not_recording, recording, sequence_axis
from .interventions import Interventions
from .tokens import PROJECT_SPECIALS, SpecialIds
from .transformer import Transformer, layers_of


def _step_logits(
    model: Transformer,
    tokens: torch.Tensor,
    memory: torch.Tensor | None,
    src_mask: torch.Tensor | None,
    iv: Interventions,
    cache: KVCache | None,
) -> torch.Tensor:
    """Logits (B, vocab) for the next piece after `tokens` (B, t)."""
    if cache is not None:  # feed what the cache does not hold yet: the last piece, or at first a whole prompt
        start = cache.length
        states = model.decode(tokens[:, start:], memory, src_mask, iv, cache, start=start, project=False)
        cache.length = tokens.size(1)
        return model.project(states[:, -1])  # a prompt's earlier rows are never chosen from
    # the whole prefix again (its earlier states change), but only its last position is projected
    return model.project(model.decode(tokens, memory, src_mask, iv, project=False)[:, -1])


def start_tokens(
    specials: SpecialIds, batch: int, device: torch.device | str | None, prompt: torch.Tensor | None = None
) -> torch.Tensor:
    """What decoding starts from: the decoder's start piece per row, or a prompt (B, P) to continue
    (a decoder-only model)."""
    if prompt is not None:
        return prompt
    return torch.full((batch, 1), specials.bos, dtype=torch.long, device=device)


def allowed(scores: torch.Tensor, step: int, max_len: int, specials: SpecialIds) -> torch.Tensor:
    """Scores (B, vocab) with what may not come next set to -inf: banned pieces, and at the last
    step every piece but EOS when the checkpoint forces an end (then EOS scores 0, as in
    transformers' forced_eos_token_id)."""
    if specials.force_eos_at_end and step == max_len - 1:
        forced = torch.full_like(scores, float("-inf"))
        forced[:, specials.eos] = 0.0
        return forced
    if specials.banned:
        scores = scores.clone()
        scores[:, list(specials.banned)] = float("-inf")
    return scores


def greedy(
    model: Transformer,
    memory: torch.Tensor | None,
    src_mask: torch.Tensor | None,
    iv: Interventions,
    max_len: int,
    specials: SpecialIds = PROJECT_SPECIALS,
    step_logits: list[torch.Tensor] | None = None,
    prompt: torch.Tensor | None = None,
    cache: KVCache | None = None,
    first_step: AbstractContextManager | None = None,
    recorded_steps: list[Recorder] | None = None,
    on_step: Callable[[int, torch.Tensor, int], None] | None = None,
    pick: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> list[tuple[list[int], int | None]]:
    """Most likely piece at each step (or the one `pick` draws from the allowed scores (B, vocab): a
    sampling.Sampler), for a batch (of encoded sources, or of one `prompt` (1, P)
    to continue when `memory` is None); returns (new ids without BOS and the end, the piece that ended
    the row or None when cut at `max_len`). Every id of `specials.ends` ends a row (transformers'
    generate with a list of eos_token_id).
    With `step_logits`, each step's logits (B, vocab) are appended to it, as the model gave them.
    `cache`: the KV cache to fill (the caller's, to read afterwards; causal mask on). `first_step`:
    a context the first step runs in (a Recorder or a Patching of a prompt's pass). `recorded_steps`: each
    step's pass is recorded into a Recorder of its own appended to it, the attention keys and values left
    out (the cache holds them: `stepped_trace` puts the whole trace together from these). `on_step(step,
    logits, piece)` hears each step of the first row: its logits (vocab,) and the piece it chose."""
    tokens = start_tokens(
        specials, 1 if memory is None else memory.size(0), None if memory is None else memory.device, prompt
    )
    batch, first = tokens.shape
    if cache is None and iv.causal_mask:
        cache = KVCache()
    if cache is not None:
        cache.reserve(first + max_len - 1)  # the positions fed at most: the buffers never grow
    skip = _cached_stages(model) if recorded_steps is not None else frozenset()
    finished = torch.zeros(batch, dtype=torch.bool, device=tokens.device)
    ends = torch.tensor(specials.ends, device=tokens.device)
    for step in range(max_len):
        with (
            first_step if step == 0 and first_step is not None else nullcontext(),
            nullcontext() if recorded_steps is None else recording(recorder=_appended(recorded_steps, skip)),
        ):
            logits = _step_logits(model, tokens, memory, src_mask, iv, cache)
        if step_logits is not None:
            step_logits.append(logits)
        scores = allowed(logits, step, max_len, specials)
        next_ids = scores.argmax(dim=-1) if pick is None else pick(scores)  # (B,)
        next_ids = next_ids.masked_fill(finished, specials.pad)
        if on_step is not None:
            on_step(step, logits[0], int(next_ids[0]))
        tokens = torch.cat([tokens, next_ids[:, None]], dim=1)
        finished |= torch.isin(next_ids, ends)
        if bool(finished.all()):
            break
    results: list[tuple[list[int], int | None]] = []
    for row, done in zip(tokens[:, first:].tolist(), finished.tolist(), strict=True):
        # a finished row's fill (pad, which may be an end id too) comes after the piece that ended it
        cut = next(t for t, piece in enumerate(row) if piece in specials.ends) if done else len(row)
        results.append((row[:cut], row[cut] if done else None))
    return results


def _cached_stages(model: Transformer) -> frozenset[str]:
    """The names of every attention block's keys and values: what a KV cache holds."""
    return frozenset(
        name for name in model.hook_names if (stage := stages.parse(name)).kind and stage.stage in ("k", "v")
    )


def _appended(recorders: list[Recorder], skip: frozenset[str]) -> Recorder:
    recorder = Recorder(skip=skip)
    recorders.append(recorder)
    return recorder


def stepped_trace(
    model: Transformer, steps: list[Recorder], cache: KVCache, iv: Interventions
) -> dict[str, torch.Tensor]:
    """The one teacher-forced pass's recording over what greedy decoding fed the decoder (causal mask on),
    put together from the decoding's own passes instead of a second one: `steps`, each step's recording
    (`greedy(recorded_steps=...)`: the first step's rows, a prompt's or the start piece's, then one row per
    step) and `cache`, the keys and values of every position (the cache after the last step). The names,
    order and shapes are the one pass's; a row's scores for the keys after it (which no step computed:
    they did not exist yet) are q·k from its recorded queries and the cached keys, its masked scores there
    `iv.fill` and its weights 0, as the causal mask makes them. Logits are not recorded (no output
    projection runs with the hook): the steps kept those the model chose from.

    Not for the causal mask off (each step re-reads its prefix, whose rows change: `as_decoded`) nor beams
    (the cache follows the surviving beams): those keep the pass after decoding."""
    total = cache.length
    first = total - (len(steps) - 1)  # positions the first step read at once
    layers = layers_of(model.decoder)
    whole: dict[str, torch.Tensor] = {}
    for name in steps[0].fired:
        stage = stages.parse(name)
        if stage.kind is not None and stage.layer is not None and stage.stage in ("k", "v"):
            block = getattr(layers[stage.layer], f"{stage.kind}_attn")
            k, v = cache.store[block]
            whole[name] = block.per_query_head(k if stage.stage == "k" else v)  # as the one pass records them
            continue
        rows = [step.tensors[name] for step in steps]
        if stage.keys != "target":  # rows of their own: concatenated along the positions
            whole[name] = rows[0] if len(rows) == 1 else torch.cat(rows, dim=sequence_axis(rows[0]))
            continue
        if stage.stage == stages.POSITION_BIAS:  # the bias of every (query, key) pair, as the one pass adds
            whole[name] = model.decoder.relative_bias(total, total)
            continue
        if len(rows) == 1:  # the first step alone (a prompt's trace while it is continued): its rows are all
            whole[name] = rows[0]
            continue
        if stage.stage == "scores":
            if stage.layer is None:
                raise ValueError(f"{name} is not an attention stage")
            block = layers[stage.layer].self_attn
            query = whole[stages.attention("decoder", "self", stage.layer, "q")]
            bias = stages.position_bias("decoder")
            later = block.scores(
                query,
                cache.store[block][0][:, :, first:],
                iv.scale_scores,
                whole[bias][..., first:] if bias in whole else None,
            )  # every row against the keys after the first step's
            out = rows[0].new_empty((*rows[0].shape[:2], total, total))
            out[..., first:] = later
        else:
            out = rows[0].new_full((*rows[0].shape[:2], total, total), 0.0 if stage.stage == "pattern" else iv.fill)
        out[..., :first, :first] = rows[0]
        for offset, row in enumerate(rows[1:]):
            position = first + offset
            out[..., position, : position + 1] = row[..., 0, :]
        whole[name] = out
    return whole


def decoded_logits(
    model: Transformer,
    tgt: torch.Tensor,
    memory: torch.Tensor | None,
    src_mask: torch.Tensor | None,
    iv: Interventions,
    steps_seen: list[torch.Tensor] | None = None,
    recorded: dict[str, torch.Tensor] | None = None,
    first: int = 1,
) -> torch.Tensor:
    """Logits (B, T, vocab) each decoding step chose from, by a pass over the output `tgt` fed in
    (recorded by the active Recorder, whose tensors are `recorded`, rewritten as `as_decoded` says).
    `steps_seen`: the logits greedy search kept from its steps, used as they are, not recomputed:
    with the causal mask on, they are what that pass would give (no position sees a later one); with
    it off, pass them only with nothing to record (the recorded rows need a pass per prefix).
    `first`: how many pieces the first step read (1, the start piece; a prompt's length)."""
    if steps_seen is not None and len(steps_seen) == tgt.size(1):
        logits = torch.stack(steps_seen, dim=1)
        if recorded is not None:  # the recorded pass stops before the output projection
            model.decode(tgt, memory, src_mask, iv, project=False)
            recorded[stages.LOGITS] = logits
        return logits
    logits = model.decode(tgt, memory, src_mask, iv)
    with not_recording():
        return as_decoded(model, tgt, memory, src_mask, iv, logits, recorded, first)


def as_decoded(
    model: Transformer,
    tgt: torch.Tensor,
    memory: torch.Tensor | None,
    src_mask: torch.Tensor | None,
    iv: Interventions,
    one_pass: torch.Tensor,
    recorded: dict[str, torch.Tensor] | None = None,
    first: int = 1,
) -> torch.Tensor:
    """Logits (B, T, vocab) that each decoding step chose from, for the pieces `tgt` (B, T) fed in;
    with `recorded` (a Recorder's tensors from the same one pass), its decoder tensors are
    rewritten in place the same way, so that row t is what step t computed.

    With the causal mask on, no position sees a later one, so the pass over the whole output
    (`one_pass`, and `recorded` as it is) already holds them. With it off, that pass lets
    position t look at pieces that did not exist yet when step t chose: row t is taken from a
    pass over the first t+1 pieces, and keys after t are left out (weight 0, score NaN). The first
    step read `first` pieces at once (a prompt): its rows all come from the pass over them.
    """
    if iv.causal_mask:
        return one_pass
    first = min(first, tgt.size(1))
    passes = []
    for length in range(first, tgt.size(1)):  # the last step's pass is the one pass itself
        with recording() as recorder:  # each prefix's logits: its last position only (O(T V), not O(T² V))
            model.decode(tgt[:, :length], memory, src_mask, iv, project=False)
        passes.append(recorder.tensors)
    if recorded is not None and passes:  # with one step, the one pass is the only one
        for name in passes[0]:
            recorded[name] = _row_by_row(name, recorded[name], [p[name] for p in passes] + [recorded[name]], first)
    if not passes:
        return one_pass
    logits = torch.cat(
        [model.project(passes[0][stages.DECODER_OUTPUT])]
        + [model.project(p[stages.DECODER_OUTPUT][:, -1:]) for p in passes[1:]]
        + [one_pass[:, -1:]],
        dim=1,
    )
    if recorded is not None:
        recorded[stages.LOGITS] = logits  # row t: what step t chose from
    return logits


def continued_trace(
    model: Transformer, prompt_pass: dict[str, torch.Tensor], cache: KVCache, fed: torch.Tensor, iv: Interventions
) -> dict[str, torch.Tensor]:
    """The one-pass recording over `fed` (1, T): a prompt then the pieces generated after it, with the
    causal mask on, the way before `stepped_trace` (kept for `Generator.generate(second_pass=True)`, which
    bench/bench_trace.py times against it): put together from what generating already computed and a
    second pass over the new pieces: `prompt_pass`, the first step's recording (the prompt's rows), and a
    recorded pass over the new pieces alone on the prompt's keys and values (`cache` cut to the prompt,
    which then writes into buffers of its own: `KVCache.prefix`). The prompt's
    rows then gain the keys after the prompt: masked scores `iv.fill` and weight 0, as the mask makes
    them, and scores q·k from their recorded queries and the new keys. Logits are not recorded (no
    output projection runs): the steps kept those the model chose from."""
    prompt = prompt_pass[stages.embedding("ids", "target")].size(1)
    if fed.size(1) == prompt:
        return dict(prompt_pass)
    with recording() as recorder:
        model.decode(fed[:, prompt:], None, None, iv, cache.prefix(prompt), start=prompt, project=False)
    rest = recorder.tensors
    whole: dict[str, torch.Tensor] = {}
    for name, first in prompt_pass.items():
        stage = stages.parse(name)
        later = rest[name]
        if stage.kind == "self" and stage.stage in ("k", "v"):
            whole[name] = later  # the cached pass's keys and values are every position's
            continue
        if stage.keys == "target":
            first = _with_later_keys(model, stage, first, prompt_pass, rest, iv)
        whole[name] = torch.cat([first, later], dim=sequence_axis(first))
    return whole


def _with_later_keys(
    model: Transformer,
    stage: stages.Stage,
    first: torch.Tensor,
    prompt_pass: dict[str, torch.Tensor],
    rest: dict[str, torch.Tensor],
    iv: Interventions,
) -> torch.Tensor:
    """A prompt row's scores, masked scores, weights or position bias (B, h, P, P) widened to every
    key (B, h, P, T)."""
    prompt, total = first.size(-1), rest[stage.name].size(-1)
    if stage.stage in ("pattern", "masked_scores"):  # the causal mask hides every later key
        later = first.new_full((*first.shape[:-1], total - prompt), 0.0 if stage.stage == "pattern" else iv.fill)
        return torch.cat([first, later], dim=-1)
    stack = model.decoder  # keys at target positions: the decoder's self-attention or its position bias
    bias = (
        stack.relative_bias(prompt, total)[..., prompt:] if stages.position_bias("decoder") in prompt_pass else None
    )  # only while the positions are on
    if stage.stage == stages.POSITION_BIAS:
        if bias is None:
            raise ValueError(f"{stage.name} was recorded without the positions on")
        return torch.cat([first, bias], dim=-1)
    if stage.layer is None:
        raise ValueError(f"{stage.name} is not an attention stage")
    query = stages.attention("decoder", "self", stage.layer, "q")
    keys = rest[stages.attention("decoder", "self", stage.layer, "k")][:, :, prompt:]
    block = layers_of(stack)[stage.layer].self_attn
    return torch.cat([first, block.scores(prompt_pass[query], keys, iv.scale_scores, bias)], dim=-1)


def _row_by_row(name: str, whole: torch.Tensor, passes: list[torch.Tensor], first: int = 1) -> torch.Tensor:
    """`whole` rebuilt with row t (query position t) taken from the pass of the step that computed
    it: the pass over the first max(first, t + 1) pieces."""
    stage = stages.parse(name)
    if stage.kind == "cross" and stage.stage in ("k", "v"):
        return whole  # projections of the encoder memory: the same in every pass
    query_axis = 2 if whole.dim() == 4 else 1
    keys_are_steps = stage.keys == "target"
    rebuilt = (
        torch.full_like(whole, 0.0 if stage.stage == "pattern" else float("nan"))
        if keys_are_steps
        else torch.empty_like(whole)
    )
    for t in range(whole.size(query_axis)):
        step = max(0, t + 1 - first)
        row, target = passes[step].select(query_axis, t), rebuilt.select(query_axis, t)
        if keys_are_steps:
            target[..., : first + step] = row
        else:
            target.copy_(row)
    return rebuilt
