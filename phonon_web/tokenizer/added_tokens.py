"""Added tokens, and finding them in text the way `AddedVocabulary::find_matches` does."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import UnsupportedTokenizerComponent
from .character_classes import _WS_SET, _is_word_char


@dataclass(frozen=True)
class _AddedToken:
    content: str
    single_word: bool
    lstrip: bool
    rstrip: bool
    normalized: bool
    special: bool


class _AddedMatcher:
    """`AddedVocabulary::find_matches` over one trie (leftmost-longest matches of the token patterns)."""

    def __init__(self, patterns: list[tuple[str, int]], tokens: dict[int, _AddedToken]) -> None:
        self.tokens = tokens
        self.by_pattern: dict[str, int] = {}
        # Two tokens that normalize to the same text: tokenizers picks one of them at random (hash order).
        self.ambiguous: set[str] = set()
        for pattern, tid in patterns:
            if not pattern:
                raise UnsupportedTokenizerComponent(
                    f"added token {tokens[tid].content!r} normalizes to an empty string: tokenizers then "
                    "splits text at every byte (and panics on non-ASCII text); not supported by phonon_web's "
                    "tokenizer"
                )
            if pattern in self.by_pattern:
                self.ambiguous.add(pattern)
            self.by_pattern[pattern] = tid
        ordered = sorted(self.by_pattern, key=len, reverse=True)
        self.regex = re.compile("|".join(re.escape(p) for p in ordered)) if ordered else None

    def find(self, text: str) -> list[tuple[int, int, int | None]]:
        """(start, end, token id or None) covering `text`; pieces may overlap where rstrip ate spaces."""
        if not text:
            return [(0, 0, None)]
        if self.regex is None:
            return [(0, len(text), None)]
        out: list[tuple[int, int, int | None]] = []
        start_offset = 0
        for m in self.regex.finditer(text):
            start, stop = m.span()
            if m.group(0) in self.ambiguous:
                raise UnsupportedTokenizerComponent(
                    f"several added tokens normalize to {m.group(0)!r}; tokenizers picks one of them at "
                    "random, so phonon_web's tokenizer refuses this text"
                )
            tid = self.by_pattern[m.group(0)]
            token = self.tokens[tid]
            if token.single_word:
                start_space = start == 0 or not _is_word_char(text[start - 1])
                stop_space = stop == len(text) or not _is_word_char(text[stop])
                if not (start_space and stop_space):
                    continue
            if token.lstrip:
                newstart = start
                while newstart > 0 and text[newstart - 1] in _WS_SET:
                    newstart -= 1
                start = max(newstart, start_offset)
            if token.rstrip:
                while stop < len(text) and text[stop] in _WS_SET:
                    stop += 1
            if start_offset < start:
                out.append((start_offset, start, None))
            out.append((start, stop, tid))
            start_offset = stop
        if start_offset != len(text):
            out.append((start_offset, len(text), None))
        return out
