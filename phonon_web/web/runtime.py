"""The Python half of the web worker (`web/worker.js`): load the engine behind `navigator.gpu`, speak.

Runs inside Pyodide only. The worker's JavaScript downloads and checks the files (Cache Storage,
`crypto.subtle`), then calls `load()` with their bytes; `speak()` runs the engine and hands every audio
chunk to a JS callback as a Float32Array. Both return a plain JS object, `{ok: value}` or
`{error: {name, message}}`, so the worker never has to parse a Python traceback to learn the error's
type, and no Python object (PyProxy) escapes to JS to be leaked.

Options cross as JSON text: there is nothing to convert and nothing to free.
"""

from __future__ import annotations

import json
import traceback

import js  # type: ignore[import-not-found]
from pyodide.ffi import to_js  # type: ignore[import-not-found]

from ..engine import Engine
from ..errors import PhononError
from ..files import ModelFiles
from ..gpu.browser import BrowserDoor
from ..manifest import load_manifest

_state: dict = {"engine": None, "door": None}

# Engine options the page may set at load (undocumented, for tests and benchmarks).
_ENGINE_OPTIONS = {
    "max_frames",
    "max_text_tokens",
    "kv_f16",
    "lag",
    "first_chunks",
    "chunk_frames",
    "skip_ramp_above",
}


def _js(value):
    return to_js(value, dict_converter=js.Object.fromEntries)


def _error(e: BaseException):
    if isinstance(e, PhononError):
        return _js({"error": {"name": type(e).__name__, "message": str(e)}})
    detail = "".join(traceback.format_exception(e))
    js.console.error(detail)
    return _js({"error": {"name": "InternalError", "message": f"{type(e).__name__}: {e}", "detail": detail}})


async def load(manifest_text: str, weights, tokenizer_text: str, voices, options_json: str = "{}"):
    """Open the GPU and build the engine. `weights` is a Uint8Array, `voices` a JS Map name -> Uint8Array
    (already checked against the manifest's SHA-256 by the worker)."""
    try:
        options = json.loads(options_json or "{}")
        close()
        door = await BrowserDoor.open(
            want_subgroups=options.get("subgroups", True), feature_level=options.get("featureLevel")
        )
        _state["door"] = door
        manifest = load_manifest(manifest_text)
        voice_bytes = {str(name): data.to_bytes() for name, data in voices.object_entries()}
        files = ModelFiles(manifest, weights.to_bytes(), tokenizer_text, voice_bytes)
        engine_options = {k: v for k, v in (options.get("engine") or {}).items() if k in _ENGINE_OPTIONS}
        for key in ("first_chunks",):
            if key in engine_options:
                engine_options[key] = tuple(engine_options[key])
        engine = Engine(door, files, **engine_options)
        del files  # the bytes are on the GPU now
        await door.finish()  # surfaces shader or validation errors now, not at the first speak()
        _state["engine"] = engine
        return _js(
            {
                "ok": {
                    "voices": list(engine.voices),
                    "sampleRate": engine.sample_rate,
                    "samplesPerFrame": engine.samples_per_frame,
                    "maxFrames": engine.max_frames,
                    "adapter": door.description,
                    "features": sorted(door.features),
                    "objects": dict(door.created),
                }
            }
        )
    except BaseException as e:  # noqa: BLE001 - every failure goes back to the page as a typed error
        return _error(e)


