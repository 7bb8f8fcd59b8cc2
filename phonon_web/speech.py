"""What `speak()` returns, and writing it to disk (WAV audio, JSON word times)."""

from __future__ import annotations

import json
import sys
import wave
from array import array
from dataclasses import asdict, dataclass, field

from .timing import Timed

SAMPLE_RATE = 24000


@dataclass
class Speech:
    """One spoken text: mono float32 samples at 24 kHz, and the start and end of every word and token."""

    audio: array  # array('f')
    sample_rate: int = SAMPLE_RATE
    words: list[Timed] = field(default_factory=list)
    tokens: list[Timed] = field(default_factory=list)
    frames: int = 0  # model frames (80 ms each) kept over all parts
    first_audio_seconds: float | None = None  # wall time from the call to the first chunk of audio
    compute_seconds: float = 0.0  # wall time of the whole call

    @property
    def duration(self) -> float:
        return len(self.audio) / self.sample_rate

    @property
    def real_time_factor(self) -> float:
        """Seconds of speech per second of compute (30 means 10 s of speech took a third of a second)."""
        return self.duration / self.compute_seconds if self.compute_seconds > 0 else float("inf")

    def timings_json(self) -> str:
        return json.dumps(
            {"words": [asdict(w) for w in self.words], "tokens": [asdict(t) for t in self.tokens]},
            ensure_ascii=False,
            indent=1,
        )


def wav_bytes(samples, sample_rate: int = SAMPLE_RATE) -> bytes:
    """16-bit PCM WAV of float samples in [-1, 1] (clipped)."""
    pcm = array("h", (int(max(-1.0, min(1.0, s)) * 32767.0) for s in samples))
    if sys.byteorder != "little":
        pcm.byteswap()
    import io

    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(sample_rate)
        w.writeframes(pcm.tobytes())
    return out.getvalue()
