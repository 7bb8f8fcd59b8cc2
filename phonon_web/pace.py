"""Speaking speed and the model's `duration_delta` condition.

The model has no speed knob. It has a scalar condition, `duration_delta` (dd), embedded sinusoidally
(`duration_embedding`), projected to the hidden size and added to the BOS row and to every generated
latent row. Positive dd makes speech slower, negative dd faster.

Clip lengths measured on Gradium's weights (recorded in the project's design notes) give three points:
speed 1.0 at dd 0, 0.77x at dd +0.6 and 1.3x at dd -0.45. Below -0.45 speech gets no faster, so 1.3x is
the fastest speed we offer and 0.77x the slowest (nothing beyond +0.6 was measured).

`SPEED_TABLE` holds those three points and, between them, points on a smooth monotone curve:
    ln(speed) = A * dd + B * dd**2,  A = -0.51985,  B = 0.14040,
the one quadratic in dd (in log speed) through the three measured points. THE POINTS IN BETWEEN ARE
INTERPOLATED, NOT MEASURED, until someone measures clip lengths at those values on the real weights.
The curve's slope d ln(speed)/d dd = A + 2 B dd is negative over the whole range [-0.45, 0.6]
(-0.646 at -0.45, -0.351 at 0.6), so the table is strictly monotone.

`duration_delta_for_speed` interpolates the table linearly in speed.
"""

from __future__ import annotations

import math
import numbers

from .errors import OptionError

MIN_SPEED = 0.77
MAX_SPEED = 1.3

# Coefficients of the curve that the in-between points of SPEED_TABLE were computed from.
CURVE_A = -0.5198500879912321
CURVE_B = 0.14040357961203262

# (speed, duration_delta), speed increasing, duration_delta decreasing. Measured on real weights:
# (0.77, 0.6), (1.0, 0.0), (1.3, -0.45). All other rows are interpolated on the curve above (dd rounded
# to 4 decimals), not measured.
SPEED_TABLE: tuple[tuple[float, float], ...] = (
    (0.77, 0.6),  # measured
    (0.80, 0.4956),
    (0.85, 0.3447),
    (0.90, 0.2152),
    (0.95, 0.1014),
    (1.00, 0.0),  # measured (the model's default)
    (1.05, -0.0916),
    (1.10, -0.1751),
    (1.15, -0.2517),
    (1.20, -0.3226),
    (1.25, -0.3885),
    (1.30, -0.45),  # measured; more negative values make speech no faster
)


def check_speed(speed: object) -> float:
    """`speed` as a float, or OptionError if it is not a real number in [MIN_SPEED, MAX_SPEED]."""
    allowed = f"a number from {MIN_SPEED} (slowest) to {MAX_SPEED} (fastest), 1.0 being normal speed"
    if isinstance(speed, bool) or not isinstance(speed, numbers.Real):
        raise OptionError(f"speed must be {allowed}; got {speed!r} of type {type(speed).__name__}")
    value = float(speed)
    if not math.isfinite(value):
        raise OptionError(f"speed must be {allowed}; got {speed!r}")
    if not MIN_SPEED <= value <= MAX_SPEED:
        raise OptionError(f"speed must be {allowed}; got {speed!r}")
    return value


def duration_delta_for_speed(speed: float) -> float:
    """The `duration_delta` that makes the model speak at `speed` times its normal rate.

    Piecewise-linear interpolation of SPEED_TABLE in speed: monotone decreasing, exact at the table's
    points (0.0 at speed 1.0). Raises OptionError for anything but a real number in
    [MIN_SPEED, MAX_SPEED].
    """
    s = check_speed(speed)
    for (s0, d0), (s1, d1) in zip(SPEED_TABLE, SPEED_TABLE[1:], strict=False):
        if s <= s1:
            if s == s1:
                return d1
            return d0 + (d1 - d0) * (s - s0) / (s1 - s0)
    return SPEED_TABLE[-1][1]  # not reached: check_speed bounds s by the table's last speed


def duration_embedding(
    duration_delta: float, dim: int, scale: float = 1000.0, max_period: float = 10000.0
) -> list[float]:
    """The sinusoidal embedding of the `duration_delta` condition, `dim` values.

    As the reference (`get_condition_embeds` in Transformers' gradium_phonon_tts) computes it:
        half = dim // 2
        exponent_i = i / (half - 1), i = 0 .. half - 1      (note: half - 1, not half)
        phase_i = scale * duration_delta / max_period ** exponent_i
        embedding = [cos(phase_0), ..., cos(phase_{half-1}), sin(phase_0), ..., sin(phase_{half-1})]
    The reference does this in float32; here it is float64 (the two differ by float32 rounding, at most
    a few 1e-5 for |duration_delta| <= 0.6).
    """
    if isinstance(dim, bool) or not isinstance(dim, int) or dim < 4 or dim % 2:
        raise ValueError(f"dim must be an even int of at least 4, got {dim!r}")
    if isinstance(duration_delta, bool) or not isinstance(duration_delta, numbers.Real):
        raise ValueError(f"duration_delta must be a real number, got {duration_delta!r}")
    dd = float(duration_delta)
    if not math.isfinite(dd):
        raise ValueError(f"duration_delta must be finite, got {duration_delta!r}")
    half = dim // 2
    base = float(scale) * dd
    phases = [base / float(max_period) ** (i / (half - 1)) for i in range(half)]
    return [math.cos(p) for p in phases] + [math.sin(p) for p in phases]
