"""Tiny random Hugging Face checkpoint directories, written by `transformers` itself (offline).

Each builder trains a tiny tokenizer in-process on ENGLISH (and FRENCH), builds a small random
model under a seed, randomizes every weight that default init leaves trivial (LayerNorms and T5's
RMS norms, zero biases, the pad embedding row, Marian's final_logits_bias) so that a converter
that forgets a weight fails, and saves everything with `save_pretrained`, so the files have the
real layouts. Where transformers 5.24 writes a file unlike the real checkpoint, the builder puts
it back as the hub has it (T5's config.json, GPT-2's model.safetensors, T5's spiece.model).
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import io
import json
import tempfile
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:  # transformers is imported lazily: it is slow to import
    from tokenizers import Tokenizer
    from transformers import (
        BertConfig,
        BertModel,
        GPT2Config,
        GPT2LMHeadModel,
        MarianConfig,
        MarianMTModel,
        MarianTokenizer,
        PreTrainedTokenizerBase,
        T5Config,
        T5ForConditionalGeneration,
        T5Tokenizer,
    )

ENGLISH: list[str] = [
    "The cat sleeps.",
    "The dog eats an apple.",
    "I see the white bird.",
    "The small girl sees a white bird.",
    "My sisters arrived yesterday.",
    "Do you see the cat?",
    "I do not have a car.",
    "The teacher gives the answer to the students.",
    "We are happy.",
    "I drink water every morning.",
    "The old man reads a book in the garden.",
    "They will go to the school tomorrow.",
    "She is writing a long letter to her mother.",
    "Where is the train station?",
    "It is raining in Paris today.",
    "The children are playing in the park.",
    "He bought three red apples at the market.",
    "Can you help me, please?",
    "Our house is near the river.",
    "The weather was cold last winter.",
    "I would like a cup of coffee.",
    "The doctor works at the hospital.",
    "Why are you laughing?",
    "My brother plays the guitar very well.",
    "The shop opens at nine o'clock.",
    "We walked along the beach for hours.",
    "This book is more interesting than that film.",
    "The students listened carefully to the lesson.",
    "Please close the window, it's cold.",
    "The bird sings in the tree.",
    "They have never visited London.",
    "I lost my keys again!",
    "The soup is too hot to eat.",
    "Her friends are waiting outside.",
    "The little boy drew a blue horse.",
    "Tomorrow we will cook dinner together.",
    "Is the museum open on Sundays?",
    "The cats and the dogs are sleeping.",
    "He runs faster than his father.",
    "The sun rises in the east.",
]

FRENCH: list[str] = [
    "Le chat dort.",
    "Le chien mange une pomme.",
    "Je vois l'oiseau blanc.",
    "La petite fille voit un oiseau blanc.",
    "Mes sœurs sont arrivées hier.",
    "Est-ce que vous voyez le chat ?",
    "Je n'ai pas de voiture.",
    "Le professeur donne la réponse aux étudiants.",
    "Nous sommes heureux.",
    "Je bois de l'eau tous les matins.",
    "Le vieil homme lit un livre dans le jardin.",
    "Ils iront à l'école demain.",
    "Elle écrit une longue lettre à sa mère.",
    "Où est la gare ?",
    "Il pleut à Paris aujourd'hui.",
    "Les enfants jouent dans le parc.",
    "Il a acheté trois pommes rouges au marché.",
    "Pouvez-vous m'aider, s'il vous plaît ?",
    "Notre maison est près de la rivière.",
    "Il faisait froid l'hiver dernier.",
    "Je voudrais une tasse de café.",
    "Le médecin travaille à l'hôpital.",
    "Pourquoi riez-vous ?",
    "Mon frère joue très bien de la guitare.",
    "Le magasin ouvre à neuf heures.",
    "Nous avons marché sur la plage pendant des heures.",
    "Ce livre est plus intéressant que ce film.",
    "Les étudiants ont écouté la leçon attentivement.",
    "Fermez la fenêtre, s'il vous plaît, il fait froid.",
    "L'oiseau chante dans l'arbre.",
    "Ils n'ont jamais visité Londres.",
    "J'ai encore perdu mes clés !",
    "La soupe est trop chaude pour être mangée.",
    "Ses amies attendent dehors.",
    "Le petit garçon a dessiné un cheval bleu.",
    "Demain, nous cuisinerons le dîner ensemble.",
    "Le musée est-il ouvert le dimanche ?",
    "Les chats et les chiens dorment.",
    "Il court plus vite que son père.",
    "Le soleil se lève à l'est.",
]

MARIAN_SPM_VOCAB = 96
BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
T5_SPM_VOCAB = 120
T5_EXTRA_IDS = 4
T5_TASK_PREFIX = "translate English to French: "
GPT2_BPE_VOCAB = 300
GPT2_EOT = "<|endoftext|>"


def _quiet_transformers() -> None:
    """Lower transformers' logging to errors (process-wide) and hide its progress bars."""
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


