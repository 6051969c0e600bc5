"""Tests of the synthetic English->French corpus generator (model/corpus)."""

from __future__ import annotations

import collections
import random

import pytest

from model.training.corpus import (
    Example,
    generate,
    lexicon_by_category,
    load_lexicon,
    parse,
    random_sentence,
    render,
    tokenize_en,
    tokenize_fr,
    translate,
    write_splits,
)
from model.training.corpus import french as F
from model.training.corpus.generator import random_spec
from model.training.corpus.grammar import NUMBERS

LEX = load_lexicon()

# Hand-checked pairs. The first block is every example sentence of the lexicon README, verbatim.
PAIRS = [
    ("The girl went to the school.", "La fille est allée à l'école."),
    ("My sisters arrived yesterday.", "Mes sœurs sont arrivées hier."),
    ("I do not have a car.", "Je n'ai pas de voiture."),
    ("I see dogs.", "Je vois des chiens."),
    ("I see big dogs.", "Je vois de grands chiens."),
    ("Dogs sleep.", "Les chiens dorment."),
    ("I love cats.", "J'aime les chats."),
    ("I drink water.", "Je bois de l'eau."),
    ("I love music.", "J'aime la musique."),
    ("The water is cold.", "L'eau est froide."),
    ("We are happy.", "Nous sommes heureux."),
    ("You are tired.", "Vous êtes fatigués."),
    ("The car is not red.", "La voiture n'est pas rouge."),
    ("The teacher gives the answer to the students.", "Le professeur donne la réponse aux étudiants."),
    ("The red car is very fast.", "La voiture rouge est très rapide."),
    ("The old man sleeps.", "Le vieil homme dort."),
    ("He did not eat the apple.", "Il n'a pas mangé la pomme."),
    # S V / S V PP / S V O / S V O PP / S V O to IO
    ("I work.", "Je travaille."),
    ("She reads the book.", "Elle lit le livre."),
    ("The small girl sees a white bird.", "La petite fille voit un oiseau blanc."),
    ("The cat sleeps under the table.", "Le chat dort sous la table."),
    ("They run in the park.", "Ils courent dans le parc."),
    ("I find the key behind the door.", "Je trouve la clé derrière la porte."),
    ("I close the window for my father.", "Je ferme la fenêtre pour mon père."),
    ("She watches the films with her friends.", "Elle regarde les films avec ses amis."),
    ("I sell my bike to a student.", "Je vends mon vélo à un étudiant."),
    ("My brother gave a flower to the girl.", "Mon frère a donné une fleur à la fille."),
    ("I will write a letter to my mother.", "J'écrirai une lettre à ma mère."),
    ("They speak to the teacher.", "Ils parlent au professeur."),
    ("I work on NLP.", "Je travaille sur le TAL."),
    # prepositions with contractions / elision
    ("The boy comes from the city.", "Le garçon vient de la ville."),
    ("We come from the school.", "Nous venons de l'école."),
    ("They come from the park.", "Ils viennent du parc."),
    ("The women came from the libraries.", "Les femmes sont venues des bibliothèques."),
    ("I sleep near the river.", "Je dors près de la rivière."),
    ("The dog sleeps near the tree.", "Le chien dort près de l'arbre."),
    ("My son plays near the garden.", "Mon fils joue près du jardin."),
    ("The horses sleep near the trees.", "Les chevaux dorment près des arbres."),
    ("The dog sleeps near eight trees.", "Le chien dort près de huit arbres."),
    ("We will go to the beach.", "Nous irons à la plage."),
    ("They will go to the park tomorrow.", "Ils iront au parc demain."),
    ("You went to the hospital.", "Vous êtes allés à l'hôpital."),
    ("The students will come to the schools.", "Les étudiants viendront aux écoles."),
    ("The old hospitals are near the beach.", "Les vieux hôpitaux sont près de la plage."),
    # tenses, être agreement, imparfait, futur
    ("She will buy an apple.", "Elle achètera une pomme."),
    ("My daughters left with the children.", "Mes filles sont parties avec les enfants."),
    ("The trains arrived.", "Les trains sont arrivés."),
    ("She never went to the sea.", "Elle n'est jamais allée à la mer."),
    ("I was tired.", "J'étais fatigué."),
    ("The girls were happy yesterday.", "Les filles étaient heureuses hier."),
    ("You were sad.", "Vous étiez tristes."),
    ("We were in the kitchen.", "Nous étions dans la cuisine."),
    ("He will be in the garden tomorrow.", "Il sera dans le jardin demain."),
    ("They will not be happy.", "Ils ne seront pas heureux."),
    ("The boys sang a song.", "Les garçons ont chanté une chanson."),
    ("We will learn the words.", "Nous apprendrons les mots."),
    ("They will understand the answer.", "Ils comprendront la réponse."),
    # adverbs
    ("I never drink coffee.", "Je ne bois jamais de café."),
    ("He often eats apples.", "Il mange souvent des pommes."),
    ("She always ate bread.", "Elle a toujours mangé du pain."),
    ("We also took the train.", "Nous avons aussi pris le train."),
    ("They will always love NLP.", "Ils aimeront toujours le TAL."),
    ("We eat bread every morning.", "Nous mangeons du pain chaque matin."),
    ("We walk to the park now.", "Nous marchons au parc maintenant."),
    ("The students learn the language today.", "Les étudiants apprennent la langue aujourd'hui."),
    ("You will see the sea every week.", "Vous verrez la mer chaque semaine."),
    ("I am happy today.", "Je suis heureux aujourd'hui."),
    ("The cat is here.", "Le chat est ici."),
    ("Were the parks often big here?", "Est-ce que les parcs étaient souvent grands ici ?"),
    # negation and de/d'
    ("I do not see birds.", "Je ne vois pas d'oiseaux."),
    ("She did not drink water.", "Elle n'a pas bu d'eau."),
    ("They did not buy big houses.", "Ils n'ont pas acheté de grandes maisons."),
    ("I do not love music.", "Je n'aime pas la musique."),
    ("He does not want bread.", "Il ne veut pas de pain."),
    ("I will not open the door.", "Je n'ouvrirai pas la porte."),
    ("I will not eat an apple tomorrow.", "Je ne mangerai pas de pomme demain."),
    ("I do not have two cars.", "Je n'ai pas deux voitures."),
    ("You did not love fathers.", "Vous n'avez pas aimé les pères."),
    # questions
    ("Do you eat apples?", "Est-ce que vous mangez des pommes ?"),
    ("Does she sing?", "Est-ce qu'elle chante ?"),
    ("Does a dog sleep?", "Est-ce qu'un chien dort ?"),
    ("Does he eat bread?", "Est-ce qu'il mange du pain ?"),
    ("Did the men understand the question?", "Est-ce que les hommes ont compris la question ?"),
    ("Did the girl go to the school?", "Est-ce que la fille est allée à l'école ?"),
    ("Will the old man come?", "Est-ce que le vieil homme viendra ?"),
    ("Will they drink coffee?", "Est-ce qu'ils boiront du café ?"),
    ("Is the house big?", "Est-ce que la maison est grande ?"),
    ("Is the man old?", "Est-ce que l'homme est vieux ?"),
    ("Was the coffee hot?", "Est-ce que le café était chaud ?"),
    ("Are you tired?", "Est-ce que vous êtes fatigués ?"),
    ("Am I happy?", "Est-ce que je suis heureux ?"),
    ("Do we have a question?", "Est-ce que nous avons une question ?"),
    ("Did you write the sentence?", "Est-ce que vous avez écrit la phrase ?"),
    ("Will you be happy tomorrow?", "Est-ce que vous serez heureux demain ?"),
    ("Is NLP difficult?", "Est-ce que le TAL est difficile ?"),
    # articles, determiners, numbers, generic/partitive
    ("The children drink water.", "Les enfants boivent de l'eau."),
    ("The man drinks cold water.", "L'homme boit de l'eau froide."),
    ("You want coffee.", "Vous voulez du café."),
    ("I see this tree.", "Je vois cet arbre."),
    ("I see this old tree.", "Je vois ce vieil arbre."),
    ("I see this hospital.", "Je vois cet hôpital."),
    ("This man is old.", "Cet homme est vieux."),
    ("This house is white.", "Cette maison est blanche."),
    ("My school is beautiful.", "Mon école est belle."),
    ("My old school is big.", "Ma vieille école est grande."),
    ("Her old house is beautiful.", "Sa vieille maison est belle."),
    ("His answer is easy.", "Sa réponse est facile."),
    ("Her friend is French.", "Son ami est français."),
    ("These English books are interesting.", "Ces livres anglais sont intéressants."),
    ("Our new computer is fast.", "Notre nouvel ordinateur est rapide."),
    ("Your sons are young.", "Vos fils sont jeunes."),
    ("Their beautiful birds sing.", "Leurs beaux oiseaux chantent."),
    ("I see a beautiful tree.", "Je vois un bel arbre."),
    ("An old man sleeps.", "Un vieil homme dort."),
    ("You have a new friend.", "Vous avez un nouvel ami."),
    ("I see old men.", "Je vois de vieux hommes."),
    ("I see white horses.", "Je vois des chevaux blancs."),
    ("These old men are happy.", "Ces vieux hommes sont heureux."),
    ("Every child plays.", "Chaque enfant joue."),
    ("One girl sleeps and two boys run.", "Une fille dort et deux garçons courent."),
    ("I have three horses.", "J'ai trois chevaux."),
    ("We see ten hats.", "Nous voyons dix chapeaux."),
    ("Mice are small.", "Les souris sont petites."),
    ("The new cars are fast.", "Les nouvelles voitures sont rapides."),
    ("The river is long.", "La rivière est longue."),
    ("The letters are long.", "Les lettres sont longues."),
    ("She eats a green apple.", "Elle mange une pomme verte."),
    ("The games are good.", "Les jeux sont bons."),
    ("The newspapers are French.", "Les journaux sont français."),
    ("I am very happy.", "Je suis très heureux."),
    ("She is happy.", "Elle est heureuse."),
    ("The hospital is big.", "L'hôpital est grand."),
    ("NLP is interesting.", "Le TAL est intéressant."),
    ("I learn NLP.", "J'apprends le TAL."),
    # two clauses
    (
        "The doctor worked in the hospital because the women were tired.",
        "Le médecin a travaillé dans l'hôpital parce que les femmes étaient fatiguées.",
    ),
    ("I read the newspaper but you sleep.", "Je lis le journal mais vous dormez."),
    ("He sleeps because he is tired.", "Il dort parce qu'il est fatigué."),
    (
        "The cat is on the chair and the dog is under the table.",
        "Le chat est sur la chaise et le chien est sous la table.",
    ),
    ("I sleep because an old man sings.", "Je dors parce qu'un vieil homme chante."),
    # conjugation spot checks in context
    ("He sees the moon.", "Il voit la lune."),
    ("The dog drinks water.", "Le chien boit de l'eau."),
    ("The boy runs.", "Le garçon court."),
    ("She comes.", "Elle vient."),
    ("He wants a dog.", "Il veut un chien."),
    ("He learns the song.", "Il apprend la chanson."),
    ("The children understand the question.", "Les enfants comprennent la question."),
    ("They will come.", "Ils viendront."),
    ("We eat the apples.", "Nous mangeons les pommes."),
]


