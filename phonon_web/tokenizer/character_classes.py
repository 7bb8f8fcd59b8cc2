"""Character classes as Oniguruma, Rust and the `regex` crate see them: White_Space, `\\w`, `\\d`, `\\s`,
`\\h` and Unicode general categories, as code point ranges and as Python `re` classes.
"""

from __future__ import annotations

import re

from .unicode_tables import _ranges

# Unicode White_Space: Rust's `char::is_whitespace`, the `regex` crate's and Oniguruma's `\s`
# (Python's `str.isspace` also counts U+001C..U+001F).
_WS = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + "\u2028\u2029\u202f\u205f\u3000"
)
_WS_SET = frozenset(_WS)
_MAX_CODE_POINT = 0x10FFFF


_GC_LEAVES = "Lu Ll Lt Lm Lo Mn Mc Me Nd Nl No Pc Pd Ps Pe Pi Pf Po Sm Sc Sk So Zs Zl Zp Cc Cf Co Cn".split()
_GC_GROUPS = {
    "L": ["Lu", "Ll", "Lt", "Lm", "Lo"],
    "LC": ["Lu", "Ll", "Lt"],
    "M": ["Mn", "Mc", "Me"],
    "N": ["Nd", "Nl", "No"],
    "P": ["Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"],
    "S": ["Sm", "Sc", "Sk", "So"],
    "Z": ["Zs", "Zl", "Zp"],
    "C": ["Cc", "Cf", "Co", "Cn", "Cs"],
}
_GC_LONG = {
    "letter": "L", "casedletter": "LC", "uppercaseletter": "Lu", "lowercaseletter": "Ll",
    "titlecaseletter": "Lt", "modifierletter": "Lm", "otherletter": "Lo", "mark": "M",
    "combiningmark": "M", "nonspacingmark": "Mn", "spacingmark": "Mc", "enclosingmark": "Me",
    "number": "N", "decimalnumber": "Nd", "letternumber": "Nl", "othernumber": "No",
    "punctuation": "P", "connectorpunctuation": "Pc", "dashpunctuation": "Pd", "openpunctuation": "Ps",
    "closepunctuation": "Pe", "initialpunctuation": "Pi", "finalpunctuation": "Pf",
    "otherpunctuation": "Po", "symbol": "S", "mathsymbol": "Sm", "currencysymbol": "Sc",
    "modifiersymbol": "Sk", "othersymbol": "So", "separator": "Z", "spaceseparator": "Zs",
    "lineseparator": "Zl", "paragraphseparator": "Zp", "other": "C", "control": "Cc", "format": "Cf",
    "surrogate": "Cs", "privateuse": "Co", "unassigned": "Cn",
}  # fmt: skip


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + 1:
            if b > out[-1][1]:
                out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def _complement(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out = []
    prev = 0
    for a, b in _merge(ranges):
        if a > prev:
            out.append((prev, a - 1))
        prev = b + 1
    if prev <= _MAX_CODE_POINT:
        out.append((prev, _MAX_CODE_POINT))
    return out


def _gc_ranges(name: str) -> list[tuple[int, int]] | None:
    if name == "Cs":
        return [(0xD800, 0xDFFF)]
    if name in _GC_LEAVES:
        return _ranges(name)
    if name in _GC_GROUPS:
        out: list[tuple[int, int]] = []
        for leaf in _GC_GROUPS[name]:
            out += _gc_ranges(leaf) or []
        return _merge(out)
    return None


def _class_ranges(kind: str) -> list[tuple[int, int]]:
    """Oniguruma's `\\w \\d \\s \\h` (lower case) and their complements (upper case)."""
    base = kind.lower()
    if base == "w":
        ranges = _ranges("w")
    elif base == "d":
        ranges = _ranges("Nd")
    elif base == "s":
        ranges = _merge([(ord(c), ord(c)) for c in _WS])
    elif base == "h":
        ranges = [(0x30, 0x39), (0x41, 0x46), (0x61, 0x66)]
    else:  # pragma: no cover - callers pass only these
        raise ValueError(kind)
    return _complement(ranges) if kind.isupper() else list(ranges)


def _py_class(ranges: list[tuple[int, int]]) -> str:
    """A Python character class matching exactly `ranges` (code point pairs)."""
    ranges = _merge(ranges)
    if not ranges:
        return "(?!)"
    parts = []
    for a, b in ranges:
        if a == b:
            parts.append(f"\\U{a:08x}")
        else:
            parts.append(f"\\U{a:08x}-\\U{b:08x}")
    return "[" + "".join(parts) + "]"


_WORD_CLASS: str | None = None


def _word_class() -> str:
    global _WORD_CLASS
    if _WORD_CLASS is None:
        _WORD_CLASS = _py_class(_ranges("w"))
    return _WORD_CLASS


_WORD_RE: re.Pattern[str] | None = None


# The `regex` crate's `\\w` (used for `single_word` added tokens) is Oniguruma's plus the two join controls
# and minus six Latin-1 digits/fractions (measured over every code point with tokenizers 0.23.3).
_REGEX_CRATE_WORD_EXTRA = frozenset("\u200c\u200d")
_REGEX_CRATE_NOT_WORD = frozenset("\u00b2\u00b3\u00b9\u00bc\u00bd\u00be")


def _is_word_char(ch: str) -> bool:
    """`\\w` of the `regex` crate (Alphabetic, Mark, Nd, Pc, Join_Control) for added-token checks."""
    global _WORD_RE
    if ch in _REGEX_CRATE_WORD_EXTRA:
        return True
    if ch in _REGEX_CRATE_NOT_WORD:
        return False
    if _WORD_RE is None:
        _WORD_RE = re.compile(_word_class())
    return _WORD_RE.match(ch) is not None
