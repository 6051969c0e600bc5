"""Every stage from token ids to logits: numeric and symbolic shapes, statistics, a tensor as a heatmap;
the choices of a model family that the flow diagram writes (Blueprint), and its weights table (the flow
diagram itself: viz.flow)."""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from i18n import _, listing, n_, sentences
from model.engine import stages

from .labels import CONTAINER_PX, axis_labels, thin_ticks, token_axis
from .lengths import Span, whole
from .style import Style


def symbolic_shape(name: str, ndim: int) -> str:
    """The shape of a hook point in the paper's letters: (B, S, d_model), (B, h, T, S), ..."""
    stage = stages.parse(name)
    seq = "S" if stage.source_rows else "T"
    if name == stages.LOGITS:
        return "(B, T, vocab)"
    if stage.stage == "ids":
        return f"(B, {seq})"
    if stage.stage == stages.POSITION_BIAS:  # one bias for the whole batch
        return f"(1, h, {seq}, {seq})"
    if stage.keys is not None:
        return f"(B, h, {seq}, {'S' if stage.keys == 'source' else 'T'})"
    if stage.per_head:  # q, k, v, context
        return f"(B, h, {seq}, d_k)"
    if stage.in_ffn and stage.stage == "hidden":
        return f"(B, {seq}, d_ff)"
    if stage.stage == "concat":  # the heads side by side, before the output projection
        return f"(B, {seq}, h·d_k)"
    return f"(B, {seq}, d_model)" if ndim == 3 else "(" + ", ".join("?" * ndim) + ")"


def stage_stats(array: np.ndarray) -> dict[str, float]:
    """Mean, std, min and max over the finite entries, and how many entries are masked (-inf). Floats are
    summed in float64 where they lie (a real model's trace holds over 100 MB of float32: no float64 copy)."""
    values = np.asarray(array)
    if values.dtype.kind != "f":
        values = values.astype(np.float64)
    keep = np.isfinite(values)
    finite = values.ravel() if keep.all() else values[keep]
    if finite.size == 0:
        return {"mean": np.nan, "std": np.nan, "min": np.nan, "max": np.nan, "masked": int(values.size)}
    return {
        "mean": float(finite.mean(dtype=np.float64)),
        "std": float(finite.std(dtype=np.float64)),
        "min": float(finite.min()),
        "max": float(finite.max()),
        "masked": int(values.size - finite.size),
    }


