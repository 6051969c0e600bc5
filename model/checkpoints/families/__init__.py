"""Hugging Face checkpoint families, each a small converter onto the one Transformer.

A family module maps the checkpoint's config.json onto `ModelConfig` (`model_config`), its
parameter names onto ours (`rename`), and reads its tokenizer files into a `Vocabulary`
(`vocabulary`, `tokenizer_files`). Everything else (weights, checks, the card) is shared here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import ModuleType

import torch

from i18n import later

from ...errors import CheckpointError
from ..record import Checkpoint
from ..weights import build_model, fingerprint, read_tensors, weight_files
from . import bert, gemma3_text, gpt2, gpt_neox, llama, marian, qwen2, qwen3, t5

FAMILIES: dict[str, ModuleType] = {
    "marian": marian,
    "bert": bert,
    "t5": t5,
    "gpt2": gpt2,
    "llama": llama,
    "qwen2": qwen2,
    "qwen3": qwen3,
    "gemma3_text": gemma3_text,
    "gpt_neox": gpt_neox,
}
# said when shown (a Later)
SUPPORTED = later(
    "marian (Marian MT, e.g. Helsinki-NLP/opus-mt-en-fr), t5 (T5 and flan-t5), gpt2 (GPT-2, distilgpt2), "
    "llama (SmolLM2, TinyLlama), qwen2 (Qwen2.5), qwen3 (Qwen3), gemma3_text (Gemma 3 270M), "
    "gpt_neox (Pythia) and bert (BERT, MiniLM and other BERT encoders)"
)
GENERATION = "generation_config.json"


def load_family(
    path: Path,
    hf_config: dict,
    identity: str | None = None,
    tensors: dict[str, torch.Tensor] | None = None,
    ours: dict[str, torch.Tensor] | None = None,
) -> Checkpoint:
    """Load a Hugging Face directory whose config.json names its model_type. Its weights come from its
    safetensors files, else from `tensors` (under the family's names) or `ours` (under ours, laid out as
    a loaded model holds them: a weights image); `identity`: the checkpoint id when the caller knows it
    already (a GGUF file's hash), instead of hashing the folder's files."""
    model_type = hf_config.get("model_type")
    if not isinstance(model_type, str) or model_type not in FAMILIES:
        raise CheckpointError(
            later(
                "Cannot open the checkpoint at {path}: model_type {model_type} is not a supported family. "
                "Supported: {supported}.",
                path=str(path),
                model_type=repr(model_type),
                supported=SUPPORTED,
            )
        )
    family = FAMILIES[model_type]
    generation = _optional_json(path / GENERATION)
    cfg = family.model_config(hf_config, path)
    vocab = family.vocabulary(path, hf_config, generation)
    if vocab.vocab_size > cfg.vocab_size:
        raise CheckpointError(
            later(
                "Cannot open the checkpoint at {path}: the tokenizer has {ids} ids but the model only {size}.",
                path=str(path),
                ids=vocab.vocab_size,
                size=cfg.vocab_size,
            )
        )
    files = weight_files(path) if tensors is None and ours is None else []
    state = ours if ours is not None else family.rename(tensors if tensors is not None else read_tensors(files), path)
    stored = sorted({str(t.dtype).removeprefix("torch.") for t in state.values() if t.dtype.is_floating_point})
    if cfg.output_tied:
        state.pop("generator.weight", None)  # a saved copy of the tied head: the embedding is the head
    model = build_model(cfg, state, path)  # float32 whatever the files hold (bfloat16: twice their bytes)
    del state
    card = _card(
        path, hf_config, model_type, sum(p.numel() for p in model.parameters()), sum(f.stat().st_size for f in files)
    )
    card["stored_as"] = (
        later("{types} and {last}", types=" and ".join(stored[:-1]), last=stored[-1])
        if len(stored) > 1
        else "".join(stored) or "float32"
    )
    card["memory_bytes"] = sum(p.numel() * p.element_size() for p in model.parameters())
    identity = identity or fingerprint([path / "config.json", *family.tokenizer_files(path), *files])
    return Checkpoint(
        path,
        cfg,
        model,
        vocab,
        card,
        identity,
        model_type,
        generation,
        family.pooling(path) if hasattr(family, "pooling") else "mean",
        task_prefix=family.task_prefix(hf_config) if hasattr(family, "task_prefix") else "",
        chat=family.chat_template(path, vocab) if hasattr(family, "chat_template") else None,
    )


def _optional_json(file: Path) -> dict:
    if not file.is_file():
        return {}
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(
            later(
                "Cannot open the checkpoint at {path}: {name} is not readable JSON ({problem}).",
                path=str(file.parent),
                name=file.name,
                problem=str(exc),
            )
        ) from None
    return data if isinstance(data, dict) else {}


def _readme_facts(path: Path) -> dict[str, str]:
    """The title and licence a model's README.md states (its front matter and first heading)."""
    try:
        text = (path / "README.md").read_text(encoding="utf-8")[:20_000]
    except (OSError, UnicodeDecodeError):
        return {}
    facts = {}
    licence = re.search(r"^license:\s*(\S+)", text, flags=re.MULTILINE)
    if licence:
        facts["licence"] = licence.group(1)
    title = re.search(r"^#\s+(.+)$", text, flags=re.MULTILINE)
    if title:
        facts["name"] = title.group(1).strip()[:80]
    return facts


def _card(path: Path, hf_config: dict, model_type: str, n_params: int, weight_bytes: int) -> dict:
    facts = _readme_facts(path)
    return {
        "name": facts.get("name") or path.name,
        "family": model_type,
        "source": str(hf_config.get("_name_or_path") or path.name),
        "path": str(path),
        "licence": facts.get("licence", later("not stated in the checkpoint")),
        "architectures": hf_config.get("architectures", []),
        "parameters": n_params,
        "weights_bytes": weight_bytes,
    }