async def speak(text: str, options_json: str, on_audio, should_stop):
    """Speak `text`; `on_audio(Float32Array)` gets each chunk, `should_stop()` (JS) cancels."""
    try:
        engine = _state["engine"]
        if engine is None:
            raise PhononError("no model is loaded: call Phonon.load() first")
        options = json.loads(options_json or "{}")
        kwargs = {"voice": options.get("voice"), "speed": options.get("speed", 1.0)}
        if "speed" in options and options["speed"] is None:
            kwargs["speed"] = float("nan")  # JSON turned NaN into null: let the engine refuse it
        kwargs["seed"] = options.get("seed", 0)
        if options.get("normalize") is not None:
            kwargs["normalize"] = options["normalize"]  # the engine refuses what is not a bool
        for name in ("max_frames", "temperature", "eos_threshold"):
            if options.get(name) is not None:
                kwargs[name] = options[name]

        def chunk(samples) -> None:
            on_audio(to_js(memoryview(samples)))  # one copy into a Float32Array, then transferred

        speech = await engine.speak(text, on_audio=chunk, should_stop=lambda: bool(should_stop()), **kwargs)
        return _js(
            {
                "ok": {
                    "audio": to_js(memoryview(speech.audio)),
                    "sampleRate": speech.sample_rate,
                    "words": [
                        {
                            "text": w.text,
                            "start": w.start,
                            "end": w.end,
                            "start_char": w.start_char,
                            "end_char": w.end_char,
                        }
                        for w in speech.words
                    ],
                    "tokens": [{"text": t.text, "start": t.start, "end": t.end} for t in speech.tokens],
                    "frames": speech.frames,
                    "duration": speech.duration,
                    "firstAudioSeconds": speech.first_audio_seconds,
                    "computeSeconds": speech.compute_seconds,
                    "realTimeFactor": speech.real_time_factor,
                    "objects": dict(engine.door.created),
                }
            }
        )
    except BaseException as e:  # noqa: BLE001
        return _error(e)


def needs_engine() -> bool:
    """Whether the next request must build the engine first: none yet, or its GPU device was lost."""
    door = _state["door"]
    return _state["engine"] is None or door is None or door.lost is not None


def lose_device() -> None:
    """Test hook (worker.js, only with ?test-hooks): destroy the GPUDevice as a driver reset would.
    The door learns of it from `device.lost`, as it would of a real loss."""
    door = _state["door"]
    if door is not None and door.device is not None:
        door.device.destroy()


def stats():
    """The door's submit statistics (encoding cost from Python) and the object counts."""
    door = _state["door"]
    if door is None:
        return _js({"ok": None})
    return _js({"ok": {**door.stats, "objects": dict(door.created)}})


async def measure_encoding(steps: int = 20, repeats: int = 3):
    """Python's cost of encoding language-model steps against the GPU's time for them.

    * encoding: `submit([(lm.step, steps)])` timed, per step (best of `repeats`), with the state on
      the GPU saying speech has ended, so each kernel returns at once and the submit is all we time;
    * GPU: a live take (budget `steps` + 1, end of speech disabled), `steps` steps submitted at once,
      timed to completion (`queue.onSubmittedWorkDone`), per step.
    """
    try:
        engine, door = _state["engine"], _state["door"]
        if engine is None:
            raise PhononError("no model is loaded: call Phonon.load() first")
        import time

        lm = engine.lm
        take = engine.prepare("The birch canoe slid on the smooth planks.")[0]

        # GPU time of real steps
        lm.write_request(take.ids, seed=0, words=take.words, budget=steps + 1, eos_threshold=float("inf"))
        door.submit([(lm.start(engine.voices[0]), 1)])
        await door.finish()
        began = time.perf_counter()
        door.submit([(lm.step, steps)])
        await door.finish()
        gpu = (time.perf_counter() - began) / steps

        # encoding alone: the take above has used its budget, so every kernel now returns at once
        await door.finish()
        best = float("inf")
        for _ in range(repeats):
            began = time.perf_counter()
            door.submit([(lm.step, steps)])
            best = min(best, time.perf_counter() - began)
            await door.finish()
        per_step = lm.step.dispatch_count
        return _js(
            {
                "ok": {
                    "steps": steps,
                    "dispatchesPerStep": per_step,
                    "secondsPerStep": best / steps,
                    "secondsPerDispatch": best / (steps * per_step),
                    "gpuSecondsPerStep": gpu,
                }
            }
        )
    except BaseException as e:  # noqa: BLE001
        return _error(e)


def reset_stats() -> None:
    door = _state["door"]
    if door is not None:
        door.stats.update(submits=0, dispatches=0, submit_seconds=0.0)


def close() -> None:
    """Drop the engine and destroy the GPU device."""
    door, _state["door"], _state["engine"] = _state["door"], None, None
    if door is not None:
        door.close()
