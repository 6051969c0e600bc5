"""Synchronous grammar: a sentence *spec* is rendered into English, French and an alignment.

The same :func:`render` is used by the random generator and by :func:`translate`
(which parses a sentence of the English fragment back into a spec with :func:`parse`).
See the package docstring for the alignment conventions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from i18n import later

from . import french as F
from .lexicon import Noun, load_lexicon

LEX = load_lexicon()

PRONOUNS = ("I", "you", "he", "she", "we", "they")
# person index (je tu il nous vous ils), gender, plural -- "you" is vous (masc. plural)
_PRON_INFO = {
    "I": (0, "m", False),
    "you": (4, "m", True),
    "he": (2, "m", False),
    "she": (2, "f", False),
    "we": (3, "m", True),
    "they": (5, "m", True),
}
POSSESSIVES = ("my", "your", "his", "her", "our", "their")
NUMBERS = tuple(en for en, _ in LEX.nums)
NUM_FR = dict(LEX.nums)
SG_DETS = ("a", "this", "every", "one")
PL_DETS = ("these",) + NUMBERS[1:]
FREQ_ADVS = ("often", "always", "also")
TIME_NOUNS = ("morning", "day", "night", "week")
END_ADVS = ("today", "tomorrow", "yesterday", "now", "here") + tuple("every " + t for t in TIME_NOUNS)
CONJS = ("and", "but", "because")
PREPS = tuple(LEX.preps)
MASS_PARTITIVE_VERBS = ("eat", "drink", "buy", "want", "have")

_DEF = {"m": "le", "f": "la"}
_POSS_FR = {
    "my": ("mon", "ma", "mes"),
    "your": ("votre", "votre", "vos"),
    "his": ("son", "sa", "ses"),
    "her": ("son", "sa", "ses"),
    "our": ("notre", "notre", "nos"),
    "their": ("leur", "leur", "leurs"),
}


@dataclass(frozen=True)
class NP:
    noun: str | None = None  # English lemma ("NLP" for the proper noun)
    pron: str | None = None  # one of PRONOUNS
    plural: bool = False
    det: str | None = None  # the a this these my your his her our their every one..ten, None = bare
    adj: str | None = None
    very: bool = False

    @property
    def lemma(self) -> str:
        """The English lemma of a noun phrase headed by a noun (a pronoun has none)."""
        if self.noun is None:
            raise ValueError(f"{self} is a pronoun, not a noun phrase")
        return self.noun


@dataclass(frozen=True)
class PP:
    prep: str
    np: NP


@dataclass(frozen=True)
class Clause:
    subj: NP
    verb: str  # English base form; "be" is the copula
    tense: str = "pres"  # pres / past / fut
    neg: str | None = None  # "not" / "never"
    freq: str | None = None  # often / always / also
    obj: NP | None = None
    io: NP | None = None  # "to IO" of give/sell/write
    pp: PP | None = None  # adjunct PP, or the predicate of "be"
    adj: str | None = None  # predicate adjective of "be"
    very: bool = False
    end: str | None = None  # one of END_ADVS


@dataclass(frozen=True)
class Sentence:
    clauses: tuple[Clause, ...]
    conj: str | None = None
    question: bool = False


# --------------------------------------------------------------------------- helpers


def np_features(np: NP) -> tuple[int, str, bool]:
    """(French person index, gender, plural) of a subject noun phrase."""
    if np.pron:
        return _PRON_INFO[np.pron]
    if np.noun == "NLP":
        return 2, "m", False
    return (5 if np.plural else 2), LEX.nouns[np.lemma].gender, np.plural


def _en_3sg(np: NP) -> bool:
    if np.pron:
        return np.pron in ("he", "she")
    return not np.plural


def _be_en(np: NP, tense: str) -> str:
    if tense == "pres":
        if np.pron == "I":
            return "am"
        return "is" if _en_3sg(np) else "are"
    return "was" if (np.pron == "I" or _en_3sg(np)) else "were"


class _Toks:
    """Token list; French tokens carry the set of English indices they are aligned to."""

    def __init__(self) -> None:
        self.words: list[str] = []
        self.src: list[set[int]] = []

    def add(self, word: str, *src) -> int:
        s: set[int] = set()
        for x in src:
            if x is None:
                continue
            if isinstance(x, (set, frozenset, tuple, list)):
                s.update(i for i in x if i is not None)
            else:
                s.add(x)
        self.words.append(word)
        self.src.append(s)
        return len(self.words) - 1


# --------------------------------------------------------------------------- English


def _en_np(np: NP, E: _Toks) -> dict:
    r: dict = {}
    if np.pron:
        r["pron"] = E.add(np.pron)
        return r
    if np.noun == "NLP":
        r["noun"] = E.add("NLP")
        return r
    n = LEX.nouns[np.lemma]
    nform = n.en_plural if np.plural else n.en
    adj_en = LEX.adjs[np.adj].en if np.adj else None
    nxt = "very" if np.very else (adj_en or nform)
    if np.det:
        d = np.det
        if d == "a" and nxt[0].lower() in "aeiou":
            d = "an"
        r["det"] = E.add(d)
    if np.very:
        r["very"] = E.add("very")
    if adj_en:
        r["adj"] = E.add(adj_en)
    r["noun"] = E.add(nform)
    return r


def _en_clause(c: Clause, E: _Toks, question: bool) -> dict:
    r: dict = {}
    be = c.verb == "be"
    V = LEX.verbs[c.verb]
    s3 = _en_3sg(c.subj)
    if question:
        if be and c.tense != "fut":
            r["q"] = r["verb"] = E.add(_be_en(c.subj, c.tense))
            r["subj"] = _en_np(c.subj, E)
            if c.freq:
                r["freq"] = E.add(c.freq)
        else:
            if c.tense == "fut":
                r["q"] = r["will"] = E.add("will")
            else:
                r["q"] = E.add("did" if c.tense == "past" else ("does" if s3 else "do"))
            r["subj"] = _en_np(c.subj, E)
            if c.freq:
                r["freq"] = E.add(c.freq)
            r["verb"] = E.add(V.base)
    else:
        r["subj"] = _en_np(c.subj, E)

        def _adv() -> None:
            if c.neg:
                r[c.neg] = E.add(c.neg)
            if c.freq:
                r["freq"] = E.add(c.freq)

        if c.tense == "fut":
            r["will"] = E.add("will")
            _adv()
            r["verb"] = E.add(V.base)
        elif be:
            r["verb"] = E.add(_be_en(c.subj, c.tense))
            _adv()
        elif c.neg == "not":
            r["do"] = E.add("did" if c.tense == "past" else ("does" if s3 else "do"))
            r["not"] = E.add("not")
            r["verb"] = E.add(V.base)
        else:
            _adv()
            if c.tense == "past":
                if V.past is None:
                    raise ValueError(f"{c.verb!r} has no simple past in the corpus")
                form = V.past
            else:
                form = V.s3 if s3 else V.base
            r["verb"] = E.add(form)
    _en_complements(c, r, E)
    return r


def _en_complements(c: Clause, r: dict, E: _Toks) -> None:
    """The words after the verb: object, "to" + indirect object, predicate adjective, PP, end adverb."""
    if c.obj:
        r["obj"] = _en_np(c.obj, E)
    if c.io:
        r["to"] = E.add("to")
        r["io"] = _en_np(c.io, E)
    if c.adj:
        if c.very:
            r["very"] = E.add("very")
        r["adj"] = E.add(LEX.adjs[c.adj].en)
    if c.pp:
        r["prep"] = E.add(c.pp.prep)
        r["pp"] = _en_np(c.pp.np, E)
    if c.end:
        r["end"] = [E.add(w) for w in c.end.split()]


# --------------------------------------------------------------------------- French


def _fr_article(np: NP, n: Noun, role: str, verb: str | None, neg: bool, adjective_before_noun: bool) -> list[str]:
    """The French article (or determiner) words of a noun phrase whose noun is ``n``."""
    g, pl = n.gender, np.plural
    d = np.det
    if d is None:
        if pl and not n.mass:
            if role == "subj" or (role == "obj" and verb == "love"):
                art = ["les"]  # generic
            elif role == "obj" and neg:
                art = ["de"]
            else:
                art = ["de" if adjective_before_noun else "des"]
        else:  # bare mass noun
            if role == "obj" and verb == "love":
                art = [_DEF[g]]
            elif role == "obj" and neg:
                art = ["de"]
            else:
                art = ["de", _DEF[g]]  # partitive: du / de la / de l' after contraction & elision
    elif d in ("a", "an"):
        art = ["de"] if (role == "obj" and neg) else ["un" if g == "m" else "une"]
    elif d == "the":
        art = ["les"] if pl else [_DEF[g]]
    elif d == "this":
        art = ["ce" if g == "m" else "cette"]
    elif d == "these":
        art = ["ces"]
    elif d in _POSS_FR:
        forms = _POSS_FR[d]
        art = [forms[2] if pl else (forms[0] if g == "m" else forms[1])]
    elif d == "every":
        art = ["chaque"]
    elif d == "one":
        art = ["un" if g == "m" else "une"]
    elif d in NUM_FR:
        art = [NUM_FR[d]]
    else:
        raise ValueError(f"unknown determiner {d!r}")
    return art


def _fr_np(np: NP, r: dict, T: _Toks, role: str, verb: str | None = None, neg: bool = False) -> None:
    if np.pron:
        T.add(LEX.prons[np.pron], r["pron"])
        return
    if np.noun == "NLP":
        T.add("le", r["noun"])
        T.add("TAL", r["noun"])
        return
    n = LEX.nouns[np.lemma]
    g, pl = n.gender, np.plural
    a = LEX.adjs[np.adj] if np.adj else None
    before = a is not None and a.position == "before"
    art_src = r.get("det", r["noun"])
    for w in _fr_article(np, n, role, verb, neg, before):
        T.add(w, art_src)
    noun_fr = n.fr_plural if pl else n.fr
    if a is not None:
        form = F.adj_form(a.forms, a.vowel, g, pl, before_vowel_noun=before and F.starts_with_vowel(noun_fr))
    if before:
        if np.very:
            T.add("très", r["very"])
        T.add(form, r["adj"])
    T.add(noun_fr, r["noun"])
    if a is not None and not before:
        if np.very:
            T.add("très", r["very"])
        T.add(form, r["adj"])


def _fr_pp(pp: PP, r: dict, T: _Toks) -> None:
    for w in LEX.preps[pp.prep].split():
        T.add(w, r["prep"])
    _fr_np(pp.np, r["pp"], T, "pp")


_FREQ_FR = {a: LEX.advs[a] for a in FREQ_ADVS}


def _fr_clause(c: Clause, r: dict, T: _Toks, question: bool) -> None:
    if question:
        T.add("est-ce", r["q"])
        T.add("que", r["q"])
    _fr_np(c.subj, r["subj"], T, "subj")
    person, g, pl = np_features(c.subj)
    V = LEX.verbs[c.verb]
    neg_src = r.get(c.neg) if c.neg else None

    def _after_fin() -> None:
        if c.neg == "not":
            T.add("pas", neg_src)
        elif c.neg == "never":
            T.add("jamais", neg_src)
        if c.freq:
            T.add(_FREQ_FR[c.freq], r["freq"])

    if c.verb == "be" or c.tense != "past":
        src: tuple[int | None, ...]  # the English words the finite verb translates
        if c.tense == "fut":
            form, src = F.future(V.inf, person), (r["will"], r["verb"])
        elif c.verb == "be" and c.tense == "past":
            form, src = F.imparfait_etre(person), (r["verb"],)
        else:
            form, src = F.present(V.inf, person), (r["verb"], r.get("do"))
        if c.neg:
            T.add("ne", neg_src)
        T.add(form, *src)
        _after_fin()
    else:  # passé composé
        aux = F.present(V.aux, person)
        aux_src = r.get("do", r.get("q", r["verb"]))
        part = V.participle
        if V.aux == "être":
            part = F.participle_agree(part, g, pl)
        if c.neg:
            T.add("ne", neg_src)
        T.add(aux, aux_src)
        _after_fin()
        T.add(part, r["verb"])
    if c.obj:
        _fr_np(c.obj, r["obj"], T, "obj", c.verb, c.neg is not None)
    if c.io:
        T.add("à", r["to"])
        _fr_np(c.io, r["io"], T, "io")
    if c.adj:
        a = LEX.adjs[c.adj]
        if c.very:
            T.add("très", r["very"])
        T.add(F.adj_form(a.forms, a.vowel, g, pl), r["adj"])
    if c.pp:
        _fr_pp(c.pp, r, T)
    if c.end:
        ws = c.end.split()
        if len(ws) == 1:
            T.add(LEX.advs[ws[0]], r["end"][0])
        else:
            T.add(LEX.dets["every"], r["end"][0])
            T.add(LEX.nouns[ws[1]].fr, r["end"][1])


_ELIDE = {
    "je": "j'",
    "le": "l'",
    "la": "l'",
    "ne": "n'",
    "de": "d'",
    "que": "qu'",
    "ce": "cet",
    "ma": "mon",
    "sa": "son",
}
_CONTRACT = {("à", "le"): "au", ("à", "les"): "aux", ("de", "le"): "du", ("de", "les"): "des"}


def _fr_postprocess(T: _Toks) -> None:
    w, s = T.words, T.src
    for i in range(len(w) - 1):
        if w[i] in _ELIDE and F.starts_with_vowel(w[i + 1]):
            w[i] = _ELIDE[w[i]]
    i = 0
    while i < len(w) - 1:
        key = (w[i], w[i + 1])
        if key in _CONTRACT:
            w[i] = _CONTRACT[key]
            s[i] = s[i] | s[i + 1]
            del w[i + 1], s[i + 1]
        i += 1


# --------------------------------------------------------------------------- rendering


@dataclass(frozen=True)
class Rendered:
    en_tokens: tuple[str, ...]
    fr_tokens: tuple[str, ...]
    alignment: tuple[tuple[int, int], ...]
    en: str
    fr: str


def _cap(w: str) -> str:
    return w[:1].upper() + w[1:]


def _join(tokens: list[str], space_before_q: bool) -> str:
    out = ""
    for t in tokens:
        if not out:
            out = t
        elif t == "." or (t == "?" and not space_before_q) or out.endswith("'"):
            out += t
        else:
            out += " " + t
    return out


def render(s: Sentence) -> Rendered:
    E, T = _Toks(), _Toks()
    if s.question:
        if len(s.clauses) != 1:
            raise ValueError("questions have a single clause")
        r = _en_clause(s.clauses[0], E, True)
        q = E.add("?")
        _fr_clause(s.clauses[0], r, T, True)
        T.add("?", q)
    else:
        first, *rest = s.clauses
        if len(rest) > 1:
            raise ValueError("one or two clauses")
        r = _en_clause(first, E, False)
        joined = None
        for second in rest:
            if s.conj is None:
                raise ValueError("two clauses are joined by a conjunction")
            conj = E.add(s.conj)
            joined = (s.conj, conj, second, _en_clause(second, E, False))
        dot = E.add(".")
        _fr_clause(first, r, T, False)
        if joined is not None:
            word, conj, second, r_second = joined
            for w in LEX.conjs[word].split():
                T.add(w, conj)
            _fr_clause(second, r_second, T, False)
        T.add(".", dot)
    _fr_postprocess(T)
    E.words[0] = _cap(E.words[0])
    T.words[0] = _cap(T.words[0])
    align = tuple(sorted((e, f) for f, src in enumerate(T.src) for e in src))
    return Rendered(
        tuple(E.words),
        tuple(T.words),
        align,
        _join(E.words, False),
        _join(T.words, True),
    )


# --------------------------------------------------------------------------- tokenizers

_ELIDED_PREFIXES = ("j'", "l'", "n'", "d'", "qu'", "c'", "m'", "t'", "s'")


def _split_punct(s: str):
    for m in re.finditer(r"\S+", s):
        w, a, b = m.group(), m.start(), m.end()
        if len(w) > 1 and w[-1] in ".?!":
            yield w[:-1], a, b - 1
            yield w[-1], b - 1, b
        else:
            yield w, a, b


def tokenize_en(s: str) -> list[tuple[str, int, int]]:
    """Whitespace tokens, with a trailing "." / "?" split off: (token, start, end) spans."""
    return list(_split_punct(s))


def tokenize_fr(s: str) -> list[tuple[str, int, int]]:
    """Like :func:`tokenize_en`, and elided forms split after the apostrophe (l'|eau, qu'|il).

    "aujourd'hui" stays one token; "Est-ce" is one token.
    """
    out = []
    for w, a, b in _split_punct(s):
        while True:
            k = w.find("'")
            if k <= 0 or k == len(w) - 1 or w[: k + 1].lower() not in _ELIDED_PREFIXES:
                break
            out.append((w[: k + 1], a, a + k + 1))
            w, a = w[k + 1 :], a + k + 1
        out.append((w, a, b))
    return out


# --------------------------------------------------------------------------- parser

_EN_NOUN_FORMS: dict[str, tuple[str, bool]] = {}
for _n in LEX.nouns.values():
    _EN_NOUN_FORMS[_n.en.lower()] = (_n.en, False)
    if not _n.proper:
        _EN_NOUN_FORMS[_n.en_plural.lower()] = (_n.en, True)
_EN_ADJ = {a.en.lower(): a.en for a in LEX.adjs.values()}
_EN_VERB_FORMS: dict[str, tuple[str, str]] = {}  # form -> (lemma, "base"/"s3"/"past")
for _v in LEX.verbs.values():
    if _v.base == "be":
        continue
    _EN_VERB_FORMS[_v.base] = (_v.base, "base")
    _EN_VERB_FORMS[_v.s3] = (_v.base, "s3")
    if _v.past:
        _EN_VERB_FORMS[_v.past] = (_v.base, "past")
_BE_FORMS = {"am": "pres", "is": "pres", "are": "pres", "was": "past", "were": "past"}
_DO_FORMS = {"do": "pres", "does": "pres", "did": "past"}
_PRON_LOWER = {p.lower(): p for p in PRONOUNS}
_DETS = ("the", "a", "an", "this", "these", "every") + POSSESSIVES + NUMBERS
IO_VERBS = ("give", "sell", "write")


class _Parser:
    def __init__(self, words: list[str]) -> None:
        self.w = words
        self.i = 0

    def peek(self, k: int = 0) -> str | None:
        j = self.i + k
        return self.w[j] if j < len(self.w) else None

    def next(self) -> str:
        if self.i >= len(self.w):
            raise ValueError(later("unexpected end of sentence"))
        self.i += 1
        return self.w[self.i - 1]

    def expect(self, word: str) -> None:
        got = self.next()
        if got != word:
            raise ValueError(later("expected {wanted}, got {word}", wanted=repr(word), word=repr(got)))

    def at_clause_end(self, k: int = 0) -> bool:
        w = self.peek(k)
        return w is None or w in CONJS

    def end_adv_here(self) -> int:
        w = self.peek()
        if w in END_ADVS and self.at_clause_end(1):
            return 1
        if w == "every" and self.peek(1) in TIME_NOUNS and self.at_clause_end(2):
            return 2
        return 0

    def np_starts(self) -> bool:
        w = self.peek()
        if w is None or self.end_adv_here():
            return False
        return w in _DETS or w in _PRON_LOWER or w == "very" or w in _EN_ADJ or w in _EN_NOUN_FORMS

    def np(self) -> NP:
        w = self.next()
        if w in _PRON_LOWER:
            return NP(pron=_PRON_LOWER[w])
        if w == "nlp":
            return NP(noun="NLP")
        det = None
        if w in _DETS:
            det = "a" if w == "an" else w
            w = self.next()
        very = False
        if w == "very":
            very = True
            w = self.next()
        adj = None
        if w in _EN_ADJ:
            adj = _EN_ADJ[w]
            w = self.next()
        if w not in _EN_NOUN_FORMS:
            raise ValueError(later("expected a noun, got {word}", word=repr(w)))
        noun, plural = _EN_NOUN_FORMS[w]
        return NP(noun=noun, plural=plural, det=det, adj=adj, very=very)

    def pp(self) -> PP:
        prep = self.next()
        if prep not in PREPS:
            raise ValueError(later("expected a preposition, got {word}", word=repr(prep)))
        return PP(prep, self.np())

    def adverbs(self) -> tuple[str | None, str | None]:
        w = self.peek()
        if w in ("not", "never"):
            self.i += 1
            return w, None
        if w in FREQ_ADVS:
            self.i += 1
            return None, w
        return None, None

    def question_start(self) -> tuple[NP, str, str, str | None]:
        """The subject, verb, tense and frequency adverb of a question, read after its fronted auxiliary."""
        freq = None
        a = self.next()
        subj = self.np()
        if a in _BE_FORMS:
            verb, tense = "be", _BE_FORMS[a]
        elif a == "will":
            tense = "fut"
        elif a in _DO_FORMS:
            tense = _DO_FORMS[a]
        else:
            raise ValueError(later("not a question auxiliary: {word}", word=repr(a)))
        if self.peek() in FREQ_ADVS:
            freq = self.next()
        if a not in _BE_FORMS:
            verb = self.next()
            if verb != "be" and _EN_VERB_FORMS.get(verb, (None, None))[1] != "base":
                raise ValueError(later("expected a base verb form, got {word}", word=repr(verb)))
        return subj, verb, tense, freq

    def statement_start(self) -> tuple[NP, str, str, str | None, str | None]:
        """The subject, verb, tense, negation and frequency adverb of a statement."""
        neg = freq = None
        subj = self.np()
        w = self.next()
        if w in _BE_FORMS:
            verb, tense = "be", _BE_FORMS[w]
            neg, freq = self.adverbs()
        elif w == "will":
            tense = "fut"
            neg, freq = self.adverbs()
            verb = self.next()
            if verb != "be" and _EN_VERB_FORMS.get(verb, (None, None))[1] != "base":
                raise ValueError(later("expected a base verb form, got {word}", word=repr(verb)))
        elif w in _DO_FORMS:
            tense = _DO_FORMS[w]
            self.expect("not")
            neg = "not"
            verb = self.next()
            if _EN_VERB_FORMS.get(verb, (None, None))[1] != "base":
                raise ValueError(later("expected a base verb form, got {word}", word=repr(verb)))
        else:
            if w == "never":
                neg, w = w, self.next()
            elif w in FREQ_ADVS:
                freq, w = w, self.next()
            if w not in _EN_VERB_FORMS:
                raise ValueError(later("expected a verb, got {word}", word=repr(w)))
            verb, kind = _EN_VERB_FORMS[w]
            tense = "past" if kind == "past" else "pres"
        return subj, verb, tense, neg, freq

    def clause(self, question: bool) -> Clause:
        neg: str | None = None
        if question:
            subj, verb, tense, freq = self.question_start()
        else:
            subj, verb, tense, neg, freq = self.statement_start()
        obj = io = pp = adj = None
        very = False
        if verb == "be":
            if self.peek() == "very":
                very = True
                self.i += 1
            if self.peek() in _EN_ADJ:
                adj = _EN_ADJ[self.next()]
            elif very:
                raise ValueError(later("'very' must be followed by an adjective"))
            elif not self.end_adv_here():  # "The cat is here." has no adjective or PP
                pp = self.pp()
        else:
            if self.np_starts():
                obj = self.np()
            if obj is not None and verb in IO_VERBS and self.peek() == "to" and not self.end_adv_here():
                self.i += 1
                io = self.np()
            if self.peek() in PREPS and not self.end_adv_here():
                pp = self.pp()
        end = None
        k = self.end_adv_here()
        if k:
            end = " ".join(self.w[self.i : self.i + k])
            self.i += k
        if not self.at_clause_end():
            raise ValueError(later("unexpected word {word}", word=repr(self.peek())))
        return Clause(subj, verb, tense, neg, freq, obj, io, pp, adj, very, end)


def normalize_en(text: str) -> list[str]:
    """Lower-cased words of a typed sentence, final punctuation removed."""
    t = text.strip().rstrip(".?! ").strip()
    return t.lower().split()


def parse(text: str) -> Sentence:
    """Parse an English sentence of the fragment (case, spaces, final punctuation ignored)."""
    words = normalize_en(text)
    if not words:
        raise ValueError(later("empty sentence"))
    p = _Parser(words)
    if words[0] in _BE_FORMS or words[0] in _DO_FORMS or words[0] == "will":
        c = p.clause(True)
        if p.peek() is not None:
            raise ValueError(later("unexpected word {word}", word=repr(p.peek())))
        return Sentence((c,), None, True)
    c1 = p.clause(False)
    if p.peek() is None:
        return Sentence((c1,))
    conj = p.next()
    c2 = p.clause(False)
    if p.peek() is not None:
        raise ValueError(later("unexpected word {word}", word=repr(p.peek())))
    return Sentence((c1, c2), conj)


def translate(text: str) -> str:
    """French translation of an English sentence of the fragment."""
    return render(parse(text)).fr
