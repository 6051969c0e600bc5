"""Training curves and the model card from a checkpoint's log and card (their words in the language of the run
that draws them; a log column this project's trainer writes is named in words, any other as it is)."""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

import i18n
from i18n import N_, _, n_

from .style import RIGHT_LEGEND, Style

STEP_KEYS = ("step", "global_step", "iteration", "iter", "epoch")
# The trainer's log columns (model/training) in words, for legends and axes: said with i18n._(COLUMN_NAMES[key])
COLUMN_NAMES = {
    "step": N_("step"),
    "epoch": N_("epoch"),
    "loss": N_("training loss"),
    "train_loss": N_("training loss"),
    "valid_loss": N_("validation loss"),
    "lr": N_("learning rate"),
    "valid_bleu": N_("validation BLEU"),
    "valid_chrf": N_("validation chrF"),
    "valid_exact_match": N_("validation exact match (%)"),
}


def column_name(column: str) -> str:
    """A log column in words, in the language of this run (a column the trainer does not write: its own name)."""
    return i18n._(COLUMN_NAMES[column]) if column in COLUMN_NAMES else column


def log_frame(records: list[dict]) -> pd.DataFrame:
    """The training log as a table of its numeric columns, indexed by step."""
    frame = pd.DataFrame(
        [{k: v for k, v in r.items() if isinstance(v, (int, float)) and not isinstance(v, bool)} for r in records]
    )
    return frame


def _step_column(frame: pd.DataFrame) -> str | None:
    return next((k for k in STEP_KEYS if k in frame.columns), None)


def _curves(
    frame: pd.DataFrame, columns: list[str], style: Style, title: str, y_title: str, log_y: bool = False
) -> go.Figure:
    step = _step_column(frame)
    fig = style.figure(
        legend=RIGHT_LEGEND,
        xaxis=dict(title=column_name(step) if step else _("record")),
        yaxis=dict(title=y_title, type="log" if log_y else "linear"),
    )
    for column in columns:
        part = frame[[c for c in (step, column) if c]].dropna()
        x = part[step] if step else part.index
        fig.add_trace(
            go.Scatter(
                x=x,
                y=part[column],
                name=column_name(column),
                mode="lines+markers" if len(part) < 40 else "lines",
                line=dict(width=style.line_width),
            )
        )
    return style.apply(fig, title, height=400 if not style.presentation else 520)


def loss_columns(frame: pd.DataFrame) -> list[str]:
    """Columns that hold a loss or perplexity."""
    return [c for c in frame.columns if "loss" in c.lower() or "ppl" in c.lower() or "perplexity" in c.lower()]


def lr_columns(frame: pd.DataFrame) -> list[str]:
    """Columns that hold a learning rate."""
    return [c for c in frame.columns if c.lower() in ("lr", "learning_rate") or c.lower().endswith("_lr")]


def metric_columns(frame: pd.DataFrame) -> list[str]:
    """Other scores worth a curve (BLEU, accuracy, ...)."""
    skip = set(loss_columns(frame)) | set(lr_columns(frame)) | set(STEP_KEYS)
    return [c for c in frame.columns if c not in skip and any(w in c.lower() for w in ("bleu", "acc", "chrf", "exact"))]


def loss_curves(frame: pd.DataFrame, style: Style, title: str = N_("Loss")) -> go.Figure | None:
    """Every loss-like column against step (None if the log has none)."""
    columns = loss_columns(frame)
    return _curves(frame, columns, style, i18n._(title), _("loss")) if columns else None


def lr_curve(frame: pd.DataFrame, style: Style, title: str = N_("Learning-rate schedule")) -> go.Figure | None:
    """The learning rate against step (None if the log has none)."""
    columns = lr_columns(frame)
    return _curves(frame, columns, style, i18n._(title), _("learning rate")) if columns else None


def metric_curves(frame: pd.DataFrame, style: Style, title: str = N_("Validation scores")) -> go.Figure | None:
    """BLEU / accuracy style columns against step (None if the log has none)."""
    columns = metric_columns(frame)
    return _curves(frame, columns, style, i18n._(title), _("score")) if columns else None


def card_frame(card: dict, config: dict) -> pd.DataFrame:
    """The model card and config flattened to (field, value) rows; long word lists are summarized."""
    rows = []

    def add(prefix: str, value: object) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                add(f"{prefix}.{key}" if prefix else str(key), inner)
        elif isinstance(value, (list, tuple)) and len(value) > 12:
            rows.append((prefix, n_("{n} item", "{n} items", len(value))))
        else:
            rows.append((prefix, str(value)))

    add("", card if "config" in card else {"config": config, **card})
    return pd.DataFrame(rows, columns=[_("field"), _("value")])


