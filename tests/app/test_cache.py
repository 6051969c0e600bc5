"""The shared caches (ui/session/cache.py): bounded in bytes, shared read-only, safe across threads."""

from __future__ import annotations

import gc
import threading
import time
import tracemalloc
from functools import partial

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from model import Interventions
from model.analysis.experiments import translate_batch
from ui.page.start import RELEASED_ABOVE, release
from ui.session import engine
from ui.session.cache import MIB, ByteCache, budget_bytes, freeze, held_bytes, holds_more_than, model_bytes


def block(size: int) -> np.ndarray:
    return np.zeros(size, dtype=np.uint8)


def test_a_hit_returns_the_stored_object_itself():
    cache = ByteCache("t", 10_000)
    first = cache.get("a", lambda: {"x": block(100)})
    assert cache.get("a", lambda: pytest.fail("computed again")) is first


def test_least_recently_used_entries_go_first_once_the_bytes_overflow():
    cache = ByteCache("t", 4_000)  # room for three entries of 900 bytes and an array header each
    for key in "abc":
        cache.get(key, lambda: block(900))
    cache.get("a", lambda: pytest.fail("a was dropped"))  # a is now the most recent
    cache.get("d", lambda: block(900))
    assert "b" not in cache and {"a", "c", "d"} <= {k for k in "abcd" if k in cache}
    stats = cache.stats()
    assert stats.bytes <= stats.budget and stats.evictions == 1


def test_an_entry_larger_than_the_whole_budget_is_returned_but_not_kept():
    cache = ByteCache("t", 1_000)
    small = cache.get("small", lambda: block(100))
    big = cache.get("big", lambda: block(5_000))
    assert big.nbytes == 5_000 and "big" not in cache and "small" in cache
    assert cache.get("small", lambda: None) is small
    assert cache.stats().not_kept == 1


def test_a_cache_that_keeps_its_last_value_keeps_one_larger_than_its_budget_alone():
    """The models cache: a checkpoint larger than the whole budget is kept (alone) instead of being
    loaded again at every page run; the next one pushes it out."""
    cache = ByteCache("t", 1_000, keep_last=True)
    cache.get("small", lambda: block(100))
    big = cache.get("big", lambda: block(5_000))
    assert "big" in cache and "small" not in cache and cache.get("big", lambda: None) is big
    cache.get("other", lambda: block(200))
    assert "other" in cache and "big" not in cache and cache.stats().entries == 1 and cache.stats().not_kept == 0


def test_a_budget_that_follows_another_cache_grows_with_it():
    """The results cache with $ANATOMY_RESULTS_MB unset: at least the bytes of the models loaded, so that
    a real model's trace, larger than the default budget, is kept instead of computed at every page run."""
    models = ByteCache("models", 1_000, keep_last=True)
    results = ByteCache("results", 1_000, at_least=lambda: models.held)
    assert results.get("trace", lambda: block(3_000)).nbytes == 3_000 and "trace" not in results
    models.get("model", lambda: block(5_000))
    results.get("trace", lambda: block(3_000))
    assert "trace" in results and results.stats().budget == models.held > 5_000


def test_stored_arrays_are_read_only():
    cache = ByteCache("t", 10_000)
    value = cache.get("a", lambda: {"rows": [np.ones(3)], "pair": (np.zeros((2, 2)), "text")})
    for array in (value["rows"][0], value["pair"][0]):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 7


def test_held_bytes_counts_a_shared_buffer_once_and_follows_torch_storage():
    whole = np.zeros(10_000, dtype=np.uint8)
    views = [whole[:5_000], whole[5_000:], whole.reshape(100, 100)]
    assert 10_000 <= held_bytes(views) < 11_000
    assert 20_000 <= held_bytes([whole, whole.copy()]) < 21_000
    tensor = torch.zeros(4, 1_000)  # a batch row's array keeps the whole batch alive
    assert held_bytes(tensor[1:2].numpy()) >= 16_000
    assert 16_000 <= held_bytes([tensor, tensor[1:2], tensor[1:2].numpy()]) < 17_000  # a tensor itself, once
    assert held_bytes("x" * 5_000) >= 5_000 and held_bytes({"k": ["y" * 3_000] * 3}) < 4_000


def test_held_bytes_of_a_figure_is_within_twice_what_drawing_it_keeps_allocated():
    from viz.positional import encoding_heatmap
    from viz.style import Style

    rng = np.random.default_rng(0)
    z = rng.random((200, 200)).astype(np.float32)
    labels = [f"piece {i}" for i in range(200)]
    table = rng.standard_normal((96, 128)).astype(np.float32)
    draws = [
        lambda: go.Figure(go.Heatmap(z=z, x=labels, y=labels, text=np.round(z, 2).astype(str))),
        lambda: go.Figure(go.Bar(x=labels, y=z[0])).add_annotation(text="a", x=0, y=0),
        lambda: encoding_heatmap(table, Style()),
    ]
    for draw in draws:
        draw()  # plotly builds its validators once per process
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        figure = draw()
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        assert kept / 2 <= held_bytes(figure) <= kept * 2, (held_bytes(figure), kept)


def test_budgets_come_from_the_environment_in_mib(monkeypatch):
    monkeypatch.setenv("ANATOMY_RESULTS_MB", "3")
    assert budget_bytes("ANATOMY_RESULTS_MB") == 3 * MIB
    monkeypatch.setenv("ANATOMY_RESULTS_MB", "lots")
    with pytest.raises(ValueError, match="ANATOMY_RESULTS_MB"):
        budget_bytes("ANATOMY_RESULTS_MB")


