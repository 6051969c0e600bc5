"""AppTest for every page: runs, shows charts, reacts to controls, restores controls from the URL."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PAGES = {
    "translate": ("pages/1_translate.py", 1),
    "attention": ("pages/2_attention.py", 11),
    "positional": ("pages/3_positional_encoding.py", 5),
    "shapes": ("pages/4_tensor_shapes.py", 2),
    "masks": ("pages/5_masks_and_heads.py", 3),
    "design": ("pages/6_design_choices.py", 7),
    "why": ("pages/8_why.py", 4),
}
TIMEOUT = 120


@pytest.fixture(autouse=True)
def checkpoint_env(tiny_checkpoint, monkeypatch):
    """Every app test reads the tiny fixture checkpoint."""
    monkeypatch.setenv("ANATOMY_CHECKPOINT", str(tiny_checkpoint))


def run(page: str, params: dict[str, str] | None = None) -> AppTest:
    """Run one page file the way AppTest reruns it (directly), optionally with URL query parameters."""
    at = AppTest.from_file(str(ROOT / page), default_timeout=TIMEOUT)
    for key, value in (params or {}).items():
        at.query_params[key] = value
    return at.run()


def charts(at: AppTest) -> list[dict]:
    """The plotly figures on the page, as JSON."""
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def array(value) -> np.ndarray:
    """A plotly JSON array: a list, or plotly's typed-array form {"dtype", "bdata", "shape"}."""
    if isinstance(value, dict) and "bdata" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if isinstance(shape, str):
            shape = [int(n) for n in shape.split(",")]
        return flat.reshape(shape) if shape else flat
    return np.array(value, dtype=float)


def chart_titled(at: AppTest, prefix: str) -> dict:
    """The first figure whose title starts with `prefix`."""
    for spec in charts(at):
        if spec["layout"].get("title", {}).get("text", "").startswith(prefix):
            return spec
    raise AssertionError(f"no chart titled {prefix!r}")


def translation(at: AppTest) -> str:
    """The large translation text on the Translate page."""
    return next(m.value for m in at.markdown if m.value.startswith("<div style='font-size"))


def assert_clean(at: AppTest) -> None:
    """No exception and no error box on the page."""
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]


@pytest.mark.parametrize("name", sorted(PAGES))
def test_page_runs_and_shows_its_charts(name):
    path, expected = PAGES[name]
    at = run(path)
    assert_clean(at)
    assert len(at.get("plotly_chart")) >= expected
    for spec in charts(at):
        assert spec["data"] or spec["layout"].get("shapes"), "every chart draws something"


def test_entrypoint_runs_the_translate_page():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    assert_clean(at)
    assert at.title[0].value == "Translate"
    assert at.get("plotly_chart")


