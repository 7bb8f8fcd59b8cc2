"""wgsl/weights.wgsl reads every storage kind exactly as build_weights.py wrote it."""

from pathlib import Path

import numpy as np
import pytest

import build_weights
from phonon_web.gpu.shaders import kernel
from phonon_web.weights import KIND_CODES
from tests.gpu_helpers import download, run, uniform, upload, zeros

DEQUANTIZE = str(Path(__file__).parent / "wgsl" / "dequantize.wgsl")


@pytest.mark.parametrize(
    "shape, f32",
    [((96, 200), False), ((300, 64), False), ((7, 5), False), ((33,), False), ((40, 9), True)],
)
def test_weight_at_matches_dequantize(door, shape, f32):
    rng = np.random.default_rng(0)
    values = (rng.standard_normal(shape) * rng.uniform(0.01, 3.0)).astype(np.float32)
    entry, parts = build_weights._encode("t", values, f32)
    lead = b"\0" * 12  # the tensor does not start at word 0 in real blobs
    blob = lead + b"".join(parts)
    entry["offset"] = len(lead)
    if "scales_offset" in entry:
        entry["scales_offset"] += len(lead)
    blob += b"\0" * (-len(blob) % 4)
    expected = build_weights.dequantize(entry, blob).reshape(-1)
    rows = shape[0] if len(shape) > 1 else 1
    cols = int(np.prod(shape)) // rows
    params = uniform(
        door,
        KIND_CODES[entry["kind"]],
        entry["offset"] // 4,
        entry.get("scales_offset", 0) // 4,
        rows,
        cols,
        entry.get("padded_cols", cols),
    )
    out = zeros(door, 4 * expected.size)
    weights = upload(door, np.frombuffer(blob, dtype=np.uint32))
    run(door, kernel("weights.wgsl", DEQUANTIZE), [params, weights, out], (expected.size + 63) // 64)
    np.testing.assert_array_equal(download(door, out, count=expected.size), expected)
