"""Word and token times from one attention head.

While it generates, the engine records, for every audio frame (12.5 frames per second, 80 ms each), one
head's attention probabilities over the prompt's text tokens: a row of T values, T the number of text
tokens. Layer 3, head 0 of Phonon follows the text almost one token at a time. `align` turns those rows
and the finished audio into a start and end time for every token and every word.

The rules, in order (each is a function below):

1. Position of a frame (`frame_positions`). Non-finite and negative values count as 0. p is the index of
   the row's largest value (the first one on ties). Over the window lo = max(0, p - window) ..
   hi = min(T - 1, p + window), the position is
       position = sum_i i * w_i,   w_i = softmax(log v)_i = v_i / sum_{j=lo..hi} v_j
   i.e. the softmax is applied to the LOGS of the probabilities. The reference design took "softmax
   weights" of the head's raw scores (logits). A probability is exp(score) / Z with one Z for the whole
   row, so the softmax of the scores restricted to the window equals the probabilities renormalised
   over the window, which is what we compute, and the voice rows' share of attention (why a row need not
   sum to 1) drops out. A softmax of the probabilities themselves would instead weigh a token with 0.8 of
   the attention only e^0.8 = 2.2 times a token with none, pulling every position towards the middle of
   its window and, at the clipped first and last windows, off the token entirely.
   A row with no positive value carries no information and keeps the previous frame's position (0 for
   frame 0). Then the position never moves back: positions[f] = max(positions[f - 1], position_f).
2. Token starts. Token i starts at the first frame f whose position is >= i - 0.5 (the frame from which
   token i is the nearest token to the head's position; token 0 therefore starts at frame 0). Its time
   is (f - shift_frames) / frame_rate seconds, clamped to [0, duration]. A token the head never reaches
   starts at the end of the audio (it gets zero length: it was not spoken, or we cannot tell when).
   A token ends where the next token starts; the last one ends at the end of the audio.
   duration = len(samples) / sample_rate.
3. Words (`word_groups`). A piece that starts with "▁" (U+2581, the Metaspace marker) opens a new group;
   any other piece continues the current group. A group whose text has no word character (empty, or only
   Unicode punctuation, categories P*, once "▁" is read as a space and stripped) joins the previous word,
   e.g. "▁," or a lone "▁."; judging the whole group rather than the single piece keeps an opening
   bracket or quote ("▁(" then "hello") with the word it opens. Such groups at the very start join the
   first word after them. Word text = the group's pieces, byte-fallback pieces ("<0xC3>") turned back
   into their bytes, decoded as UTF-8 (invalid bytes become U+FFFD), "▁" replaced by a space, stripped.
   A word starts at its first token's start and ends at its last token's end.
   Token text is the decoded text of that token's own piece with "▁" as a space, not stripped; a
   multi-byte character spelt by several byte pieces goes to the piece that completes it (the earlier
   ones get ""), so joining all token texts gives the whole text back.
4. Silence snapping (`loudness_db`). Loudness is 20 * log10(RMS) of the samples in consecutive 10 ms
   steps (240 samples at 24 kHz; the last step may be shorter), in dB relative to full scale 1.0 (so a
   full-scale sine reads -3.01 dB), with digital silence at the floor -200 dB. A word whose start s falls
   in a step (floor(s * sample_rate) // step) quieter than `silence_db` moves its start to the beginning
   of the first later step that is at least `silence_db`, provided that this time is before the word's
   end; otherwise (no such step, or only at or after its end) the start stays. Tokens of the word that
   start earlier than the new start are moved to it and token ends inside the word are recomputed; the
   previous word keeps its end, so the silence between them belongs to neither.

Every time is within [0, duration], starts and ends are monotone non-decreasing over tokens and over
words, and every start <= its end (and <= the next start).
"""

from __future__ import annotations

import codecs
import math
import numbers
import operator
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

METASPACE = "\u2581"
SILENCE_FLOOR_DB = -200.0
STEP_SECONDS = 0.01

_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>\Z")
_INF = math.inf


