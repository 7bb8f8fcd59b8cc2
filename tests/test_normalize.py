"""Tests of phonon_web.normalize: a table of written -> spoken cases, the span map back to the caller's text,
and properties on arbitrary text."""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import phonon_web.normalize as normalize_module
from phonon_web.normalize import Normalized, cardinal, normalize, ordinal, year

CASES_FILE = os.path.join(os.path.dirname(__file__), "data", "normalize_cases.tsv")


def load_cases() -> list[tuple[str, str]]:
    cases = []
    with open(CASES_FILE, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#"):
                continue
            written, spoken = line.split("\t")
            cases.append((written, spoken))
    return cases


CASES = load_cases()


def test_table_is_large():
    assert len(CASES) >= 300
    assert len({w for w, _ in CASES}) == len(CASES), "duplicate inputs in the table"


@pytest.mark.parametrize(("written", "spoken"), CASES, ids=[repr(w)[:60] for w, _ in CASES])
def test_case(written: str, spoken: str):
    assert normalize(written).text == spoken


# --- spans and original_span


def check_invariants(text: str, n: Normalized) -> None:
    prev_ne = prev_oe = 0
    rebuilt = []
    for ns, ne, os_, oe in n.spans:
        assert prev_ne <= ns < ne <= len(n.text)
        assert prev_oe <= os_ < oe <= len(text)
        # outside the spans the two texts are equal, offset by the replacements so far
        assert n.text[prev_ne:ns] == text[prev_oe:os_]
        rebuilt.append(text[prev_oe:os_] + text[os_:oe])
        prev_ne, prev_oe = ne, oe
    assert n.text[prev_ne:] == text[prev_oe:]
    rebuilt.append(text[prev_oe:])
    assert "".join(rebuilt) == text


def word_ranges(s: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"\S+", s)]


SPAN_TEXTS = [c[0] for c in CASES] + [
    "I paid $5.20 for 3 apples, e.g. Henry VIII at 9:30 p.m. on 2026-11-30 & more.",
    "x&y+z=5km/h",
    "C++ and a+b",
]


@pytest.mark.parametrize("text", SPAN_TEXTS, ids=[repr(t)[:60] for t in SPAN_TEXTS])
def test_spans_and_original_span(text: str):
    n = normalize(text)
    check_invariants(text, n)
    for ns, ne, os_, oe in n.spans:
        # the whole replacement, and every word inside it, maps back to exactly the written token
        assert n.original_span(ns, ne) == (os_, oe)
        for ws, we in word_ranges(n.text[ns:ne]):
            assert n.original_span(ns + ws, ns + we) == (os_, oe)
        for i in range(ns, ne):
            assert n.original_span(i, i + 1) == (os_, oe)
    # untouched characters map 1:1 to the same character
    covered = set()
    for ns, ne, _, _ in n.spans:
        covered.update(range(ns, ne))
    for i in range(len(n.text)):
        if i not in covered:
            a, b = n.original_span(i, i + 1)
            assert b == a + 1 and text[a] == n.text[i]


def test_original_span_example():
    text = "It costs $5.20 today."
    n = normalize(text)
    assert n.text == "It costs five dollars and twenty cents today."
    dollar = (text.index("$"), text.index(" today"))
    for word in ("five", "dollars", "and", "twenty", "cents"):
        i = n.text.index(word)
        assert n.original_span(i, i + len(word)) == dollar
    i = n.text.index("today")
    assert n.original_span(i, i + 5) == (text.index("today"), text.index("today") + 5)
    assert n.original_span(0, 2) == (0, 2)
    # a range from untouched text into a replacement covers the whole token
    assert n.original_span(0, n.text.index("dollars")) == (0, dollar[1])
    assert n.original_span(len(n.text), len(n.text)) == (len(text), len(text))
    assert n.spans == [(9, 38, 9, 14)]


def test_original_span_partial_replacement():
    text = "Henry VIII was king."
    n = normalize(text)
    assert n.text == "Henry the Eighth was king."
    assert n.spans == [(6, 16, 6, 10)]
    assert n.original_span(0, 5) == (0, 5)  # "Henry" is untouched
    assert n.original_span(10, 16) == (6, 10)  # "Eighth" -> "VIII"
    i = n.text.index("king")
    assert n.original_span(i, i + 4) == (text.index("king"), text.index("king") + 4)


def test_padding_is_inside_the_span():
    n = normalize("x&y")
    assert n.text == "x and y"
    assert n.spans == [(1, 6, 1, 2)]
    assert n.original_span(6, 7) == (2, 3)


def test_original_span_rejects_bad_ranges():
    n = normalize("$5")
    for a, b in ((-1, 2), (3, 2), (0, 100)):
        with pytest.raises(ValueError):
            n.original_span(a, b)