@pytest.mark.parametrize("en,fr", PAIRS)
def test_table(en, fr):
    r = render(parse(en))
    assert r.en == en  # the generator's English rendering of the parsed spec is the same sentence
    assert r.fr == fr
    assert translate(en) == fr


def test_table_size_and_readme_examples():
    assert len(PAIRS) >= 60
    readme = [
        "The girl went to the school.",
        "My sisters arrived yesterday.",
        "I do not have a car.",
        "I see dogs.",
        "I see big dogs.",
        "Dogs sleep.",
        "I love cats.",
        "I drink water.",
        "I love music.",
        "The water is cold.",
        "We are happy.",
        "You are tired.",
        "The car is not red.",
        "The teacher gives the answer to the students.",
    ]
    ens = {e for e, _ in PAIRS}
    assert all(s in ens for s in readme)


def test_typed_input_is_normalized():
    assert translate("  the RED car   is very fast ") == "La voiture rouge est très rapide."
    assert translate("does she sing") == "Est-ce qu'elle chante ?"
    assert translate("i work on nlp") == "Je travaille sur le TAL."


def test_explicit_alignments():
    r = render(parse("I do not have a car."))
    # I do not have a car . / Je n' ai pas de voiture .
    assert r.alignment == ((0, 0), (1, 2), (2, 1), (2, 3), (3, 2), (4, 4), (5, 5), (6, 6))
    r = render(parse("The teacher gives the answer to the students."))
    fr = [t for t, _, _ in tokenize_fr(r.fr)]
    assert fr[5] == "aux" and {(5, 5), (6, 5)} <= set(r.alignment)
    r = render(parse("Does she sing?"))
    assert r.alignment == ((0, 0), (0, 1), (1, 2), (2, 3), (3, 4))
    r = render(parse("She will buy an apple."))
    assert r.alignment == ((0, 0), (1, 1), (2, 1), (3, 2), (4, 3), (5, 4))


