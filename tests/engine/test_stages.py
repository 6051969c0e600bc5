"""Hook point names live in one module (model/engine/stages.py): every name a run records is one it
builds, and no other module spells one."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import torch

from model import Interventions, load_bundle
from model.engine import stages
from model.engine.config import ModelConfig
from model.engine.hooks import recording
from model.engine.transformer import Transformer

ROOT = Path(__file__).resolve().parents[2]
SPELLED = re.compile(r"hook_[a-z]|_attn\.|\.layers\.\d|^(src|tgt)_embed\b|^(encoder|decoder)\.(layers|hook)")


def _names_of_a_run(config: ModelConfig) -> list[str]:
    torch.manual_seed(0)
    model = Transformer(config).eval()
    with torch.inference_mode(), recording() as recorder:
        model(
            torch.tensor([[5, 6, 7, 2]]),
            torch.tensor([[1, 8, 9]]) if config.kind != "encoder" else None,
            Interventions(),
        )
    return list(recorder.tensors)


@pytest.mark.parametrize("changes", [{}, {"norm_first": True}, {"embed_norm": True, "token_types": 2}])
def test_every_recorded_name_parses_and_is_built_back(changes):
    base = ModelConfig(
        vocab_size=50, d_model=16, n_heads=2, d_ff=32, n_encoder_layers=2, n_decoder_layers=2, dropout=0.0, max_len=16
    )
    names = _names_of_a_run(ModelConfig(**{**base.to_dict(), **changes}))
    for name in names:
        assert stages.build(stages.parse(name)) == name
    assert stages.layers(names, "encoder") == 2 and stages.layers(names, "decoder") == 2


def test_the_shipped_models_names_are_all_known():
    trace = load_bundle().translate("The cat sleeps.").trace
    parsed = [stages.parse(name) for name, _ in trace.stages]
    assert {(s.stack, s.kind) for s in parsed if s.kind} == set(stages.BLOCKS)
    assert [s.name for s in parsed if s.source_rows][:2] == [stages.embedding("ids"), stages.embedding("token")]
    with pytest.raises(ValueError):
        stages.parse("encoder.layers.x.self_attn.hook_pattern")


def _spelled_paths(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and SPELLED.search(node.value)
    ]


def test_no_module_but_stages_spells_a_hook_point():
    spelled = []
    for folder in ("model", "ui", "viz", "pages", "bench", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path != ROOT / "model" / "engine" / "stages.py" and not {"families", "gguf"} & set(path.parts):
                spelled += _spelled_paths(path)  # families and GGUF files map parameter names, not hook points
    assert not spelled, "\n".join(spelled)
