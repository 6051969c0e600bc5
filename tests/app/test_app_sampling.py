"""Issue 51 in the Streamlit frame: a sampled answer from the URL on the Translate page (its draw's picture at the
step, the pieces greedy would not have chosen), the sidebar's sampling controls greyed out unless sampling,
"Sample again" writing a new seed to the address, "Five answers" and opening one of them, and the Design choices
page's temperature section; the same answer in a second session for the same address."""

from __future__ import annotations

from test_app import PAGES, assert_clean, charts, run, translation

SAMPLED = {
    "sentence": "The small girl sees a white bird.",
    "decode": "sample",
    "temperature": "2.5",
    "topk": "60",
    "topp": "0.95",
    "seed": "3",
    "step": "2",
}


def _titles(at) -> list[str]:
    return [spec["layout"].get("title", {}).get("text", "") for spec in charts(at)]


def test_a_sampled_answer_shows_how_its_step_was_drawn_and_where_it_left_greedy():
    at = run(PAGES["translate"][0], SAMPLED)
    assert_clean(at)
    draw = next(title for title in _titles(at) if title.startswith("Step t = 2: how"))
    assert "kept:" in draw and "number drawn:" in draw
    assert "French translation (sampled: temperature 2.5, top-k 60, top-p 0.95, seed 3)" in [
        c.value for c in at.caption
    ]
    said = " ".join(m.value for m in at.markdown)
    assert "Drawn where greedy decoding would have taken another piece: step " in said
    again = run(PAGES["translate"][0], SAMPLED)  # another session, the same address: the same answer
    assert translation(again) == translation(at)


def test_the_sampling_controls_are_greyed_out_unless_sampling_and_sample_again_writes_a_new_seed():
    at = run(PAGES["translate"][0], {"sentence": "The small girl sees a white bird."})
    assert at.sidebar.slider(key="w_temperature").disabled
    assert at.sidebar.button(key="sample-again").disabled
    at = run(PAGES["translate"][0], SAMPLED)
    assert not at.sidebar.slider(key="w_temperature").disabled
    at.sidebar.button(key="sample-again").click().run()
    assert_clean(at)
    assert at.query_params["seed"] != "3" and at.query_params["decode"] == "sample"


def test_five_answers_are_drawn_and_one_opens_on_every_page():
    at = run(PAGES["translate"][0], SAMPLED)
    seeds = [button for button in at.button if button.key and button.key.startswith("open-seed-")]
    assert [button.key for button in seeds] == [f"open-seed-{seed}" for seed in range(3, 8)]
    assert seeds[0].disabled  # the answer on show
    said = " ".join(m.value for m in at.markdown)
    assert said.count("**seed ") == 5
    at.button(key="open-seed-5").click().run()
    assert_clean(at)
    assert at.query_params["seed"] == "5"
    assert at.button(key="open-seed-5").disabled


def test_design_choices_shows_one_steps_distribution_at_three_temperatures_and_its_entropy():
    at = run(PAGES["design"][0], {"sentence": "The small girl sees a white bird.", "step": "2"})
    assert_clean(at)
    titles = _titles(at)
    assert "Step t = 2: the next piece at three temperatures" in titles
    assert "Step t = 2: how uncertain the draw is, against the temperature" in titles
    bars = next(spec for spec in charts(at) if spec["layout"]["title"]["text"].endswith("three temperatures"))
    assert [trace["name"] for trace in bars["data"]] == ["T = 0.3", "T = 1", "T = 2"]
