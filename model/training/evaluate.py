"""Measure a checkpoint on the held-out test split and write the scores into its card.json.

    python -m model.evaluate checkpoints/default --data data/corpus-default-seed1

Test BLEU, chrF and exact match (greedy); typed variations (lower case, no final period,
extra spaces) through the app's own path; for every decoder layer and head, how often
cross-attention points at the English word the generator aligned to each French word; and, for
every training snapshot, test exact match, BLEU and the best head's agreement (card "snapshots").
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..bundle import load_bundle
from ..checkpoints.checkpoint import CARD
from ..checkpoints.snapshots import steps as snapshot_steps
from ..engine.tokenizer import normalize_source, project_tokenizer
from .corpus import read_pairs, tokenize_en, tokenize_fr
from .evaluation import alignment_agreement, translate_many, translation_scores


def typed_variants(sentence: str) -> list[str]:
    """How people type the same sentence: lower case, no final punctuation, stray spaces."""
    bare = sentence.rstrip(".?")
    return [sentence.lower(), bare, "  " + sentence.replace(" ", "   ") + " ", bare.lower() + " "]


def alignment_examples(rows: list[tuple[str, str, str]], sources: list[str]) -> list[tuple]:
    """(canonical source, English word token indices, French, gold links) of corpus rows, for
    `alignment_agreement`."""
    examples = []
    for (en, fr, alignment), source in zip(rows, sources, strict=True):
        word_tokens = [i for i, (tok, _, _) in enumerate(tokenize_en(en)) if tok not in (".", "?")]
        pairs = [tuple(map(int, link.split("-"))) for link in alignment.split()]
        examples.append((source, word_tokens, fr, pairs))
    return examples


def snapshot_scores(checkpoint: Path, sources: list[str], references: list[str], examples: list[tuple]) -> list[dict]:
    """Test exact match and BLEU and the best cross-attention head's alignment agreement (percent) of
    every snapshot kept with the checkpoint, in step order."""
    scores = []
    for step in snapshot_steps(checkpoint):
        bundle = load_bundle(checkpoint, snapshot=step)
        tokenizer = project_tokenizer(bundle.tokenizer)
        test = translation_scores(translate_many(bundle.model, tokenizer, sources), references)
        agreement, _ = alignment_agreement(bundle.model, tokenizer, examples, tokenize_fr)
        scores.append(
            {
                "step": step,
                "exact_match": test["exact_match"],
                "bleu": test["bleu"],
                "alignment": round(100 * float(agreement.max()), 1),
            }
        )
        print(f"snapshot at step {step}: {scores[-1]}", file=sys.stderr)
    return scores


def evaluate(checkpoint: Path, data: Path, n_alignment: int = 500, n_variants: int = 200) -> dict:
    """Scores of `checkpoint` (and of its snapshots) on `data`/test.tsv, also saved into its card.json."""
    bundle = load_bundle(checkpoint)
    tokenizer = project_tokenizer(bundle.tokenizer)
    rows = read_pairs(Path(data) / "test.tsv")
    sources = [normalize_source(en).text for en, _, _ in rows]
    references = [fr for _, fr, _ in rows]
    hypotheses = translate_many(bundle.model, tokenizer, sources)
    test = translation_scores(hypotheses, references)

    same = 0
    for en, _, _ in rows[:n_variants]:
        clean = bundle.translate(en, trace=False).translation
        same += all(bundle.translate(v, trace=False).translation == clean for v in typed_variants(en))
    robustness = {
        "sentences": min(n_variants, len(rows)),
        "variants_each": 4,
        "identical_share": round(100 * same / min(n_variants, len(rows)), 2),
    }

    examples = alignment_examples(rows[:n_alignment], sources[:n_alignment])
    agreement, scored = alignment_agreement(bundle.model, tokenizer, examples, tokenize_fr)
    layer, head = divmod(int(agreement.argmax()), agreement.shape[1])
    alignment_report = {
        "definition": "share of French words whose most-attended English word (cross-attention of the "
        "decoder row that predicts the word's first piece, summed over the word's pieces) "
        "is aligned to it by the corpus generator",
        "sentences": len(examples),
        "french_words": scored,
        "per_layer_head": [[round(100 * float(x), 1) for x in row] for row in agreement],
        "best": {"layer": layer, "head": head, "agreement": round(100 * float(agreement[layer, head]), 1)},
    }
    card = json.loads((Path(checkpoint) / CARD).read_text(encoding="utf-8"))
    card.update(
        test=test,
        typed_variations=robustness,
        alignment=alignment_report,
        wrong_examples=[
            {"en": en, "expected": ref, "got": hyp}
            for (en, _, _), ref, hyp in zip(rows, references, hypotheses, strict=True)
            if ref != hyp
        ][:10],
        snapshots=snapshot_scores(checkpoint, sources, references, examples),
    )
    (Path(checkpoint) / CARD).write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return card


def main(argv: list[str] | None = None) -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint", type=Path, nargs="?", default=Path("checkpoints/default"))
    parser.add_argument("--data", type=Path, help="corpus directory (default: the one named in the card)")
    args = parser.parse_args(argv)
    data = args.data or Path(json.loads((args.checkpoint / CARD).read_text())["corpus"]["data"])
    card = evaluate(args.checkpoint, data)
    print(json.dumps({k: card[k] for k in ("test", "typed_variations")}, indent=2))
    print("alignment agreement, % (rows = decoder layers, columns = heads):")
    for row in card["alignment"]["per_layer_head"]:
        print("  " + "  ".join(f"{x:5.1f}" for x in row))
    print("best head:", card["alignment"]["best"])
    for row in card["snapshots"]:
        print(
            f"snapshot step {row['step']:>6}: exact {row['exact_match']:5.1f}%  BLEU {row['bleu']:5.1f}  "
            f"best head {row['alignment']:5.1f}%"
        )


if __name__ == "__main__":
    main()
