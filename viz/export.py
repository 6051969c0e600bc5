"""Export helpers: the plotly toolbar settings and a self-contained HTML page of figures."""

from __future__ import annotations

import html

import plotly.graph_objects as go


def toolbar_config(image_format: str = "png", filename: str = "transformer-anatomy") -> dict:
    """plotly config: the camera button saves PNG at 3x scale, or SVG."""
    if image_format not in ("png", "svg"):
        raise ValueError(f"image format must be png or svg, got {image_format!r}")
    return {
        "displaylogo": False,
        "toImageButtonOptions": {"format": image_format, "scale": 3, "filename": filename},
        "modeBarButtonsToRemove": ["lasso2d", "select2d"],
    }


def page_html(title: str, figures: list[tuple[str, go.Figure]], intro: str = "", image_format: str = "png") -> str:
    """One HTML file holding every figure and plotly.js itself, so it works offline."""
    parts = [
        "<!DOCTYPE html>",
        "<html lang='en'><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title>",
        "<style>body{font-family:system-ui,sans-serif;margin:2rem;max-width:1400px}"
        "h2{margin-top:2.5rem}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    if intro:
        parts.append(f"<p>{html.escape(intro)}</p>")
    config = toolbar_config(image_format)
    for index, (caption, fig) in enumerate(figures):
        if caption:
            parts.append(f"<h2>{html.escape(caption)}</h2>")
        parts.append(fig.to_html(full_html=False, include_plotlyjs=(index == 0), config=config, default_width="100%"))
    parts.append("</body></html>")
    return "\n".join(parts)
