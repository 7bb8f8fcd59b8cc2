"""Reading the JSON of a tokenizer file with serde_json's float parsing.

`tokenizers` reads scores with serde_json, which is not always correctly rounded; we read them the same way.
"""

from __future__ import annotations

import json
import re

from ..errors import TokenizerError

_U64_MAX = (1 << 64) - 1
_I32_MAX = (1 << 31) - 1
_POW10 = [float(f"1e{i}") for i in range(309)]
_NUMBER_RE = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\Z")


def _overflows(value: int, digit: int, limit: int) -> bool:
    return value >= limit // 10 and (value > limit // 10 or digit > limit % 10)


def _f64_from_parts(positive: bool, significand: int, exponent: int) -> float:
    f = float(significand)
    while True:
        index = abs(exponent)
        if index < len(_POW10):
            if exponent >= 0:
                f *= _POW10[index]
                if f == float("inf"):
                    raise TokenizerError("number out of range in tokenizer file")
            else:
                f /= _POW10[index]
            break
        if f == 0.0:
            break
        if exponent >= 0:
            raise TokenizerError("number out of range in tokenizer file")
        f /= 1e308
        exponent += 308
    return f if positive else -f


def _serde_f64(text: str) -> float:
    """The f64 that serde_json (without its `float_roundtrip` feature) reads from a JSON number."""
    if not _NUMBER_RE.match(text):
        raise TokenizerError(f"invalid number {text!r} in tokenizer file")
    positive = not text.startswith("-")
    i = 0 if positive else 1
    n = len(text)
    significand = 0
    exponent = 0
    if text[i] == "0":
        i += 1
    else:
        while i < n and text[i].isdigit():
            digit = ord(text[i]) - 48
            if _overflows(significand, digit, _U64_MAX):
                # parse_long_integer: further integer digits only raise the exponent
                while i < n and text[i].isdigit():
                    exponent += 1
                    i += 1
                break
            significand = significand * 10 + digit
            i += 1
        else:
            if i == n:  # a plain integer: u64 or i64, converted with `as f64`
                return float(significand) if positive else -float(significand)
    if i < n and text[i] == ".":
        i += 1
        after = 0
        while i < n and text[i].isdigit():
            digit = ord(text[i]) - 48
            if _overflows(significand, digit, _U64_MAX):
                while i < n and text[i].isdigit():  # parse_decimal_overflow: ignore the rest
                    i += 1
                break
            significand = significand * 10 + digit
            after -= 1
            i += 1
        exponent += after
    if i < n and text[i] in "eE":
        i += 1
        positive_exp = True
        if text[i] in "+-":
            positive_exp = text[i] == "+"
            i += 1
        exp = 0
        while i < n:
            digit = ord(text[i]) - 48
            if _overflows(exp, digit, _I32_MAX):
                if significand != 0 and positive_exp:
                    raise TokenizerError("number out of range in tokenizer file")
                return 0.0 if positive else -0.0
            exp = exp * 10 + digit
            i += 1
        exponent = exponent + exp if positive_exp else exponent - exp
        exponent = max(-(1 << 31), min(_I32_MAX, exponent))  # saturating i32
    return _f64_from_parts(positive, significand, exponent)


def _parse_json(text: str) -> object:
    def bad_constant(name: str) -> object:
        raise TokenizerError(f"invalid JSON value {name} in tokenizer file")

    def parse_int(s: str) -> object:
        digits = s.lstrip("-")
        if len(digits) > 19:
            return _serde_f64(s)
        return int(s)

    try:
        return json.loads(text, parse_float=_serde_f64, parse_int=parse_int, parse_constant=bad_constant)
    except json.JSONDecodeError as exc:
        raise TokenizerError(f"tokenizer file is not valid JSON: {exc}") from None
    except RecursionError:
        raise TokenizerError("tokenizer file is nested too deeply") from None


def _as_f64(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TokenizerError(f"{what} must be a number, got {value!r}")
    if isinstance(value, int):
        if value > _U64_MAX or value < -_U64_MAX:  # pragma: no cover - parse_int turns these into floats
            raise TokenizerError(f"{what} is out of range")
        return float(value)
    return float(value)
