"""What a request may hold: every argument of `speak()` checked before any GPU work, in plain words.

Natively and in the browser worker the same checks run (the worker hands its options to Engine.speak),
so a page and a Python caller get the same typed error for the same mistake.

Decisions, tested by the shared corpus tests/data/bad_inputs.json:
* the text must be a str; control characters (C0 but tab and newlines, DEL, C1) and lone surrogates
  (a JavaScript string cut inside an emoji) are read as spaces, which keeps every character offset;
* a text with no letter or digit anywhere, even after numbers and symbols become words ("..." or
  "😀" alone), is a TextError: the model has nothing to say, and would make noise of it;
* the seed is any integer, taken modulo 2**32 (negative ones too, as two's complement): the GPU's
  noise generator has 32 bits of seed, so 5 and 2**32 + 5 speak alike.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable

from .errors import OptionError, TextError, VoiceError

# C0 controls but tab, line feed and carriage return; DEL; C1 controls.
_CONTROLS = [c for c in range(0x20) if chr(c) not in "\t\n\r"] + list(range(0x7F, 0xA0))
_AS_SPACE = {c: " " for c in _CONTROLS + list(range(0xD800, 0xE000))}  # and the surrogates


def readable_text(text: object) -> str:
    """`text` with control characters and lone surrogates as spaces, or TextError if not a string."""
    if not isinstance(text, str):
        raise TextError(f"the text must be a string, not {type(text).__name__}: pass the words to say as str")
    return text.translate(_AS_SPACE)


def check_has_words(spoken: str) -> None:
    if not any(ch.isalnum() for ch in spoken):
        raise TextError(
            "the text has nothing to say (no letters or digits, only spaces, punctuation, symbols or "
            "emoji): give it at least one word"
        )


def check_voice(voice: object, voices: tuple[str, ...]) -> str:
    if voice is None:
        return voices[0]
    if not isinstance(voice, str) or voice not in voices:
        raise VoiceError(f"unknown voice {voice!r}: use one of the loaded voices, {', '.join(voices)}")
    return voice


def check_seed(seed: object) -> int:
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise OptionError(f"seed must be an integer (any size, taken modulo 2**32), not {seed!r}")
    return int(seed)


def check_max_frames(frames: object) -> int | None:
    if frames is None:
        return None
    if isinstance(frames, bool) or not isinstance(frames, numbers.Integral) or frames < 1:
        raise OptionError(f"max_frames must be a whole number of frames, at least 1, or None; got {frames!r}")
    return int(frames)


def check_temperature(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value < math.inf:
        raise OptionError(f"temperature must be a finite number >= 0 (0.3 by default) or None, not {value!r}")
    return float(value)


def check_eos_threshold(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        raise OptionError(f"eos_threshold must be a number (inf: never stop early), or None; got {value!r}")
    return float(value)


def check_flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise OptionError(f"{name} must be True or False, not {value!r}")
    return value


def check_callback(name: str, callback: object) -> Callable | None:
    if callback is not None and not callable(callback):
        raise OptionError(f"{name} must be a function or None, not {type(callback).__name__}")
    return callback


def stop_check(cancel: object) -> Callable[[], bool] | None:
    """`should_stop` for Engine.speak from `cancel`: an Event-like object (is_set()) or a callable."""
    if cancel is None:
        return None
    is_set = getattr(cancel, "is_set", None)
    if callable(is_set):
        return is_set
    if callable(cancel):
        return cancel
    kind = type(cancel).__name__
    raise OptionError(f"cancel must be a threading.Event (anything with is_set()) or a function, not {kind}")
