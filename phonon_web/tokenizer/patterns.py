"""The `String` and `Regex` patterns of a tokenizer file, matched the way `tokenizers` matches them."""

from __future__ import annotations

import re

from ..errors import TokenizerError, UnsupportedTokenizerComponent
from .oniguruma import _OnigTranslator


class _Regex:
    """An Oniguruma pattern run the way `tokenizers` runs it (via `onig::Regex::find_iter`)."""

    def __init__(self, pattern: str, literal: bool = False) -> None:
        self.pattern = pattern
        self.literal = literal
        if literal:
            py, width = re.escape(pattern), len(pattern)
        else:
            py, width = _OnigTranslator(pattern).translate()
        try:
            self.compiled = re.compile(py)
        except (re.error, OverflowError, RecursionError) as exc:
            raise UnsupportedTokenizerComponent(
                f"regex {pattern!r} cannot be run by Python's re ({exc}); "
                "not supported by phonon_web's tokenizer"
            ) from None
        self.can_match_empty = width == 0

    def spans(self, text: str):
        """Match spans over `text` (never empty), with Oniguruma's rule: an empty match right where the
        previous match ended is skipped and the search moves on one character."""
        if not text:
            return
        if not self.can_match_empty:
            for m in self.compiled.finditer(text):
                yield m.span()
            return
        search = self.compiled.search
        n = len(text)
        pos = 0
        last_end = -1
        while pos <= n:
            m = search(text, pos)
            if m is None:
                return
            start, end = m.span()
            if start == end and end == last_end:
                pos = start + 1
                continue
            yield start, end
            pos = end
            last_end = end

    def find_matches(self, text: str) -> list[tuple[int, int, bool]]:
        """`Pattern::find_matches`: the whole text cut into (start, end, is_match) pieces."""
        if not text:
            return [(0, 0, False)]
        out = []
        prev = 0
        for start, end in self.spans(text):
            if prev != start:
                out.append((prev, start, False))
            out.append((start, end, True))
            prev = end
        if prev != len(text):
            out.append((prev, len(text), False))
        return out


def _pattern(spec: object, where: str) -> _Regex:
    if not isinstance(spec, dict) or len(spec) != 1:
        raise TokenizerError(f"{where}: pattern must be {{'String': ...}} or {{'Regex': ...}}, got {spec!r}")
    ((kind, value),) = spec.items()
    if not isinstance(value, str):
        raise TokenizerError(f"{where}: pattern must be a string, got {value!r}")
    if kind == "String":
        return _Regex(value, literal=True)
    if kind == "Regex":
        return _Regex(value)
    raise TokenizerError(f"{where}: unknown pattern kind {kind!r}")