@dataclass(frozen=True)
class Timed:
    """A word or a token, with its time in the audio in seconds."""

    text: str
    start: float
    end: float
    start_char: int | None = None  # words only: the span in the caller's text this word was read from
    end_char: int | None = None


def _check_window(window: object) -> int:
    if isinstance(window, bool) or not isinstance(window, int) or window < 0:
        raise ValueError(f"window must be an int >= 0 (tokens on each side of the peak), got {window!r}")
    return window


def frame_positions(rows: Sequence[Sequence[float]], window: int = 2) -> list[float]:
    """The head's position in the text, in token indices, at every frame (rule 1 of the module doc).

    All rows must have the same length; a row of length 0 gives position 0.
    """
    walk = PositionWalk(window)
    walk.extend(rows)
    return walk.positions


class PositionWalk:
    """`frame_positions` a few rows at a time: the engine feeds each chunk's rows as they are read
    back, while the GPU works on the next chunks, so that the take's end has less left to do.
    `positions` holds one position per row given so far; a position depends only on its row and the
    ones before it, so its first n entries are frame_positions of the first n rows."""

    def __init__(self, window: int = 2):
        self.window = _check_window(window)
        self.positions: list[float] = []
        self._previous = 0.0
        self._width = -1

    def extend(self, rows: Sequence[Sequence[float]]) -> None:
        window = self.window
        for row in rows:
            if self._width < 0:
                self._width = len(row)
            elif len(row) != self._width:
                raise ValueError(
                    f"attention row {len(self.positions)} has {len(row)} values but row 0 has "
                    f"{self._width}: every row must have one value per text token"
                )
            position = self._previous
            peak = _peak(row)
            if peak is not None:
                lo = max(0, peak - window)
                hi = min(len(row), peak + window + 1)
                top = float(row[peak])
                # Dividing by the peak first keeps huge values from overflowing; the ratio is the same.
                weights = [x / top if 0.0 < x < _INF else 0.0 for x in map(float, row[lo:hi])]
                position = sum(i * w for i, w in zip(range(lo, hi), weights, strict=True)) / sum(weights)
            self._previous = max(self._previous, position)
            self.positions.append(self._previous)


def _peak(row: Sequence[float]) -> int | None:
    """The index of the row's largest value (the first on ties), non-finite and negative values counting
    as 0; None when no value is positive. A row of finite values (its sum is finite) takes builtins that
    loop in C: the engine walks a chunk's rows while the GPU works, and at the Rainbow passage's 193
    tokens the loop in Python cost ~30 us a row, a sixth of the GPU's time for the frame."""
    if len(row) == 0:  # (not `not row`: a numpy row has no truth value)
        return None
    if math.isfinite(sum(row)):
        top = max(row)
        if not top > 0.0:
            return None
        return row.index(top) if hasattr(row, "index") else list(row).index(top)  # (numpy has no index)
    values = [x if 0.0 < x < _INF else 0.0 for x in map(float, row)]
    top = max(values)
    return values.index(top) if top > 0.0 else None