# ------------------------------------------------------------------ generator


@pytest.fixture(scope="module")
def big():
    return generate(20000, seed=123)


def test_generated_pairs_agree_with_translate(big):
    for ex in big[:4000]:
        r = render(parse(ex.en))
        assert (r.en, r.fr, r.alignment) == (ex.en, ex.fr, ex.alignment), ex


def test_render_tokens_match_tokenizers():
    rng = random.Random(5)
    for _ in range(2000):
        r = render(random_spec(rng))
        assert tuple(t for t, _, _ in tokenize_en(r.en)) == r.en_tokens
        assert tuple(t for t, _, _ in tokenize_fr(r.fr)) == r.fr_tokens


def test_alignment_consistency(big):
    for ex in big:
        en = tokenize_en(ex.en)
        fr = tokenize_fr(ex.fr)
        assert all(0 <= e < len(en) and 0 <= f < len(fr) for e, f in ex.alignment)
        assert len(set(ex.alignment)) == len(ex.alignment)
        assert {f for _, f in ex.alignment} == set(range(len(fr)))
        assert {e for e, _ in ex.alignment} == set(range(len(en)))
        # final punctuation aligned together
        assert (len(en) - 1, len(fr) - 1) in ex.alignment


def test_typography(big):
    for ex in big:
        assert ex.en[0].isupper() and ex.fr[0].isupper()
        assert "  " not in ex.en and "  " not in ex.fr and "," not in ex.en + ex.fr
        if ex.en.endswith("?"):
            assert ex.fr.startswith("Est-ce ") and ex.fr.endswith(" ?") and not ex.en.endswith(" ?")
        else:
            assert ex.en.endswith(".") and ex.fr.endswith(".") and not ex.fr.endswith(" .")


