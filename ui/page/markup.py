"""Text and styles every page writes: typed text made literal in markdown, the app's CSS and its
presentation-mode CSS, the script that closes a phone's sidebar, and large text for a result."""

from __future__ import annotations

import html
import json

import streamlit as st

from i18n import N_, _

STREAMING = "anatomy-streaming"  # the mark of a stream's line (ui/page/stream.py)
STREAMED = "anatomy-streamed"  # the mark a stream's line leaves when it goes, until its run ends
NEWEST = "anatomy-newest"  # the mark of a steady chart's newest slot (ui/page/player.py)
# What the busy sign says before a run has said what it does (busy_note): APP_CSS's default, in the run's language
# (page_css)
WORKING = N_("Working on the page …")

# From a stream's line (ui/page/stream.py) to the end of its run, what the run before left (the old page, faded,
# until this run draws over it) is hidden: the line writes these rules with its mark, and leaves them with a mark of
# its own when it goes (the old charts came back between the new ones while the rest of the page was built); the
# run's end takes them away (stream.end_of_run). Written there, not in APP_CSS, they cost nothing while no stream
# is up; a run stopped before its end leaves them until the next run ends, which hides its old page at once.
HIDE_OLD_PAGE = """<style>
[data-testid="stElementContainer"][data-stale="true"] { display: none; }
/* an expander is no element container: it goes when all it holds is the run before's */
[data-testid="stExpander"]:has([data-stale="true"]):not(:has([data-stale="false"])) { display: none; }
</style>"""
# While a player steps on by itself, its frames' runs show no busy sign (ui/page/player.py writes this in the
# page's run, which its frames' runs leave in place)
PLAYING_CSS = '<style>[data-testid="stMain"]::after { display: none; }</style>'

