"""The reference's generation loop written out step by step, so that it can take the engine's noise.

`GradiumPhononTTSForConditionalGeneration.generate` draws its noise with torch.randn; this loop does
what its `_sample` does (prefill the prompt, then per frame: end-of-speech logit and flow-head sample
from the last hidden state, feed the latent back through `audio_latents`) with noise from a function,
and keeps what the parity tests compare: each frame's hidden state, end-of-speech logit, latent
(normalised and denormalised) and one attention head's probabilities over the text tokens.

The prompt is what PocketTTSProcessor's chat template gives for Gradium's checkpoint (no voice BOS):
the voice's rows as `audio_prompt_token_id` placeholders, the text ids, then `audio_bos_token_id`.
The stop rules are PocketTTSEosThresholdCriteria's and the frame budget generate()'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch


@dataclass
class ReferenceTake:
    frames: int  # frames kept (the end-of-speech frame and its tail included)
    hidden: np.ndarray  # [frames, hidden]: the normalised last hidden state of each frame
    eos_logits: np.ndarray  # [frames]
    latents: np.ndarray  # [frames, latent]: normalised (what goes back into the backbone)
    audio_latents: np.ndarray  # [frames, latent]: denormalised (what the codec decodes)
    alignment: np.ndarray  # [frames, text]: attention of (align_layer, align_head) over the text tokens
    noise: np.ndarray  # [frames, latent]: the noise each frame used
    eos_frame: int | None  # the frame whose logit crossed the threshold


def budget_for(text_tokens: int, frame_rate: float = 12.5) -> int:
    return math.ceil((text_tokens / 3 + 2) * frame_rate)


@torch.no_grad()
def run_reference(
    lm,
    voice: torch.Tensor,
    text_ids: list[int],
    noise: Callable[[int], np.ndarray],
    *,
    duration_delta: float = 0.0,
    frames_after_eos: int = 1,
    min_frames: int = 6,
    eos_threshold: float = -4.0,
    budget: int | None = None,
    align_layer: int = 3,
    align_head: int = 0,
) -> ReferenceTake:
    """One take of the reference: `noise(frame)` gives that frame's noise, already scaled by
    sqrt(temperature)."""
    config = lm.config
    config.duration_delta = float(duration_delta)  # read by get_condition_embeds at every call
    lm.set_attn_implementation("eager")  # output_attentions needs the eager path
    voice_rows = voice.shape[0]
    text = len(text_ids)
    if budget is None:
        budget = budget_for(text, config.frame_rate)
    prompt = [config.audio_prompt_token_id] * voice_rows + list(text_ids) + [config.audio_bos_token_id]
    out = lm(
        input_ids=torch.tensor([prompt]),
        audio_prompt_latents=voice[None].float(),
        use_cache=True,
        output_attentions=True,
    )
    cache = out.cache
    hidden, eos, latents, align, noises = [], [], [], [], []
    remaining, eos_frame, frame = -1, None, 0
    while True:
        h = out.last_hidden_state[:, -1, :]
        logit = float(out.logits[0, -1, 0])
        attention = out.attentions[align_layer][0, align_head, -1, voice_rows : voice_rows + text]
        n = torch.from_numpy(np.asarray(noise(frame), dtype=np.float32))[None]
        z = lm.sample_latent(h, n, 1)
        hidden.append(h[0].numpy().copy())
        eos.append(logit)
        latents.append(z[0].numpy().copy())
        align.append(attention.numpy().copy())
        noises.append(n[0].numpy().copy())
        # PocketTTSEosThresholdCriteria, then generate()'s budget
        if remaining < 0 and logit > eos_threshold and frame >= min_frames:
            remaining, eos_frame = frames_after_eos, frame
        done = remaining == 0
        if remaining > 0:
            remaining -= 1
        frame += 1
        if done or frame >= budget:
            break
        out = lm(
            input_ids=torch.tensor([[config.audio_latent_token_id]]),
            audio_latents=z[:, None, :],
            cache=cache,
            use_cache=True,
            output_attentions=True,
        )
    latents_np = np.stack(latents)
    audio = lm.denormalize_latents(torch.from_numpy(latents_np)).numpy()
    return ReferenceTake(
        frames=frame,
        hidden=np.stack(hidden),
        eos_logits=np.array(eos, dtype=np.float32),
        latents=latents_np,
        audio_latents=audio,
        alignment=np.stack(align),
        noise=np.stack(noises),
        eos_frame=eos_frame,
    )
