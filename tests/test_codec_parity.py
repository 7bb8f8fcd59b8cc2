"""The GPU codec decoder against Transformers' one-shot decode, and against itself across chunk schedules.

Synthetic checkpoints (tests/reference/checkpoint.py) go through build_weights.py, then phonon_web's
Codec decodes random latents on lavapipe in chunks; the reference is
`PocketTTSAudioTokenizerModel.decode` on the same latents with PocketTTSProcessor.decode's fade-in.

Bounds:
* f32 build: max |GPU - reference| <= 1e-4 x max |reference|. The decoder is ~20 f32 matrix products
  deep with K up to 3584; f32 rounding in a different summation order gives ~1e-6 relative (measured
  7e-7 tiny, 1e-6 full), and the reference itself differs from a float64 decode by about as much. A
  wrong tap, phase, window edge or RoPE position gives errors of 1e-3 or more (a window of 249 or 251
  instead of 250 moves the full model's audio by 2e-3 at 24 frames).
* q8 build: int8 weights change the audio itself; the take must still correlate above 0.999 with the
  reference's (an SNR above 30 dB).
* Chunk schedules: bit-identical samples, since a chunk's size changes no summation order (it may
  change how a split-K GEMM is scheduled: split workgroups and a reduction, or a loop inside one).
* 24 frames are 384 rows at 200 Hz, past the attention window of 250, so the window and the ring count.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import build_weights as bw
from phonon_web.codec import Codec
from phonon_web.gpu.door import STORAGE
from phonon_web.manifest import load_manifest
from phonon_web.weights import Weights
from tests.gpu_helpers import download, upload

FRAMES = 24
SPF = 1920


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from tests.reference.checkpoint import load_reference, write_checkpoint

    folder = write_checkpoint(tmp_path_factory.mktemp("codec") / "tiny", tiny=True, seed=3)
    return folder, load_reference(folder).codec


def build(door, folder, tmp_path_factory, f32: bool):
    out = tmp_path_factory.mktemp("built")
    bw.convert(folder, out, f32=f32)
    manifest = load_manifest((out / "manifest.json").read_text())
    return manifest, Weights(door, manifest, (out / "weights.bin").read_bytes())


@pytest.fixture(scope="module")
def tiny_f32(door, tiny, tmp_path_factory):
    return build(door, tiny[0], tmp_path_factory, f32=True)


def latents(seed: int, frames: int = FRAMES) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal((frames, 32)) * 1.5).astype(np.float32)


def reference_audio(codec, lat: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        audio = codec.decode(torch.from_numpy(lat)[None]).audio_values[0, 0].double().numpy().copy()
    fade = torch.linspace(0, 1, int(0.005 * 24000))
    audio[: len(fade)] *= fade.double().numpy()
    return audio


def decode(door, codec: Codec, lat: np.ndarray, schedule: list[int]) -> np.ndarray:
    """One take: reset, write the latents, run the chunks, read the samples."""
    assert sum(schedule) == len(lat)
    door.write(codec.latents, 0, lat.tobytes())
    door.submit([(codec.reset, 1)] + [(codec.chunk[f], 1) for f in schedule])
    return download(door, codec.audio, count=len(lat) * SPF).astype(np.float64)


def schedules(frames: int, seed: int = 0) -> list[list[int]]:
    out = [[8] * (frames // 8), [1] * frames, [1, 2, 4] + [8] * ((frames - 7) // 8) + [(frames - 7) % 8 or 8]]
    rng = np.random.default_rng(seed)
    for _ in range(3):
        mix, left = [], frames
        while left:
            f = int(rng.choice([s for s in (1, 2, 4, 8) if s <= left]))
            mix.append(f)
            left -= f
        out.append(mix)
    return [s for s in out if sum(s) == frames]


def report(name: str, got: np.ndarray, want: np.ndarray) -> dict:
    err = got - want
    stats = {
        "max_abs_error": float(np.abs(err).max()),
        "reference_max": float(np.abs(want).max()),
        "relative": float(np.abs(err).max() / np.abs(want).max()),
        "correlation": float(np.corrcoef(got, want)[0, 1]),
        "snr_db": float(10 * math.log10((want**2).sum() / max((err**2).sum(), 1e-300))),
    }
    print(f"\n{name}: " + ", ".join(f"{k} {v:.7g}" for k, v in stats.items()))
    return stats


# ---------------------------------------------------------------------------------------------------
def test_tiny_f32_matches_the_reference_for_every_chunk_schedule(door, tiny, tiny_f32):
    manifest, weights = tiny_f32
    codec = Codec(door, weights, manifest.config, max_frames=32)
    lat = latents(0)
    want = reference_audio(tiny[1], lat)
    takes = [decode(door, codec, lat, s) for s in schedules(FRAMES)]
    for take in takes[1:]:
        np.testing.assert_array_equal(take, takes[0])
    stats = report("tiny f32", takes[0], want)
    assert stats["relative"] <= 1e-4
    assert set(codec.dispatches.values()) == {codec.dispatches[1]}


def test_splits_looped_in_a_workgroup_give_the_same_samples(door, tiny_f32):
    """SPLIT_LOOP (a chunk's split-K sums inside each tile's workgroup) against split workgroups and a
    reduction: the same samples bit for bit. The tiny model's one split GEMM has 2 tiles at 8 frames and
    1 below, so with split_loop_tiles=2 only chunks of 8 loop, and every schedule mixes both ways."""
    manifest, weights = tiny_f32
    plain = Codec(door, weights, manifest.config, max_frames=32)
    looped = Codec(door, weights, manifest.config, max_frames=32, split_loop_tiles=2)
    assert looped.dispatches[8] == plain.dispatches[8] - 1  # no reduction
    assert looped.dispatches[4] == plain.dispatches[4]
    lat = latents(4)
    want = decode(door, plain, lat, [8, 8, 8])
    for schedule in schedules(FRAMES, seed=4):
        np.testing.assert_array_equal(decode(door, looped, lat, schedule), want)


def test_tiny_q8_is_close_and_schedule_independent(door, tiny, tmp_path_factory):
    manifest, weights = build(door, tiny[0], tmp_path_factory, f32=False)
    assert {t.kind for t in manifest.tensors if t.name.startswith("mimi.")} >= {"f16"}
    codec = Codec(door, weights, manifest.config, max_frames=32)
    lat = latents(1)
    want = reference_audio(tiny[1], lat)
    first, *rest = [decode(door, codec, lat, s) for s in schedules(FRAMES, seed=1)[:3]]
    for take in rest:
        np.testing.assert_array_equal(take, first)
    stats = report("tiny q8", first, want)
    assert stats["correlation"] > 0.999 and stats["snr_db"] > 30


def test_reset_starts_a_take_as_a_fresh_codec_does(door, tiny_f32):
    manifest, weights = tiny_f32
    used = Codec(door, weights, manifest.config, max_frames=32)
    a, b = latents(5, 20), latents(6, 13)
    first_a = decode(door, used, a, [1, 2, 4, 8, 4, 1])
    after_a = decode(door, used, b, [1, 2, 8, 2])
    again_a = decode(door, used, a, [8, 8, 4])
    fresh = Codec(door, weights, manifest.config, max_frames=32)
    np.testing.assert_array_equal(after_a, decode(door, fresh, b, [4, 8, 1]))
    np.testing.assert_array_equal(again_a, first_a)


def test_state_words_latents_offset_and_chunks_past_the_end(door, tiny, tiny_f32):
    manifest, weights = tiny_f32
    state = upload(door, np.array([0, 0, 99, 5, 100, 0, 0, 0], np.uint32))
    lat = latents(7, 16)
    external = door.buffer(4 * 32 * 40, STORAGE, "latents")
    door.write(external, 4 * 32 * 4, lat.tobytes())  # the take starts at frame row 4 of the buffer
    codec = Codec(
        door,
        weights,
        manifest.config,
        max_frames=20,
        latents=external,
        latents_word=32 * 4,
        state=state,
        frame_word=2,
        end_word=3,
        available_word=4,
    )
    assert codec.latents is external and codec.state is state
    before = dict(door.created)
    door.submit([(codec.reset, 1), (codec.chunk[4], 1), (codec.chunk[2], 1)])
    assert download(door, state, np.uint32)[:5].tolist() == [0, 0, 6, 5, 100]
    audio = download(door, codec.audio)
    door.submit([(codec.chunk[8], 1)] * 3)  # frame 6 >= end 5: nothing moves, nothing is written
    assert download(door, state, np.uint32)[2] == 6
    np.testing.assert_array_equal(download(door, codec.audio), audio)
    assert (audio[6 * SPF :] == 0).all()
    want = reference_audio(tiny[1], lat)[: 6 * SPF]
    np.testing.assert_allclose(audio[: 6 * SPF], want, atol=1e-4 * np.abs(want).max())

    door.write(state, 0, np.array([0, 0, 0, 99, 1, 0, 0, 0], np.uint32).tobytes())  # 1 frame available
    door.submit([(codec.chunk[1], 1), (codec.chunk[1], 1)])
    assert download(door, state, np.uint32)[2] == 1
    assert {k: door.created[k] - before.get(k, 0) for k in door.created if k != "bytes"} == {
        "buffer": 5,  # the five readbacks above; none by the codec
        "bind_group": 0,
        "pipeline": 0,
    }


def test_full_size_f32_matches_the_reference(door, tmp_path_factory):
    from tests.reference.checkpoint import load_reference, write_checkpoint

    folder = write_checkpoint(tmp_path_factory.mktemp("codec") / "full", tiny=False, seed=0)
    reference = load_reference(folder).codec
    manifest, weights = build(door, folder, tmp_path_factory, f32=True)
    # chunks of 8 frames run the split-K GEMMs with 64 tiles or more as loops in their workgroups
    codec = Codec(door, weights, manifest.config, max_frames=FRAMES, split_loop_tiles=64)
    assert codec.dispatches[8] < codec.dispatches[1]
    lat = latents(2)
    want = reference_audio(reference, lat)
    takes = [decode(door, codec, lat, s) for s in ([8, 8, 8], [1, 2, 4, 8, 8, 1], [4, 2, 2, 8, 8])]
    for take in takes[1:]:
        np.testing.assert_array_equal(take, takes[0])
    stats = report("full f32", takes[0], want)
    assert stats["relative"] <= 1e-4
    print(f"full-size dispatches per chunk: {codec.dispatches}")
