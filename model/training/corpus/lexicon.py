"""Loader for the English->French core lexicon (``en-fr-core.tsv`` next to this file).

The TSV is the single source of the words and their fixed translations; the grammar rules
(articles, agreement, conjugation) live in :mod:`model.corpus.french` and
:mod:`model.corpus.grammar`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

TSV_PATH = Path(__file__).parent / "en-fr-core.tsv"


@dataclass(frozen=True)
class Noun:
    en: str
    fr: str
    gender: str  # "m" / "f"
    en_plural: str
    fr_plural: str
    mass: bool = False
    proper: bool = False


@dataclass(frozen=True)
class Adj:
    en: str
    fr: str
    position: str  # "before" / "after"
    forms: tuple[str, str, str, str]  # m_sg f_sg m_pl f_pl
    vowel: str | None = None  # m_sg form before a vowel (bel, nouvel, vieil)


@dataclass(frozen=True)
class Verb:
    base: str
    s3: str
    past: str | None  # None: no simple past in the corpus ("read")
    inf: str
    participle: str
    aux: str  # "avoir" / "être"
    transitive_ok: bool = True


@dataclass(frozen=True)
class Lexicon:
    nouns: dict[str, Noun]
    adjs: dict[str, Adj]
    verbs: dict[str, Verb]
    prons: dict[str, str]
    dets: dict[str, str]
    nums: tuple[tuple[str, str], ...]
    preps: dict[str, str]
    advs: dict[str, str]
    conjs: dict[str, str]
    rows: tuple[tuple[str, str, str, str], ...] = field(default=())


def _kv(tokens: list[str]) -> dict[str, str]:
    out = {}
    for t in tokens:
        if "=" in t:
            k, v = t.split("=", 1)
            out[k] = v
    return out


@cache
def load_lexicon(path: str | None = None) -> Lexicon:
    p = Path(path) if path else TSV_PATH
    nouns: dict[str, Noun] = {}
    adjs: dict[str, Adj] = {}
    verbs: dict[str, Verb] = {}
    prons: dict[str, str] = {}
    dets: dict[str, str] = {}
    nums: list[tuple[str, str]] = []
    preps: dict[str, str] = {}
    advs: dict[str, str] = {}
    conjs: dict[str, str] = {}
    rows = []
    for line in p.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        pos, en, fr = cols[0], cols[1], cols[2]
        extra = cols[3] if len(cols) > 3 else ""
        rows.append((pos, en, fr, extra))
        ex = extra.split()
        if pos == "noun":
            kv = _kv(ex)
            nouns[en] = Noun(
                en=en,
                fr=fr,
                gender=ex[0],
                en_plural=kv.get("en_plural", en + "s"),
                fr_plural=kv.get("fr_plural", fr + "s"),
                mass="mass" in ex,
                proper="proper:" in ex,
            )
        elif pos == "adj":
            kv = _kv(ex)
            adjs[en] = Adj(en=en, fr=fr, position=ex[0], forms=(ex[1], ex[2], ex[3], ex[4]), vowel=kv.get("vowel"))
        elif pos == "verb":
            base, s3, past = en.split("/")
            verbs[base] = Verb(
                base=base,
                s3=s3,
                past=None if past == "-" else past,
                inf=fr,
                participle=ex[0],
                aux=ex[1],
                transitive_ok="intransitive" not in extra,
            )
        elif pos == "pron":
            prons[en] = fr
        elif pos == "det":
            dets[en] = fr
        elif pos == "num":
            nums.extend(zip(en.split("/"), fr.split("/"), strict=True))
        elif pos == "prep":
            preps[en] = fr
        elif pos == "adv":
            advs[en] = fr
        elif pos == "conj":
            conjs[en] = fr
        else:  # pragma: no cover - the TSV only has the categories above
            raise ValueError(f"unknown category {pos!r} in {p}")
    return Lexicon(nouns, adjs, verbs, prons, dets, tuple(nums), preps, advs, conjs, tuple(rows))


def lexicon_by_category() -> dict[str, list[tuple[str, str]]]:
    """The vocabulary as (English, French) pairs per category, in TSV order."""
    lex = load_lexicon()
    out: dict[str, list[tuple[str, str]]] = {
        "nouns": [(n.en, "le TAL" if n.proper else n.fr) for n in lex.nouns.values()],
        "verbs": [(v.base, v.inf) for v in lex.verbs.values()],
        "adjectives": [(a.en, a.fr) for a in lex.adjs.values()],
        "pronouns": list(lex.prons.items()),
        "determiners": list(lex.dets.items()),
        "numbers": list(lex.nums),
        "prepositions": list(lex.preps.items()),
        "adverbs": list(lex.advs.items()),
        "conjunctions": list(lex.conjs.items()),
    }
    return out
