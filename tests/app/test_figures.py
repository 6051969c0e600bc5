"""Figures shared between sessions (ui/session/figures.py): one drawing per function and inputs, and never
one session's picture for another's inputs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from model import Step
from ui.session.figures import shared
from viz.attention import attention_map
from viz.style import Style

PIECES = ["▁le", "▁chat", "</s>"]


def draw(matrix, style, title="t", highlight=None):
    return attention_map(matrix, PIECES, PIECES, style, title, highlight)


def test_the_same_inputs_give_the_same_figure_object():
    matrix = np.eye(3, dtype=np.float32)
    assert shared(draw, matrix, Style()) is shared(draw, matrix.copy(), Style())


@pytest.mark.parametrize(
    "other",
    [
        dict(matrix=np.eye(3, dtype=np.float32)[::-1].copy()),  # other values
        dict(matrix=np.eye(3, dtype=np.float64)),  # same values, other dtype
        dict(style=Style(presentation=True)),  # presentation mode
        dict(title="u"),  # another title
        dict(highlight=1),  # a keyword argument
    ],
)
def test_any_other_input_gives_another_figure(other):
    base = dict(matrix=np.eye(3, dtype=np.float32), style=Style(), title="t")
    first = shared(draw, base["matrix"], base["style"], title=base["title"])
    changed = {**base, **other}
    second = shared(
        draw,
        changed["matrix"],
        changed["style"],
        title=changed["title"],
        **({"highlight": other["highlight"]} if "highlight" in other else {}),
    )
    assert second is not first
    assert second.to_dict() != first.to_dict()


def test_sets_dicts_frames_and_dataclasses_are_keyed_by_content():
    seen = []

    def record(value):
        seen.append(value)
        return draw(np.eye(3, dtype=np.float32), Style(), title=str(len(seen)))

    frame = pd.DataFrame({"head": ["L1 H1"], "drop": [0.5]})
    step = Step(0, "▁le", 0.9, [("▁le", 0.9)])
    for value in ({1, 2}, {"a": 1}, frame, step):
        assert shared(record, value) is shared(record, value)
    assert len(seen) == 4
    shared(record, pd.DataFrame({"head": ["L1 H1"], "drop": [0.25]}))
    shared(record, Step(0, "▁le", 0.8, [("▁le", 0.8)]))
    assert len(seen) == 6, "a changed frame or step is drawn again"


def test_an_input_it_cannot_key_on_is_refused():
    with pytest.raises(TypeError, match="cannot key a shared figure"):
        shared(draw, object(), Style())
