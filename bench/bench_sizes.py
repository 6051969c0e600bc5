"""What today's small decoders weigh, computed here from their real shapes (docs/models.md, "What they weigh"):

- each model's config.json values are written below, with the model card or config they come from
  (transformers' own config classes' defaults are other models' sizes, so none is taken from them);
- they go through this project's own family converter (`model.checkpoints.families.<type>.model_config`)
  into our engine's ModelConfig, whose Transformer is built on the meta device (no memory) and its
  parameters counted, a tied matrix once; transformers' own model of the same config, also built on
  the meta device, is counted beside it as a check;
- bytes: 2 per weight in the files (bfloat16; Pythia's float16), 4 per weight in memory (the app loads
  float32 on the CPU);
- with --rss FAMILY ..., the resident memory of a fresh process after `load_bundle` of a random float32
  folder at that model's shapes (written by transformers with the tiny test tokenizer, as bench_real's
  parts g and h build them), against the float32 bytes of its weights, and after a 20-piece continuation.

  python bench/bench_sizes.py [--rss llama qwen2 ...] [--keep models/sizes-random]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from functools import partial
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch
from bench_real import _ENGINES, _built, rss_stages, weight_bytes
from common import ROOT

sys.path.insert(0, str(ROOT))

from model.checkpoints.families import FAMILIES
from model.engine.transformer import Transformer


def _every_layer(full_every: int, layers: int) -> list[str]:
    return ["full_attention" if (i + 1) % full_every == 0 else "sliding_attention" for i in range(layers)]


# config.json of each model on the hub (the values that set a parameter's shape, and the few options that add
# parameters: biases, q/k norms, a head of its own, Gemma's four norms)
REAL = {
    # HuggingFaceTB/SmolLM2-135M (and -Instruct) config.json: LlamaForCausalLM
    "SmolLM2-135M (-Instruct)": (
        "llama",
        dict(
            hidden_size=576,
            intermediate_size=1536,
            num_hidden_layers=30,
            num_attention_heads=9,
            num_key_value_heads=3,
            vocab_size=49152,
            max_position_embeddings=8192,
            rope_theta=100000.0,
            rms_norm_eps=1e-5,
            tie_word_embeddings=True,
            hidden_act="silu",
        ),
        "bfloat16",
    ),
    # Qwen/Qwen2.5-0.5B (and -Instruct) config.json: Qwen2ForCausalLM, q/k/v biases in its modelling code
    "Qwen2.5-0.5B (-Instruct)": (
        "qwen2",
        dict(
            hidden_size=896,
            intermediate_size=4864,
            num_hidden_layers=24,
            num_attention_heads=14,
            num_key_value_heads=2,
            vocab_size=151936,
            max_position_embeddings=32768,
            rope_theta=1000000.0,
            rms_norm_eps=1e-6,
            tie_word_embeddings=True,
            use_sliding_window=False,
            hidden_act="silu",
        ),
        "bfloat16",
    ),
    # Qwen/Qwen3-0.6B config.json and model card ("Number of Attention Heads (GQA): 16 for Q and 8 for KV",
    # 28 layers, "Number of Parameters (Non-Embedding): 0.44B"): head_dim 128 of its own, q/k norms, tied
    "Qwen3-0.6B": (
        "qwen3",
        dict(
            hidden_size=1024,
            intermediate_size=3072,
            num_hidden_layers=28,
            num_attention_heads=16,
            num_key_value_heads=8,
            head_dim=128,
            vocab_size=151936,
            max_position_embeddings=40960,
            rope_theta=1000000.0,
            rms_norm_eps=1e-6,
            tie_word_embeddings=True,
            use_sliding_window=False,
            hidden_act="silu",
        ),
        "bfloat16",
    ),
    # google/gemma-3-270m (and -it) config.json: Gemma3ForCausalLM, 18 layers of which every sixth sees every
    # position and the others 512 back, head_dim 256, query_pre_attn_scalar 256, tied
    "gemma-3-270m (-it)": (
        "gemma3_text",
        dict(
            hidden_size=640,
            intermediate_size=2048,
            num_hidden_layers=18,
            num_attention_heads=4,
            num_key_value_heads=1,
            head_dim=256,
            vocab_size=262144,
            max_position_embeddings=32768,
            query_pre_attn_scalar=256,
            sliding_window=512,
            layer_types=_every_layer(6, 18),
            rope_theta=1000000.0,
            rope_local_base_freq=10000.0,
            rms_norm_eps=1e-6,
            tie_word_embeddings=True,
            hidden_activation="gelu_pytorch_tanh",
        ),
        "bfloat16",
    ),
    # EleutherAI/pythia-160m config.json: GPTNeoXForCausalLM, rotary_pct 0.25, parallel residual, its own head
    "pythia-160m": (
        "gpt_neox",
        dict(
            hidden_size=768,
            intermediate_size=3072,
            num_hidden_layers=12,
            num_attention_heads=12,
            vocab_size=50304,
            max_position_embeddings=2048,
            rotary_pct=0.25,
            rotary_emb_base=10000,
            layer_norm_eps=1e-5,
            use_parallel_residual=True,
            tie_word_embeddings=False,
            hidden_act="gelu",
        ),
        "float16",
    ),
}
# the random float32 folders for --rss: make_decoder_dir's `shapes` (the config above, in transformers 5's form)
RSS_SHAPES = {
    "llama": "SmolLM2-135M (-Instruct)",
    "qwen2": "Qwen2.5-0.5B (-Instruct)",
    "qwen3": "Qwen3-0.6B",
    "gemma3_text": "gemma-3-270m (-it)",
    "gpt_neox": "pythia-160m",
}


def ours(model_type: str, hf: dict) -> tuple[int, int, object]:
    """(parameters, of them in the embedding, the ModelConfig) of our engine at `hf`'s shapes."""
    cfg = FAMILIES[model_type].model_config({"model_type": model_type, **hf}, Path(model_type))
    with torch.device("meta"):
        model = Transformer(cfg, init_weights=False)
    params = sum(p.numel() for p in model.parameters())  # parameters() yields a tied matrix once
    return params, model.tgt_embed.token.weight.numel(), cfg