# ---------------------------------------------------------------------------------------------
# weights


def _randomize_trivial(
    model: torch.nn.Module, generator: torch.Generator, pad_rows: Iterable[tuple[torch.nn.Embedding, int]] = ()
) -> None:
    """Give random values to every parameter that default init leaves constant (LayerNorm
    weights and biases, zero Linear biases), and to the listed embeddings' pad rows."""
    with torch.no_grad():
        for _, param in model.named_parameters():
            if param.numel() > 1 and bool((param == param.flatten()[0]).all()):
                noise = 0.1 * torch.randn(param.shape, generator=generator)
                if float(param.flatten()[0]) == 1.0:  # a LayerNorm weight
                    param.copy_(1.0 + noise)
                else:  # a LayerNorm or Linear bias
                    param.copy_(noise)
        for embedding, row in pad_rows:
            std = float(embedding.weight.std())
            embedding.weight[row] = std * torch.randn(embedding.weight.shape[1], generator=generator)


# ---------------------------------------------------------------------------------------------
# Marian


def _train_spm(sentences: list[str], vocab_size: int) -> bytes:
    """A SentencePiece unigram model trained in memory; returns its serialized proto."""
    import sentencepiece as spm

    buffer = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences),
        model_writer=buffer,
        vocab_size=vocab_size,
        model_type="unigram",
        hard_vocab_limit=False,
        character_coverage=1.0,
        num_threads=1,
        minloglevel=2,
    )
    return buffer.getvalue()


def _marian_vocab(spm_models: list[bytes]) -> dict[str, int]:
    """An opus-mt style joint vocab: </s> 0, <unk> 1, every other piece once, <pad> last."""
    import sentencepiece as spm

    vocab: dict[str, int] = {"</s>": 0, "<unk>": 1}
    for proto in spm_models:
        sp = spm.SentencePieceProcessor(model_proto=proto)
        for i in range(sp.get_piece_size()):
            if sp.is_control(i) or sp.is_unknown(i) or sp.is_unused(i):
                continue
            piece = sp.id_to_piece(i)
            if piece not in vocab and piece != "<pad>":
                vocab[piece] = len(vocab)
    vocab["<pad>"] = len(vocab)
    return vocab


def _marian_model(config: MarianConfig, seed: int) -> MarianMTModel:
    """The seeded random MarianMTModel of make_marian_dir, with its trivial weights randomized."""
    from transformers import MarianMTModel

    torch.manual_seed(seed)
    model = MarianMTModel(config)
    generator = torch.Generator().manual_seed(seed + 1)
    _randomize_trivial(model, generator, pad_rows=[(model.get_input_embeddings(), config.pad_token_id)])
    with torch.no_grad():
        bias = model.final_logits_bias
        bias.copy_(0.5 * torch.randn(bias.shape, generator=generator))
    return model.eval()


