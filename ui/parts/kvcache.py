"""The Attention page's parts about keys and values: shared key/value heads (grouped-query attention) and
what they save, the KV cache growing under the play button, and decoding without the cache."""

from __future__ import annotations

import streamlit as st

from model.analysis.cache import bytes_by_step, cache_norms, cache_step, kv_bytes
from model.results import GenerationResult, TranslationResult
from ui.page.binding import bind, page_value
from ui.page.markup import md, table_height
from ui.page.ondemand import STEP_WORK, asked, continuation_work
from ui.page.start import Page
from ui.session import experiments
from ui.session.figures import shared
from ui.session.urlstate import Field
from viz.cache import bytes_by_step as bytes_chart
from viz.cache import cache_growth, shared_heads_table, without_cache_chart

LENGTHS = {"4k pieces": 4096, "32k pieces": 32768}
NO_CACHE = Field("nocache", False, lambda t: {"on": True, "off": False}[t], lambda v: "on" if v else "off")


def kind_of_sharing(n_heads: int, kv_heads: int) -> str:
    """How a model shares its key/value heads, in words."""
    if kv_heads == n_heads:
        return "multi-head attention (MHA): every query head has its own key/value head, nothing shared"
    if kv_heads == 1:
        return f"multi-query attention (MQA): all {n_heads} query heads share one key/value head"
    return (
        f"grouped-query attention (GQA): {kv_heads} key/value heads, each shared by a group of "
        f"{n_heads // kv_heads} query heads"
    )


def shared_heads(page: Page, positions: int) -> None:
    """n_q / n_kv and the cache's bytes at the text's length, 4k and 32k pieces, against one key/value head
    per query head."""
    cfg = page.bundle.config
    if not cfg.n_decoder_layers:
        return
    n_q, n_kv = cfg.n_heads, cfg.kv_heads
    number = 4  # the engine computes in float32
    lengths = {f"this text ({positions})": positions, **LENGTHS}
    ours = {name: kv_bytes(cfg, n, number) for name, n in lengths.items()}
    full = {name: kv_bytes(cfg, n, number, kv_heads=n_q) for name, n in lengths.items()}
    st.subheader("Shared key/value heads and the cache")
    st.markdown(
        f"{md(page.bundle.name)}: **n_q / n_kv = {n_q} / {n_kv}**, {kind_of_sharing(n_q, n_kv)}. Decoding keeps "
        f"every layer's keys and values (the KV cache): 2 × {cfg.n_decoder_layers} layers × {n_kv} key/value "
        f"head{'s' if n_kv > 1 else ''} × {cfg.d_k} dims × {number} bytes = "
        f"**{kv_bytes(cfg, 1, number):,} bytes per piece** "
        f"(float32 as computed here; a bfloat16 cache holds half), against {kv_bytes(cfg, 1, number, n_q):,} "
        f"with one key/value head per query head."
    )
    windowed = {name: kv_bytes(cfg, n, number, windowed=True) for name, n in lengths.items()} if cfg.windows else None
    sliding = sum(1 for layer in range(cfg.n_decoder_layers) if cfg.window(layer))
    window = max(cfg.windows, default=0)
    column = f"with the windows ({sliding} layers keep {window - 1:,})"
    st.dataframe(shared_heads_table(lengths, ours, full, windowed, column), height=table_height(len(lengths)))
    if windowed is not None:
        st.caption(
            f"The cache above keeps every position in every layer, as this app does. {sliding} of "
            f"{cfg.n_decoder_layers} layers read only the last {window} pieces, so transformers' cache keeps "
            f"just their last {window - 1:,} positions: the last column, which stops growing in those layers "
            f"past {window - 1:,} pieces (at 32k pieces, {_ratio(ours, windowed)} less again)."
        )


def _ratio(ours: dict[str, int], windowed: dict[str, int]) -> str:
    """How many times less the windowed cache keeps at the longest length."""
    longest = list(ours)[-1]
    return f"{ours[longest] / windowed[longest]:.1f}×" if windowed[longest] else "no"


