"""bench/summary.py, bench/table.py and bench/plots.py on small results files (tests/data/bench/):
both kinds of results file are read, other files are passed over, every figure is a median with its
spread, software adapters are named as such, and the figures are written as PNG files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench import plots, table
from bench.summary import by_length, load_rows, short_adapter

DATA = Path(__file__).parent / "data" / "bench"
PNG = b"\x89PNG\r\n\x1a\n"


def rows_by_key():
    return {(r.machine, r.runtime): r for r in load_rows(DATA)}


def test_both_kinds_of_results_file_are_read_and_others_passed_over():
    rows = rows_by_key()
    assert sorted(rows) == [
        ("cpu", "browser"),
        ("cpu", "native"),
        ("cpu", "reference"),
        ("gpu", "native"),
        ("gpu", "reference"),
    ]  # not the breakdown file, not notes.json
    gpu = rows[("gpu", "native")]
    assert gpu.metrics["speed_x"]["median"] == 112.9 and not gpu.software
    assert gpu.model == "full" and gpu.frames == "model's budget" and gpu.texts == 2
    assert [speed for _, speed in gpu.takes] == [110.0, 116.0, 112.0, 114.0]
    browser = rows[("cpu", "browser")]
    assert browser.software and browser.model == "tiny" and browser.frames == "capped at 16"
    assert set(browser.metrics) == {
        "speed_x",
        "first_audio_ms",
        "cold_start_ms",
        "first_visit_50mbit_ms",
        "first_visit_bytes",
    }
    assert len(browser.takes) == 4 and rows[("cpu", "native")].software


def test_takes_without_their_length_get_it_from_the_phrase():
    # the speed file's runs carry no "chars": phrase 0 is "The birch canoe slid on the smooth planks."
    gpu = rows_by_key()[("gpu", "native")]
    grouped = by_length(gpu.takes)
    assert [chars for chars, _ in grouped] == [42, 43]
    assert grouped[0][1]["median"] == 111.0 and grouped[0][1]["n"] == 2


def test_short_adapter_names():
    assert short_adapter("NVIDIA H200 (Vulkan, DiscreteGPU)") == "NVIDIA H200, Vulkan"
    assert short_adapter("llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan, CPU)") == "lavapipe"
    assert short_adapter("Google SwiftShader (swiftshader)") == "SwiftShader"
    assert short_adapter("lavapipe via ANGLE (WebGPU adapter)") == "lavapipe via ANGLE"


def test_table_gives_medians_with_spreads_and_names_software_adapters():
    text = table.markdown(load_rows(DATA))
    lines = text.splitlines()
    header = lines[0]
    assert header.count("|") == len(table.COLUMNS) + 1
    gpu = next(line for line in lines if line.startswith("| gpu | native engine"))
    assert "113x (110-116)" in gpu and "6.00 ms (5.60-6.30)" in gpu
    browser = next(line for line in lines if line.startswith("| cpu | browser"))
    assert "SwiftShader (software, on the CPU)" in browser
    assert "0.0700x (0.0600-0.0800)" in browser
    assert "27.0 s (26.0-28.0)" in browser and "40.0 s (39.0-41.0)" in browser and "14.8 MB" in browser
    native = next(line for line in lines if line.startswith("| cpu | native engine"))
    assert "(n=1)" in native and "lavapipe (software, on the CPU)" in native
    assert "NVIDIA H200, Vulkan |" in gpu and "software" not in gpu


def test_readme_block_is_replaced_and_nothing_else():
    readme = f"intro\n{table.BEGIN}\nold table\n{table.END}\noutro\n"
    assert table.replace_block(readme, "| new |\n") == f"intro\n{table.BEGIN}\n| new |\n{table.END}\noutro\n"
    with pytest.raises(SystemExit):
        table.replace_block("no markers here", "| new |\n")


def test_table_command_writes_the_file_and_the_readme(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"a\n{table.BEGIN}\n{table.END}\nb\n")
    out = tmp_path / "table.md"
    assert table.main(["--results", str(DATA), "--out", str(out), "--readme", str(readme)]) == 0
    assert "113x (110-116)" in out.read_text()
    assert out.read_text() in readme.read_text() and readme.read_text().endswith(f"{table.END}\nb\n")


def test_figures_are_written_as_png(tmp_path):
    made = plots.make_figures(DATA, tmp_path)
    names = sorted(p.name for p in made)
    assert names == ["first_audio.png", "page_load.png", "speed.png", "speed_by_length.png"]
    for path in made:
        data = path.read_bytes()
        assert data.startswith(PNG) and len(data) > 10_000


def test_no_page_load_figure_without_a_browser_run(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    shutil.copy(DATA / "gpu-speed-2026-01-01.json", results)
    made = plots.make_figures(results, tmp_path / "figures")
    assert sorted(p.name for p in made) == ["first_audio.png", "speed.png", "speed_by_length.png"]
