"""The Attention page's keys and values as panels: shared key/value heads (grouped-query attention) and what they
save, the KV cache as a step found it, and decoding without the cache, measured (ui/parts/kvcache.py draws them,
with the switch and the button)."""

from __future__ import annotations

from i18n import N_, _, n_, sentences
from model import Bundle, ModelConfig
from model.analysis.cache import CacheStep, WithoutCache, bytes_by_step, cache_norms, cache_step, kv_bytes
from model.results import TranslationResult
from views.budget import STEP_WORK, continuation_work
from views.fields import on_off_field
from views.markdown import md
from views.panels import Panel
from views.scene import Scene
from viz.cache import bytes_by_step as bytes_chart
from viz.cache import cache_growth, shared_heads_table, without_cache_chart

LENGTHS = {N_("4k pieces"): 4096, N_("32k pieces"): 32768}  # each length's name, said with _(name) where shown
NO_CACHE = on_off_field("nocache", False)  # decode again without the KV cache, and time both (`nocache=on`)
NUMBER_BYTES = 4  # the engine computes in float32


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


def shared_heads_panels(scene: Scene, positions: int) -> list[Panel]:
    """n_q / n_kv and the cache's bytes at the text's length, 4k and 32k pieces, against one key/value head
    per query head (nothing for a model without a decoder)."""
    cfg = scene.bundle.config
    if not cfg.n_decoder_layers:
        return []
    lengths = {_("this text ({n})", n=positions): positions, **{_(name): n for name, n in LENGTHS.items()}}
    ours = {name: kv_bytes(cfg, n, NUMBER_BYTES) for name, n in lengths.items()}
    full = {name: kv_bytes(cfg, n, NUMBER_BYTES, kv_heads=cfg.n_heads) for name, n in lengths.items()}
    windowed = (
        {name: kv_bytes(cfg, n, NUMBER_BYTES, windowed=True) for name, n in lengths.items()} if cfg.windows else None
    )
    sliding = sum(1 for layer in range(cfg.n_decoder_layers) if cfg.window(layer))
    window = max(cfg.windows, default=0)
    column = _("with the windows ({sliding} layers keep {kept:,})", sliding=sliding, kept=window - 1)
    caption = "" if windowed is None else _windows_caption(cfg, sliding, window, _ratio(ours, windowed))
    table = shared_heads_table(lengths, ours, full, windowed, column)
    heading = _("Shared key/value heads and the cache")
    said = _shared_heads_said(scene)
    return [Panel(scene.key("kv-heads"), table=table, text=said, heading=heading, caption=caption)]


def _shared_heads_said(scene: Scene) -> str:
    """The model's query and key/value heads, and the bytes its cache keeps per piece, in a sentence."""
    cfg = scene.bundle.config
    n_q, n_kv = cfg.n_heads, cfg.kv_heads
    return n_(
        "{name}: **n_q / n_kv = {n_q} / {n}**, {sharing}. Decoding keeps every layer's keys and values (the KV "
        "cache): 2 × {layers} layers × {n} key/value head × {d_k} dims × {number} bytes = **{per:,} bytes per "
        "piece** (float32 as computed here; a bfloat16 cache holds half), against {full:,} with one key/value "
        "head per query head.",
        "{name}: **n_q / n_kv = {n_q} / {n}**, {sharing}. Decoding keeps every layer's keys and values (the KV "
        "cache): 2 × {layers} layers × {n} key/value heads × {d_k} dims × {number} bytes = **{per:,} bytes per "
        "piece** (float32 as computed here; a bfloat16 cache holds half), against {full:,} with one key/value "
        "head per query head.",
        n_kv,
        name=md(scene.bundle.name),
        n_q=n_q,
        sharing=kind_of_sharing(n_q, n_kv),
        layers=cfg.n_decoder_layers,
        d_k=cfg.d_k,
        number=NUMBER_BYTES,
        per=kv_bytes(cfg, 1, NUMBER_BYTES),
        full=kv_bytes(cfg, 1, NUMBER_BYTES, n_q),
    )


def _windows_caption(cfg: ModelConfig, sliding: int, window: int, ratio: str | None) -> str:
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


