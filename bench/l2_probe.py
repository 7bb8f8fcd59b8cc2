"""Whether a step finds its weights in the GPU's L2 cache: the step alone, a kernel that writes more
than the L2 holds alone, and the two alternated, each as one compute pass with GPU timestamps at its
ends. A step that follows the write costs (alternated - write) microseconds.

    python bench/l2_probe.py [--weights DIR] [--mib 128] [--steps 24] [--rounds 6] [--out FILE.json]

The H200 run is bench/results/h200-l2-probe-2026-12-01.json (back to back, a step's weights stay in L2).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SCRUB_WGSL = ROOT / "bench" / "wgsl" / "l2_scrub.wgsl"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", type=Path, default=None)
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "bench")
    parser.add_argument("--mib", type=int, default=128, help="size of the write (more than the L2)")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=6, help="the first is a warm-up, not kept")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    import phonon_web
    from bench.measure import GpuClock, emit, pass_gpu_us, start_endless_take
    from bench.speed import synthetic_weights
    from phonon_web.gpu.door import Program
    from phonon_web.gpu.shaders import kernel

    engine = phonon_web.load(args.weights or synthetic_weights(args.work)).engine
    door, lm = engine.door, engine.lm
    if "timestamp-query" not in door.features:
        raise SystemExit(f"{door.description} has no timestamp-query: nothing to measure with")
    clock = GpuClock(door, lm.state)
    size = args.mib << 20
    pipeline = door.pipeline(kernel(str(SCRUB_WGSL)))
    scrub = Program("l2 scrub")
    group = door.bind_group(pipeline, [door.buffer(size, "storage", "l2 scrub")])
    scrub.dispatch(pipeline, group, size // 16 // 256)
    door.compile(scrub)
    steps = min(args.steps, engine.max_frames - 1)

    rounds = {"step": [], "write": [], "step + write": []}
    for _ in range(args.rounds):
        start_endless_take(engine, clock)
        rounds["step"].append(pass_gpu_us(door, [(lm.step, steps)]) / steps)
        rounds["write"].append(pass_gpu_us(door, [(scrub, steps)]) / steps)
        start_endless_take(engine, clock)
        rounds["step + write"].append(pass_gpu_us(door, [(lm.step, 1), (scrub, 1)] * steps) / steps)
    us = {name: round(statistics.median(values[1:]), 1) for name, values in rounds.items()}
    us["step after the write"] = round(us["step + write"] - us["write"], 1)
    report = {
        "adapter": door.description,
        "write_mib": args.mib,
        "us": us,
        "rounds": {name: [round(v, 1) for v in values] for name, values in rounds.items()},
    }
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
