"""The command line: `python -m phonon_web speak "text" --weights DIR -o out.wav --words out.json`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .errors import PhononError


def _progress(done: int, total: int) -> None:
    width = 30
    filled = width * done // max(total, 1)
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] part {done}/{total}")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m phonon_web", description="Phonon 31M text-to-speech")
    commands = parser.add_subparsers(dest="command", required=True)
    speak = commands.add_parser("speak", help="speak a text into a WAV file, with word times")
    speak.add_argument("text", help="the text, or - to read it from standard input")
    speak.add_argument("--weights", required=True, help="folder written by build_weights.py")
    speak.add_argument("--voice", default=None, help="voice name (default: the first one)")
    speak.add_argument("--speed", type=float, default=1.0, help="0.77 (slow) to 1.3 (fast); default 1")
    speak.add_argument("--seed", type=int, default=0)
    speak.add_argument("-o", "--output", default="speech.wav", help="WAV file to write")
    speak.add_argument("--words", default=None, help="JSON file for the word and token times")
    speak.add_argument(
        "--no-normalize", action="store_true", help="read numbers and symbols as written, not as words"
    )
    args = parser.parse_args(argv)

    from .api import load
    from .speech import wav_bytes

    text = sys.stdin.read() if args.text == "-" else args.text
    try:
        tts = load(args.weights, voices=[args.voice] if args.voice else None)
        parts = len(tts.engine.prepare(text, normalize=not args.no_normalize))
        speech = tts.speak(
            text,
            voice=args.voice,
            speed=args.speed,
            seed=args.seed,
            on_progress=_progress if parts > 1 else None,
            normalize=not args.no_normalize,
        )
    except PhononError as error:
        print(f"phonon_web: {error}", file=sys.stderr)
        return 2
    Path(args.output).write_bytes(wav_bytes(speech.audio, speech.sample_rate))
    if args.words:
        Path(args.words).write_text(speech.timings_json(), encoding="utf-8")
    first_ms = 1000 * (speech.first_audio_seconds or 0.0)
    print(
        f"{args.output}: {speech.duration:.2f} s of speech, {len(speech.words)} words, "
        f"{speech.real_time_factor:.1f}x real time, first audio after {first_ms:.0f} ms",
        file=sys.stderr,
    )
    return 0
