"""The whole benchmark in one command: browser rounds, the native engine and the Transformers reference
on the same texts and machine, the quality check, then the figures and the table.

    python -m bench.run [--machine NAME] [--model tiny|full] [--native-model tiny|full] [--rounds 3]
                        [--adapter lavapipe|swiftshader|default] [--phrases all|0,1,10]
                        [--max-frames 16] [--no-browser] [--readme]

Writes bench/results/<machine>-bench-<date>.json (a second run on the same day replaces it), then
bench/figures/*.png and bench/figures/table.md from every results file (--readme also refreshes the
README's table). The defaults finish in well under 15 minutes on a 2-core machine without a GPU: the
browser's WebGPU there is Mesa's lavapipe through ANGLE (`--adapter swiftshader` for Chromium's own
SwiftShader, several times slower), the tiny synthetic model on all three sides, a 16-frame cap, the
11 texts, 3 rounds. On a machine with a GPU, ask for more: `--adapter default --model full
--max-frames 0 --rounds 10 --machine h200`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import browser as browser_bench  # noqa: E402
from bench import plots, quality, speed, table  # noqa: E402

PHRASES = json.loads((ROOT / "bench" / "phrases.json").read_text(encoding="utf-8"))["phrases"]
EVERY_TAKE_TO_ITS_BUDGET = float("inf")  # the synthetic model's end of speech means nothing


def source_commit() -> str | None:
    """The commit measured, when this is a git checkout (uncommitted changes are not in it)."""
    import subprocess

    try:
        out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    except OSError:
        return None
    return out.stdout.strip() or None


def default_machine(adapter: str) -> str:
    """'2core-lavapipe': this kind of machine has no GPU, so the browser's adapter tells runs apart."""
    return f"{os.cpu_count()}core-{adapter}" if adapter != "default" else f"{os.cpu_count()}core"


STARTED = time.perf_counter()


def log(text: str) -> None:
    print(f"[{time.perf_counter() - STARTED:5.0f} s] {text}", flush=True)


def native_and_reference(args, indices: list[int]) -> dict:
    """bench/speed.py's engine and reference runs on the chosen texts, with the browser's frame cap."""
    weights, checkpoint = browser_bench.model_weights(args.native_model, args.work)
    texts = [PHRASES[i] for i in indices]
    cap = args.max_frames or None
    log(f"native engine: synthetic {args.native_model} model, {len(texts)} texts x {args.rounds} rounds")
    engine = speed.run_engine(weights, texts, ["Delia"], args.rounds, EVERY_TAKE_TO_ITS_BUDGET, cap, 20)
    log(f"native engine: {engine['speed_x']['median']:.3g}x on {engine['adapter']}")
    tokenizer_json = (weights / "tokenizer.json").read_text(encoding="utf-8")
    log("Transformers reference on the same texts")
    reference = speed.run_reference(
        checkpoint, texts, args.rounds, tokenizer_json, EVERY_TAKE_TO_ITS_BUDGET, cap
    )
    log(f"reference: {reference['speed_x']['median']:.3g}x on {reference['device']}")
    for section in (engine, reference):
        section["model"] = args.native_model
        section["max_frames"] = cap
        for run in section["runs"]:
            run["phrase"] = indices[run["phrase"]]  # positions in the subset -> indices in phrases.json
    return {
        "engine": engine,
        "reference": reference,
        "engine_over_reference": engine["speed_total_x"] / reference["speed_total_x"],
    }


def main(argv: list[str] | None = None) -> int:
    began = time.perf_counter()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    browser_bench.add_options(parser)
    parser.add_argument("--machine", help="name for the results file (default e.g. 2core-lavapipe)")
    parser.add_argument(
        "--native-model",
        choices=["tiny", "full"],
        help="model of the native and reference runs (default --model)",
    )
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "bench")
    parser.add_argument("--results", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--figures", type=Path, default=ROOT / "bench" / "figures")
    parser.add_argument("--no-browser", action="store_true", help="only the native engine and reference")
    parser.add_argument("--readme", action="store_true", help="also refresh the README's results table")
    args = parser.parse_args(argv)
    args.native_model = args.native_model or args.model
    args.machine = args.machine or default_machine(args.adapter)
    indices = browser_bench.parse_phrases(args.phrases, len(PHRASES)) or list(range(len(PHRASES)))

    date = datetime.date.today().isoformat()
    result: dict = {
        "machine": {
            "name": args.machine,
            "platform": platform.platform(),
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
        },
        "date": date,
        "command": "python -m bench.run " + " ".join(sys.argv[1:] if argv is None else argv),
        "commit": source_commit(),
        "phrases": indices,
        "max_frames": args.max_frames or None,
        "frames": "every take runs to its budget or the frame cap (the model's end of speech is ignored)",
    }
    clips = args.work / "clips" / "browser"
    if not args.no_browser:
        log(f"browser: synthetic {args.model} model, {args.rounds} rounds, texts {indices}")
        result["browser"] = browser_bench.run_browser(
            model=args.model,
            adapter=args.adapter,
            rounds=args.rounds,
            phrases=indices,
            max_frames=args.max_frames or None,
            work=args.work,
            clips=clips,
            wheel=args.wheel,
            quiet={"max_busy": args.quiet_busy, "hold_s": args.quiet_hold, "timeout_s": args.quiet_timeout},
            log=log,
        )
        b = result["browser"]
        log(f"browser: {b['speed_x']['median']:.3g}x on {b['environment']['adapter']}")
    result.update(native_and_reference(args, indices))
    if not args.no_browser:
        log("quality of the browser's clips (random recognisers: the scores mean nothing)")
        result["quality"] = quality.score(clips)
        print(result["quality"]["warning"])
    result["wall_s"] = time.perf_counter() - began

    args.results.mkdir(parents=True, exist_ok=True)
    out = args.results / f"{args.machine}-bench-{date}.json"
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    log(f"results: {out}")
    for path in plots.make_figures(args.results, args.figures):
        log(f"figure: {path}")
    table_args = ["--results", str(args.results), "--out", str(args.figures / "table.md")]
    table.main(table_args + (["--readme", str(ROOT / "README.md")] if args.readme else []))
    log(f"done in {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
