"""A whole take of the reference, fed the engine's noise: the language model's loop, then the codec's
one-shot decode with the processor's fade-in. What the engine's takes are compared against."""

from __future__ import annotations

import numpy as np
import torch

from phonon_web.lm import noise

from .audio_metrics import fade_in
from .lm_loop import run_reference


def reference_take(
    ref, engine, voice: str, ids: list[int], words: int, seed: int, budget: int | None = None
) -> tuple[int, np.ndarray]:
    """(frames kept, audio) of the reference `ref` (tests.reference.checkpoint.load_reference) speaking
    `ids` in `voice` with the noise the engine draws for `seed`, under the engine's checkpoint's rules
    (`budget` lowers the frame budget, as speak()'s `max_frames` does)."""
    generation = engine.manifest.generation_config or {}
    temperature = float(generation.get("temperature", 0.3))
    take = run_reference(
        ref.lm,
        ref.voices[voice],
        ids,
        lambda frame: np.asarray(noise(seed, frame, temperature), dtype=np.float32),
        frames_after_eos=engine.lm.frames_after_eos_for(words),
        min_frames=int(generation.get("min_frames_before_eos", 6)),
        eos_threshold=float(generation.get("eos_threshold", -4.0)),
        align_layer=engine.lm.align_layer,
        align_head=engine.lm.align_head,
        budget=budget,
    )
    with torch.no_grad():
        audio = ref.codec.decode(torch.from_numpy(take.audio_latents)[None].float()).audio_values
    return take.frames, fade_in(audio.reshape(-1).numpy(), engine.codec.fade_samples)
