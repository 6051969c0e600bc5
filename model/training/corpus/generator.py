"""Random sentence specs (with light selectional restrictions) and corpus files."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from .grammar import (
    END_ADVS,
    FREQ_ADVS,
    LEX,
    NP,
    NUMBERS,
    POSSESSIVES,
    PP,
    PRONOUNS,
    TIME_NOUNS,
    Clause,
    Sentence,
    render,
)

MAX_EN_WORDS = 20

# ----------------------------------------------------------------- noun classes (English lemmas)
PEOPLE = (
    "teacher",
    "student",
    "child",
    "boy",
    "girl",
    "daughter",
    "son",
    "man",
    "woman",
    "friend",
    "brother",
    "sister",
    "mother",
    "father",
    "doctor",
)
ANIMALS = ("cat", "dog", "bird", "horse", "mouse")
ANIMATE = PEOPLE + ANIMALS
PLACES = ("house", "city", "school", "garden", "park", "street", "room", "kitchen", "library", "hospital", "beach")
OBJECTS = (
    "book",
    "table",
    "apple",
    "letter",
    "door",
    "window",
    "key",
    "chair",
    "phone",
    "computer",
    "shirt",
    "hat",
    "newspaper",
    "picture",
    "flower",
    "bike",
    "car",
)
VEHICLES = ("car", "train", "bike")
TEXTS = ("book", "letter", "newspaper", "sentence", "word", "question", "answer")
ABSTRACT = ("language", "word", "sentence", "question", "answer", "model", "machine", "film", "game", "song", "music")
NATURE = ("tree", "river", "sea", "moon", "sun", "flower")
FOOD = ("apple", "bread")
DRINKS = ("water", "coffee")
ALL_NOUNS = tuple(n for n in LEX.nouns if n != "NLP")

# direct objects per transitive verb; "NLP" marks the proper noun
OBJECTS_OF: dict[str, tuple[str, ...]] = {
    "love": ANIMATE
    + PLACES
    + NATURE
    + (
        "music",
        "coffee",
        "bread",
        "song",
        "film",
        "game",
        "book",
        "language",
        "morning",
        "night",
        "picture",
        "car",
        "bike",
        "train",
        "NLP",
    ),
    "see": ANIMATE + PLACES + OBJECTS + NATURE + VEHICLES + ("film", "machine", "model"),
    "eat": FOOD,
    "drink": DRINKS,
    "read": TEXTS,
    "write": ("letter", "book", "song", "sentence", "word", "answer", "question"),
    "open": ("door", "window", "book", "letter", "computer"),
    "close": ("door", "window", "book", "computer"),
    "buy": OBJECTS + FOOD + DRINKS + ("house", "horse", "game"),
    "sell": OBJECTS + ("bread", "house", "horse", "game"),
    "find": OBJECTS + ANIMALS + ("answer", "friend", "house", "school", "library"),
    "give": (
        "book",
        "apple",
        "letter",
        "key",
        "flower",
        "picture",
        "phone",
        "hat",
        "shirt",
        "newspaper",
        "answer",
        "bread",
        "water",
        "coffee",
    ),
    "take": ("book", "key", "phone", "train", "bike", "car", "picture", "apple", "hat", "newspaper", "letter"),
    "speak": ("language",),
    "watch": (
        "film",
        "game",
        "sea",
        "moon",
        "sun",
        "train",
        "bird",
        "child",
        "dog",
        "cat",
        "horse",
        "river",
        "street",
        "picture",
    ),
    "sing": ("song",),
    "learn": ("language", "song", "word", "sentence", "music", "answer", "NLP"),
    "understand": (
        "question",
        "answer",
        "sentence",
        "word",
        "language",
        "teacher",
        "model",
        "machine",
        "film",
        "book",
        "letter",
        "music",
        "NLP",
    ),
    "want": OBJECTS + FOOD + DRINKS + ("house", "dog", "cat", "horse", "game"),
    "have": OBJECTS
    + FOOD
    + DRINKS
    + (
        "house",
        "dog",
        "cat",
        "horse",
        "brother",
        "sister",
        "son",
        "daughter",
        "friend",
        "question",
        "answer",
        "room",
        "garden",
    ),
}
INTRANSITIVE = (
    "sleep",
    "run",
    "walk",
    "work",
    "play",
    "sing",
    "go",
    "come",
    "arrive",
    "leave",
    "eat",
    "drink",
    "read",
    "write",
    "speak",
    "learn",
    "understand",
)
IO_OF = {"give": ANIMATE, "sell": PEOPLE, "write": PEOPLE}
ANIMAL_VERBS = (
    "sleep",
    "eat",
    "drink",
    "run",
    "walk",
    "play",
    "see",
    "love",
    "come",
    "go",
    "leave",
    "arrive",
    "want",
    "find",
    "watch",
    "have",
)
VEHICLE_VERBS = ("go", "come", "arrive", "leave")

# prepositional objects
PREP_NOUNS: dict[str, tuple[str, ...]] = {
    "in": PLACES + ("car", "train", "river", "sea"),
    "on": ("table", "chair", "beach", "street", "bike"),
    "under": ("table", "chair", "tree", "car"),
    "behind": ("house", "tree", "door", "car", "school", "table", "chair", "window"),
    "near": PLACES + ("tree", "river", "sea", "window", "door", "table"),
    "with": ANIMATE,
    "for": PEOPLE,
    "to": (
        "school",
        "city",
        "house",
        "park",
        "garden",
        "library",
        "hospital",
        "beach",
        "sea",
        "river",
        "kitchen",
        "room",
        "street",
    ),
    "from": ("city", "school", "house", "park", "hospital", "library", "beach", "garden"),
}
LOC_PREPS = ("in", "on", "under", "behind", "near")
PREPS_OF: dict[str, tuple[str, ...]] = {
    "sleep": LOC_PREPS,
    "run": ("in", "to", "with", "near", "from"),
    "walk": ("in", "to", "with", "near"),
    "work": ("in", "with", "for", "on"),
    "play": ("in", "with", "near", "under"),
    "sing": ("in", "for", "with"),
    "go": ("to", "with"),
    "come": ("to", "from", "with"),
    "arrive": ("from", "with"),
    "leave": ("with", "from"),
    "eat": ("in", "with"),
    "drink": ("in", "with"),
    "read": ("in", "for"),
    "write": ("in", "for"),
    "speak": ("to", "with"),
    "learn": ("with", "in"),
    "understand": (),
    "see": ("in", "near"),
    "buy": ("for", "in"),
    "sell": ("in",),
    "find": LOC_PREPS,
    "give": (),
    "take": ("for",),
    "watch": ("in", "with"),
    "open": ("with",),
    "close": ("with",),
    "want": ("for",),
    "have": (),
    "love": (),
}
# (verb, prep) pairs with their own prepositional objects
PREP_NOUNS_OF = {
    ("speak", "to"): PEOPLE,
    ("work", "on"): ("NLP", "model", "machine", "computer"),
    ("open", "with"): ("key",),
}
BE_PREPS = LOC_PREPS + ("with", "for")

# adjectives: compatible nouns, and whether a pronoun subject may take them predicatively
_COLOUR_NOUNS = OBJECTS + VEHICLES + ("cat", "dog", "horse", "bird", "house", "flower")
ADJ_NOUNS: dict[str, tuple[str, ...]] = {
    "big": ANIMATE + PLACES + OBJECTS + VEHICLES + ("tree", "river"),
    "small": ANIMATE + PLACES + OBJECTS + VEHICLES + ("tree", "river"),
    "new": OBJECTS
    + PLACES
    + VEHICLES
    + (
        "model",
        "machine",
        "film",
        "game",
        "song",
        "teacher",
        "student",
        "friend",
        "doctor",
        "word",
        "language",
        "week",
    ),
    "old": ANIMATE + PLACES + OBJECTS + VEHICLES + ("tree", "song", "film", "machine"),
    "good": ANIMATE
    + FOOD
    + DRINKS
    + ("book", "film", "game", "song", "music", "answer", "question", "model", "machine", "day", "week", "night"),
    "beautiful": ANIMATE
    + PLACES
    + NATURE
    + ("picture", "song", "music", "day", "night", "morning", "shirt", "hat", "car", "house", "language"),
    "young": ANIMATE + ("tree",),
    "long": (
        "river",
        "street",
        "letter",
        "book",
        "song",
        "film",
        "day",
        "night",
        "week",
        "sentence",
        "question",
        "answer",
        "train",
        "table",
        "word",
    ),
    "red": _COLOUR_NOUNS,
    "blue": _COLOUR_NOUNS + ("sea",),
    "green": _COLOUR_NOUNS + ("tree",),
    "black": _COLOUR_NOUNS + ("coffee",),
    "white": _COLOUR_NOUNS + ("bread", "moon"),
    "happy": ANIMATE,
    "sad": ANIMATE + ("song", "film"),
    "tired": ANIMATE,
    "fast": ANIMALS + PEOPLE + VEHICLES + ("computer", "machine", "model", "river"),
    "slow": ANIMALS + PEOPLE + VEHICLES + ("computer", "machine", "model", "river"),
    "hot": DRINKS + ("bread", "room", "house", "kitchen", "sea", "night", "day", "sun"),
    "cold": DRINKS + ("room", "house", "kitchen", "sea", "night", "day", "morning", "river"),
    "interesting": (
        "book",
        "film",
        "game",
        "question",
        "answer",
        "language",
        "sentence",
        "newspaper",
        "letter",
        "model",
        "city",
        "teacher",
        "NLP",
    ),
    "difficult": ("question", "answer", "language", "game", "sentence", "word", "book", "NLP"),
    "easy": ("question", "answer", "language", "game", "sentence", "word", "book", "NLP"),
    "French": PEOPLE
    + ("book", "film", "newspaper", "song", "music", "car", "bread", "city", "school", "word", "language"),
    "English": PEOPLE + ("book", "film", "newspaper", "song", "music", "car", "city", "school", "word", "language"),
}
PRONOUN_ADJS = (
    "big",
    "small",
    "old",
    "young",
    "good",
    "beautiful",
    "happy",
    "sad",
    "tired",
    "fast",
    "slow",
    "French",
    "English",
    "new",
)
_ADJS_OF_NOUN: dict[str, tuple[str, ...]] = {
    n: tuple(a for a, ns in ADJ_NOUNS.items() if n in ns) for n in ALL_NOUNS + ("NLP",)
}


def _pick(rng: random.Random, items):
    return items[int(rng.random() * len(items))]


def _weighted(rng: random.Random, pairs):
    total = sum(w for _, w in pairs)
    x = rng.random() * total
    for item, w in pairs:
        x -= w
        if x < 0:
            return item
    return pairs[-1][0]


_DET_WEIGHTS = (
    ("the", 30),
    ("a", 14),
    ("bare", 12),
    ("this", 4),
    ("these", 3),
    ("poss", 20),
    ("every", 3),
    ("num", 10),
)


def _gen_np(
    rng: random.Random, pool, role: str, verb: str | None = None, neg: bool = False, allow_bare: bool = True
) -> NP:
    noun = _pick(rng, pool)
    if noun == "NLP":
        return NP(noun="NLP")
    n = LEX.nouns[noun]
    bare_ok = allow_bare and (not n.mass or (role == "obj" and verb in ("love", "eat", "drink", "buy", "want", "have")))
    while True:
        kind = _weighted(rng, _DET_WEIGHTS)
        if kind == "bare" and not bare_ok:
            continue
        if n.mass and kind in ("a", "these", "every", "num"):
            continue
        if kind == "every" and (noun in TIME_NOUNS or role == "io"):
            continue
        break
    plural = False
    if kind == "bare":
        det, plural = None, not n.mass
    elif kind in ("the", "poss"):
        det = "the" if kind == "the" else _pick(rng, POSSESSIVES)
        plural = (not n.mass) and rng.random() < 0.45
    elif kind == "num":
        det = _pick(rng, NUMBERS[1:] if (role == "obj" and neg) else NUMBERS)
        plural = det != "one"
    elif kind == "this":
        det = "this"
    elif kind == "these":
        det, plural = "these", True
    else:
        det = kind
    adj, very = None, False
    cands = _ADJS_OF_NOUN[noun]
    if cands and rng.random() < 0.33:
        adj = _pick(rng, cands)
        a = LEX.adjs[adj]
        if det is None and n.mass and a.position == "before":
            adj = None  # no "du bon pain" / "de bon pain" question: keep mass adjectives after the noun
        elif rng.random() < 0.12:
            very = True
    return NP(noun=noun, plural=plural, det=det, adj=adj, very=very)


def _subject(rng: random.Random, verb: str) -> NP:
    if rng.random() < 0.3:
        return NP(pron=_pick(rng, PRONOUNS))
    pool: tuple[str, ...] = PEOPLE
    r = rng.random()
    if verb in ANIMAL_VERBS and r < 0.35:
        pool = ANIMALS
    elif verb in VEHICLE_VERBS and r < 0.5:
        pool = ("train", "car")
    return _gen_np(rng, pool, "subj")


def _pp(rng: random.Random, prep: str, verb: str | None) -> PP:
    pool = PREP_NOUNS[prep] if verb is None else PREP_NOUNS_OF.get((verb, prep), PREP_NOUNS[prep])
    return PP(prep, _gen_np(rng, pool, "pp", allow_bare=False))


def _end_adv(rng: random.Random, tense: str, neg: str | None, freq: str | None) -> str | None:
    if rng.random() >= 0.3:
        return None
    opts = []
    for a in END_ADVS:
        if a == "yesterday" and tense != "past":
            continue
        if a == "tomorrow" and tense != "fut":
            continue
        if a == "now" and tense == "past":
            continue
        if (neg == "never" or freq in ("often", "always")) and a != "here":
            continue
        opts.append(a)
    a = _pick(rng, opts)
    # weight "every X" (4 options) like a single adverb
    if a.startswith("every") and rng.random() < 0.5:
        a = _pick(rng, opts)
    return a


def random_clause(rng: random.Random, question: bool = False) -> Clause:
    shape = _weighted(rng, (("be_adj", 17), ("be_pp", 8), ("intr", 27), ("trans", 40), ("io", 8)))
    if shape in ("be_adj", "be_pp"):
        verb = "be"
    elif shape == "intr":
        verb = _pick(rng, INTRANSITIVE)
    elif shape == "io":
        verb = _pick(rng, tuple(IO_OF))
    else:
        verb = _pick(rng, tuple(OBJECTS_OF))
    tense = _weighted(rng, (("pres", 45), ("past", 30), ("fut", 25)))
    if verb == "read" and tense == "past":
        tense = _pick(rng, ("pres", "fut"))  # "read" has no simple past in the corpus
    neg = freq = None
    if not question:
        neg = _weighted(rng, ((None, 72), ("not", 20), ("never", 8)))
    if neg is None and rng.random() < 0.15:
        freq = _pick(rng, FREQ_ADVS)
    obj = io = pp = adj = None
    very = False
    if verb == "be":
        if shape == "be_adj":
            if rng.random() < 0.3:
                subj = NP(pron=_pick(rng, PRONOUNS))
                adj = _pick(rng, PRONOUN_ADJS)
            else:
                noun = _pick(rng, ALL_NOUNS + ("NLP",))
                while not _ADJS_OF_NOUN[noun]:
                    noun = _pick(rng, ALL_NOUNS + ("NLP",))
                subj = _gen_np(rng, (noun,), "subj")
                adj = _pick(rng, _ADJS_OF_NOUN[noun])
                if subj.adj == adj:  # not "the green computer is green"
                    subj = NP(noun=subj.noun, plural=subj.plural, det=subj.det)
            very = rng.random() < 0.15
        else:
            subj = _subject(rng, "be") if rng.random() < 0.6 else _gen_np(rng, OBJECTS + ANIMALS, "subj")
            prep = _pick(rng, BE_PREPS)
            pp = _pp(rng, prep, None)
    else:
        subj = _subject(rng, verb)
        if shape in ("trans", "io"):
            obj = _gen_np(rng, OBJECTS_OF[verb], "obj", verb, neg is not None)
        if shape == "io":
            io = _gen_np(rng, IO_OF[verb], "io", allow_bare=False)
        else:
            preps = PREPS_OF.get(verb, ())
            p_pp = 0.5 if shape == "intr" else 0.2
            if preps and rng.random() < p_pp:
                pp = _pp(rng, _pick(rng, preps), verb)
    end = _end_adv(rng, tense, neg, freq)
    if verb == "be" and shape == "be_pp" and end is None and rng.random() < 0.08:
        pp, end = None, "here"  # "The cat is here."
    return Clause(subj, verb, tense, neg, freq, obj, io, pp, adj, very, end)


def random_spec(rng: random.Random) -> Sentence:
    r = rng.random()
    if r < 0.12:
        return Sentence((random_clause(rng, question=True),), None, True)
    if r < 0.37:
        return Sentence((random_clause(rng), random_clause(rng)), _pick(rng, ("and", "but", "because")))
    return Sentence((random_clause(rng),))


@dataclass(frozen=True)
class Example:
    en: str
    fr: str
    alignment: tuple[tuple[int, int], ...]

    def alignment_str(self) -> str:
        return " ".join(f"{e}-{f}" for e, f in self.alignment)


def _n_words(tokens) -> int:
    return sum(1 for t in tokens if t not in (".", "?"))


def random_example(rng: random.Random) -> Example:
    while True:
        r = render(random_spec(rng))
        if _n_words(r.en_tokens) <= MAX_EN_WORDS:
            return Example(r.en, r.fr, r.alignment)


def generate(n: int, seed: int = 0) -> list[Example]:
    """``n`` random examples, deterministic for (n, seed)."""
    rng = random.Random(seed)
    return [random_example(rng) for _ in range(n)]


def random_sentence(seed: int) -> str:
    """One English sentence of the fragment (for a "random sentence" button)."""
    return random_example(random.Random(seed)).en


def write_splits(out_dir, n_train: int, n_valid: int, n_test: int, seed: int = 0) -> dict[str, Path]:
    """Write train/valid/test TSVs (en, fr, alignment); no English sentence appears twice overall."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    seen: set[str] = set()
    sizes = {"train": n_train, "valid": n_valid, "test": n_test}
    paths: dict[str, Path] = {}
    max_tries = 50 * (n_train + n_valid + n_test) + 1000
    tries = 0
    for name, size in sizes.items():
        rows: list[Example] = []
        while len(rows) < size:
            tries += 1
            if tries > max_tries:
                raise RuntimeError("could not draw enough distinct sentences")
            ex = random_example(rng)
            if ex.en in seen:
                continue
            seen.add(ex.en)
            rows.append(ex)
        p = out / f"{name}.tsv"
        with p.open("w", encoding="utf-8", newline="\n") as f:
            for ex in rows:
                f.write(f"{ex.en}\t{ex.fr}\t{ex.alignment_str()}\n")
        paths[name] = p
    return paths


def read_pairs(path: Path) -> list[tuple[str, str, str]]:
    """(english, french, alignment) rows of a corpus TSV file."""
    rows = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        en, fr, alignment = line.split("\t")
        rows.append((en, fr, alignment))
    return rows