def cache_at_step(page: Page, step: int, pieces: list[str]) -> None:
    """Under the play button: each layer's cached keys and values after step `step` (from 0), the rows
    the step added outlined, their shape and bytes, and the bytes by step."""
    result = page.result
    cache = result.cache if isinstance(result, TranslationResult) else None
    if cache is None or not isinstance(result, TranslationResult):
        return
    cfg = page.bundle.config
    now = cache_step(cache, step)
    n_steps = len(result.output_ids)
    st.subheader(f"The KV cache after step t = {step + 1}")
    cross = (
        f" The cross-attention cache (the source's keys and values) was computed once, before the first step: "
        f"{now.cross_bytes:,} bytes, the same at every step."
        if cache.cross_attention
        else ""
    )
    window = (
        " transformers' sliding-window layers keep only their last window − 1 positions; here every layer keeps all."
        if cfg.windows
        else ""
    )
    st.markdown(
        f"Each of the {cfg.n_decoder_layers} layers keeps keys and values of shape **{now.layer_shape}** (batch, "
        f"key/value heads, positions, d_head), as transformers' `past_key_values`: "
        f"**{now.self_bytes:,} bytes** for the whole self-attention cache. Step t = {step + 1} "
        + (
            ("read the prompt's one piece" if now.added == 1 else f"read the {now.added} pieces of the prompt at once")
            if step == 0
            else "added one position"
        )
        + f" and read the {now.positions - now.added} cached ones instead of recomputing them."
        + cross
        + window
    )
    page.show(
        shared(
            cache_growth,
            cache_norms(cache, "keys"),
            cache_norms(cache, "values"),
            pieces,
            now.positions,
            now.added,
            page.style,
            f"KV cache after step {step + 1}: {now.positions} positions × {cfg.kv_heads} key/value "
            f"head{'s' if cfg.kv_heads > 1 else ''} per layer",
        ),
        "Rows are the positions kept, columns each layer's key/value heads; a cell is the length of one cached "
        "vector. The outlined row is what this step added; rows below it are not computed yet.",
        key="kv-cache",
    )
    self_bytes, cross_bytes = bytes_by_step(cache, n_steps)
    page.show(
        shared(bytes_chart, self_bytes, cross_bytes, step, page.style, "Cache size by step"),
        key="kv-bytes",
    )


def prefix_work(page: Page, prompt: int, steps: int) -> float:
    """What decoding `steps` pieces twice costs, once re-reading every prefix (in EAGER_WORK's units)."""
    per_position = continuation_work(page.bundle, 1) / STEP_WORK  # the weights read once for one position
    return continuation_work(page.bundle, steps) + per_position * sum(prompt + t for t in range(steps))


def without_cache(page: Page) -> None:
    """The "without the cache" switch: pieces computed per step and the time measured, both ways."""
    result = page.result
    if not page.decoder_only or not isinstance(result, GenerationResult):
        return
    steps = len(result.output_ids)
    page_value(NO_CACHE)
    if not bind("nocache", st.toggle, label="Without the KV cache: re-read every prefix at every step"):
        return
    prompt = tuple(result.prompt_ids)
    iv = page.controls.interventions()
    go = asked(
        prefix_work(page, len(prompt), steps),
        experiments.without_cache_held(page.bundle, prompt, steps, iv),
        "Decode again without the cache, and time both",
        "without-cache",
        "Re-reading every prefix costs seconds at this model's size: the button decodes both ways and times them.",
    )
    if go is False:
        return
    measured = experiments.decoded_without_cache(page.bundle, prompt, steps, iv)
    if not isinstance(go, bool):
        go.empty()
    total_with, total_without = int(measured.pieces_with.sum()), int(measured.pieces_without.sum())
    st.markdown(
        f"Measured here, {steps} greedy steps: **{measured.seconds_with * 1000:,.0f} ms with the cache** "
        f"({total_with} positions computed) against **{measured.seconds_without * 1000:,.0f} ms without** "
        f"({total_without} positions, {measured.seconds_without / max(measured.seconds_with, 1e-9):.1f}× the time); "
        + ("the same pieces both ways." if measured.same_ids else "the pieces differ (rounding).")
    )
    page.show(
        shared(
            without_cache_chart,
            measured.pieces_with,
            measured.pieces_without,
            page.style,
            "Positions computed per step, with and without the cache",
        ),
        key="kv-without",
    )
