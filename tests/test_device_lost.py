"""A lost GPU device, natively: the request that meets it fails with DeviceLostError, the next one
rebuilds the engine on a new device and says exactly what a fresh engine says (tiny model, lavapipe)."""

from __future__ import annotations

import pytest

import phonon_web
from phonon_web.engine import Engine
from phonon_web.errors import DeviceLostError
from phonon_web.files import ModelFiles
from phonon_web.gpu.door import run_sync
from phonon_web.gpu.native import NativeDoor

OPTIONS = {"max_frames": 32, "max_text_tokens": 64}  # a small engine: quick to rebuild
TEXT = "The birch canoe slid on the smooth planks."
SPEAK = {"seed": 5, "max_frames": 8}  # three chunks: room to lose the device in the middle


def _result(speech):
    return speech.audio.tobytes(), [(w.text, w.start, w.end) for w in speech.words]


@pytest.fixture(scope="module")
def tts(tiny_weights):
    tts = phonon_web.load(tiny_weights, **OPTIONS)
    yield tts
    tts.close()


@pytest.fixture(scope="module")
def fresh(tts):
    """The first request of a freshly loaded engine, and the GPU objects its load made."""
    return _result(tts.speak(TEXT, **SPEAK)), tts.engine.door.created.copy()


def _recovers(tts, fresh, lost_door):
    assert tts.engine.door is lost_door and lost_door.lost  # nothing rebuilt until asked
    assert _result(tts.speak(TEXT, **SPEAK)) == fresh[0]
    assert tts.engine.door is not lost_door and not tts.engine.door.lost
    assert tts.engine.door.created == fresh[1]  # the same objects again, on the new device


def test_lost_between_requests(tts, fresh):
    door = tts.engine.door
    door.destroy_device()
    with pytest.raises(DeviceLostError, match="next request rebuilds"):
        tts.speak(TEXT, **SPEAK)
    _recovers(tts, fresh, door)


def test_lost_in_the_middle_of_a_request(tts, fresh):
    door = tts.engine.door
    chunks = []

    def on_audio(samples):
        chunks.append(len(samples))
        if len(chunks) == 1:
            door.destroy_device()

    with pytest.raises(DeviceLostError):
        tts.speak(TEXT, on_audio=on_audio, **SPEAK)
    assert len(chunks) == 1
    _recovers(tts, fresh, door)


def test_lost_between_a_submit_and_its_read(tts, fresh, monkeypatch):
    door = tts.engine.door
    submit = door.submit
    submits = []

    def submit_then_lose(programs):
        submit(programs)
        submits.append(1)
        # the prefill's pieces, chunk 0, chunk 1: speak() reads chunk 0 back once chunk 1 is queued
        # behind it
        if len(submits) == len(tts.engine.lm.start_parts(tts.engine.voices[0])) + 2:
            door.device.destroy()  # wgpu-py only logs the loss: the failed map must tell

    monkeypatch.setattr(door, "submit", submit_then_lose)
    with pytest.raises(DeviceLostError, match="map status"):
        tts.speak(TEXT, **SPEAK)
    _recovers(tts, fresh, door)


def test_loss_learnt_from_a_call_the_device_refuses(tts, fresh):
    door = tts.engine.door
    door.device.destroy()  # as a driver reset: nothing sets `lost`, the next call fails
    assert door.lost is None
    with pytest.raises(DeviceLostError, match="lost"):
        tts.speak(TEXT, **SPEAK)
    assert "lost" in door.lost
    _recovers(tts, fresh, door)


def test_an_engine_refuses_work_once_its_device_is_lost(tiny_weights):
    # the browser worker's contract: it builds a new Engine on a new door when it sees DeviceLostError
    files = ModelFiles.from_folder(tiny_weights)
    engine = Engine(NativeDoor(), files, **OPTIONS)
    engine.door.destroy_device()
    for _ in range(2):
        with pytest.raises(DeviceLostError):
            run_sync(engine.speak(TEXT, **SPEAK))
    rebuilt = Engine(NativeDoor(), files, **engine.options)
    assert rebuilt.options == engine.options
    assert run_sync(rebuilt.speak(TEXT, **SPEAK)).frames >= 1


def test_a_model_on_a_door_it_was_given_cannot_rebuild_alone(tiny_weights, fresh):
    door = NativeDoor()
    given = phonon_web.load(tiny_weights, door=door, **OPTIONS)
    door.destroy_device()
    for _ in range(2):
        with pytest.raises(DeviceLostError, match="load it again"):
            given.speak(TEXT, **SPEAK)
    rebuilding = phonon_web.load(tiny_weights, door=NativeDoor(), new_door=NativeDoor, **OPTIONS)
    rebuilding.engine.door.destroy_device()
    with pytest.raises(DeviceLostError, match="next request rebuilds"):
        rebuilding.speak(TEXT, **SPEAK)
    assert _result(rebuilding.speak(TEXT, **SPEAK)) == fresh[0]
    rebuilding.close()