def make_marian_dir(
    path: Path,
    *,
    d_model: int = 16,
    layers: int = 2,
    heads: int = 2,
    ffn: int = 32,
    activation: str = "swish",
    scale_embedding: bool = True,
    max_positions: int = 64,
    seed: int = 0,
) -> Path:
    """A tiny random MarianMTModel saved by transformers, with source.spm, target.spm, vocab.json,
    tokenizer_config.json (MarianTokenizer.save_pretrained), config.json,
    generation_config.json, model.safetensors."""
    _quiet_transformers()
    from transformers import GenerationConfig, MarianConfig, MarianTokenizer

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    source_spm, target_spm = _train_spm(ENGLISH, MARIAN_SPM_VOCAB), _train_spm(FRENCH, MARIAN_SPM_VOCAB)
    vocab = _marian_vocab([source_spm, target_spm])

    with tempfile.TemporaryDirectory() as staging:  # MarianTokenizer reads files; save copies them
        files = {name: Path(staging) / name for name in ("source.spm", "target.spm", "vocab.json")}
        files["source.spm"].write_bytes(source_spm)
        files["target.spm"].write_bytes(target_spm)
        files["vocab.json"].write_text(json.dumps(vocab, ensure_ascii=False, indent=2), encoding="utf-8")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Recommended: pip install sacremoses."
            tokenizer = MarianTokenizer(
                source_spm=str(files["source.spm"]),
                target_spm=str(files["target.spm"]),
                vocab=str(files["vocab.json"]),
                source_lang="en",
                target_lang="fr",
                model_max_length=max_positions,
            )
        tokenizer.save_pretrained(str(path))

    pad_id = len(vocab) - 1
    config = MarianConfig(
        vocab_size=len(vocab),
        decoder_vocab_size=len(vocab),
        d_model=d_model,
        encoder_layers=layers,
        decoder_layers=layers,
        encoder_attention_heads=heads,
        decoder_attention_heads=heads,
        encoder_ffn_dim=ffn,
        decoder_ffn_dim=ffn,
        activation_function=activation,
        max_position_embeddings=max_positions,
        scale_embedding=scale_embedding,
        dropout=0.0,
        attention_dropout=0.0,
        activation_dropout=0.0,
        pad_token_id=pad_id,
        eos_token_id=0,
        decoder_start_token_id=pad_id,
        forced_eos_token_id=0,
        share_encoder_decoder_embeddings=True,
        tie_word_embeddings=True,
    )
    model = _marian_model(config, seed)
    model.generation_config = GenerationConfig(
        bad_words_ids=[[pad_id]],
        decoder_start_token_id=pad_id,
        eos_token_id=0,
        pad_token_id=pad_id,
        forced_eos_token_id=0,
        max_length=min(64, max_positions),
        num_beams=4,
    )
    model.save_pretrained(str(path))
    return path


def reference_marian(path: Path) -> tuple[MarianTokenizer, MarianMTModel]:
    """transformers' own tokenizer and model for a Marian dir (eager attention, eval mode)."""
    _quiet_transformers()
    from transformers import MarianMTModel, MarianTokenizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tokenizer = MarianTokenizer.from_pretrained(str(path))
    model = MarianMTModel.from_pretrained(str(path), attn_implementation="eager").eval()
    return tokenizer, model


# ---------------------------------------------------------------------------------------------
# BERT


def _wordpiece_vocab(sentences: list[str]) -> list[str]:
    """A deterministic uncased WordPiece vocab: specials, characters, "##" characters, then
    every word of sentences, frequent suffixes (-s, -ing, -ed) split off as "##" pieces."""
    from tokenizers import normalizers, pre_tokenizers

    normalizer = normalizers.BertNormalizer(lowercase=True)
    splitter = pre_tokenizers.BertPreTokenizer()
    counts: dict[str, int] = {}
    for sentence in sentences:
        for word, _ in splitter.pre_tokenize_str(normalizer.normalize_str(sentence)):
            counts[word] = counts.get(word, 0) + 1
    pieces = list(BERT_SPECIALS)
    pieces += sorted({c for word in counts for c in word})
    pieces += sorted({"##" + c for word in counts for c in word[1:]})
    for word in sorted(counts, key=lambda w: (-counts[w], w)):
        parts = [word]
        for suffix in ("ing", "ed", "s"):
            if counts[word] == 1 and word.endswith(suffix) and len(word) - len(suffix) >= 3:
                parts = [word[: -len(suffix)], "##" + suffix]
                break
        pieces += [p for p in parts if p not in pieces]
    return pieces


def _bert_tokenizer(pieces: list[str]) -> Tokenizer:
    """A `tokenizers.Tokenizer` with BERT's uncased WordPiece pipeline over the given pieces."""
    from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordPiece

    vocab = {piece: i for i, piece in enumerate(pieces)}
    tok = Tokenizer(WordPiece(vocab, unk_token="[UNK]", continuing_subword_prefix="##", max_input_chars_per_word=100))
    tok.add_special_tokens(BERT_SPECIALS)
    tok.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True
    )
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS]:0 $A:0 [SEP]:0",
        pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tok.decoder = decoders.WordPiece(prefix="##")
    return tok


def _bert_model(config: BertConfig, seed: int) -> BertModel:
    """The seeded random BertModel of make_bert_dir, with its trivial weights randomized."""
    from transformers import BertModel

    torch.manual_seed(seed)
    model = BertModel(config, add_pooling_layer=True)
    generator = torch.Generator().manual_seed(seed + 1)
    _randomize_trivial(model, generator, pad_rows=[(model.embeddings.word_embeddings, config.pad_token_id)])
    return model.eval()


