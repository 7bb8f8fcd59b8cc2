"""GPU time of the codec's chunks, each as a whole compute pass, for several ways of scheduling its
split-K GEMMs; and whether every way and every chunk schedule gives the same samples, bit for bit.

    python bench/codec_costs.py [--weights DIR] [--chunks 1 16] [--loop-tiles 128 never] [--repeat 15]
                                [--rounds 2] [--out FILE.json]

--loop-tiles lists Codec's split_loop_tiles values to compare ("never": split workgroups and a
reduction always). Each codec decodes the frames one engine made (birch canoe, first voice); a chunk's
time is the median of --repeat passes with timestamps at the pass's two ends only (bench.measure's
pass_gpu_us: nothing added between dispatches), taken in --rounds rounds that alternate the variants,
after a fifth of a second of codec work to bring the clocks up. The H200 runs that chose the default
(128) are in bench/results/h200-ab-codec-raw-loads-2026-12-01.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

NEVER = 1 << 30  # split_loop_tiles that no chunk reaches


def loop_tiles(word: str) -> int:
    return NEVER if word == "never" else int(word)


def codec_variants(engine, chunks: tuple[int, ...], tiles: dict[str, int]) -> dict:
    """A Codec per split_loop_tiles value, each reading the engine's latents and state."""
    from phonon_web.codec import Codec
    from phonon_web.lm import STATE

    lm = engine.lm
    return {
        name: Codec(
            engine.door,
            engine.weights,
            engine.manifest.config,
            max_frames=engine.max_frames,
            chunk_sizes=chunks,
            latents=lm.latents,
            state=lm.state,
            frame_word=STATE["codec"],
            available_word=STATE["frames"],
            split_loop_tiles=value,
        )
        for name, value in tiles.items()
    }


def make_frames(engine, frames: int) -> None:
    """`frames` latent frames from the engine's language model, left in its buffers."""
    lm = engine.lm
    ids = engine.tokenizer.encode("The birch canoe slid on the smooth planks.")
    lm.write_request(ids, eos_threshold=float("inf"), budget=min(frames, engine.max_frames))
    engine.door.submit([(lm.start(engine.voices[0]), 1), (lm.step, frames)])


def same_samples(engine, codecs: dict, chunks: tuple[int, ...]) -> dict[str, bool]:
    """For every variant, a take decoded in each chunk size alone and in all of them in turn: are the
    samples those of the first variant's first schedule, bit for bit?"""
    from tests.gpu_helpers import download

    frames = max(chunks) * 2
    schedules = [[size] * (frames // size) for size in chunks]
    mixed, left = [], frames
    for size in sorted(chunks):
        if size <= left:
            mixed.append(size)
            left -= size
    schedules.append(mixed + [min(chunks)] * (left // min(chunks)))
    out, want = {}, None
    for name, codec in codecs.items():
        for schedule in schedules:
            engine.door.submit([(codec.reset, 1)] + [(codec.chunk[f], 1) for f in schedule])
            count = sum(schedule) * codec.samples_per_frame
            audio = download(engine.door, codec.audio, count=count).tobytes()
            want = audio if want is None else want
            out[f"{name} {schedule}"] = audio == want[: len(audio)]
    return out


def measure(engine, codecs: dict, chunks: tuple[int, ...], repeat: int, rounds: int) -> dict:
    """{variant: {chunk: [median us of each round]}}."""
    from bench.measure import pass_gpu_us

    door = engine.door
    warm = next(iter(codecs.values()))
    start = time.perf_counter()
    while time.perf_counter() - start < 0.2:  # clocks up
        door.submit([(warm.reset, 1), (warm.chunk[max(chunks)], 1)])
        pass_gpu_us(door, [(warm.chunk[max(chunks)], 1)])
    out = {name: {frames: [] for frames in chunks} for name in codecs}
    for _ in range(rounds):
        for name, codec in codecs.items():
            for frames in chunks:
                times = []
                for _ in range(repeat):
                    door.submit([(codec.reset, 1)])
                    times.append(pass_gpu_us(door, [(codec.chunk[frames], 1)]))
                out[name][frames].append(round(statistics.median(times), 1))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--weights", type=Path, help="build_weights.py output (default: synthetic)")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "bench")
    parser.add_argument("--chunks", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--loop-tiles", nargs="+", default=["128", "never"])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    import phonon_web
    from bench.speed import synthetic_weights

    weights = args.weights or synthetic_weights(args.work)
    tts = phonon_web.load(weights)
    engine = tts.engine
    if "timestamp-query" not in engine.door.features:
        print("this adapter has no timestamp-query feature", file=sys.stderr)
        return 2
    chunks = tuple(sorted(set(args.chunks)))
    codecs = codec_variants(engine, chunks, {word: loop_tiles(word) for word in args.loop_tiles})
    make_frames(engine, 2 * max(chunks))
    result = {
        "adapter": engine.door.description,
        "weights": str(weights),
        "dispatches": {name: codec.dispatches for name, codec in codecs.items()},
        "pass_us": measure(engine, codecs, chunks, args.repeat, args.rounds),
        "same_samples": same_samples(engine, codecs, chunks),
    }
    print(json.dumps(result, indent=1))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0 if all(result["same_samples"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
