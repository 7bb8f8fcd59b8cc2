"""Tests of phonon_web.timing: word and token times from attention rows and audio."""

from __future__ import annotations

import math
import time
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phonon_web.timing import (
    SILENCE_FLOOR_DB,
    PositionWalk,
    Timed,
    align,
    frame_positions,
    loudness_db,
    text_layout,
    word_groups,
)

SR = 24000
FRAME = 1920  # samples per 80 ms frame
FR = 12.5


def onehot(count: int, k: int, peak: float = 0.8) -> list[float]:
    row = [0.0] * count
    row[k] = peak
    return row


def sine(seconds: float, amplitude: float = 0.5, freq: float = 220.0) -> list[float]:
    n = round(seconds * SR)
    return [amplitude * math.sin(2 * math.pi * freq * i / SR) for i in range(n)]


def silence(seconds: float) -> list[float]:
    return [0.0] * round(seconds * SR)


def walk(count: int, frames_per_token: int) -> list[list[float]]:
    return [onehot(count, f // frames_per_token) for f in range(count * frames_per_token)]


# frame_positions


def test_diagonal_walk_positions():
    assert frame_positions([onehot(5, k) for k in range(5)]) == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_position_is_softmax_of_logs_over_window():
    row = [0.0, 0.1, 0.5, 0.3, 0.0, 0.05]
    # softmax(log v) over tokens 0..4 (peak 2, window 2) = v / sum(v); token 5 is outside the window.
    logs = [math.log(v) if v > 0 else -math.inf for v in row[0:5]]
    z = sum(math.exp(x) for x in logs)
    expected = sum(i * math.exp(x) / z for i, x in enumerate(logs))
    assert frame_positions([row])[0] == pytest.approx(expected)
    assert expected == pytest.approx((1 * 0.1 + 2 * 0.5 + 3 * 0.3) / 0.9)


def test_attention_far_from_peak_is_ignored():
    # A little attention on the last token must not pull the position ahead (the reference's failure).
    row = [0.7, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.3]
    assert frame_positions([row]) == [0.0]
    assert frame_positions([row], window=9)[0] == pytest.approx(2.7)


def test_window_clipped_at_row_edges():
    assert frame_positions([[0.8, 0.2, 0.0, 0.0]])[0] == pytest.approx(0.2)
    assert frame_positions([[0.0, 0.0, 0.2, 0.8]])[0] == pytest.approx(2.8)


def test_window_zero_is_the_peak():
    assert frame_positions([[0.1, 0.3, 0.6, 0.0]], window=0) == [2.0]


def test_position_never_moves_back():
    rows = [onehot(6, 0), onehot(6, 3), onehot(6, 1), onehot(6, 2), onehot(6, 4)]
    assert frame_positions(rows) == [0.0, 3.0, 3.0, 3.0, 4.0]


def test_zero_and_nan_rows_keep_previous_position():
    rows = [[0.0, 0.0, 0.0], onehot(3, 1), [0.0, 0.0, 0.0], [math.nan] * 3, onehot(3, 2)]
    assert frame_positions(rows) == [0.0, 1.0, 1.0, 1.0, 2.0]


def test_nan_inf_negative_count_as_zero():
    assert frame_positions([[math.nan, 0.5, math.inf, -3.0]]) == [1.0]


def test_ties_pick_first_peak():
    assert frame_positions([[0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5]]) == [1.0]


def test_huge_values_do_not_overflow():
    assert frame_positions([[1e308, 1e308, 0.0]])[0] == pytest.approx(0.5)


def test_frame_positions_empty_inputs():
    assert frame_positions([]) == []
    assert frame_positions([[], []]) == [0.0, 0.0]


def test_frame_positions_rejects_ragged_rows_and_bad_window():
    with pytest.raises(ValueError, match="row 1"):
        frame_positions([[0.1, 0.2], [0.1]])
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="window"):
            frame_positions([[1.0]], window=bad)


# loudness_db


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), min_size=4, max_size=4),
        max_size=30,
    ),
    st.lists(st.integers(0, 6), max_size=8),
    st.integers(0, 3),
)
def test_position_walk_fed_in_pieces_is_frame_positions(rows, cuts, window):
    """The engine feeds a PositionWalk chunk by chunk: any cutting gives frame_positions of all rows."""
    walk_ = PositionWalk(window)
    at = 0
    for cut in cuts:
        walk_.extend(rows[at : at + cut])
        at += cut
    walk_.extend(rows[at:])
    assert walk_.positions == frame_positions(rows, window)


