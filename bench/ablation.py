"""What bounds the codec's GEMMs and the step's kernels: a codec chunk of 16 frames (--frames), or 16
steps, with a shader whole and with one part taken out at a time (an ablation; the results are wrong on
purpose).

    python bench/ablation.py [codec] [step] [attention] [feed-forward] [--weights DIR] [--repeat 5]
                             [--frames 16]
                             [--from-frame 1 ...] [--out FILE.json]

codec (wgsl/codec_gemm.wgsl): the products (the inner loop's fused multiply-adds and its
workgroup-memory reads), the loads of the K steps after the first (each step reuses the first one's
words), the LayerNorm statistics, and products and later loads together (what is left: the first
loads, the barriers, the stores into workgroup memory and the epilogue).
step (wgsl/lm_state.wgsl): the gate every step kernel passes first (thread 0 reads the state, the
workgroup waits for it at a barrier); without it the kernels never return early.
attention (wgsl/attention_step.wgsl, timed as the step): without the attention over the cached keys
(the q projection is made, no part is written), without the first turn's keys and values loaded before
the first wait, without the q/k/v projection, without the LayerNorm.
feed-forward (wgsl/gemv.wgsl, timed as the step): the fused feed-forward blocks without their share of
fc2, and with it but without adding it to the sums (the atomics).

Each variant gets a device and engine of its own, warms the GPU up for a second (a fifth of one left a
fresh H200 at low clocks for the first variant: 860 us a step against 198), then times the work as a
whole pass (bench.measure's pass_gpu_us) and each of its dispatches (gpu_profile's one-pass profile;
the median of --repeat, for the step also over its 16 steps).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WGSL = ROOT / "wgsl"
NO_PRODUCTS = ("for (var kk = 0u; kk < 8u; kk++) {", "for (var kk = 0u; kk < 0u; kk++) {")
NO_LATER_LOADS = ("if (k1 < kend) {\n            a_next0", "if (k1 < 0u) {\n            a_next0")
NO_STATISTICS = ("if (LN) {\n        let pair", "if (false) {\n        let pair")
# group: (what is timed, the file cut, {variant: [(old, new), ...]})
ABLATIONS = {
    "codec": (
        "codec",
        WGSL / "codec_gemm.wgsl",
        {
            "whole": [],
            "no products": [NO_PRODUCTS],
            "no later loads": [NO_LATER_LOADS],
            "no LayerNorm statistics": [NO_STATISTICS],
            "no products, no later loads": [NO_PRODUCTS, NO_LATER_LOADS],
        },
    ),
    "step": (
        "step",
        WGSL / "lm_state.wgsl",
        {
            "whole": [],
            "no gate": [("    return workgroupUniformLoad(&gate_flag) != 0u;", "    return false;")],
        },
    ),
    "attention": (
        "step",
        WGSL / "attention_step.wgsl",
        {
            "no attention over the cache": [("    attend(ids, head, role_u, pos, first);", "")],
            "no first turn loaded early": [
                ("if (!EARLY_TURN || split >= OLD_SPLITS) { return t; }", "return t;")
            ],
            "no projection": [
                ("    project(a0, role, head, 0u, ids);", ""),
                ("    if (PASSES > 1u) { project(a1, role, head, 1u, ids); }", ""),
            ],
            "no LayerNorm": [("    normed_into_xs(ids, inputs);", "")],
        },
    ),
    "feed-forward": (
        "step",
        WGSL / "gemv.wgsl",
        {
            "no fc2 share": [("        add_down_shares(group, ids.lid, down);", "")],
            "no atomic sums": [
                (
                    "        let share = sum_share(v);",
                    "        let share = sum_share(v);\n        if (v != 1.25e-38) { continue; }",
                )
            ],
        },
    ),
}
STEPS = 16  # the steps timed in one pass


def work(engine, what: str, first_frame: int = 1, frames: int = 16):
    """The Program timed, how many times a pass runs it, and what makes each pass start alike: a
    codec chunk from a reset codec; 16 steps from frame `first_frame` (at least 1) of a take that
    never ends early (the state would otherwise run on past the take's budget, where steps return at
    once)."""
    from bench.measure import PROBE_TEXT

    door = engine.door
    if what == "codec":
        codec = engine.codec
        return codec.chunk[frames], 1, lambda: door.submit([(codec.reset, 1)])
    lm = engine.lm
    ids = engine.tokenizer.encode(PROBE_TEXT)

    def restart():
        lm.write_request(ids, eos_threshold=1e30, budget=engine.max_frames)
        # frame 0 too: its backbone is skipped (its hidden state comes from the prefill), where a
        # variant without the gate would run it
        door.submit([(lm.start(engine.voices[0]), 1), (lm.step, first_frame)])

    return lm.step, STEPS, restart


def measure(
    weights: Path, what: str, folder: Path | None, repeat: int, first_frame: int = 1, frames: int = 16
) -> dict:
    import phonon_web
    from bench.codec_costs import make_frames
    from bench.gpu_profile import INSIDE_PASSES, profile_in_one_pass
    from bench.measure import pass_gpu_us, use_wgsl_folder
    from phonon_web.gpu.native import NativeDoor

    use_wgsl_folder(folder)
    engine = phonon_web.load(weights, door=NativeDoor(extra_features=(INSIDE_PASSES,))).engine
    door = engine.door
    if what == "codec":
        make_frames(engine, 2 * frames)
    program, times, before = work(engine, what, first_frame, frames)
    start = time.perf_counter()
    while time.perf_counter() - start < 1.0:  # clocks up
        before()
        pass_gpu_us(door, [(program, times)])
    whole, runs = [], []
    for _ in range(repeat):
        before()
        whole.append(pass_gpu_us(door, [(program, times)]))
        before()
        runs.append(profile_in_one_pass(door, [(program, times)]))
    n = program.dispatch_count
    each = {
        f"{i:02d} {runs[0][i][0]}": round(
            statistics.median(run[t * n + i][1] for run in runs for t in range(times)), 2
        )
        for i in range(n)
    }
    door.destroy_device()
    return {"pass_us": round(statistics.median(whole), 1), "each_us": each}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", nargs="*", choices=sorted(ABLATIONS), help="default: all")
    parser.add_argument("--weights", type=Path, help="build_weights.py output (default: synthetic)")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "bench")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--frames", type=int, default=16, help="codec: the chunk's frames (a chunk size)")
    parser.add_argument(
        "--from-frame",
        type=int,
        nargs="+",
        default=[1],
        help="step: time the 16 steps from each of these frames (the attention's keys grow with them)",
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    from bench.measure import emit, wgsl_variant
    from bench.speed import synthetic_weights

    weights = args.weights or synthetic_weights(args.work)
    report = {"codec_frames": args.frames, "steps": STEPS}
    for what in args.what or sorted(ABLATIONS):
        timed, wgsl, cuts = ABLATIONS[what]
        report[what] = {}
        for name, change in cuts.items():
            for frame in args.from_frame if timed == "step" else [1]:
                folder = wgsl_variant(wgsl, name, change)
                result = measure(weights, timed, folder, args.repeat, frame, args.frames)
                label = name if frame == 1 else f"{name}, from frame {frame}"
                report[what][label] = result
                print(what, label, result["pass_us"], "us a pass", file=sys.stderr, flush=True)
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
