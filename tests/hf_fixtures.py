"""Tiny random Hugging Face checkpoint directories, written by `transformers` itself (offline).

Each builder trains a tiny tokenizer in-process on ENGLISH (and FRENCH), builds a small random
model under a seed, randomizes every weight that default init leaves trivial (LayerNorms, zero
biases, the pad embedding row, Marian's final_logits_bias) so that a converter that forgets a
weight fails, and saves everything with `save_pretrained`, so the files have the real layouts.
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
from pathlib import Path
from collections.abc import Iterable
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:  # transformers is imported lazily: it is slow to import
    from tokenizers import Tokenizer
    from transformers import (BertConfig, BertModel, MarianConfig, MarianMTModel, MarianTokenizer,
                              PreTrainedTokenizerBase)

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


def _quiet_transformers() -> None:
    """Lower transformers' logging to errors (process-wide) and hide its progress bars."""
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


# ---------------------------------------------------------------------------------------------
# weights


def _randomize_trivial(model: torch.nn.Module, generator: torch.Generator,
                       pad_rows: Iterable[tuple[torch.nn.Embedding, int]] = ()) -> None:
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
        sentence_iterator=iter(sentences), model_writer=buffer, vocab_size=vocab_size,
        model_type="unigram", hard_vocab_limit=False, character_coverage=1.0,
        num_threads=1, minloglevel=2,
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


def _marian_model(config: "MarianConfig", seed: int) -> "MarianMTModel":
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


def make_marian_dir(path: Path, *, d_model: int = 16, layers: int = 2, heads: int = 2,
                    ffn: int = 32, activation: str = "swish", scale_embedding: bool = True,
                    max_positions: int = 64, seed: int = 0) -> Path:
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
            tokenizer = MarianTokenizer(source_spm=str(files["source.spm"]),
                                        target_spm=str(files["target.spm"]),
                                        vocab=str(files["vocab.json"]),
                                        source_lang="en", target_lang="fr",
                                        model_max_length=max_positions)
        tokenizer.save_pretrained(str(path))

    pad_id = len(vocab) - 1
    config = MarianConfig(
        vocab_size=len(vocab), decoder_vocab_size=len(vocab), d_model=d_model,
        encoder_layers=layers, decoder_layers=layers,
        encoder_attention_heads=heads, decoder_attention_heads=heads,
        encoder_ffn_dim=ffn, decoder_ffn_dim=ffn, activation_function=activation,
        max_position_embeddings=max_positions, scale_embedding=scale_embedding,
        dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
        pad_token_id=pad_id, eos_token_id=0, decoder_start_token_id=pad_id,
        forced_eos_token_id=0, share_encoder_decoder_embeddings=True, tie_word_embeddings=True,
    )
    model = _marian_model(config, seed)
    model.generation_config = GenerationConfig(
        bad_words_ids=[[pad_id]], decoder_start_token_id=pad_id, eos_token_id=0,
        pad_token_id=pad_id, forced_eos_token_id=0, max_length=min(64, max_positions),
        num_beams=4,
    )
    model.save_pretrained(str(path))
    return path


def reference_marian(path: Path) -> tuple["MarianTokenizer", "MarianMTModel"]:
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


def _bert_tokenizer(pieces: list[str]) -> "Tokenizer":
    """A `tokenizers.Tokenizer` with BERT's uncased WordPiece pipeline over the given pieces."""
    from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordPiece

    vocab = {piece: i for i, piece in enumerate(pieces)}
    tok = Tokenizer(WordPiece(vocab, unk_token="[UNK]", continuing_subword_prefix="##",
                              max_input_chars_per_word=100))
    tok.add_special_tokens(BERT_SPECIALS)
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True,
                                                strip_accents=None, lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS]:0 $A:0 [SEP]:0", pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tok.decoder = decoders.WordPiece(prefix="##")
    return tok


def _bert_model(config: "BertConfig", seed: int) -> "BertModel":
    """The seeded random BertModel of make_bert_dir, with its trivial weights randomized."""
    from transformers import BertModel

    torch.manual_seed(seed)
    model = BertModel(config, add_pooling_layer=True)
    generator = torch.Generator().manual_seed(seed + 1)
    _randomize_trivial(model, generator, pad_rows=[(model.embeddings.word_embeddings, config.pad_token_id)])
    return model.eval()


def make_bert_dir(path: Path, *, hidden: int = 16, layers: int = 2, heads: int = 2, ffn: int = 32,
                  max_positions: int = 64, hidden_act: str = "gelu", seed: int = 0) -> Path:
    """A tiny random BertModel saved by transformers, with tokenizer.json, vocab.txt,
    tokenizer_config.json, config.json, model.safetensors."""
    _quiet_transformers()
    from transformers import BertConfig, BertTokenizerFast

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    pieces = _wordpiece_vocab(ENGLISH)
    backend = _bert_tokenizer(pieces)
    tokenizer = BertTokenizerFast(tokenizer_object=backend, do_lower_case=True,
                                  model_max_length=max_positions)
    tokenizer.save_pretrained(str(path))
    (path / "vocab.txt").write_text("".join(p + "\n" for p in pieces), encoding="utf-8")

    config = BertConfig(
        vocab_size=len(pieces), hidden_size=hidden, num_hidden_layers=layers,
        num_attention_heads=heads, intermediate_size=ffn, max_position_embeddings=max_positions,
        type_vocab_size=2, hidden_act=hidden_act, layer_norm_eps=1e-12,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, pad_token_id=0,
    )
    model = _bert_model(config, seed)
    model.save_pretrained(str(path))
    return path


def reference_bert(path: Path) -> tuple["PreTrainedTokenizerBase", "BertModel"]:
    """transformers' own tokenizer (AutoTokenizer from tokenizer.json) and model (eager
    attention, eval mode)."""
    _quiet_transformers()
    from transformers import AutoTokenizer, BertModel

    tokenizer = AutoTokenizer.from_pretrained(str(path))
    model = BertModel.from_pretrained(str(path), attn_implementation="eager").eval()
    return tokenizer, model
