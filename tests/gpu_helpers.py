"""Helpers for kernel tests on the native door: numpy in, numpy out."""

from __future__ import annotations

import numpy as np

from phonon_web.gpu.door import READBACK, STORAGE, UNIFORM, Program, run_sync
from phonon_web.gpu.params import pack_params


def upload(door, array, label="test") -> object:
    data = np.ascontiguousarray(array)
    buffer = door.buffer(max(4, data.nbytes), STORAGE, label)
    if data.nbytes:
        door.write(buffer, 0, data.tobytes())
    return buffer


def zeros(door, nbytes: int, label="test") -> object:
    buffer = door.buffer(nbytes, STORAGE, label)
    door.write(buffer, 0, bytes(buffer.size))
    return buffer


def uniform(door, *values) -> object:
    data = pack_params(*values)
    buffer = door.buffer(len(data), UNIFORM, "params")
    door.write(buffer, 0, data)
    return buffer


def download(door, buffer, dtype=np.float32, count: int | None = None, offset: int = 0) -> np.ndarray:
    itemsize = np.dtype(dtype).itemsize
    size = (count * itemsize) if count is not None else buffer.size - offset
    staging = door.buffer(size, READBACK, "readback")
    program = Program("download")
    program.copy(buffer, offset, staging, 0, size)
    door.submit([(program, 1)])
    return np.frombuffer(run_sync(door.read(staging, 0, size)), dtype=dtype).copy()


def run(door, kernel, buffers, workgroups) -> None:
    """Build a pipeline and bind group for `kernel`, dispatch it once and wait."""
    pipeline = door.pipeline(kernel)
    group = door.bind_group(pipeline, buffers)
    program = Program(kernel.label)
    x, y, z = (tuple(workgroups) + (1, 1))[:3] if isinstance(workgroups, tuple) else (workgroups, 1, 1)
    program.dispatch(pipeline, group, x, y, z)
    door.submit([(program, 1)])