def test_positions_from_arrays_equal_positions_from_lists():
    """The engine walks array('f') rows (numpy rows work too): the same positions as lists of the same
    values, on the fast path (finite rows) and the slow one (NaN, infinities, negatives)."""
    import numpy as np

    rows = [
        [0.1, 0.7, 0.2, 0.0],
        [0.0, -1.0, 0.3, 0.3],
        [float("nan"), 0.2, 0.5, 0.1],
        [0.0, float("inf"), 0.4, 0.9],
        [-0.5, -0.1, -2.0, -1.0],
        [0.0, 0.0, 0.25, 0.75],
    ]
    as_f32 = [array("f", r).tolist() for r in rows]
    want = frame_positions(as_f32)
    assert frame_positions([array("f", r) for r in rows]) == want
    assert frame_positions([np.array(r, np.float32) for r in rows]) == pytest.approx(want, abs=1e-6)


def test_position_walk_rejects_a_row_of_another_width_in_a_later_piece():
    walk_ = PositionWalk()
    walk_.extend([[0.5, 0.5, 0.0]])
    with pytest.raises(ValueError, match="attention row 1 has 2 values but row 0 has 3"):
        walk_.extend([[0.5, 0.5]])


def test_align_takes_known_positions_and_checks_their_count():
    rows, pieces = walk(4, 3), ["\u2581a", "\u2581b", "\u2581c", "\u2581d"]
    audio = sine(len(rows) * 0.08)
    assert align(rows, pieces, audio, positions=frame_positions(rows)) == align(rows, pieces, audio)
    # positions are taken as given: a walk one token further on moves every start
    later = [p + 1 for p in frame_positions(rows)]
    assert align(rows, pieces, audio, positions=later) != align(rows, pieces, audio)
    with pytest.raises(ValueError, match="11 positions for 12 attention rows"):
        align(rows, pieces, audio, positions=frame_positions(rows)[:-1])


def test_loudness_of_sine_square_and_silence():
    db = loudness_db(sine(0.1, amplitude=1.0, freq=1000.0))
    assert len(db) == 10
    assert all(x == pytest.approx(-3.0103, abs=1e-3) for x in db)
    assert loudness_db([0.5] * 240) == [pytest.approx(20 * math.log10(0.5))]
    assert loudness_db(silence(0.05)) == [SILENCE_FLOOR_DB] * 5
    assert loudness_db([1e-30] * 240) == [SILENCE_FLOOR_DB]


def test_loudness_steps_and_partial_last_step():
    samples = [0.0] * 240 + [0.1] * 100
    db = loudness_db(samples)
    assert db == [SILENCE_FLOOR_DB, pytest.approx(-20.0)]
    assert loudness_db([]) == []
    assert len(loudness_db([0.1] * 480, sample_rate=48000)) == 1


def test_loudness_accepts_array_list_memoryview():
    values = sine(0.05)
    arr = array("f", values)
    expected = loudness_db(arr.tolist())
    assert loudness_db(arr) == expected
    assert loudness_db(memoryview(arr)) == expected
    assert loudness_db(array("d", arr)) == expected
    with pytest.raises(ValueError, match="memoryview"):
        loudness_db(memoryview(arr).cast("B"))
    with pytest.raises(ValueError):
        loudness_db(values, sample_rate=0)


