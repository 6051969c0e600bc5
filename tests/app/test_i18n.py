"""The interface's languages without a page: the catalog is whole and current, every message is marked as one
literal sentence, the terms follow the glossary, and the run's language reaches the words, the numbers, the
deferred messages and the shared figures' keys."""

from __future__ import annotations

import ast
import csv
import pickle
import re
import threading
from pathlib import Path

import pytest

import i18n
from i18n import N_, _, later, later_n, listing, n_, number, sentences, speaking
from i18n import catalog as po

ROOT = Path(__file__).resolve().parents[2]
MARKERS = {"_": 1, "N_": 1, "later": 1, "n_": 2, "later_n": 2}  # a marker -> how many literal strings it takes first


def _calls(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in MARKERS:
            yield node


def test_the_catalog_is_whole_and_compiled_from_todays_tree():
    """Every marked message has its Chinese, with the same {fields}; the .po is today's tree and the .mo its
    compilation (python -m i18n.catalog --check says what to run)."""
    assert po.main(["--check"]) == 0


def test_every_message_is_one_literal_sentence():
    """What babel cannot read (an f-string, a message built at run time) would never be translated: every
    marker's message is a literal string, but `_(NAME)` of a constant marked with N_ where it is written; and no
    marked message is glued to other text with +."""
    wrong = []
    for path in po.source_files():
        for call in _calls(path):
            first = call.args[: MARKERS[call.func.id]]
            named = (
                call.func.id == "_"
                and len(first) == 1
                and isinstance(first[0], (ast.Name, ast.Attribute, ast.Subscript))
            )
            if not named and (
                len(first) < MARKERS[call.func.id]
                or not all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in first)
            ):
                wrong.append(f"{path.relative_to(ROOT)}:{call.lineno} {call.func.id}() of a message built at run time")
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
                sides = (node.left, node.right)
                marked = [s for s in sides if isinstance(s, ast.Call) and getattr(s.func, "id", "") in ("_", "n_")]
                text = [s for s in sides if isinstance(s, (ast.JoinedStr, ast.Constant)) or s in marked]
                if marked and len(text) == 2:
                    wrong.append(f"{path.relative_to(ROOT)}:{node.lineno} a translated message glued to text")
    assert not wrong, "\n".join(wrong)


def test_babel_reads_every_marked_message():
    """A marker inside another marker's arguments is one babel does not extract (it would never be translated):
    every literal message the code marks is in the extracted catalog."""
    extracted = {m.id if isinstance(m.id, str) else m.id[0] for m in po.extracted() if m.id}
    missing = [
        f"{path.relative_to(ROOT)}:{call.lineno}: {call.args[0].value!r}"
        for path in po.source_files()
        for call in _calls(path)
        if call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)
        if call.args[0].value not in extracted
    ]
    assert not missing, "\n".join(missing)


