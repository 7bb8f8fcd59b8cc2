"""Speed of `phonon_web.normalize.normalize` (a benchmark, not a test).

Times 10,000 characters of English with numbers, money, dates, times, units, abbreviations and URLs mixed
into plain prose (about one token to normalise per 60 characters), and 10,000 characters of plain prose.
Prints the best of `--repeat` runs in milliseconds; the goal is under 50 ms for 10,000 characters.

Usage: python bench/normalize_speed.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from bench.measure import best_of  # noqa: E402
from phonon_web.normalize import normalize  # noqa: E402

PROSE = (
    "The committee met again on a grey afternoon and talked for a long time about the river, the old "
    "bridge and whether the town could afford to repair it before the winter rains came back. "
)
MIXED = (
    "On 2026-11-30 at 9:30 p.m. Dr. Smith paid $5.20 for 3 kg of apples, i.e. about 1,234 grams. "
    "The 1990s saw prices rise 3.5% a year, from £3.50 to €12 vs. ¥100 in 1999. Henry VIII read "
    "Chapter IV on Nov. 30, 2026 & wrote to a.b@c.io, see https://example.com/a for 1/2 of it. "
    "It was -5 °C at 21:05, and the car went 120 km/h for the 22nd time; etc. "
)


def make_text(parts: list[str], chars: int) -> str:
    text = ""
    i = 0
    while len(text) < chars:
        text += parts[i % len(parts)]
        i += 1
    return text[:chars]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    mixed = make_text([PROSE, MIXED, PROSE], 10_000)
    plain = make_text([PROSE], 10_000)
    replaced = len(normalize(mixed).spans)
    for name, text in (("mixed", mixed), ("plain", plain)):
        seconds = best_of(lambda text=text: normalize(text), args.repeat)
        rate = len(text) / seconds / 1e6
        print(f"{name}: {len(text):,} characters in {seconds * 1000:.2f} ms ({rate:.2f} M chars/s)")
    print(f"({replaced} replacements in the mixed text)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
