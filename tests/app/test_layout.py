"""The tree's import rules (docs/ARCHITECTURE.md, "Layout"): imports run one way, and viz/ can be
imported without torch."""

from __future__ import annotations

import ast
import io
import subprocess
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# What each part of model/ may import from model/ (besides itself and errors.py).
ALLOWED = {
    "engine": set(),
    "results": {"engine"},
    "checkpoints": {"engine"},
    "inputs": {"engine"},
    "prompts": {"engine", "checkpoints", "inputs"},
    "traces": {"engine", "results"},
    "generation": {"engine", "checkpoints", "results", "inputs", "prompts", "traces"},
    "bundle": {"engine", "checkpoints", "results", "inputs", "traces", "generation"},
    "analysis": {"engine", "results", "bundle", "traces", "generation"},
    "training": {"engine", "checkpoints", "results", "bundle", "analysis", "generation"},
}


def _part(module: str) -> str:
    """model.engine.attention -> engine; model.bundle -> bundle; model -> ''."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_imports_inside_model_run_one_way():
    modules = _tree_modules()
    wrong = []
    for name, targets in _arrows(modules).items():
        here = _part(name)
        if not name.startswith("model.") or here not in ALLOWED:  # the front door and the command shims: anything
            continue
        for target, line in targets.items():
            there = _part(target) if target.startswith("model") else here
            if there not in (here, "errors") and there not in ALLOWED[here]:
                wrong.append(f"{modules[name].relative_to(ROOT)}:{line} ({here}) imports {target} ({there})")
    assert not wrong, "\n".join(wrong)


def test_viz_and_the_results_import_no_torch():
    code = (
        "import importlib, pkgutil, sys, viz, model\n"
        "for m in pkgutil.iter_modules(viz.__path__): importlib.import_module('viz.' + m.name)\n"
        "from model import Trace, TranslationResult, Interventions\n"
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_views_import_no_streamlit():
    """A notebook imports views (and every page's view) without Streamlit."""
    code = (
        "import importlib, pkgutil, sys, views\n"
        "for m in pkgutil.iter_modules(views.__path__): importlib.import_module('views.' + m.name)\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] == 'streamlit'))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


MODEL_KINDS = ("encoder", "decoder", "encoder-decoder")


def test_no_code_compares_a_kind_or_family_string():
    """What a model has is asked of `bundle.capabilities`; only checkpoints/ maps families to it."""
    found = []
    for folder in ("model", "ui", "viz", "pages"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.parent.name in ("checkpoints", "families"):
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if (
                    isinstance(node, ast.Compare)
                    and isinstance(node.left, ast.Attribute)
                    and any(
                        isinstance(c, ast.Constant)
                        and (node.left.attr == "family" or (node.left.attr == "kind" and c.value in MODEL_KINDS))
                        for c in node.comparators
                    )
                ):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, found


FOLDERS = ("i18n", "model", "viz", "views", "ui", "pages")
# The top-level folders in their order: each imports only from the ones before it (i18n, the languages, from none).
ORDER = {"i18n": -1, "model": 0, "viz": 1, "views": 2, "ui": 3, "pages": 4}
# What each package of ui/ may import from ui/ (ui/__init__.py says why).
UI_ALLOWED = {
    "session": set(),
    "room": {"session"},
    "page": {"session", "room"},
    "parts": {"session", "page"},
}
# Lines a reader must hold: lines with code or comments, outside string literals (messages and docstrings aside)
MOST_LINES_IN_A_FILE = 350
MOST_LINES_IN_A_FUNCTION = 60
MOST_LINES_IN_A_PAGE = 250
LONG_FILES_ALLOWED = ("model/training/corpus/",)  # the generated fragment's word lists and rules


def _module_name(path: Path) -> str:
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return name.removesuffix(".__init__")


def _tree_modules() -> dict[str, Path]:
    return {_module_name(p): p for folder in FOLDERS for p in sorted((ROOT / folder).rglob("*.py"))}


def _arrows(modules: dict[str, Path]) -> dict[str, dict[str, int]]:
    """module -> {module of the tree it imports: line}, lazy and type-checking imports included: `from a
    import b` names the module a.b when there is one, else a."""
    arrows: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    whole = f"{target}.{alias.name}"
                    hit = whole if whole in modules else target if target in modules else None
                    if hit and hit != name:
                        found.setdefault(hit, node.lineno)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules and alias.name != name:
                        found.setdefault(alias.name, node.lineno)
        arrows[name] = found
    return arrows


def _circles(arrows: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in arrows:
        if root in index:
            continue
        work = [(root, iter(arrows[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(arrows.get(target, {}))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))
    return groups


def test_the_circle_finder_finds_a_circle():
    assert _circles({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b": 1}, "b": {}}) == []


def test_no_import_circle_in_the_tree():
    assert _circles(_arrows(_tree_modules())) == []


def _against_the_order(here: list[str], there: list[str]) -> bool:
    """Whether module `here` (split at its dots) may not import module `there`."""
    if ORDER[there[0]] != ORDER[here[0]]:
        return ORDER[there[0]] > ORDER[here[0]]
    if here[0] != "ui" or len(here) < 2 or len(there) < 2 or here[1] == there[1]:
        return False
    return here[1] not in UI_ALLOWED or there[1] not in UI_ALLOWED[here[1]]


def test_the_order_refuses_an_arrow_upwards():
    assert _against_the_order(["model", "bundle"], ["ui", "session", "engine"])
    assert _against_the_order(["ui", "session", "engine"], ["ui", "page", "start"])
    assert _against_the_order(["ui", "parts", "sinks"], ["ui", "room", "presenter"])
    assert not _against_the_order(["ui", "page", "start"], ["ui", "room", "presenter"])
    assert not _against_the_order(["pages", "2_attention"], ["ui", "room", "presenter"])
    assert _against_the_order(["views", "attention"], ["ui", "page", "start"])
    assert _against_the_order(["viz", "attention"], ["views", "panels"])
    assert not _against_the_order(["ui", "page", "start"], ["views", "scene"])


def test_imports_between_the_top_folders_and_inside_ui_run_one_way():
    modules = _tree_modules()
    wrong = [
        f"{modules[name].relative_to(ROOT)}:{line} imports {target}"
        for name, targets in _arrows(modules).items()
        for target, line in targets.items()
        if _against_the_order(name.split("."), target.split("."))
    ]
    assert not wrong, "\n".join(wrong)


def test_every_package_of_ui_says_what_it_holds_and_may_import():
    for package in UI_ALLOWED:
        doc = ast.get_docstring(ast.parse((ROOT / "ui" / package / "__init__.py").read_text())) or ""
        assert "Imports" in doc, package


_NOT_HELD = {tokenize.STRING, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}


def held_lines(text: str) -> set[int]:
    """The numbers of the lines a reader must hold: each line with a token that is not a string literal (an
    f-string's parts are tokens of their own: its code counts), blank lines and string-only lines left out."""
    held: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type not in _NOT_HELD:
            held.update(range(token.start[0], token.end[0] + 1))
    return held


def test_held_lines_leave_out_strings_and_blank_lines():
    text = (
        'def f():\n    """A docstring\n    over two lines."""\n\n'
        '    return _(\n        "a message "\n        "in two parts"\n    )\n'
    )
    assert held_lines(text) == {1, 5, 8}


def test_files_and_functions_fit_in_a_head():
    long_files, long_functions = [], []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            where = path.relative_to(ROOT).as_posix()
            text = path.read_text()
            held = held_lines(text)
            most = MOST_LINES_IN_A_PAGE if folder == "pages" else MOST_LINES_IN_A_FILE
            if len(held) > most and not where.startswith(LONG_FILES_ALLOWED):
                long_files.append(f"{where}: {len(held)} lines of code (at most {most})")
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno:
                    lines = sum(1 for line in held if node.lineno <= line <= node.end_lineno)
                    if lines > MOST_LINES_IN_A_FUNCTION:
                        long_functions.append(f"{where}:{node.lineno} {node.name}: {lines} lines of code")
    assert not long_files, "\n".join(long_files)
    assert not long_functions, "\n".join(long_functions)