def theirs(model_type: str, hf: dict) -> int:
    """Parameters of transformers' own causal LM of the same config (built on the meta device)."""
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.for_model(model_type, **hf)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    return sum(p.numel() for p in model.parameters())


def _shapes(model_type: str, hf: dict) -> dict:
    """`hf` in the form make_decoder_dir's config classes take (transformers 5's rope_parameters)."""
    shapes = dict(hf)
    for key in ("rope_theta", "rope_local_base_freq", "rotary_pct", "rotary_emb_base"):
        shapes.pop(key, None)
    if model_type == "gemma3_text":
        shapes["rope_parameters"] = {
            "sliding_attention": {"rope_type": "default", "rope_theta": hf["rope_local_base_freq"]},
            "full_attention": {"rope_type": "default", "rope_theta": hf["rope_theta"]},
        }
    elif model_type == "gpt_neox":
        shapes["rope_parameters"] = {
            "rope_type": "default",
            "rope_theta": float(hf["rotary_emb_base"]),
            "partial_rotary_factor": hf["rotary_pct"],
        }
    else:
        shapes["rope_parameters"] = {"rope_type": "default", "rope_theta": hf["rope_theta"]}
    return shapes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rss", nargs="*", default=[], choices=sorted(RSS_SHAPES), help="families to measure")
    parser.add_argument("--keep", type=Path, help="write (and reuse) the random folders under this directory")
    args = parser.parse_args()

    print("| model | parameters | of them the embedding | files | float32 in memory | transformers' count |")
    print("|---|---|---|---|---|---|")
    for name, (model_type, hf, stored) in REAL.items():
        params, embedding, cfg = ours(model_type, hf)
        reference = theirs(model_type, hf)
        files = 2 * params
        print(
            f"| {name} | {params:,} | {embedding:,} | {files:,} B ({stored}) | {4 * params:,} B | "
            f"{reference:,}{'' if reference == params else ' (differs)'} |"
        )
        print(
            f"|   | {cfg.n_decoder_layers} layers, d_model {cfg.d_model}, {cfg.n_heads} query heads over "
            f"{cfg.kv_heads} key/value heads of width {cfg.d_k}, d_ff {cfg.d_ff}, windows "
            f"{sorted(set(cfg.windows)) or 'none'}, tied output {cfg.output_tied} |  |  |  |  |"
        )

    if not args.rss:
        return
    from hf_fixtures import make_decoder_dir

    root = args.keep or Path(tempfile.mkdtemp(prefix="anatomy-sizes-"))
    print("\n| model | float32 weight bytes | resident growth at load_bundle | ratio | after a 20-piece continuation |")
    print("|---|---|---|---|---|")
    for model_type in args.rss:
        name = RSS_SHAPES[model_type]
        _, hf, _ = REAL[name]
        folder = root / f"{model_type}-random"
        _built(folder, partial(make_decoder_dir, family=model_type, shapes=_shapes(model_type, hf)))
        weights = weight_bytes(folder)
        _ENGINES.setdefault((model_type, "ours"), _ENGINES["llama", "ours"])
        imported, loaded, ran = rss_stages(folder, "ours", model_type)
        grown, after = loaded[0] - imported[0], ran[0] - imported[0]
        print(
            f"| {name} | {weights:,} | {grown:,} | {grown / weights:.2f} | {after:,} ({after / weights:.2f}) |",
            flush=True,
        )


if __name__ == "__main__":
    main()
