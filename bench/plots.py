"""The results as PNG figures in bench/figures/: medians with 25th-75th percentile bars.

    python bench/plots.py [--results DIR] [--out DIR]

* speed.png            seconds of speech per second of compute, every runtime of every results file
* first_audio.png      call to the first chunk of samples (runtimes that stream)
* speed_by_length.png  speed against the text's length in characters
* page_load.png        the browser's cold start and first visit at 50 Mbit/s (bench-run files only)

Rows that ran on a software adapter (SwiftShader, lavapipe) are hatched and say so in their label.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.summary import FIGURES, RESULTS, Row, by_length, load_rows  # noqa: E402

COLOURS = {"browser": "#2b6cb0", "native": "#2f855a", "reference": "#9c4221"}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    return plt


def plain_numbers(*axes) -> None:
    """Log axes labelled 0.1, 1, 10 rather than 10^-1, 10^0, 10^1."""
    from matplotlib.ticker import FuncFormatter

    for axis in axes:
        axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))


def readable(value: float) -> str:
    """1626.1 -> '1,626'; 5.99 -> '5.99'; 0.041 -> '0.041'."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def label(row: Row) -> str:
    return row.label + (" [software adapter]" if row.software else "")


def bar_chart(
    rows: list[Row], key: str, title: str, unit: str, path: Path, scale: float = 1.0
) -> Path | None:
    """Horizontal bars at the medians, with 25th-75th percentile whiskers, log scale."""
    rows = [r for r in rows if key in r.metrics]
    if not rows:
        return None
    plt = _pyplot()
    lows = [r.metrics[key]["p25"] * scale for r in rows]
    span = max(r.metrics[key]["p75"] * scale for r in rows)
    spread_out = span / max(min(lows), 1e-12) > 20
    fig, ax = plt.subplots(figsize=(11, 0.55 * len(rows) + 1.6))
    for y, row in enumerate(rows):
        q = row.metrics[key]
        median, low, high = q["median"] * scale, q["p25"] * scale, q["p75"] * scale
        ax.barh(y, median, color=COLOURS[row.runtime], hatch="//" if row.software else None,
                edgecolor="white" if row.software else None, alpha=0.85)  # fmt: skip
        ax.errorbar(median, y, xerr=[[median - low], [high - median]], color="black", capsize=4, lw=1.2)
        ax.text(high + (high * 0.08 if spread_out else span * 0.01), y, readable(median) + unit,
                va="center", fontsize=8)  # fmt: skip
    ax.set_yticks(range(len(rows)), [label(r) for r in rows], fontsize=8)
    ax.invert_yaxis()
    if spread_out:  # values over orders of magnitude: log scale
        ax.set_xscale("log")
        plain_numbers(ax.xaxis)
    else:
        ax.set_xlim(0, span * 1.15)
    fig.suptitle(title + " (median, bars: 25th-75th percentile)", fontsize=10)  # over the labels too
    ax.grid(axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def speed_by_length(rows: list[Row], path: Path) -> Path | None:
    rows = [r for r in rows if r.takes]
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(13, 5.5))
    markers = "osD^v<>ph*"
    for index, row in enumerate(rows):
        points = by_length(row.takes)
        x = [chars for chars, _ in points]
        median = [q["median"] for _, q in points]
        low = [q["median"] - q["p25"] for _, q in points]
        high = [q["p75"] - q["median"] for _, q in points]
        ax.errorbar(x, median, yerr=[low, high], marker=markers[index % len(markers)], capsize=3,
                    color=COLOURS[row.runtime], linestyle="--" if row.software else "-",
                    alpha=0.9, label=label(row))  # fmt: skip
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_numbers(ax.xaxis, ax.yaxis)
    ax.set_xticks([20, 30, 50, 100, 200, 300, 500])
    ax.xaxis.set_minor_formatter("")
    ax.set_xlabel("text length (characters)")
    ax.set_ylabel("speed (seconds of speech per second)")
    ax.set_title("Speed against text length (median per text, bars: 25th-75th percentile)", fontsize=10)
    ax.grid(which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def make_figures(results: Path = RESULTS, out: Path = FIGURES) -> list[Path]:
    rows = load_rows(results)
    out.mkdir(parents=True, exist_ok=True)
    browser = [r for r in rows if r.runtime == "browser"]
    loads = (("cold_start_ms", "cold start"), ("first_visit_50mbit_ms", "first visit, 50 Mbit/s"))
    page_rows = [
        Row(**{**r.__dict__, "metrics": {"load": r.metrics[key]}, "note": what})
        for r in browser
        for key, what in loads
        if key in r.metrics
    ]
    made = [
        bar_chart(rows, "speed_x", "Speed, seconds of speech per second of compute", "x", out / "speed.png"),
        bar_chart(rows, "first_audio_ms", "First audio: call to first chunk", " ms", out / "first_audio.png"),
        speed_by_length(rows, out / "speed_by_length.png"),
        bar_chart(page_rows, "load", "Browser: page open to first audio", " s", out / "page_load.png", 1e-3),
    ]
    return [path for path in made if path is not None]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--out", type=Path, default=FIGURES)
    args = parser.parse_args(argv)
    for path in make_figures(args.results, args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