def test_no_plural_is_made_by_hand():
    """Counts go through n_ (Chinese has one form, English two): no 's' * (n > 1) or 's' if n != 1 in the
    interface's code."""
    pattern = re.compile(r"""["']s["']\s*(\*|if\b)|["'](s are|s|es)["']\s+if\s+\w+""")
    found = [
        f"{path.relative_to(ROOT)}:{number_}: {line.strip()}"
        for folder in ("ui", "viz", "pages", "model")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for number_, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert not found, "\n".join(found)


def _glossary() -> list[tuple[str, str]]:
    with (ROOT / "i18n" / "glossary.tsv").open(encoding="utf-8") as handle:
        return [(row["english"], row["中文"]) for row in csv.DictReader(handle, delimiter="\t")]


# An English term, and the Chinese every translation of a message that uses it says (the glossary's).
TERMS = {
    r"\bcausal mask": "因果掩码",
    r"\bpadding mask": "填充掩码",
    r"\bcross-attention": "交叉注意力",
    r"\bself-attention": "自注意力",
    r"\bpositional encoding": "位置编码",
    r"\bencoder\b": "编码器",
    r"\bdecoder\b": "解码器",
    r"\bresidual": "残差",
    r"\bfeed-forward": "前馈",
    r"\bbeam search": "束搜索",
    r"\bpieces?\b": "词元",
    r"\bheatmaps?\b": "热力图",
    r"\btemperature": "温度",
    r"\bsampl": "采样",
    r"\bseeds?\b": "随机种子",
    r"\bmasked self-attention": "带掩码的自注意力",
    r"\bresidual stream": "残差流",
    r"\bresidual (connection|\(skip\))|\(residual\)|^residual$": "残差连接",
    r"\bbatch": "批次",
    r"\b(one|own|batched|the|teacher-forced) pass\b|\bencoder.s pass\b|\bforward pass": "前向传播",
    r"(?<!\{)\bblock\b": "模块",
    r"\bgold\b": "标准对齐",
    r"\balignment": "对齐",
    r"\bpool": "池化",
    r"\bvocabular": "词表",
    r"(?<!\{)\broles?\b": "角色",
    r"\bsource pieces?\b": "源句词元",
    r"\bstep t\b": "第 t",
    r"(?<!in )\bmemory\b": "编码器输出",
    r"\bwarm-?up": "预热",
    r"\bteacher[- ]forc": "教师强制",
    r"\blabel[- ]smooth": "标签平滑",
}
# Words the glossary does not use for its terms (a term is the same everywhere): 记忆 for the encoder's output
# (memory), 堆栈 for the encoder's or decoder's layers (a stack), and the words its one word for a thing replaced.
NOT_OURS = (
    "令牌",
    "符元",
    "译码器",
    "遮罩",
    "掩膜",
    "标记化",
    "位置嵌入编码",
    "记忆",
    "堆栈",
    "前向计算",
    "黄金对齐",
    "标准词对齐",
    "源词元",
)


def _translated() -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Every translated message of the catalog: its English (singular, plural) and its Chinese."""
    found = []
    for message in po.build():
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        if ids[0] and all(strings):
            found.append((ids, strings))
    return found


def test_the_terms_are_the_glossarys():
    for english, chinese in TERMS.items():
        assert any(re.search(english, e, re.I) and chinese in z for e, z in _glossary()), english
    wrong = []
    for ids, strings in _translated():
        for english, chinese in TERMS.items():
            if re.search(english, ids[0], re.I) and not all(chinese in s for s in strings):
                wrong.append(f"{ids[0]!r} -> {strings[0]!r}: {chinese} for {english}")
        wrong += [f"{ids[0]!r} -> {s!r}: {w}" for s in strings for w in NOT_OURS if w in s]
    assert not wrong, "\n".join(wrong[:40]) + f"\n({len(wrong)} in all)"


# A hover's or an axis's label 值 alone, before a plotly field ("值 %{z:.3f}", "值：%{y}"): on an attention page 值 is
# V, the value vectors; a number is 数值.
VALUE_ALONE = re.compile(r"(?<![\u4e00-\u9fff])值\s*[：:]?\s*%\{")


def test_a_number_in_a_hover_is_not_v():
    wrong = []
    for ids, strings in _translated():
        if ids[0] == "value" or "%{" in ids[0]:
            wrong += [f"{ids[0]!r} -> {s!r}" for s in strings if s == "值" or VALUE_ALONE.search(s)]
    assert not wrong, "\n".join(wrong)
    assert VALUE_ALONE.search("位置 %{y}<br>值 %{z:.3f}") and VALUE_ALONE.search("值：%{{z}}")
    assert not VALUE_ALONE.search("位置 %{y}<br>数值 %{z:.3f}")


def _emphasis(markdown, text: str, fill: str) -> tuple[int, int]:
    """How many bold and italic spans CommonMark (Streamlit's markdown) makes of `text`, its fields filled."""
    out = markdown.render(po.FIELD.sub(fill, text))
    return out.count("<strong>"), out.count("<em>")


def test_a_translations_markdown_is_drawn_as_the_englishs():
    """Bold and italics survive the translation: CommonMark does not close ** after full-width punctuation
    followed by a letter ("**标题：**正文" shows its stars), so each translation makes as many bold and italic
    spans as its English, whatever its fields hold."""
    from markdown_it import MarkdownIt

    markdown = MarkdownIt("commonmark")
    wrong = []
    for message in po.build():
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        if not ids[0] or "*" not in ids[0]:
            continue
        for string in strings:
            for fill in ("字", "a"):
                if _emphasis(markdown, string, fill) != _emphasis(markdown, ids[-1], fill):
                    wrong.append(f"{ids[0]!r} -> {string!r}")
                    break
    assert not wrong, "\n".join(wrong)


def test_a_message_is_said_in_the_runs_language():
    title = N_("Attention")
    assert _(title) == "Attention"
    with speaking("zh"):
        assert _(title) == "注意力"
        assert i18n.language() == "zh"
    assert i18n.language() == "en"
    with speaking("xx"):  # an unknown code is English
        assert _(title) == "Attention"


def test_numbers_lists_and_sentences_follow_the_language():
    assert number(1542144) == "1,542,144"
    assert number(0.456, 2) == "0.46"
    assert listing(["a", "b", "c"]) == "a, b, c"
    assert sentences("One.", "", "Two.") == "One. Two."
    with speaking("zh"):
        assert number(1542144) == "1,542,144"
        assert listing(["甲", "乙"]) == "甲、乙"
        assert sentences("一。", "二。") == "一。二。"


def test_a_count_takes_the_languages_plural():
    assert n_("{n} head", "{n} heads", 1) == "1 head"
    assert n_("{n} head", "{n} heads", 12) == "12 heads"
    assert n_("{n} head", "{n} heads", 1234) == "1,234 heads"


def test_a_deferred_message_says_itself_in_the_language_that_shows_it():
    """A warning made once (in the engine, in any thread) and kept in a shared cache reads in each viewer's
    language; as a str it is the English, and it survives a pickle (a checkpoint's card, a process pool)."""
    made: list[i18n.Later] = []
    thread = threading.Thread(target=lambda: made.append(later("Attention")))
    thread.start()
    thread.join()
    warning = made[0]
    assert warning == "Attention" and isinstance(warning, str)
    assert str(warning) == "Attention"
    with speaking("zh"):
        assert str(warning) == "注意力"
        assert f"{warning}" == "注意力"
        assert _("{x}", x=warning) == "注意力"
        assert str(pickle.loads(pickle.dumps(warning))) == "注意力"
    counted = later_n("{n} head", "{n} heads", 3)
    assert counted == "3 heads"


def test_the_browsers_locale_picks_the_language():
    assert i18n.from_locale("zh-CN") == "zh"
    assert i18n.from_locale("zh_Hant_TW") == "zh"
    assert i18n.from_locale("en-GB") == "en"
    assert i18n.from_locale(None) == "en"
    assert i18n.from_locale("fr") == "en"


def test_a_shared_figure_is_drawn_once_per_language():
    """The figures cache is shared by every session: an English figure is never shown to a Chinese page."""
    from ui.session.figures import shared
    from viz.style import Style

    def draw(style: Style):
        return style.figure(title=_("Attention"))

    english = shared(draw, Style())
    with speaking("zh"):
        chinese = shared(draw, Style())
        assert shared(draw, Style()) is chinese
    assert shared(draw, Style()) is english
    assert english.layout.title.text == "Attention" and chinese.layout.title.text == "注意力"


@pytest.mark.parametrize("code", sorted(i18n.LANGUAGES))
def test_every_language_has_its_catalog(code):
    if code == i18n.DEFAULT:
        return
    assert po.po_path(code).exists() and po.po_path(code).with_suffix(".mo").exists()
