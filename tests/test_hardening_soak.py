"""Soak: 1,000 requests natively (tiny model, lavapipe, mostly one frame each: lavapipe takes about
50 ms a frame), with the odd longer request, bad input and cancelled request among them. No GPU object
is made after the first request, and Python's memory stays where it was once the engine had warmed up."""

from __future__ import annotations

import gc
import os
import threading
import tracemalloc

import pytest

import phonon_web
from phonon_web.errors import CancelledError, TextError

REQUESTS = 1000
WARM = 50  # requests before memory is first measured: caches (regexes, tokenizer pieces) fill up
OPTIONS = {"max_frames": 32, "max_text_tokens": 24}
TEXTS = [
    "Hello there.",
    "The birch canoe slid on the smooth planks.",
    "It costs $5 at 9.",
    "I love it 😀 so",
]
TWO_PARTS = "The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background."
SPEEDS = (0.8, 1.0, 1.2)
KB = 1 << 10


def _rss() -> int:
    """Resident memory of the process in bytes (Linux), for the figures: Python, wgpu and lavapipe."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _request(tts, i: int, stop: threading.Event) -> None:
    """Request `i` of the soak: mostly one frame of speech; now and then two frames, two parts, a bad
    text or a cancel."""
    if i % 97 == 13:
        with pytest.raises(TextError):
            tts.speak("...", max_frames=1)
        return
    if i % 89 == 7:
        with pytest.raises(CancelledError):
            tts.speak(TEXTS[1], max_frames=2, cancel=stop, on_audio=lambda chunk: stop.set())
        stop.clear()
        return
    speech = tts.speak(
        TWO_PARTS if i % 50 == 0 else TEXTS[i % len(TEXTS)],
        voice=tts.voices[i % len(tts.voices)],
        speed=SPEEDS[i % len(SPEEDS)],
        seed=i,
        max_frames=2 if i % 25 == 0 else 1,
    )
    assert speech.frames >= 1 and speech.words


def test_a_thousand_requests_make_no_gpu_objects_and_keep_memory_flat(tiny_weights, door):
    tts = phonon_web.load(tiny_weights, door=door, **OPTIONS)
    assert [len(tts.engine.prepare(t)) for t in [*TEXTS, TWO_PARTS]] == [1] * len(TEXTS) + [2]
    stop = threading.Event()
    _request(tts, 0, stop)
    created = door.created.copy()
    gc.collect()
    tracemalloc.start()
    try:
        measured, resident = {}, {}
        for i in range(1, REQUESTS):
            _request(tts, i, stop)
            if i in (WARM, REQUESTS // 2, REQUESTS - 1):
                gc.collect()
                measured[i] = tracemalloc.get_traced_memory()[0]
                resident[i] = _rss()
    finally:
        tracemalloc.stop()
    assert door.created == created  # buffers, bind groups, pipelines and bytes: none after the first
    growth = measured[REQUESTS - 1] - measured[WARM]
    # Measured here: 11 KB traced after request 50, 19 KB after 500, 20 KB after 999 (the normaliser's
    # and tokenizer's caches filling). A leak of one small object a request (a chunk's array, a word
    # list, a Program) would be 950 of them: 64 KB catches anything of 70 bytes or more.
    print(f"traced Python memory at requests {list(measured)}: {[m // KB for m in measured.values()]} KB")
    print(f"resident memory at requests {list(resident)}: {[m // KB for m in resident.values()]} KB")
    assert growth < 64 * KB, (measured, growth / KB)
    assert measured[REQUESTS - 1] - measured[REQUESTS // 2] < 32 * KB, measured
