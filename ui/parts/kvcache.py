"""The Attention page's parts about keys and values: shared key/value heads (grouped-query attention) and
what they save, the KV cache growing under the play button, and decoding without the cache."""

from __future__ import annotations

import streamlit as st

from i18n import N_, _, n_, sentences
from model.analysis.cache import bytes_by_step, cache_norms, cache_step, kv_bytes
from model.results import GenerationResult, TranslationResult
from ui.page.binding import bind, page_value
from ui.page.markup import table_height
from ui.page.ondemand import STEP_WORK, asked, continuation_work
from ui.page.start import Page
from ui.session import experiments
from ui.session.figures import shared
from views.controls import Field
from views.markdown import md
from viz.cache import bytes_by_step as bytes_chart
from viz.cache import cache_growth, shared_heads_table, without_cache_chart

LENGTHS = {N_("4k pieces"): 4096, N_("32k pieces"): 32768}  # each length's name, said with _(name) where shown
NO_CACHE = Field("nocache", False, lambda t: {"on": True, "off": False}[t], lambda v: "on" if v else "off")


def kind_of_sharing(n_heads: int, kv_heads: int) -> str:
    """How a model shares its key/value heads, in words (in the language of this run)."""
    if kv_heads == n_heads:
        return _("multi-head attention (MHA): every query head has its own key/value head, nothing shared")
    if kv_heads == 1:
        return _("multi-query attention (MQA): all {n} query heads share one key/value head", n=n_heads)
    return _(
        "grouped-query attention (GQA): {kv} key/value heads, each shared by a group of {group} query heads",
        kv=kv_heads,
        group=n_heads // kv_heads,
    )


def shared_heads(page: Page, positions: int) -> None:
    """n_q / n_kv and the cache's bytes at the text's length, 4k and 32k pieces, against one key/value head
    per query head."""
    cfg = page.bundle.config
    if not cfg.n_decoder_layers:
        return
    n_q, n_kv = cfg.n_heads, cfg.kv_heads
    number = 4  # the engine computes in float32
    lengths = {_("this text ({n})", n=positions): positions, **{_(name): n for name, n in LENGTHS.items()}}
    ours = {name: kv_bytes(cfg, n, number) for name, n in lengths.items()}
    full = {name: kv_bytes(cfg, n, number, kv_heads=n_q) for name, n in lengths.items()}
    st.subheader(_("Shared key/value heads and the cache"))
    st.markdown(
        n_(
            "{name}: **n_q / n_kv = {n_q} / {n}**, {sharing}. Decoding keeps every layer's keys and values (the KV "
            "cache): 2 × {layers} layers × {n} key/value head × {d_k} dims × {number} bytes = **{per:,} bytes per "
            "piece** (float32 as computed here; a bfloat16 cache holds half), against {full:,} with one key/value "
            "head per query head.",
            "{name}: **n_q / n_kv = {n_q} / {n}**, {sharing}. Decoding keeps every layer's keys and values (the KV "
            "cache): 2 × {layers} layers × {n} key/value heads × {d_k} dims × {number} bytes = **{per:,} bytes per "
            "piece** (float32 as computed here; a bfloat16 cache holds half), against {full:,} with one key/value "
            "head per query head.",
            n_kv,
            name=md(page.bundle.name),
            n_q=n_q,
            sharing=kind_of_sharing(n_q, n_kv),
            layers=cfg.n_decoder_layers,
            d_k=cfg.d_k,
            number=number,
            per=kv_bytes(cfg, 1, number),
            full=kv_bytes(cfg, 1, number, n_q),
        )
    )
    windowed = {name: kv_bytes(cfg, n, number, windowed=True) for name, n in lengths.items()} if cfg.windows else None
    sliding = sum(1 for layer in range(cfg.n_decoder_layers) if cfg.window(layer))
    window = max(cfg.windows, default=0)
    column = _("with the windows ({sliding} layers keep {kept:,})", sliding=sliding, kept=window - 1)
    st.dataframe(shared_heads_table(lengths, ours, full, windowed, column), height=table_height(len(lengths)))
    if windowed is not None:
        st.caption(_windows_caption(cfg, sliding, window, _ratio(ours, windowed)))


def _windows_caption(cfg, sliding: int, window: int, ratio: str | None) -> str:
    """What the windowed column keeps, and how much less it is at the longest length (`ratio`; None: nothing)."""
    said = {"sliding": sliding, "layers": cfg.n_decoder_layers, "window": window, "kept": window - 1}
    if ratio is None:
        return _(
            "The cache above keeps every position in every layer, as this app does. {sliding} of {layers} layers read "
            "only the last {window} pieces, so transformers' cache keeps just their last {kept:,} positions: the last "
            "column, which stops growing in those layers past {kept:,} pieces (at 32k pieces, no less again).",
            **said,
        )
    return _(
        "The cache above keeps every position in every layer, as this app does. {sliding} of {layers} layers read "
        "only the last {window} pieces, so transformers' cache keeps just their last {kept:,} positions: the last "
        "column, which stops growing in those layers past {kept:,} pieces (at 32k pieces, {ratio} less again).",
        ratio=ratio,
        **said,
    )


