"""The boxes of the flow diagram (viz.flow): what each box of one encoder or decoder layer says, the hook
whose shape the arrow into it carries, how tall it is and where it sits."""

from __future__ import annotations

from dataclasses import dataclass

from i18n import _, n_
from model.engine import stages

from .shapes import Blueprint, kept_as, symbolic_shape

Box = tuple[str, str, str | None]  # (key, label, the hook whose shape the arrow into it carries)


def embedding_box(blueprint: Blueprint, side: str, shapes: dict[str, tuple[int, ...]]) -> str:
    """The embedding box's label: what is added to the token embeddings (nothing for rotary or relative positions)."""
    if blueprint.embed_norm or stages.embedding("norm", side) in shapes:
        return _("embed + positions + type<br>then LayerNorm")
    scaled = " ×√d_model" if blueprint.scale_embeddings else ""
    if blueprint.positional == "relative":
        return _("token embedding{scaled}<br>(no positions added)", scaled=scaled)
    if blueprint.positional == "rotary":
        return _("token embedding{scaled}<br>(no positions added: q, k turn)", scaled=scaled)
    if blueprint.positional == "learned":
        return _("embed{scaled}<br>+ learned positions", scaled=scaled)
    return _("embed{scaled}<br>+ positional enc.", scaled=scaled)


def attention_box(name: str, stack: str, shapes: dict[str, tuple[int, ...]], blueprint: Blueprint) -> str:
    """A self-attention box's label: its norm, name (already in the language of this run), positions (bias or
    rotation), shared key/value heads and width."""
    lines = ([_("{norm}, then", norm=blueprint.norm_name)] if blueprint.norm_first else []) + [name]
    bias = stages.position_bias(stack)
    if bias in shapes:
        lines.append(_("+ position bias {shape}", shape=symbolic_shape(bias, 4)))
    if blueprint.positional == "rotary":  # a self-attention box (cross-attention's is its own label)
        lines.append(_("q, k turned by position (RoPE)"))
    if blueprint.grouped:
        lines += _shared_heads(stack, blueprint)
    width = blueprint.n_heads * blueprint.d_k
    if width and blueprint.d_model and width != blueprint.d_model:
        lines.append(_("h × d_k = {h} × {d_k} = {width} wide", h=blueprint.n_heads, d_k=blueprint.d_k, width=width))
    if blueprint.sandwich_norm:
        lines.append(_("then {norm} of its output", norm=blueprint.norm_name))
    return "<br>".join(lines)


def _shared_heads(stack: str, blueprint: Blueprint) -> list[str]:
    """A grouped-query attention box's lines: its key/value heads, kept as computed (cached, in the decoder),
    and repeated for the query heads before the scores."""
    kv, h = blueprint.kv_heads, blueprint.n_heads
    kept = (
        _("cached as h_kv = {kv}, repeated to h = {h}", kv=kv, h=h)
        if kept_as(stack) == "cached"
        else _("computed as h_kv = {kv}, repeated to h = {h}", kv=kv, h=h)
    )
    return [n_("keys, values: {n} head, shared", "keys, values: {n} heads, shared", kv), kept]


def _ffn_box(blueprint: Blueprint) -> str:
    lines = [_("{norm}, then", norm=blueprint.norm_name)] if blueprint.norm_first else []
    lines += [_("gated feed-forward"), _("act(x W₁) ⊙ x W₃, then W₂")] if blueprint.gated_ffn else [_("feed-forward")]
    if blueprint.sandwich_norm:
        lines.append(_("then {norm} of its output", norm=blueprint.norm_name))
    return "<br>".join(lines)


def encoder_boxes(shapes: dict[str, tuple[int, ...]], blueprint: Blueprint) -> list[Box]:
    layer = ("encoder", 0)
    attention = attention_box(_("multi-head self-attention"), "encoder", shapes, blueprint)
    ids = ("src_ids", _("source ids"), None)
    embed = ("src_emb", embedding_box(blueprint, "source", shapes), stages.embedding("ids"))
    if blueprint.norm_first:
        add = _("add (residual)")
        return [
            ids,
            embed,
            ("enc_attn", attention, stages.embedding("sum")),
            ("enc_add1", add, stages.attention("encoder", "self", 0, "out")),
            ("enc_ffn", _ffn_box(blueprint), stages.sublayer(*layer, "resid_self")),
            ("enc_add2", add, stages.ffn(*layer, "out")),
            (
                "memory",
                _("final {norm}<br>→ memory (encoder output)", norm=blueprint.norm_name),
                stages.sublayer(*layer, "resid_ffn"),
            ),
        ]
    add_norm = _("add & norm")
    return [
        ids,
        embed,
        ("enc_attn", attention, stages.embedding("sum")),
        ("enc_norm1", add_norm, stages.attention("encoder", "self", 0, "out")),
        ("enc_ffn", _ffn_box(blueprint), stages.sublayer(*layer, "norm_self")),
        ("enc_norm2", add_norm, stages.ffn(*layer, "out")),
        ("memory", _("memory (encoder output)"), stages.MEMORY),
    ]


