"""How well each way of explaining a translation finds the word the generator aligned, on the test
split, written into the checkpoint's card (`explanations`):

    python -m model.training.explanations checkpoints/default --data data/corpus-default-seed1

- attribution: for each method of `model.analysis.attribute`, the share of French words whose
  most-attributed English word (attribution of the decoder row that predicts the word's first
  piece, summed over the word's pieces, teacher-forced on the reference) is one the generator
  aligned it to; the card's best single cross-attention head is scored the same way.
- logit lens: per decoder layer, the share of output pieces (teacher-forced on the model's own
  greedy output) that layer already ranks first; and per word class, the share of French words
  whose first piece each layer ranks first (teacher-forced on the reference; a French word takes
  the class, in the lexicon, of the first English word the generator aligned it to).
- head roles: the heads `model.analysis.head_roles` tags (with the gold alignment, so that
  cross-attention heads can be tagged "alignment"), with their scores.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from ..analysis import METHODS, attribute, head_roles, logit_lens
from ..analysis.alignment import agreement_hits
from ..bundle import Bundle, load_bundle
from ..checkpoints.checkpoint import CARD
from ..engine.tokenizer import normalize_source, project_tokenizer
from .corpus import load_lexicon, read_pairs, tokenize_en, tokenize_fr
from .evaluate import alignment_examples
from .evaluation import alignment_cases


def attribution_agreement(bundle: Bundle, sources: list[str], examples: list[tuple], method: str) -> tuple[float, int]:
    """(share of French words, how many) whose most-attributed English word is a gold one."""
    hits, scored = 0.0, 0
    for source, case in zip(
        sources,
        alignment_cases(project_tokenizer(bundle.tokenizer), bundle.config.max_len, examples, tokenize_fr),
        strict=True,
    ):
        if list(bundle.encode_source(source)[1]) != case.src_ids:
            raise RuntimeError(f"the source {source!r} is not read as the alignment's pieces")
        hits += float(agreement_hits(case, attribute(bundle, source, case.fr_ids, method)))
        scored += len(case.words)
    return hits / max(scored, 1), scored


def lens_top1(bundle: Bundle, sources: list[str]) -> list[float]:
    """Per decoder layer, the share of output pieces that layer's lens already ranks first."""
    agree, total = np.zeros(bundle.config.n_decoder_layers), 0
    for source in sources:
        output = bundle.translate(source, trace=False).output_ids
        lens = logit_lens(bundle, source, output)  # (L, T, vocab)
        agree += (lens.argmax(-1) == np.array(output)).sum(-1)
        total += len(output)
    return [round(100 * float(x) / total, 1) for x in agree]


def word_classes() -> dict[str, str]:
    """English token (lower case) -> its class in the lexicon; words the lexicon does not list
    (will, did, not, do, to, ...) are "function words"."""
    lex = load_lexicon()
    classes: dict[str, str] = {}
    for name, words in (
        ("determiner", [d for key in lex.dets for d in key.split("/")]),
        ("pronoun", lex.prons),
        ("number", [en for en, _ in lex.nums]),
        ("preposition", lex.preps),
        ("adverb", lex.advs),
        ("conjunction", lex.conjs),
    ):
        classes.update({w.lower(): name for w in words})
    for verb in lex.verbs.values():
        classes.update({form.lower(): "verb" for form in (verb.base, verb.s3, verb.past) if form})
    for adj in lex.adjs.values():
        classes[adj.en.lower()] = "adjective"
    for noun in lex.nouns.values():
        classes.update({noun.en.lower(): "noun", noun.en_plural.lower(): "noun"})
    return classes


def lens_by_class(
    bundle: Bundle, rows: list[tuple[str, str, str]], sources: list[str], examples: list[tuple]
) -> dict[str, dict]:
    """Per word class: how many French words, and per decoder layer the share whose first piece
    that layer's lens ranks first (teacher-forced on the reference)."""
    classes = word_classes()
    counts: dict[str, np.ndarray] = {}
    words: dict[str, int] = {}
    cases = alignment_cases(project_tokenizer(bundle.tokenizer), bundle.config.max_len, examples, tokenize_fr)
    for (en, _, _), source, example, case in zip(rows, sources, examples, cases, strict=True):
        tokens = [token for token, _, _ in tokenize_en(en)]
        top = logit_lens(bundle, source, case.fr_ids).argmax(-1)  # (L, T)
        for row, targets in case.words:
            name = classes.get(tokens[example[1][min(targets)]].lower(), "function word")
            counts[name] = counts.get(name, 0) + (top[:, row] == case.fr_ids[row])
            words[name] = words.get(name, 0) + 1
    return {
        name: {
            "french_words": words[name],
            "top1_by_layer": [round(100 * float(x) / words[name], 1) for x in counts[name]],
        }
        for name in sorted(words, key=words.__getitem__, reverse=True)
    }


def explain(checkpoint: Path, data: Path, n_sentences: int = 500, n_roles: int = 100) -> dict:
    """The card's `explanations` section for `checkpoint`, measured on `data`/test.tsv (and saved)."""
    bundle = load_bundle(checkpoint)
    rows = read_pairs(Path(data) / "test.tsv")[:n_sentences]
    sources = [normalize_source(en).text for en, _, _ in rows]
    examples = alignment_examples(rows, sources)
    methods = {}
    for method in METHODS:
        started = time.perf_counter()
        share, scored = attribution_agreement(bundle, sources, examples, method)
        methods[method] = round(100 * share, 1)
        print(
            f"{method}: {methods[method]}% of {scored} French words ({time.perf_counter() - started:.0f} s)",
            file=sys.stderr,
        )
    cases = alignment_cases(project_tokenizer(bundle.tokenizer), bundle.config.max_len, examples[:n_roles], tokenize_fr)
    roles = head_roles(bundle, sources[:n_roles], gold=cases)
    tagged = roles[roles.role.notna()]
    card = json.loads((Path(checkpoint) / CARD).read_text(encoding="utf-8"))
    report = {
        "sentences": len(rows),
        "french_words": scored,
        "attribution_agreement": methods,
        "best_single_head": card.get("alignment", {}).get("best"),
        "logit_lens_top1_by_layer": lens_top1(bundle, sources),
        "logit_lens_by_word_class": lens_by_class(bundle, rows, sources, examples),
        "head_roles": {
            "sentences": min(n_roles, len(sources)),
            "tagged": [
                {
                    "stack": r["stack"],
                    "kind": r["kind"],
                    "layer": int(r["layer"]),
                    "head": int(r["head"]),
                    "role": r["role"],
                    "score": round(float(r[r["role"]]), 3),
                }
                for r in tagged.to_dict("records")
            ],
        },
    }
    card["explanations"] = report
    (Path(checkpoint) / CARD).write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return report


def main(argv: list[str] | None = None) -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", type=Path)
    parser.add_argument("--data", type=Path, default=Path("data/corpus-default-seed1"))
    parser.add_argument("--sentences", type=int, default=500)
    args = parser.parse_args(argv)
    print(json.dumps(explain(args.checkpoint, args.data, args.sentences), indent=2))


if __name__ == "__main__":
    main()
