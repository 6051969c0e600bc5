"""The engine's own messages (warnings in results, errors a person causes) are said in the language of the run
that shows them: the same object reads in Chinese under `speaking("zh")` and, as str() under English, exactly the
English it always had (the shared caches keep one result for people of every language)."""

from __future__ import annotations

import pickle
import shutil

import pytest

from i18n import Later, speaking
from model import CheckpointError, DecodeOptions, InputError, Interventions, load_bundle
from model.checkpoints.checkpoint import CONFIG
from model.engine.tokens import SpecialIds
from model.errors import REBUILD_HINT
from model.inputs import read_source

LONG = " ".join(["the cat sleeps"] * 40)  # far more pieces than the tiny model's 48 positions


def _chinese(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def test_a_cut_sentence_is_said_in_the_language_that_shows_it(tiny_bundle):
    result = tiny_bundle.translate(LONG, trace=False)
    [cut] = [w for w in result.warnings if w.startswith("The sentence was cut")]
    assert isinstance(cut, Later)
    total = len(tiny_bundle.tokenizer.encode_source(LONG)) - 1
    english = f"The sentence was cut to its first 47 of {total} pieces (the model reads at most 48 positions)."
    assert cut == english and str(cut) == english
    with speaking("zh"):
        said = str(cut)
    assert said == f"句子共 {total} 个词元，只保留了前 47 个（模型最多读取 48 个位置）。"
    assert str(cut) == english  # the English run again: nothing was frozen


class _Unknowing:
    """A vocabulary that reads every "?" as its unknown piece."""

    canonical_input = False
    specials = SpecialIds(pad=0, unk=1, bos=2, eos=3)

    def encode_source(self, text: str) -> list[int]:
        return [1 if ch == "?" else 4 for ch in text] + [3]

    def pieces(self, ids: list[int]) -> list[str]:
        return ["<unk>" if i == 1 else "x" for i in ids]


@pytest.mark.parametrize(
    ("text", "english", "chinese"),
    [
        ("a?b", "The model's vocabulary has no piece for 1 part of the text: it reads it as <unk>.", "1 处"),
        ("?a?", "The model's vocabulary has no piece for 2 parts of the text: it reads them as <unk>.", "2 处"),
    ],
)
def test_a_piece_the_vocabulary_lacks_is_said_in_chinese(tiny_bundle, text, english, chinese):
    _, _, warnings = read_source(_Unknowing(), tiny_bundle.config, text)
    assert warnings == [english] and str(warnings[0]) == english
    with speaking("zh"):
        assert str(warnings[0]) == f"模型的词表里没有文本中 {chinese}内容对应的词元：模型把它们读作 <unk>。"


def test_a_word_never_seen_in_training_is_said_in_chinese(tiny_bundle):
    result = tiny_bundle.translate("the zebra sleeps", trace=False)
    [unseen] = [w for w in result.warnings if w.startswith("Never seen in training")]
    assert str(unseen) == "Never seen in training: zebra. The model can only guess at these words."
    with speaking("zh"):
        assert str(unseen) == "训练中从未见过：zebra。模型对这些词只能靠猜。"


def test_an_empty_sentence_is_refused_in_the_viewers_language(tiny_bundle):
    with pytest.raises(InputError) as info:
        tiny_bundle.translate("  ...  ", trace=False)
    assert str(info.value) == "Type an English sentence, for example: The cat sleeps."
    with speaking("zh"):
        assert str(info.value) == "请输入一个英文句子，例如：The cat sleeps."


def test_the_controls_are_refused_in_chinese():
    with pytest.raises(InputError) as info:
        DecodeOptions(beam_size=40)
    assert str(info.value) == "Beam size must be an integer from 1 to 16, got 40"
    with speaking("zh"):
        assert str(info.value) == "束宽必须是 1 到 16 之间的整数，实际为 40"
    with pytest.raises(InputError) as info:
        Interventions(mask_value="zero")
    with speaking("zh"):
        assert _chinese(str(info.value)) and "'zero'" in str(info.value)


def test_a_corrupt_checkpoint_is_refused_in_chinese(tiny_checkpoint, tmp_path):
    copy = tmp_path / "ckpt"
    shutil.copytree(tiny_checkpoint, copy)
    (copy / CONFIG).write_text("{not json", encoding="utf-8")
    with pytest.raises(CheckpointError) as info:
        load_bundle(copy)
    english = str(info.value)
    assert english.startswith(f"Cannot load the checkpoint at {copy}: config.json is not readable JSON (")
    assert english.endswith(". Rebuild the default model with: python -m model.train --preset default")
    assert REBUILD_HINT in english
    with speaking("zh"):
        said = str(info.value)
    assert said.startswith(f"无法加载 {copy} 处的检查点：config.json 不是可读的 JSON（")
    assert said.endswith("。用这条命令重新构建默认模型：python -m model.train --preset default")
    assert str(info.value) == english


def test_a_deferred_warning_survives_a_pickle_in_both_languages(tiny_bundle):
    result = tiny_bundle.translate(LONG, trace=False)
    again = pickle.loads(pickle.dumps(result.warnings))
    assert again == result.warnings
    with speaking("zh"):
        assert [str(w) for w in again] == [str(w) for w in result.warnings]
        assert all(_chinese(str(w)) for w in again)
