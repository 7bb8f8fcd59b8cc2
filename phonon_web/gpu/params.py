"""Packing a kernel's parameters into the bytes of its uniform buffer.

Every kernel's `Params` struct is a flat list of 4-byte scalars (u32, i32 or f32) in declaration
order, so packing needs no layout rules beyond the 16-byte size multiple that uniforms require.
"""

from __future__ import annotations

import struct


def pack_params(*values: int | float | bool) -> bytes:
    """u32 for non-negative ints and bools, i32 for negative ints, f32 for floats; padded to 16 bytes."""
    fmt = "<"
    for value in values:
        if isinstance(value, bool) or (isinstance(value, int) and value >= 0):
            fmt += "I"
        elif isinstance(value, int):
            fmt += "i"
        elif isinstance(value, float):
            fmt += "f"
        else:
            raise TypeError(f"kernel parameters are ints or floats, not {type(value).__name__}")
    data = struct.pack(fmt, *values)
    padding = -len(data) % 16 if data else 16  # a uniform binding cannot be empty
    return data + b"\0" * padding
