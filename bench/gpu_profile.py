"""GPU time of every dispatch of the prefill, the step and a codec chunk, from timestamp queries.

    python bench/gpu_profile.py [--weights DIR] [--repeat 5] [--out FILE.json]

Each dispatch is encoded in a compute pass of its own with timestamps at the pass's start and end,
so the figures are the kernels' own GPU times (plus one pass's fixed cost, which the "empty" line
measures with an empty kernel). They say where a frame's GPU time goes; they are not the engine's speed
(the engine puts a whole submit in one pass; bench/speed.py measures that). Needs the adapter's
"timestamp-query" feature (lavapipe and NVIDIA's Vulkan driver have it).
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

EMPTY_WGSL = ROOT / "bench" / "wgsl" / "empty.wgsl"
TEXT = "The birch canoe slid on the smooth planks."


def profile_program(door, program, labels: dict) -> list[tuple[str, float]]:
    """Run `program` once, one pass per dispatch; (kernel label, GPU microseconds) per dispatch."""
    from phonon_web.gpu.door import Copy

    device = door.device
    wgpu = door._wgpu
    dispatches = [c for c in program.commands if not isinstance(c, Copy)]
    count = 2 * max(1, len(dispatches))
    queries = device.create_query_set(type="timestamp", count=count)
    usage = wgpu.BufferUsage
    resolved = device.create_buffer(size=8 * count, usage=usage.QUERY_RESOLVE | usage.COPY_SRC)
    readable = device.create_buffer(size=8 * count, usage=usage.MAP_READ | usage.COPY_DST)
    encoder = device.create_command_encoder()
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
        names.append(labels.get(id(command.pipeline), "?") + f" [{command.x}x{command.y}x{command.z}]")
        index += 1
    encoder.resolve_query_set(queries, 0, count, resolved, 0)
    encoder.copy_buffer_to_buffer(resolved, 0, readable, 0, 8 * count)
    device.queue.submit([encoder.finish()])
    readable.map_sync(wgpu.MapMode.READ)
    stamps = readable.read_mapped().cast("Q").tolist()
    readable.unmap()
    for item in (queries, resolved, readable):
        item.destroy()
    return [(names[i], (stamps[2 * i + 1] - stamps[2 * i]) / 1000.0) for i in range(index)]


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
    from phonon_web.gpu.door import Program
    from phonon_web.gpu.shaders import kernel

    weights = args.weights or synthetic_weights(args.work)
    tts = phonon_web.load(weights)
    engine = tts.engine
    door, lm, codec = engine.door, engine.lm, engine.codec
    if "timestamp-query" not in door.features:
        print("this adapter has no timestamp-query feature", file=sys.stderr)
        return 2
    labels = {id(pipe): door._declared[id(pipe)][0] for pipe in door._pipelines.values()}
    empty_pipe = door.pipeline(kernel(str(EMPTY_WGSL)))
    labels[id(empty_pipe)] = "empty"
    empty = Program("empty")
    empty.dispatch(empty_pipe, door.bind_group(empty_pipe, [door.buffer(16, "storage", "profile sink")]), 1)

    voice = engine.voices[0]
    ids = engine.tokenizer.encode(TEXT)
    report = {"adapter": door.description, "text": TEXT}
    runs = defaultdict(list)
    for _ in range(args.repeat):
        lm.write_request(ids, eos_threshold=1e30, budget=engine.max_frames)
        runs["empty"].append(profile_program(door, empty, labels))
        runs["start"].append(profile_program(door, lm.start(voice), labels))
        door.submit([(codec.reset, 1)])
        runs["step"].append(profile_program(door, lm.step, labels))
        for _frame in range(15):
            profile_program(door, lm.step, labels)
        runs["codec chunk of 16"].append(profile_program(door, codec.chunk[16], labels))
    for name, values in runs.items():
        report[name] = summarise(values)
    report["empty_pass_us"] = report["empty"]["total_us"]
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
