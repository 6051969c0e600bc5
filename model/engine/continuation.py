"""Continuing a prompt with a decoder alone: greedy or beam search from the prompt, and the logits each
step chose from with the recording of every position the decoder read, made from what greedy decoding
kept (its steps' passes and its KV cache) or by a pass after decoding."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

import torch

from . import stages
from .attention import KVCache
from .beam import Hypothesis, beam_search
from .decoding import continued_trace, decoded_logits, greedy, stepped_trace
from .hooks import Recorder, recording
from .interventions import DecodeOptions, Interventions
from .tokens import SpecialIds
from .transformer import Transformer


def continue_prompt(
    model: Transformer,
    prompt_ids: list[int],
    interventions: Interventions,
    options: DecodeOptions,
    max_new: int,
    specials: SpecialIds,
    steps_seen: list[torch.Tensor],
    cache: KVCache | None,
    first_step: AbstractContextManager | None,
    recorded_steps: list[Recorder] | None,
    on_step: Callable[[int, torch.Tensor, int], None] | None = None,
    on_beam_step: Callable[[int, list[int]], None] | None = None,
    pick: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> list[Hypothesis]:
    """Greedy (or sampled, drawn by `pick`) or beam search continuing the prompt, best first. Greedy appends
    each step's logits to `steps_seen`, fills `cache`, runs its first step in `first_step`, records its steps into
    `recorded_steps` and tells `on_step` of each step when given (`greedy`'s arguments of those names); beam
    search tells `on_beam_step` (`beam_search`'s `on_step`)."""
    start = torch.tensor([prompt_ids])
    if options.beam_size == 1:
        [(ids, end)] = greedy(
            model,
            None,
            None,
            interventions,
            max_new,
            specials,
            steps_seen,
            prompt=start,
            cache=cache,
            first_step=first_step,
            recorded_steps=recorded_steps,
            on_step=on_step,
            pick=pick,
        )
        return [Hypothesis(tuple(ids), 0.0, 0.0, end)]
    return beam_search(
        model,
        None,
        None,
        interventions,
        options.beam_size,
        max_new,
        options.length_penalty,
        specials,
        prompt=start,
        on_step=on_beam_step,
    )


def continued_logits(
    model: Transformer,
    fed: torch.Tensor,
    prompt_ids: list[int],
    interventions: Interventions,
    options: DecodeOptions,
    trace: bool,
    greedy_trace: bool,
    steps_seen: list[torch.Tensor],
    cache: KVCache | None,
    recorded_steps: list[Recorder] | None,
    prompt_pass: Recorder,
) -> tuple[torch.Tensor, dict[str, torch.Tensor] | None]:
    """The logits (1, new pieces, vocab) each step of a continuation chose from and, when traced, the
    recording over `fed` (the prompt, then every new piece but the last): made from what greedy kept
    (`greedy_trace`: its steps' logits, `recorded_steps` or `prompt_pass`, and `cache`), else by a pass
    over `fed` after decoding. None for the recording with `trace` off."""
    tensors = None
    if greedy_trace and cache is not None:  # greedy_trace decodes with the causal mask, so a cache
        logits = torch.stack(steps_seen, dim=1)
        tensors = (
            stepped_trace(model, recorded_steps, cache, interventions)
            if recorded_steps is not None
            else continued_trace(model, prompt_pass.tensors, cache, fed, interventions)
        )
        tensors[stages.LOGITS] = with_the_prompts_rows(logits, len(prompt_ids))
    elif trace:
        with recording() as recorder:
            logits = decoded_logits(
                model, fed, None, None, interventions, None, recorder.tensors, first=len(prompt_ids)
            )[:, len(prompt_ids) - 1 :]
        tensors = recorder.tensors
    else:
        logits = (
            torch.stack(steps_seen, dim=1)
            if options.beam_size == 1
            else decoded_logits(model, fed, None, None, interventions, first=len(prompt_ids))[:, len(prompt_ids) - 1 :]
        )
    return logits, tensors


def with_the_prompts_rows(logits: torch.Tensor, prompt_len: int) -> torch.Tensor:
    """A continuation's step logits (1, steps, vocab) as a trace's logits over every position fed: NaN for the
    prompt's rows before its last (no step projects them), then the steps'."""
    rows = logits.new_empty((1, prompt_len - 1 + logits.size(1), logits.size(-1)))  # one allocation: a long
    rows[:, : prompt_len - 1] = float("nan")  # prompt's rows are megabytes, each first touch a page fault
    rows[:, prompt_len - 1 :] = logits
    return rows
