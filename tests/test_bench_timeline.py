"""bench/take_gpu_timeline.py on lavapipe with the tiny model: the timestamps of every compute pass of a
take come back in order and add up, the door's hook is left as it was, and the take is the same with
the timestamps as without them."""

from __future__ import annotations

from bench.take_gpu_timeline import take_gpu_timeline


def test_a_take_timed_pass_by_pass(tiny_weights):
    import phonon_web

    engine = phonon_web.load(tiny_weights).engine
    engine.skip_ramp_above = 0.0  # every take after the first skips the ramp and records ahead
    voice = engine.voices[0]
    phonon_web.gpu.door.run_sync(engine.speak("Hi there.", voice=voice, eos_threshold=float("inf")))
    report = take_gpu_timeline(engine, voice, "Hi there.")
    assert engine.door.pass_clock is None
    assert report["frames"] > 0
    assert 0 < report["gpu_busy_ms"] <= report["gpu_span_ms"] + 1e-6
    assert abs(report["gpu_span_ms"] - report["gpu_busy_ms"] - report["gpu_idle_in_span_ms"]) < 1e-2
    submits = report["gpu_ms_by_submit"]
    # every submit of the take holds a pass: the prefill (recorded during the lead-in take), then each
    # chunk's steps and codec, chunks 0 and 1 recorded during the lead-in too
    assert submits[0]["submit"].startswith("(ahead) lm start")
    assert submits[1]["submit"].startswith("(ahead) codec reset")
    assert any("codec chunk" in s["submit"] for s in submits)
    assert all(s["ms"] > 0 for s in submits)
    assert abs(sum(s["ms"] for s in submits) - report["gpu_busy_ms"]) < 1e-2
    assert report["passes"] >= len(submits)
    before = report["cpu_before_gpu_parts_ms"]
    assert set(before) == {"prepare", "to_first_submit", "first_submit", "other"}
    assert before["prepare"] > 0 and before["first_submit"] > 0
    assert abs(sum(before.values()) - report["cpu_before_gpu_ms"]) < 1e-2
    parts = report["cpu_after_gpu_parts_ms"]
    assert set(parts) == {"collect", "take_after_collect", "align", "attach", "other"} and parts["align"] > 0
    assert all(parts[name] >= 0 for name in ("collect", "take_after_collect", "align", "attach"))
    assert abs(sum(parts.values()) - report["cpu_after_gpu_ms"]) < 1e-2
    import phonon_web.engine as engine_module  # the wrapped functions are the engine's again
    from phonon_web.timing import align

    assert engine_module.align is align and "_collect" not in vars(engine) and "_take" not in vars(engine)
    assert "_prepare" not in vars(engine) and engine._ahead is None
    # the audio does not depend on the timestamps
    again = phonon_web.gpu.door.run_sync(engine.speak("Hi there.", voice=voice, eos_threshold=float("inf")))
    assert again.frames == report["frames"]
