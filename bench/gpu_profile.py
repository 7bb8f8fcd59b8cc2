"""GPU time of every dispatch of the prefill, the step and a codec chunk, from timestamp queries.

    python bench/gpu_profile.py [--weights DIR] [--repeat 5] [--out FILE.json]

Two views:
* "passes": each dispatch in a compute pass of its own, with timestamps at the pass's start and end:
  a kernel's own GPU time plus one pass's fixed cost (the "empty" line, an empty kernel). The GPU idles
  between passes, so its clocks may drop: read these as proportions.
* "in one pass" (where the adapter has "timestamp-query-inside-passes"): the way the engine submits
  (the prefill, 16 steps and a codec chunk of 16 in one pass) with a timestamp after every dispatch;
  each figure is the time from the previous dispatch's end to this one's, barriers included. A fifth of
  a second of codec work goes just before, so that the GPU's clocks are up as in a real take.
Needs the adapter's "timestamp-query" feature (lavapipe and NVIDIA's Vulkan driver have it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.measure import submit_and_read_stamps  # noqa: E402

EMPTY_WGSL = ROOT / "bench" / "wgsl" / "empty.wgsl"
TEXT = "The birch canoe slid on the smooth planks."
INSIDE_PASSES = "timestamp-query-inside-passes"


def dispatch_name(door, command) -> str:
    """The kernel's label (the door keeps it per pipeline) and the dispatch's workgroup counts."""
    return f"{door._declared[id(command.pipeline)][0]} [{command.x}x{command.y}x{command.z}]"


def profile_program(door, program) -> list[tuple[str, float]]:
    """Run `program` once, one pass per dispatch; (kernel label, GPU microseconds) per dispatch."""
    from phonon_web.gpu.door import Copy

    dispatches = [c for c in program.commands if not isinstance(c, Copy)]
    count = 2 * max(1, len(dispatches))
    queries, encoder = (
        door.device.create_query_set(type="timestamp", count=count),
        door.device.create_command_encoder(),
    )
    index = 0
    names = []
    for command in program.commands:
        if isinstance(command, Copy):
            encoder.copy_buffer_to_buffer(
                command.source, command.source_offset, command.target, command.target_offset, command.size
            )
            continue
        compute = encoder.begin_compute_pass(
            timestamp_writes={
                "query_set": queries,
                "beginning_of_pass_write_index": 2 * index,
                "end_of_pass_write_index": 2 * index + 1,
            }
        )
        compute.set_pipeline(command.pipeline)
        compute.set_bind_group(0, command.bind_group)
        compute.dispatch_workgroups(command.x, command.y, command.z)
        compute.end()
        names.append(dispatch_name(door, command))
        index += 1
    stamps = submit_and_read_stamps(door, encoder, queries, count)
    return [(names[i], (stamps[2 * i + 1] - stamps[2 * i]) / 1000.0) for i in range(index)]


def profile_in_one_pass(door, programs) -> list[tuple[str, float]]:
    """Run [(program, repeat)] in one compute pass with a timestamp after each dispatch."""
    from phonon_web.gpu.door import Copy

    commands = [c for program, repeat in programs for _ in range(repeat) for c in program.commands]
    if any(isinstance(c, Copy) for c in commands):
        raise ValueError("in-pass profiling takes dispatches only")
    count = len(commands) + 1
    queries, encoder = (
        door.device.create_query_set(type="timestamp", count=count),
        door.device.create_command_encoder(),
    )
    compute = encoder.begin_compute_pass()
    compute._write_timestamp(queries, 0)
    names = []
    for i, command in enumerate(commands):
        compute.set_pipeline(command.pipeline)
        compute.set_bind_group(0, command.bind_group)
        compute.dispatch_workgroups(command.x, command.y, command.z)
        compute._write_timestamp(queries, i + 1)
        names.append(dispatch_name(door, command))
    compute.end()
    stamps = submit_and_read_stamps(door, encoder, queries, count)
    return [(names[i], (stamps[i + 1] - stamps[i]) / 1000.0) for i in range(len(commands))]


def summarise(runs: list[list[tuple[str, float]]]) -> dict:
    """Median over runs of each dispatch, then totals per kernel label."""
    per_dispatch = [statistics.median(run[i][1] for run in runs) for i in range(len(runs[0]))]
    by_kernel: dict[str, float] = defaultdict(float)
    for (name, _), us in zip(runs[0], per_dispatch, strict=True):
        by_kernel[name] += us
    ranked = sorted(by_kernel.items(), key=lambda item: -item[1])
    return {
        "dispatches": len(per_dispatch),
        "total_us": round(sum(per_dispatch), 2),
        "by_kernel_us": {name: round(us, 2) for name, us in ranked},
        "each_us": [round(us, 2) for us in per_dispatch],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--weights", type=Path, default=None)
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "bench")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    import phonon_web
    from bench.speed import synthetic_weights
    from phonon_web.gpu.door import Copy, Program
    from phonon_web.gpu.native import NativeDoor
    from phonon_web.gpu.shaders import kernel

    weights = args.weights or synthetic_weights(args.work)
    tts = phonon_web.load(weights, door=NativeDoor(extra_features=(INSIDE_PASSES,)))
    engine = tts.engine
    door, lm, codec = engine.door, engine.lm, engine.codec
    if "timestamp-query" not in door.features:
        print("this adapter has no timestamp-query feature", file=sys.stderr)
        return 2
    empty_pipe = door.pipeline(kernel(str(EMPTY_WGSL)))
    empty = Program("empty")
    empty.dispatch(empty_pipe, door.bind_group(empty_pipe, [door.buffer(16, "storage", "profile sink")]), 1)

    voice = engine.voices[0]
    ids = engine.tokenizer.encode(TEXT)
    report = {"adapter": door.description, "text": TEXT}
    runs = defaultdict(list)
    for _ in range(args.repeat):
        lm.write_request(ids, eos_threshold=1e30, budget=engine.max_frames)
        runs["empty"].append(profile_program(door, empty))
        runs["start"].append(profile_program(door, lm.start(voice)))
        door.submit([(codec.reset, 1)])
        runs["step"].append(profile_program(door, lm.step))
        for _frame in range(15):
            profile_program(door, lm.step)
        runs["codec chunk of 16"].append(profile_program(door, codec.chunk[16]))
    for name, values in runs.items():
        report[name] = summarise(values)
    report["empty_pass_us"] = report["empty"]["total_us"]
    if INSIDE_PASSES in door.features:
        steps = 16
        one_pass = []
        for _ in range(args.repeat):
            lm.write_request(ids, eos_threshold=1e30, budget=engine.max_frames)
            start = lm.start(voice)
            copies = Program("start copies")  # the voice's keys and values: copies stay out of the pass
            work = Program("start dispatches")
            for command in start.commands:
                (copies if isinstance(command, Copy) else work).commands.append(command)
            # the GPU busy for a while first (about 0.2 s, not waited for), so that its clocks are up
            door.submit([(codec.chunk[16], 40)])
            door.submit([(copies, 1), (codec.reset, 1)])
            one_pass.append(profile_in_one_pass(door, [(work, 1), (lm.step, steps), (codec.chunk[16], 1)]))
        each = [statistics.median(run[i][1] for run in one_pass) for i in range(len(one_pass[0]))]
        n_start, n_step = work.dispatch_count, lm.step.dispatch_count
        step_each = [
            statistics.median(each[n_start + s * n_step + i] for s in range(steps)) for i in range(n_step)
        ]
        codec_each = each[n_start + steps * n_step :]
        names = [name for name, _ in one_pass[0]]
        report["in one pass"] = {
            "prefill_us": round(sum(each[:n_start]), 2),
            "step_us": round(sum(step_each), 2),
            "codec_chunk_16_us": round(sum(codec_each), 2),
            "step_each_us": {f"{i:02d} {names[n_start + i]}": round(us, 2) for i, us in enumerate(step_each)},
            "codec_each_us": {
                f"{i:02d} {names[n_start + steps * n_step + i]}": round(us, 2)
                for i, us in enumerate(codec_each)
            },
            "prefill_each_us": {f"{i:02d} {names[i]}": round(us, 2) for i, us in enumerate(each[:n_start])},
        }
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