def _expected_english_forms():
    exp = set()
    for n in LEX.nouns.values():
        exp.add(n.en.lower())
        if not n.mass and not n.proper:
            exp.add(n.en_plural.lower())
    exp |= {a.en.lower() for a in LEX.adjs.values()}
    for v in LEX.verbs.values():
        exp |= {v.base, v.s3} | ({v.past} if v.past else set())
    exp |= {"am", "are", "were", "will", "do", "does", "did", "not"}
    exp |= {p.lower() for p in LEX.prons}
    exp |= {"the", "a", "an", "this", "these", "my", "your", "his", "her", "our", "their", "every"}
    exp |= set(NUMBERS) | set(LEX.preps) | set(LEX.advs) | set(LEX.conjs)
    return exp


def test_every_lexicon_entry_is_reachable(big):
    en = {t.lower() for ex in big for t, _, _ in tokenize_en(ex.en)}
    missing = _expected_english_forms() - en
    assert not missing
    assert len(_expected_english_forms()) > 250
    # "read" has no simple past: never "read" after a past-tense subject in a statement
    fr = {t.lower() for ex in big for t, _, _ in tokenize_fr(ex.fr)}
    assert "lu" not in fr
    fr_exp = set()
    for n in LEX.nouns.values():
        fr_exp.add(n.fr.lower())
        if not n.mass and not n.proper:
            fr_exp.add(n.fr_plural)
    for a in LEX.adjs.values():
        fr_exp |= set(a.forms) | ({a.vowel} if a.vowel else set())
    fr_exp |= {v.participle for v in LEX.verbs.values() if v.base not in ("read", "be")}
    fr_exp |= {
        "au",
        "aux",
        "du",
        "des",
        "de",
        "d'",
        "l'",
        "qu'",
        "n'",
        "j'",
        "cet",
        "ce",
        "cette",
        "mon",
        "ma",
        "son",
        "sa",
        "près",
        "parce",
        "aujourd'hui",
        "jamais",
        "est-ce",
    }
    assert not fr_exp - fr


