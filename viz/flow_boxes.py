"""The boxes of the flow diagram (viz.flow): what each box of one encoder or decoder layer says, the hook
whose shape the arrow into it carries, how tall it is and where it sits."""

from __future__ import annotations

from dataclasses import dataclass

from model.engine import stages

from .shapes import Blueprint, kept_as, symbolic_shape

Box = tuple[str, str, str | None]  # (key, label, the hook whose shape the arrow into it carries)


def embedding_box(blueprint: Blueprint, side: str, shapes: dict[str, tuple[int, ...]]) -> str:
    """The embedding box's label: what is added to the token embeddings (nothing for rotary or relative positions)."""
    if blueprint.embed_norm or stages.embedding("norm", side) in shapes:
        return "embed + positions + type<br>then LayerNorm"
    scaled = " ×√d_model" if blueprint.scale_embeddings else ""
    if blueprint.positional == "relative":
        return f"token embedding{scaled}<br>(no positions added)"
    if blueprint.positional == "rotary":
        return f"token embedding{scaled}<br>(no positions added: q, k turn)"
    return f"embed{scaled}<br>+ {'learned positions' if blueprint.positional == 'learned' else 'positional enc.'}"


def attention_box(name: str, stack: str, shapes: dict[str, tuple[int, ...]], blueprint: Blueprint) -> str:
    """An attention box's label: its norm, name, positions (bias or rotation), shared key/value heads and width."""
    lines = ([f"{blueprint.norm_name}, then"] if blueprint.norm_first else []) + [name]
    bias = stages.position_bias(stack)
    if bias in shapes:
        lines.append(f"+ position bias {symbolic_shape(bias, 4)}")
    if blueprint.positional == "rotary" and "self" in name:
        lines.append("q, k turned by position (RoPE)")
    if blueprint.grouped:
        lines += _shared_heads(stack, blueprint)
    width = blueprint.n_heads * blueprint.d_k
    if width and blueprint.d_model and width != blueprint.d_model:
        lines.append(f"h × d_k = {blueprint.n_heads} × {blueprint.d_k} = {width} wide")
    if blueprint.sandwich_norm:
        lines.append(f"then {blueprint.norm_name} of its output")
    return "<br>".join(lines)


def _shared_heads(stack: str, blueprint: Blueprint) -> list[str]:
    """A grouped-query attention box's lines: its key/value heads, kept as computed (cached, in the decoder),
    and repeated for the query heads before the scores."""
    kv = blueprint.kv_heads
    return [
        f"keys, values: {kv} head{'s' if kv > 1 else ''}, shared",
        f"{kept_as(stack)} as h_kv = {kv}, repeated to h = {blueprint.n_heads}",
    ]


def _ffn_box(blueprint: Blueprint) -> str:
    lines = [f"{blueprint.norm_name}, then"] if blueprint.norm_first else []
    lines += ["gated feed-forward", "act(x W₁) ⊙ x W₃, then W₂"] if blueprint.gated_ffn else ["feed-forward"]
    if blueprint.sandwich_norm:
        lines.append(f"then {blueprint.norm_name} of its output")
    return "<br>".join(lines)


def encoder_boxes(shapes: dict[str, tuple[int, ...]], blueprint: Blueprint) -> list[Box]:
    layer = ("encoder", 0)
    attention = attention_box("multi-head self-attention", "encoder", shapes, blueprint)
    if blueprint.norm_first:
        return [
            ("src_ids", "source ids", None),
            ("src_emb", embedding_box(blueprint, "source", shapes), stages.embedding("ids")),
            ("enc_attn", attention, stages.embedding("sum")),
            ("enc_add1", "add (residual)", stages.attention("encoder", "self", 0, "out")),
            ("enc_ffn", _ffn_box(blueprint), stages.sublayer(*layer, "resid_self")),
            ("enc_add2", "add (residual)", stages.ffn(*layer, "out")),
            (
                "memory",
                f"final {blueprint.norm_name}<br>→ memory (encoder output)",
                stages.sublayer(*layer, "resid_ffn"),
            ),
        ]
    return [
        ("src_ids", "source ids", None),
        ("src_emb", embedding_box(blueprint, "source", shapes), stages.embedding("ids")),
        ("enc_attn", attention, stages.embedding("sum")),
        ("enc_norm1", "add & norm", stages.attention("encoder", "self", 0, "out")),
        ("enc_ffn", _ffn_box(blueprint), stages.sublayer(*layer, "norm_self")),
        ("enc_norm2", "add & norm", stages.ffn(*layer, "out")),
        ("memory", "memory (encoder output)", stages.MEMORY),
    ]


def decoder_boxes(shapes: dict[str, tuple[int, ...]], blueprint: Blueprint, cross: bool) -> list[Box]:
    layer = ("decoder", 0)
    ids = ("tgt_ids", "target ids (shifted)" if cross else "ids: your text, then<br>each new piece but the last", None)
    embed = ("tgt_emb", embedding_box(blueprint, "target", shapes), stages.embedding("ids", "target"))
    attention = (
        "dec_attn",
        attention_box("masked multi-head self-attention", "decoder", shapes, blueprint),
        stages.embedding("sum", "target"),
    )
    reads = (
        "cross-attention<br>(queries: decoder, keys: memory)"
        if not blueprint.norm_first
        else f"{blueprint.norm_name}, then cross-attention<br>(queries: decoder, keys: memory)"
    )
    if blueprint.norm_first:
        boxes = [ids, embed, attention, ("dec_add1", "add (residual)", stages.attention("decoder", "self", 0, "out"))]
        if cross:
            boxes += [
                ("dec_cross", reads, stages.sublayer(*layer, "resid_self")),
                ("dec_add2", "add (residual)", stages.attention("decoder", "cross", 0, "out")),
            ]
        boxes += [
            ("dec_ffn", _ffn_box(blueprint), stages.sublayer(*layer, "resid_cross" if cross else "resid_self")),
            ("dec_add3", "add (residual)", stages.ffn(*layer, "out")),
            ("logits", f"final {blueprint.norm_name} → linear → logits", stages.sublayer(*layer, "resid_ffn")),
        ]
        return boxes
    boxes = [ids, embed, attention, ("dec_norm1", "add & norm", stages.attention("decoder", "self", 0, "out"))]
    if cross:
        boxes += [
            ("dec_cross", reads, stages.sublayer(*layer, "norm_self")),
            ("dec_norm2", "add & norm", stages.attention("decoder", "cross", 0, "out")),
        ]
    return boxes + [
        ("dec_ffn", _ffn_box(blueprint), stages.sublayer(*layer, "norm_cross" if cross else "norm_self")),
        ("dec_norm3", "add & norm", stages.ffn(*layer, "out")),
        ("logits", "linear → logits", stages.DECODER_OUTPUT),
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
    for column, (_, boxes) in enumerate(columns):
        y = metrics.heading_y - metrics.font * 1.6
        for row, (key, label, _) in enumerate(boxes):
            if row:
                y -= metrics.gap
            height = _box_height(key, label, metrics, heads.get(key, (0, 0))[0])
            place[key] = (centres[column], y, y - height)
            y -= height
    return place
