"""Normalizers (`Sequence`, `Replace`, `Prepend`, `Strip`, `Lowercase`, NFx) and building them from JSON."""

from __future__ import annotations

from ..errors import TokenizerError, UnsupportedTokenizerComponent
from .character_classes import _WS
from .config import _get, _type_of, _unsupported
from .patterns import _pattern, _Regex
from .unicode_normalization import _crate_normalize, _is_stable, _unicode_normalize
from .unicode_tables import _tables

# Normalizers. Each has `apply(s) -> s` and `track(s, z, w) -> (s, z, w)`, which also follows two facts about
# `tokenizers`' alignments (character -> byte range of the original text) that change ids:
#
# - `z`: which leading characters come from offset 0 of the original text (what `prepend_scheme: "first"`
#   looks at). z < 0: none can (this piece does not start the text); z >= 0: the piece starts the text
#   and its first z characters are aligned to offset 0.
# - `w`: how many leading characters have the empty alignment (0, 0). Only text inserted at the very start
#   gets it (a regex's empty match at 0, `Prepend("")`). `tokenizers` then mis-handles every later NFC/NFD/
#   NFKC/NFKD, Lowercase or (stripping) Strip: it panics or repeats those characters. We refuse instead.


def _misaligned(name: str) -> UnsupportedTokenizerComponent:
    return UnsupportedTokenizerComponent(
        f"normalizer {name} after text inserted at the very start (an empty regex match at 0 or an empty "
        "Prepend): tokenizers mis-aligns this text (it panics or repeats characters), so phonon_web's "
        "tokenizer refuses it"
    )


def _prefix_count(spans, k: int, content_len: int) -> int:
    """How many leading output characters of a Replace inherit an alignment that the first `k` input
    characters share (replacement characters copy the alignment of the last replaced character, or of
    the character before an empty match; an empty match at 0 gives (0, 0))."""
    count = 0
    pos = 0
    for start, end in spans:
        if start > k:
            break
        count += start - pos
        if end > k:
            return count
        count += content_len
        pos = end
    return count + max(0, k - pos)


class _Normalizer:
    # Whether this normalizer can give leading characters the (0, 0) alignment / goes through
    # `NormalizedString::transform`, which then mis-aligns.
    can_insert_at_start = False
    uses_transform = False

    def apply(self, s: str) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    def track(self, s: str, z: int, w: int) -> tuple[str, int, int]:  # pragma: no cover - interface
        raise NotImplementedError

    def flat(self) -> list[_Normalizer]:
        return [self]


class _SequenceNormalizer(_Normalizer):
    def __init__(self, items: list[_Normalizer]) -> None:
        self.items = items

    def apply(self, s: str) -> str:
        for item in self.items:
            s = item.apply(s)
        return s

    def track(self, s: str, z: int, w: int) -> tuple[str, int, int]:
        for item in self.items:
            s, z, w = item.track(s, z, w)
        return s, z, w

    def flat(self) -> list[_Normalizer]:
        return [leaf for item in self.items for leaf in item.flat()]


class _ReplaceNormalizer(_Normalizer):
    def __init__(self, regex: _Regex, content: str) -> None:
        self.regex = regex
        self.content = content
        self.template = content.replace("\\", "\\\\")
        self.can_insert_at_start = regex.can_match_empty and bool(content)

    def apply(self, s: str) -> str:
        if not s:
            return s
        if self.regex.literal:
            return s.replace(self.regex.pattern, self.content)
        if not self.regex.can_match_empty:
            return self.regex.compiled.sub(self.template, s)
        parts = []
        prev = 0
        for start, end in self.regex.spans(s):
            parts.append(s[prev:start])
            parts.append(self.content)
            prev = end
        parts.append(s[prev:])
        return "".join(parts)

    def track(self, s: str, z: int, w: int) -> tuple[str, int, int]:
        out = self.apply(s)
        if not s:
            return out, z, w
        n = len(self.content)
        if z >= 0:
            z = _prefix_count(self.regex.spans(s), z, n)
        if w > 0 or self.regex.can_match_empty:
            w = _prefix_count(self.regex.spans(s), w, n)
        return out, z, w


class _PrependNormalizer(_Normalizer):
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.can_insert_at_start = not prefix

    def apply(self, s: str) -> str:
        return self.prefix + s if s else s

    def track(self, s: str, z: int, w: int) -> tuple[str, int, int]:
        if not s:
            return s, z, w
        if not self.prefix:  # the first character is re-inserted at index 0: alignment (0, 0)
            return s, max(z, 1) if z >= 0 else z, max(w, 1)
        p = len(self.prefix)  # the prefix takes the first character's alignment
        return self.prefix + s, z + p if z >= 1 else z, w + p if w >= 1 else 0


