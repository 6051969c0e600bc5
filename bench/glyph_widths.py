"""Measure, in chromium, how wide each character the figures' words use is drawn in the figures' font
(viz.style.FONT_FAMILY, with the browser's own fallbacks), and write viz/glyph_widths.json: advances in
thousandths of the font size, which viz.margins adds up to know how much room an axis's labels take before a
browser draws them.

    python bench/glyph_widths.py            # measure and write the table
    python bench/glyph_widths.py --check    # measure and report the largest difference from the stored table
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from test_browser import CHROMIUM, FLAGS  # noqa: E402

from viz.margins import GLYPHS_FILE, MEASURED_RANGES  # noqa: E402
from viz.style import FONT_FAMILY  # noqa: E402

SIZE_PX = 1000
MEASURE = """([family, size, characters]) => {
  const context = document.createElement('canvas').getContext('2d');
  context.font = `${size}px ${family}`;
  return characters.map(c => Math.round(context.measureText(c).width));
}"""


def measured() -> dict[str, int]:
    """Every character of MEASURED_RANGES with its advance in thousandths of the font size, as chromium draws it."""
    from playwright.sync_api import sync_playwright

    characters = [chr(code) for first, last in MEASURED_RANGES for code in range(first, last + 1)]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page()
        page.set_content("<html><body></body></html>")
        widths = page.evaluate(MEASURE, [FONT_FAMILY, SIZE_PX, characters])
        browser.close()
    return dict(zip(characters, widths, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with the stored table, write nothing")
    args = parser.parse_args()
    widths = measured()
    if args.check:
        stored = json.loads(GLYPHS_FILE.read_text())
        worst = max(widths, key=lambda c: abs(widths[c] - stored.get(c, 0)))
        print(f"largest difference: {worst!r} measured {widths[worst]}, stored {stored.get(worst)}")
        return
    GLYPHS_FILE.write_text(json.dumps(widths, ensure_ascii=False, indent=0, sort_keys=True) + "\n")
    print(f"{len(widths)} characters written to {GLYPHS_FILE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
