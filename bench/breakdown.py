"""Where a take's time goes: each prebuilt program timed alone, GPU work and CPU encoding apart.

    python bench/breakdown.py [--weights DIR] [--repeat 20]

Each line is a median over --repeat runs of: submit the program(s), then wait for a 16-byte readback.
"encode" is the CPU time of `door.submit` alone (recording and submitting the commands); "wall" is
submit + wait. The readback round trip of an empty submit is the fixed cost every wait pays.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--weights", type=Path, default=None)
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "bench")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    import phonon_web
    from bench.measure import GpuClock, emit
    from bench.speed import synthetic_weights
    from bench.take_gpu_timeline import take_gpu_timeline
    from phonon_web.gpu.door import run_sync

    weights = args.weights or synthetic_weights(args.work)
    tts = phonon_web.load(weights)
    engine = tts.engine
    door, lm, codec = engine.door, engine.lm, engine.codec
    clock = GpuClock(door, lm.state)
    voice = engine.voices[0]
    ids = engine.tokenizer.encode("The birch canoe slid on the smooth planks.")

    def measure(submits, prepare=None) -> dict:
        encodes, walls = [], []
        for _ in range(args.repeat):
            if prepare:
                prepare()
            encode, wall = clock.time(submits)  # from an idle GPU: the prepared prefill has finished
            encodes.append(encode)
            walls.append(wall)
        return {"encode_us": statistics.median(encodes) * 1e6, "wall_us": statistics.median(walls) * 1e6}

    def fresh():
        lm.write_request(ids, eos_threshold=1e30, budget=engine.max_frames)
        door.submit([(lm.start(voice), 1), (codec.reset, 1)])

    report = {"adapter": door.description, "dispatches": {}}
    report["empty submit + readback"] = measure([])
    report["write_request"] = {"wall_us": _time(lambda: lm.write_request(ids, budget=engine.max_frames), 20)}
    report["start (prefill 64 rows)"] = measure(
        [(lm.start(voice), 1)], prepare=lambda: lm.write_request(ids, budget=engine.max_frames)
    )
    report["dispatches"]["start"] = lm.start(voice).dispatch_count
    for frames in (1, 8):
        report[f"{frames} step(s)"] = measure([(lm.step, frames)], prepare=fresh)
    report["dispatches"]["step"] = lm.step.dispatch_count
    for frames in sorted(codec.chunk):
        report[f"codec chunk of {frames}"] = measure(
            [(lm.step, frames), (codec.chunk[frames], 1)], prepare=fresh
        )
        report["dispatches"][f"codec {frames}"] = codec.chunk[frames].dispatch_count
    # speak() submits the prefill alone, then the first chunk (see the timeline below); here both in one
    report["prefill and first chunk in one submit"] = measure(
        [(lm.start(voice), 1), (codec.reset, 1), *engine.ramp.submits[0]],
        prepare=lambda: lm.write_request(ids, budget=engine.max_frames),
    )
    # a whole take's speak(), first audio included
    speech = tts.speak("The birch canoe slid on the smooth planks.", voice=voice)
    report["speak"] = {
        "first_audio_ms": 1000 * speech.first_audio_seconds,
        "compute_ms": 1000 * speech.compute_seconds,
        "frames": speech.frames,
        "speed_x": speech.real_time_factor,
    }
    # a take that runs to its budget: when each chunk arrives, from the call
    for attempt in range(3):
        arrivals = []
        began = time.perf_counter()
        speech = run_sync(
            engine.speak(
                "The birch canoe slid on the smooth planks.",
                voice=voice,
                eos_threshold=float("inf"),
                on_audio=lambda chunk, log=arrivals, t0=began: log.append(
                    round(1000 * (time.perf_counter() - t0), 2)
                ),
            )
        )
        report[f"budget take {attempt}"] = {
            "chunk_arrivals_ms": arrivals[:8],
            "frames": speech.frames,
            "first_audio_ms": 1000 * speech.first_audio_seconds,
            "compute_ms": 1000 * speech.compute_seconds,
            "speed_x": speech.real_time_factor,
        }
    report["timeline of a budget take"] = take_timeline(engine, voice)
    if "timestamp-query" in door.features:
        phrases = json.loads((ROOT / "bench" / "phrases.json").read_text())["phrases"]
        # (each timeline's lead-in take also warms the timestamps up: the first timestamped passes of a
        # process waited ~25 ms)
        for name, text in (("short", phrases[0]), ("long", phrases[-1])):
            report[f"GPU timeline of a {name} budget take"] = take_gpu_timeline(engine, voice, text)
    emit(report, args.out)
    return 0


def take_timeline(engine, voice) -> dict:
    """When a take's submits and reads happen and how long each takes, from speak()'s call: the CPU's
    encoding (submit), its waits for the GPU (read), and the Python around them (the gaps, and the
    tail after the last read). The door's methods are wrapped for this one take and then restored."""
    from phonon_web.gpu.door import run_sync

    door = engine.door
    events = []
    submit, read = door.submit, door.read

    def timed_submit(programs):
        start = time.perf_counter()
        submit(programs)
        events.append(
            ("submit", start, time.perf_counter(), "+".join(f"{p.label} x{n}" for p, n in programs))
        )

    async def timed_read(buffer, offset, size):
        start = time.perf_counter()
        data = await read(buffer, offset, size)
        events.append(("read", start, time.perf_counter(), f"{size} bytes"))
        return data

    door.submit, door.read = timed_submit, timed_read
    try:
        began = time.perf_counter()
        speech = run_sync(
            engine.speak(
                "The birch canoe slid on the smooth planks.", voice=voice, eos_threshold=float("inf")
            )
        )
        ended = time.perf_counter()
    finally:
        door.submit, door.read = submit, read
    return {
        "frames": speech.frames,
        "total_ms": round(1000 * (ended - began), 3),
        "after_last_read_ms": round(1000 * (ended - events[-1][2]), 3),
        "events": [
            {"what": kind, "at_ms": round(1000 * (t0 - began), 3), "took_ms": round(1000 * (t1 - t0), 3),
             "detail": detail}
            for kind, t0, t1, detail in events
        ],
    }  # fmt: skip


def _time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


if __name__ == "__main__":
    sys.exit(main())