def test_loudness_of_a_minute_is_fast():
    arr = array("f", sine(1.0)) * 60
    assert len(arr) == 1_440_000
    t0 = time.perf_counter()
    db = loudness_db(arr)
    elapsed = time.perf_counter() - t0
    print(f"loudness_db of 60 s: {elapsed * 1000:.1f} ms")
    assert len(db) == 6000
    assert elapsed < 1.0


# word_groups and texts


def words_of(pieces):
    return [[pieces[i] for i in g] for g in word_groups(pieces)]


def test_metaspace_starts_words():
    assert words_of(["▁Hello", "▁wor", "ld"]) == [["▁Hello"], ["▁wor", "ld"]]


def test_punctuation_joins_previous_word():
    pieces = ["▁Hi", "▁,", "▁there", "▁.", "▁…", "!"]
    assert words_of(pieces) == [["▁Hi", "▁,"], ["▁there", "▁.", "▁…", "!"]]


def test_opening_bracket_stays_with_its_word():
    assert words_of(["▁say", "▁(", "hi", ")"]) == [["▁say"], ["▁(", "hi", ")"]]


def test_leading_punctuation_joins_first_word_and_all_punctuation_is_one_word():
    assert words_of(["▁—", "▁hello"]) == [["▁—", "▁hello"]]
    assert words_of(["▁.", "▁.", "▁!"]) == [["▁.", "▁.", "▁!"]]
    assert word_groups([]) == []


def test_byte_fallback_punctuation_joins_previous_word():
    # "▁" then the three bytes of an em dash: a group with no word character.
    assert words_of(["▁a", "▁", "<0xE2>", "<0x80>", "<0x94>"]) == [["▁a", "▁", "<0xE2>", "<0x80>", "<0x94>"]]


def test_word_groups_rejects_non_strings():
    with pytest.raises(TypeError):
        word_groups(["▁a", 3])


def loud(seconds: float) -> list[float]:
    return sine(seconds)


def test_byte_fallback_merges_into_one_character():
    pieces = ["▁caf", "<0xC3>", "<0xA9>", "▁ok"]
    words, tokens = align(walk(4, 2), pieces, loud(8 * 0.08))
    assert [w.text for w in words] == ["café", "ok"]
    assert [t.text for t in tokens] == [" caf", "", "é", " ok"]


def test_word_starting_with_byte_fallback_and_invalid_bytes():
    pieces = ["▁", "<0xC3>", "<0xA9>", "t", "<0xFF>", "▁", "<0xC3>"]
    words, tokens = align(walk(7, 1), pieces, loud(7 * 0.08))
    assert [w.text for w in words] == ["ét\ufffd", "\ufffd"]
    assert "".join(t.text for t in tokens) == " ét\ufffd \ufffd"


def test_word_text_replaces_metaspace_and_strips():
    words, _ = align(walk(3, 1), ["▁Hi", "▁,", "▁you"], loud(0.24))
    assert [w.text for w in words] == ["Hi ,", "you"]


# align: times


def test_diagonal_walk_gives_even_starts():
    count, per = 5, 3
    rows = walk(count, per)
    audio = loud(len(rows) * 0.08)
    words, tokens = align(rows, ["▁a", "▁b", "▁c", "▁d", "▁e"], audio, shift_frames=0)
    assert [t.start for t in tokens] == pytest.approx([i * per / FR for i in range(count)])
    assert [t.end for t in tokens] == pytest.approx([(i + 1) * per / FR for i in range(count)])
    assert [w.text for w in words] == ["a", "b", "c", "d", "e"]
    assert [(w.start, w.end) for w in words] == [(t.start, t.end) for t in tokens]


