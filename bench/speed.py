"""Speed of the native engine beside the Transformers reference, on the same machine, in one run.

    python bench/speed.py [--weights DIR] [--rounds 3] [--voices Delia] [--reference] [--out FILE.json]

Without --weights it makes the full-size synthetic checkpoint and converts it (random weights: the speed
is the real model's, the sound is not). Reported, each as a median with its 25th-75th percentiles:

* speed: seconds of speech per second of compute, over every phrase of every round (bench/phrases.json:
  the 10 Harvard sentences of list 1 and the first paragraph of the Rainbow Passage);
* first audio: from the call to the first chunk of samples;
* microseconds per step (one frame of the language model, no codec), next to the dispatch floor: the
  step's dispatch count times the cost of an empty dispatch, measured the same way in the same run;
* the CPU time the door spends encoding a step (the Python side of the hot loop);
* with --reference: the Transformers reference (`generate` + the codec's one-shot decode) on the same
  machine (CUDA when there is a GPU for torch, else the CPU), on the same phrases.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

EMPTY_WGSL = ROOT / "bench" / "wgsl" / "empty.wgsl"


def quartiles(values: list[float]) -> dict:
    values = sorted(values)
    if len(values) == 1:
        return {"median": values[0], "p25": values[0], "p75": values[0], "n": 1}
    q = statistics.quantiles(values, n=4, method="inclusive")
    return {"median": statistics.median(values), "p25": q[0], "p75": q[2], "n": len(values)}


def synthetic_model(folder: Path, tiny: bool = False) -> tuple[Path, Path]:
    """(weights folder, checkpoint folder) of the synthetic model under `folder`, made once and made
    again when the checkpoint writer or the converter changes (a stale weights format would not load)."""
    import build_weights
    from tests.reference.checkpoint import write_checkpoint

    sources = (ROOT / "tests" / "reference" / "checkpoint.py", ROOT / "build_weights.py")
    # the size is in the stamp: a folder last made tiny must not pass for the full-size model
    size = b"tiny" if tiny else b"full"
    stamp = hashlib.sha256(b"".join(path.read_bytes() for path in sources) + size).hexdigest()
    stamp_file = folder / "made-by.sha256"
    if not stamp_file.is_file() or stamp_file.read_text() != stamp:
        for made in (folder / "ckpt", folder / "web"):
            shutil.rmtree(made, ignore_errors=True)
        write_checkpoint(folder / "ckpt", tiny=tiny, seed=0)
        build_weights.convert(folder / "ckpt", folder / "web")
        stamp_file.write_text(stamp)
    return folder / "web", folder / "ckpt"


def synthetic_weights(folder: Path) -> Path:
    """The full-size synthetic model's weights folder (see synthetic_model)."""
    return synthetic_model(folder)[0]


def time_steps(engine, steps: int, rounds: int = 5) -> dict:
    """Per-step time of the language model alone, and the dispatch floor (as many empty dispatches),
    measured alike: `rounds` times each, alternated, the median kept.

    Two clocks. GPU: `steps` steps in one compute pass with timestamps at its beginning and end (where
    the adapter has "timestamp-query"), which is the GPU's time alone. Wall: the same steps submitted
    as the engine submits them, from the CPU's call to the GPU's finish, which adds the CPU's
    encoding (the GPU starts once a submit is encoded; in a take, submits overlap the GPU's work on
    the previous one). Each round starts the request again, so every timed step works (none past the
    end), and the first round warms the clocks and is not kept."""
    from bench.measure import GpuClock, pass_gpu_us, start_endless_take
    from phonon_web.gpu.door import Program
    from phonon_web.gpu.shaders import kernel

    door, lm = engine.door, engine.lm
    clock = GpuClock(door, lm.state)
    steps = min(steps, engine.max_frames - 1)
    dispatches = lm.step.dispatch_count
    empty = door.pipeline(kernel(str(EMPTY_WGSL)))
    group = door.bind_group(empty, [door.buffer(16, "storage", "bench empty")])
    floor_program = Program("bench empty step")
    for _ in range(dispatches):
        floor_program.dispatch(empty, group, 1)
    door.compile(floor_program)
    has_timestamps = "timestamp-query" in door.features

    rows = []
    for _ in range(rounds + 1):
        row = {}
        start_endless_take(engine, clock)
        encoded, wall = clock.time([(lm.step, steps)])
        row["step_wall"], row["step_encode"] = wall / steps * 1e6, encoded / steps * 1e6
        row["floor_wall"] = clock.time([(floor_program, steps)])[1] / steps * 1e6
        if has_timestamps:
            start_endless_take(engine, clock)
            row["step_gpu"] = pass_gpu_us(door, [(lm.step, steps)]) / steps
            row["floor_gpu"] = pass_gpu_us(door, [(floor_program, steps)]) / steps
        rows.append(row)
    kept = rows[1:]

    def median(key):
        return statistics.median(r[key] for r in kept)

    result = {
        "steps_timed": steps,
        "rounds": rounds,
        "dispatches_per_step": dispatches,
        "step_us": median("step_wall"),
        "step_encode_us": median("step_encode"),
        "empty_dispatch_us": median("floor_wall") / dispatches,
        "dispatch_floor_us": median("floor_wall"),
        "step_over_floor": median("step_wall") / median("floor_wall"),
    }
    if has_timestamps:
        result |= {
            "step_gpu_us": median("step_gpu"),
            "empty_dispatch_gpu_us": median("floor_gpu") / dispatches,
            "dispatch_floor_gpu_us": median("floor_gpu"),
            "step_over_floor_gpu": median("step_gpu") / median("floor_gpu"),
        }
    result["rounds_us"] = [{k: round(v, 2) for k, v in r.items()} for r in rows]
    return result


