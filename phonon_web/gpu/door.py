"""The small GPU interface the engine talks to; `native.py` and `browser.py` implement it.

The engine builds everything at load time (buffers, pipelines, bind groups) and then only writes
bytes into existing buffers, submits prebuilt command lists and reads results back. A command list is
a `Program`: a flat list of dispatches and copies that a door turns once into whatever replays fastest
on its side (raw wgpu-native calls natively, one JS function in the browser).

Every door counts the GPU objects it creates, so tests can prove that requests allocate none.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from .shaders import Kernel

# Buffer kinds. "storage" buffers can also be copied to and from; "readback" ones are mappable.
STORAGE, UNIFORM, READBACK = "storage", "uniform", "readback"


@dataclass(frozen=True)
class Dispatch:
    pipeline: Any
    bind_group: Any
    x: int
    y: int = 1
    z: int = 1


@dataclass(frozen=True)
class Copy:
    source: Any
    source_offset: int
    target: Any
    target_offset: int
    size: int


class Program:
    """An ordered list of dispatches and copies, compiled once by a door and replayed many times."""

    def __init__(self, label: str = "program"):
        self.label = label
        self.commands: list[Dispatch | Copy] = []
        self.compiled: Any = None  # the door's replayable form, made by `Door.compile`

    def dispatch(self, pipeline, bind_group, x: int, y: int = 1, z: int = 1) -> None:
        if min(x, y, z) < 1:
            raise ValueError(f"{self.label}: workgroup counts must be >= 1, got {(x, y, z)}")
        self.commands.append(Dispatch(pipeline, bind_group, x, y, z))

    def copy(self, source, source_offset: int, target, target_offset: int, size: int) -> None:
        if size % 4 or source_offset % 4 or target_offset % 4:
            raise ValueError(f"{self.label}: copies must be 4-byte aligned")
        self.commands.append(Copy(source, source_offset, target, target_offset, size))

    def extend(self, other: Program) -> None:
        self.commands.extend(other.commands)

    @property
    def dispatch_count(self) -> int:
        return sum(isinstance(c, Dispatch) for c in self.commands)


class Door:
    """What the engine needs from a GPU. Subclasses fill in the methods that raise NotImplementedError."""

    name = "abstract"
    # Why the device was lost (a few words), once it is; None while it works. A door sets it from its
    # device's lost signal or a failed call; the engine then refuses work with DeviceLostError. (A class
    # attribute: a door may make it a property instead.)
    lost: str | None = None

    def __init__(self):
        self.created: Counter[str] = Counter()  # "buffer", "bind_group", "pipeline", "bytes"
        self.features: frozenset[str] = frozenset()
        self.limits: dict[str, int] = {}
        self._pipelines: dict[tuple, Any] = {}
        self._declared: dict[int, tuple] = {}  # id of a pipeline -> (label, its @binding declarations)

    # ---- objects, made at load time -------------------------------------------------------------
    def buffer(self, size: int, kind: str = STORAGE, label: str = "") -> Any:
        size = max(4, (size + 3) // 4 * 4)
        self.created["buffer"] += 1
        self.created["bytes"] += size
        return self._create_buffer(size, kind, label)

    def pipeline(self, kernel: Kernel) -> Any:
        """The pipeline of a kernel, compiled once per distinct kernel (same files and constants)."""
        pipe = self._pipelines.get(kernel.key)
        if pipe is None:
            missing = kernel.features - self.features
            if missing:
                raise RuntimeError(
                    f"kernel {kernel.label} needs GPU features {sorted(missing)} this device lacks"
                )
            self.created["pipeline"] += 1
            pipe = self._pipelines[kernel.key] = self._create_pipeline(kernel)
            self._declared[id(pipe)] = (kernel.label, kernel.bindings())
        return pipe

    def bind_group(self, pipeline, buffers: list) -> Any:
        """Bind `buffers` to the kernel's bindings in order; each item is a buffer or a (buffer, offset,
        size) tuple. The door receives (binding index, buffer, offset, size) entries."""
        label, decls = self._declared[id(pipeline)]
        if len(buffers) != len(decls):
            names = ", ".join(d.name for d in decls)
            raise ValueError(f"{label}: expected {len(decls)} buffers ({names}), got {len(buffers)}")
        entries = []
        for decl, item in zip(decls, buffers, strict=True):
            buffer, offset, size = item if isinstance(item, tuple) else (item, 0, item.size)
            entries.append((decl.index, buffer, offset, size))
        self.created["bind_group"] += 1
        return self._create_bind_group(pipeline, entries)

    def compile(self, program: Program) -> Program:
        program.compiled = self._compile(program)
        return program

    # ---- work, at request time ------------------------------------------------------------------
    def write(self, buffer, offset: int, data) -> None:
        raise NotImplementedError

    def submit(self, programs: list[tuple[Program, int]]) -> None:
        """Encode each (program, repeat) in order into one command buffer and submit it."""
        raise NotImplementedError

    def record_ahead(self, programs: list[tuple[Program, int]]) -> Any | None:
        """`programs` encoded now into a command buffer that `submit_recorded` sends later, once; None
        where this door cannot keep one (the engine then submits the programs when it needs them).
        The engine records the first submits of its next take while the GPU finishes this one: they
        hold only prebuilt work, so recording them early changes nothing but when the CPU pays."""
        return None

    def submit_recorded(self, recorded: Any) -> None:
        """Submit what `record_ahead` returned (each at most once)."""
        raise NotImplementedError

    async def read(self, buffer, offset: int, size: int) -> bytes:
        """Bytes of a READBACK buffer once the submitted work that copies into it has finished."""
        raise NotImplementedError

    def note_failure(self, error: BaseException) -> str | None:
        """`lost`, after setting it if `error` (raised by one of this door's calls) says the device is
        gone. Called on the error path only, so that nothing per step pays for loss detection."""
        return self.lost

    # ---- hooks ----------------------------------------------------------------------------------
    def _create_buffer(self, size: int, kind: str, label: str) -> Any:
        raise NotImplementedError

    def _create_pipeline(self, kernel: Kernel) -> Any:
        raise NotImplementedError

    def _create_bind_group(self, pipeline, entries: list[tuple[int, Any, int, int]]) -> Any:
        raise NotImplementedError

    def _compile(self, program: Program) -> Any:
        return program.commands


def run_sync(coroutine):
    """Run a coroutine that never really suspends (the native door's awaits complete at once)."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("a native coroutine suspended; use asyncio to run it")
