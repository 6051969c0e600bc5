"""The real app in a real browser: `streamlit run` on a free port, Debian chromium driven by Playwright."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qs, urlparse
from xml.etree import ElementTree

import pytest
from chart_text import CUT_WORDS, WIDENED
from live_server import running_app
from playwright.sync_api import TimeoutError as PlaywrightTimeout

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PAGES = [
    ("Translate", "translate"),
    ("Attention", "attention"),
    ("Positional encoding", "positional_encoding"),
    ("Tensor shapes", "tensor_shapes"),
    ("Masks and heads lab", "masks_and_heads"),
    ("Design choices", "design_choices"),
    ("Training", "training"),
    ("Why this word?", "why"),
]
SENTENCE = "The old man reads a book in the garden"
MENU_LINKS = "[data-testid='stSidebar'] [data-testid='stPageLink-NavLink']"  # ui.session.nav.menu()

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server():
    """`streamlit run app.py` on the shipped model, on a free local port; yields (base URL, launch time)."""
    with running_app(None) as app:
        yield app.url, app.started


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium, never a downloaded one."""
    if not Path(CHROMIUM).exists():
        pytest.fail("chromium is missing: ./test.sh installs it with apt-get install -y chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield instance
        instance.close()


def _streamlit_probe(url: str) -> bool:
    """Streamlit's own base-path probe: opened at /attention, it first tries /attention/_stcore/*."""
    path = urlparse(url).path
    return path.endswith(("/_stcore/health", "/_stcore/host-config")) and not path.startswith("/_stcore")


def _console(errors: list[str], msg) -> None:
    if msg.type == "error" and not _streamlit_probe(msg.location.get("url", "")):
        errors.append(f"console.error: {msg.text} at {msg.location.get('url', '')}")


@contextmanager
def _visit(browser, locale: str | None = None) -> Iterator:
    """A fresh browser context's page (in the browser language `locale`, e.g. "zh-CN"); on leaving, it closes
    and asserts that the page logged no JavaScript error, failed request or HTTP error."""
    errors: list[str] = []
    context = browser.new_context(
        viewport={"width": 1500, "height": 1000}, device_scale_factor=1, **({"locale": locale} if locale else {})
    )
    page = context.new_page()
    page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
    # a request the browser itself cancelled (the page moved on, the context closed) is not a failure: the
    # favicon's, cut by the next page's load, once failed a full run
    page.on(
        "requestfailed",
        lambda request: (
            errors.append(f"request failed ({request.failure}): {request.url}")
            if request.failure != "net::ERR_ABORTED"
            else None
        ),
    )
    page.on(
        "response",
        lambda response: (
            errors.append(f"HTTP {response.status}: {response.url}")
            if response.status >= 400 and not _streamlit_probe(response.url)
            else None
        ),
    )
    page.on("console", lambda msg: _console(errors, msg))
    try:
        yield page
    finally:
        context.close()
    assert not errors, errors


def _load(page, url: str, minimum: int = 1) -> None:
    """Open `url` and wait for its charts and for the script to finish."""
    page.goto(url)
    _charts(page, minimum)
    _settle(page)


def _settle(page, timeout_ms: int = 30000) -> None:
    """Wait until Streamlit has finished running the script."""
    page.wait_for_timeout(250)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
        " && document.querySelector('[data-testid=\"stApp\"]')",
        timeout=timeout_ms,
    )


def _charts(page, minimum: int = 1, timeout_ms: int = 30000) -> int:
    page.wait_for_function(
        f"() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= {minimum}", timeout=timeout_ms
    )
    return page.locator(".js-plotly-plot").count()


def _screenshot(page, path: Path) -> None:
    """The whole page: Streamlit scrolls inside its main block, so grow the viewport to fit it."""
    height = page.evaluate(
        "() => Math.max(document.querySelector('[data-testid=\"stMain\"]').scrollHeight,"
        " document.querySelector('[data-testid=\"stSidebarContent\"]')?.scrollHeight || 0)"
    )
    size = page.viewport_size
    page.set_viewport_size({"width": size["width"], "height": min(int(height) + 40, 12000)})
    page.wait_for_timeout(700)  # plotly resizes its charts to the new layout
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(size)