def test_lexicon_by_category():
    cats = lexicon_by_category()
    assert {
        "nouns",
        "verbs",
        "adjectives",
        "pronouns",
        "determiners",
        "numbers",
        "prepositions",
        "adverbs",
        "conjunctions",
    } <= set(cats)
    assert ("cat", "chat") in cats["nouns"] and ("NLP", "le TAL") in cats["nouns"]
    assert len(cats["nouns"]) == 73 and len(cats["verbs"]) == 30 and len(cats["adjectives"]) == 25
    assert ("ten", "dix") in cats["numbers"]


def test_determinism():
    a = generate(300, seed=1)
    assert a == generate(300, seed=1)
    assert a != generate(300, seed=2)
    assert all(isinstance(x, Example) for x in a)
    assert random_sentence(4) == random_sentence(4)
    assert len({random_sentence(s) for s in range(50)}) > 40


def test_length_spread(big):
    hist = collections.Counter(sum(1 for t, _, _ in tokenize_en(ex.en) if t not in ".?") for ex in big)
    assert min(hist) == 2 and max(hist) == 20
    assert hist[2] >= 50  # "Dogs sleep." / "I work."
    for k in range(3, 16):
        assert hist[k] >= 0.01 * len(big), (k, hist)
    assert sum(v for k, v in hist.items() if k >= 12) >= 0.1 * len(big)


def test_write_splits(tmp_path):
    paths = write_splits(tmp_path, 3000, 300, 300, seed=9)
    assert set(paths) == {"train", "valid", "test"}
    sets = {}
    for name, n in (("train", 3000), ("valid", 300), ("test", 300)):
        lines = paths[name].read_text(encoding="utf-8").splitlines()
        assert len(lines) == n
        rows = [line.split("\t") for line in lines]
        assert all(len(r) == 3 for r in rows)
        ens = [r[0] for r in rows]
        assert len(set(ens)) == n
        sets[name] = set(ens)
        for en, fr, al in rows[:200]:
            assert translate(en) == fr
            pairs = tuple(tuple(map(int, p.split("-"))) for p in al.split())
            assert pairs == render(parse(en)).alignment
    assert not (sets["train"] & sets["valid"]) and not (sets["train"] & sets["test"])
    assert not (sets["valid"] & sets["test"])
    assert write_splits(tmp_path / "again", 3000, 300, 300, seed=9)["test"].read_text() == paths["test"].read_text()