def make_bert_dir(
    path: Path,
    *,
    hidden: int = 16,
    layers: int = 2,
    heads: int = 2,
    ffn: int = 32,
    max_positions: int = 64,
    hidden_act: str = "gelu",
    seed: int = 0,
) -> Path:
    """A tiny random BertModel saved by transformers, with tokenizer.json, vocab.txt,
    tokenizer_config.json, config.json, model.safetensors."""
    _quiet_transformers()
    from transformers import BertConfig, BertTokenizerFast

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    pieces = _wordpiece_vocab(ENGLISH)
    backend = _bert_tokenizer(pieces)
    tokenizer = BertTokenizerFast(tokenizer_object=backend, do_lower_case=True, model_max_length=max_positions)
    tokenizer.save_pretrained(str(path))
    (path / "vocab.txt").write_text("".join(p + "\n" for p in pieces), encoding="utf-8")

    config = BertConfig(
        vocab_size=len(pieces),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=ffn,
        max_position_embeddings=max_positions,
        type_vocab_size=2,
        hidden_act=hidden_act,
        layer_norm_eps=1e-12,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        pad_token_id=0,
    )
    model = _bert_model(config, seed)
    model.save_pretrained(str(path))
    return path


def reference_bert(path: Path) -> tuple[PreTrainedTokenizerBase, BertModel]:
    """transformers' own tokenizer (AutoTokenizer from tokenizer.json) and model (eager
    attention, eval mode)."""
    _quiet_transformers()
    from transformers import AutoTokenizer, BertModel

    tokenizer = AutoTokenizer.from_pretrained(str(path))
    model = BertModel.from_pretrained(str(path), attn_implementation="eager").eval()
    return tokenizer, model


# ---------------------------------------------------------------------------------------------
# T5 (google-t5/t5-small, google/flan-t5-small)


def _round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


def _t5_spm() -> bytes:
    """T5's SentencePiece unigram model, trained in memory on ENGLISH, FRENCH and a few
    task-prefixed lines, with T5's layout: <pad> 0, </s> 1, <unk> 2, no <s>."""
    import sentencepiece as spm

    sentences = ENGLISH + FRENCH + [T5_TASK_PREFIX + s for s in ENGLISH[:8]]
    buffer = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences),
        model_writer=buffer,
        vocab_size=T5_SPM_VOCAB,
        model_type="unigram",
        hard_vocab_limit=False,
        character_coverage=1.0,
        pad_id=0,
        eos_id=1,
        unk_id=2,
        bos_id=-1,
        num_threads=1,
        minloglevel=2,
    )
    return buffer.getvalue()


def _t5_tokenizer(spiece: Path) -> T5Tokenizer:
    """transformers' T5Tokenizer converted from a spiece.model, as from_pretrained converts a
    checkpoint that has only spiece.model (T5Tokenizer(vocab_file=...) alone ignores the file)."""
    from transformers import T5Tokenizer

    kwargs = T5Tokenizer.convert_to_native_format(vocab_file=str(spiece), extra_ids=T5_EXTRA_IDS, model_max_length=512)
    return T5Tokenizer(**kwargs)


def _t5_model(config: T5Config, seed: int, *, separate_head: bool) -> T5ForConditionalGeneration:
    """The seeded random T5ForConditionalGeneration of make_t5_dir, with its norms randomized,
    and for flan-t5 a separate random lm_head (transformers 5.24 builds every T5 tied)."""
    from transformers import T5ForConditionalGeneration

    torch.manual_seed(seed)
    model = T5ForConditionalGeneration(config)
    generator = torch.Generator().manual_seed(seed + 1)
    _randomize_trivial(model, generator)
    if separate_head:
        head = torch.randn(model.lm_head.weight.shape, generator=generator)
        model.lm_head.weight = torch.nn.Parameter(head)
    return model.eval()