def test_untouched_text_is_identical_object_content():
    text = "Nothing to see here, move along."
    n = normalize(text)
    assert n.text == text and n.spans == []


# --- sentence punctuation


@pytest.mark.parametrize(
    ("written", "spoken"),
    [
        ("Dr. Smith came.", "Doctor Smith came."),
        ("It was $3.5M. Then more.", "It was three point five million dollars. Then more."),
        ("We left at 9 p.m. Then we slept.", "We left at nine p m. Then we slept."),
        ("We left at 9 p.m. and slept.", "We left at nine p m and slept."),
        ("Apples, etc. Then pears.", "Apples, et cetera. Then pears."),
        ("e.g. Paris", "for example Paris"),
        ("Mr. and Mrs. Smith", "Mister and Missus Smith"),
    ],
)
def test_sentence_punctuation(written: str, spoken: str):
    assert normalize(written).text == spoken


@pytest.mark.parametrize(
    ("written", "sentences"),
    [
        ("Dr. Smith met Mr. Jones at 9:30 a.m. on Main St. in 2026. They talked.", 2),
        ("It cost $3.5M in 2026. Then e.g. St. Louis paid 3.14% more, etc. and left.", 2),
        ("We met at 9 p.m. Then we slept. Apples, pears, etc. Good.", 4),
        ("Visit example.com. Write to a.b@c.io today.", 2),
    ],
)
def test_sentence_splitter_still_works(written: str, sentences: int):
    from phonon_web.text import split_sentences

    assert len(split_sentences(normalize(written).text)) == sentences


# --- number words


def test_number_words():
    assert cardinal(0) == "zero"
    assert cardinal(-15) == "minus fifteen"
    assert cardinal(10**18 - 1).startswith("nine hundred ninety-nine quadrillion")
    assert cardinal(10**18) == "one " + " ".join(["zero"] * 18)
    assert ordinal(1) == "first" and ordinal(12) == "twelfth" and ordinal(30) == "thirtieth"
    assert ordinal(1001) == "one thousand first"
    assert year(1999) == "nineteen ninety-nine" and year(2026) == "twenty twenty-six"
    assert (
        year(2000) == "two thousand"
        and year(2009) == "two thousand nine"
        and year(1800) == "eighteen hundred"
    )


@given(st.integers(min_value=0, max_value=10**18 - 1))
def test_cardinal_shape(n: int):
    words = cardinal(n)
    assert re.fullmatch(r"[a-z]+(?:[- ][a-z]+)*", words)
    assert " and " not in words


# --- properties on arbitrary text

ALPHABET = st.sampled_from(
    list("0123456789") * 4
    + list(" .,:;-/–$£€¥%&@#+=°'’()\n")
    + list("aAbBcCdDeEgikKmMnNoOpPrRsStTvVxXIL½")
    + ["km", "Dr.", "St.", "e.g.", "p.m.", "www.", "http://", ".com", "Nov. ", "VIII", "Henry ", "Chapter "]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(ALPHABET, max_size=40).map("".join))
def test_never_raises_on_token_soup(text: str):
    check_invariants(text, normalize(text))


def _matches(pattern: re.Pattern, text: str) -> list[tuple[str | None, tuple[int, int]]]:
    return [(m.lastgroup, m.span()) for m in pattern.finditer(text)]


_PLAIN_MASTER = re.compile(normalize_module._ALTERNATION)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.lists(ALPHABET, max_size=40).map("".join), st.text(max_size=80)))
def test_the_scan_prefilter_changes_no_match(text: str):
    """_MASTER says where a match may start before its alternatives: it must find what they find."""
    assert _matches(normalize_module._MASTER, text) == _matches(_PLAIN_MASTER, text)


def test_the_scan_prefilter_changes_no_match_on_the_table():
    for written, _ in CASES:
        assert _matches(normalize_module._MASTER, written) == _matches(_PLAIN_MASTER, written), written


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_never_raises_on_arbitrary_text(text: str):
    n = normalize(text)
    check_invariants(text, n)
    if n.text:
        assert n.original_span(0, len(n.text))[1] <= len(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(ALPHABET, max_size=30).map("".join), st.data())
def test_original_span_stays_inside(text: str, data):
    n = normalize(text)
    a = data.draw(st.integers(0, len(n.text)))
    b = data.draw(st.integers(a, len(n.text)))
    oa, ob = n.original_span(a, b)
    assert 0 <= oa <= ob <= len(text)


def test_long_digit_strings_do_not_raise():
    text = "9" * 5000 + " " + "1" * 5000 + "st " + "$" + "2" * 5000 + " 1/" + "3" * 5000
    check_invariants(text, normalize(text))
