"""NFC/NFD/NFKC/NFKD with the Unicode 9.0 behaviour of `unicode-normalization-alignments` 0.1.12.

Characters that became normalization-relevant after Unicode 9.0 are left alone, as that crate does.
`_crate_normalize` also gives the per-character changes the crate reports, which offsets depend on.
"""

from __future__ import annotations

import re
import unicodedata

from .unicode_tables import _ranges

_R9: frozenset[int] | None = None
_NEW_COMPONENTS: frozenset[int] | None = None
_SAFE: dict[str, bool] = {}
_COMPOSE: dict[tuple[str, str], str] | None = None
_SECOND: frozenset[str] | None = None
_HANGUL_S, _HANGUL_L, _HANGUL_V, _HANGUL_T = 0xAC00, 0x1100, 0x1161, 0x11A7
_HANGUL_VCOUNT, _HANGUL_TCOUNT = 21, 28
_HANGUL_NCOUNT = _HANGUL_VCOUNT * _HANGUL_TCOUNT
_HANGUL_SCOUNT = 19 * _HANGUL_NCOUNT


def _r9() -> frozenset[int]:
    global _R9
    if _R9 is None:
        s = set()
        for a, b in _ranges("R9"):
            s.update(range(a, b + 1))
        _R9 = frozenset(s)
    return _R9


def _new_components() -> frozenset[int]:
    """Characters outside the Unicode 9.0 set that the running `unicodedata` composes canonically."""
    global _NEW_COMPONENTS, _COMPOSE, _SECOND
    if _NEW_COMPONENTS is None:
        r9 = _r9()
        decomposition = unicodedata.decomposition
        comps = set()
        pairs: dict[tuple[str, str], str] = {}
        nfc = unicodedata.normalize
        for cp in range(0x30000):
            d = decomposition(chr(cp))
            if not d or d[0] == "<":
                continue
            parts = d.split()
            if len(parts) != 2:
                continue
            first, second = chr(int(parts[0], 16)), chr(int(parts[1], 16))
            if cp in r9:
                if nfc("NFC", first + second) == chr(cp):
                    pairs[(first, second)] = chr(cp)
            else:
                comps.update(int(p, 16) for p in parts)
        _NEW_COMPONENTS = frozenset(c for c in comps if c not in r9)
        _COMPOSE = pairs
        second = {b for _, b in pairs}
        second.update(chr(c) for c in range(_HANGUL_V, _HANGUL_V + _HANGUL_VCOUNT))
        second.update(chr(c) for c in range(_HANGUL_T + 1, _HANGUL_T + _HANGUL_TCOUNT))
        _SECOND = frozenset(second)
    return _NEW_COMPONENTS


def _is_safe(ch: str) -> bool:
    """Whether the running `unicodedata` treats `ch` as Unicode 9.0 did (or as an inert character)."""
    safe = _SAFE.get(ch)
    if safe is None:
        cp = ord(ch)
        if cp in _r9():
            safe = True
        else:
            safe = not (unicodedata.combining(ch) or unicodedata.decomposition(ch) or cp in _new_components())
        _SAFE[ch] = safe
    return safe


def _is_stable(ch: str) -> bool:
    """ASCII, or a safe starter without decomposition that never composes with a preceding character."""
    if ch.isascii():
        return True
    if not _is_safe(ch) or unicodedata.combining(ch) or unicodedata.decomposition(ch):
        return False
    cp = ord(ch)
    if _HANGUL_S <= cp < _HANGUL_S + _HANGUL_SCOUNT:
        return False
    _new_components()
    return ch not in _SECOND  # type: ignore[operator]


def _unicode_normalize(form: str, s: str) -> str:
    unsafe = [c for c in set(s) if not _is_safe(c)]
    if not unsafe:
        return unicodedata.normalize(form, s)
    # Characters that Unicode 9.0 did not know are inert: cut the text around them.
    cut = re.compile("[" + "".join(re.escape(c) for c in unsafe) + "]")
    out = []
    prev = 0
    for m in cut.finditer(s):
        out.append(unicodedata.normalize(form, s[prev : m.start()]))
        out.append(m.group(0))
        prev = m.end()
    out.append(unicodedata.normalize(form, s[prev:]))
    return "".join(out)


