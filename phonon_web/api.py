"""The Python API: `load()` a converted model, then `speak()`.

    import phonon_web
    tts = phonon_web.load("build/web")                 # a folder written by build_weights.py
    speech = tts.speak("The birch canoe slid on the smooth planks.", voice="Delia", speed=1.0, seed=1)
    speech.audio        # array('f') of samples at speech.sample_rate (24000)
    speech.words        # [Timed(text, start, end), ...] in seconds; speech.tokens likewise

Natively the GPU is reached through wgpu-py (`pip install 'phonon_web[native]'`); in the browser the
same Engine runs behind navigator.gpu (see web/).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from .engine import Engine
from .errors import ClosedError, DeviceLostError
from .files import ModelFiles
from .gpu.door import Door, run_sync
from .request_checks import stop_check
from .speech import Speech


class Phonon:
    """A loaded model. Build one with `load()`.

    It keeps the model's files and a way to open a new GPU door (`new_door`): the request that meets a
    lost device raises DeviceLostError, and the next speak() rebuilds the engine on a new device (the
    weights uploaded again) and speaks."""

    def __init__(
        self, engine: Engine, *, files: ModelFiles | None = None, new_door: Callable[[], Door] | None = None
    ):
        self.engine: Engine | None = engine
        self._files = files
        self._new_door = new_door
        self.owns_door = False  # True when the door was opened here: close() then frees its device
        self._rebuild = False  # a request met a lost device: the next one builds a new engine
        self._voices = engine.voices
        self._sample_rate = engine.sample_rate
        self._lock = threading.Lock()  # one request at a time, from any thread

    @property
    def voices(self) -> tuple[str, ...]:
        return self._voices

    @property
    def sample_rate(self) -> int:
        return self._sample_rate

    def speak(
        self,
        text: str,
        *,
        voice: str | None = None,
        speed: float = 1.0,
        seed: int = 0,
        on_audio: Callable | None = None,
        on_progress: Callable[[int, int], object] | None = None,
        normalize: bool = True,
        max_frames: int | None = None,
        cancel: object = None,
    ) -> Speech:
        """Speak `text` and return its audio and word times; `on_audio(samples)` streams the chunks.

        Numbers, money, dates, units and abbreviations are spoken as words unless `normalize=False`;
        every word carries `start_char`/`end_char` into `text` either way. `seed` is any integer, taken
        modulo 2**32. `max_frames` caps each part's length (80 ms a frame: previews, tests).
        `cancel` (a threading.Event, or a function returning True to stop) ends the call with
        CancelledError at the next chunk; the model stays loaded and ready."""
        should_stop = stop_check(cancel)
        with self._lock:
            engine = self._ready_engine()
            speaking = engine.speak(
                text,
                voice=voice,
                speed=speed,
                seed=seed,
                on_audio=on_audio,
                on_progress=on_progress,
                normalize=normalize,
                max_frames=max_frames,
                should_stop=should_stop,
            )
            try:
                return run_sync(speaking)
            except DeviceLostError as error:
                self._rebuild = True
                if self._new_door is None:
                    raise self._cannot_rebuild(engine) from error
                raise

    def close(self) -> None:
        """Free the GPU memory; speak() raises ClosedError afterwards. Closing twice is harmless."""
        with self._lock:
            engine, self.engine, self._files = self.engine, None, None
            close = getattr(engine.door, "close", None) if engine is not None and self.owns_door else None
            if close is not None:
                close()

    def _ready_engine(self) -> Engine:
        engine = self.engine
        if engine is None:
            raise ClosedError("this model was closed: load it again with phonon_web.load() to speak")
        if not self._rebuild:
            return engine
        if self._new_door is None:
            raise self._cannot_rebuild(engine)
        # The old engine stays until the new one exists: if building fails, the next call tries again.
        self.engine = Engine(self._new_door(), self._files, **engine.options)
        self.owns_door, self._rebuild = True, False
        return self.engine

    @staticmethod
    def _cannot_rebuild(engine: Engine) -> DeviceLostError:
        return DeviceLostError(
            f"the GPU device was lost ({engine.door.lost}) and this model was loaded on a door it was "
            "given: load it again with phonon_web.load(), or pass new_door= to let it rebuild itself"
        )


def load(
    weights: str | Path,
    *,
    voices: list[str] | None = None,
    door: Door | None = None,
    new_door: Callable[[], Door] | None = None,
    kv_f16: bool = True,
    **engine_options,
) -> Phonon:
    """Load a model folder made by build_weights.py onto the GPU (natively through wgpu-py).

    `door` runs it on a door of yours; `new_door()` opens another after a lost device (by default a
    new wgpu-py device, unless `door` was given). `engine_options` go to Engine (max_frames,
    max_text_tokens, ...: tests and benchmarks)."""
    files = ModelFiles.from_folder(weights, voices)
    opened = door is None
    if opened:
        from .gpu.native import NativeDoor

        new_door = new_door or NativeDoor
        door = new_door()
    phonon = Phonon(Engine(door, files, kv_f16=kv_f16, **engine_options), files=files, new_door=new_door)
    phonon.owns_door = opened
    return phonon
