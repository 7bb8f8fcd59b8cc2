"""The browser benchmark: rounds of first visits, cold runs and warm runs of the benchmark page
(bench/page/, served at /bench/ of the built site) in Chromium, driven by Playwright.

    python bench/browser.py [--model tiny|full] [--adapter lavapipe|swiftshader|default] [--rounds 3]
                            [--phrases all|0,1,10] [--max-frames 16] [--out FILE.json] [--clips DIR]

* first visit: the HTTP cache is cleared (DevTools protocol), the page deletes its origin's Cache
  Storage, IndexedDB and origin private file system, then loads Phonon and speaks the first Harvard
  sentence; the page counts every byte that it and its worker fetched (Resource Timing);
* cold run: a fresh page with the files cached: load, speak the first Harvard sentence (cold start is
  page open to first audio);
* warm run: a fresh page: load, one untimed sentence, then the benchmark texts with the round's seed.

Each round runs the three kinds once, in an order that rotates every round, after waiting for the
machine to be quiet (bench/quiet.py; what it saw is recorded). The first round opens with a first
visit, which fills the caches for the cold runs. Every number is a median with its 25th-75th
percentiles (bench/speed.py's quartiles).

Without a GPU, Chromium's WebGPU runs on a CPU: SwiftShader (its own; a full-size step takes 100+ ms
there and compiling the pipelines about 25 s) or, by default here, Mesa's lavapipe through ANGLE in
WebGPU's compatibility mode (--adapter). So the defaults are the tiny synthetic model and a frame cap.
The results record the model, cap, texts, browser, flags and adapter, and whether the adapter is
software, so that nothing is read as a GPU number that is not one.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import platform
import shutil
import sys
import tempfile
import time
import wave
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.quiet import wait_quiet  # noqa: E402
from bench.speed import quartiles, synthetic_model  # noqa: E402

CHROMIUM = os.environ.get("PHONON_CHROMIUM", "/usr/bin/chromium")
# Headless Chromium on a server, quiet (no background downloads or updates) and free to play audio;
# the browser tests use the same.
HEADLESS_FLAGS = [
    "--no-sandbox",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--autoplay-policy=no-user-gesture-required",
]
FLAGS = [*HEADLESS_FLAGS, "--enable-unsafe-webgpu"]
# Chromium's software WebGPU adapters on a machine without a GPU. SwiftShader is the default one;
# Mesa's lavapipe is reached through ANGLE on Vulkan in WebGPU's compatibility mode, and compiles the
# engine's pipelines in about 4 s where SwiftShader takes about 25 s (measured here).
ADAPTERS = {
    "swiftshader": {"flags": [], "env": {}, "feature_level": None},
    "lavapipe": {
        "flags": ["--use-angle=vulkan", "--use-webgpu-adapter=opengles"],
        "env": {"VK_ICD_FILENAMES": "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"},
        "feature_level": "compatibility",
    },
    "default": {"flags": [], "env": {}, "feature_level": None},  # a real GPU: whatever Chromium picks
}
KINDS = ("first", "cold", "warm")
DOWNLOAD_MBIT_S = 50
SOFTWARE_ADAPTERS = ("swiftshader", "llvmpipe", "lavapipe", "softpipe")


def model_weights(model: str, work: Path) -> tuple[Path, Path]:
    """(weights folder, checkpoint folder) of the synthetic model of that size (bench/speed.py's)."""
    folder = work if model == "full" else work / model  # full: bench/speed.py's build/bench/{ckpt,web}
    return synthetic_model(folder, tiny=model == "tiny")


def build_bench_site(weights: Path, out: Path, wheel: Path | None = None) -> Path:
    from phonon_web.web.build import build_site

    site = build_site(out, weights=weights, wheel=wheel)
    if not (site / "bench" / "index.html").is_file():
        raise SystemExit(f"{site} has no bench/ page: the site builder did not copy bench/page/")
    return site


def round_order(round_index: int) -> list[str]:
    """first, cold, warm; then cold, warm, first; then warm, first, cold; ..."""
    shift = round_index % len(KINDS)
    return list(KINDS[shift:] + KINDS[:shift])


def is_software(adapter: str) -> bool:
    text = adapter.lower()
    return any(name in text for name in SOFTWARE_ADAPTERS) or "(cpu)" in text


def at_download_speed(visit: dict, mbit_s: float = DOWNLOAD_MBIT_S) -> float:
    """A first visit's time (ms) with its downloads at `mbit_s`: the time during which any download was
    running is replaced by the bytes it moved at that speed."""
    bytes_ = visit["bytes"]
    download_ms = bytes_["networkBodyBytes"] * 8 / (mbit_s * 1e6) * 1000
    return visit["openToFirstAudioMs"] - bytes_["downloadingMs"] + download_ms


class Browser:
    """One Chromium with a profile on disk (Cache Storage must survive between pages)."""

    def __init__(self, playwright, extra_flags: list[str], env: dict[str, str]):
        self.profile = tempfile.mkdtemp(prefix="phonon-bench-chromium-")
        self.flags = FLAGS + extra_flags
        self.env = env
        self.context = playwright.chromium.launch_persistent_context(
            self.profile,
            executable_path=CHROMIUM,
            headless=True,
            args=self.flags,
            env={**os.environ, **env},
        )
        page = self.context.new_page()
        self.version = self.context.new_cdp_session(page).send("Browser.getVersion")
        page.close()

    def run(self, url: str, timeout_s: float, *, clear_http_cache=False, watch_network=False) -> dict:
        """Opens `url` in a new page, waits for the benchmark page's result, closes the page."""
        page = self.context.new_page()
        log: list[str] = []
        page.on("console", lambda m: log.append(f"{m.type}: {m.text}"))
        page.on("pageerror", lambda e: log.append(f"pageerror: {e}"))
        requests = []
        if watch_network:
            page.on("requestfinished", lambda request: requests.append(request))
        if clear_http_cache:
            self.context.new_cdp_session(page).send("Network.clearBrowserCache")
        began = time.perf_counter()
        page.goto(url)
        page.wait_for_function("() => window.benchDone !== undefined", timeout=timeout_s * 1000, polling=200)
        result = page.evaluate("() => window.benchDone")
        result["driverSeconds"] = time.perf_counter() - began
        if watch_network:
            result["playwrightNetwork"] = network_totals(requests)
        page.close()
        if "error" in result:
            tail = "\n".join(log[-20:])
            raise RuntimeError(f"the benchmark page failed at {url}: {result['error']}\n{tail}")
        return result

    def close(self) -> None:
        self.context.close()
        shutil.rmtree(self.profile, ignore_errors=True)


def network_totals(requests) -> dict:
    """What Playwright saw go over the network (page and worker), to check the page's own count."""
    rows = []
    for request in requests:
        sizes = request.sizes()
        rows.append(
            {
                "path": request.url.split("//", 1)[-1].split("/", 1)[-1].split("?")[0],
                "body": sizes["responseBodySize"],
                "headers": sizes["responseHeadersSize"],
            }
        )
    phonon = [r for r in rows if not (r["path"].startswith("bench/") or r["path"] == "phrases.json")]
    return {
        "requests": len(phonon),
        "body_bytes": sum(r["body"] for r in phonon),
        "transfer_bytes": sum(r["body"] + r["headers"] for r in phonon),
        "rows": rows,
    }


def page_url(
    server_url: str,
    kind: str,
    seed: int,
    phrases: list[int],
    cap: int | None,
    voice: str,
    clips: bool = False,
    feature_level: str | None = None,
) -> str:
    query = {"kind": kind, "seed": seed, "voice": voice, "budget": 1}
    if feature_level:
        query["featureLevel"] = feature_level
    if phrases is not None:
        query["phrases"] = ",".join(str(p) for p in phrases)
    if cap:
        query["maxFrames"] = cap
    if clips:
        query["clips"] = 1
    return server_url + "bench/?" + "&".join(f"{k}={v}" for k, v in query.items())


def save_clips(warm: dict, folder: Path, texts: list[str], voice: str, model: str) -> None:
    """The warm takes as 16-bit WAV files, with clips.json naming each one's text (bench/quality.py)."""
    folder.mkdir(parents=True, exist_ok=True)
    listed = []
    for take in warm["takes"]:
        name = f"phrase{take['phrase']:02d}-seed{warm['seed']}.wav"
        with wave.open(str(folder / name), "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(24000)
            out.writeframes(base64.b64decode(take.pop("clip")))
        listed.append(
            {
                "file": name,
                "phrase": take["phrase"],
                "text": texts[take["phrase"]],
                "seed": warm["seed"],
                "voice": voice,
            }
        )
    listing = {"runtime": "browser", "model": f"synthetic-{model}", "clips": listed}
    (folder / "clips.json").write_text(json.dumps(listing, indent=1) + "\n")


def network_check(runs: list[dict]) -> dict | None:
    """The page's byte count of one first visit beside Playwright's network events for the same page."""
    for run in runs:
        if "playwrightNetwork" in run:
            page, seen = run["bytes"]["networkBodyBytes"], run["playwrightNetwork"]["body_bytes"]
            return {
                "round": run["round"],
                "page_body_bytes": page,
                "playwright_body_bytes": seen,
                "equal": page == seen,
            }
    return None


def summarise(runs: list[dict]) -> dict:
    first = [r for r in runs if r["kind"] == "first"]
    cold = [r for r in runs if r["kind"] == "cold"]
    takes = [t for r in runs if r["kind"] == "warm" for t in r["takes"]]
    summary: dict = {}
    if takes:
        summary["speed_x"] = quartiles([t["speechSeconds"] / t["wallSeconds"] for t in takes])
        speech = sum(t["speechSeconds"] for t in takes)
        summary["speed_total_x"] = speech / sum(t["wallSeconds"] for t in takes)
        summary["engine_speed_x"] = quartiles([t["speechSeconds"] / t["computeSeconds"] for t in takes])
        summary["first_audio_ms"] = quartiles([t["firstAudioMs"] for t in takes])
    if cold:
        summary["cold_start_ms"] = quartiles([r["openToFirstAudioMs"] for r in cold])
        summary["cold_load_ms"] = quartiles([r["loadMs"] for r in cold])
    if first:
        summary["first_visit_ms"] = quartiles([r["openToFirstAudioMs"] for r in first])
        summary["first_visit_bytes"] = quartiles([r["bytes"]["networkBodyBytes"] for r in first])
        summary[f"first_visit_{DOWNLOAD_MBIT_S}mbit_ms"] = quartiles([at_download_speed(r) for r in first])
    return summary


def run_browser(
    *,
    model: str = "tiny",
    adapter: str = "lavapipe",
    rounds: int = 2,
    phrases: list[int] | None = None,
    max_frames: int | None = 16,
    voice: str = "Delia",
    work: Path = ROOT / "build" / "bench",
    clips: Path | None = None,
    wheel: Path | None = None,
    quiet: dict | None = None,
    page_timeout_s: float = 600,
    log=print,
) -> dict:
    from playwright.sync_api import sync_playwright

    from phonon_web.web.serve import SiteServer

    texts = json.loads((ROOT / "bench" / "phrases.json").read_text())["phrases"]
    phrases = list(range(len(texts))) if phrases is None else phrases
    quiet = quiet or {}
    chosen = ADAPTERS[adapter]
    icd = chosen["env"].get("VK_ICD_FILENAMES")
    if icd and not Path(icd).is_file():
        raise SystemExit(f"no {icd}: apt-get install mesa-vulkan-drivers, or pass --adapter swiftshader")
    weights, _ = model_weights(model, work)
    site = build_bench_site(weights, work / f"site-{model}", wheel)
    server = SiteServer(site).start()
    runs: list[dict] = []
    rounds_log: list[dict] = []
    try:
        with sync_playwright() as playwright:
            browser = Browser(playwright, chosen["flags"], chosen["env"])
            try:
                url = lambda kind, seed, clip=False: page_url(  # noqa: E731
                    server.url, kind, seed, phrases, max_frames, voice, clip, chosen["feature_level"]
                )
                # round 0 opens with a first visit, which fills the caches for the cold runs after it
                assert round_order(0)[0] == "first"
                checked_network = False
                for round_index in range(rounds):
                    order = round_order(round_index)
                    waited = wait_quiet(**quiet)
                    rounds_log.append({"round": round_index, "order": order, "quiet": waited})
                    state = "quiet" if waited.get("quiet") else f"not quiet after {waited['waited_s']:.0f} s"
                    log(f"browser round {round_index + 1}/{rounds}: {' '.join(order)} ({state})")
                    for kind in order:
                        last_warm = kind == "warm" and round_index == rounds - 1
                        result = browser.run(
                            url(kind, round_index, clip=bool(clips) and last_warm),
                            page_timeout_s,
                            clear_http_cache=kind == "first",
                            watch_network=kind == "first" and not checked_network,
                        )
                        checked_network = checked_network or kind == "first"
                        result["round"] = round_index
                        if kind != "first":
                            result.pop("fetches", None)  # only first visits' fetch lists are kept
                        if clips and last_warm:
                            save_clips(result, clips, texts, voice, model)
                        log(f"  {kind}: {short(result)}")
                        runs.append(result)
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()

    primer = runs[0]
    reported = primer["info"]["adapter"]
    # Through ANGLE the page's adapter is only "WebGPU adapter": say what the driver asked for.
    described = reported if adapter in ("swiftshader", "default") else f"{adapter} via ANGLE ({reported})"
    return {
        "environment": {
            "browser": browser.version.get("product"),
            "user_agent": browser.version.get("userAgent"),
            "executable": CHROMIUM,
            "flags": browser.flags,
            "headless": True,
            "adapter": described,
            "adapter_requested": adapter,
            "adapter_info": primer["environment"].get("adapterInfo"),
            "feature_level": chosen["feature_level"] or "core",
            "env": chosen["env"],
            "software_adapter": is_software(described),
            "features": primer["info"].get("features"),
            "cross_origin_isolated": primer["environment"]["crossOriginIsolated"],
        },
        "setup": {
            "model": model,
            "weights_bytes": sum(f.stat().st_size for f in weights.rglob("*") if f.is_file()),
            "voice": voice,
            "phrases": phrases,
            "max_frames": max_frames,
            "frames": "every take runs to its budget or the cap (the model's end of speech is ignored)"
            if all(r.get("eosThresholdTaken", True) for r in runs)
            else "phonon.mjs refused eosThreshold: takes end at the model's end of speech or the cap",
            "rounds": rounds,
            "download_mbit_s": DOWNLOAD_MBIT_S,
            "speed": "seconds of speech / seconds from the speak() call to its resolved result, in the page",
            "first_audio": "speak() call to its first audio chunk, in the page",
            "cold_start": "page open (navigation start) to the first audio chunk, files cached",
            "first_visit": "the same after deleting the origin's storage and the HTTP cache, "
            "less the deletion itself",
        },
        "rounds": rounds_log,
        "network_check": network_check(runs),
        **summarise(runs),
        "runs": runs,
    }


def short(result: dict) -> str:
    if result["kind"] == "warm":
        takes = result["takes"]
        speed = sum(t["speechSeconds"] for t in takes) / sum(t["wallSeconds"] for t in takes)
        return f"{len(takes)} texts, {speed:.3g}x, load {result['loadMs'] / 1000:.1f} s"
    text = f"first audio {result['openToFirstAudioMs'] / 1000:.1f} s after page open"
    if result["kind"] == "first":
        text += f", {result['bytes']['networkBodyBytes'] / 1e6:.2f} MB downloaded"
    return text


def parse_phrases(text: str | None, count: int) -> list[int] | None:
    """'all' or indices into bench/phrases.json such as '0,1,10'."""
    if text is None or text == "all":
        return None
    indices = [int(p) for p in text.split(",")]
    if any(not 0 <= i < count for i in indices):
        raise SystemExit(f"--phrases: indices go from 0 to {count - 1}")
    return indices


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        choices=["tiny", "full"],
        default="tiny",
        help="synthetic model for the browser (tiny: hidden 64, 2 layers; full: 31M)",
    )
    parser.add_argument(
        "--adapter",
        choices=sorted(ADAPTERS),
        default="lavapipe",
        help="WebGPU adapter: lavapipe (Mesa, through ANGLE, compatibility mode; the fastest here), "
        "swiftshader (Chromium's own), default (a real GPU: whatever Chromium picks)",
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--phrases", default="all", help="'all' (default) or indices into bench/phrases.json, e.g. 0,1,10"
    )
    parser.add_argument("--max-frames", type=int, default=16, help="frame cap per text (0: none)")
    parser.add_argument("--quiet-busy", type=float, default=0.15, help="CPU busy counted as quiet (0-1)")
    parser.add_argument("--quiet-hold", type=float, default=5.0, help="seconds of quiet before a round")
    parser.add_argument("--quiet-timeout", type=float, default=20.0, help="most seconds to wait for it")
    parser.add_argument(
        "--wheel", type=Path, help="a phonon_web wheel for the page (default: built from here)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_options(parser)
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "bench")
    parser.add_argument("--clips", type=Path, help="save the last warm run's takes here (WAV + clips.json)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    count = len(json.loads((ROOT / "bench" / "phrases.json").read_text())["phrases"])
    result = run_browser(
        model=args.model,
        adapter=args.adapter,
        rounds=args.rounds,
        phrases=parse_phrases(args.phrases, count),
        max_frames=args.max_frames or None,
        work=args.work,
        clips=args.clips,
        wheel=args.wheel,
        quiet={"max_busy": args.quiet_busy, "hold_s": args.quiet_hold, "timeout_s": args.quiet_timeout},
    )
    print(json.dumps({k: v for k, v in result.items() if k not in ("runs", "rounds")}, indent=1))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"machine": machine(), "browser": result}, indent=1) + "\n")
    return 0


def machine() -> dict:
    return {"platform": platform.platform(), "cpu_count": os.cpu_count(), "python": platform.python_version()}


if __name__ == "__main__":
    sys.exit(main())