def cache_panels(scene: Scene, step: int, pieces: list[str]) -> list[Panel]:
    """Under the play button: each layer's cached keys and values after step `step` (from 0), the rows
    the step added outlined, their shape and bytes, and the bytes by step (nothing for a result without a cache)."""
    result = scene.result
    cache = result.cache if isinstance(result, TranslationResult) else None
    if cache is None or not isinstance(result, TranslationResult):
        return []
    now = cache_step(cache, step)
    title = _(
        "KV cache after step {step}: {positions} × {heads}",
        step=step + 1,
        positions=n_("{n} position", "{n} positions", now.positions),
        heads=n_("{n} key/value head per layer", "{n} key/value heads per layer", scene.bundle.config.kv_heads),
    )
    keys, values = cache_norms(cache, "keys"), cache_norms(cache, "values")
    growth = scene.figure(cache_growth, keys, values, pieces, now.positions, now.added, scene.style, title)
    self_bytes, cross_bytes = bytes_by_step(cache, len(result.output_ids))
    by_step = scene.figure(bytes_chart, self_bytes, cross_bytes, step, scene.style, _("Cache size by step"))
    cache_said = _(
        "Rows are the positions kept, columns each layer's key/value heads; a cell is the length of one cached "
        "vector. The outlined row is what this step added; rows below it are not computed yet."
    )
    return [
        Panel(
            scene.key("kv-cache"),
            growth,
            text=_cache_said(scene, now, step, bool(cache.cross_attention)),
            heading=_("The KV cache after step t = {t}", t=step + 1),
            caption=cache_said,
        ),
        Panel(scene.key("kv-bytes"), by_step),
    ]


def _cache_said(scene: Scene, now: CacheStep, step: int, cross_attention: bool) -> str:
    """The cache after the step in words: its shape and bytes, what the step read, the cross-attention cache,
    transformers' sliding windows."""
    cfg = scene.bundle.config
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


def prefix_work(bundle: Bundle, prompt: int, steps: int) -> float:
    """What decoding `steps` pieces after a `prompt` of pieces twice costs, once re-reading every prefix (in
    EAGER_WORK's units)."""
    per_position = continuation_work(bundle, 1) / STEP_WORK  # the weights read once for one position
    return continuation_work(bundle, steps) + per_position * sum(prompt + t for t in range(steps))


def without_cache_panels(scene: Scene, measured: WithoutCache, steps: int) -> list[Panel]:
    """Decoding `steps` pieces with and without the cache, measured: the time and the positions computed both
    ways, in words, and the positions computed per step."""
    total_with, total_without = int(measured.pieces_with.sum()), int(measured.pieces_without.sum())
    said = {
        "ms_with": f"{measured.seconds_with * 1000:,.0f}",
        "ms_without": f"{measured.seconds_without * 1000:,.0f}",
        "total_with": total_with,
        "total_without": total_without,
        "times": f"{measured.seconds_without / max(measured.seconds_with, 1e-9):.1f}",
    }
    if measured.same_ids:
        text = n_(
            "Measured here, {n} greedy step: **{ms_with} ms with the cache** ({total_with} positions computed) "
            "against **{ms_without} ms without** ({total_without} positions, {times}× the time); the same pieces "
            "both ways.",
            "Measured here, {n} greedy steps: **{ms_with} ms with the cache** ({total_with} positions computed) "
            "against **{ms_without} ms without** ({total_without} positions, {times}× the time); the same pieces "
            "both ways.",
            steps,
            **said,
        )
    else:
        text = n_(
            "Measured here, {n} greedy step: **{ms_with} ms with the cache** ({total_with} positions computed) "
            "against **{ms_without} ms without** ({total_without} positions, {times}× the time); the pieces differ "
            "(rounding).",
            "Measured here, {n} greedy steps: **{ms_with} ms with the cache** ({total_with} positions computed) "
            "against **{ms_without} ms without** ({total_without} positions, {times}× the time); the pieces differ "
            "(rounding).",
            steps,
            **said,
        )
    chart = scene.figure(
        without_cache_chart,
        measured.pieces_with,
        measured.pieces_without,
        scene.style,
        _("Positions computed per step, with and without the cache"),
    )
    return [Panel(scene.key("kv-without"), chart, text=text)]
