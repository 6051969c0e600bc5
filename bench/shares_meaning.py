"""Do the logit shares mean something? Two measures on the shipped model (English -> French, 3 decoder layers x 4
heads, self- and cross-attention), over the test sentences whose gold word alignment the corpus generator knows
(the card's test split, regenerated from the card's corpus seed and sizes unless --data names a corpus folder),
teacher-forced on the French reference as the card's alignment measures are:

a. For the first piece of every French noun (a French word takes the class, in the lexicon, of the first English
   word the generator aligned it to: `model.training.explanations.word_classes`), the cross-attention head with the
   largest share of that piece's logit: does its attention from that decoder row peak on a piece of a gold-aligned
   English word? Its rate against the median-share cross head's (the 7th of 12 by share), a random cross head's
   (the mean over the 12, what a head drawn at random scores on average) and, as a control for the layer, the mean
   of the other cross heads of the top one's layer; beside each, the card's measure (attention summed over each
   English word's pieces, the highest word a gold one); and the card's best head.
b. Knocking out the head with the largest share (of all 24 heads) against knocking out the median-share one (the
   13th by share): the mean |change| of that piece's logit under teacher forcing, and how often the top one's is
   the larger; the same for the piece's log-probability, and which cross heads have the largest share.

    python bench/shares_meaning.py [--sentences 500] [--data data/corpus-default-seed1]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tree, run as a script or with -m

from model import Bundle, Interventions, load_bundle
from model.analysis import forced
from model.analysis.alignment import AlignmentCase
from model.analysis.shares import shares_at
from model.checkpoints.checkpoint import CARD
from model.engine import stages
from model.engine.tokenizer import normalize_source, project_tokenizer
from model.training.corpus import read_pairs, tokenize_en, tokenize_fr, write_splits
from model.training.evaluate import alignment_examples
from model.training.evaluation import alignment_cases
from model.training.explanations import word_classes

NOUN = "noun"
LABELS = {
    "top": "top-share cross head",
    "median": "median-share cross head",
    "random": "a random cross head",
    "peers": "the top one's layer's other cross heads",
    "card's best": "the card's best head",
}


def test_rows(bundle: Bundle, data: Path | None, sentences: int) -> list[tuple[str, str, str]]:
    """The first `sentences` test rows (en, fr, alignment): of `data`/test.tsv, or of the card's test split written
    again by the corpus generator (its seed and split sizes, as the checkpoint was trained)."""
    if data is not None:
        return read_pairs(data / "test.tsv")[:sentences]
    corpus = json.loads((bundle.path / CARD).read_text(encoding="utf-8"))["corpus"]
    with tempfile.TemporaryDirectory() as folder:
        sizes = (corpus["train_pairs"], corpus["valid_pairs"], corpus["test_pairs"])
        paths = write_splits(folder, *sizes, seed=corpus["seed"])
        return read_pairs(paths["test"])[:sentences]


def nouns(en: str, example: tuple, case: AlignmentCase, classes: dict[str, str]) -> list[tuple[int, set[int]]]:
    """The case's scored French words whose first aligned English word is a noun: (decoder row, gold words)."""
    tokens = [token for token, _, _ in tokenize_en(en)]
    return [
        (row, targets) for row, targets in case.words if classes.get(tokens[example[1][min(targets)]].lower()) == NOUN
    ]


@dataclass
class Tally:
    """What the measures count, over every noun."""

    nouns: int = 0
    peaks: dict[str, float] = field(default_factory=dict)  # who -> French nouns whose attention peak is gold
    words: dict[str, float] = field(default_factory=dict)  # the same by the card's measure (summed per word)
    top_change: list[float] = field(default_factory=list)
    median_change: list[float] = field(default_factory=list)
    top_share: list[float] = field(default_factory=list)
    top_drop: list[float] = field(default_factory=list)  # the piece's log-probability's change, top-share knock-out
    median_drop: list[float] = field(default_factory=list)
    top_heads: dict[Hashable, int] = field(default_factory=dict)  # the top-share cross head, how often

    def hit(self, who: str, peak: float, word: float) -> None:
        self.peaks[who] = self.peaks.get(who, 0.0) + peak
        self.words[who] = self.words.get(who, 0.0) + word


def _ranked(shares, kinds: tuple[str, ...]) -> list[Hashable]:
    """The heads of those kinds, largest share first."""
    heads = [label for label in shares.index if isinstance(label, tuple) and label[1] in kinds]
    return sorted(heads, key=lambda label: -shares[label])


def _gold(case: AlignmentCase, pattern: np.ndarray, targets: set[int]) -> tuple[float, float]:
    """(1 if the attention row `pattern` (source pieces,) peaks on a piece of a gold word, 1 if its sum per word
    peaks on a gold word): each 0 or 1."""
    gold = case.to_word[:, sorted(targets)].sum(axis=1) > 0
    return float(gold[int(pattern.argmax())]), float(int((pattern @ case.to_word).argmax()) in targets)


def _scores(bundle: Bundle, src: torch.Tensor, tgt: torch.Tensor, row: int, piece: int, iv: Interventions):
    """(the piece's logit, its log-probability) at decoder `row` of a teacher-forced pass under `iv`."""
    with torch.inference_mode():
        logits = bundle.model(src, tgt, iv)[0, row].double()
    return float(logits[piece]), float(logits.log_softmax(-1)[piece])