def test_training_page_draws_the_log(tiny_checkpoint, tmp_path, monkeypatch):
    logged = tmp_path / "logged"
    shutil.copytree(tiny_checkpoint, logged)
    records = [
        {"step": s, "train_loss": 5 / (1 + s / 100), "lr": min(s / 50, 1) * 1e-3 / max(1, s / 50) ** 0.5}
        for s in range(0, 500, 25)
    ]
    records += [{"step": s, "valid_loss": 5.5 / (1 + s / 100), "valid_bleu": s / 20} for s in range(0, 500, 100)]
    (logged / "train_log.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    monkeypatch.setenv("ANATOMY_CHECKPOINT", str(logged))
    at = run("pages/7_training.py")
    assert_clean(at)
    titles = [spec["layout"]["title"]["text"] for spec in charts(at)]
    assert titles == ["Loss", "Learning-rate schedule", "Validation scores"]
    loss = chart_titled(at, "Loss")
    assert {trace["name"] for trace in loss["data"]} == {"training loss", "validation loss"}


def test_training_page_without_a_log_shows_the_card():
    at = run("pages/7_training.py")
    assert_clean(at)
    assert any("no training log" in i.value for i in at.info)
    assert at.dataframe


def test_a_new_sentence_changes_the_translation(tiny_bundle):
    at = run(PAGES["translate"][0])
    first = translation(at)
    at.sidebar.text_input(key="w_sentence").input("The old man reads a book in the garden").run()
    assert_clean(at)
    assert at.text[0].value == "the old man reads a book in the garden"
    expected = tiny_bundle.translate("The old man reads a book in the garden").translation
    assert expected in translation(at)
    assert translation(at) != first
    assert at.query_params["sentence"] == "The old man reads a book in the garden"


def test_the_causal_switch_changes_the_decoder_patterns():
    at = run(PAGES["attention"][0], {"layer": "2"})
    masked = array(chart_titled(at, "decoder masked self-attention")["data"][0]["z"])
    assert np.allclose(np.triu(masked, k=1), 0.0)
    at.sidebar.toggle(key="w_causal").set_value(False).run()
    assert_clean(at)
    unmasked = array(chart_titled(at, "decoder masked self-attention")["data"][0]["z"])
    # while decoding, later pieces did not exist yet; the earlier ones were recomputed seeing each other
    assert np.allclose(np.triu(unmasked, k=1), 0.0)
    assert masked.shape != unmasked.shape or np.abs(masked - unmasked).max() > 0.01
    assert at.query_params["causal"] == "off"


def test_the_masks_lab_runs_only_the_experiment_on_show():
    at = run(PAGES["masks"][0])
    assert at.radio(key="w_lab").value == "causal"
    titles = [spec["layout"]["title"]["text"] for spec in charts(at)]
    assert not any("shorter sentence" in t or "knock-out" in t for t in titles)
    at.radio(key="w_lab").set_value("padding").run()
    assert_clean(at)
    titles = [spec["layout"]["title"]["text"] for spec in charts(at)]
    assert any(t.startswith("The shorter sentence") for t in titles) and not any("causal mask on" in t for t in titles)
    assert at.query_params["lab"] == "padding"


def test_the_masks_lab_shows_the_future_lighting_up_in_one_pass_without_the_causal_mask():
    at = run(PAGES["masks"][0], {"causal": "off"})
    assert_clean(at)
    spec = chart_titled(at, "Decoder self-attention L1 H1")
    on, off = array(spec["data"][0]["z"]), array(spec["data"][1]["z"])
    assert np.allclose(np.triu(on, k=1), 0.0) and np.triu(off, k=1).max() > 0.01


def test_ablating_heads_changes_the_output():
    at = run(PAGES["translate"][0])
    before = at.metric[0].value
    cross = [label for label in at.sidebar.multiselect(key="w_ablate").options if "cross" in label]
    at.sidebar.multiselect(key="w_ablate").set_value(cross).run()
    assert_clean(at)
    assert at.metric[0].value != before
    assert "dec-cross-1-1" in at.query_params["ablate"]


def test_knockout_lab_compares_before_and_after():
    at = run(PAGES["masks"][0], {"ablate": "dec-cross-1-1,dec-cross-2-3", "lab": "knockout"})
    assert_clean(at)
    chart_titled(at, "Probability of each output piece, before and after the knock-out")
    chart_titled(at, "The same output, scored with and without the knock-out")
    next(b for b in at.button if b.label == "Run the knock-out sweep").click().run()  # the banner's Reset is first
    assert_clean(at)
    chart_titled(at, "Heads ranked by the drop")
    frames = at.dataframe
    assert frames, "the sweep table is shown"
    ranked = set(frames[-1].value["head"])
    every_head = at.sidebar.multiselect(key="w_ablate").options
    assert len(ranked) == len(every_head) - 2 and not ranked & set(at.sidebar.multiselect(key="w_ablate").value)


def test_url_parameters_restore_every_control():
    params = {
        "sentence": "I drink water",
        "decode": "beam",
        "beam": "3",
        "layer": "2",
        "head": "3",
        "causal": "off",
        "padding": "off",
        "pe": "off",
        "ablate": "dec-cross-1-2,enc-self-2-4",
        "step": "2",
        "present": "on",
        "export": "svg",
        "view": "enc-self",
    }
    at = run(PAGES["attention"][0], params)
    assert_clean(at)
    side = at.sidebar
    assert side.text_input(key="w_sentence").value == "I drink water"
    assert side.radio(key="w_decode").value == "beam"
    assert side.slider(key="w_beam").value == 3
    assert side.selectbox(key="w_layer").value == 2
    assert side.selectbox(key="w_head").value == 3
    assert [side.toggle(key=k).value for k in ("w_causal", "w_padding", "w_pe", "w_present")] == [
        False,
        False,
        False,
        True,
    ]
    assert side.multiselect(key="w_ablate").value == ["decoder cross L1 H2", "encoder self L2 H4"]
    assert side.radio(key="w_export").value == "svg"
    assert at.slider(key="w_step").value == 2
    assert at.radio(key="w_view").value == "enc-self"
    assert not at.warning or all("URL parameter" not in w.value for w in at.warning)
    spec = chart_titled(at, "decoder masked self-attention, L2")
    assert spec["layout"]["font"]["size"] == 20  # presentation mode (the template written in: viz.looks.self_contained)
    config = json.loads(at.get("plotly_chart")[0].proto.config)
    assert config["toImageButtonOptions"] == {"format": "svg", "scale": 3, "filename": "anatomy-attention"}
    assert {k: at.query_params[k] for k in params} == params


def test_bad_url_parameters_fall_back_with_a_warning():
    at = run(PAGES["translate"][0], {"layer": "99", "head": "x", "causal": "maybe", "ablate": "dec-cross-9-9"})
    assert_clean(at)
    notes = " ".join(w.value for w in at.warning)
    for key in ("layer", "head", "causal", "ablate"):
        assert f"URL parameter {key}" in notes
    assert at.sidebar.selectbox(key="w_layer").value == 1
    assert at.sidebar.toggle(key="w_causal").value is True
    assert at.query_params["layer"] == "1"


def test_controls_follow_the_person_to_another_page():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    at.sidebar.text_input(key="w_sentence").input("We are happy").run()
    at.sidebar.toggle(key="w_pe").set_value(False).run()
    at.sidebar.selectbox(key="w_head").set_value(2).run()
    at.switch_page("pages/2_attention.py").run()
    assert_clean(at)
    assert at.title[0].value == "Attention"
    assert at.sidebar.text_input(key="w_sentence").value == "We are happy"
    assert at.sidebar.toggle(key="w_pe").value is False
    assert at.sidebar.selectbox(key="w_head").value == 2
    at.switch_page("pages/3_positional_encoding.py").run()
    assert at.sidebar.text_input(key="w_sentence").value == "We are happy"
    assert at.query_params["pe"] == "off"


def test_empty_sentence_gives_a_message_not_a_traceback():
    at = run(PAGES["translate"][0])
    at.sidebar.text_input(key="w_sentence").input("   ").run()
    assert not at.exception
    assert "Type an English sentence" in at.error[0].value


def test_missing_checkpoint_gives_a_message_not_a_traceback(tmp_path, monkeypatch):
    monkeypatch.setenv("ANATOMY_CHECKPOINT", str(tmp_path / "nowhere"))
    for path, _ in PAGES.values():
        at = run(path)
        assert not at.exception
        assert "Cannot load the checkpoint" in at.error[0].value


def test_typed_html_is_shown_as_text():
    at = run(
        PAGES["translate"][0], {"sentence": "<script>alert(1)</script> <b>the cat</b> <img src=x onerror=alert(2)>"}
    )
    assert_clean(at)
    for block in at.markdown:
        if block.proto.allow_html:
            assert "<script" not in block.value and "<img" not in block.value and "<b>" not in block.value
    spec = chart_titled(at, "Top candidates")
    for text_row in spec["data"][0]["text"]:
        for cell in text_row:
            assert "<" not in cell.replace("&lt;", "")


def test_example_and_random_buttons_set_the_sentence():
    at = run(PAGES["translate"][0])
    at.sidebar.selectbox(key="w_example").set_value("Do you love the red car?").run()
    assert at.sidebar.text_input(key="w_sentence").value == "Do you love the red car?"
    at.sidebar.button[0].click().run()
    assert_clean(at)
    assert at.sidebar.text_input(key="w_sentence").value != "Do you love the red car?"


def test_a_step_beyond_the_output_is_brought_inside_it():
    at = run(PAGES["attention"][0], {"sentence": "The cat sleeps", "step": "30"})
    assert_clean(at)
    last = at.slider(key="w_step")
    assert last.value == last.max
    long = "My sister will give the red apple to the old teacher tomorrow"
    at.sidebar.text_input(key="w_sentence").input(long).run()
    at.slider(key="w_step").set_value(at.slider(key="w_step").max).run()
    at.sidebar.text_input(key="w_sentence").input("We are happy").run()
    assert_clean(at)
    assert at.slider(key="w_step").value == at.slider(key="w_step").max


def test_tensor_shapes_labels_cross_attention_keys_and_values_with_the_source(tiny_bundle):
    from viz.labels import axis_labels

    trace = tiny_bundle.translate("We are happy").trace
    for stage, axis in (("decoder.layers.0.cross_attn.hook_k", "y"), ("decoder.layers.0.cross_attn.hook_pattern", "x")):
        at = run(PAGES["shapes"][0], {"sentence": "We are happy", "stage": stage})
        assert_clean(at)
        assert charts(at)[-1]["data"][0][axis] == axis_labels(trace.src_pieces), stage


def test_attention_page_says_which_heads_are_knocked_out_and_averages_the_rest():
    at = run(PAGES["attention"][0], {"ablate": "dec-cross-1-1", "view": "dec-cross", "layer": "1", "head": "1"})
    assert_clean(at)
    titles = [spec["layout"]["title"]["text"].split(" · ")[0] for spec in charts(at)]  # " · queries 0–39 of 47"
    assert "Head H1 alone (knocked out)" in titles and "Decoder cross-attention L1 H1 (knocked out)" in titles
    every_head = chart_titled(at, "decoder cross-attention, L1: every head")["data"]
    live = [array(panel["z"]) for panel in every_head[1:]]  # H1 is knocked out
    average = [
        spec
        for spec in charts(at)
        if spec["layout"]["title"]["text"].split(" · ")[0] == f"Average of the {len(live)} heads still on"
    ]
    assert len(average) == 1
    np.testing.assert_allclose(array(average[0]["data"][0]["z"]), np.mean(live, axis=0), atol=1e-6)


def test_attention_page_explains_the_decoder_plots_when_the_causal_mask_is_off():
    at = run(PAGES["attention"][0], {"causal": "off"})
    assert_clean(at)
    assert any("causal mask is off" in box.value for box in at.info)


def test_the_shipped_models_sinks_name_its_decoder_as_well_as_its_encoder():
    """The sink charts read the encoder; the decoder's self-attention, which puts much of its weight on <s> in
    many rows (the shipped model's: 40% on average, 4 of its 12 heads), gets a chart of its own, its figures said
    under it."""
    from model.analysis.sinks import SINK, sinks
    from ui.session import engine

    at = run("pages/2_attention.py", {"sentence": "The small girl sees a white bird."})
    assert_clean(at)
    bundle = engine.get_bundle(engine.checkpoint_path())  # the model the page opened
    trace = bundle.translate("The small girl sees a white bird.").trace
    decoder = sinks(trace, "decoder", bundle.config.norm_first)
    chart = chart_titled(
        at, f"{bundle.name}, decoder self-attention: share of each head's attention on the first piece"
    )
    assert len(chart["data"][0]["y"]) == bundle.config.n_decoder_layers
    line = next(c.value for c in at.caption if c.value.startswith("In the decoder's self-attention, the heads put"))
    assert f"**{decoder.mean_share:.0%}**" in line and f"**{decoder.sink_heads} of {decoder.shares.size}**" in line
    assert f"at least {SINK:.0%}" in line
