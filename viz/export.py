"""Export helpers: the plotly toolbar settings and a self-contained HTML page of figures."""

from __future__ import annotations

import html

import plotly.graph_objects as go

from i18n import language

# The page's font: the system's, then fonts with CJK glyphs (Chinese words and pieces), as viz/style.py's figures.
PAGE_FONTS = (
    "system-ui, -apple-system, 'Segoe UI', 'Noto Sans CJK SC', 'Noto Sans SC', 'Source Han Sans SC', "
    "'PingFang SC', 'Microsoft YaHei', sans-serif"
)
HTML_LANG = {"en": "en", "zh": "zh-Hans"}  # a language code of i18n -> the HTML lang attribute


def toolbar_config(image_format: str = "png", filename: str = "transformer-anatomy") -> dict:
    """plotly config: the camera button saves PNG at 3x scale, or SVG."""
    if image_format not in ("png", "svg"):
        raise ValueError(f"image format must be png or svg, got {image_format!r}")
    return {
        "displaylogo": False,
        "toImageButtonOptions": {"format": image_format, "scale": 3, "filename": filename},
        "modeBarButtonsToRemove": ["lasso2d", "select2d"],
    }


def page_html(
    title: str,
    figures: list[tuple[str, go.Figure]],
    intro: str = "",
    image_format: str = "png",
    lang: str | None = None,
) -> str:
    """One HTML file holding every figure and plotly.js itself, so it works offline. `title`, `intro` and the
    captions are already in the page's language, `lang` (an i18n code; None: the language of this run, which
    a download made after the run, on the click, no longer knows: give it then)."""
    code = HTML_LANG.get(lang or language(), "en")
    parts = [
        "<!DOCTYPE html>",
        f"<html lang='{code}'><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title>",
        f"<style>body{{font-family:{PAGE_FONTS};margin:2rem;max-width:1400px}}"
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
