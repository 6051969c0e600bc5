"""Render the shipped model's best-aligned cross-attention head on one sentence to a PNG
(the figure the model card points to), through the app's own plotting code and Debian chromium.

    .venv/bin/python scripts/cross_attention_figure.py ["The small girl sees a white bird."]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from model import load_bundle  # noqa: E402
from viz.attention import attention_map  # noqa: E402
from viz.labels import display_piece  # noqa: E402
from viz.style import Style  # noqa: E402

FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def main(sentence: str, out: Path) -> None:
    """Write the PNG of decoder cross-attention of the card's best head for `sentence`."""
    bundle = load_bundle()
    best = bundle.card["alignment"]["best"]
    result = bundle.translate(sentence)
    trace = result.trace
    pattern = trace.pattern("decoder", "cross", best["layer"])[best["head"]]
    queries = [
        f"{display_piece(inp)} → {display_piece(made)}"
        for inp, made in zip(trace.tgt_pieces, trace.out_pieces, strict=True)
    ]
    title = (
        f"Cross-attention, decoder layer {best['layer'] + 1} head {best['head'] + 1} "
        f"({best['agreement']:.1f}% alignment agreement)<br><sup>{sentence} → {result.translation}</sup>"
    )
    fig = attention_map(pattern, queries, trace.src_pieces, Style(), title, show_values=True)
    fig.update_layout(width=900, height=620, margin=dict(l=170, t=100))
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        page_file = Path(tmp) / "figure.html"
        page_file.write_text(fig.to_html(include_plotlyjs=True, full_html=True), encoding="utf-8")
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
        page = browser.new_page(viewport={"width": 920, "height": 640})
        page.goto(page_file.as_uri())
        page.locator(".js-plotly-plot").first.wait_for()
        page.locator(".js-plotly-plot").first.screenshot(path=str(out))
        browser.close()
    print(f"wrote {out}: {result.translation}")


if __name__ == "__main__":
    main(
        sys.argv[1] if len(sys.argv) > 1 else "The small girl sees a white bird.",
        ROOT / "docs" / "cross_attention_small_girl.png",
    )
