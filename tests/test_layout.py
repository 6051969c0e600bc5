"""The tree's import rules (docs/ARCHITECTURE.md, "Layout"): imports run one way, and viz/ can be
imported without torch."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# What each part of model/ may import from model/ (besides itself and errors.py).
ALLOWED = {
    "engine": set(),
    "results": {"engine"},
    "checkpoints": {"engine"},
    "inputs": {"engine"},
    "traces": {"engine", "results"},
    "generation": {"engine", "checkpoints", "results", "inputs", "traces"},
    "bundle": {"engine", "checkpoints", "results", "inputs", "traces", "generation"},
    "analysis": {"engine", "results", "bundle", "traces", "generation"},
    "training": {"engine", "checkpoints", "results", "bundle", "analysis", "generation"},
}


def _part(module: str) -> str:
    """model.engine.attention -> engine; model.bundle -> bundle; model -> ''."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _imports(path: Path) -> list[tuple[str, int]]:
    """(absolute module, line) of every import from model/ in a file of model/, lazy ones included."""
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    package = module.rpartition(".")[0] if path.name != "__init__.py" else module.removesuffix(".__init__")
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "model" or target.startswith("model."):
                names = (
                    [f"{target}.{a.name}" for a in node.names] if not node.module or target.count(".") < 1 else [target]
                )
                found += [(name, node.lineno) for name in names]
        elif isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names if a.name.startswith("model.")]
    return found


def test_imports_inside_model_run_one_way():
    wrong = []
    for path in sorted((ROOT / "model").rglob("*.py")):
        here = _part(".".join(path.relative_to(ROOT).with_suffix("").parts))
        if here not in ALLOWED:  # the package's front door and the command shims may import anything
            continue
        for target, line in _imports(path):
            there = _part(target)
            if there not in (here, "errors") and there not in ALLOWED[here]:
                wrong.append(f"{path.relative_to(ROOT)}:{line} ({here}) imports {target} ({there})")
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