def _rewrite_json(file: Path, update: dict, drop: Iterable[str] = ()) -> None:
    data = json.loads(file.read_text(encoding="utf-8"))
    data.update(update)
    for key in drop:
        data.pop(key, None)
    file.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def make_t5_dir(
    path: Path,
    *,
    variant: str = "flan",
    d_model: int = 16,
    layers: int = 2,
    heads: int = 2,
    d_kv: int | None = None,
    ffn: int = 32,
    num_buckets: int = 8,
    max_distance: int = 16,
    vocab_size: int | None = None,
    seed: int = 0,
    task_prefix: bool = True,
) -> Path:
    """A tiny random T5ForConditionalGeneration saved by transformers, with spiece.model,
    tokenizer.json, tokenizer_config.json, config.json, generation_config.json,
    model.safetensors, like google/flan-t5-small (variant "flan": gated-gelu, separate lm_head,
    no rescaling of the decoder output) or google-t5/t5-small (variant "t5": relu, lm_head tied
    to the shared embedding, decoder output scaled by d_model**-0.5).

    The model's vocab is a few ids larger than the tokenizer's (120 pieces + T5_EXTRA_IDS
    sentinels = 124 -> 128, as t5's 32100 -> 32128) unless vocab_size says otherwise;
    t5-small's shapes: d_model=512, layers=6, heads=8, d_kv=64, ffn=2048, num_buckets=32,
    max_distance=128, vocab_size=32128."""
    if variant not in ("flan", "t5"):
        raise ValueError(f"variant must be 'flan' or 't5', not {variant!r}")
    _quiet_transformers()
    from transformers import GenerationConfig, T5Config

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    (path / "spiece.model").write_bytes(_t5_spm())
    tokenizer = _t5_tokenizer(path / "spiece.model")
    tokenizer.save_pretrained(str(path))  # tokenizer.json, tokenizer_config.json (not spiece.model)

    flan = variant == "flan"
    model_vocab = _round_up(len(tokenizer) + 1, 8) if vocab_size is None else vocab_size
    if model_vocab < len(tokenizer):
        raise ValueError(f"vocab_size {model_vocab} < the tokenizer's {len(tokenizer)}")
    task_params = {
        "translation_en_to_fr": {"prefix": T5_TASK_PREFIX, "max_length": 40, "num_beams": 4, "early_stopping": True}
    }
    config = T5Config(
        vocab_size=model_vocab,
        d_model=d_model,
        d_kv=d_kv if d_kv is not None else d_model // heads,
        d_ff=ffn,
        num_layers=layers,
        num_decoder_layers=layers,
        num_heads=heads,
        relative_attention_num_buckets=num_buckets,
        relative_attention_max_distance=max_distance,
        dropout_rate=0.0,
        layer_norm_epsilon=1e-6,
        feed_forward_proj="gated-gelu" if flan else "relu",
        tie_word_embeddings=not flan,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
        task_specific_params=task_params if task_prefix else None,
    )
    model = _t5_model(config, seed, separate_head=flan)
    model.generation_config = GenerationConfig(decoder_start_token_id=0, eos_token_id=1, pad_token_id=0)
    model.save_pretrained(str(path))
    # transformers 5.24 writes "tie_word_embeddings": true for every T5 and its own
    # "scale_decoder_outputs"; the real configs say false (flan) and have no such key.
    _rewrite_json(
        path / "config.json",
        {"tie_word_embeddings": not flan},
        drop=["scale_decoder_outputs"] + ([] if task_prefix else ["task_specific_params"]),
    )
    return path


def reference_t5(path: Path) -> tuple[PreTrainedTokenizerBase, T5ForConditionalGeneration]:
    """transformers' own tokenizer (AutoTokenizer from tokenizer.json) and model (eager
    attention, eval mode) for a T5 dir."""
    _quiet_transformers()
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    tokenizer = AutoTokenizer.from_pretrained(str(path))
    model = T5ForConditionalGeneration.from_pretrained(str(path), attn_implementation="eager").eval()
    return tokenizer, model


# ---------------------------------------------------------------------------------------------
# GPT-2 (openai-community/gpt2)


