"""The corpus of bad and odd inputs, `tests/data/bad_inputs.json`, shared by the native tests
(tests/test_hardening_inputs.py) and the browser tests (tests/browser/), which read the same file.

The file holds:
  reference   {"text", "options"}: a normal request, spoken after every case; its result must equal
              the one computed once before any case.
  defaults    options every case starts from (a short frame cap keeps the corpus fast); a case's own
              options override them.
  cases       a list of objects:
    name      unique, says what is tried
    text      what speak() gets as its text (any JSON value; encoded values below); absent in scenarios
    options   keyword options of speak(): voice, speed, seed, normalize, max_frames, cancel
    expect    "speaks", or the name of the phonon_web error it must raise (TextError, OptionError,
              VoiceError, CancelledError, ClosedError, WeightsError, ...)
    same_as   (optional) options whose request must give bit-identical audio (e.g. a huge seed and
              the same seed modulo 2**32)
    scenario  (optional) a named setup the test performs instead of one plain speak():
              speak_after_close, load_twice, weights_* (a damaged copy of the weights folder),
              long_text_streamed (the text is spoken with on_audio, memory measured)
    only      (optional) "python" or "browser": the case means something on that side only
    why       (optional) the decision, for inputs that are valid but odd

Values JSON cannot carry are written as an object with exactly one of these keys (nothing else in
the corpus is such an object, so decoding is unambiguous):
  {"special": "NaN" | "Infinity" | "-Infinity"}   the float
  {"special": "cancelled"}                          a cancel signal already set: Python a set
                                                    threading.Event, JavaScript AbortSignal.abort()
  {"codepoints": [int, ...]}                        the string of those code points; this is how lone
                                                    surrogates and control characters are written
  {"repeat": "str", "times": n}                     "str" * n (with "times", two keys)
  {"bigint": "digits"}                              an integer beyond 2**53 (JavaScript: a BigInt)
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

CORPUS = Path(__file__).parent / "data" / "bad_inputs.json"

_FLOATS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


def decode(value):
    """A corpus value as Python sees it (see the module docstring for the encodings)."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    keys = set(value)
    if keys == {"special"}:
        special = value["special"]
        if special == "cancelled":
            event = threading.Event()
            event.set()
            return event
        return _FLOATS[special]
    if keys == {"codepoints"}:
        return "".join(map(chr, value["codepoints"]))
    if keys == {"repeat", "times"}:
        return value["repeat"] * value["times"]
    if keys == {"bigint"}:
        return int(value["bigint"])
    return {k: decode(v) for k, v in value.items()}


def load_corpus(side: str = "python") -> dict:
    """The corpus with its values decoded, keeping the cases meant for `side` ("python" or "browser")."""
    data = json.loads(CORPUS.read_text(encoding="utf-8"))
    cases = [c for c in data["cases"] if c.get("only", side) == side]
    names = [c["name"] for c in data["cases"]]
    if len(names) != len(set(names)):
        raise ValueError("two cases of the corpus share a name")
    return {
        "reference": decode(data["reference"]),
        "defaults": decode(data["defaults"]),
        "cases": [{**c, "text": decode(c.get("text")), "options": decode(c["options"])} for c in cases],
    }
