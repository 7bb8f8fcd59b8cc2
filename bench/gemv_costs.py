"""Where a step's matrix-vector product spends its time: the GEMV kernel in chains of 46 dispatches,
whole and with one part taken out at a time (an ablation; the results are wrong on purpose).

    python bench/gemv_costs.py [--out FILE.json]

Shapes: the step's QKV (512 -> 1536, LayerNorm prologue), fc1 (512 -> 2048, LayerNorm, GELU), fc2
(2048 -> 512, residual) and a one-workgroup product (8 rows). Variants of wgsl/gemv.wgsl are written
under build/wgsl_variants/ and put first on the shader path, each on a device of its own.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GEMV = ROOT / "wgsl" / "gemv.wgsl"
CUTS = {
    "whole": [],
    "no gate": [("if (skip_workgroup(params.gate, ids.lid)) { return; }", "")],
    "no prologue": [("    prologue(ids, inputs, merge, group == 0u);\n", "")],
    "no weight rows": [
        ("let share = load_row_share(row, lane);", "var share: RowShare;"),
        ("acc = row_dot(row, lane);", "acc = xs[lane % (KP / 4u)].x;"),
    ],
    "no epilogue": [
        ("let tail = load_tail(group, ids.lid);", "var tail: Tail;"),
        (
            "if (r < params.rows) { epilogue(r, totals[ids.lid], tail); }",
            "if (r == 0xffffffffu) { epilogue(r, 0.0, tail); }",
        ),
    ],
}


def measure(folder: Path | None) -> tuple[dict, dict]:
    """Microseconds a dispatch of each shape, on the wall clock and (where the adapter has timestamps;
    else empty) on the GPU's, as bench/dispatch_costs.py measures them."""
    import build_weights as bw
    from bench.dispatch_costs import CHAIN, per_dispatch_gpu_us, per_dispatch_us
    from bench.measure import GpuClock, use_wgsl_folder
    from phonon_web import lm_ops as ops
    from phonon_web.gpu.door import STORAGE, Program
    from phonon_web.gpu.native import NativeDoor
    from phonon_web.lm import STATE
    from phonon_web.weights import TensorRef

    use_wgsl_folder(folder)
    door = NativeDoor()
    rng = np.random.default_rng(0)
    blob, refs, offset = bytearray(), {}, 0
    for name, rows, cols in (("qkv", 1536, 512), ("fc1", 2048, 512), ("fc2", 512, 2048), ("small", 8, 512)):
        q, scales = bw.quantize_q8(rng.standard_normal((rows, cols)).astype(np.float32) * 0.05)
        data = q.tobytes()
        scales_at = offset + len(data)
        blob += data + scales.astype("<f2").tobytes()
        blob += bytes(-len(blob) % 16)
        refs[name] = TensorRef(
            name, "flow_lm.", "q8", (rows, cols), rows, cols, q.shape[1], offset // 4, scales_at // 4
        )
        offset = len(blob)
    weights = door.buffer(len(blob), STORAGE, "weights")
    door.write(weights, 0, bytes(blob))
    kern = ops.LmKernels(door, weights)

    def vec(n):
        b = door.buffer(4 * n, STORAGE, "vec")
        door.write(b, 0, rng.standard_normal(n).astype(np.float32).tobytes())
        return b

    state = door.buffer(64, STORAGE, "state")
    words = np.zeros(16, np.uint32)
    words[STATE["frames"]], words[STATE["budget"]] = 1, 100
    door.write(state, 0, words.tobytes())
    src, dst = vec(2048), vec(2048)
    clock = GpuClock(door, state)
    shapes = {
        "qkv 512->1536, LayerNorm": dict(w="qkv", prologue=ops.P_LAYERNORM, epilogue=ops.E_STORE),
        "fc1 512->2048, LayerNorm, GELU": dict(w="fc1", prologue=ops.P_LAYERNORM, epilogue=ops.E_GELU),
        "fc2 2048->512, residual": dict(w="fc2", prologue=ops.P_LOAD, epilogue=ops.E_RESIDUAL),
        "8 rows 512": dict(w="small", prologue=ops.P_LOAD, epilogue=ops.E_STORE),
    }
    out, gpu = {}, {}
    for label, shape in shapes.items():
        program = Program(label)
        for _ in range(CHAIN):
            kern.gemv(
                program,
                [ops.Segment(refs[shape["w"]])],
                prologue=shape["prologue"],
                epilogue=shape["epilogue"],
                state=state,
                src=src,
                dst=dst,
                gate=ops.GATE_STEP,
            )
        door.compile(program)
        out[label] = round(per_dispatch_us(clock, program), 2)
        if "timestamp-query" in door.features:
            gpu[label] = round(per_dispatch_gpu_us(door, program), 2)
    door.destroy_device()
    return out, gpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    from bench.dispatch_costs import CHAIN, REPEAT
    from bench.measure import wgsl_variant

    report = {"chain": CHAIN, "repeat": REPEAT, "us_per_dispatch": {}, "gpu_us_per_dispatch": {}}
    for name, cuts in CUTS.items():
        wall, gpu = measure(wgsl_variant(GEMV, name, cuts))
        report["us_per_dispatch"][name], report["gpu_us_per_dispatch"][name] = wall, gpu
        print(name, "wall", wall, "GPU", gpu, flush=True)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
