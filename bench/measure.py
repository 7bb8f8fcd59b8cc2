"""Small helpers the benchmark scripts share."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def best_of(fn: Callable[[], object], repeat: int) -> float:
    """The shortest wall time of `repeat` calls of `fn`, in seconds: the least disturbed run."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


class GpuClock:
    """Wall time of GPU work on a door, from the CPU: the work is submitted, then a 16-byte copy of
    `source` into a readback buffer, and that buffer is read back; the door's read waits for the
    submission that made the copy, hence for everything submitted before it."""

    def __init__(self, door, source):
        from phonon_web.gpu.door import READBACK, Program

        self.door = door
        self.probe = door.buffer(16, READBACK, "bench probe")
        self.wait = Program("bench wait")
        self.wait.copy(source, 0, self.probe, 0, 16)
        door.compile(self.wait)

    def settle(self) -> None:
        """Wait until the GPU has finished everything submitted so far."""
        from phonon_web.gpu.door import run_sync

        self.door.submit([(self.wait, 1)])
        run_sync(self.door.read(self.probe, 0, 16))

    def time(self, submits) -> tuple[float, float]:
        """(encode, wall) seconds of `submits` from an idle GPU: the CPU's time in `door.submit`, and the
        time until the GPU has finished them."""
        from phonon_web.gpu.door import run_sync

        self.settle()
        start = time.perf_counter()
        self.door.submit(submits)
        self.door.submit([(self.wait, 1)])
        encoded = time.perf_counter()
        run_sync(self.door.read(self.probe, 0, 16))
        return encoded - start, time.perf_counter() - start


PROBE_TEXT = "The birch canoe slid on the smooth planks."


def start_endless_take(engine, clock: GpuClock) -> None:
    """Start a take of PROBE_TEXT in the first voice that never ends before the engine's frame limit
    (so every timed step works), and wait until its start has run."""
    lm = engine.lm
    lm.write_request(engine.tokenizer.encode(PROBE_TEXT), eos_threshold=1e30, budget=engine.max_frames)
    engine.door.submit([(lm.start(engine.voices[0]), 1)])
    clock.settle()


def emit(report: dict, out) -> None:
    """Print a benchmark's report as JSON and write it to `out` (a Path) when one is given."""
    text = json.dumps(report, indent=1)
    print(text)
    if out:
        out.write_text(text + "\n")


def submit_and_read_stamps(door, encoder, queries, count: int) -> list[int]:
    """Resolve `count` timestamps of `queries` at the end of `encoder`, submit it and read them (ns)."""
    device, usage = door.device, door._wgpu.BufferUsage
    resolved = device.create_buffer(size=8 * count, usage=usage.QUERY_RESOLVE | usage.COPY_SRC)
    readable = device.create_buffer(size=8 * count, usage=usage.MAP_READ | usage.COPY_DST)
    encoder.resolve_query_set(queries, 0, count, resolved, 0)
    encoder.copy_buffer_to_buffer(resolved, 0, readable, 0, 8 * count)
    device.queue.submit([encoder.finish()])
    readable.map_sync(door._wgpu.MapMode.READ)
    stamps = readable.read_mapped().cast("Q").tolist()
    readable.unmap()
    for item in (queries, resolved, readable):
        item.destroy()
    return stamps


def pass_gpu_us(door, programs) -> float:
    """GPU microseconds of [(program, repeat)] encoded as one compute pass, from the timestamps the
    pass writes at its beginning and its end (core "timestamp-query": no write inside the pass, so
    nothing is added between dispatches). The CPU's encoding is not in it: the GPU starts once the
    whole pass is submitted. Dispatches only."""
    from phonon_web.gpu.door import Copy

    queries = door.device.create_query_set(type="timestamp", count=2)
    encoder = door.device.create_command_encoder()
    compute = encoder.begin_compute_pass(
        timestamp_writes={
            "query_set": queries,
            "beginning_of_pass_write_index": 0,
            "end_of_pass_write_index": 1,
        }
    )
    for program, repeat in programs:
        if any(isinstance(c, Copy) for c in program.commands):
            raise ValueError(f"{program.label}: pass_gpu_us takes dispatches only")
        for _ in range(repeat):
            for command in program.commands:
                compute.set_pipeline(command.pipeline)
                compute.set_bind_group(0, command.bind_group)
                compute.dispatch_workgroups(command.x, command.y, command.z)
    compute.end()
    stamps = submit_and_read_stamps(door, encoder, queries, 2)
    return (stamps[1] - stamps[0]) / 1000.0


def wgsl_variant(wgsl: Path, name: str, cuts: list[tuple[str, str]]) -> Path | None:
    """A folder holding `wgsl` with each (old, new) of `cuts` replaced (an ablation: a variant's results
    are wrong on purpose), under build/wgsl_variants/; None for no cuts."""
    if not cuts:
        return None
    text = wgsl.read_text()
    for old, new in cuts:
        if old not in text:
            raise SystemExit(f"{name}: {old!r} is no longer in {wgsl.name}")
        text = text.replace(old, new)
    folder = ROOT / "build" / "wgsl_variants" / wgsl.stem / name.replace(" ", "_")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / wgsl.name).write_text(text)
    return folder


def use_wgsl_folder(folder: Path | None) -> None:
    """Put `folder` (a wgsl_variant) first on the shader path for the devices made from now on; None
    goes back to the project's shaders alone."""
    from phonon_web.gpu import shaders

    shaders._WGSL_DIRS = ((folder,) if folder else ()) + tuple(
        d for d in shaders._WGSL_DIRS if "wgsl_variants" not in str(d)
    )
    shaders.read_wgsl.cache_clear()
    shaders.kernel_source.cache_clear()
