"""bench/codec_costs.py on the tiny model (lavapipe): its variants really schedule the split-K sums two
ways, its sameness check compares real samples, and its timings come back."""

from __future__ import annotations

import pytest

from bench import codec_costs
from phonon_web.engine import Engine
from phonon_web.files import ModelFiles
from tests import gpu_helpers


@pytest.fixture(scope="module")
def engine(door, tiny_weights):
    return Engine(door, ModelFiles.from_folder(tiny_weights), max_frames=32)


def test_variants_schedule_split_k_two_ways_and_give_the_same_samples(engine):
    # the tiny codec's one split GEMM has 1 tile at 1 and 2 frames: loop_tiles 1 loops it, never does not
    codecs = codec_costs.codec_variants(engine, (1, 2), {"1": 1, "never": codec_costs.NEVER})
    assert codecs["1"].dispatches[2] == codecs["never"].dispatches[2] - 1
    codec_costs.make_frames(engine, 4)
    same = codec_costs.same_samples(engine, codecs, (1, 2))
    assert len(same) == 2 * 3 and all(same.values())


def test_a_different_decode_is_caught(engine, monkeypatch):
    codecs = codec_costs.codec_variants(engine, (1, 2), {"never": codec_costs.NEVER})
    codec_costs.make_frames(engine, 4)
    real_download = gpu_helpers.download
    calls = []

    def tampered(door, buffer, **options):
        audio = real_download(door, buffer, **options)
        calls.append(1)
        if len(calls) == 2:
            audio[100] += 1e-3
        return audio

    monkeypatch.setattr("tests.gpu_helpers.download", tampered)
    same = codec_costs.same_samples(engine, codecs, (1, 2))
    assert list(same.values()) == [True, False, True]


def test_timings_are_positive_for_every_variant_and_chunk(engine):
    assert "timestamp-query" in engine.door.features  # lavapipe has it, and the door asks for it
    codecs = codec_costs.codec_variants(engine, (1, 2), {"never": codec_costs.NEVER})
    codec_costs.make_frames(engine, 4)
    out = codec_costs.measure(engine, codecs, (1, 2), repeat=1, rounds=1)
    assert set(out["never"]) == {1, 2} and all(t[0] > 0 for t in out["never"].values())
