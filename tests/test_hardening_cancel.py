"""Cancelling at 100 random points, and several requests at once: each request gets its own result,
bit-identical to a fresh engine's, whatever was cancelled or queued before it (tiny model, lavapipe)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import random
import threading
import time

import pytest

import phonon_web
from phonon_web.engine import Engine
from phonon_web.errors import CancelledError
from phonon_web.files import ModelFiles
from phonon_web.gpu.door import run_sync

# Two parts at max_text_tokens=24, each of two chunks (1 and 2 frames) at max_frames=3: cancel
# points fall before a prefill, between chunks, between parts and around the alignment readbacks.
CANCELLED = "The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background."
CANCELLED_FRAMES = 3
OPTIONS = {"max_frames": 32, "max_text_tokens": 24}
AFTER = [("Hello there.", seed, voice) for seed, voice in ((1, 0), (2, 1), (3, 2), (4, 0))]
AFTER_FRAMES = 2


@pytest.fixture(scope="module")
def files(tiny_weights):
    return ModelFiles.from_folder(tiny_weights)


@pytest.fixture(scope="module")
def engine(door, files):
    return Engine(door, files, **OPTIONS)


def _result(speech):
    return speech.audio.tobytes(), [(w.text, w.start, w.end) for w in speech.words]


def _after(engine, index):
    text, seed, voice = AFTER[index]
    return run_sync(engine.speak(text, seed=seed, voice=engine.voices[voice], max_frames=AFTER_FRAMES))


@pytest.fixture(scope="module")
def fresh(door, files):
    """What a fresh engine says for each request of AFTER: one new engine per request."""
    return [_result(_after(Engine(door, files, **OPTIONS), i)) for i in range(len(AFTER))]


class StopAt:
    """should_stop() that answers True at its `at`-th call, and remembers when; `heard` is on_audio."""

    def __init__(self, at: int):
        self.at, self.calls, self.stopped_at = at, 0, None
        self.heard: list[float] = []  # when each chunk of audio arrived

    def heard_chunk(self, chunk) -> None:
        self.heard.append(time.perf_counter())

    def __call__(self) -> bool:
        self.calls += 1
        if self.calls == self.at:
            self.stopped_at = time.perf_counter()
        return self.calls >= self.at


def test_cancel_at_100_random_points_leaves_the_engine_as_fresh(engine, fresh):
    assert len(engine.prepare(CANCELLED)) == 2
    counting = StopAt(at=10**9)
    run_sync(engine.speak(CANCELLED, seed=9, max_frames=CANCELLED_FRAMES, should_stop=counting))
    points = counting.calls  # how many times a whole request asks
    assert points >= 10
    rng = random.Random(6)
    tried = set()
    for round_ in range(100):
        stop = StopAt(rng.randint(1, points))
        tried.add(stop.at)
        with pytest.raises(CancelledError):
            speaking = engine.speak(
                CANCELLED,
                seed=round_,
                max_frames=CANCELLED_FRAMES,
                should_stop=stop,
                on_audio=stop.heard_chunk,
            )
            run_sync(speaking)
        cancelled = time.perf_counter()
        assert stop.calls == stop.at  # asked no more once told to stop
        assert all(t <= stop.stopped_at for t in stop.heard)  # and delivered no audio after
        assert cancelled - stop.stopped_at < 0.25  # promptly: no GPU work waited for
        index = round_ % len(AFTER)
        assert _result(_after(engine, index)) == fresh[index], f"round {round_}, cancelled at call {stop.at}"
    assert tried == set(range(1, points + 1))  # every place a request can be cancelled, several times


def test_phonon_cancel_takes_an_event_or_a_function(tiny_weights, door):
    tts = phonon_web.load(tiny_weights, door=door, **OPTIONS)
    alone = _result(tts.speak("Hello there.", seed=1, max_frames=AFTER_FRAMES))
    event = threading.Event()
    with pytest.raises(CancelledError):
        tts.speak(CANCELLED, max_frames=CANCELLED_FRAMES, cancel=event, on_audio=lambda chunk: event.set())
    assert (
        _result(tts.speak("Hello there.", seed=1, max_frames=AFTER_FRAMES, cancel=threading.Event())) == alone
    )
    with pytest.raises(CancelledError):
        tts.speak(CANCELLED, max_frames=CANCELLED_FRAMES, cancel=lambda: True)
    assert _result(tts.speak("Hello there.", seed=1, max_frames=AFTER_FRAMES, cancel=lambda: False)) == alone


def test_a_failing_callback_fails_its_request_only(engine, fresh):
    def broken(chunk):
        raise ValueError("the page's audio callback broke")

    with pytest.raises(ValueError, match="callback broke"):
        run_sync(engine.speak(CANCELLED, max_frames=CANCELLED_FRAMES, on_audio=broken))
    assert _result(_after(engine, 0)) == fresh[0]


class YieldingDoor:
    """A door whose reads give the event loop a turn, as the browser's do: natively reads complete at
    once, so without this concurrent requests would never overlap and the queue would not be tested."""

    def __init__(self, door):
        self._door = door

    def __getattr__(self, name):
        return getattr(self._door, name)

    async def read(self, buffer, offset, size):
        await asyncio.sleep(0)
        return await self._door.read(buffer, offset, size)


REQUESTS = [
    ("The birch canoe slid on the smooth planks.", 11, 0),
    ("Glue the sheet to the dark blue background.", 12, 1),
    ("It is easy to tell the depth of a well.", 13, 2),
    ("These days a chicken leg is a rare dish.", 14, 0),
]


def in_own_loop(coroutine):
    """asyncio.run in a thread of its own: the browser tests' sync Playwright keeps an event loop
    running in the main thread for the rest of the session, where asyncio.run refuses to start."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def test_concurrent_requests_are_queued_never_mixed(door, files):
    engine = Engine(YieldingDoor(door), files, **OPTIONS)
    order: list[int] = []

    def request(i, should_stop=None):
        text, seed, voice = REQUESTS[i]
        return engine.speak(
            text,
            seed=seed,
            voice=engine.voices[voice],
            max_frames=6,
            on_audio=lambda chunk: order.append(i),
            should_stop=should_stop,
        )

    async def alone():
        return [_result(await request(i)) for i in range(len(REQUESTS))]

    async def together(stop_third=False):
        # the third is cancelled while it waits: once the first request's audio has come
        calls = [
            request(i, (lambda: bool(order)) if stop_third and i == 2 else None) for i in range(len(REQUESTS))
        ]
        return await asyncio.gather(*calls, return_exceptions=True)

    expected = in_own_loop(alone())
    order.clear()
    results = in_own_loop(together())
    assert [_result(r) for r in results] == expected
    # one request at a time: each one's chunks all came before the next one's
    assert order == sorted(order) and set(order) == {0, 1, 2, 3}
    order.clear()
    results = in_own_loop(together(stop_third=True))  # a cancelled request in the queue harms no other
    assert isinstance(results[2], CancelledError) and 2 not in order
    assert [_result(r) for i, r in enumerate(results) if i != 2] == expected[:2] + expected[3:]
