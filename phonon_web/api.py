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

from collections.abc import Callable
from pathlib import Path

from .engine import Engine
from .files import ModelFiles
from .gpu.door import Door, run_sync
from .speech import Speech


class Phonon:
    """A loaded model. Build one with `load()`."""

    def __init__(self, engine: Engine):
        self.engine = engine

    @property
    def voices(self) -> tuple[str, ...]:
        return self.engine.voices

    @property
    def sample_rate(self) -> int:
        return self.engine.sample_rate

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
    ) -> Speech:
        """Speak `text` and return its audio and word times; `on_audio(samples)` streams the chunks.

        Numbers, money, dates, units and abbreviations are spoken as words unless `normalize=False`;
        every word carries `start_char`/`end_char` into `text` either way."""
        return run_sync(
            self.engine.speak(
                text,
                voice=voice,
                speed=speed,
                seed=seed,
                on_audio=on_audio,
                on_progress=on_progress,
                normalize=normalize,
            )
        )


def load(
    weights: str | Path,
    *,
    voices: list[str] | None = None,
    door: Door | None = None,
    kv_f16: bool = True,
) -> Phonon:
    """Load a model folder made by build_weights.py onto the GPU (natively through wgpu-py)."""
    files = ModelFiles.from_folder(weights, voices)
    if door is None:
        from .gpu.native import NativeDoor

        door = NativeDoor()
    return Phonon(Engine(door, files, kv_f16=kv_f16))