def run_engine(
    weights: Path,
    phrases: list[str],
    voices: list[str] | None,
    rounds: int,
    eos: float | None,
    max_frames: int | None = None,
    probe_steps: int = 200,
    chunk_frames: int | None = None,
    ramp_always: bool = False,
    warm_up_s: float = 1.0,
) -> dict:
    """`max_frames` caps every take (slow adapters); `probe_steps` is the length of the step timing;
    `chunk_frames` the engine's codec chunk after the first ones (None: its default); `ramp_always`
    keeps the ramp of first chunks on every take (Engine(skip_ramp_above=None)); `warm_up_s`: untimed
    takes first, until that long has passed (at least one). A GPU that has been idle runs its first
    takes at low clocks: on a lent H200 after a short warm-up of one take, the next four ran at 105,
    104, 147 and 239x against about 300x for the rest (bench/results/h200-speed-2026-12-01-0179cc5.json,
    round 0)."""
    import phonon_web
    from phonon_web.gpu.door import run_sync

    load_start = time.perf_counter()
    options = {} if chunk_frames is None else {"chunk_frames": chunk_frames}
    if ramp_always:
        options["skip_ramp_above"] = None
    tts = phonon_web.load(weights, voices=voices, **options)
    load_seconds = time.perf_counter() - load_start
    engine = tts.engine
    voices = list(tts.voices)

    def speak(text, voice, seed):
        return run_sync(engine.speak(text, voice=voice, seed=seed, eos_threshold=eos, max_frames=max_frames))

    warm_began, warm_takes = time.perf_counter(), 0
    while warm_takes == 0 or time.perf_counter() - warm_began < warm_up_s:
        speak(phrases[warm_takes % len(phrases)], voices[0], 12345)
        warm_takes += 1
    warm_up = {"seconds": time.perf_counter() - warm_began, "takes": warm_takes}
    runs = []
    for round_index in range(rounds):
        for voice in voices:
            for number, text in enumerate(phrases):
                speech = speak(text, voice, round_index)
                runs.append(
                    {
                        "round": round_index,
                        "voice": voice,
                        "phrase": number,
                        "chars": len(text),
                        "tokens": sum(len(t.ids) for t in engine.prepare(text)),
                        "frames": speech.frames,
                        "speech_s": speech.duration,
                        "compute_s": speech.compute_seconds,
                        "first_audio_s": speech.first_audio_seconds,
                        "speed_x": speech.real_time_factor,
                    }
                )
    door = engine.door
    return {
        "adapter": getattr(door, "description", door.name),
        "load_s": load_seconds,
        "warm_up": warm_up,
        "speed_x": quartiles([r["speed_x"] for r in runs]),
        "speed_total_x": sum(r["speech_s"] for r in runs) / sum(r["compute_s"] for r in runs),
        "first_audio_ms": quartiles([1000 * r["first_audio_s"] for r in runs]),
        "step": time_steps(engine, probe_steps),
        "gpu_objects": dict(door.created),
        "runs": runs,
    }