APP_CSS = """<style>
/* the first screen is for the page: less empty header above the title */
[data-testid="stMainBlockContainer"] { padding-top: 3.5rem; }
/* A run going on: a sign names what the run is doing (--anatomy-busy, set by busy_note), after 0.6 s, so that a
   quick run shows none; not while a player steps on by itself (PLAYING_CSS). No rule here is a :has() anchored on
   the whole app: each made every forced style recalculation (plotly measures each label it draws) match the whole
   page again, 0.3-0.4 s of chromium's work for a real model's Attention page. */
[data-testid="stApp"][data-test-script-state="running"] [data-testid="stMain"]::after {
  content: var(--anatomy-busy, "Working on the page …"); position: fixed; top: 0.7rem; left: 50%;
  transform: translateX(-50%); z-index: 999990; padding: 0.2rem 0.9rem; border-radius: 1rem; background: #0072B2;
  color: #fff; font-size: 0.9rem; pointer-events: none; animation: anatomy-busy 0.2s ease-out 0.6s both;
}
@keyframes anatomy-busy { from { opacity: 0; } to { opacity: 1; } }
/* A chart that changes at every step (ui/page/player.py, steady_chart): its two slots in one place, the one
   marked newest on top. While a run redraws the page, the marks of the run before stay, marked stale, until it
   ends: a mark drawn by this run goes over them. */
[class*="st-key-steady-"] { display: grid; grid-template-columns: minmax(0, 1fr); }
[class*="st-key-steady-"] > * { grid-area: 1 / 1; }
/* each :has is anchored on the slot's wrapper: a bare `> :has(` made every forced style recalculation (plotly
   measures each label it draws) test every element of the page, a third of chromium's styling on a real model */
[class*="st-key-steady-"] > [data-testid="stLayoutWrapper"]:has(.anatomy-newest) { z-index: 1; }
[class*="st-key-steady-"] > [data-testid="stLayoutWrapper"]:has([data-stale="false"] .anatomy-newest) { z-index: 2; }
[class*="st-key-steady-"] .stElementContainer:has(.anatomy-newest) { display: none; }
/* plotly draws a chart's frame before its heatmap: until the heatmap is in, the slot below shows through (a chart of
   bars, keyed steady-bars-, has no heatmap to wait for) */
[class*="st-key-steady-"]:not([class*="st-key-steady-bars-"])
  .stPlotlyChart:not(:has(.heatmaplayer image[*|href^="data:"])) { visibility: hidden; }
/* a stream's mark (HIDE_OLD_PAGE) takes no room */
.stElementContainer:has(:is(.anatomy-streaming, .anatomy-streamed)) { display: none; }
/* a control a player moves: its bound widget stays, hidden, under the copy that shows it (ui/page/binding.py) */
[class*="st-key-kept-w_"] { display: none; }
/* Streamlit pulls what follows a markdown block up by its last paragraph's margin: the shaded lines (viz.focus)
   end in no paragraph, so that pull laid the next button over their last line */
[data-testid="stMarkdownContainer"]:has(> .anatomy-lines) { margin-bottom: 0; }
/* a player's arrow-key buttons work through their keyboard shortcuts alone (ui/page/player.py); so do a talk's */
[class*="st-key-arrows-"], .st-key-talk-keys { display: none; }
/* a talk's bar ("4 / 12 · title", ui/page/talk.py) sits in the header's band: it takes no room from the picture */
.st-key-talk-bar {
  position: fixed; top: 0.55rem; left: 50%; transform: translateX(-50%); z-index: 999991;
  width: auto; max-width: calc(100vw - 14rem); gap: 0.25rem; padding: 0 0.25rem; border-radius: 0.5rem;
  background: var(--anatomy-bar-background, rgba(255, 255, 255, 0.92));
}
.st-key-talk-bar [data-testid="stMarkdownContainer"] p {
  margin: 0; white-space: nowrap; overflow: hidden; text-overflow: ellipsis;
}
/* the step buttons show their arrows alone (‹ ›): their keys, PageUp and PageDown, are named in their tooltips */
[class*="st-key-pageup-"] kbd, [class*="st-key-pagedown-"] kbd { display: none; }
/* the sentence box at the top of the page is for phones, where the sidebar is hidden; so is the model
   view's legend, which replaces the captions written on its tiles there */
[class*="st-key-top-sentence"], .st-key-model-view-legend { display: none; }
@media (max-width: 640px) {
  [class*="st-key-top-sentence"], .st-key-model-view-legend { display: block; }
  .st-key-model-view :is(g.annotation, g.textpoint) { display: none; }
  /* plotly's toolbar sat over the charts' titles; a phone's touch cannot use it, and the page's download stays */
  .js-plotly-plot .modebar-container { display: none; }
  /* panels side by side, and the flow drawing, keep the width their words need (viz.style's keeps_its_width and
     WIDE_FIGURE_PX) and scroll sideways alone: Streamlit lays a chart out at its element's width, so the element
     itself is widened */
  [class*="st-key-wide-"] { overflow-x: auto; }
  [class*="st-key-wide-"] > .stElementContainer { min-width: 760px; width: 760px; }
  /* a title is one line: a long one fits a phone in a smaller type */
  .js-plotly-plot .gtitle { font-size: 12px !important; }
  /* a number written in every cell cannot fit a phone's narrow cells; Continue's candidates are words, the chart
     itself (without them ranks 2-5 were an empty block) */
  .js-plotly-plot .heatmaplayer text, .js-plotly-plot g.textpoint text { display: none; }
  .st-key-steady-steps .js-plotly-plot .heatmaplayer text { display: inline; }
}
</style>"""


# The Chinese interface: Streamlit's own type first for Latin letters, then fonts with CJK glyphs (Debian's
# fonts-noto-cjk, macOS's PingFang, Windows' YaHei); icons keep their own font, set on their own elements.
CJK_FONTS = "'Noto Sans CJK SC', 'Noto Sans SC', 'Source Han Sans SC', 'PingFang SC', 'Microsoft YaHei', sans-serif"
CJK_CSS = f"""<style>
.stApp, .stApp p, .stApp li, .stApp label, .stApp h1, .stApp h2, .stApp h3, .stApp h4, .stApp button,
.stApp input, .stApp textarea, [data-testid="stSidebar"] {{
  font-family: "Source Sans", "Source Sans Pro", {CJK_FONTS};
}}
</style>"""