def _gpt2_bpe(sentences: list[str], vocab_size: int) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """A byte-level BPE (GPT-2's pre-tokenizer regex, no prefix space) trained with `tokenizers`:
    the 256 byte symbols, the merges, and <|endoftext|> as the last id, like gpt2's 50256."""
    from tokenizers import Tokenizer, decoders, pre_tokenizers, trainers
    from tokenizers.models import BPE

    tok = Tokenizer(BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size - 1, show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(sentences, trainer)
    model = json.loads(tok.to_str())["model"]
    vocab = dict(model["vocab"])
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    vocab[GPT2_EOT] = len(vocab)
    return vocab, merges


def _gpt2_model(config: GPT2Config, seed: int) -> GPT2LMHeadModel:
    """The seeded random GPT2LMHeadModel of make_gpt2_dir, with its LayerNorms and Conv1D
    biases randomized."""
    from transformers import GPT2LMHeadModel

    torch.manual_seed(seed)
    model = GPT2LMHeadModel(config)
    _randomize_trivial(model, torch.Generator().manual_seed(seed + 1))
    return model.eval()


def _gpt2_hub_layout(file: Path, config: GPT2Config) -> None:
    """Rewrite a saved GPT2LMHeadModel as openai-community/gpt2's model.safetensors is: GPT2Model
    names (wte.weight, h.0..., ln_f.bias; no "transformer." prefix, no lm_head) and each layer's
    causal-mask buffer h.N.attn.bias, float32 [1, 1, n_positions, n_positions]."""
    from safetensors.torch import load_file, save_file

    saved = load_file(str(file))
    tensors = {name.removeprefix("transformer."): t for name, t in saved.items() if name != "lm_head.weight"}
    n = config.n_positions
    mask = torch.tril(torch.ones(n, n, dtype=torch.float32)).view(1, 1, n, n)
    for layer in range(config.n_layer):
        tensors[f"h.{layer}.attn.bias"] = mask.clone()
    save_file(tensors, str(file), metadata={"format": "pt"})


def make_gpt2_dir(
    path: Path,
    *,
    d_model: int = 16,
    layers: int = 2,
    heads: int = 2,
    max_positions: int = 64,
    vocab_size: int | None = None,
    seed: int = 0,
    hub_layout: bool = True,
) -> Path:
    """A tiny random GPT2LMHeadModel saved by transformers, with tokenizer.json, vocab.json,
    merges.txt, tokenizer_config.json, config.json, generation_config.json, model.safetensors,
    like openai-community/gpt2. With hub_layout (the default), model.safetensors has gpt2's own
    names and causal-mask buffers (see _gpt2_hub_layout); without, the "transformer."-prefixed
    names that save_pretrained writes (what a fine-tuned GPT-2 saved today has).

    The model's vocab is the tokenizer's (300, <|endoftext|> last) unless vocab_size pads it;
    gpt2's shapes: d_model=768, layers=12, heads=12, max_positions=1024, vocab_size=50257."""
    _quiet_transformers()
    from transformers import GenerationConfig, GPT2Config, GPT2Tokenizer

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    vocab, merges = _gpt2_bpe(ENGLISH, GPT2_BPE_VOCAB)
    tokenizer = GPT2Tokenizer(vocab=vocab, merges=merges, model_max_length=max_positions)
    tokenizer.save_pretrained(str(path))  # tokenizer.json, tokenizer_config.json
    tokenizer.backend_tokenizer.model.save(str(path))  # vocab.json, merges.txt

    eot = vocab[GPT2_EOT]
    model_vocab = len(tokenizer) if vocab_size is None else vocab_size
    if model_vocab < len(tokenizer):
        raise ValueError(f"vocab_size {model_vocab} < the tokenizer's {len(tokenizer)}")
    config = GPT2Config(
        vocab_size=model_vocab,
        n_embd=d_model,
        n_layer=layers,
        n_head=heads,
        n_positions=max_positions,
        n_ctx=max_positions,
        n_inner=None,
        activation_function="gelu_new",
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        layer_norm_epsilon=1e-5,
        bos_token_id=eot,
        eos_token_id=eot,
        task_specific_params={"text-generation": {"do_sample": True, "max_length": 50}},
    )
    model = _gpt2_model(config, seed)
    model.generation_config = GenerationConfig(bos_token_id=eot, eos_token_id=eot)
    model.save_pretrained(str(path))
    if hub_layout:
        _gpt2_hub_layout(path / "model.safetensors", config)
    return path


def reference_gpt2(path: Path) -> tuple[PreTrainedTokenizerBase, GPT2LMHeadModel]:
    """transformers' own tokenizer (AutoTokenizer from tokenizer.json) and model (eager
    attention, eval mode) for a GPT-2 dir."""
    _quiet_transformers()
    from transformers import AutoTokenizer, GPT2LMHeadModel

    tokenizer = AutoTokenizer.from_pretrained(str(path))
    model = GPT2LMHeadModel.from_pretrained(str(path), attn_implementation="eager").eval()
    return tokenizer, model


# ---------------------------------------------------------------------------------------------
# Today's decoders: Llama (SmolLM2), Qwen2 (Qwen2.5), Qwen3, Gemma 3 (270M) and GPT-NeoX (Pythia)

DECODER_FAMILIES = ("llama", "qwen2", "qwen3", "gemma3_text", "gpt_neox")
DECODER_BPE_VOCAB = 300
# each family's special tokens (first ids), the one its tokenizer puts first (None: nothing added), its
# end of text, and the tokenizer class its tokenizer_config.json names (as the hub's files do)
DECODER_TOKENS = {
    "llama": (["<s>", "</s>", "<|im_start|>", "<|im_end|>"], "<s>", "</s>", "GPT2Tokenizer"),
    "qwen2": (["<|endoftext|>", "<|im_start|>", "<|im_end|>"], None, "<|endoftext|>", "Qwen2Tokenizer"),
    "qwen3": (["<|endoftext|>", "<|im_start|>", "<|im_end|>"], None, "<|endoftext|>", "Qwen2Tokenizer"),
    "gemma3_text": (
        ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>", "<start_of_turn>", "<end_of_turn>"],
        "<bos>",
        "<eos>",
        "GemmaTokenizer",
    ),
    "gpt_neox": (["<|endoftext|>", "<|padding|>"], None, "<|endoftext|>", "GPTNeoXTokenizer"),
}
DECODER_EXTRA_ROWS = {"qwen2": 13}  # the model's vocabulary is larger than the tokenizer's (Qwen's 151,936)
GEMMA_WINDOW = 4
CHAT_TEMPLATES = {  # a plain ChatML (Qwen's) and Gemma's turn markers, in the hub's Jinja
    "qwen2": (
        "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
        "'<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
    ),
    "gemma3_text": (
        "{{ bos_token }}{% for message in messages %}{% set role = 'model' if message['role'] == 'assistant' "
        "else message['role'] %}{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + "
        "'<end_of_turn>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}"
    ),
}


def _decoder_tokenizer(family: str) -> PreTrainedTokenizerBase:
    """A tokenizer trained on ENGLISH the way the family's hub files are built: byte-level BPE (Llama,
    Qwen, GPT-NeoX) or Gemma's SentencePiece-style BPE ("▁" for spaces); its specials first; for Llama
    and Gemma a post-processor that puts BOS first."""
    from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers, processors, trainers
    from tokenizers.models import BPE
    from transformers import GemmaTokenizer, PreTrainedTokenizerFast

    specials, bos, eos, _ = DECODER_TOKENS[family]
    gemma = family == "gemma3_text"
    tok = Tokenizer(BPE(unk_token="<unk>" if gemma else None))
    if gemma:
        tok.normalizer = normalizers.Replace(" ", "▁")
    else:
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
    alphabet = (
        sorted({c for s in ENGLISH for c in s.replace(" ", "▁")}) if gemma else pre_tokenizers.ByteLevel.alphabet()
    )
    trainer = trainers.BpeTrainer(
        vocab_size=DECODER_BPE_VOCAB, show_progress=False, special_tokens=specials, initial_alphabet=alphabet
    )
    tok.train_from_iterator(ENGLISH, trainer)
    if gemma:
        model = json.loads(tok.to_str())["model"]
        merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
        built = GemmaTokenizer(vocab=model["vocab"], merges=merges, add_bos_token=True)
        built.add_special_tokens({"additional_special_tokens": ["<start_of_turn>", "<end_of_turn>"]})
        return built
    if bos is not None:
        tok.post_processor = processors.TemplateProcessing(
            single=f"{bos} $A", pair=f"{bos} $A $B", special_tokens=[(bos, tok.token_to_id(bos))]
        )
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=bos or eos, eos_token=eos, unk_token=eos)


