"""French morphology for the corpus: conjugation tables, agreement, vowel test.

Persons are indexed 0..5: je, tu, il/elle (and singular noun phrases), nous, vous,
ils/elles (and plural noun phrases). ``tu`` is never generated ("you" -> vous) but the
tables are complete.
"""

from __future__ import annotations

_VOWELS = set("aeiouyàâäéèêëîïôöûùüœæ")
# Words of the fragment starting with an aspirated h (no elision: "de huit", "que huit").
_ASPIRATED_H = ("huit",)


def starts_with_vowel(word: str) -> bool:
    """True when the word elides a preceding le/la/de/que/ne/je (vowel or mute h)."""
    w = word.lower()
    if not w:
        return False
    if w[0] == "h":
        return not w.startswith(_ASPIRATED_H)
    return w[0] in _VOWELS


_ER_ENDINGS = ("e", "es", "e", "ons", "ez", "ent")
_FUT_ENDINGS = ("ai", "as", "a", "ons", "ez", "ont")

# Présent of the verbs that are not plain regular -er verbs.
_PRESENT_IRREGULAR: dict[str, tuple[str, ...]] = {
    "être": ("suis", "es", "est", "sommes", "êtes", "sont"),
    "avoir": ("ai", "as", "a", "avons", "avez", "ont"),
    "aller": ("vais", "vas", "va", "allons", "allez", "vont"),
    "venir": ("viens", "viens", "vient", "venons", "venez", "viennent"),
    "voir": ("vois", "vois", "voit", "voyons", "voyez", "voient"),
    "lire": ("lis", "lis", "lit", "lisons", "lisez", "lisent"),
    "écrire": ("écris", "écris", "écrit", "écrivons", "écrivez", "écrivent"),
    "boire": ("bois", "bois", "boit", "buvons", "buvez", "boivent"),
    "ouvrir": ("ouvre", "ouvres", "ouvre", "ouvrons", "ouvrez", "ouvrent"),
    "vendre": ("vends", "vends", "vend", "vendons", "vendez", "vendent"),
    "prendre": ("prends", "prends", "prend", "prenons", "prenez", "prennent"),
    "apprendre": ("apprends", "apprends", "apprend", "apprenons", "apprenez", "apprennent"),
    "comprendre": ("comprends", "comprends", "comprend", "comprenons", "comprenez", "comprennent"),
    "dormir": ("dors", "dors", "dort", "dormons", "dormez", "dorment"),
    "courir": ("cours", "cours", "court", "courons", "courez", "courent"),
    "partir": ("pars", "pars", "part", "partons", "partez", "partent"),
    "vouloir": ("veux", "veux", "veut", "voulons", "voulez", "veulent"),
    "manger": ("mange", "manges", "mange", "mangeons", "mangez", "mangent"),
    "acheter": ("achète", "achètes", "achète", "achetons", "achetez", "achètent"),
}

# Futur simple stems (endings -ai -as -a -ons -ez -ont); regular -er/-ir verbs use the infinitive.
_FUTURE_STEMS: dict[str, str] = {
    "être": "ser",
    "avoir": "aur",
    "aller": "ir",
    "venir": "viendr",
    "voir": "verr",
    "lire": "lir",
    "écrire": "écrir",
    "boire": "boir",
    "vendre": "vendr",
    "prendre": "prendr",
    "apprendre": "apprendr",
    "comprendre": "comprendr",
    "courir": "courr",
    "vouloir": "voudr",
    "acheter": "achèter",
}

_IMPARFAIT_ETRE = ("étais", "étais", "était", "étions", "étiez", "étaient")

REGULAR_ER = (
    "aimer",
    "manger",
    "fermer",
    "acheter",
    "trouver",
    "donner",
    "parler",
    "jouer",
    "regarder",
    "chanter",
    "marcher",
    "travailler",
    "arriver",
)


def present(inf: str, person: int) -> str:
    if inf in _PRESENT_IRREGULAR:
        return _PRESENT_IRREGULAR[inf][person]
    if inf.endswith("er") and inf != "aller":
        return inf[:-2] + _ER_ENDINGS[person]
    raise KeyError(f"no present tense table for {inf!r}")


def future(inf: str, person: int) -> str:
    if inf in _FUTURE_STEMS:
        stem = _FUTURE_STEMS[inf]
    elif inf.endswith(("er", "ir")):
        stem = inf
    else:
        raise KeyError(f"no future stem for {inf!r}")
    return stem + _FUT_ENDINGS[person]


def imparfait_etre(person: int) -> str:
    return _IMPARFAIT_ETRE[person]


def participle_agree(participle: str, gender: str, plural: bool) -> str:
    """Agreement of a past participle conjugated with être (allé, allée, allés, allées)."""
    agreed = participle + ("e" if gender == "f" else "")  # French grammar, not a count the interface says
    return f"{agreed}s" if plural else agreed


def adj_form(
    forms: tuple[str, str, str, str], vowel: str | None, gender: str, plural: bool, before_vowel_noun: bool = False
) -> str:
    """Agreeing adjective form; ``before_vowel_noun``: attributive, directly before a vowel noun."""
    if plural:
        return forms[3] if gender == "f" else forms[2]
    if gender == "f":
        return forms[1]
    if before_vowel_noun and vowel:
        return vowel
    return forms[0]
