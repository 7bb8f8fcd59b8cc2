"""The results files (bench/results/*.json) read into one list of rows for bench/table.py and
bench/plots.py: one row per machine, run and runtime, each with its medians and 25th-75th percentiles.

Two kinds of file carry speed numbers, and both are read:
* `<machine>-speed-<date>.json` (bench/speed.py): `engine` (native, wgpu-py) and `reference`;
* `<machine>-bench-<date>.json` (bench/run.py): the same two plus `browser` (bench/browser.py).
Other files (breakdown, parity) hold no speed rows and are passed over.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from bench.speed import quartiles

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
FIGURES = ROOT / "bench" / "figures"
PHRASES = json.loads((ROOT / "bench" / "phrases.json").read_text(encoding="utf-8"))["phrases"]
SOFTWARE_ADAPTERS = ("swiftshader", "llvmpipe", "lavapipe", "softpipe")
NAME = re.compile(r"^(?P<machine>.+)-(?P<kind>speed|bench)-(?P<date>\d{4}-\d{2}-\d{2})(?P<extra>.*)\.json$")


@dataclass
class Row:
    machine: str
    date: str
    runtime: str  # "browser", "native" or "reference"
    adapter: str
    software: bool  # a GPU adapter that is a CPU rasteriser (SwiftShader, lavapipe/llvmpipe)
    model: str
    frames: str  # how long the takes were: a cap or the model's budget
    texts: int
    source: str  # the results file
    metrics: dict = field(default_factory=dict)  # name -> {"median", "p25", "p75", "n"}
    takes: list = field(default_factory=list)  # (characters of the text, speed) for each take
    note: str = ""  # what a figure shows of this row, when it is not the runtime as a whole

    @property
    def label(self) -> str:
        text = f"{self.machine} {RUNTIME_NAMES[self.runtime]} ({short_adapter(self.adapter)}, {self.model})"
        return f"{text}: {self.note}" if self.note else text


RUNTIME_NAMES = {
    "browser": "browser",
    "native": "native engine",
    "reference": "Transformers reference",
}


def is_software(adapter: str) -> bool:
    text = adapter.lower()
    return any(name in text for name in SOFTWARE_ADAPTERS) or text.endswith("(cpu)")


def short_adapter(adapter: str) -> str:
    """A short name: 'NVIDIA H200 (Vulkan, DiscreteGPU)' -> 'NVIDIA H200, Vulkan'."""
    text = adapter.lower()
    if "swiftshader" in text:
        return "SwiftShader"
    if "llvmpipe" in text or "lavapipe" in text:
        return "lavapipe via ANGLE" if "angle" in text else "lavapipe"
    return adapter.replace(" (Vulkan, DiscreteGPU)", ", Vulkan").replace(" (Vulkan, CPU)", ", Vulkan")


def chars_of(run: dict) -> int:
    return run.get("chars") or len(PHRASES[run["phrase"]])


def frames_text(data: dict, section: dict | None = None) -> str:
    cap = (section or {}).get("max_frames", data.get("max_frames"))
    if cap:
        return f"capped at {cap}"
    return "model's budget" if "budget" in data.get("frames", "budget") else "model's end"


def native_row(name: dict, data: dict, source: str) -> Row:
    engine = data["engine"]
    adapter = engine.get("adapter", "?")
    row = Row(
        machine=name["machine"], date=name["date"], runtime="native", adapter=adapter,
        software=is_software(adapter), model=engine.get("model", "full"),
        frames=frames_text(data, engine), texts=len({r["phrase"] for r in engine["runs"]}), source=source,
    )  # fmt: skip
    row.metrics = {"speed_x": engine["speed_x"], "first_audio_ms": engine["first_audio_ms"]}
    row.takes = [(chars_of(r), r["speed_x"]) for r in engine["runs"]]
    return row


def reference_row(name: dict, data: dict, source: str) -> Row:
    ref = data["reference"]
    row = Row(
        machine=name["machine"], date=name["date"], runtime="reference", adapter=ref.get("device", "?"),
        software=False, model=ref.get("model", data.get("engine", {}).get("model", "full")),
        frames=frames_text(data, ref), texts=len({r["phrase"] for r in ref["runs"]}), source=source,
    )  # fmt: skip
    row.metrics = {"speed_x": ref["speed_x"]}
    row.takes = [(chars_of(r), r["speech_s"] / r["compute_s"]) for r in ref["runs"]]
    return row


def browser_row(name: dict, data: dict, source: str) -> Row:
    browser = data["browser"]
    env, setup = browser["environment"], browser["setup"]
    row = Row(
        machine=name["machine"], date=name["date"], runtime="browser", adapter=env["adapter"],
        software=bool(env.get("software_adapter", is_software(env["adapter"]))), model=setup["model"],
        frames=f"capped at {setup['max_frames']}" if setup.get("max_frames") else "model's budget",
        texts=len(setup["phrases"]), source=source,
    )  # fmt: skip
    keys = ("speed_x", "first_audio_ms", "cold_start_ms", "first_visit_50mbit_ms", "first_visit_bytes")
    row.metrics = {key: browser[key] for key in keys if key in browser}
    row.takes = [
        (t["chars"], t["speechSeconds"] / t["wallSeconds"])
        for run in browser["runs"]
        if run["kind"] == "warm"
        for t in run["takes"]
    ]
    return row


def load_rows(folder: Path = RESULTS) -> list[Row]:
    rows: list[Row] = []
    for path in sorted(folder.glob("*.json")):
        name = NAME.match(path.name)
        if name is None:
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        if "browser" in data:
            rows.append(browser_row(name, data, path.name))
        if "engine" in data:
            rows.append(native_row(name, data, path.name))
        if "reference" in data:
            rows.append(reference_row(name, data, path.name))
    return rows


def by_length(takes: list[tuple[int, float]]) -> list[tuple[int, dict]]:
    """The takes grouped by text length: (characters, quartiles of speed), shortest first."""
    groups: dict[int, list[float]] = {}
    for chars, speed in takes:
        groups.setdefault(chars, []).append(speed)
    return [(chars, quartiles(speeds)) for chars, speeds in sorted(groups.items())]