def _decoder_config(family: str, vocab: int, ids: dict[str, int], shapes: dict | None = None):
    """The family's config at tiny sizes (or `shapes` over them), with what makes it itself: grouped
    key/value heads, a head width of its own (Qwen3, Gemma 3), sliding windows with their own rotary
    base (Gemma 3), partial rotary and a parallel residual (GPT-NeoX), tied or separate heads."""
    from transformers import Gemma3TextConfig, GPTNeoXConfig, LlamaConfig, Qwen2Config, Qwen3Config

    settings: dict = dict(
        vocab_size=vocab,
        hidden_size=32,
        intermediate_size=48,
        num_attention_heads=4,
        num_hidden_layers=2,
        max_position_embeddings=128,
        bos_token_id=ids["bos"],
        eos_token_id=ids["eos"],
        pad_token_id=ids.get("pad"),
    )
    if family == "llama":
        classes, own = LlamaConfig, dict(num_key_value_heads=2, tie_word_embeddings=True)
        own["rope_parameters"] = {"rope_type": "default", "rope_theta": 1000.0}
    elif family == "qwen2":
        classes, own = Qwen2Config, dict(num_key_value_heads=2, tie_word_embeddings=True)
    elif family == "qwen3":
        classes, own = Qwen3Config, dict(num_key_value_heads=1, head_dim=16, tie_word_embeddings=False)
    elif family == "gemma3_text":
        classes, own = (
            Gemma3TextConfig,
            dict(
                num_hidden_layers=3,
                num_key_value_heads=2,
                head_dim=16,
                query_pre_attn_scalar=12,
                sliding_window=GEMMA_WINDOW,
                layer_types=["sliding_attention", "sliding_attention", "full_attention"],
                rope_parameters={
                    "sliding_attention": {"rope_type": "default", "rope_theta": 100.0},
                    "full_attention": {"rope_type": "default", "rope_theta": 10000.0},
                },
                tie_word_embeddings=True,
            ),
        )
    elif family == "gpt_neox":
        classes, own = (
            GPTNeoXConfig,
            dict(
                rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5},
                use_parallel_residual=True,
                hidden_act="gelu",
                tie_word_embeddings=False,
            ),
        )
    else:
        raise ValueError(f"family must be one of {DECODER_FAMILIES}, not {family!r}")
    return classes(**{**settings, **own, **(shapes or {})})