def _ccc(ch: str) -> int:
    return unicodedata.combining(ch) if _is_safe(ch) else 0


def _decompose_char(ch: str, compat: bool, out: list[str]) -> None:
    cp = ord(ch)
    if _HANGUL_S <= cp < _HANGUL_S + _HANGUL_SCOUNT:
        index = cp - _HANGUL_S
        out.append(chr(_HANGUL_L + index // _HANGUL_NCOUNT))
        out.append(chr(_HANGUL_V + (index % _HANGUL_NCOUNT) // _HANGUL_TCOUNT))
        if index % _HANGUL_TCOUNT:
            out.append(chr(_HANGUL_T + index % _HANGUL_TCOUNT))
        return
    d = unicodedata.decomposition(ch) if _is_safe(ch) else ""
    if not d or (d[0] == "<" and not compat):
        out.append(ch)
        return
    if d[0] == "<":
        d = d.split(">", 1)[1]
    for h in d.split():
        _decompose_char(chr(int(h, 16)), compat, out)


def _compose_pair(a: str, b: str) -> str | None:
    ca, cb = ord(a), ord(b)
    if _HANGUL_L <= ca < _HANGUL_L + 19 and _HANGUL_V <= cb < _HANGUL_V + _HANGUL_VCOUNT:
        return chr(_HANGUL_S + ((ca - _HANGUL_L) * _HANGUL_VCOUNT + cb - _HANGUL_V) * _HANGUL_TCOUNT)
    if (
        _HANGUL_S <= ca < _HANGUL_S + _HANGUL_SCOUNT
        and (ca - _HANGUL_S) % _HANGUL_TCOUNT == 0
        and _HANGUL_T < cb < _HANGUL_T + _HANGUL_TCOUNT
    ):
        return chr(ca + cb - _HANGUL_T)
    _new_components()
    return _COMPOSE.get((a, b))  # type: ignore[union-attr]


def _crate_normalize(s: str, compat: bool, compose: bool) -> list[tuple[str, int]]:
    """(char, change) pairs exactly as `unicode-normalization-alignments` yields them (used for offsets)."""
    # Decompositions: each input char's first output has change 0, the others +1; runs of non-starters
    # are stably sorted by combining class.
    buffer: list[tuple[int, str, int]] = []
    ready = 0
    out: list[tuple[str, int]] = []
    for ch in s:
        parts: list[str] = []
        _decompose_char(ch, compat, parts)
        for k, d in enumerate(parts):
            cls = _ccc(d)
            if cls == 0:
                buffer[ready:] = sorted(buffer[ready:], key=lambda item: item[0])
                out.extend((c, chg) for _, c, chg in buffer)
                buffer = []
                ready = 0
            buffer.append((cls, d, 0 if k == 0 else 1))
    buffer[ready:] = sorted(buffer[ready:], key=lambda item: item[0])
    out.extend((c, chg) for _, c, chg in buffer)
    if not compose:
        return out
    # Recomposition, following the crate's state machine.
    result: list[tuple[str, int]] = []
    pending: list[tuple[str, int]] = []
    composee: tuple[str, int] | None = None
    last_ccc: int | None = None
    for ch, change in out:
        cls = _ccc(ch)
        if composee is None:
            if cls != 0:
                result.append((ch, change))
                continue
            composee = (ch, change)
            continue
        if last_ccc is None:
            r = _compose_pair(composee[0], ch)
            if r is not None:
                composee = (r, composee[1] + change - 1)
                continue
            if cls == 0:
                result.append(composee)
                composee = (ch, change)
                continue
            pending.append((ch, change))
            last_ccc = cls
            continue
        if last_ccc >= cls:
            if cls == 0:
                result.append(composee)
                result.extend(pending)
                pending = []
                composee = (ch, change)
                last_ccc = None
                continue
            pending.append((ch, change))
            last_ccc = cls
            continue
        r = _compose_pair(composee[0], ch)
        if r is not None:
            composee = (r, composee[1] + change - 1)
            continue
        pending.append((ch, change))
        last_ccc = cls
    if composee is not None:
        result.append(composee)
    result.extend(pending)
    return result