def _ratio(ours: dict[str, int], windowed: dict[str, int]) -> str | None:
    """How many times less the windowed cache keeps at the longest length (None: it keeps nothing there)."""
    longest = list(ours)[-1]
    return f"{ours[longest] / windowed[longest]:.1f}×" if windowed[longest] else None


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
    st.subheader(_("The KV cache after step t = {t}", t=step + 1))
    st.markdown(_cache_said(page, now, step, bool(cache.cross_attention)))
    page.show(
        shared(
            cache_growth,
            cache_norms(cache, "keys"),
            cache_norms(cache, "values"),
            pieces,
            now.positions,
            now.added,
            page.style,
            n_(
                "KV cache after step {step}: {positions} positions × {n} key/value head per layer",
                "KV cache after step {step}: {positions} positions × {n} key/value heads per layer",
                cfg.kv_heads,
                step=step + 1,
                positions=now.positions,
            ),
        ),
        _(
            "Rows are the positions kept, columns each layer's key/value heads; a cell is the length of one cached "
            "vector. The outlined row is what this step added; rows below it are not computed yet."
        ),
        key="kv-cache",
    )
    self_bytes, cross_bytes = bytes_by_step(cache, n_steps)
    page.show(
        shared(bytes_chart, self_bytes, cross_bytes, step, page.style, _("Cache size by step")),
        key="kv-bytes",
    )


def _cache_said(page: Page, now, step: int, cross_attention: bool) -> str:
    """The cache after the step in words: its shape and bytes, what the step read, the cross-attention cache,
    transformers' sliding windows."""
    cfg = page.bundle.config
    kept = _(
        "Each of the {layers} layers keeps keys and values of shape **{shape}** (batch, key/value heads, positions, "
        "d_head), as transformers' `past_key_values`: **{bytes:,} bytes** for the whole self-attention cache.",
        layers=cfg.n_decoder_layers,
        shape=now.layer_shape,
        bytes=now.self_bytes,
    )
    said = {"t": step + 1, "cached": now.positions - now.added}
    if step > 0:
        read = _(
            "Step t = {t} added one position and read the {cached} cached ones instead of recomputing them.", **said
        )
    elif now.added == 1:
        read = _(
            "Step t = {t} read the prompt's one piece and read the {cached} cached ones instead of recomputing them.",
            **said,
        )
    else:
        read = _(
            "Step t = {t} read the {added} pieces of the prompt at once and read the {cached} cached ones instead of "
            "recomputing them.",
            added=now.added,
            **said,
        )
    cross = (
        _(
            "The cross-attention cache (the source's keys and values) was computed once, before the first step: "
            "{bytes:,} bytes, the same at every step.",
            bytes=now.cross_bytes,
        )
        if cross_attention
        else ""
    )
    window = (
        _("transformers' sliding-window layers keep only their last window − 1 positions; here every layer keeps all.")
        if cfg.windows
        else ""
    )
    return sentences(kept, read, cross, window)


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
    if not bind("nocache", st.toggle, label=_("Without the KV cache: re-read every prefix at every step")):
        return
    prompt = tuple(result.prompt_ids)
    iv = page.controls.interventions()
    go = asked(
        prefix_work(page, len(prompt), steps),
        experiments.without_cache_held(page.bundle, prompt, steps, iv),
        _("Decode again without the cache, and time both"),
        "without-cache",
        _("Re-reading every prefix costs seconds at this model's size: the button decodes both ways and times them."),
    )
    if go is False:
        return
    measured = experiments.decoded_without_cache(page.bundle, prompt, steps, iv)
    if not isinstance(go, bool):
        go.empty()
    total_with, total_without = int(measured.pieces_with.sum()), int(measured.pieces_without.sum())
    said = {
        "ms_with": f"{measured.seconds_with * 1000:,.0f}",
        "ms_without": f"{measured.seconds_without * 1000:,.0f}",
        "total_with": total_with,
        "total_without": total_without,
        "times": f"{measured.seconds_without / max(measured.seconds_with, 1e-9):.1f}",
    }
    if measured.same_ids:
        st.markdown(
            n_(
                "Measured here, {n} greedy step: **{ms_with} ms with the cache** ({total_with} positions computed) "
                "against **{ms_without} ms without** ({total_without} positions, {times}× the time); the same pieces "
                "both ways.",
                "Measured here, {n} greedy steps: **{ms_with} ms with the cache** ({total_with} positions computed) "
                "against **{ms_without} ms without** ({total_without} positions, {times}× the time); the same pieces "
                "both ways.",
                steps,
                **said,
            )
        )
    else:
        st.markdown(
            n_(
                "Measured here, {n} greedy step: **{ms_with} ms with the cache** ({total_with} positions computed) "
                "against **{ms_without} ms without** ({total_without} positions, {times}× the time); the pieces differ "
                "(rounding).",
                "Measured here, {n} greedy steps: **{ms_with} ms with the cache** ({total_with} positions computed) "
                "against **{ms_without} ms without** ({total_without} positions, {times}× the time); the pieces differ "
                "(rounding).",
                steps,
                **said,
            )
        )
    page.show(
        shared(
            without_cache_chart,
            measured.pieces_with,
            measured.pieces_without,
            page.style,
            _("Positions computed per step, with and without the cache"),
        ),
        key="kv-without",
    )