def decoder_boxes(shapes: dict[str, tuple[int, ...]], blueprint: Blueprint, cross: bool) -> list[Box]:
    layer = ("decoder", 0)
    ids = (
        "tgt_ids",
        _("target ids (shifted)") if cross else _("ids: your text, then<br>each new piece but the last"),
        None,
    )
    embed = ("tgt_emb", embedding_box(blueprint, "target", shapes), stages.embedding("ids", "target"))
    attention = (
        "dec_attn",
        attention_box(_("masked multi-head self-attention"), "decoder", shapes, blueprint),
        stages.embedding("sum", "target"),
    )
    reads = (
        _("cross-attention<br>(queries: decoder, keys: memory)")
        if not blueprint.norm_first
        else _("{norm}, then cross-attention<br>(queries: decoder, keys: memory)", norm=blueprint.norm_name)
    )
    if blueprint.norm_first:
        add = _("add (residual)")
        boxes = [ids, embed, attention, ("dec_add1", add, stages.attention("decoder", "self", 0, "out"))]
        if cross:
            boxes += [
                ("dec_cross", reads, stages.sublayer(*layer, "resid_self")),
                ("dec_add2", add, stages.attention("decoder", "cross", 0, "out")),
            ]
        boxes += [
            ("dec_ffn", _ffn_box(blueprint), stages.sublayer(*layer, "resid_cross" if cross else "resid_self")),
            ("dec_add3", add, stages.ffn(*layer, "out")),
            (
                "logits",
                _("final {norm} → linear → logits", norm=blueprint.norm_name),
                stages.sublayer(*layer, "resid_ffn"),
            ),
        ]
        return boxes
    add_norm = _("add & norm")
    boxes = [ids, embed, attention, ("dec_norm1", add_norm, stages.attention("decoder", "self", 0, "out"))]
    if cross:
        boxes += [
            ("dec_cross", reads, stages.sublayer(*layer, "norm_self")),
            ("dec_norm2", add_norm, stages.attention("decoder", "cross", 0, "out")),
        ]
    return boxes + [
        ("dec_ffn", _ffn_box(blueprint), stages.sublayer(*layer, "norm_cross" if cross else "norm_self")),
        ("dec_norm3", add_norm, stages.ffn(*layer, "out")),
        ("logits", _("linear → logits"), stages.DECODER_OUTPUT),
    ]


ATTENTION_BOXES = {"enc_attn": ("encoder", "self"), "dec_attn": ("decoder", "self"), "dec_cross": ("decoder", "cross")}


@dataclass(frozen=True)
class Metrics:
    """Sizes of the flow diagram in pixels (one unit of either axis is about one pixel at a wide page)."""

    font: int  # box labels
    shape_font: int  # the shapes on the arrows
    box_width: float

    @property
    def line(self) -> float:
        """Height of one line of box text."""
        return self.font * 1.3

    @property
    def gap(self) -> float:
        """Between two boxes: room for an arrow and its two-line shape label."""
        return 2 * self.shape_font * 1.3 + 18

    @property
    def head_row(self) -> float:
        """Height of the row of head boxes inside an attention box."""
        return self.font * 1.3 + 10

    @property
    def heading_y(self) -> float:
        """Where the columns' headings sit (y runs down from 0 at the top)."""
        return -self.font


def head_counts(shapes: dict[str, tuple[int, ...]], stack: str, kind: str, blueprint: Blueprint) -> tuple[int, int]:
    """(h, d_k) of a block: from its recorded queries (B, h, T, d_k), else from the blueprint."""
    query = shapes.get(stages.attention(stack, kind, 0, "q"))
    if query is not None and len(query) == 4:
        return int(query[1]), int(query[3])
    return blueprint.n_heads, blueprint.d_k


def _box_height(key: str, label: str, metrics: Metrics, heads: int) -> float:
    lines = label.count("<br>") + 1
    if key in ATTENTION_BOXES and heads:  # its label, "split ...", the head row, "concat ..."
        return (lines + 2) * metrics.line + metrics.head_row + 40
    return lines * metrics.line + 18


def place_boxes(
    columns: list[tuple[str, list[Box]]], centres: list[float], metrics: Metrics, heads: dict[str, tuple[int, int]]
) -> dict[str, tuple[float, float, float]]:
    """Where each box sits: (x centre, y top, y bottom); y runs down from 0, each column from under its
    heading, one gap between two boxes."""
    place: dict[str, tuple[float, float, float]] = {}
    for column, (_heading, boxes) in enumerate(columns):
        y = metrics.heading_y - metrics.font * 1.6
        for row, (key, label, _hook) in enumerate(boxes):
            if row:
                y -= metrics.gap
            height = _box_height(key, label, metrics, heads.get(key, (0, 0))[0])
            place[key] = (centres[column], y, y - height)
            y -= height
    return place
