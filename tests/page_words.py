"""What a person reads on a page run by AppTest, and the English sentences left in it (for the Chinese
interface, tests/app/test_i18n_pages.py): every text element, widget label, help, option and placeholder, table
header, and every chart's title, axis titles, legend, hover template and annotation. What the person typed,
the model's own pieces and output, model and file names and code are not the page's words and are left out."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator

from streamlit.testing.v1 import AppTest

from views.panels import PageView, Panel

# Four words of English in a row (a word: letters, maybe an apostrophe or a hyphen inside; a name of one
# capital letter and digits, L2 or H3, is not one), with spaces or light punctuation between them.
_WORD = r"[A-Za-z][a-z]*(?:['’-][A-Za-z]+)*"
ENGLISH = re.compile(rf"(?<![\w/.@-]){_WORD}(?:[ ,;:()]+{_WORD}){{3,}}(?![\w/@-])")
# Not the page's own words: code and paths, quoted text (the typed text, pieces and outputs are shown in
# quotes), addresses, markup, and plotly's hover fields.
_LEFT_OUT = [
    re.compile(r'<span title="[^"]*" style="background:[^>]*>[^<]*</span>'),  # a piece shaded by its weight
    re.compile(r"`[^`]*`"),
    re.compile(r"“[^”]*”|‘[^’]*’|«[^»]*»|「[^」]*」|\"[^\"]*\""),
    re.compile(r"https?://\S+|\b[\w.-]+\.(?:py|json|md|gguf|safetensors|html|png|svg)\b"),
    re.compile(r"<[^>]+>"),
    re.compile(r"%\{[^}]*\}|\$\w+"),
    re.compile(r"&\w+;"),
]


def _elements(at: AppTest, kind: str) -> list:
    try:
        return list(at.get(kind))
    except Exception:
        return []


def element_texts(at: AppTest) -> Iterator[str]:
    """Every text element's text, and every widget's label, help, placeholder and option labels."""
    for kind in (
        "title",
        "header",
        "subheader",
        "markdown",
        "caption",
        "info",
        "warning",
        "error",
        "success",
        "exception",
        "expander",
        "tab",
        "metric",
        "toast",
    ):
        for element in _elements(at, kind):
            if kind == "markdown" and element.value.startswith("<div style='font-size"):
                continue  # the model's output, large
            proto = element.proto
            for name in ("body", "label", "help", "value"):
                value = getattr(proto, name, None)
                if isinstance(value, str):
                    yield value
    for kind in (
        "button",
        "checkbox",
        "toggle",
        "radio",
        "selectbox",
        "multiselect",
        "slider",
        "select_slider",
        "text_input",
        "text_area",
        "number_input",
        "download_button",
        "segmented_control",
        "pills",
        "button_group",
        "color_picker",
        "date_input",
        "time_input",
        "chat_input",
        "feedback",
    ):
        for widget in _elements(at, kind):
            proto = widget.proto
            for name in ("label", "help", "placeholder"):
                value = getattr(proto, name, None)
                if isinstance(value, str):
                    yield value
            options = getattr(proto, "options", None)
            if options is not None and kind not in ("selectbox",):  # a selectbox's options: sentences, models
                yield from (str(o) for o in options)
    for frame in _elements(at, "dataframe"):
        try:
            yield from (str(c) for c in frame.value.columns)
        except Exception:
            continue


def chart_texts(at: AppTest) -> Iterator[str]:
    """Every chart's title, axis and colour-bar titles, trace names, hover templates and annotations."""
    for chart in _elements(at, "plotly_chart"):
        spec = json.loads(chart.proto.spec)
        yield from layout_texts(spec.get("layout", {}))
        for trace in spec.get("data", []):
            for name in ("name", "hovertemplate", "legendgrouptitle"):
                value = trace.get(name)
                if isinstance(value, str):
                    yield value
                elif isinstance(value, dict):
                    yield value.get("text", "")
            bar = (trace.get("colorbar") or {}).get("title") or {}
            yield bar.get("text", "") if isinstance(bar, dict) else str(bar)


def layout_texts(layout: dict) -> Iterator[str]:
    """A figure layout's words: its title, axis and colour-bar titles, annotations and menu labels."""
    title = layout.get("title")
    if isinstance(title, dict):
        yield title.get("text", "")
    for key, value in layout.items():
        if re.fullmatch(r"[xy]axis\d*|coloraxis", key) and isinstance(value, dict):
            axis_title = value.get("title")
            if isinstance(axis_title, dict):
                yield axis_title.get("text", "")
            bar = (value.get("colorbar") or {}).get("title")
            if isinstance(bar, dict):
                yield bar.get("text", "")
    for note in layout.get("annotations", []) or []:
        yield note.get("text", "")
    for menu in layout.get("updatemenus", []) or []:
        for button in menu.get("buttons", []):
            yield button.get("label", "")


def spec_texts(spec: dict) -> Iterator[str]:
    """Every word of one plotly figure's JSON: its layout's (layout_texts), its traces' names and hover templates."""
    yield from layout_texts(spec.get("layout", {}))
    for trace in spec.get("data", []):
        for name in ("name", "hovertemplate"):
            if isinstance(trace.get(name), str):
                yield trace[name]


def figure_texts(panel: Panel) -> list[str]:
    """A panel's figure's words (spec_texts), none for a panel without a figure."""
    return list(spec_texts(json.loads(panel.figure.to_json()))) if panel.figure is not None else []


def panel_keys(shown: PageView) -> list[str]:
    """The panels' keys, in order."""
    return [panel.key for panel in shown]


def panel_words(shown: PageView, outputs: bool = True) -> str:
    """Every word the panels say (headings, words, numbers and captions), without markdown's escaping
    backslashes; with `outputs` False, not what the model read and wrote (its outputs said large, the text it read
    shown as typed: st.text and st.code in the app, which english_on_page leaves out too)."""
    return "\n".join(f"{p.heading}\n{_said_text(p, outputs)}\n{p.metric}\n{p.caption}" for p in shown).replace("\\", "")


def _said_text(panel: Panel, outputs: bool) -> str:
    """A panel's words, unless they are the model's own (with `outputs` False)."""
    return "" if not outputs and (panel.large or panel.tone in ("code", "plain")) else panel.text


# Model names that read like English words (the shipped model's card names it so).
MODEL_NAMES = ("Transformer Anatomy default model",)


def english_sentences(texts: Iterable[str], typed: Iterable[str] = ()) -> list[str]:
    """The runs of four or more English words in `texts`, once each, the typed texts and what is left out
    (code, quotes, addresses, markup) taken away first."""
    left = [t for t in (*typed, *MODEL_NAMES) if t]
    found: dict[str, None] = {}
    for text in texts:
        text = text.replace("\\", "")
        for own in left:
            text = text.replace(own, " ")
        for pattern in _LEFT_OUT:
            text = pattern.sub(" ", text)
        for match in ENGLISH.finditer(text):
            found[match.group(0)] = None
    return list(found)


def english_on_page(at: AppTest, typed: Iterable[str] = ()) -> list[str]:
    """The English sentences a person reads on the page (see english_sentences)."""
    return english_sentences([*element_texts(at), *chart_texts(at)], typed)
