"""Synthetic English->French parallel corpus for the built-in demo model.

A small synchronous grammar over the lexicon ``en-fr-core.tsv`` (copied from the shared
lexicon; see its README for the translation conventions). A sentence is first drawn as a
*spec* (:class:`~model.corpus.grammar.Sentence`: clauses with subject, verb, tense, negation,
adverbs, object, indirect object, PP, predicate); :func:`~model.corpus.grammar.render` turns a
spec into the English sentence, its one French translation and the word alignment.
:func:`translate` parses an English sentence of the fragment back into a spec and renders it
with the same code, so ``translate(ex.en) == ex.fr`` for every generated example.

Tokenization (what alignment indices refer to): :func:`tokenize_en` / :func:`tokenize_fr` split
on whitespace and split a trailing "." / "?" off; the French tokenizer also splits elided forms
after the apostrophe (``l'|eau``, ``n'|a``, ``qu'|il``, ``j'|aime``, ``d'|eau``) but keeps
``aujourd'hui`` and ``Est-ce`` whole.

Alignment rules: ``Example.alignment`` is a sorted tuple of (English token index, French token
index) pairs. Every French token is aligned to at least one English token, every English token
to at least one French token.

* Pronouns, nouns, adjectives, "very" -> très, prepositions, adverbs, conjunctions and
  numbers align to their English word; "près de" (near) and "parce que" (because): both French
  tokens -> the English word; "chaque matin" -> every / morning.
* Articles and determiners -> the English determiner (the, a/an, this, my, every, two, ...).
  When English has none (generic "les", "des"/"de", partitive "du"/"de la"/"de l'"), the
  article -> the English noun. "le TAL": both tokens -> "NLP". The "de"/"d'" that replaces an
  indefinite or partitive article after a negation -> the English determiner (or the noun).
* Contractions au/aux/du/des -> both the preposition and the determiner (or the noun for
  "au TAL"/"du TAL").
* Negation: "ne"/"n'" and "pas" -> "not"; "ne"/"n'" and "jamais" -> "never".
* Verbs: a French simple-tense form (présent, futur, imparfait of être) -> the English verb,
  plus "will" for the futur, plus do/does for the negated présent ("ne mange pas" -> does +
  eat). Passé composé: the auxiliary -> the English tense carrier (the simple-past form
  "ate"/"went", or "did" in negations and questions), the participle -> the English verb.
  The copula: est/était/sera -> is/was (+ will, be).
* Questions: "Est-ce" and "que"/"qu'" -> the fronted English auxiliary (Do/Does/Did/Will,
  or Is/Am/Are/Was/Were, which the French copula form is also aligned to).
* "." -> "." and "?" -> "?".

Public API: :func:`generate`, :class:`Example`, :func:`tokenize_en`, :func:`tokenize_fr`,
:func:`write_splits`, :func:`random_sentence`, :func:`lexicon_by_category`, :func:`translate`.
CLI: ``python -m model.corpus --out data/corpus --train 200000 --valid 2000 --test 2000 --seed 1``.
"""

from .generator import Example, generate, random_sentence, read_pairs, write_splits
from .grammar import parse, render, tokenize_en, tokenize_fr, translate
from .lexicon import lexicon_by_category, load_lexicon

__all__ = [
    "Example",
    "generate",
    "random_sentence",
    "read_pairs",
    "write_splits",
    "tokenize_en",
    "tokenize_fr",
    "translate",
    "parse",
    "render",
    "lexicon_by_category",
    "load_lexicon",
]