def key_value_heads(array: np.ndarray, kv_heads: int) -> np.ndarray:
    """Keys or values recorded per query head (B, h, S, d_k) as their `kv_heads` key/value heads computed and
    cached them, (B, kv_heads, S, d_k): the engine repeats each for its group of query heads side by side."""
    return np.asarray(array)[:, :: array.shape[1] // kv_heads]


def _repeated(name: str, array: np.ndarray, kv_heads: int) -> bool:
    """True for an attention block's keys or values recorded per query head, repeated from fewer key/value heads."""
    stage = stages.parse(name)
    heads = array.shape[1] if array.ndim == 4 else 0
    return stage.kind is not None and stage.stage in ("k", "v") and 0 < kv_heads < heads and heads % kv_heads == 0


def key_value_heads_named(kv_heads: int) -> str:
    """How many key/value heads, in words: "1 key/value head", "3 key/value heads" (in the language of this run)."""
    return n_("{n} key/value head", "{n} key/value heads", kv_heads)


def kept_as(stack: str) -> str:
    """What becomes of a stack's keys and values once computed: a decoder caches them for the next steps (a code:
    the messages that say it are whole sentences of their own)."""
    return "cached" if stack == "decoder" else "computed"


def _before_the_repeat(name: str, kv_heads: int) -> tuple[str, str]:
    """The row name and symbolic shape of a block's keys or values as its key/value heads computed them."""
    stage = stages.parse(name)
    heads = key_value_heads_named(kv_heads)
    cached = kept_as(stage.stack or "") == "cached"
    label = _("{heads} (as cached)", heads=heads) if cached else _("{heads} (as computed)", heads=heads)
    return f"{name.rpartition('.')[0]}.{stage.stage}: {label}", symbolic_shape(name, 4).replace("h,", "h_kv,")


def stages_frame(tensors: dict[str, np.ndarray], kv_heads: int = 0, statistics: bool = True) -> pd.DataFrame:
    """One row per hook point in execution order: shape, symbolic shape and (unless `statistics` is off: a real
    model's 500 stages take a tenth of a second) statistics. With fewer key/value heads than query heads
    (`kv_heads`), each block's keys and values first get a row as computed and cached, (B, h_kv, S, d_k); the
    hook point's row after it holds them repeated for every query head, (B, h, S, d_k)."""
    rows = []
    for name, array in tensors.items():
        if _repeated(name, array, kv_heads):
            label, symbolic = _before_the_repeat(name, kv_heads)
            rows.append(_stage_row(label, key_value_heads(array, kv_heads), symbolic, statistics))
        rows.append(_stage_row(name, array, symbolic_shape(name, array.ndim), statistics))
    return pd.DataFrame([{"#": index + 1, **row} for index, row in enumerate(rows)])


def _stage_row(name: str, array: np.ndarray, symbolic: str, statistics: bool = True) -> dict[str, object]:
    """One row of the stages table, without its number."""
    row: dict[str, object] = {"stage": name, "shape": str(tuple(array.shape)), "symbolic": symbolic}
    return {**row, **stage_stats(array)} if statistics else row


def as_matrix(array: np.ndarray, head: int = 0) -> np.ndarray:
    """A 2-D view of a recorded tensor: batch dropped, one head picked for (B, h, ., .) tensors."""
    a = np.asarray(array)
    if a.ndim >= 1:
        a = a[0]
    if a.ndim == 3:
        a = a[min(head, a.shape[0] - 1)]
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2:
        raise ValueError(f"cannot draw a tensor of shape {array.shape} as a heatmap")
    return a.astype(np.float64)


def top_columns(matrix: np.ndarray, count: int) -> np.ndarray:
    """Indices of the `count` columns with the highest value in any row, in index order (the
    vocabulary ids a logits heatmap can show: tens of thousands would not draw)."""
    best = np.nanmax(np.where(np.isfinite(matrix), matrix, -np.inf), axis=0)
    return np.sort(np.argsort(best)[::-1][:count])


def tensor_heatmap(
    matrix: np.ndarray,
    row_pieces: list[str] | None,
    style: Style,
    title: str,
    column_name: str | None = None,
    column_pieces: list[str] | None = None,
    rows: Span | None = None,
    columns: Span | None = None,
    most_px: int | None = None,
) -> go.Figure:
    """A 2-D tensor as a heatmap, rows (and columns, for attention keys) labelled with pieces when
    given, inside a window of rows and columns (default: all; the colour scale is the whole tensor's);
    -inf shows as blank; `column_name` names the columns (default: "dimension"); at most `most_px` tall when
    given (a projector's first picture)."""
    column_name = column_name or _("dimension")
    whole_z = np.where(np.isfinite(matrix), matrix, np.nan)
    rows, columns = rows or whole(matrix.shape[0]), columns or whole(matrix.shape[1])
    title += _window_note(rows, columns, matrix.shape[0], matrix.shape[1])
    z = whole_z[rows[0] : rows[1], columns[0] : columns[1]].astype(np.float32)
    bound = float(np.nanmax(np.abs(whole_z))) if np.isfinite(whole_z).any() else 1.0
    signed = bool(np.isfinite(whole_z).any() and np.nanmin(whole_z) < 0)
    scale = (
        dict(colorscale=style.diverging, zmin=-bound, zmax=bound)
        if signed
        else dict(colorscale=style.weights, zmin=0.0, zmax=bound)
    )
    labels = (
        axis_labels(row_pieces)
        if row_pieces is not None and len(row_pieces) == matrix.shape[0]
        else list(range(matrix.shape[0]))
    )
    labels = labels[rows[0] : rows[1]]
    height = int(min(700, max(280, z.shape[0] * (style.tick + 4) + 120)))
    rows_px: float = height - 120
    if most_px is not None and height > most_px:  # rotated key labels below take their share of a short map
        height = most_px
        keys_px = 0 if column_pieces is None else min(150, max(len(p) for p in column_pieces) * style.tick * 0.6)
        rows_px = height - 120 - keys_px
    _ticks, shown = thin_ticks([str(r) for r in labels], rows_px, style.tick)
    keys = None
    xaxis = dict(title=column_name, showgrid=False)
    if column_pieces is not None and len(column_pieces) == matrix.shape[1]:
        keys = axis_labels(column_pieces)[columns[0] : columns[1]]
        xaxis = token_axis(keys, CONTAINER_PX - 200, style.tick, title=column_name, tickangle=-90)
    fig = style.figure(
        xaxis=xaxis,
        yaxis=dict(
            type="category", tickmode="array", tickvals=shown, ticktext=shown, autorange="reversed", showgrid=False
        ),
    )
    fig.add_trace(
        go.Heatmap(
            z=z,
            x=keys if keys is not None else np.arange(columns[0], columns[1]),
            y=[str(r) for r in labels],
            **scale,
            colorbar=dict(title=_("value"), thickness=14),
            hoverongaps=False,
            hovertemplate=_("row %{{y}}<br>{column} %{{x}}<br>value %{{z:.4f}}<extra></extra>", column=column_name),
        )
    )
    return style.apply(fig, title, height=height)


def _window_note(rows: Span, columns: Span, n_rows: int, n_columns: int) -> str:
    """' · rows 0–39 of 413, columns ...' for a title, naming each axis the window cuts (empty if none)."""
    parts = []
    if rows[1] - rows[0] < n_rows:
        parts.append(_("rows {a}–{b} of {n}", a=rows[0], b=rows[1] - 1, n=n_rows))
    if columns[1] - columns[0] < n_columns:
        parts.append(_("columns {a}–{b} of {n}", a=columns[0], b=columns[1] - 1, n=n_columns))
    return f" · {listing(parts)}" if parts else ""


@dataclass(frozen=True)
class Blueprint:
    """The choices of a model family that the flow diagram writes in its boxes (a ModelConfig's
    fields of the same names); the defaults are the paper's."""

    norm: str = "layer"  # "layer" (LayerNorm) or "rms" (RMS norm: no centring, no bias)
    norm_first: bool = False  # Pre-LN: a norm before each sublayer, and a final one after the last layer
    gated_ffn: bool = False
    positional: str = "sinusoidal"  # "sinusoidal", "sinusoidal_halves", "learned", "relative" or "rotary"
    scale_embeddings: bool = True
    embed_norm: bool = False
    n_heads: int = 0
    d_k: int = 0
    d_model: int = 0
    kv_heads: int = 0  # key/value heads (fewer than n_heads: shared by groups of query heads); 0: one per query head
    sandwich_norm: bool = False  # a norm on each sublayer's output too, before it is added back (Gemma's four)

    @classmethod
    def of(cls, config: object) -> Blueprint:
        """The blueprint of a model config (any object with these attributes)."""
        return cls(**{f.name: getattr(config, f.name) for f in fields(cls)})

    @property
    def grouped(self) -> bool:
        """True when fewer key/value heads than query heads: each shared by a group of query heads."""
        return 0 < self.kv_heads < self.n_heads

    @property
    def group(self) -> int:
        """Query heads per key/value head (1 without grouping)."""
        return self.n_heads // self.kv_heads if self.grouped else 1

    @property
    def norm_name(self) -> str:
        """The norm as the boxes name it (in the language of this run)."""
        return {"rms": _("RMS norm"), "rms_plus_one": _("RMS norm (1 + w)")}.get(self.norm, "LayerNorm")


def key_value_width(blueprint: Blueprint) -> str:
    """What W_K and W_V project to in a grouped-query model, in letters and numbers, and who shares the heads."""
    kv, d_k = blueprint.kv_heads, blueprint.d_k
    if kv == 1:
        return _(
            "h_kv·d_k = 1 × {d_k} = {width} (1 key/value head, shared by all {h} query heads)",
            d_k=d_k,
            width=d_k,
            h=blueprint.n_heads,
        )
    return _(
        "h_kv·d_k = {kv} × {d_k} = {width} ({kv} key/value heads, each shared by {group} query heads)",
        kv=kv,
        d_k=d_k,
        width=kv * d_k,
        group=blueprint.group,
    )


def grouped_note(heads: tuple[int, int, int], rows: str, cached: bool, hooks: dict[str, str]) -> str:
    """What grouped-query (or multi-query) attention does to the shapes: W_K and W_V project to fewer heads, the
    keys and values are kept (cached, in a decoder) as those heads, then repeated per query head, in the language
    of this run; `heads`: the key/value heads, query heads and d_k; `rows`: S or T; `hooks`: the stage names of the
    first self-attention's "k" and "v"."""
    kv, h, d_k = heads
    group, named = h // kv, key_value_heads_named(kv)
    marked = _("{heads} (as cached)", heads=named) if cached else _("{heads} (as computed)", heads=named)
    return sentences(
        _(
            "Keys and values have 1 head, not {h}: multi-query attention, where all {h} query heads share one "
            "key/value head.",
            h=h,
        )
        if kv == 1
        else _(
            "Keys and values have {kv} heads, not {h}: grouped-query attention, where groups of query heads share "
            "key/value heads ({h} query heads, {kv} key/value heads, {group} query heads per key/value head).",
            kv=kv,
            h=h,
            group=group,
        ),
        _(
            "W_K and W_V project d_model → h_kv·d_k = {kv} × {d_k} = {width}, not h·d_k = {full} (the weights below).",
            kv=kv,
            d_k=d_k,
            width=kv * d_k,
            full=h * d_k,
        ),
        _(
            "The keys and values are computed and cached as (B, h_kv, {rows}, d_k): the rows marked '{marked}' in "
            "the table below.",
            rows=rows,
            marked=marked,
        )
        if cached
        else _(
            "The keys and values are computed as (B, h_kv, {rows}, d_k): the rows marked '{marked}' in the table "
            "below.",
            rows=rows,
            marked=marked,
        ),
        _(
            "Then each is repeated for the {group} query heads of its group, to (B, h, {rows}, d_k): the row after, "
            "`{k}` (and `{v}`), so that every query head has its scores and pattern.",
            group=group,
            rows=rows,
            k=hooks["k"],
            v=hooks["v"],
        ),
    )


def _weight_role(name: str, blueprint: Blueprint) -> str:
    """What a parameter does, from its name (empty when the name says nothing known), in the language of this run."""
    module, _dot, kind = name.rpartition(".")
    leaf = module.rpartition(".")[2]
    bias = kind == "bias"
    kv = key_value_width(blueprint) if blueprint.grouped else "h·d_k"
    projections = {
        "w_q": _("query projection: d_model → h·d_k"),
        "w_k": _("key projection: d_model → {width}", width=kv),
        "w_v": _("value projection: d_model → {width}", width=kv),
        "w_o": _("output projection: h·d_k → d_model"),
    }
    if leaf in projections and ("self_attn" in module or "cross_attn" in module):
        return _its_bias(projections[leaf], bias)
    feed_forward = {
        "w_1": _("feed-forward in: d_model → d_ff, through the activation")
        if blueprint.gated_ffn
        else _("feed-forward in: d_model → d_ff"),
        "w_3": _("gate: d_model → d_ff, multiplied with act(x W₁) (a gated feed-forward's extra matrix)"),
        "w_2": _("feed-forward out: d_ff → d_model"),
    }
    if leaf in feed_forward and module.endswith("ffn." + leaf):
        return _its_bias(feed_forward[leaf], bias)
    if leaf.startswith("norm") or leaf == "final_norm":
        return _norm_role(leaf, "LayerNorm" if leaf == "norm" else blueprint.norm_name, bias)
    named = {
        "token.weight": _("token embedding: one row of d_model per vocabulary piece"),
        "positions.table": _("learned positions: one row of d_model per position"),
        "token_type.weight": _("token-type (segment) embedding"),
        "relative_bias.weight": _("relative-position bias: one number per bucket and head, for every layer"),
        "generator.weight": _("output projection of its own: d_model → vocab (not tied to the embedding)"),
    }
    return named.get(f"{leaf}.{kind}", "")


def _its_bias(role: str, bias: bool) -> str:
    """A projection's role, or its bias's."""
    return _("{role} (its bias)", role=role) if bias else role


def _norm_role(leaf: str, norm: str, bias: bool) -> str:
    """A norm's gain or bias: which norm, and where it sits."""
    where = {
        "norm_self": _("around self-attention"),
        "norm_cross": _("around cross-attention"),
        "norm_ffn": _("around the feed-forward"),
        "final_norm": _("after the last layer"),
        "norm": _("over the embedding sum"),
    }.get(leaf, "")
    if bias:
        return _("{norm} {where}: bias", norm=norm, where=where)
    return _("{norm} {where}: gain", norm=norm, where=where)


LAYER = re.compile(r"\.layers\.(\d+)\.")  # a parameter inside a numbered layer


def weights_frame(shapes: dict[str, tuple[int, ...]], blueprint: Blueprint) -> pd.DataFrame:
    """The parameters outside the layers and those of each stack's first layer (the others repeat
    it): name, stored shape ((out, in) for a projection), size and role."""
    rows = [
        {
            "parameter": name,
            "shape": "×".join(str(d) for d in shape),
            "numbers": int(np.prod(shape)),
            "role": _weight_role(name, blueprint),
        }
        for name, shape in shapes.items()
        if (layer := LAYER.search(name)) is None or layer[1] == "0"
    ]
    return pd.DataFrame(rows, columns=["parameter", "shape", "numbers", "role"])