def measure(bundle: Bundle, source: str, case: AlignmentCase, rows: list[tuple[int, set[int]]], tally: Tally) -> None:
    """Both measures on one sentence's nouns, from one recorded pass and two knock-outs per noun."""
    iv, best = Interventions(), ("decoder", "cross", *_card_best(bundle))
    src, tgt, produced = forced.inputs(bundle, source, case.fr_ids)
    if src[0].tolist() != case.src_ids:
        raise RuntimeError(f"the source {source!r} is not read as the alignment's pieces")
    tensors = forced.recorded(bundle, src, tgt, iv)
    for row, targets in rows:
        shares = shares_at(bundle, tensors, row, produced[row]).shares
        cross = _ranked(shares, ("cross",))
        chosen = {"top": cross[0], "median": cross[len(cross) // 2], "card's best": best}
        for who, (_, kind, layer, head) in chosen.items():
            pattern = tensors[stages.attention("decoder", kind, layer, "pattern")][0, head, row].numpy()
            tally.hit(who, *_gold(case, pattern, targets))
        peers = [label for label in cross if label[2] == cross[0][2] and label != cross[0]]
        for group, labels in (("random", cross), ("peers", peers)):
            for _, kind, layer, head in labels:
                pattern = tensors[stages.attention("decoder", kind, layer, "pattern")][0, head, row].numpy()
                tally.hit(group, *(hit / len(labels) for hit in _gold(case, pattern, targets)))
        every = _ranked(shares, ("self", "cross"))
        logit, log_p = _scores(bundle, src, tgt, row, produced[row], iv)
        for label, changes, drops in (
            (every[0], tally.top_change, tally.top_drop),
            (every[len(every) // 2], tally.median_change, tally.median_drop),
        ):
            knocked = _scores(bundle, src, tgt, row, produced[row], Interventions(ablate=frozenset({label})))
            changes.append(knocked[0] - logit)
            drops.append(log_p - knocked[1])
        tally.top_share.append(float(shares[every[0]]))
        tally.top_heads[cross[0]] = tally.top_heads.get(cross[0], 0) + 1
        tally.nouns += 1


def _card_best(bundle: Bundle) -> tuple[int, int]:
    best = json.loads((bundle.path / CARD).read_text(encoding="utf-8"))["alignment"]["best"]
    return int(best["layer"]), int(best["head"])


def _sizes(changes: list[float]) -> tuple[np.ndarray, np.ndarray]:
    signed = np.array(changes)
    return np.abs(signed), signed


def report(tally: Tally, sentences: int, seconds: float) -> None:
    n = max(tally.nouns, 1)
    print(f"{sentences} test sentences, {tally.nouns} French nouns ({seconds:.0f} s)")
    print("a. cross-attention from the noun's first piece's row, on a gold-aligned English word:")
    print(f"   {'head':40s}peak piece   card's measure (summed per word)")
    for who, name in LABELS.items():
        print(f"   {name:40s}{100 * tally.peaks[who] / n:6.1f} %     {100 * tally.words[who] / n:6.1f} %")
    (top, signed), median = _sizes(tally.top_change), _sizes(tally.median_change)[0]
    print("b. knocking out one head (of all 24), the piece's logit under teacher forcing:")
    print(
        f"   top-share head:    mean |change| {top.mean():.3f} (median {np.median(top):.3f}; signed mean"
        f" {signed.mean():+.3f}), while its share is {np.mean(tally.top_share):.3f} on average"
    )
    print(f"   median-share head: mean |change| {median.mean():.3f} (median {np.median(median):.3f})")
    print(f"   the top one's change is the larger for {100 * float((top > median).mean()):.1f} % of the nouns")
    drops = np.array(tally.top_drop), np.array(tally.median_drop)
    print(
        f"   the piece's log-probability drops by {drops[0].mean():.2e} (top) and {drops[1].mean():.2e} (median) on"
        f" average; the top one's drop is the larger for {100 * float((drops[0] > drops[1]).mean()):.1f} %"
    )
    common = sorted(tally.top_heads.items(), key=lambda item: -item[1])[:4]
    print("   the top-share cross head: " + ", ".join(f"{label[2:]} {100 * k / n:.0f} %" for label, k in common))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=500)
    parser.add_argument("--data", type=Path, default=None, help="a corpus folder with test.tsv")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    bundle = load_bundle()
    rows = test_rows(bundle, args.data, args.sentences)
    sources = [normalize_source(en).text for en, _, _ in rows]
    examples = alignment_examples(rows, sources)
    cases = alignment_cases(project_tokenizer(bundle.tokenizer), bundle.config.max_len, examples, tokenize_fr)
    classes, tally, started = word_classes(), Tally(), time.perf_counter()
    for (en, _, _), source, example, case in zip(rows, sources, examples, cases, strict=True):
        measure(bundle, source, case, nouns(en, example, case, classes), tally)
    report(tally, len(rows), time.perf_counter() - started)


if __name__ == "__main__":
    main()