def alignment_heatmap(
    per_layer_head: list[list[float]],
    style: Style,
    title: str = N_("Cross-attention agrees with the word alignment (%)"),
) -> go.Figure:
    """Decoder layers x heads: how often each head's strongest source word is the aligned one."""
    values = [[float(v) for v in row] for row in per_layer_head]
    layers = [f"L{i + 1}" for i in range(len(values))]
    heads = [f"H{j + 1}" for j in range(len(values[0]) if values else 0)]
    fig = style.figure(
        xaxis=dict(type="category", showgrid=False, side="top"),
        yaxis=dict(type="category", autorange="reversed", showgrid=False),
    )
    fig.add_trace(
        go.Heatmap(
            z=values,
            x=heads,
            y=layers,
            zmin=0,
            zmax=100,
            colorscale=style.weights,
            text=[[f"{v:.0f}" for v in row] for row in values],
            texttemplate="%{text}",
            textfont=dict(size=style.font),
            colorbar=dict(title=dict(text="%", side="right")),
            hovertemplate=_("decoder %{y} %{x}<br>agreement %{z:.1f}%<extra></extra>"),
        )
    )
    return style.apply(fig, i18n._(title), height=120 + 70 * len(values))


TEST_SCORES = (
    ("bleu", N_("test BLEU")),
    ("chrf", N_("test chrF")),
    ("exact_match", N_("test exact match (%)")),
)


def scores_frame(card: dict) -> pd.DataFrame:
    """Held-out scores of the card (test split, typed variations, best aligned head) as rows, in the language
    of this run."""
    rows = []
    test = card.get("test", {})
    n = test.get("n")
    held_out = (
        n_("{n} held-out sentence", "{n} held-out sentences", n, n=n)
        if isinstance(n, int)
        else _("{n} held-out sentences", n="?")
    )
    for key, label in TEST_SCORES:
        if key in test:
            rows.append((i18n._(label), f"{test[key]:.2f}", held_out))
    typed = card.get("typed_variations", {})
    if "identical_share" in typed:
        rows.append(
            (
                _("typed variations translated identically (%)"),
                f"{typed['identical_share']:.1f}",
                _(
                    "{sentences} sentences x {variants} variants",
                    sentences=typed.get("sentences", "?"),
                    variants=typed.get("variants_each", "?"),
                ),
            )
        )
    best = card.get("alignment", {}).get("best")
    if best:
        rows.append(
            (
                _("best cross-attention head vs gold alignment (%)"),
                f"{best['agreement']:.1f}",
                _("decoder layer {layer}, head {head}", layer=best["layer"] + 1, head=best["head"] + 1),
            )
        )
    return pd.DataFrame(rows, columns=[_("score"), _("value"), _("measured on")])


def recipe_curves(
    logs: dict[str, list[dict]], column: str, style: Style, title: str, y_title: str, log_y: bool = False
) -> go.Figure | None:
    """One curve per training run of `column` against step (None when no run logged it); Post-LN
    runs solid, Pre-LN dashed, one colour per warm-up / label-smoothing choice."""
    fig = style.figure(
        legend=RIGHT_LEGEND, xaxis=dict(title=_("step")), yaxis=dict(title=y_title, type="log" if log_y else "linear")
    )
    colours: dict[str, str] = {}
    for name, records in logs.items():
        points = [(r["step"], r[column]) for r in records if isinstance(r.get(column), (int, float)) and "step" in r]
        if not points:
            continue
        variant = name.split("-ln-", 1)[-1]
        colour = colours.setdefault(variant, style.palette[len(colours) % len(style.palette)])
        fig.add_trace(
            go.Scatter(
                x=[p[0] for p in points],
                y=[p[1] for p in points],
                name=name,
                mode="lines+markers" if len(points) < 40 else "lines",
                line=dict(width=style.line_width, color=colour, dash="solid" if name.startswith("post") else "dash"),
            )
        )
    return style.apply(fig, title, height=380 if not style.presentation else 480) if fig.data else None


SNAPSHOT_SCORES = (
    ("alignment", N_("best head agrees with the alignment")),
    ("exact_match", N_("test exact match")),
    ("bleu", N_("test BLEU")),
)


def snapshot_curves(
    rows: list[dict], style: Style, current: int | None = None, title: str = N_("Scores of every snapshot")
) -> go.Figure | None:
    """The measured scores of the training snapshots (card "snapshots") against step on a log axis,
    with the step on show marked; None when there are none."""
    points = sorted(
        (r for r in rows if isinstance(r.get("step"), (int, float)) and r["step"] > 0), key=lambda r: r["step"]
    )
    if not points:
        return None
    fig = style.figure(
        legend=RIGHT_LEGEND,
        xaxis=dict(title=_("training step (log scale)"), type="log"),
        yaxis=dict(title=_("%  (BLEU: 0-100)"), range=[-3, 103]),
    )
    for key, name in SNAPSHOT_SCORES:
        kept = [r for r in points if isinstance(r.get(key), (int, float))]
        fig.add_trace(
            go.Scatter(
                x=[r["step"] for r in kept],
                y=[r[key] for r in kept],
                name=i18n._(name),
                mode="lines+markers",
                line=dict(width=style.line_width),
                hovertemplate=_("step %{x:,}<br>%{fullData.name} %{y:.1f}<extra></extra>"),
            )
        )
    if current is not None:
        fig.add_vline(x=current, line=dict(color=style.highlight, width=style.line_width + 1, dash="dot"))
        # a shape takes data units on a log axis, an annotation takes log10 units
        fig.add_annotation(
            x=math.log10(current),
            y=1,
            yref="paper",
            text=_("step {step:,}", step=current),
            showarrow=False,
            xanchor="center",
            yanchor="bottom",
            font=dict(size=style.font, color=style.highlight),
        )
    return style.apply(fig, i18n._(title), height=380 if not style.presentation else 480)