def test_default_shift_is_three_frames_clamped_at_zero():
    rows = walk(4, 5)
    audio = loud(len(rows) * 0.08)
    _, plain = align(rows, ["▁a", "▁b", "▁c", "▁d"], audio, shift_frames=0)
    _, shifted = align(rows, ["▁a", "▁b", "▁c", "▁d"], audio)
    assert [t.start for t in plain] == pytest.approx([0.0, 0.4, 0.8, 1.2])
    assert [t.start for t in shifted] == pytest.approx([0.0, 0.4 - 0.24, 0.8 - 0.24, 1.2 - 0.24])
    assert shifted[-1].end == plain[-1].end == pytest.approx(1.6)


def test_linger_then_jump():
    rows = [onehot(4, 0)] * 10 + [onehot(4, 3)] * 5
    _, tokens = align(rows, ["▁a", "▁b", "▁c", "▁d"], loud(15 * 0.08), shift_frames=0)
    assert [t.start for t in tokens] == pytest.approx([0.0, 0.8, 0.8, 0.8])
    assert [t.end for t in tokens] == pytest.approx([0.8, 0.8, 0.8, 1.2])


def test_peak_moving_back_is_ignored():
    rows = [onehot(4, 0), onehot(4, 1), onehot(4, 2), onehot(4, 0), onehot(4, 1), onehot(4, 3)]
    _, tokens = align(rows, ["▁a", "▁b", "▁c", "▁d"], loud(6 * 0.08), shift_frames=0)
    assert [t.start for t in tokens] == pytest.approx([0.0, 0.08, 0.16, 0.4])


def test_token_start_threshold_is_half_a_token():
    # Positions 0, 0.4, 0.5, 1.6: token 1 starts at the frame reaching 0.5, token 2 where 1.5 is passed.
    rows = [[1.0, 0.0, 0.0], [0.6, 0.4, 0.0], [0.5, 0.5, 0.0], [0.0, 0.4, 0.6]]
    assert frame_positions(rows) == pytest.approx([0.0, 0.4, 0.5, 1.6])
    _, tokens = align(rows, ["▁a", "▁b", "▁c"], loud(0.32), shift_frames=0)
    assert [t.start for t in tokens] == pytest.approx([0.0, 0.16, 0.24])


def test_unreached_tokens_start_at_end_of_audio():
    rows = [onehot(3, 0)] * 4
    words, tokens = align(rows, ["▁a", "▁b", "▁c"], loud(0.32), shift_frames=0)
    assert [(t.start, t.end) for t in tokens] == pytest.approx([(0.0, 0.32), (0.32, 0.32), (0.32, 0.32)])
    assert words[-1].start == words[-1].end == pytest.approx(0.32)


def test_times_clamped_to_audio_shorter_than_frames():
    rows = walk(3, 4)  # 12 frames = 0.96 s, but only 0.5 s of audio
    _, tokens = align(rows, ["▁a", "▁b", "▁c"], loud(0.5), shift_frames=0)
    assert [t.start for t in tokens] == pytest.approx([0.0, 0.32, 0.5])
    assert tokens[-1].end == pytest.approx(0.5)


def test_leading_silence_moves_first_word_to_sound():
    rows = walk(2, 10)  # 1.6 s
    audio = silence(0.3) + loud(1.3)
    words, tokens = align(rows, ["▁hello", "▁world"], audio)
    assert words[0].start == pytest.approx(0.3)
    assert tokens[0].start == pytest.approx(0.3)
    assert words[1].start == pytest.approx((10 - 3) / FR)


