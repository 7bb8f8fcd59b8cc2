"""What a dependent dispatch costs, by what its kernel does: the model behind the step's speed.

    python bench/dispatch_costs.py [--out FILE.json]

Times chains of 46 dispatches (a step's count when written; 45 now) replayed 100 times in one submit,
as speed.py times its dispatch floor, for probe kernels (bench/wgsl/probe.wgsl): empty, the step's
gate, dependent loads, workgroup barriers and independent loads, at several workgroup counts; and the
same empty chain with a buffer of its own per dispatch, which needs no barrier between dispatches.
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
CHAIN = 46
REPEAT = 100


def per_dispatch_us(clock, program) -> float:
    """Microseconds a dispatch of `program` (a chain of CHAIN) takes when it is replayed REPEAT times in
    one submit: the median of 5 such submits."""
    times = [clock.time([(program, REPEAT)])[1] / (CHAIN * REPEAT) * 1e6 for _ in range(5)]
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

    def chain(mode: int, depth: int, groups: int, own_buffers: bool = False) -> float:
        pipe = door.pipeline(kernel(PROBE, MODE=mode, DEPTH=depth))
        bind = [
            door.bind_group(pipe, [state if not own_buffers else sinks[(i + 1) % CHAIN], data, sinks[i]])
            for i in range(CHAIN if own_buffers else 1)
        ]
        program = Program(f"probe {mode} {depth} {groups}")
        for i in range(CHAIN):
            program.dispatch(pipe, bind[i % len(bind)], groups)
        door.compile(program)
        return per_dispatch_us(clock, program)

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
    }
    report = {"adapter": door.description, "chain": CHAIN, "repeat": REPEAT, "us_per_dispatch": {}}
    chain(0, 0, 1)  # warm
    for name, (mode, depth, groups) in cases.items():
        report["us_per_dispatch"][name] = round(chain(mode, depth, groups), 3)
        print(f"{report['us_per_dispatch'][name]:8.2f} us  {name}", flush=True)
    own = (("empty, 1 group, no barriers (own buffers)", 1), ("gate, 64 groups, own buffers", 64))
    for name, groups in own:
        report["us_per_dispatch"][name] = round(chain(0 if "empty" in name else 1, 0, groups, True), 3)
        print(f"{report['us_per_dispatch'][name]:8.2f} us  {name}", flush=True)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