def _query(page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def test_every_page_renders_its_charts_and_keeps_the_controls(server, browser):
    url, started = server
    SHOTS.mkdir(parents=True, exist_ok=True)
    with _visit(browser) as page:
        page.goto(url)
        _charts(page)
        first_charts = time.monotonic() - started
        box = page.get_by_label("English sentence", exact=True).and_(page.locator("input"))
        box.fill(SENTENCE)
        box.press("Enter")
        page.wait_for_function(
            f"() => location.search.includes({json.dumps('sentence=' + SENTENCE.replace(' ', '+'))})"
            f" || decodeURIComponent(location.search).includes({json.dumps(SENTENCE)})",
            timeout=30000,
        )
        page.get_by_text("the old man reads a book in the garden", exact=True).wait_for(timeout=30000)
        _settle(page)
        # a switch set on the first page must still be set on every other page
        page.get_by_text("Positional encoding", exact=True).first.wait_for()
        page.locator("[data-testid='stSidebar'] label:has-text('Causal mask')").click()
        _settle(page)
        timings = {"first_charts_after_server_start_s": round(first_charts, 2)}
        for index, (title, slug) in enumerate(PAGES, start=1):
            clicked = time.monotonic()
            page.locator(MENU_LINKS).nth(index - 1).click()
            page.wait_for_function(
                f"() => [...document.querySelectorAll('h1')].some(h => h.innerText.trim() === {json.dumps(title)})",
                timeout=30000,
            )
            count = _charts(page)
            _settle(page)
            timings[f"{slug}_page_charts_s"] = round(time.monotonic() - clicked, 2)
            assert count >= 1, f"{title} shows no chart"
            assert (
                page.get_by_label("English sentence", exact=True).and_(page.locator("input")).input_value() == SENTENCE
            ), f"sentence lost on {title}"
            causal = page.locator("[data-testid='stSidebar'] input[aria-label='Causal mask']")
            assert not causal.is_checked(), f"causal switch lost on {title}"
            assert _query(page).get("sentence") == SENTENCE and _query(page).get("causal") == "off"
            assert page.locator("[data-testid='stException']").count() == 0, f"traceback on {title}"
            assert not page.evaluate(CUT_WORDS), f"words cut at a chart's edge on {title}"
            # viz.margins asked for margins that fit the words: plotly drew no chart twice to widen them (issue 54)
            assert not page.evaluate(WIDENED), f"margins plotly had to widen on {title}: {page.evaluate(WIDENED)}"
            _screenshot(page, SHOTS / f"{index}_{slug}.png")
        (SHOTS / "timings.json").write_text(json.dumps(timings, indent=2) + "\n")


def test_every_page_opens_straight_from_its_url(server, browser):
    """A shared link to any page opens that page, with no "Page not found" dialog on the way."""
    from ui.session.nav import PAGES as MENU  # the paths the app itself puts in the address bar

    url, _ = server
    with _visit(browser) as page:
        for index, (_, title, slug) in enumerate(MENU):
            _load(page, f"{url}/{slug if index else ''}?sentence=We+are+happy")  # the first page lives at "/"
            assert page.locator("h1").first.inner_text().strip() == title
            assert page.get_by_text("Page not found").count() == 0, slug


def test_a_shared_url_restores_the_view(server, browser):
    url, _ = server
    with _visit(browser) as page:
        _load(
            page,
            f"{url}/attention?sentence=We+are+happy&layer=2&head=3&causal=off&present=on&ablate=dec-cross-1-2&step=2",
            minimum=5,
        )
        assert (
            page.get_by_label("English sentence", exact=True).and_(page.locator("input")).input_value()
            == "We are happy"
        )
        assert "decoder cross L1 H2" in page.inner_text("[data-testid='stSidebar']")
        assert "Decoder masked self-attention · layer L2" in page.inner_text("[data-testid='stMain']")
        page.screenshot(path=str(SHOTS / "7_attention_from_url_presentation.png"), full_page=False)


def _chart_with_title(page, title: str):
    return page.locator(
        ".js-plotly-plot", has=page.locator(f"text.gtitle:text-is({json.dumps(title, ensure_ascii=False)})")
    ).first


def _downloaded_page(page, folder: Path) -> tuple[str, str]:
    """The page's charts as one HTML file, downloaded with its button: its file name and its text."""
    with page.expect_download(timeout=60000) as download:
        page.get_by_text("Download this page's charts as HTML").click()
    saved = folder / "page.html"
    download.value.save_as(saved)
    return download.value.suggested_filename, saved.read_text(encoding="utf-8")


def test_chart_toolbar_exports_svg_and_png_at_3x(server, browser, tmp_path):
    url, _ = server
    with _visit(browser) as page:
        for fmt in ("svg", "png"):
            _load(page, f"{url}/?sentence=We+are+happy&export={fmt}")
            chart = page.locator(".js-plotly-plot").first
            chart.hover()
            button = chart.locator(".modebar-btn[data-title^='Download plot']")
            with page.expect_download(timeout=30000) as download:
                button.click()
            saved = tmp_path / download.value.suggested_filename
            download.value.save_as(saved)
            assert saved.suffix == f".{fmt}", saved.name
            data = saved.read_bytes()
            if fmt == "svg":
                assert data.lstrip().startswith(b"<svg")
                ElementTree.fromstring(data)  # well-formed XML: token text such as "<s>" is escaped
            else:
                width = int.from_bytes(data[16:20], "big")
                shown = chart.bounding_box()["width"]
                assert abs(width - 3 * shown) <= 6, (width, shown)
        name, html = _downloaded_page(page, tmp_path)
        assert name == "anatomy-translate.html"
        assert "plotly.js v" in html and "Top candidates at every decoding step" in html
        assert html.count('class="plotly-graph-div"') == len(page.locator(".js-plotly-plot").all())


def test_clicking_a_model_view_tile_opens_that_head(server, browser):
    url, _ = server
    with _visit(browser) as page:
        _load(page, f"{url}/attention?sentence=We+are+happy&view=dec-cross", minimum=11)
        view = _chart_with_title(page, "Decoder cross-attention: layers × heads")
        view.scroll_into_view_if_needed()
        from model import load_bundle

        cfg = load_bundle().config
        # the click dot of tile L2 H3, in the gap above the tile (dots are drawn layer by layer)
        dot = view.locator(".scatterlayer .point").nth(cfg.n_heads + 2).bounding_box()
        tiles = view.locator(".nsewdrag").first.bounding_box()
        assert tiles["y"] < dot["y"] < tiles["y"] + tiles["height"]
        page.mouse.click(dot["x"] + dot["width"] / 2, dot["y"] + dot["height"] / 2)
        page.wait_for_function(
            "() => location.search.includes('layer=2') && location.search.includes('head=3')", timeout=30000
        )
        _settle(page)
        _chart_with_title(page, "Decoder cross-attention L2 H3").wait_for(timeout=30000)


def test_clicking_an_output_piece_highlights_its_source(server, browser):
    """Why this word?: a click on "fille" explains that piece: a line per method shades the source,
    and attention and occlusion shade "girl" most (the shipped model knows which word it translates)."""
    url, _ = server
    with _visit(browser) as page:
        _load(page, f"{url}/why?sentence=The+small+girl+sees+a+white+bird", minimum=3)
        page.locator("[data-testid='stButtonGroup'] button", has_text="fille").click()
        page.wait_for_function("() => location.search.includes('step=4')", timeout=30000)
        try:  # the URL says step=4 as soon as the run starts; the page says so once the run has drawn it
            page.get_by_text("Output piece 4, fille").first.wait_for(timeout=30000)
        except PlaywrightTimeout:
            headings = page.locator("h3", has_text="Output piece").all_inner_texts()
            raise AssertionError(f"the page explains {headings}, not piece 4, fille") from None
        _settle(page)
        lines = page.evaluate("""() => [...new Set([...document.querySelectorAll('span[title]')]
            .map(s => s.parentElement.parentElement))].map(line => ({
                name: line.querySelector('b').innerText,
                cells: [...line.querySelectorAll('span[title]')].map(s => [s.innerText,
                    Math.abs(parseFloat(s.title.split(': ').pop())), getComputedStyle(s).backgroundColor])}))""")
        assert [line["name"] for line in lines] == [
            "attention",
            "rollout",
            "gradient",
            "integrated-gradients",
            "occlusion",
        ]
        top = {}
        for line in lines:
            word, _, shade = max(line["cells"], key=lambda cell: cell[1])
            assert shade.startswith("rgb("), line  # the largest |value| of a line is fully shaded
            top[line["name"]] = word
        assert top["attention"] == top["occlusion"] == "girl", top  # rollout, for one, spreads to "the"
        page.locator(
            "[data-testid='stMarkdownContainer']", has_text="where it came from"
        ).first.scroll_into_view_if_needed()
        _screenshot(page, SHOTS / "9_why_clicked.png")
