"""Whole takes of the engine against the Transformers reference fed the engine's own noise.

    python bench/parity.py [--checkpoint DIR] [--voices 3] [--phrases N] [--out FILE.json]

For every benchmark phrase (bench/phrases.json) in every voice, the engine (int8 weights, f16 keys
and values) speaks with a seed; the reference runs the same take with the engine's noise
(tests/reference/lm_loop.py) and decodes it with its own codec. Reported per take and in total: whether
both kept the same number of frames, the mean log-mel distance (dB) and the waveform correlation; and,
as the scale to read them against, the same figures for the reference against itself with another
seed. Without --checkpoint it uses the full-size synthetic checkpoint (random weights).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", type=Path, help="checkpoint folder (default: full-size synthetic)")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "parity")
    parser.add_argument("--voices", type=int, default=3)
    parser.add_argument("--phrases", type=int, default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    import build_weights
    from bench.speed import synthetic_model
    from phonon_web.engine import Engine
    from phonon_web.files import ModelFiles
    from phonon_web.gpu.door import run_sync
    from phonon_web.gpu.native import NativeDoor
    from tests.reference.audio_metrics import compare
    from tests.reference.checkpoint import load_reference
    from tests.reference.takes import reference_take

    if args.checkpoint is None:
        web, checkpoint = synthetic_model(args.work)
    else:  # someone else's checkpoint: converted afresh, it may have changed since the last run
        checkpoint, web = args.checkpoint, args.work / "web"
        build_weights.convert(checkpoint, web)
    phrases = json.loads((ROOT / "bench" / "phrases.json").read_text())["phrases"][: args.phrases]

    files = ModelFiles.from_folder(web)
    door = NativeDoor()
    engine = Engine(door, files)
    ref = load_reference(checkpoint)

    rows = []
    started = time.perf_counter()
    for voice in engine.voices[: args.voices]:
        for number, text in enumerate(phrases):
            (take,) = engine.prepare(text)  # every benchmark phrase is one part
            speech = run_sync(engine.speak(text, voice=voice, seed=args.seed))
            audio = np.frombuffer(speech.audio.tobytes(), dtype=np.float32)
            ref_frames, ref_audio = reference_take(ref, engine, voice, take.ids, take.words, args.seed)
            other_frames, other_audio = reference_take(
                ref, engine, voice, take.ids, take.words, args.seed + 1000
            )
            row = {
                "voice": voice,
                "phrase": number,
                "engine_frames": speech.frames,
                "reference_frames": ref_frames,
                "same_frames": speech.frames == ref_frames,
                "engine_vs_reference": compare(audio, ref_audio),
                "other_seed_frames": other_frames,
                "other_seed_same_frames": other_frames == ref_frames,
                "other_seed_vs_reference": compare(other_audio, ref_audio),
            }
            rows.append(row)
            print(
                f"{voice:>8} #{number:<2} frames {speech.frames:4d} / ref {ref_frames:4d} "
                f"| log-mel {row['engine_vs_reference']['log_mel_db']:6.2f} dB "
                f"corr {row['engine_vs_reference']['correlation']:.3f} "
                f"| other seed {row['other_seed_vs_reference']['log_mel_db']:6.2f} dB "
                f"corr {row['other_seed_vs_reference']['correlation']:.3f} frames {other_frames}",
                flush=True,
            )

    def mean(key, field):
        return float(np.mean([r[key][field] for r in rows]))

    summary = {
        "takes": len(rows),
        "same_frames": sum(r["same_frames"] for r in rows),
        "log_mel_db": mean("engine_vs_reference", "log_mel_db"),
        "correlation": mean("engine_vs_reference", "correlation"),
        "other_seed_same_frames": sum(r["other_seed_same_frames"] for r in rows),
        "other_seed_log_mel_db": mean("other_seed_vs_reference", "log_mel_db"),
        "other_seed_correlation": mean("other_seed_vs_reference", "correlation"),
        "adapter": door.description,
        "seconds": time.perf_counter() - started,
    }
    print(json.dumps(summary, indent=1))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"summary": summary, "takes": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
