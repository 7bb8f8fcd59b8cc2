"""Where each spoken word stands in the caller's text: `start_char` and `end_char` for `speech.words`.

A part of the text is spoken as tokens; `timing.align` groups them into words the way Metaspace split
them, at whitespace, with punctuation-only groups joined to the word before. The same grouping of the
part's own text gives each word its characters; normalisation's spans (`phonon_web/normalize.py`) then
lead back to the written text, and the words one written token became ("$5.20": five dollars and
twenty cents) merge into one entry, timed from the first one's start to the last one's end.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from .timing import Timed, has_word_character

_CHUNK = re.compile(r"\S+")


def written_words(text: str) -> list[tuple[int, int]]:
    """Character spans of `text`'s words, grouped as the timing groups tokens."""
    spans: list[tuple[int, int]] = []
    for match in _CHUNK.finditer(text):
        start, end = match.span()
        if spans and not has_word_character(text[start:end]):
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    if len(spans) > 1 and not has_word_character(text[spans[0][0] : spans[0][1]]):
        spans[0:2] = [(spans[0][0], spans[1][1])]  # leading punctuation joins the first word
    return spans


def _key(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def locate(
    words: list[Timed], text: str, spans: list[tuple[int, int]] | None = None
) -> list[tuple[int, int] | None]:
    """Each word's span in `text` (the part it was spoken from); None where it cannot be told.

    The tokenizer's own normaliser can change a part's text (brackets to commas, a final period), so
    the counts usually but not always agree; where they differ the words are matched by their letters
    and digits. `spans`: written_words(text) when already known."""
    if spans is None:
        spans = written_words(text)
    if len(spans) == len(words):
        return list(spans)
    found: list[tuple[int, int] | None] = [None] * len(words)
    matcher = SequenceMatcher(
        None, [_key(w.text) for w in words], [_key(text[s:e]) for s, e in spans], autojunk=False
    )
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            found[block.a + k] = spans[block.b + k]
    return found


def attach(
    words: list[Timed],
    text: str,
    offset: int,
    original_span,
    original: str,
    spans: list[tuple[int, int]] | None = None,
) -> list[Timed]:
    """`words` of a part spoken from `text` (which starts at `offset` in the spoken text), with their
    spans in the caller's `original` text through `original_span(start, end)`; words of one written
    token merged. `spans`: written_words(text) when already known (the engine finds them while the GPU
    works)."""
    out: list[Timed] = []
    for word, span in zip(words, locate(words, text, spans), strict=True):
        if span is None:
            out.append(word)
            continue
        start, end = original_span(offset + span[0], offset + span[1])
        last = out[-1] if out else None
        if last is not None and last.start_char is not None and start < last.end_char:
            start, end = min(start, last.start_char), max(end, last.end_char)
            out[-1] = Timed(original[start:end], last.start, word.end, start, end)
        else:
            out.append(Timed(original[start:end], word.start, word.end, start, end))
    return out
