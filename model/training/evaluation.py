"""Scores of a model on held-out pairs: BLEU, chrF, exact match, the teacher-forced validation loss, and
attention-alignment agreement."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import sacrebleu
import torch
import torch.nn.functional as F

from ..analysis.alignment import AlignmentCase, agreement_hits
from ..engine import stages
from ..engine.decoding import greedy
from ..engine.hooks import recording
from ..engine.interventions import Interventions
from ..engine.tokenizer import Tokenizer
from ..engine.tokens import BOS_ID, EOS_ID, PAD_ID, pad_rows
from ..engine.transformer import Transformer
from .batches import source_ids, target_ids


def translate_many(
    model: Transformer, tokenizer: Tokenizer, sources: Sequence[str], batch_size: int = 100
) -> list[str]:
    """Greedy translations of canonical source strings, decoded in length-sorted batches."""
    encoded = [tokenizer.encode(s)[: model.cfg.max_len - 1] + [EOS_ID] for s in sources]
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    out: list[str] = [""] * len(encoded)
    iv = Interventions()
    was_training = model.training
    model.eval()
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            src = pad_rows([encoded[i] for i in chunk], next(model.parameters()).device)
            memory, mask = model.encode(src, iv)
            limit = min(2 * src.size(1) + 10, model.cfg.max_len - 1)
            for i, (ids, _) in zip(chunk, greedy(model, memory, mask, iv, limit), strict=True):
                out[i] = tokenizer.decode(ids)
    model.train(was_training)
    return out


def translation_scores(hypotheses: Sequence[str], references: Sequence[str]) -> dict[str, float]:
    """Corpus BLEU and chrF (sacrebleu) and the share of exactly right outputs, in percent."""
    exact = sum(h == r for h, r in zip(hypotheses, references, strict=True)) / max(len(references), 1)
    return {
        "bleu": round(sacrebleu.corpus_bleu(list(hypotheses), [list(references)]).score, 2),
        "chrf": round(sacrebleu.corpus_chrf(list(hypotheses), [list(references)]).score, 2),
        "exact_match": round(100 * exact, 2),
        "n": len(references),
    }


def validation_loss(
    model: Transformer, tokenizer: Tokenizer, rows: list[tuple[str, str, str]], batch_size: int = 100
) -> float:
    """Cross-entropy per target piece (nats, no label smoothing) of the validation pairs, teacher-forced."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    total, count = 0.0, 0
    with torch.inference_mode():
        for start in range(0, len(rows), batch_size):
            chunk = rows[start : start + batch_size]
            src = pad_rows([source_ids(tokenizer, en, model.cfg.max_len) for en, _, _ in chunk], device)
            tgt = pad_rows([target_ids(tokenizer, fr, model.cfg.max_len) for _, fr, _ in chunk], device)
            logits = model(src, tgt[:, :-1])
            total += float(
                F.cross_entropy(
                    logits.reshape(-1, logits.size(-1)).float(),
                    tgt[:, 1:].reshape(-1),
                    ignore_index=PAD_ID,
                    reduction="sum",
                )
            )
            count += int((tgt[:, 1:] != PAD_ID).sum())
    model.train(was_training)
    return total / max(count, 1)


def source_word_of_pieces(pieces: list[str]) -> list[int]:
    """Word index of each source piece: a piece starting with '▁' opens the next word."""
    words, current = [], -1
    for piece in pieces:
        if piece.startswith("▁"):
            current += 1
        words.append(current)
    return words


def pieces_in_spans(tokenizer: Tokenizer, text: str, spans: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """Ids of `text` and, per piece, the index of the span holding its first visible character
    (a bare '▁' piece belongs to the word after it)."""
    proto = tokenizer.sp.encode(text, return_type="proto")
    ids, anchors = [], []
    for piece in proto.pieces:
        ids.append(piece.id)
        visible = piece.surface.lstrip(" ")
        anchors.append(piece.begin + len(piece.surface) - len(visible) if visible else None)
    owner, following = [], -1
    for anchor in reversed(anchors):  # bare '▁' pieces take the owner of the piece after them
        if anchor is not None:
            following = next((i for i, (start, end) in enumerate(spans) if start <= anchor < end), -1)
        owner.append(following)
    return ids, owner[::-1]


def alignment_cases(tokenizer: Tokenizer, max_len: int, examples: Sequence[tuple], tokenize_fr) -> list[AlignmentCase]:
    """The scored French words of each example: (canonical source, English token indices of the source
    words, French, alignment). Final punctuation is not scored (the source drops it); a word whose
    gold links are all to punctuation is left out."""
    cases = []
    for source, en_index_of_word, french, alignment in examples:
        src_ids = tokenizer.encode(source)[: max_len - 1]
        src_word = source_word_of_pieces(tokenizer.pieces(src_ids)) + [-1]  # EOS is no word
        fr_tokens = tokenize_fr(french)
        fr_ids, fr_owner = pieces_in_spans(tokenizer, french, [(s, e) for _, s, e in fr_tokens])
        fr_ids, fr_owner = fr_ids[: max_len - 1], fr_owner[: max_len - 1]
        gold: dict[int, set[int]] = {}
        for en_i, fr_i in alignment:
            gold.setdefault(fr_i, set()).add(en_i)
        n_words = len(en_index_of_word)
        to_word = np.zeros((len(src_word), n_words))
        for key, word in enumerate(src_word):
            if 0 <= word < n_words:
                to_word[key, word] = 1.0
        first_row: dict[int, int] = {}
        for row, owner in enumerate(fr_owner):
            first_row.setdefault(owner, row)
        words = []
        for fr_i, row in first_row.items():
            if fr_i < 0 or fr_tokens[fr_i][0] in (".", "?"):
                continue
            targets = {w for w, en_i in enumerate(en_index_of_word) if en_i in gold.get(fr_i, ())}
            if targets:
                words.append((row, targets))
        cases.append(AlignmentCase(src_ids + [EOS_ID], fr_ids, to_word, words))
    return cases


def alignment_agreement(
    model: Transformer, tokenizer: Tokenizer, examples: Sequence[tuple], tokenize_fr
) -> tuple[np.ndarray, int]:
    """Per decoder layer and head, the share of French words whose most-attended English word is
    one the gold alignment links it to, and how many French words were scored.

    examples: (canonical source, English token indices of the source words, French, alignment).
    The row looked at is the decoder row that predicts the word's first piece; attention to a
    word is summed over its pieces. Final punctuation is not scored (the source drops it).
    """
    cfg = model.cfg
    hits = np.zeros((cfg.n_decoder_layers, cfg.n_heads))
    scored = 0
    iv = Interventions()
    model.eval()
    for case in alignment_cases(tokenizer, cfg.max_len, examples, tokenize_fr):
        with torch.inference_mode(), recording() as recorder:
            model(torch.tensor([case.src_ids]), torch.tensor([[BOS_ID] + case.fr_ids[:-1]]), iv)
        patterns = np.stack(
            [
                recorder.tensors[stages.attention("decoder", "cross", layer, "pattern")][0].numpy()
                for layer in range(cfg.n_decoder_layers)
            ]
        )  # (L, h, T, S)
        hits += agreement_hits(case, patterns)
        scored += len(case.words)
    return hits / max(scored, 1), scored