def test_word_start_in_pause_moves_to_where_sound_begins():
    # "hello" is spoken 0..0.6 s, a pause until 1.0 s, then "big world". The head reaches "big" at
    # frame 12 (0.96 s), 3-frame shift: 0.72 s, inside the pause.
    rows = [onehot(4, 0)] * 12 + [onehot(4, 1)] * 8 + [onehot(4, 2)] * 3 + [onehot(4, 3)] * 2
    audio = loud(0.6) + silence(0.4) + loud(1.0)
    pieces = ["▁hello", "▁big", "▁wor", "ld"]
    words, tokens = align(rows, pieces, audio)
    assert [w.text for w in words] == ["hello", "big", "world"]
    assert words[0].end == pytest.approx(0.72)  # the pause belongs to no word
    assert words[1].start == pytest.approx(1.0)
    assert tokens[1].start == pytest.approx(1.0)
    assert words[1].end == pytest.approx((20 - 3) / FR)
    assert words[2].start == pytest.approx((20 - 3) / FR)


def test_snapping_moves_every_token_of_the_word_consistently():
    # "big" is two tokens that start at the same frame, both in the pause.
    rows = [onehot(3, 0)] * 12 + [onehot(3, 2)] * 8
    audio = loud(0.6) + silence(0.4) + loud(0.6)
    _, tokens = align(rows, ["▁hello", "▁b", "ig"], audio)
    assert [t.start for t in tokens] == pytest.approx([0.0, 1.0, 1.0])
    assert tokens[1].end == pytest.approx(1.0)
    assert tokens[2].end == pytest.approx(1.6)


def test_no_snap_past_the_words_end_or_without_sound():
    rows = [onehot(3, 0)] * 12 + [onehot(3, 1)] * 2 + [onehot(3, 2)] * 10
    audio = loud(0.6) + silence(0.8) + loud(0.52)
    words, _ = align(rows, ["▁a", "▁b", "▁c"], audio)
    # "b" spans 0.72..0.88, all silent: it stays; "c" starts at 0.88 in silence and moves to 1.4.
    assert (words[1].start, words[1].end) == pytest.approx((0.72, 0.88))
    assert words[2].start == pytest.approx(1.4)
    words, _ = align(walk(2, 5), ["▁a", "▁b"], silence(0.8))
    assert [w.start for w in words] == pytest.approx([0.0, 0.16])


def test_quiet_but_not_silent_audio_counts_as_sound():
    audio = [0.01] * 2400 + sine(0.5)  # -40 dB: above the -45 dB threshold
    words, _ = align(walk(1, 5), ["▁a"], audio)
    assert words[0].start == 0.0
    words, _ = align(walk(1, 5), ["▁a"], audio, silence_db=-35.0)
    assert words[0].start == pytest.approx(0.1)


def test_audio_inputs_as_array_and_memoryview():
    rows = walk(2, 10)
    audio = silence(0.3) + loud(1.3)
    expected = align(rows, ["▁a", "▁b"], audio)
    assert align(rows, ["▁a", "▁b"], array("f", audio)) == expected
    assert align(rows, ["▁a", "▁b"], memoryview(array("f", audio))) == expected


# align: edge cases


def test_no_tokens():
    assert align([], [], loud(0.1)) == ([], [])
    assert align([[], []], [], loud(0.16)) == ([], [])


def test_no_frames():
    words, tokens = align([], ["▁a", "▁b"], [])
    assert words == [Timed("a", 0.0, 0.0), Timed("b", 0.0, 0.0)]
    assert tokens == [Timed(" a", 0.0, 0.0), Timed(" b", 0.0, 0.0)]


def test_one_token():
    words, tokens = align([onehot(1, 0)] * 5, ["▁Hi"], loud(0.4))
    assert words == [Timed("Hi", 0.0, pytest.approx(0.4))]
    assert len(tokens) == 1


def test_all_zero_and_nan_rows():
    rows = [[0.0, 0.0]] * 3 + [[math.nan, math.nan]] * 3
    words, tokens = align(rows, ["▁a", "▁b"], loud(0.48))
    assert [t.start for t in tokens] == pytest.approx([0.0, 0.48])
    assert words[1].start == words[1].end


