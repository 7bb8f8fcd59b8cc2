"""Spoken words back to their characters: grouping like the timing, matching when counts differ."""

from phonon_web.normalize import normalize
from phonon_web.timing import Timed
from phonon_web.word_spans import attach, locate, written_words


def words(*texts):
    return [Timed(t, i / 8, (i + 1) / 8) for i, t in enumerate(texts)]  # exact binary fractions


def test_punctuation_only_chunks_join_a_word():
    text = '" Hello , world - again ."'
    spans = [text[s:e] for s, e in written_words(text)]
    assert spans == ['" Hello ,', "world -", 'again ."']


def test_counts_that_differ_are_matched_by_letters():
    text = "one (two) three"
    spoken = words("one", ",", "two,", "three.")  # a tokenizer normaliser turned brackets into commas
    found = locate(spoken, text)
    assert [text[s:e] if s is not None else None for s, e in (f or (None, None) for f in found)] == [
        "one",
        None,
        "(two)",
        "three",
    ]


def test_one_written_token_becomes_one_timed_word():
    text = "It cost $5.20 today."
    spoken = normalize(text)
    assert spoken.text == "It cost five dollars and twenty cents today."
    timed = words(*spoken.text.split())
    out = attach(timed, spoken.text, 0, spoken.original_span, text)
    assert [(w.text, w.start, w.end) for w in out] == [
        ("It", 0 / 8, 1 / 8),
        ("cost", 1 / 8, 2 / 8),
        ("$5.20", 2 / 8, 7 / 8),
        ("today.", 7 / 8, 8 / 8),
    ]
    assert all(text[w.start_char : w.end_char] == w.text for w in out)