def make_decoder_dir(
    path: Path,
    family: str,
    *,
    seed: int = 0,
    dtype: torch.dtype | None = None,
    shard: str | None = None,
    chat_template: bool = False,
    shapes: dict | None = None,
) -> Path:
    """A tiny random decoder of `family` (one of DECODER_FAMILIES) saved by transformers with
    tokenizer.json, tokenizer_config.json, config.json, generation_config.json and its weights, in
    `dtype` (default: float32; bfloat16 as SmolLM2, Qwen and Gemma ship) and in shards of at most `shard`
    (e.g. "30KB": model.safetensors.index.json). With `chat_template`, the tokenizer carries a chat
    template (Qwen's ChatML, Gemma's turns; another family gets ChatML). `shapes`: config values over
    the tiny ones (a real model's sizes, e.g. SmolLM2-135M's: hidden_size 576, 30 layers, ...; its
    vocab_size may exceed the tokenizer's)."""
    _quiet_transformers()
    from transformers import AutoModelForCausalLM, GenerationConfig

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tokenizer = _decoder_tokenizer(family)
    _, bos, eos, tokenizer_class = DECODER_TOKENS[family]
    if chat_template:
        tokenizer.chat_template = CHAT_TEMPLATES.get(family, CHAT_TEMPLATES["qwen2"])
    tokenizer.save_pretrained(str(path))
    _rewrite_json(path / "tokenizer_config.json", {"tokenizer_class": tokenizer_class})
    ids = {"bos": tokenizer.convert_tokens_to_ids(bos or eos), "eos": tokenizer.convert_tokens_to_ids(eos)}
    if family == "gemma3_text":
        ids["pad"] = tokenizer.convert_tokens_to_ids("<pad>")
    config = _decoder_config(family, len(tokenizer) + DECODER_EXTRA_ROWS.get(family, 0), ids, shapes)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, attn_implementation="eager")
    _randomize_trivial(model, torch.Generator().manual_seed(seed + 1))
    model.generation_config = GenerationConfig(bos_token_id=ids["bos"], eos_token_id=ids["eos"])
    if dtype is not None:
        model = model.to(dtype)
    model.save_pretrained(str(path), **({"max_shard_size": shard} if shard else {}))
    return path


END_OF_TURN = {"gemma3_text": "<end_of_turn>", "qwen2": "<|im_end|>", "qwen3": "<|im_end|>", "llama": "<|im_end|>"}


def make_instruct(path: Path, like: int, scale: float = 1.2) -> int:
    """Make a chat-template decoder dir (make_decoder_dir(..., chat_template=True)) instruct-like: its
    generation_config.json lists two eos_token_id, EOS then the end of turn (as Gemma-3-it's [1, 106]),
    and the end of turn's row of the output head (the embedding when tied) becomes `scale` x the row of
    the piece `like`, so that the model ends its turn about where it would have said that piece.
    Returns the end of turn's id."""
    from safetensors.torch import load_file, save_file

    config = json.loads((path / "config.json").read_text())
    tokenizer = json.loads((path / "tokenizer.json").read_text())
    end = next(t["id"] for t in tokenizer["added_tokens"] if t["content"] == END_OF_TURN[config["model_type"]])
    file = path / "model.safetensors"
    tensors = load_file(str(file))
    head = "model.embed_tokens.weight" if config.get("tie_word_embeddings", True) else "lm_head.weight"
    tensors[head][end] = tensors[head][like] * scale
    save_file(tensors, str(file), metadata={"format": "pt"})
    generation = path / "generation_config.json"
    eos = json.loads(generation.read_text())["eos_token_id"]
    _rewrite_json(generation, {"eos_token_id": [eos, end]})
    return end


def reference_decoder(path: Path) -> tuple[PreTrainedTokenizerBase, torch.nn.Module]:
    """transformers' own tokenizer (AutoTokenizer) and causal LM (eager attention, float32, eval mode)."""
    _quiet_transformers()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(path))
    model = AutoModelForCausalLM.from_pretrained(str(path), attn_implementation="eager", dtype=torch.float32)
    return tokenizer, model.eval()
