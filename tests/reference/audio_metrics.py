"""Comparing two takes of audio: log-mel distance and waveform correlation (bench/parity.py, tests).

The log-mel distance is the mean absolute difference, in dB, between the two takes' 80-band mel power
spectrograms (1024-point frames every 256 samples at 24 kHz, each floored 80 dB below its loudest
cell); the correlation is Pearson's over the samples both takes have.
"""

from __future__ import annotations

import numpy as np


def mel_filterbank(sample_rate: int, n_fft: int, bands: int) -> np.ndarray:
    """Triangular filters on the HTK mel scale, [bands, n_fft // 2 + 1]."""

    def mel(f):
        return 2595.0 * np.log10(1.0 + f / 700.0)

    def hz(m):
        return 700.0 * (10.0 ** (m / 2595.0) - 1.0)

    edges = hz(np.linspace(mel(0.0), mel(sample_rate / 2), bands + 2))
    bins = np.linspace(0, sample_rate / 2, n_fft // 2 + 1)
    filters = np.zeros((bands, bins.size))
    for b in range(bands):
        lo, mid, hi = edges[b : b + 3]
        rising = (bins - lo) / (mid - lo)
        falling = (hi - bins) / (hi - mid)
        filters[b] = np.clip(np.minimum(rising, falling), 0.0, None)
    return filters


def log_mel(audio: np.ndarray, sample_rate: int = 24000, n_fft: int = 1024, hop: int = 256) -> np.ndarray:
    """Log-mel power in dB, floored 80 dB below the loudest cell, [frames, 80]."""
    if audio.size < n_fft:
        audio = np.pad(audio, (0, n_fft - audio.size))
    window = np.hanning(n_fft)
    count = 1 + (audio.size - n_fft) // hop
    frames = np.stack([audio[i * hop : i * hop + n_fft] * window for i in range(count)])
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    mel = power @ mel_filterbank(sample_rate, n_fft, 80).T
    db = 10.0 * np.log10(np.maximum(mel, 1e-12))
    return np.maximum(db, db.max() - 80.0)


def compare(a: np.ndarray, b: np.ndarray) -> dict:
    n = min(a.size, b.size)
    a, b = a[:n].astype(np.float64), b[:n].astype(np.float64)
    correlation = float(np.corrcoef(a, b)[0, 1]) if n > 1 and a.std() > 0 and b.std() > 0 else 0.0
    return {"log_mel_db": float(np.abs(log_mel(a) - log_mel(b)).mean()), "correlation": correlation}


def fade_in(audio: np.ndarray, samples: int) -> np.ndarray:
    """The reference processor's linear fade-in of a take's first samples."""
    out = audio.copy()
    n = min(samples, out.size)
    out[:n] *= np.arange(n) / samples
    return out
