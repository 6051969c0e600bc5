"""Training curves and the model card from a checkpoint's log and card."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from .style import Style

STEP_KEYS = ("step", "global_step", "iteration", "iter", "epoch")


def log_frame(records: list[dict]) -> pd.DataFrame:
    """The training log as a table of its numeric columns, indexed by step."""
    frame = pd.DataFrame([{k: v for k, v in r.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
                          for r in records])
    return frame


def _step_column(frame: pd.DataFrame) -> str | None:
    return next((k for k in STEP_KEYS if k in frame.columns), None)


def _curves(frame: pd.DataFrame, columns: list[str], style: Style, title: str, y_title: str,
            log_y: bool = False) -> go.Figure:
    step = _step_column(frame)
    fig = style.figure()
    for column in columns:
        part = frame[[c for c in (step, column) if c]].dropna()
        x = part[step] if step else part.index
        fig.add_trace(go.Scatter(x=x, y=part[column], name=column, mode="lines+markers" if len(part) < 40 else "lines",
                                 line=dict(width=style.line_width)))
    fig.update_xaxes(title=step or "record")
    fig.update_yaxes(title=y_title, type="log" if log_y else "linear")
    fig.update_layout(legend=dict(orientation="v", yanchor="top", y=1, x=1.01, xanchor="left"))
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


def loss_curves(frame: pd.DataFrame, style: Style, title: str = "Loss") -> go.Figure | None:
    """Every loss-like column against step (None if the log has none)."""
    columns = loss_columns(frame)
    return _curves(frame, columns, style, title, "loss") if columns else None


def lr_curve(frame: pd.DataFrame, style: Style, title: str = "Learning-rate schedule") -> go.Figure | None:
    """The learning rate against step (None if the log has none)."""
    columns = lr_columns(frame)
    return _curves(frame, columns, style, title, "learning rate") if columns else None


def metric_curves(frame: pd.DataFrame, style: Style, title: str = "Validation scores") -> go.Figure | None:
    """BLEU / accuracy style columns against step (None if the log has none)."""
    columns = metric_columns(frame)
    return _curves(frame, columns, style, title, "score") if columns else None


def card_frame(card: dict, config: dict) -> pd.DataFrame:
    """The model card and config flattened to (field, value) rows; long word lists are summarized."""
    rows = []

    def add(prefix: str, value: object) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                add(f"{prefix}.{key}" if prefix else str(key), inner)
        elif isinstance(value, (list, tuple)) and len(value) > 12:
            rows.append((prefix, f"{len(value)} items"))
        else:
            rows.append((prefix, str(value)))

    add("", card if "config" in card else {"config": config, **card})
    return pd.DataFrame(rows, columns=["field", "value"])