def run_reference(
    weights_source: Path | None,
    phrases: list[str],
    rounds: int,
    tokenizer_json: str,
    eos: float | None,
    max_frames: int | None = None,
) -> dict:
    """Transformers' generate() + the codec's one-shot decode, as the reference runs a text
    (`max_frames` lowers its frame budget as the engine's cap does)."""
    import torch

    from phonon_web.tokenizer import Tokenizer
    from tests.reference.checkpoint import load_reference

    device = "cuda" if torch.cuda.is_available() else "cpu"
    ref = load_reference(weights_source)
    lm, codec = ref.lm.to(device), ref.codec.to(device)
    voice = next(iter(ref.voices.values())).to(device)
    tokenizer = Tokenizer.from_str(tokenizer_json)
    cfg = lm.config

    def speak(text: str, seed: int) -> tuple[float, float]:
        ids = tokenizer.encode(text)
        prompt = [cfg.audio_prompt_token_id] * voice.shape[0] + ids + [cfg.audio_bos_token_id]
        budget = {}
        if max_frames is not None:  # generate()'s own budget is ceil((tokens / 3 + 2) * frame rate)
            budget["max_new_tokens"] = min(max_frames, math.ceil((len(ids) / 3 + 2) * cfg.frame_rate))
        torch.manual_seed(seed)
        if device == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        with torch.no_grad():
            out = lm.generate(
                input_ids=torch.tensor([prompt], device=device),
                audio_prompt_latents=voice[None],
                frames_after_eos=1 if len(text.split()) > 4 else 3,
                do_sample=True,
                temperature=0.3,
                return_dict_in_generate=True,
                **({} if eos is None else {"eos_threshold": eos}),
                **budget,
            )
            latents = out.audio_latents[0][out.audio_latents_mask[0].bool()]
            audio = codec.decode(latents[None]).audio_values
        if device == "cuda":
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
        return audio.shape[-1] / 24000, elapsed

    speak(phrases[0], 1)  # warm-up
    runs = []
    for round_index in range(rounds):
        for number, text in enumerate(phrases):
            seconds, elapsed = speak(text, round_index)
            runs.append(
                {
                    "round": round_index,
                    "phrase": number,
                    "chars": len(text),
                    "speech_s": seconds,
                    "compute_s": elapsed,
                }
            )
    return {
        "device": torch.cuda.get_device_name()
        if device == "cuda"
        else f"CPU ({torch.get_num_threads()} threads)",
        "torch": torch.__version__,
        "speed_x": quartiles([r["speech_s"] / r["compute_s"] for r in runs]),
        "speed_total_x": sum(r["speech_s"] for r in runs) / sum(r["compute_s"] for r in runs),
        "runs": runs,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--weights", type=Path, help="folder from build_weights.py (default: synthetic)")
    parser.add_argument(
        "--checkpoint", type=Path, help="checkpoint folder for --reference (default: synthetic)"
    )
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "bench")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--voices", nargs="*", default=None)
    parser.add_argument("--phrases", type=int, default=None, help="only the first N phrases")
    parser.add_argument("--reference", action="store_true", help="also time the Transformers reference")
    parser.add_argument("--reference-rounds", type=int, default=1)
    parser.add_argument("--max-frames", type=int, default=None, help="cap every take (slow adapters)")
    parser.add_argument(
        "--chunk-frames", type=int, default=None, help="codec chunk after the first ones (A/B runs)"
    )
    parser.add_argument(
        "--ramp-always", action="store_true", help="every take starts with the ramp of chunks (A/B runs)"
    )
    parser.add_argument(
        "--model-eos",
        action="store_true",
        help="end takes where the model says (default without --weights: every take runs to its frame "
        "budget, since a random model's end of speech means nothing)",
    )
    parser.add_argument(
        "--warm-up", type=float, default=1.0, help="seconds of untimed takes before the timed ones"
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    phrases = json.loads((ROOT / "bench" / "phrases.json").read_text())["phrases"][: args.phrases]
    weights = args.weights or synthetic_weights(args.work)
    eos = None if (args.model_eos or args.weights) else float("inf")
    result = {
        "machine": {
            "platform": platform.platform(),
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
        },
        "weights": str(weights),
        "phrases": len(phrases),
        "frames": "the model's end of speech" if eos is None else "every take runs to its budget",
        "max_frames": args.max_frames,
        "chunk_frames": args.chunk_frames,
        "ramp_always": args.ramp_always,
        "engine": run_engine(
            weights,
            phrases,
            args.voices,
            args.rounds,
            eos,
            args.max_frames,
            chunk_frames=args.chunk_frames,
            ramp_always=args.ramp_always,
            warm_up_s=args.warm_up,
        ),
    }
    if args.reference:
        checkpoint = args.checkpoint or args.work / "ckpt"
        tokenizer_json = (Path(weights) / "tokenizer.json").read_text(encoding="utf-8")
        result["reference"] = run_reference(
            checkpoint, phrases, args.reference_rounds, tokenizer_json, eos, args.max_frames
        )
        result["engine_over_reference"] = (
            result["engine"]["speed_total_x"] / result["reference"]["speed_total_x"]
        )
    summary = {k: v for k, v in result["engine"].items() if k != "runs"}
    print(json.dumps(summary, indent=1))
    if "reference" in result:
        print(json.dumps({k: v for k, v in result["reference"].items() if k != "runs"}, indent=1))
        print(f"engine / reference speed: {result['engine_over_reference']:.1f}x")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
