"""Parts of a page computed only when asked: a button instead of work that would keep the page
waiting (a real-size model's whole attribution table, a decoding that re-reads every prefix)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

import streamlit as st

# Work (parameter x position products, model.analysis.forced.work) a part of a page may cost without
# being asked: under half a second on one core. On the shipped model, only integrated gradients' whole table
# for sentences of ten words or more is asked for; at opus-mt's size, every whole table but attention's and
# rollout's, and the patching grid.
EAGER_WORK = 3e10


def asked(cost: float, cached: bool, label: str, key: str, note: str) -> st.delta_generator.DeltaGenerator | bool:
    """Whether a costly part of the page is to be computed: True when it is cheap or cached; a
    progress bar to fill when the person has just asked for it with the button; False otherwise."""
    if cost <= EAGER_WORK or cached:
        return True
    if st.button(label, key=key):
        return st.progress(0.0, text="Computing ...")
    st.caption(note)
    return False


@contextmanager
def filling(asked: st.delta_generator.DeltaGenerator | bool) -> Iterator[Callable[[float], None] | None]:
    """What to tell a computation's progress to: the progress bar `asked` gave (gone afterwards), if any."""
    if isinstance(asked, bool):
        yield None
        return
    try:
        yield asked.progress
    finally:
        asked.empty()
