"""Pre-tokenizers (`Metaspace`, `WhitespaceSplit`, `Split`, `Sequence`) and building them from JSON.

`split(pieces)` maps a list of (text, z) to a new list of (text, z), dropping empty pieces (`z`: see
`normalizers.py`).
"""

from __future__ import annotations

import re

from ..errors import TokenizerError
from .character_classes import _WS
from .config import _get, _single_char, _type_of, _unsupported
from .patterns import _pattern, _Regex


def _slice_z(z: int, start: int) -> int:
    """z of a slice starting at `start`: it starts the text iff its first character is at offset 0."""
    return z - start if 0 <= start < z else -1


def _split_by_behavior(
    text: str, z: int, matches: list[tuple[int, int, bool]], behavior: str
) -> list[tuple[str, int]]:
    if behavior == "Removed":
        spans = [(a, b) for a, b, is_match in matches if not is_match]
    elif behavior == "Isolated":
        spans = [(a, b) for a, b, _ in matches]
    elif behavior == "Contiguous":
        acc: list[list[int]] = []
        previous = False
        for a, b, is_match in matches:
            if is_match == previous and acc:
                acc[-1][1] = b
            else:
                acc.append([a, b])
            previous = is_match
        spans = [(a, b) for a, b in acc]
    elif behavior == "MergedWithPrevious":
        acc = []
        previous = False
        for a, b, is_match in matches:
            if is_match and not previous and acc:
                acc[-1][1] = b
            else:
                acc.append([a, b])
            previous = is_match
        spans = [(a, b) for a, b in acc]
    elif behavior == "MergedWithNext":
        acc = []
        previous = False
        for a, b, is_match in reversed(matches):
            if is_match and not previous and acc:
                acc[-1][0] = a
            else:
                acc.append([a, b])
            previous = is_match
        acc.reverse()
        spans = [(a, b) for a, b in acc]
    else:
        raise TokenizerError(f"unknown split behavior {behavior!r}")
    return [(text[a:b], _slice_z(z, a)) for a, b in spans if b > a]


class _PreTokenizer:
    needs_offsets = False

    def split(self, pieces: list[tuple[str, int]]) -> list[tuple[str, int]]:  # pragma: no cover
        raise NotImplementedError


class _MetaspacePreTokenizer(_PreTokenizer):
    def __init__(self, replacement: str, scheme: str, split: bool) -> None:
        self.replacement = replacement
        self.scheme = scheme
        self.split_words = split
        self.needs_offsets = scheme == "first"

    def split(self, pieces: list[tuple[str, int]]) -> list[tuple[str, int]]:
        rep = self.replacement
        out: list[tuple[str, int]] = []
        for text, z in pieces:
            text = text.replace(" ", rep)
            if not text.startswith(rep) and (self.scheme == "always" or (self.scheme == "first" and z > 0)):
                text = rep + text
                if z >= 1:
                    z += 1
            if not self.split_words:
                out.append((text, z))
                continue
            start = 0
            while True:
                nxt = text.find(rep, start + 1)
                if nxt < 0:
                    out.append((text[start:], _slice_z(z, start)))
                    break
                out.append((text[start:nxt], _slice_z(z, start)))
                start = nxt
        return [(t, zz) for t, zz in out if t]

    def fast_split(self, text: str) -> list[str]:
        rep = self.replacement
        text = text.replace(" ", rep)
        if self.scheme == "always" and not text.startswith(rep):
            text = rep + text
        if not self.split_words:
            return [text]
        words = text.split(rep)
        if words[0]:
            first = [words[0]]
        else:
            first = []
        return first + [rep + w for w in words[1:]]


class _WhitespaceSplitPreTokenizer(_PreTokenizer):
    _RE = re.compile("[^" + re.escape(_WS) + "]+")

    def split(self, pieces: list[tuple[str, int]]) -> list[tuple[str, int]]:
        out = []
        for text, z in pieces:
            for m in self._RE.finditer(text):
                out.append((m.group(0), _slice_z(z, m.start())))
        return out


class _SplitPreTokenizer(_PreTokenizer):
    def __init__(self, regex: _Regex, behavior: str, invert: bool) -> None:
        self.regex = regex
        self.behavior = behavior
        self.invert = invert

    def split(self, pieces: list[tuple[str, int]]) -> list[tuple[str, int]]:
        out = []
        for text, z in pieces:
            matches = self.regex.find_matches(text)
            if self.invert:
                matches = [(a, b, not m) for a, b, m in matches]
            out += _split_by_behavior(text, z, matches, self.behavior)
        return out


class _SequencePreTokenizer(_PreTokenizer):
    def __init__(self, items: list[_PreTokenizer]) -> None:
        self.items = items
        self.needs_offsets = any(item.needs_offsets for item in items)

    def split(self, pieces: list[tuple[str, int]]) -> list[tuple[str, int]]:
        for item in self.items:
            pieces = item.split(pieces)
        return pieces


def _build_pre_tokenizer(obj: object) -> _PreTokenizer | None:
    if obj is None:
        return None
    kind = _type_of(obj, "pre_tokenizer")
    assert isinstance(obj, dict)
    where = f"pre_tokenizer {kind}"
    if kind == "Metaspace":
        replacement = _single_char(obj.get("replacement"), f"{where} replacement")
        scheme = _get(obj, "prepend_scheme", where, str, "always")
        if scheme not in ("always", "first", "never"):
            raise TokenizerError(f"{where}: unknown prepend_scheme {scheme!r}")
        add_prefix_space = obj.get("add_prefix_space")
        if add_prefix_space is False:
            if scheme != "never":
                raise TokenizerError(f"{where}: add_prefix_space does not match declared prepend_scheme")
        split = obj.get("split")
        if split is None:
            split = True
        if not isinstance(split, bool):
            raise TokenizerError(f"{where}: split must be a boolean")
        return _MetaspacePreTokenizer(replacement, scheme, split)  # type: ignore[arg-type]
    if kind == "Sequence":
        items = _get(obj, "pretokenizers", where, list)
        built = [_build_pre_tokenizer(item) for item in items]  # type: ignore[union-attr]
        if any(item is None for item in built):
            raise TokenizerError("pre_tokenizer Sequence contains null")
        return _SequencePreTokenizer(built)  # type: ignore[arg-type]
    if kind == "WhitespaceSplit":
        return _WhitespaceSplitPreTokenizer()
    if kind == "Split":
        regex = _pattern(_get(obj, "pattern", where, dict), where)
        behavior = _get(obj, "behavior", where, str)
        if behavior not in ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"):
            raise TokenizerError(f"{where}: unknown behavior {behavior!r}")
        return _SplitPreTokenizer(regex, behavior, _get(obj, "invert", where, bool))  # type: ignore[arg-type]
    raise _unsupported("pre_tokenizer", kind)
