"""Issue 50, point 1: a real chat model on a projector. In presentation mode at 1280×720 and 1024×768, on the real
SmolLM2-135M-Instruct and on a Gemma-3-shaped decoder (a tiny folder made by transformers, its chat template and
20 new pieces), every page's first picture, its title included, is whole in the first screen; while Play runs on
Attention the outlined row of the step is inside it at every step. Screenshots: artifacts/screenshots/."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from hf_fixtures import make_decoder_dir
from live_server import running_app
from test_browser import SHOTS, _settle, _visit, browser  # noqa: F401  (browser: fixture)
from test_browser_talk import PROJECTORS

pytestmark = pytest.mark.e2e

GEMMA = "tiny-gemma3-chat"
MODELS = ["smollm2-135m-instruct", GEMMA]
PAGES = ["translate", "attention", "positional_encoding", "tensor_shapes", "masks_and_heads", "design_choices", "why"]
# The first picture in the page's order: a plotly chart, or the Why page's shaded lines (viz.focus)
FIRST_PICTURE = """() => {
  const first = document.querySelector('[data-testid="stMain"]').querySelector('.js-plotly-plot, .anatomy-lines');
  if (!first) return null;
  const box = first.getBoundingClientRect();
  return {top: box.top, bottom: box.bottom, title: (first.querySelector('.gtitle') || first).textContent.slice(0, 80)};
}"""
# The outline on the step's row in the step charts' newest slots (ui/page/player.py), and the step said above them
OUTLINES = """() => {
  const said = /Step t = (\\d+) of (\\d+)/.exec(document.body.innerText);
  const paths = [...document.querySelectorAll('[class*="st-key-slot-"]:has(.anatomy-newest) .shapelayer path')]
    .filter(p => !p.closest('[data-stale="true"]'))  // this frame's, not a copy the run before left, faded
    .map(p => p.getBoundingClientRect()).filter(r => r.width > 0 && r.height > 0);
  return {step: said ? +said[1] : 0, of: said ? +said[2] : 0, rows: paths.map(r => [r.top, r.bottom])};
}"""


# Buttons drawn over the Why page's shaded lines (Streamlit's negative margin under a markdown block once laid
# "Compute the whole table" over their last line)
OVER_THE_LINES = """() => {
  const lines = document.querySelector('.anatomy-lines').getBoundingClientRect();
  return [...document.querySelectorAll('[data-testid="stMain"] button')].map(b => [b, b.getBoundingClientRect()])
    .filter(([b, r]) => r.height > 0 && r.top < lines.bottom - 1 && r.bottom > lines.top + 1)
    .map(([b, r]) => b.innerText.trim());
}"""


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    """The app, with a tiny Gemma-3-shaped instruct decoder offered beside the real SmolLM2."""
    folder = make_decoder_dir(tmp_path_factory.mktemp("models") / GEMMA, "gemma3_text", seed=4, chat_template=True)
    with running_app(None, timeout=120, env={"ANATOMY_MODELS": str(folder)}) as app:
        yield app.url


def _open(page, url: str) -> None:
    """Open `url` and wait until the page stands still: under load the status widget can be gone for a moment
    while the run goes on, and a picture drawn late (a step slot) comes before those already drawn."""
    page.goto(url)
    page.wait_for_function(f"() => ({FIRST_PICTURE})() !== null", timeout=120000)
    _settle(page, timeout_ms=120000)
    layout = f"() => [document.querySelectorAll('.js-plotly-plot .main-svg').length, ({FIRST_PICTURE})()]"
    before = None
    for _ in range(120):
        page.wait_for_timeout(800)  # plotly lays the charts out in the final width
        now = page.evaluate(layout)
        if now == before:
            return
        before = now
    raise AssertionError(f"{url}: the page never stood still ({before})")


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("width,height", PROJECTORS)
def test_every_pages_first_picture_is_whole_in_a_projectors_first_screen(app_url, browser, model, width, height):  # noqa: F811
    SHOTS.mkdir(parents=True, exist_ok=True)
    cut = []
    with _visit(browser) as page:
        page.set_viewport_size({"width": width, "height": height})
        for slug in PAGES:
            _open(page, f"{app_url}/{slug}?{urlencode({'model': model, 'present': 'on'})}")
            first = page.evaluate(FIRST_PICTURE)
            if not (0 <= first["top"] and first["bottom"] <= height):
                cut.append(f"{slug}: {first['title']!r} from {first['top']:.0f} to {first['bottom']:.0f} px")
            if slug == "why":
                assert page.evaluate(OVER_THE_LINES) == [], "a button covers the attribution lines"
            page.screenshot(path=str(SHOTS / f"projector_{model}_{slug}_{width}x{height}.png"))
    assert not cut, f"{model} at {width}×{height}: first pictures cut: {cut}"


@pytest.mark.parametrize("model", MODELS)
def test_play_keeps_the_steps_row_in_a_projectors_first_screen(app_url, browser, model):  # noqa: F811
    """The map's window follows the step: every frame sampled while Play runs outlines the step's row inside the
    first screen (it once stopped at the row "user" while the step line moved on)."""
    with _visit(browser) as page:
        page.set_viewport_size({"width": 1280, "height": 720})
        _open(page, f"{app_url}/attention?{urlencode({'model': model, 'present': 'on', 'step': '1'})}")
        page.get_by_role("button", name="Play decoding").click()
        frames, outside = [], []
        while True:
            page.wait_for_timeout(400)
            frame = page.evaluate(OUTLINES)
            frames.append(frame)
            outside += [(frame["step"], row) for row in frame["rows"] if not (0 <= row[0] and row[1] <= 720)]
            if frame["step"] and frame["step"] == frame["of"] or len(frames) > 200:
                break
        page.screenshot(path=str(SHOTS / f"projector_{model}_attention_played.png"))
    steps = {frame["step"] for frame in frames if frame["rows"]}
    assert len(steps) >= frames[-1]["of"] - 2, f"frames sampled at steps {sorted(steps)}"  # most steps were seen
    assert not outside, f"{model}: outlined rows outside the first screen: {outside[:5]}"