def test_many_threads_keep_the_budget_and_each_gets_its_own_key():
    cache = ByteCache("t", 20_000)
    wrong, errors = [], []

    def worker(seed: int) -> None:
        rng = np.random.default_rng(seed)
        try:
            for _ in range(400):
                key = int(rng.integers(60))
                value = cache.get(key, partial(np.full, 1_000, key % 250, dtype=np.uint8))
                if value[0] != key % 250:
                    wrong.append(key)
                assert cache.stats().bytes <= 20_000
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and not wrong
    stats = cache.stats()
    assert stats.bytes <= stats.budget and stats.hits + stats.misses >= 8 * 400 - 8 * 400 // 2
    assert stats.bytes == sum(size for _, size in cache._entries.values())


def test_threads_asking_for_one_missing_key_compute_it_once():
    cache = ByteCache("t", 10_000)
    calls, results = [], []
    release = threading.Event()

    def slow():
        calls.append(1)
        release.wait(5)
        return block(10)

    threads = [threading.Thread(target=lambda: results.append(cache.get("k", slow))) for _ in range(6)]
    for thread in threads:
        thread.start()
    time.sleep(0.2)
    release.set()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and len(results) == 6 and all(r is results[0] for r in results)


def test_different_keys_compute_at_the_same_time():
    cache = ByteCache("t", 10_000)
    both = threading.Barrier(2, timeout=5)  # broken if one computation waits for the other

    def compute():
        both.wait()
        return block(10)

    errors = []
    threads = [threading.Thread(target=lambda k=k: _collect(errors, lambda: cache.get(k, compute))) for k in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors


def _collect(errors: list, call) -> None:
    try:
        call()
    except Exception as exc:
        errors.append(exc)


def test_a_failed_computation_is_not_kept_and_the_next_caller_computes_again():
    cache = ByteCache("t", 10_000)
    with pytest.raises(ZeroDivisionError):
        cache.get("k", lambda: 1 / 0)
    assert cache.get("k", lambda: "fine") == "fine"


def test_engine_results_are_shared_read_only_and_keyed_on_every_switch(tiny_bundle):
    first = engine.translate(tiny_bundle, "the cat sleeps .", Interventions())
    assert engine.translate(tiny_bundle, "the cat sleeps .", Interventions()) is first
    assert engine.translate(tiny_bundle, "the cat sleeps .", Interventions(causal_mask=False)) is not first
    pattern = first.trace.pattern("encoder", "self", 0)
    with pytest.raises(ValueError, match="read-only"):
        pattern[0, 0, 0] = 1.0


def test_an_unpadded_trace_keeps_one_buffer_for_scores_and_masked_scores(tiny_bundle):
    trace = tiny_bundle.translate("the cat sleeps .").trace
    name = "encoder.layers.0.self_attn.hook_{}"
    assert np.shares_memory(trace.tensor(name.format("scores")), trace.tensor(name.format("masked_scores")))
    padded = translate_batch(tiny_bundle, ["the cat sleeps .", "the old teacher gives the red book to my sister ."])[0]
    scores, masked = padded.trace.tensor(name.format("scores")), padded.trace.tensor(name.format("masked_scores"))
    assert not np.shares_memory(scores, masked) and np.isinf(masked).any()


def test_a_checkpoint_loads_once_however_many_sessions_ask_and_stays_valid_once_evicted(tiny_checkpoint, monkeypatch):
    loads = []
    real = engine.load_bundle

    def counting(*args, **kwargs):
        loads.append(args)
        time.sleep(0.2)
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "load_bundle", counting)
    size = model_bytes(real(tiny_checkpoint))
    monkeypatch.setattr(engine, "MODELS", ByteCache("models", int(size * 1.5), size=model_bytes, read_only=False))
    path = str(tiny_checkpoint)
    bundles = []
    threads = [threading.Thread(target=lambda: bundles.append(engine.get_bundle(path))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(loads) == 1 and all(b is bundles[0] for b in bundles)
    engine.MODELS.get("another", lambda: real(tiny_checkpoint), None)  # the budget holds one model
    assert ("bundle", path) not in engine.MODELS
    assert bundles[0].translate("the cat sleeps .").translation  # the evicted bundle still works


def test_freeze_returns_its_argument():
    value = [np.ones(2)]
    assert freeze(value) is value and not value[0].flags.writeable


def test_holds_more_than_agrees_with_held_bytes_and_stops_early():
    value = {"small": "x" * 100, "big": [block(MIB), block(MIB)]}
    total = held_bytes(value)
    assert holds_more_than(value, total - 1) and not holds_more_than(value, total)
    assert holds_more_than(value, MIB // 2)


def test_a_page_releases_its_data_and_keeps_its_code_and_small_values():
    bundle = engine.get_bundle("")
    result = engine.translate(bundle, "The cat sleeps.", Interventions())

    def label(block_name: str) -> str:
        return names[block_name]

    names = {"enc-self": "Encoder self-attention"}
    namespace = {
        "__name__": "__main__",
        "__builtins__": __builtins__,
        "np": np,
        "go": go,
        "label": label,
        "names": names,
        "step": 3,
        "title": "Attention",
        "result": result,
        "trace": result.trace,
        "figure": go.Figure(go.Heatmap(z=np.ones((200, 200)))),
        "patterns": [block(RELEASED_ABOVE + 1)],
    }
    release(namespace)
    assert set(namespace) == {"__name__", "__builtins__", "np", "go", "label", "names", "step", "title"}
    assert label("enc-self") == "Encoder self-attention"  # a widget label called after the run still works
