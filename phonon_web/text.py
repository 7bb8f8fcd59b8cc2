"""Cutting a long text into parts the model can take.

The model reads at most `DEFAULT_MAX_TOKENS` (240) text tokens per part, so a long text is cut into parts
and each part is spoken on its own. Where a part ends matters for how it sounds, so cuts are made at the
strongest break available, in this order:

1. sentence ends: a run of `.` `!` `?` `…` (`?!`, `...`, `!!!`, ...) followed by whitespace or the end of
   the text, together with the closing quotes and brackets that follow it (`"Stop."`, `(see above.)`);
   also a blank line (paragraph break) and the full-width CJK marks `。！？`, which need no space after;
2. inside a sentence that alone is over budget: clause marks `,` `;` `:` and the en dash `–` or `--` when
   whitespace follows them, the em dash `—` (also between two words), a single line break, and the
   full-width `，；：、`;
3. inside a clause that is still over budget: whitespace, i.e. between words;
4. last resort, only for one whitespace-free run (a long URL, a string of digits, unspaced CJK) that alone
   is over budget: between characters, but never inside a grapheme cluster. A cluster is a base character
   with the combining marks that follow it, an emoji ZWJ sequence (👩‍👩‍👧), an emoji with its skin-tone
   modifier or variation selector, a regional-indicator flag pair (🇫🇷) or a Hangul jamo syllable. Should a
   single cluster itself be over budget (a long ZWJ sequence, hundreds of stacked combining marks), it is
   cut before its base characters, and a base with more marks than the budget between code points; a
   single code point over budget cannot be cut and raises `TextError`.

A `.` is not a sentence end when it is a decimal point or inside a token (`3.14`, `$5.20`, `v1.2.3`,
`a.b@c.com`: no whitespace follows it), or when it ends an abbreviation: titles and the like (`Dr.`, `Mr.`,
`Mrs.`, `Ms.`, `St.`, `Prof.`, `Jr.`, `Sr.`, `vs.`, `e.g.`, `i.e.`, ...), dotted upper-case acronyms (`U.S.`,
`U.K.`) and single upper-case initials (`J. R. R. Tolkien`; the pronoun `I.` is a sentence end). `etc.`,
`a.m.`, `p.m.`, `Inc.` and a few more end a sentence unless the next word starts in lower case; `No.`,
`Fig.`, `Vol.` and similar unless a number follows. An ellipsis followed by a lower-case word (`Wait...
what?`) does not end the sentence either.

Pieces (sentences, or the clauses, words or character runs of an oversized one) are then grouped greedily
into parts: consecutive pieces are joined while the sum of their token counts stays within the budget, as
the reference implementation does. Pieces of an oversized sentence are grouped among themselves, so a part
never ends inside a sentence that could have ended it. Since the count of a join may differ from the sum
of its pieces' counts, every joined part is counted once more and, should it be over budget, the largest
prefix of its pieces that fits is found by bisection. Every part returned satisfies
`count_tokens(part.text) <= max_tokens`.

`count_tokens` is only ever called on pieces and on candidate parts, so the characters counted in total
stay within a small multiple of the text's length.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from .errors import TextError

__all__ = ["DEFAULT_MAX_TOKENS", "TextPart", "split_sentences", "split_text"]

DEFAULT_MAX_TOKENS = 240


@dataclass(frozen=True, slots=True)
class TextPart:
    """One part of a text: `original[start:end] == text`, and `text` has no surrounding whitespace."""

    text: str
    start: int
    end: int


# --- characters --------------------------------------------------------------------------------------------

_CLOSERS = "\"'”’»›)]}」』】〕〉》）"
_OPENERS = "\"'“‘„«‹([{¿¡「『【〔〈《（"
_CJK_TERMINATORS = "。！？｡"
_STRONG_TERMINATORS = "!?‼⁇⁈⁉" + _CJK_TERMINATORS

_SENTENCE_RE = re.compile(
    r"(?P<run>[.!?…‼⁇⁈⁉。！？｡]+)[" + re.escape(_CLOSERS) + r"]*"
    r"|(?P<para>\n[^\S\n]*\n)"
)
_CLAUSE_RE = re.compile(
    r"(?:[,;:–]|--)[" + re.escape(_CLOSERS) + r"]*(?=\s)"
    r"|[，；：、—―][" + re.escape(_CLOSERS) + r"]*"
    r"|\n"
)
_WORD_RE = re.compile(r"\S+")
_NON_SPACE_RE = re.compile(r"\S")
_DOTTED_ACRONYM_RE = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]")

# Never a sentence end after these (compared in lower case, without the final dot).
_ABBREVIATIONS = frozenset(
    "mr mrs ms mx dr prof st jr sr vs e.g i.e cf viz mt gen col lt sgt capt gov sen rep rev hon "
    "messrs mme mlle".split()
)
# Not a sentence end when the next word starts in lower case.
_ABBREVIATIONS_BEFORE_LOWER = frozenset("etc a.m p.m approx inc ltd co corp dept est al esp".split())
# Not a sentence end when a number follows.
_ABBREVIATIONS_BEFORE_NUMBER = frozenset("no nos fig figs vol vols ca approx p pp ch sec art eq".split())
# An abbreviation is short; a longer token before a dot is a word, and scanning back stops here.
_LONGEST_ABBREVIATION = 24


def _check_text(text: object) -> None:
    if not isinstance(text, str):
        raise TextError(f"the text must be a string, not {type(text).__name__}")


def _strip(text: str, start: int, end: int) -> tuple[int, int] | None:
    """`text[start:end]` without its surrounding whitespace, as a span; None if it is all whitespace."""
    m = _NON_SPACE_RE.search(text, start, end)
    if m is None:
        return None
    start = m.start()
    while text[end - 1].isspace():
        end -= 1
    return start, end


def _spans(text: str, start: int, end: int, cuts: list[int]) -> list[tuple[int, int]]:
    """The non-empty stripped spans of `text[start:end]` between the ascending positions `cuts`."""
    spans = []
    a = start
    for b in [*cuts, end]:
        if b > a:
            span = _strip(text, a, b)
            if span is not None:
                spans.append(span)
            a = b
    return spans


# --- sentences ---------------------------------------------------------------------------------------------


def _next_word_char(text: str, pos: int) -> str:
    """The first character of the next word after `pos`, past whitespace and opening quotes; '' if none."""
    m = _NON_SPACE_RE.search(text, pos)
    if m is None:
        return ""
    i = m.start()
    n = len(text)
    while i < n and text[i] in _OPENERS:
        i += 1
    return text[i] if i < n else ""


def _word_before(text: str, pos: int) -> str:
    """The whitespace-free token ending at `pos`, less opening quotes; '' if too long for an abbreviation."""
    limit = max(0, pos - _LONGEST_ABBREVIATION)
    i = pos
    while i > limit and not text[i - 1].isspace():
        i -= 1
    if i == limit and i > 0 and not text[i - 1].isspace():
        return ""
    return text[i:pos].lstrip(_OPENERS)


def _ends_sentence(text: str, run_start: int, run: str, after: int) -> bool:
    """Whether the terminator `run` at `run_start` (closers included, up to `after`) ends a sentence."""
    if any(c in _STRONG_TERMINATORS for c in run):
        return True
    nxt = _next_word_char(text, after)
    if run != ".":  # an ellipsis: "Wait... what?" goes on, "Wait... What?" does not
        return not nxt.islower()
    word = _word_before(text, run_start)
    if not word:
        return True
    lower = word.lower()
    if lower in _ABBREVIATIONS:
        return False
    if lower in _ABBREVIATIONS_BEFORE_LOWER and nxt.islower():
        return False
    if lower in _ABBREVIATIONS_BEFORE_NUMBER and (nxt.isdigit() or nxt == "#"):
        return False
    if len(word) == 1:  # an initial, as in "J. R. R. Tolkien"; "I." is the pronoun
        return not (word.isalpha() and word.isupper() and word != "I")
    if _DOTTED_ACRONYM_RE.fullmatch(word):  # "U.S." goes on; "p.s." only before a lower-case word
        return not (word.isupper() or nxt.islower())
    return True


def _sentence_cuts(text: str) -> list[int]:
    cuts = []
    n = len(text)
    for m in _SENTENCE_RE.finditer(text):
        if m.group("para") is not None:
            cuts.append(m.start() + 1)
            continue
        run = m.group("run")
        after = m.end()
        if run[-1] in _CJK_TERMINATORS:
            if after == n or not _extends(text[after]):  # a combining mark stays with its base
                cuts.append(after)
        elif (after == n or text[after].isspace()) and _ends_sentence(text, m.start(), run, after):
            cuts.append(after)
    return cuts


def split_sentences(text: str) -> list[TextPart]:
    """Cut `text` into sentences (see the module's docstring for the rules), each stripped of whitespace.

    Whitespace-only text gives `[]`; a non-string raises `TextError`.
    """
    _check_text(text)
    return [TextPart(text[s:e], s, e) for s, e in _spans(text, 0, len(text), _sentence_cuts(text))]


# --- grapheme clusters (the last resort) -------------------------------------------------------------------

_ZWJ = "\u200d"


def _extends(c: str) -> bool:
    """Whether `c` continues the grapheme cluster before it (combining mark, ZWJ, selector, modifier)."""
    o = ord(c)
    if o < 0x300:
        return False
    return (
        o == 0x200D
        or 0xFE00 <= o <= 0xFE0F
        or 0x1F3FB <= o <= 0x1F3FF
        or 0xE0020 <= o <= 0xE007F
        or 0xE0100 <= o <= 0xE01EF
        or unicodedata.category(c)[0] == "M"
    )


def _hangul(o: int) -> str:
    if 0x1100 <= o <= 0x115F or 0xA960 <= o <= 0xA97C:
        return "L"
    if 0x1160 <= o <= 0x11A7 or 0xD7B0 <= o <= 0xD7C6:
        return "V"
    if 0x11A8 <= o <= 0x11FF or 0xD7CB <= o <= 0xD7FB:
        return "T"
    if 0xAC00 <= o <= 0xD7A3:
        return "LV" if (o - 0xAC00) % 28 == 0 else "LVT"
    return ""


def _hangul_joins(prev: str, c: str) -> bool:
    a, b = _hangul(ord(prev)), _hangul(ord(c))
    if not a or not b:
        return False
    if a == "L":
        return b != "T"
    if a in ("LV", "V"):
        return b in ("V", "T")
    return b == "T"  # a is LVT or T


def _is_regional_indicator(c: str) -> bool:
    return 0x1F1E6 <= ord(c) <= 0x1F1FF


def _base_bounds(text: str, start: int, end: int) -> list[int]:
    """Inside one grapheme cluster over budget: before each character that is not a combining mark, so
    an emoji ZWJ sequence parts at a joined emoji before a mark is ever parted from its base."""
    return [p for p in range(start, end) if p == start or unicodedata.category(text[p])[0] != "M"] + [end]


def _code_point_bounds(text: str, start: int, end: int) -> list[int]:
    """Inside a base character with more marks than the budget: between any two code points."""
    return list(range(start, end + 1))


def _grapheme_bounds(text: str, start: int, end: int) -> list[int]:
    """Positions in [start, end] where a grapheme cluster of `text` may begin, plus `end`.

    A cheap approximation of Unicode's extended grapheme clusters, covering what matters here: combining
    marks, emoji ZWJ sequences, modifiers and variation selectors, flag pairs and Hangul jamo.
    """
    bounds = [start]
    prev = text[start]
    regional = 1 if _is_regional_indicator(prev) else 0  # regional indicators in a row so far
    for p in range(start + 1, end):
        c = text[p]
        is_regional = _is_regional_indicator(c)
        joined = (
            _extends(c)
            or prev == _ZWJ
            or (is_regional and regional % 2 == 1)
            or (ord(c) >= 0x1100 and _hangul_joins(prev, c))
        )
        if not joined:
            bounds.append(p)
        regional = regional + 1 if is_regional else 0
        prev = c
    bounds.append(end)
    return bounds


def _cut_at_bounds(
    text: str,
    bounds: list[int],
    count_tokens: Callable[[str], int],
    max_tokens: int,
    out: list[TextPart],
    finer: tuple[Callable[[str, int, int], list[int]], ...],
) -> None:
    """Cut `text[bounds[0]:bounds[-1]]` at positions from `bounds` into the longest parts within budget.

    A unit between two bounds that alone is over budget is cut again at `finer[0]`'s bounds for it,
    and so on; with no finer bounds left it cannot be cut (TextError)."""
    last = len(bounds) - 1
    guess = max_tokens  # clusters per part: one token per cluster at first, then the last part's length
    i = 0
    while i < last:
        s = bounds[i]

        def fits(k: int, s: int = s) -> bool:
            return count_tokens(text[s : bounds[k]]) <= max_tokens

        # The largest k with fits(k): search outwards from the guess with doubling steps, then bisect.
        # Invariant: `lo` fits (lo == i: nothing does yet), nothing past `hi` does.
        lo, hi = i, last
        k = min(last, i + guess)
        if fits(k):
            lo, step = k, 1
            while lo < hi:
                k = min(hi, lo + step)
                if not fits(k):
                    hi = k - 1
                    break
                lo, step = k, 2 * step
        else:
            hi, step = k - 1, 1
            while hi > lo:
                k = max(lo + 1, hi - step + 1)
                if fits(k):
                    lo = k
                    break
                hi, step = k - 1, 2 * step
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if fits(mid):
                lo = mid
            else:
                hi = mid - 1
        if lo > i:
            out.append(TextPart(text[s : bounds[lo]], s, bounds[lo]))
            guess = lo - i
            i = lo
        elif finer:
            _cut_at_bounds(text, finer[0](text, s, bounds[i + 1]), count_tokens, max_tokens, out, finer[1:])
            i += 1
        else:
            raise TextError(
                f"the character {text[s]!r} at offset {s} alone needs more than {max_tokens} tokens"
            )


# --- grouping ----------------------------------------------------------------------------------------------


def _group(
    text: str,
    pieces: list[tuple[int, int, int]],
    count_tokens: Callable[[str], int],
    max_tokens: int,
    out: list[TextPart],
) -> None:
    """Join consecutive pieces `(start, end, tokens)`, each within budget, greedily into parts."""
    i = 0
    n = len(pieces)
    while i < n:
        s = pieces[i][0]
        total = pieces[i][2]
        j = i + 1
        while j < n and total + pieces[j][2] <= max_tokens:
            total += pieces[j][2]
            j += 1
        if j - i > 1 and count_tokens(text[s : pieces[j - 1][1]]) > max_tokens:
            # The join counts more than its pieces: keep the largest prefix of them that fits.
            lo, hi = i + 1, j - 1  # a single piece fits: it was counted alone
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if count_tokens(text[s : pieces[mid - 1][1]]) <= max_tokens:
                    lo = mid
                else:
                    hi = mid - 1
            j = lo
        e = pieces[j - 1][1]
        out.append(TextPart(text[s:e], s, e))
        i = j


_SENTENCES, _CLAUSES, _WORDS, _CHARACTERS = range(4)


def _units(level: int, text: str, start: int, end: int) -> list[tuple[int, int]]:
    if level == _SENTENCES:
        return _spans(text, start, end, [c for c in _sentence_cuts(text) if start < c < end])
    if level == _CLAUSES:
        cuts = [m.end() for m in _CLAUSE_RE.finditer(text, start, end)]
        return _spans(text, start, end, [c for c in cuts if c == end or not _extends(text[c])])
    return [m.span() for m in _WORD_RE.finditer(text, start, end)]


def _split(
    text: str,
    start: int,
    end: int,
    level: int,
    over: bool,
    count_tokens: Callable[[str], int],
    max_tokens: int,
    out: list[TextPart],
) -> None:
    """Cut the stripped span `text[start:end]` at `level`'s marks, cutting oversized units one level down.

    `over` says the span is known to be over budget, so a unit that is the whole span needs no count.
    """
    if level == _CHARACTERS:
        bounds = _grapheme_bounds(text, start, end)
        _cut_at_bounds(text, bounds, count_tokens, max_tokens, out, (_base_bounds, _code_point_bounds))
        return
    pending: list[tuple[int, int, int]] = []
    for s, e in _units(level, text, start, end):
        if over and s == start and e == end:
            tokens = max_tokens + 1
        else:
            tokens = count_tokens(text[s:e])
        if tokens <= max_tokens:
            pending.append((s, e, tokens))
        else:
            _group(text, pending, count_tokens, max_tokens, out)
            pending = []
            _split(text, s, e, level + 1, True, count_tokens, max_tokens, out)
    _group(text, pending, count_tokens, max_tokens, out)


# A text this many characters per token of budget or shorter is first counted whole: it may fit as is.
_WHOLE_TEXT_CHARS_PER_TOKEN = 16


def split_text(
    text: str, count_tokens: Callable[[str], int], max_tokens: int = DEFAULT_MAX_TOKENS
) -> list[TextPart]:
    """Cut `text` into parts of at most `max_tokens` tokens each, as counted by `count_tokens`.

    Cuts fall at sentence ends, else clause marks, else whitespace, else (for one whitespace-free run over
    budget) between grapheme clusters; see the module's docstring. Parts are in order, stripped of
    surrounding whitespace, and `text[part.start:part.end] == part.text`; together they hold every
    non-whitespace character of `text` exactly once. Empty or whitespace-only text gives `[]`.

    Raises `TextError` if `text` is not a string or one code point alone is over budget, `ValueError` if
    `max_tokens` is below 1.
    """
    _check_text(text)
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise TypeError(f"max_tokens must be an int, not {type(max_tokens).__name__}")
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
    span = _strip(text, 0, len(text))
    if span is None:
        return []
    start, end = span
    if end - start <= _WHOLE_TEXT_CHARS_PER_TOKEN * max_tokens:
        if count_tokens(text[start:end]) <= max_tokens:
            return [TextPart(text[start:end], start, end)]
        over = True
    else:
        over = False
    out: list[TextPart] = []
    _split(text, start, end, _SENTENCES, over, count_tokens, max_tokens, out)
    return out
