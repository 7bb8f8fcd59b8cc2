"""Small helpers the benchmark scripts share."""

from __future__ import annotations

import time
from collections.abc import Callable


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
