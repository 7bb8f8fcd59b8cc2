"""`python -m phonon_web speak` writes a WAV and the word times, and fails in one plain line."""

import json
import subprocess
import sys
import wave
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SENTENCE = "The birch canoe slid on the smooth planks."


@pytest.fixture(scope="module")
def weights(tiny_weights):
    return tiny_weights


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "phonon_web", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_speak_writes_wav_and_words(weights, tmp_path):
    out, words = tmp_path / "birch.wav", tmp_path / "birch.json"
    result = cli(
        "speak", SENTENCE, "--weights", weights, "--voice", "Delia", "--seed", 1, "-o", out, "--words", words
    )
    assert result.returncode == 0, result.stderr
    with wave.open(str(out)) as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, 24000)
        assert w.getnframes() > 0 and w.getnframes() % 1920 == 0
        duration = w.getnframes() / 24000
    timings = json.loads(words.read_text())
    assert [w["text"] for w in timings["words"]] == SENTENCE.split()
    assert all(0 <= w["start"] <= w["end"] <= duration + 1e-6 for w in timings["words"])
    assert "real time" in result.stderr


def test_errors_are_one_plain_line(weights, tmp_path):
    result = cli("speak", SENTENCE, "--weights", weights, "--voice", "Nobody", "-o", tmp_path / "x.wav")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "Nobody" in result.stderr
    missing = cli("speak", SENTENCE, "--weights", tmp_path / "nothing-here", "-o", tmp_path / "x.wav")
    assert missing.returncode == 2 and "manifest.json" in missing.stderr
    slow = cli("speak", SENTENCE, "--weights", weights, "--speed", 3, "-o", tmp_path / "x.wav")
    assert slow.returncode == 2 and "0.77" in slow.stderr