PRESENTATION_CSS = """<style>
html { font-size: 20px; }
[data-testid="stCaptionContainer"] { color: #222 !important; }
/* a projector's first screen is for the picture: a small header, the page as wide as the window */
[data-testid="stHeader"] { height: 2.6rem; min-height: 2.6rem; background: transparent; }
[data-testid="stMainBlockContainer"] { padding: 0.45rem 1.2rem 3rem 1.2rem; max-width: 100%; }
/* the title beside the sidebar's opener, in the header's band */
[data-testid="stMain"] h1 { font-size: 1.6rem !important; padding: 0 0 0 2.3rem !important; }
[data-testid="stMain"] [data-testid="stVerticalBlock"] { gap: 0.6rem; }
/* Streamlit pulls the element after a heading up by the heading's usual padding (1rem); with the paddings above,
   that hid a heading's foot (the title's under the room's panel): pull it up by the gap alone */
[data-testid="stMain"] [data-testid="stHeading"] [data-testid="stMarkdownContainer"] { margin-bottom: -0.6rem; }
[data-testid="stMain"] :is(h2, h3, h4) { padding-top: 0.45rem !important; padding-bottom: 0.35rem !important; }
[data-testid="stMain"] h4 { font-size: 1.3rem !important; }
/* buttons and pills a size smaller than the text around them */
[data-testid="stMain"] button[kind^="secondary"], [data-testid="stMain"] [data-testid^="stBaseButton-pills"] {
  min-height: 1.8rem; padding-top: 0.1rem; padding-bottom: 0.1rem;
}
</style>"""


# On a phone the sidebar covers the page: after Enter in one of its boxes, close it so the result shows.
# The listener is put in the page itself (not in this component's frame, which each run replaces), once.
CLOSE_SIDEBAR_JS = """<script>
const doc = window.parent.document;
if (!doc.getElementById("anatomy-sidebar-closer")) {
  const script = doc.createElement("script");
  script.id = "anatomy-sidebar-closer";
  script.textContent = `document.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || window.innerWidth > 640) return;
    if (!event.target.closest || !event.target.closest('[data-testid="stSidebar"] input')) return;
    setTimeout(() => document.querySelector('[data-testid="stSidebarCollapseButton"] button')?.click(), 300);
  }, true);`;
  doc.head.appendChild(script);
}
</script>"""


def busy_note(doing: str) -> None:
    """Name what the page's run does, for the sign APP_CSS shows while a run takes long. Once per run, at the
    same point: a style-only html goes to the page's event container, where the run before's stays until this
    run writes over it, and the last one written is the one that counts."""
    st.html(f"<style>:root {{ --anatomy-busy: {_css_string(doing)}; }}</style>")


def table_height(rows: int, most: int = 600) -> int:
    """Pixels for a dataframe to show `rows` rows whole, below a header (and scroll past `most`)."""
    return min(38 + 35 * rows + 2, most)


def two_translations(left: tuple[str, str], right: tuple[str, str], size_rem: float = 1.3) -> None:
    """Two (caption, translation) pairs side by side: the experiment's before and after."""
    for column, (caption, text) in zip(st.columns(2), (left, right), strict=True):
        with column:
            if caption:
                st.caption(caption)
            big_text(text or _("(empty)"), size_rem)


def big_text(text: str, size_rem: float = 2.2) -> None:
    """Show text large; it is HTML-escaped, so typed text can never become markup."""
    safe = html.escape(" ".join(text.split())) or "&nbsp;"
    st.markdown(
        f"<div style='font-size:{size_rem}rem;font-weight:600;line-height:1.25;margin:0.2rem 0 0.8rem 0'>{safe}</div>",
        unsafe_allow_html=True,
    )


def page_css(presentation: bool, language: str) -> str:
    """The CSS every page writes: the app's (its busy sign's default in the run's language), a projector's in
    presentation mode, and CJK type in Chinese."""
    app = APP_CSS.replace(_css_string(WORKING), _css_string(_(WORKING)))
    return app + (PRESENTATION_CSS if presentation else "") + (CJK_CSS if language == "zh" else "")


def _css_string(text: str) -> str:
    """Text as a CSS string (a JSON string is one)."""
    return json.dumps(text, ensure_ascii=False)
