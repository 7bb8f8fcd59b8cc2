"""When the GPU works during a whole take, from a timestamp at the start and the end of every compute
pass the engine submits (the native door's `pass_clock` hook; no timestamp inside a pass, so nothing is
added between dispatches).

A take's wall time is the CPU before the GPU's first pass, the GPU's span (its passes and the gaps
between them: copies, and waits for the CPU to submit), and the CPU after the last pass (the last
read back, the word times). The GPU's end is taken as the moment the take's last read returned (the
read waits for it), which puts its start `span` earlier on the CPU's clock. Per submit, the GPU time
of its passes: a submit of 32 steps and a codec chunk gives the step's cost where the take is (the
Rainbow passage's late steps attend over a thousand keys).

Used by bench/breakdown.py (its report's "GPU timeline" entries); needs "timestamp-query".
"""

from __future__ import annotations

import time

GROUP = 32  # timestamps a resolve starts on: WebGPU resolves to offsets that are multiples of 256 bytes


class PassClock:
    """Timestamps for every compute pass the door records, resolved at the end of each command buffer
    into one buffer, read once after the take."""

    def __init__(self, door, capacity: int = 4096):
        usage = door._wgpu.BufferUsage
        self.door = door
        self.capacity = capacity
        self.queries = door.device.create_query_set(type="timestamp", count=capacity)
        resolvable = usage.QUERY_RESOLVE | usage.COPY_SRC
        self.resolved = door.device.create_buffer(size=8 * capacity, usage=resolvable)
        self.used = 0
        self.flushed = 0
        self.labels: dict[int, tuple[int, str]] = {}  # a pass's first query -> (its submit's number, what)
        self.label = (0, "")

    def pass_writes(self) -> dict:
        if self.used + 2 > self.capacity:
            raise RuntimeError(f"more than {self.capacity // 2} passes in one timeline")
        first = self.used
        self.used += 2
        self.labels[first] = self.label
        return {"query_set": self.queries, "beginning_of_pass_write_index": first,
                "end_of_pass_write_index": first + 1}  # fmt: skip

    def resolve(self, encoder) -> None:
        if self.used > self.flushed:
            count = self.used - self.flushed
            encoder.resolve_query_set(self.queries, self.flushed, count, self.resolved, 8 * self.flushed)
            self.used = -(-self.used // GROUP) * GROUP  # the next resolve starts on 256 bytes
            self.flushed = self.used

    def passes(self) -> list[tuple[tuple[int, str], int, int]]:
        """((submit number, what it held), start ns, end ns) of every pass that ran, in the order
        they were recorded (a pass recorded but never submitted wrote no timestamps)."""
        from phonon_web.gpu.door import READBACK, Program, run_sync

        size = 8 * max(self.flushed, 1)
        staging = self.door.buffer(size, READBACK, "timeline readback")
        program = Program("timeline")
        program.copy(self.resolved, 0, staging, 0, size)
        self.door.submit([(program, 1)])
        stamps = memoryview(run_sync(self.door.read(staging, 0, size))).cast("Q")
        starts = [i for i in range(0, self.flushed, 2) if stamps[i] or stamps[i + 1]]
        return [(self.labels[i], stamps[i], stamps[i + 1]) for i in starts]


def take_gpu_timeline(engine, voice: str, text: str) -> dict:
    """Run a take of `text` to its budget with every pass timed; the phases of its wall time.

    The take is the second of two: the engine records the first chunks of a take during the take
    before it (Engine._record_ahead), so the first take, timed too but not reported, makes the second
    start as every take after a first one does, its recorded passes timed."""
    import phonon_web.engine as engine_module
    from phonon_web.gpu.door import run_sync

    door = engine.door
    clock = PassClock(door)
    submit, read = door.submit, door.read
    record_ahead, submit_recorded = door.record_ahead, door.submit_recorded
    recorded_as: dict[int, int] = {}  # id of a recorded command buffer -> its passes' submit number
    reported: set[int] = set()  # the submit numbers of the reported take's passes
    last_read = [0.0]
    # the CPU's work after the GPU: the last chunk's collect, the word times and their text spans
    spans: dict[str, list[tuple[float, float]]] = {"collect": [], "align": [], "attach": []}
    originals = {name: getattr(engine_module, name) for name in ("align", "attach")}
    collect, take, prepare = engine._collect, engine._take, engine._prepare
    take_ends: list[float] = []
    prepared: list[tuple[float, float]] = []
    submitted: list[tuple[float, float]] = []  # each submit's call and return

    def timed(fn, into: list):  # fn, its (start, end) appended to `into` at every call
        def call(*args, **kwargs):
            start = time.perf_counter()
            result = fn(*args, **kwargs)
            into.append((start, time.perf_counter()))
            return result

        return call

    async def timed_collect(*args, **kwargs):
        data = await collect(*args, **kwargs)
        spans["collect"].append((last_read[0], time.perf_counter()))  # from its read's return
        return data

    async def timed_take(*args, **kwargs):
        result = await take(*args, **kwargs)
        take_ends.append(time.perf_counter())
        return result

    def label(programs, what=""):
        clock.label = (clock.label[0] + 1, what + "+".join(f"{p.label} x{n}" for p, n in programs))

    def labelled_submit(programs):
        label(programs)
        reported.add(clock.label[0])
        start = time.perf_counter()
        submit(programs)
        submitted.append((start, time.perf_counter()))

    def labelled_record_ahead(programs):
        label(programs, "(ahead) ")  # the passes it records carry this label when they run
        recorded = record_ahead(programs)
        recorded_as[id(recorded)] = clock.label[0]
        return recorded

    def timed_submit_recorded(recorded):
        reported.add(recorded_as.pop(id(recorded)))
        start = time.perf_counter()
        submit_recorded(recorded)
        submitted.append((start, time.perf_counter()))

    async def timed_read(buffer, offset, size):
        data = await read(buffer, offset, size)
        last_read[0] = time.perf_counter()
        return data

    door.submit, door.read, door.pass_clock = labelled_submit, timed_read, clock
    door.record_ahead, door.submit_recorded = labelled_record_ahead, timed_submit_recorded
    engine._ahead = None  # (recorded without timestamps)
    engine._collect, engine._take, engine._prepare = timed_collect, timed_take, timed(prepare, prepared)
    for name, fn in originals.items():
        setattr(engine_module, name, timed(fn, spans[name]))
    try:
        run_sync(engine.speak(text, voice=voice, eos_threshold=float("inf")))  # the lead-in take
        for found in (*spans.values(), take_ends, prepared, submitted, reported):
            found.clear()
        began = time.perf_counter()
        speech = run_sync(engine.speak(text, voice=voice, eos_threshold=float("inf")))
        ended = time.perf_counter()
    finally:
        door.submit, door.read, door.pass_clock = submit, read, None
        del door.record_ahead, door.submit_recorded, engine._collect, engine._take, engine._prepare
        for name, fn in originals.items():
            setattr(engine_module, name, fn)
        engine._ahead = None  # what it recorded writes timestamps into the query set destroyed below
    # the reported take's passes (some recorded during the lead-in), in the order they ran
    passes = sorted((p for p in clock.passes() if p[0][0] in reported), key=lambda p: p[1])
    clock.queries.destroy()
    clock.resolved.destroy()
    first, last = passes[0][1], max(end for _, _, end in passes)
    busy = sum(end - start for _, start, end in passes)
    gaps = sorted(((passes[i + 1][1] - passes[i][2], i + 1) for i in range(len(passes) - 1)), reverse=True)
    per_submit: dict[tuple[int, str], float] = {}
    for label, start, end in passes:
        per_submit[label] = per_submit.get(label, 0.0) + (end - start) / 1e6
    span_ms = (last - first) / 1e6
    gpu_start = last_read[0] - span_ms / 1000  # on the CPU's clock
    before = {
        "prepare": 1000 * (prepared[0][1] - prepared[0][0]),  # normalising, splitting, tokenising
        "to_first_submit": 1000 * (submitted[0][0] - prepared[0][1]),  # checks, the request's writes
        "first_submit": 1000 * (submitted[0][1] - submitted[0][0]),  # encoding it (unless recorded)
    }
    before = {name: round(ms, 3) for name, ms in before.items()}
    before["other"] = round(1000 * (gpu_start - began) - sum(before.values()), 3)
    after = {
        name: round(sum(1000 * (b - max(a, last_read[0])) for a, b in found if b > last_read[0]), 3)
        for name, found in spans.items()
    }
    # the take's own tail after its last collect: cutting the samples and rows to the frames kept
    after["take_after_collect"] = round(1000 * (take_ends[-1] - spans["collect"][-1][1]), 3)
    after["other"] = round(1000 * (ended - last_read[0]) - sum(after.values()), 3)
    gpu_end_ms = 1000 * (last_read[0] - began)
    return {
        "text_chars": len(text),
        "frames": speech.frames,
        "wall_ms": round(1000 * (ended - began), 3),
        "cpu_before_gpu_ms": round(gpu_end_ms - span_ms, 3),
        "gpu_span_ms": round(span_ms, 3),
        "gpu_busy_ms": round(busy / 1e6, 3),
        "gpu_idle_in_span_ms": round(span_ms - busy / 1e6, 3),
        "cpu_before_gpu_parts_ms": before,
        "cpu_after_gpu_ms": round(1000 * ended - 1000 * last_read[0], 3),
        "cpu_after_gpu_parts_ms": after,
        "largest_gaps": [
            {"ms": round(gap / 1e6, 3), "before": passes[i][0][1]} for gap, i in gaps[:6]
        ],
        "passes": len(passes),
        "gpu_ms_by_submit": [
            {"submit": label, "ms": round(ms, 3)} for (_, label), ms in per_submit.items()
        ],
    }  # fmt: skip