def test_cli(tmp_path, capsys):
    from model.training.corpus.__main__ import main

    assert main(["--out", str(tmp_path), "--train", "50", "--valid", "5", "--test", "5", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "train: 50" in out and "valid: 5" in out and "test: 5" in out


# ------------------------------------------------------------------ tokenizers


def test_tokenizers():
    s = "Je n'ai pas d'eau aujourd'hui."
    toks = tokenize_fr(s)
    assert [t for t, _, _ in toks] == ["Je", "n'", "ai", "pas", "d'", "eau", "aujourd'hui", "."]
    assert all(s[a:b] == t for t, a, b in toks)
    q = "Est-ce qu'il mange du pain ?"
    assert [t for t, _, _ in tokenize_fr(q)] == ["Est-ce", "qu'", "il", "mange", "du", "pain", "?"]
    assert [t for t, _, _ in tokenize_fr("J'aime l'eau.")] == ["J'", "aime", "l'", "eau", "."]
    e = "Does he eat bread?"
    toks = tokenize_en(e)
    assert [t for t, _, _ in toks] == ["Does", "he", "eat", "bread", "?"]
    assert all(e[a:b] == t for t, a, b in toks)


# ------------------------------------------------------------------ conjugation


def test_conjugation_tables():
    pres = {
        ("dormir", 2): "dort",
        ("lire", 2): "lit",
        ("voir", 2): "voit",
        ("boire", 2): "boit",
        ("courir", 2): "court",
        ("venir", 2): "vient",
        ("vouloir", 2): "veut",
        ("apprendre", 2): "apprend",
        ("comprendre", 5): "comprennent",
        ("manger", 3): "mangeons",
        ("acheter", 0): "achète",
        ("acheter", 3): "achetons",
        ("boire", 3): "buvons",
        ("boire", 5): "boivent",
        ("écrire", 3): "écrivons",
        ("aller", 5): "vont",
        ("avoir", 5): "ont",
        ("être", 4): "êtes",
        ("prendre", 5): "prennent",
        ("ouvrir", 0): "ouvre",
        ("vendre", 2): "vend",
        ("partir", 2): "part",
        ("voir", 3): "voyons",
        ("vouloir", 5): "veulent",
        ("venir", 5): "viennent",
    }
    for (inf, p), form in pres.items():
        assert F.present(inf, p) == form, (inf, p)
    fut = {
        ("aller", 3): "irons",
        ("venir", 5): "viendront",
        ("acheter", 2): "achètera",
        ("écrire", 0): "écrirai",
        ("voir", 4): "verrez",
        ("courir", 2): "courra",
        ("vouloir", 0): "voudrai",
        ("avoir", 3): "aurons",
        ("être", 5): "seront",
        ("boire", 2): "boira",
        ("prendre", 0): "prendrai",
        ("dormir", 2): "dormira",
        ("manger", 3): "mangerons",
        ("lire", 5): "liront",
        ("partir", 4): "partirez",
        ("ouvrir", 2): "ouvrira",
        ("vendre", 5): "vendront",
    }
    for (inf, p), form in fut.items():
        assert F.future(inf, p) == form, (inf, p)
    assert [F.imparfait_etre(p) for p in (0, 2, 3, 4, 5)] == ["étais", "était", "étions", "étiez", "étaient"]
    # every lexicon verb has complete présent and futur tables
    for v in LEX.verbs.values():
        assert len({F.present(v.inf, p) for p in range(6)}) >= 4
        assert len({F.future(v.inf, p) for p in range(6)}) == 6


def test_conjugation_in_sentences_all_persons():
    subj = {"I": "je", "you": "vous", "he": "il", "she": "elle", "we": "nous", "they": "ils"}
    person = {"I": 0, "you": 4, "he": 2, "she": 2, "we": 3, "they": 5}
    for v in LEX.verbs.values():
        if v.base == "be":
            continue
        for pron in subj:
            p = person[pron]
            fut = F.future(v.inf, p)
            got = translate(f"{pron} will {v.base}")
            want = subj[pron] + " " + fut
            if pron == "I" and F.starts_with_vowel(fut):
                want = "j'" + fut
            assert got == want[0].upper() + want[1:] + ".", (got, want)
            s3 = v.s3 if pron in ("he", "she") else v.base
            pres = F.present(v.inf, p)
            got = translate(f"{pron} {s3}")
            want = ("j'" + pres) if pron == "I" and F.starts_with_vowel(pres) else subj[pron] + " " + pres
            assert got == want[0].upper() + want[1:] + "."


def test_etre_agreement():
    assert translate("The girls went.") == "Les filles sont allées."
    assert translate("She came.") == "Elle est venue."
    assert translate("They left.") == "Ils sont partis."
    assert translate("The women did not arrive.") == "Les femmes ne sont pas arrivées."
    assert translate("We went.") == "Nous sommes allés."
    assert translate("I arrived.") == "Je suis arrivé."


def test_lexicon_rows_all_loaded():
    from model.training.corpus.lexicon import TSV_PATH

    lines = TSV_PATH.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 175  # the shared lexicon, copied verbatim
    n_rows = sum(1 for line in lines if line.strip() and not line.startswith("#"))
    assert len(LEX.rows) == n_rows
    assert len(LEX.nouns) == 73 and len(LEX.verbs) == 30 and len(LEX.adjs) == 25
    assert len(LEX.prons) == 6 and len(LEX.dets) == 11 and len(LEX.nums) == 10
    assert len(LEX.preps) == 9 and len(LEX.advs) == 10 and len(LEX.conjs) == 3