def _step_length(sample_rate: float, step_seconds: float) -> int:
    for name, value in (("sample_rate", sample_rate), ("step_seconds", step_seconds)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < _INF:
            raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    step = round(sample_rate * step_seconds)
    if step < 1:
        raise ValueError(f"a step of {step_seconds} s at {sample_rate} Hz holds no sample")
    return step


def _check_samples(samples: Sequence[float]) -> None:
    if isinstance(samples, memoryview) and (samples.ndim != 1 or samples.format not in ("f", "d", "e")):
        raise ValueError(
            f"samples as a memoryview must be 1-D floats (format 'f', 'd' or 'e'), got format "
            f"{samples.format!r} with {samples.ndim} dimensions; use memoryview.cast('f')"
        )


def loudness_db(
    samples: Sequence[float], sample_rate: int = 24000, step_seconds: float = 0.01
) -> list[float]:
    """RMS loudness in dB re full scale (20 * log10(rms), floor -200 dB) of consecutive steps.

    Steps are round(sample_rate * step_seconds) samples long (240 at 24 kHz); there are
    ceil(len(samples) / step) of them, the last one possibly shorter. `samples` may be a list, an
    array('f') / array('d') or a 1-D float memoryview. A NaN in a step makes that step read as the floor.
    """
    step = _step_length(sample_rate, step_seconds)
    _check_samples(samples)
    return [_step_db(samples, step, k) for k in range(-(-len(samples) // step))]


# math.sumprod (Python 3.12, which Pyodide has) sums the squares in C: 4.1 us for a step of 240 samples
# of an array('f') against 7.4 with map. A take whose words start in long silences scans many steps
# (a silent 10 s take: 4.2 ms against 5.8 to align).
_SUM_OF_SQUARES = getattr(math, "sumprod", None)


def _step_db(samples: Sequence[float], step: int, k: int) -> float:
    """loudness_db's value for step k (samples k * step .. k * step + step - 1)."""
    chunk = samples[k * step : k * step + step]
    if _SUM_OF_SQUARES is not None:
        mean_square = _SUM_OF_SQUARES(chunk, chunk) / len(chunk)
    else:
        mean_square = sum(map(operator.mul, chunk, chunk)) / len(chunk)
    return max(SILENCE_FLOOR_DB, 10.0 * math.log10(mean_square)) if mean_square > 0.0 else SILENCE_FLOOR_DB


def _piece_bytes(piece: str) -> bytes:
    m = _BYTE_PIECE.match(piece)
    return bytes((int(m.group(1), 16),)) if m else piece.encode("utf-8")


def _decode(pieces: Sequence[str]) -> str:
    return b"".join(map(_piece_bytes, pieces)).decode("utf-8", "replace").replace(METASPACE, " ")


def has_word_character(text: str) -> bool:
    """Whether `text` holds more than spaces and punctuation (a symbol or an emoji is a word too)."""
    return any(not c.isspace() and not unicodedata.category(c).startswith("P") for c in text)


def word_groups(pieces: Sequence[str]) -> list[list[int]]:
    """Indices of the pieces of each word, in order; together they are 0 .. len(pieces) - 1 (rule 3)."""
    groups: list[list[int]] = []
    for i, piece in enumerate(pieces):
        if not isinstance(piece, str):
            raise TypeError(f"piece {i} must be a str, got {type(piece).__name__}")
        if not groups or piece.startswith(METASPACE):
            groups.append([i])
        else:
            groups[-1].append(i)
    words: list[list[int]] = []
    waiting: list[int] = []  # leading groups without a word character, for the first real word
    for group in groups:
        if has_word_character(_decode([pieces[i] for i in group])):
            words.append(waiting + group)
            waiting = []
        elif words:
            words[-1].extend(group)
        else:
            waiting.extend(group)
    if waiting:  # no word character anywhere: one word of everything
        words.append(waiting)
    return words


def _token_texts(pieces: Sequence[str]) -> list[str]:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    texts = [decoder.decode(_piece_bytes(p)).replace(METASPACE, " ") for p in pieces]
    tail = decoder.decode(b"", final=True).replace(METASPACE, " ")
    if tail and texts:
        texts[-1] += tail
    return texts


@dataclass(frozen=True)
class TextLayout:
    """What `align` needs of the pieces alone (rule 3): each word's pieces and text, each token's text.
    The engine makes it while the GPU finishes a take (`text_layout`), so that the take's end, after
    the GPU's last chunk, is left with the times alone: the Rainbow passage's 184 pieces took ~0.6 ms."""

    pieces: tuple[str, ...]
    groups: list[list[int]]
    word_texts: list[str]
    token_texts: list[str]


def text_layout(pieces: Sequence[str]) -> TextLayout:
    """The TextLayout of `pieces` (the text tokens' pieces as strings, no special tokens)."""
    pieces = tuple(pieces)
    groups = word_groups(pieces)
    words = [_decode([pieces[i] for i in g]).strip() for g in groups]
    return TextLayout(pieces, groups, words, _token_texts(pieces))


def _check_real(name: str, value: object, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if positive and value <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return float(value)


def align(
    rows: Sequence[Sequence[float]],
    pieces: Sequence[str],
    samples: Sequence[float],
    *,
    sample_rate: int = 24000,
    frame_rate: float = 12.5,
    shift_frames: float = 3,
    silence_db: float = -45.0,
    window: int = 2,
    positions: Sequence[float] | None = None,
    layout: TextLayout | None = None,
) -> tuple[list[Timed], list[Timed]]:
    """(words, tokens) with times in seconds, from one head's attention rows and the audio.

    rows: one row per generated frame, each with exactly len(pieces) values (ValueError otherwise).
    pieces: the text tokens' pieces as strings (no special tokens). samples: the mono audio in [-1, 1].
    positions: frame_positions(rows, window) when already known (a PositionWalk fed the same rows).
    layout: text_layout(pieces) when already known (it must be of the same pieces).
    The rules are in the module's docstring.
    """
    sample_rate_f = _check_real("sample_rate", sample_rate, positive=True)
    frame_rate = _check_real("frame_rate", frame_rate, positive=True)
    shift_frames = _check_real("shift_frames", shift_frames)
    if isinstance(silence_db, bool) or not isinstance(silence_db, numbers.Real) or math.isnan(silence_db):
        raise ValueError(f"silence_db must be a number, got {silence_db!r}")
    window = _check_window(window)
    step = _step_length(sample_rate, STEP_SECONDS)
    _check_samples(samples)
    pieces = list(pieces)
    rows = list(rows)
    count = len(pieces)
    for f, row in enumerate(rows):
        if len(row) != count:
            raise ValueError(
                f"attention row {f} has {len(row)} values but there are {count} text tokens: each row "
                "must hold the head's attention over exactly the text tokens given as pieces"
            )
    if layout is None:
        layout = text_layout(pieces)
    elif list(layout.pieces) != pieces:
        raise ValueError("the layout given is of other pieces: make it with text_layout(pieces)")
    groups = layout.groups
    if count == 0:
        return [], []
    duration = len(samples) / sample_rate_f

    # Rule 2: token starts from the first frame whose position reaches i - 0.5.
    if positions is None:
        positions = frame_positions(rows, window)
    elif len(positions) != len(rows):
        raise ValueError(f"{len(positions)} positions for {len(rows)} attention rows: give one per row")
    starts: list[float] = []
    f = 0
    for i in range(count):
        while f < len(positions) and positions[f] < i - 0.5:
            f += 1
        if f < len(positions):
            starts.append(min(max((f - shift_frames) / frame_rate, 0.0), duration))
        else:
            starts.append(duration)
    ends = starts[1:] + [duration]

    # Rule 4: a word starting in silence starts where the sound begins. Only the steps from a word's
    # start up to its end (or the first loud one) are measured: a whole take's loudness in pure Python
    # costs milliseconds, as much as the GPU's work on a short take.
    steps = -(-len(samples) // step)
    for group in groups:
        start, end = starts[group[0]], ends[group[-1]]
        k = math.floor(start * sample_rate_f + 1e-6) // step
        if k >= steps or _step_db(samples, step, k) >= silence_db:
            continue
        j = k + 1
        # a sound found at or after the word's end would not move it: stop looking there
        while j < steps and j * step / sample_rate_f < end and _step_db(samples, step, j) < silence_db:
            j += 1
        if j == steps:
            continue
        sound = j * step / sample_rate_f
        if not sound < end:
            continue
        for i in group:
            starts[i] = max(starts[i], sound)
        for i in group[:-1]:
            ends[i] = starts[i + 1]

    tokens = [Timed(t, s, e) for t, s, e in zip(layout.token_texts, starts, ends, strict=True)]
    words = [
        Timed(text, tokens[g[0]].start, tokens[g[-1]].end)
        for text, g in zip(layout.word_texts, groups, strict=True)
    ]
    return words, tokens
