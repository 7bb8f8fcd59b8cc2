"""The results as a Markdown table: every figure a median with its 25th-75th percentiles.

    python bench/table.py [--results DIR] [--out bench/figures/table.md] [--readme README.md]

--readme replaces what stands between `<!-- bench-table -->` and `<!-- /bench-table -->` in that file,
so `python bench/plots.py && python bench/table.py --readme README.md` regenerates the README's
numbers from bench/results/.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.summary import FIGURES, RESULTS, RUNTIME_NAMES, Row, load_rows, short_adapter  # noqa: E402

BEGIN, END = "<!-- bench-table -->", "<!-- /bench-table -->"
COLUMNS = [
    ("Machine", None),
    ("Runtime", None),
    ("Adapter", None),
    ("Model", None),
    ("Takes", None),
    ("Speed (x real time)", "speed_x"),
    ("First audio", "first_audio_ms"),
    ("Cold start", "cold_start_ms"),
    ("First visit at 50 Mbit/s", "first_visit_50mbit_ms"),
    ("Download", "first_visit_bytes"),
    ("Source", None),
]


def decimals(value: float) -> int:
    """Enough decimals for three significant figures of `value` (at least none, at most six)."""
    if value <= 0:
        return 0
    return max(0, min(6, 2 - math.floor(math.log10(value))))


def spread(q: dict, scale: float = 1.0, unit: str = "") -> str:
    """'113x (110-116)': the median, then the 25th-75th percentiles, all with the median's decimals."""
    median, low, high = (q[k] * scale for k in ("median", "p25", "p75"))
    places = decimals(median)
    if q.get("n", 2) == 1:
        return f"{median:.{places}f}{unit} (n=1)"
    return f"{median:.{places}f}{unit} ({low:.{places}f}-{high:.{places}f})"


def cell(row: Row, key: str) -> str:
    q = row.metrics.get(key)
    if q is None:
        return ""
    if key == "speed_x":
        return spread(q, unit="x")
    if key == "first_audio_ms":
        return spread(q, unit=" ms")
    if key == "first_visit_bytes":
        return spread(q, 1e-6, " MB")
    return spread(q, 1e-3, " s")  # the load times are in ms, shown in seconds


def adapter_cell(row: Row) -> str:
    name = short_adapter(row.adapter)
    return f"{name} (software, on the CPU)" if row.software else name


def model_cell(row: Row) -> str:
    return f"{row.model}, {row.frames}"


def takes_cell(row: Row) -> str:
    return f"{len(row.takes)} ({row.texts} texts)"


def markdown(rows: list[Row]) -> str:
    lines = ["| " + " | ".join(name for name, _ in COLUMNS) + " |", "|" + " --- |" * len(COLUMNS)]
    for row in rows:
        cells = [
            row.machine,
            RUNTIME_NAMES[row.runtime],
            adapter_cell(row),
            model_cell(row),
            takes_cell(row),
            *(cell(row, key) for _, key in COLUMNS[5:-1]),
            f"`{row.source}`",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    notes = [
        "",
        "Each figure is a median with its 25th-75th percentiles in brackets (n=1: a single run). "
        "Speed is seconds of speech per second of compute over every take; first audio is from the call "
        "to the first chunk of samples; cold start is from opening the page (files cached) to the first "
        "audio; a first visit starts with the site's storage and the HTTP cache deleted, with the time "
        "its downloads ran replaced by its bytes at 50 Mbit/s. The model is the synthetic checkpoint "
        "(random weights, real dimensions for `full`, hidden 64 and 2 layers for `tiny`); rows marked "
        "software ran on a CPU rasteriser and say nothing about a GPU.",
    ]
    return "\n".join(lines + notes) + "\n"


def replace_block(text: str, table: str) -> str:
    if BEGIN not in text or END not in text:
        raise SystemExit(f"no {BEGIN} ... {END} block to replace")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{table}{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--out", type=Path, default=FIGURES / "table.md")
    parser.add_argument("--readme", type=Path, help="also replace the bench-table block of this file")
    args = parser.parse_args(argv)
    table = markdown(load_rows(args.results))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(table, encoding="utf-8")
    if args.readme:
        text = args.readme.read_text(encoding="utf-8")
        args.readme.write_text(replace_block(text, table), encoding="utf-8")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
