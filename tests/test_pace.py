"""Tests of phonon_web.pace: speaking speed and the duration_delta condition."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from phonon_web.errors import OptionError, PhononError
from phonon_web.pace import (
    CURVE_A,
    CURVE_B,
    MAX_SPEED,
    MIN_SPEED,
    SPEED_TABLE,
    duration_delta_for_speed,
    duration_embedding,
)


def test_measured_points_are_in_the_table_and_hit_exactly():
    for speed, dd in ((0.77, 0.6), (1.0, 0.0), (1.3, -0.45)):
        assert (speed, dd) in SPEED_TABLE
        assert duration_delta_for_speed(speed) == dd
    assert MIN_SPEED == SPEED_TABLE[0][0] == 0.77
    assert MAX_SPEED == SPEED_TABLE[-1][0] == 1.3


def test_table_is_strictly_monotone():
    speeds = [s for s, _ in SPEED_TABLE]
    dds = [d for _, d in SPEED_TABLE]
    assert speeds == sorted(speeds) and len(set(speeds)) == len(speeds)
    assert all(a > b for a, b in zip(dds, dds[1:], strict=False))


def test_in_between_points_lie_on_the_stated_curve():
    for speed, dd in SPEED_TABLE:
        assert math.exp(CURVE_A * dd + CURVE_B * dd * dd) == pytest.approx(speed, abs=1e-4)
    # The curve's slope in dd is negative over the whole range, so it is monotone.
    assert CURVE_A + 2 * CURVE_B * 0.6 < 0 and CURVE_A + 2 * CURVE_B * -0.45 < 0


def test_interpolation_is_linear_between_points():
    (s0, d0), (s1, d1) = SPEED_TABLE[5], SPEED_TABLE[6]
    mid = (s0 + s1) / 2
    assert duration_delta_for_speed(mid) == pytest.approx((d0 + d1) / 2, abs=1e-12)


@given(st.floats(MIN_SPEED, MAX_SPEED), st.floats(MIN_SPEED, MAX_SPEED))
def test_monotone_decreasing_and_bounded(a, b):
    lo, hi = sorted((a, b))
    assert duration_delta_for_speed(lo) >= duration_delta_for_speed(hi)
    assert -0.45 <= duration_delta_for_speed(a) <= 0.6


def test_accepts_ints_and_other_reals():
    assert duration_delta_for_speed(1) == 0.0
    assert duration_delta_for_speed(Fraction(1, 1)) == 0.0


@pytest.mark.parametrize(
    "bad", [True, False, "1.0", None, math.nan, math.inf, -math.inf, [1.0], 0.76, 1.31, 0.0, -1.0, 2]
)
def test_bad_speed_raises_option_error_naming_range_and_value(bad):
    with pytest.raises(OptionError) as info:
        duration_delta_for_speed(bad)
    message = str(info.value)
    assert "0.77" in message and "1.3" in message
    assert repr(bad) in message
    assert isinstance(info.value, PhononError)


def reference_embedding(dd: float, dim: int, dtype: torch.dtype, scale=1000.0, max_period=10000.0):
    """The lines of get_condition_embeds in Transformers' gradium_phonon_tts, at a chosen dtype."""
    half_dim = dim // 2
    exponents = torch.arange(half_dim, dtype=dtype) / (half_dim - 1)
    phases = scale * dd
    phases = phases / max_period**exponents
    return torch.cat([phases.cos(), phases.sin()])


@pytest.mark.parametrize("dd", [0.0, 0.6, -0.45, 0.1014, -0.2517, 1e-3])
@pytest.mark.parametrize("dim", [128, 16, 4])
def test_duration_embedding_matches_reference(dd, dim):
    ours = torch.tensor(duration_embedding(dd, dim), dtype=torch.float64)
    assert ours.shape == (dim,)
    exact = reference_embedding(dd, dim, torch.float64)
    assert torch.allclose(ours, exact, rtol=0, atol=1e-12)
    # The model computes it in float32: within float32 rounding of phases up to 600 rad.
    f32 = reference_embedding(dd, dim, torch.float32).double()
    assert torch.allclose(ours, f32, rtol=0, atol=2e-4)


def test_duration_embedding_uses_half_minus_one():
    emb = duration_embedding(0.5, 8, scale=1.0, max_period=10.0)
    # half = 4, exponents 0, 1/3, 2/3, 1: the last phase is 0.5 / 10 (half would give 0.5 / 10**0.75).
    assert emb[3] == pytest.approx(math.cos(0.05))
    assert emb[7] == pytest.approx(math.sin(0.05))
    assert emb[0] == pytest.approx(math.cos(0.5)) and emb[4] == pytest.approx(math.sin(0.5))


def test_duration_embedding_at_zero_is_ones_then_zeros():
    assert duration_embedding(0.0, 128) == [1.0] * 64 + [0.0] * 64


@pytest.mark.parametrize("dim", [0, 2, 3, 127, -4, 4.0, True])
def test_duration_embedding_rejects_bad_dim(dim):
    with pytest.raises(ValueError):
        duration_embedding(0.1, dim)


@pytest.mark.parametrize("dd", [math.nan, math.inf, "0.1", None, True])
def test_duration_embedding_rejects_bad_delta(dd):
    with pytest.raises(ValueError):
        duration_embedding(dd, 128)