class _StripNormalizer(_Normalizer):
    uses_transform = True

    def __init__(self, left: bool, right: bool) -> None:
        self.left = left
        self.right = right

    def apply(self, s: str) -> str:
        if self.left:
            s = s.lstrip(_WS)
        if self.right:
            s = s.rstrip(_WS)
        return s

    def track(self, s: str, z: int, w: int) -> tuple[str, int, int]:
        out = s.lstrip(_WS) if self.left else s
        removed = len(s) - len(out)
        if self.right:
            out = out.rstrip(_WS)
        if w > 0 and len(out) != len(s):
            raise _misaligned("Strip")
        if z >= 0:
            z = min(max(0, z - removed), len(out))
        return out, z, w


class _LowercaseNormalizer(_Normalizer):
    """Rust's `char::to_lowercase`, character by character."""

    uses_transform = True

    def __init__(self) -> None:
        # Rust's mappings for characters newer than Python 3.11's Unicode 14; and capital sigma, which
        # `str.lower` maps to final sigma at the end of a word while Rust always gives σ.
        self.overrides: dict[str, str] = _tables()["LOWER"]  # type: ignore[assignment]
        self.special = frozenset(self.overrides) | {"\u03a3"}

    def apply(self, s: str) -> str:
        if s.isascii():
            return s.lower()
        if not self.special.isdisjoint(s):
            overrides = self.overrides
            return "".join([overrides.get(c) or c.lower() for c in s])
        return s.lower()

    def track(self, s: str, z: int, w: int) -> tuple[str, int, int]:
        if w > 0:
            raise _misaligned("Lowercase")
        out = self.apply(s)
        if z > 0:
            z = len(self.apply(s[:z]))
        return out, z, w


class _UnicodeNormalizer(_Normalizer):
    """NFC/NFD/NFKC/NFKD as `unicode-normalization-alignments` 0.1.12 (Unicode 9.0) computes them."""

    uses_transform = True

    def __init__(self, form: str) -> None:
        self.form = form
        self.compat = "K" in form
        self.compose = form.endswith("C")

    def apply(self, s: str) -> str:
        if s.isascii():
            return s
        return _unicode_normalize(self.form, s)

    def track(self, s: str, z: int, w: int) -> tuple[str, int, int]:
        if w > 0:
            raise _misaligned(self.form)
        out = self.apply(s)
        if z < 0 or s.isascii():
            return out, z, w
        # Only the characters before the first "stable" one at or after index z can change z: a stable
        # character (ASCII, or a starter that never decomposes nor composes with what precedes it)
        # cuts the text into parts that normalize on their own.
        b = z
        while b < len(s) and not _is_stable(s[b]):
            b += 1
        pointer = 0
        count = 0
        for _char, change in _crate_normalize(s[:b], self.compat, self.compose):
            if change <= 0:
                source = pointer
                pointer += 1 - change
            else:
                source = pointer - 1
            if source >= z:
                break
            count += 1
        return out, count, w


def _needs_alignment_guard(normalizer: _Normalizer | None) -> bool:
    """Whether text can be inserted at the start before a normalizer that then mis-aligns."""
    if normalizer is None:
        return False
    inserted = False
    for leaf in normalizer.flat():
        if leaf.uses_transform and inserted:
            return True
        inserted = inserted or leaf.can_insert_at_start
    return False


def _build_normalizer(obj: object) -> _Normalizer | None:
    if obj is None:
        return None
    kind = _type_of(obj, "normalizer")
    assert isinstance(obj, dict)
    where = f"normalizer {kind}"
    if kind == "Sequence":
        items = _get(obj, "normalizers", where, list)
        built = [_build_normalizer(item) for item in items]  # type: ignore[union-attr]
        if any(item is None for item in built):
            raise TokenizerError("normalizer Sequence contains null")
        return _SequenceNormalizer(built)  # type: ignore[arg-type]
    if kind == "Replace":
        regex = _pattern(_get(obj, "pattern", where, dict), where)
        return _ReplaceNormalizer(regex, _get(obj, "content", where, str))  # type: ignore[arg-type]
    if kind == "Prepend":
        return _PrependNormalizer(_get(obj, "prepend", where, str))  # type: ignore[arg-type]
    if kind == "Strip":
        return _StripNormalizer(
            _get(obj, "strip_left", where, bool),
            _get(obj, "strip_right", where, bool),  # type: ignore[arg-type]
        )
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        return _UnicodeNormalizer(kind)
    if kind == "Lowercase":
        return _LowercaseNormalizer()
    raise _unsupported("normalizer", kind)
