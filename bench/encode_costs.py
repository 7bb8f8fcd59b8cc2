"""Where the CPU's time goes when it encodes language-model steps: recording the pass (the door's cffi
calls, NativeDoor.record), finishing the command buffer, and submitting it, per step, then the GPU's
time and the wait. On the H200's hosts a step took 100 to 210 us to encode (41 recording and 62
finishing in bench/results/h200-encode-costs-2026-11-30.json), and a take can be bound by it; on the
2-core machine with lavapipe, 70 us (35 recording, 33 finishing).

    python bench/encode_costs.py [--weights DIR] [--steps 100] [--rounds 4] [--out FILE.json]

Each round starts the request again (every timed step works) and times the phases of one submit of
--steps steps, recorded by the door's own NativeDoor.record; the first round warms up and is not kept.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PHASES = ("record", "finish", "submit", "gpu_and_wait")


def submit_phases(door, clock, programs) -> list[float]:
    """Microseconds of each phase (PHASES) of one submit of [(program, repeat)], recorded by the door's
    own NativeDoor.record, from the moment `clock` last settled."""
    stamps = [time.perf_counter()]
    encoder = door.record(programs)  # what NativeDoor.submit records
    stamps.append(time.perf_counter())
    command_buffer = encoder.finish()
    stamps.append(time.perf_counter())
    door.queue.submit([command_buffer])
    stamps.append(time.perf_counter())
    clock.settle()
    stamps.append(time.perf_counter())
    return [(b - a) * 1e6 for a, b in zip(stamps[:-1], stamps[1:], strict=True)]


def encode_phases(engine, steps: int) -> dict[str, float]:
    """Microseconds per step of each phase of one submit of `steps` steps."""
    from bench.measure import GpuClock, start_endless_take

    door, lm = engine.door, engine.lm
    clock = GpuClock(door, lm.state)
    start_endless_take(engine, clock)
    phases = submit_phases(door, clock, [(lm.step, steps)])
    return {name: us / steps for name, us in zip(PHASES, phases, strict=True)}


def codec_phases(engine, frames: int, repeat: int = 5) -> dict[str, float]:
    """Microseconds of each phase of one submit of a codec chunk of `frames` frames (the median of
    `repeat`; the GPU's part is short: no frames are waiting, so its kernels return at once)."""
    from bench.measure import GpuClock

    door, codec = engine.door, engine.codec
    clock = GpuClock(door, engine.lm.state)
    runs = []
    for _ in range(repeat):
        clock.settle()
        runs.append(submit_phases(door, clock, [(codec.chunk[frames], 1)]))
    return {name: round(statistics.median(r[i] for r in runs), 2) for i, name in enumerate(PHASES)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", type=Path, default=None)
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "bench")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    import phonon_web
    from bench.measure import emit
    from bench.speed import synthetic_weights

    engine = phonon_web.load(args.weights or synthetic_weights(args.work)).engine
    steps = min(args.steps, engine.max_frames - 1)
    rounds = [encode_phases(engine, steps) for _ in range(args.rounds + 1)][1:]
    report = {
        "adapter": engine.door.description,
        "steps": steps,
        "dispatches_per_step": engine.lm.step.dispatch_count,
        "us_per_step": {name: round(statistics.median(r[name] for r in rounds), 2) for name in PHASES},
        "rounds": [{k: round(v, 2) for k, v in r.items()} for r in rounds],
        "codec_chunk_us": {frames: codec_phases(engine, frames) for frames in sorted(engine.codec.chunk)},
    }
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