@pytest.mark.parametrize("bad_row", [[0.5], [0.5, 0.2, 0.1], []])
def test_rows_of_wrong_length_raise(bad_row):
    rows = [[0.5, 0.5], bad_row, [0.5, 0.5]]
    with pytest.raises(ValueError, match=r"row 1 has \d values but there are 2 text tokens"):
        align(rows, ["▁a", "▁b"], loud(0.24))


def test_rows_with_no_tokens_must_be_empty():
    with pytest.raises(ValueError, match="0 text tokens"):
        align([[0.5]], [], loud(0.08))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"sample_rate": 0},
        {"frame_rate": -1.0},
        {"shift_frames": math.nan},
        {"silence_db": math.nan},
        {"window": -1},
        {"sample_rate": True},
    ],
)
def test_bad_options_raise(kwargs):
    with pytest.raises(ValueError):
        align(walk(2, 2), ["▁a", "▁b"], loud(0.32), **kwargs)


def test_timed_is_frozen():
    t = Timed("a", 0.0, 1.0)
    with pytest.raises(AttributeError):
        t.start = 2.0  # type: ignore[misc]


# Properties

value = st.one_of(st.floats(0.0, 1.0), st.just(0.0), st.just(math.nan))
piece = st.sampled_from(["▁a", "▁bc", "d", "▁,", "▁.", ",", "▁", "<0xC3>", "<0xA9>", "▁(", "é", ""])


@st.composite
def cases(draw):
    count = draw(st.integers(0, 8))
    frames = draw(st.integers(0, 14))
    rows = [draw(st.lists(value, min_size=count, max_size=count)) for _ in range(frames)]
    pieces = draw(st.lists(piece, min_size=count, max_size=count))
    # Audio: alternating loud and silent stretches, from nothing to a bit longer than the frames.
    spans = draw(st.lists(st.tuples(st.booleans(), st.integers(0, 600)), max_size=6))
    samples = []
    for is_loud, n in spans:
        samples += [0.3 * math.sin(i / 5) if is_loud else 0.0 for i in range(n * 4)]
    shift = draw(st.sampled_from([0, 1, 3, 4.5]))
    return rows, pieces, samples, shift


@settings(max_examples=300, deadline=None)
@given(cases())
def test_properties(case):
    rows, pieces, samples, shift = case
    words, tokens = align(rows, pieces, samples, shift_frames=shift)
    duration = len(samples) / SR
    assert len(tokens) == len(pieces)
    for seq in (tokens, words):
        previous_end = 0.0
        for t in seq:
            assert 0.0 <= t.start <= t.end <= duration
            assert t.start >= previous_end
            previous_end = t.end
    if tokens:
        assert tokens[-1].end == duration
    groups = word_groups(pieces)
    assert [i for g in groups for i in g] == list(range(len(pieces)))
    assert len(words) == len(groups)
    for w, g in zip(words, groups, strict=True):
        assert w.start == tokens[g[0]].start
        assert w.end == tokens[g[-1]].end
        assert w.text == w.text.strip()
        assert all(tokens[i].start == tokens[i - 1].end for i in g[1:])
    starts = [t.start for t in tokens]
    assert starts == sorted(starts)


@settings(max_examples=150, deadline=None)
@given(cases())
def test_a_layout_made_ahead_gives_the_same_times(case):
    rows, pieces, samples, shift = case
    assert align(rows, pieces, samples, shift_frames=shift, layout=text_layout(pieces)) == align(
        rows, pieces, samples, shift_frames=shift
    )


def test_a_layout_of_other_pieces_is_refused():
    with pytest.raises(ValueError, match="other pieces"):
        align([[0.9, 0.1]], ["▁a", "▁b"], sine(0.1), layout=text_layout(["▁a", "▁c"]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(value, min_size=5, max_size=5), max_size=20), st.integers(0, 4))
def test_positions_monotone_and_in_range(rows, window):
    positions = frame_positions(rows, window)
    assert len(positions) == len(rows)
    assert positions == sorted(positions)
    assert all(0.0 <= p <= 4.0 for p in positions)
