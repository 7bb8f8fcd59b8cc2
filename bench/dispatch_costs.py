"""What a dependent dispatch costs, by what its kernel does: the model behind the step's speed.

    python bench/dispatch_costs.py [--out FILE.json]

Times chains of 46 dispatches (a step's count when written; 34 now) replayed 100 times, as speed.py
times its dispatch floor, for probe kernels (bench/wgsl/probe.wgsl): empty, the step's gate, dependent
loads, workgroup barriers and independent loads, the least a step kernel does (gate, input, a
workgroup sum, a store the next one reads), at several workgroup counts; the same empty chain with a
buffer of its own per dispatch, which needs no barrier between dispatches; and speed.py's floor kernel
(bench/wgsl/empty.wgsl). Two clocks: wall (one submit, from the CPU's call to the GPU's finish, which
includes encoding: us_per_dispatch) and, where the adapter has timestamps, the GPU's alone
(gpu_us_per_dispatch: one compute pass with timestamps at its ends, as speed.py's step_gpu_us).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from array import array
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PROBE = str(ROOT / "bench" / "wgsl" / "probe.wgsl")
EMPTY = str(ROOT / "bench" / "wgsl" / "empty.wgsl")
CHAIN = 46
REPEAT = 100


def per_dispatch_us(clock, program) -> float:
    """Microseconds a dispatch of `program` (a chain of CHAIN) takes when it is replayed REPEAT times in
    one submit: the median of 5 such submits."""
    times = [clock.time([(program, REPEAT)])[1] / (CHAIN * REPEAT) * 1e6 for _ in range(5)]
    return sorted(times)[len(times) // 2]


def per_dispatch_gpu_us(door, program) -> float:
    """The same on the GPU's clock: REPEAT replays in one timestamped pass, the median of 5."""
    from bench.measure import pass_gpu_us

    times = [pass_gpu_us(door, [(program, REPEAT)]) / (CHAIN * REPEAT) for _ in range(5)]
    return sorted(times)[len(times) // 2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    from bench.measure import GpuClock
    from phonon_web.gpu.door import Program
    from phonon_web.gpu.native import NativeDoor
    from phonon_web.gpu.shaders import kernel

    door = NativeDoor()
    state = door.buffer(64, "storage", "probe state")
    data = door.buffer(16 * 65536, "storage", "probe data")
    order = list(range(65536))
    random.Random(1).shuffle(order)
    door.write(data, 0, array("I", [w for i in order for w in (i, i, i, i)]).tobytes())
    sinks = [door.buffer(4 * 4096, "storage", f"probe sink {i}") for i in range(CHAIN)]
    clock = GpuClock(door, state)

    has_timestamps = "timestamp-query" in door.features

    def timed(name: str, program) -> None:
        door.compile(program)
        report["us_per_dispatch"][name] = round(per_dispatch_us(clock, program), 3)
        line = f"{report['us_per_dispatch'][name]:8.2f} us wall"
        if has_timestamps:
            report["gpu_us_per_dispatch"][name] = round(per_dispatch_gpu_us(door, program), 3)
            line += f" {report['gpu_us_per_dispatch'][name]:8.2f} us GPU"
        print(f"{line}  {name}", flush=True)

    def chain(name: str, mode: int, depth: int, groups: int, own_buffers: bool = False) -> None:
        pipe = door.pipeline(kernel(PROBE, MODE=mode, DEPTH=depth))
        bind = [
            door.bind_group(pipe, [state if not own_buffers else sinks[(i + 1) % CHAIN], data, sinks[i]])
            for i in range(CHAIN if own_buffers else 1)
        ]
        program = Program(f"probe {mode} {depth} {groups}")
        for i in range(CHAIN):
            program.dispatch(pipe, bind[i % len(bind)], groups)
        timed(name, program)

    cases = {
        "empty, 1 group": (0, 0, 1),
        "empty, 64 groups": (0, 0, 64),
        "empty, 256 groups": (0, 0, 256),
        "empty, 1280 groups": (0, 0, 1280),
        "gate, 1 group": (1, 0, 1),
        "gate, 64 groups": (1, 0, 64),
        "gate, 256 groups": (1, 0, 256),
        "gate + 1 dependent load, 64 groups": (2, 1, 64),
        "gate + 4 dependent loads, 64 groups": (2, 4, 64),
        "gate + 16 dependent loads, 64 groups": (2, 16, 64),
        "gate + 4 barriers, 64 groups": (3, 4, 64),
        "gate + 16 barriers, 64 groups": (3, 16, 64),
        "gate + 4 independent 16B loads/lane, 64 groups": (4, 4, 64),
        "gate + 16 independent 16B loads/lane, 64 groups": (4, 16, 64),
        "gate + 16 independent 16B loads/lane, 8 groups": (4, 16, 8),
        "gate + 64 independent 16B loads/lane, 8 groups": (4, 64, 8),
        "least step kernel (gate, input, 1-round sum, store), 1 group": (5, 1, 1),
        "least step kernel (gate, input, 1-round sum, store), 64 groups": (5, 1, 64),
        "least step kernel (gate, input, 8-round sum, store), 64 groups": (5, 8, 64),
    }
    report = {"adapter": door.description, "chain": CHAIN, "repeat": REPEAT, "us_per_dispatch": {}}
    if has_timestamps:
        report["gpu_us_per_dispatch"] = {}
    chain("warm-up", 0, 0, 1)
    del report["us_per_dispatch"]["warm-up"]
    report.get("gpu_us_per_dispatch", {}).pop("warm-up", None)
    floor = door.pipeline(kernel(EMPTY))
    floor_group = door.bind_group(floor, [door.buffer(16, "storage", "probe floor")])
    floor_program = Program("speed.py's floor kernel")
    for _ in range(CHAIN):
        floor_program.dispatch(floor, floor_group, 1)
    timed("speed.py's floor kernel (bench/wgsl/empty.wgsl), 1 group", floor_program)
    for name, (mode, depth, groups) in cases.items():
        chain(name, mode, depth, groups)
    own = (("empty, 1 group, no barriers (own buffers)", 1), ("gate, 64 groups, own buffers", 64))
    for name, groups in own:
        chain(name, 0 if "empty" in name else 1, 0, groups, True)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
