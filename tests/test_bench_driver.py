"""The benchmark driver's own logic, without a browser: the rotating order of a round, the 50 Mbit/s
first-visit time, the summary of a round's results, the byte cross-check, the quiet-machine wait and
the quality scorer's text handling."""

from __future__ import annotations

import json
import wave

import numpy as np
import pytest

from bench import browser, quality, quiet


def test_each_round_rotates_the_order_of_the_three_kinds():
    assert [browser.round_order(i) for i in range(4)] == [
        ["first", "cold", "warm"],
        ["cold", "warm", "first"],
        ["warm", "first", "cold"],
        ["first", "cold", "warm"],
    ]


def visit(open_ms, downloading_ms, body_bytes, kind="first", round_=0):
    return {
        "kind": kind,
        "round": round_,
        "openToFirstAudioMs": open_ms,
        "loadMs": open_ms - 100,
        "bytes": {"networkBodyBytes": body_bytes, "downloadingMs": downloading_ms},
    }


def test_first_visit_time_at_50_mbit_replaces_the_download_time():
    # 10 s in all, of which 2 s downloading 25 MB: at 50 Mbit/s those bytes take 4 s -> 12 s
    assert browser.at_download_speed(visit(10_000, 2_000, 25_000_000)) == pytest.approx(12_000)
    assert browser.at_download_speed(visit(10_000, 0, 0)) == 10_000


def test_summary_of_a_run_covers_every_warm_take_and_visit():
    warm = {
        "kind": "warm",
        "takes": [
            {"speechSeconds": 2.0, "wallSeconds": 1.0, "computeSeconds": 0.5, "firstAudioMs": 10.0},
            {"speechSeconds": 6.0, "wallSeconds": 1.0, "computeSeconds": 1.0, "firstAudioMs": 30.0},
        ],
    }
    runs = [warm, warm, visit(10_000, 2_000, 25_000_000), visit(9_000, 0, 0, kind="cold")]
    summary = browser.summarise(runs)
    assert summary["speed_x"]["n"] == 4 and summary["speed_x"]["median"] == 4.0
    assert summary["speed_total_x"] == pytest.approx(16 / 4)
    assert summary["engine_speed_x"]["median"] == 5.0
    assert summary["first_audio_ms"]["median"] == 20.0
    assert summary["cold_start_ms"]["median"] == 9_000
    assert summary["first_visit_bytes"]["median"] == 25_000_000
    assert summary["first_visit_50mbit_ms"]["median"] == pytest.approx(12_000)


def test_network_check_compares_the_page_with_playwright():
    run = visit(1, 1, 1234)
    run["playwrightNetwork"] = {"body_bytes": 1234}
    assert browser.network_check([visit(1, 1, 5), run])["equal"] is True
    run["playwrightNetwork"] = {"body_bytes": 1000}
    assert browser.network_check([run])["equal"] is False
    assert browser.network_check([visit(1, 1, 5)]) is None


def test_phrases_option_and_software_adapters():
    assert browser.parse_phrases("all", 11) is None
    assert browser.parse_phrases("0,1,10", 11) == [0, 1, 10]
    with pytest.raises(SystemExit):
        browser.parse_phrases("11", 11)
    assert browser.is_software("Google SwiftShader")
    assert browser.is_software("llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan, CPU)")
    assert not browser.is_software("NVIDIA H200 (Vulkan, DiscreteGPU)")
    assert browser.is_software("lavapipe via ANGLE (WebGPU adapter)")


def test_page_urls_carry_what_the_run_asks_for():
    url = browser.page_url("http://127.0.0.1:1/", "warm", 2, [0, 10], 16, "Delia", True, "compatibility")
    assert url.startswith("http://127.0.0.1:1/bench/?kind=warm&seed=2&voice=Delia&budget=1")
    assert "featureLevel=compatibility" in url and "phrases=0,10" in url and "maxFrames=16" in url
    assert "clips=1" in url
    plain = browser.page_url("http://127.0.0.1:1/", "cold", 0, None, None, "Delia")
    assert "maxFrames" not in plain and "phrases" not in plain and "featureLevel" not in plain


def fake_cpu(monkeypatch, busy_fraction):
    """/proc/stat that advances 100 jiffies per read, `busy_fraction` of them busy."""
    state = {"busy": 0, "total": 0}

    def cpu_times():
        state["busy"] += int(100 * busy_fraction)
        state["total"] += 100
        return state["busy"], state["total"]

    monkeypatch.setattr(quiet, "cpu_times", cpu_times)


def test_a_quiet_machine_is_waited_for_only_as_long_as_the_hold(monkeypatch):
    fake_cpu(monkeypatch, 0.05)
    seen = quiet.wait_quiet(max_busy=0.15, hold_s=0.1, timeout_s=5, interval_s=0.02)
    assert seen["quiet"] is True and seen["waited_s"] < 1


def test_a_busy_machine_is_given_up_on_after_the_timeout_and_says_so(monkeypatch):
    fake_cpu(monkeypatch, 0.9)
    seen = quiet.wait_quiet(max_busy=0.15, hold_s=0.1, timeout_s=0.2, interval_s=0.02)
    assert seen["quiet"] is False and seen["cpu_busy_last"] == 0.9 and seen["waited_s"] >= 0.2


def test_word_error_rate_compares_words_not_punctuation():
    said = "It's easy to tell the depth of a well."
    assert quality.normalise_words(said) == "it's easy to tell the depth of a well"
    assert quality.normalise_words("  Glue   the SHEET! ") == "glue the sheet"
    vectors = [np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([1.0, 0.0])]
    assert quality.mean_pairwise_cosine(vectors) == pytest.approx(1 / 3)


def test_quality_on_random_recognisers_says_the_scores_mean_nothing(tmp_path):
    texts = ["The birch canoe slid on the smooth planks.", "Rice is often served in round bowls."]
    clips = []
    for index, text in enumerate(texts):
        samples = (np.random.default_rng(index).standard_normal(12_000) * 2000).astype(np.int16)
        with wave.open(str(tmp_path / f"{index}.wav"), "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(24000)
            out.writeframes(samples.tobytes())
        clips.append({"file": f"{index}.wav", "phrase": index, "text": text, "seed": 0, "voice": "Delia"})
    (tmp_path / "clips.json").write_text(json.dumps({"model": "synthetic-tiny", "clips": clips}))
    result = quality.score(tmp_path, against=tmp_path)
    assert result["meaningful"] is False and "MEAN NOTHING" in result["warning"]
    assert "random weights" in result["warning"] and "synthetic checkpoint" in result["warning"]
    assert [row["seconds"] for row in result["per_clip"]] == [0.5, 0.5]
    assert result["wer"] >= 1.0  # token ids never match the words
    assert result["speaker_cosine_against"] == pytest.approx(1.0, abs=1e-5)  # each clip against itself
    assert -1.0 <= result["speaker_cosine_within"] <= 1.0
