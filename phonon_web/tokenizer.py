"""A pure-Python reader for HuggingFace `tokenizer.json` files that gives exactly the ids of `tokenizers`.

It runs in CPython and in Pyodide with the standard library only. It implements what a Unigram (SentencePiece
style) text-to-speech tokenizer uses, following `tokenizers` 0.23 line by line where it matters:

- normalizers: `Sequence`, `Replace` (plain string or Oniguruma regex, see `_OnigTranslator`), `Prepend`,
  `Strip`, `NFC`, `NFD`, `NFKC`, `NFKD`, `Lowercase`, or none;
- pre-tokenizers: `Metaspace` (any replacement, `prepend_scheme` always/first/never, `split` true/false),
  `WhitespaceSplit`, `Split`, `Sequence`, or none;
- model: `Unigram` (Viterbi with the library's tie-breaking, fused unknowns, byte fallback);
- added tokens (`special`, `normalized`, `single_word`, `lstrip`, `rstrip`), split out of the text first;
- post-processor: `TemplateProcessing` (single sequence) or none;
- decoder: `Metaspace`, `ByteFallback`, `Fuse`, `Strip`, `Replace`, `Sequence`, or none.

Anything else in the file raises `UnsupportedTokenizerComponent`: a different tokenisation would make the
model say something else, so we refuse rather than guess.

Details that had to be copied from the library to get the same ids:

- Scores are parsed the way `serde_json` parses floats, which is not always correctly rounded: written
  with 16-17 significant digits, a good share of them come out one unit in the last place away from
  Python's `float()` (see `_serde_f64`). Tie-breaking in Viterbi can depend on that last bit.
- Unigram Viterbi adds scores in the same order, keeps the first best path on ties, gives unknown
  characters `min_score - 10`, fuses runs of unknown pieces and only then falls back to bytes.
- Oniguruma regexes are translated to Python `re` (`^`/`$` are line anchors, `(?m)` means dot-all, `\\w`,
  `\\d`, `\\s`, `\\b`, `\\p{..}` use Oniguruma's own Unicode tables embedded below), and matches are
  enumerated with Oniguruma's rule for empty matches. A regex is never run on an empty string.
- Unicode normalization is that of `unicode-normalization-alignments` 0.1.12, which has Unicode 9.0 data:
  characters that became normalization-relevant later are left alone, as that crate does (see
  `_UnicodeNormalizer`). `Lowercase` maps each character on its own (no final-sigma rule), with the
  mappings of Rust's newer Unicode tables added, and `Strip`/`WhitespaceSplit` use Unicode White_Space.
- `prepend_scheme: "first"` prepends only when the piece starts at offset 0 of the original text, which
  depends on how every normalizer moved the first characters; we track that (the `z` values below).
- Text is split around added tokens before normalization, and each part is normalized on its own.

Where `tokenizers` itself misbehaves we refuse with `UnsupportedTokenizerComponent` instead of guessing:
text inserted at the very start by an empty regex match (or an empty `Prepend`) followed by NFx,
Lowercase or Strip (it panics or repeats characters), an added token that normalizes to the empty string
(it splits at every byte), and two added tokens with the same normalized form (it picks one at random).
Lone surrogates cannot be encoded to UTF-8, so `tokenizers` rejects such text; we raise `TextError`.

Unicode tables: Oniguruma's classes, Rust's lowercase mappings and the Unicode 9.0 normalization set are
embedded (`_DATA`), so results do not depend on the running Python's `unicodedata` version, except for
normalization of characters that are normalization-relevant in both Unicode 9.0 and the running Python
(stable by Unicode's own policy) and `str.lower` for characters Python knows.
"""

from __future__ import annotations

import base64
import json
import re
import unicodedata
import zlib
from dataclasses import dataclass

from .errors import TextError, TokenizerError, UnsupportedTokenizerComponent

__all__ = ["Encoding", "Tokenizer"]

# Unicode White_Space: Rust's `char::is_whitespace`, the `regex` crate's and Oniguruma's `\s`
# (Python's `str.isspace` also counts U+001C..U+001F).
_WS = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + "\u2028\u2029\u202f\u205f\u3000"
)
_WS_SET = frozenset(_WS)
_MAX_CODE_POINT = 0x10FFFF
_CACHE_LIMIT = 50_000


def _unsupported(section: str, kind: object) -> UnsupportedTokenizerComponent:
    return UnsupportedTokenizerComponent(
        f"{section} type {kind!r} is not supported by phonon_web's tokenizer"
    )


# ----------------------------------------------------------------------------------------------------------
# Embedded Unicode data (see _DATA at the end of the file)


_TABLES: dict[str, object] | None = None


def _tables() -> dict[str, object]:
    """Decode the embedded tables once: range lists by name, and the lowercase overrides."""
    global _TABLES
    if _TABLES is None:
        raw = zlib.decompress(base64.b85decode("".join(_DATA))).decode("ascii")
        tables: dict[str, object] = {}
        for part in raw.split(";"):
            name, _, body = part.partition(":")
            if name == "LOWER":
                lower = {}
                for item in body.split(","):
                    key, _, value = item.partition("=")
                    lower[chr(int(key, 16))] = "".join(chr(int(h, 16)) for h in value.split("+"))
                tables[name] = lower
                continue
            nums = [int(h, 16) for h in body.split(",")]
            ranges = []
            prev = 0
            for i in range(0, len(nums), 2):
                start = prev + nums[i]
                end = start + nums[i + 1]
                ranges.append((start, end))
                prev = end
            tables[name] = ranges
        _TABLES = tables
    return _TABLES


def _ranges(name: str) -> list[tuple[int, int]]:
    return _tables()[name]  # type: ignore[return-value]


_GC_LEAVES = "Lu Ll Lt Lm Lo Mn Mc Me Nd Nl No Pc Pd Ps Pe Pi Pf Po Sm Sc Sk So Zs Zl Zp Cc Cf Co Cn".split()
_GC_GROUPS = {
    "L": ["Lu", "Ll", "Lt", "Lm", "Lo"],
    "LC": ["Lu", "Ll", "Lt"],
    "M": ["Mn", "Mc", "Me"],
    "N": ["Nd", "Nl", "No"],
    "P": ["Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"],
    "S": ["Sm", "Sc", "Sk", "So"],
    "Z": ["Zs", "Zl", "Zp"],
    "C": ["Cc", "Cf", "Co", "Cn", "Cs"],
}
_GC_LONG = {
    "letter": "L", "casedletter": "LC", "uppercaseletter": "Lu", "lowercaseletter": "Ll",
    "titlecaseletter": "Lt", "modifierletter": "Lm", "otherletter": "Lo", "mark": "M",
    "combiningmark": "M", "nonspacingmark": "Mn", "spacingmark": "Mc", "enclosingmark": "Me",
    "number": "N", "decimalnumber": "Nd", "letternumber": "Nl", "othernumber": "No",
    "punctuation": "P", "connectorpunctuation": "Pc", "dashpunctuation": "Pd", "openpunctuation": "Ps",
    "closepunctuation": "Pe", "initialpunctuation": "Pi", "finalpunctuation": "Pf",
    "otherpunctuation": "Po", "symbol": "S", "mathsymbol": "Sm", "currencysymbol": "Sc",
    "modifiersymbol": "Sk", "othersymbol": "So", "separator": "Z", "spaceseparator": "Zs",
    "lineseparator": "Zl", "paragraphseparator": "Zp", "other": "C", "control": "Cc", "format": "Cf",
    "surrogate": "Cs", "privateuse": "Co", "unassigned": "Cn",
}  # fmt: skip


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + 1:
            if b > out[-1][1]:
                out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def _complement(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out = []
    prev = 0
    for a, b in _merge(ranges):
        if a > prev:
            out.append((prev, a - 1))
        prev = b + 1
    if prev <= _MAX_CODE_POINT:
        out.append((prev, _MAX_CODE_POINT))
    return out


def _gc_ranges(name: str) -> list[tuple[int, int]] | None:
    if name == "Cs":
        return [(0xD800, 0xDFFF)]
    if name in _GC_LEAVES:
        return _ranges(name)
    if name in _GC_GROUPS:
        out: list[tuple[int, int]] = []
        for leaf in _GC_GROUPS[name]:
            out += _gc_ranges(leaf) or []
        return _merge(out)
    return None


def _class_ranges(kind: str) -> list[tuple[int, int]]:
    """Oniguruma's `\\w \\d \\s \\h` (lower case) and their complements (upper case)."""
    base = kind.lower()
    if base == "w":
        ranges = _ranges("w")
    elif base == "d":
        ranges = _ranges("Nd")
    elif base == "s":
        ranges = _merge([(ord(c), ord(c)) for c in _WS])
    elif base == "h":
        ranges = [(0x30, 0x39), (0x41, 0x46), (0x61, 0x66)]
    else:  # pragma: no cover - callers pass only these
        raise ValueError(kind)
    return _complement(ranges) if kind.isupper() else list(ranges)


def _py_class(ranges: list[tuple[int, int]]) -> str:
    """A Python character class matching exactly `ranges` (code point pairs)."""
    ranges = _merge(ranges)
    if not ranges:
        return "(?!)"
    parts = []
    for a, b in ranges:
        if a == b:
            parts.append(f"\\U{a:08x}")
        else:
            parts.append(f"\\U{a:08x}-\\U{b:08x}")
    return "[" + "".join(parts) + "]"


_WORD_CLASS: str | None = None


def _word_class() -> str:
    global _WORD_CLASS
    if _WORD_CLASS is None:
        _WORD_CLASS = _py_class(_ranges("w"))
    return _WORD_CLASS


_WORD_RE: re.Pattern[str] | None = None


# The `regex` crate's `\\w` (used for `single_word` added tokens) is Oniguruma's plus the two join controls
# and minus six Latin-1 digits/fractions (measured over every code point with tokenizers 0.23.3).
_REGEX_CRATE_WORD_EXTRA = frozenset("\u200c\u200d")
_REGEX_CRATE_NOT_WORD = frozenset("\u00b2\u00b3\u00b9\u00bc\u00bd\u00be")


def _is_word_char(ch: str) -> bool:
    """`\\w` of the `regex` crate (Alphabetic, Mark, Nd, Pc, Join_Control) for added-token checks."""
    global _WORD_RE
    if ch in _REGEX_CRATE_WORD_EXTRA:
        return True
    if ch in _REGEX_CRATE_NOT_WORD:
        return False
    if _WORD_RE is None:
        _WORD_RE = re.compile(_word_class())
    return _WORD_RE.match(ch) is not None


# ----------------------------------------------------------------------------------------------------------
# serde_json's float parsing (tokenizers reads scores with it; it is not always correctly rounded)

_U64_MAX = (1 << 64) - 1
_I32_MAX = (1 << 31) - 1
_POW10 = [float(f"1e{i}") for i in range(309)]
_NUMBER_RE = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\Z")


def _overflows(value: int, digit: int, limit: int) -> bool:
    return value >= limit // 10 and (value > limit // 10 or digit > limit % 10)


def _f64_from_parts(positive: bool, significand: int, exponent: int) -> float:
    f = float(significand)
    while True:
        index = abs(exponent)
        if index < len(_POW10):
            if exponent >= 0:
                f *= _POW10[index]
                if f == float("inf"):
                    raise TokenizerError("number out of range in tokenizer file")
            else:
                f /= _POW10[index]
            break
        if f == 0.0:
            break
        if exponent >= 0:
            raise TokenizerError("number out of range in tokenizer file")
        f /= 1e308
        exponent += 308
    return f if positive else -f


def _serde_f64(text: str) -> float:
    """The f64 that serde_json (without its `float_roundtrip` feature) reads from a JSON number."""
    if not _NUMBER_RE.match(text):
        raise TokenizerError(f"invalid number {text!r} in tokenizer file")
    positive = not text.startswith("-")
    i = 0 if positive else 1
    n = len(text)
    significand = 0
    exponent = 0
    if text[i] == "0":
        i += 1
    else:
        while i < n and text[i].isdigit():
            digit = ord(text[i]) - 48
            if _overflows(significand, digit, _U64_MAX):
                # parse_long_integer: further integer digits only raise the exponent
                while i < n and text[i].isdigit():
                    exponent += 1
                    i += 1
                break
            significand = significand * 10 + digit
            i += 1
        else:
            if i == n:  # a plain integer: u64 or i64, converted with `as f64`
                return float(significand) if positive else -float(significand)
    if i < n and text[i] == ".":
        i += 1
        after = 0
        while i < n and text[i].isdigit():
            digit = ord(text[i]) - 48
            if _overflows(significand, digit, _U64_MAX):
                while i < n and text[i].isdigit():  # parse_decimal_overflow: ignore the rest
                    i += 1
                break
            significand = significand * 10 + digit
            after -= 1
            i += 1
        exponent += after
    if i < n and text[i] in "eE":
        i += 1
        positive_exp = True
        if text[i] in "+-":
            positive_exp = text[i] == "+"
            i += 1
        exp = 0
        while i < n:
            digit = ord(text[i]) - 48
            if _overflows(exp, digit, _I32_MAX):
                if significand != 0 and positive_exp:
                    raise TokenizerError("number out of range in tokenizer file")
                return 0.0 if positive else -0.0
            exp = exp * 10 + digit
            i += 1
        exponent = exponent + exp if positive_exp else exponent - exp
        exponent = max(-(1 << 31), min(_I32_MAX, exponent))  # saturating i32
    return _f64_from_parts(positive, significand, exponent)


def _parse_json(text: str) -> object:
    def bad_constant(name: str) -> object:
        raise TokenizerError(f"invalid JSON value {name} in tokenizer file")

    def parse_int(s: str) -> object:
        digits = s.lstrip("-")
        if len(digits) > 19:
            return _serde_f64(s)
        return int(s)

    try:
        return json.loads(text, parse_float=_serde_f64, parse_int=parse_int, parse_constant=bad_constant)
    except json.JSONDecodeError as exc:
        raise TokenizerError(f"tokenizer file is not valid JSON: {exc}") from None
    except RecursionError:
        raise TokenizerError("tokenizer file is nested too deeply") from None


def _as_f64(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TokenizerError(f"{what} must be a number, got {value!r}")
    if isinstance(value, int):
        if value > _U64_MAX or value < -_U64_MAX:  # pragma: no cover - parse_int turns these into floats
            raise TokenizerError(f"{what} is out of range")
        return float(value)
    return float(value)


# ----------------------------------------------------------------------------------------------------------
# Oniguruma (Ruby syntax, as `tokenizers` builds it) to Python `re`

_QUANT_RE = re.compile(r"\{(\d*)(,?)(\d*)\}")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEX = "0123456789abcdefABCDEF"
_SIMPLE_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\x0c", "v": "\x0b", "a": "\x07", "e": "\x1b"}
_ONIG_MAX_REPEAT = 100_000


class _OnigTranslator:
    """Translate one Oniguruma pattern into an equivalent Python pattern, or refuse.

    Supported: literals, escapes `\\t \\n \\r \\f \\v \\a \\e \\xHH \\x{H..} \\uHHHH \\0oo`, escaped
    punctuation, classes `[...]` (ranges, negation, class escapes inside), `.`, `^ $ \\A \\z \\Z \\b \\B`,
    `\\w \\W \\d \\D \\s \\S \\h \\H`, `\\p{GC} \\P{GC} \\p{^GC}` for Unicode general categories, groups
    `( )`, `(?: )`, `(?<name> )`, look-arounds, atomic groups, comments, the `m` (dot-all) option,
    alternation, quantifiers `* + ? {n} {n,} {n,m} {,m}` with lazy `?` and possessive `*+ ++ ?+`,
    back-references `\\1`..`\\9` and `\\k<name>`.
    Refused (UnsupportedTokenizerComponent): case-insensitive matching (Oniguruma folds `ss` and `ß`),
    extended mode, POSIX brackets, nested classes and `&&`, other properties and escapes, conditionals,
    absent groups, callouts, repeats of repeats, and anything Python cannot compile the same way.
    """

    def __init__(self, pattern: str) -> None:
        self.s = pattern
        self.i = 0
        self.groups = 0
        self.names: set[str] = set()

    def unsupported(self, what: str) -> UnsupportedTokenizerComponent:
        return UnsupportedTokenizerComponent(
            f"regex {self.s!r}: {what} is not supported by phonon_web's tokenizer"
        )

    def invalid(self, what: str) -> TokenizerError:
        return TokenizerError(f"invalid regex {self.s!r}: {what}")

    def translate(self) -> tuple[str, int]:
        py, width = self.alternation(dotall=False, depth=0)
        if self.i != len(self.s):
            raise self.invalid("unmatched close parenthesis")
        return py, width

    def alternation(self, dotall: bool, depth: int) -> tuple[str, int]:
        branches = []
        widths = []
        while True:
            py, width, consumed_rest = self.sequence(dotall, depth)
            branches.append(py)
            widths.append(width)
            if consumed_rest:
                break
            if self.i < len(self.s) and self.s[self.i] == "|":
                self.i += 1
                continue
            break
        return "|".join(branches), min(widths)

    def parse_options(self, start: int) -> tuple[int, bool | None, bool]:
        """Parse `(?imx-imx` flags at `start` (just after `(?`); return (end, dotall change, has colon)."""
        s = self.s
        j = start
        on = True
        dotall: bool | None = None
        while j < len(s) and s[j] in "imx-":
            c = s[j]
            if c == "-":
                on = False
            elif c == "i":
                if on:
                    raise self.unsupported("case-insensitive matching (?i)")
            elif c == "x":
                if on:
                    raise self.unsupported("extended mode (?x)")
            else:
                dotall = on
            j += 1
        if j >= len(s) or s[j] not in ":)":
            raise self.invalid("undefined group option")
        return j, dotall, s[j] == ":"

    def sequence(self, dotall: bool, depth: int) -> tuple[str, int, bool]:
        s = self.s
        parts: list[str] = []
        width = 0
        while self.i < len(s):
            c = s[self.i]
            if c == "|":
                break
            if c == ")":
                if depth == 0:
                    raise self.invalid("unmatched close parenthesis")
                break
            if s.startswith("(?", self.i) and self.i + 2 < len(s) and s[self.i + 2] in "imx-":
                end, change, colon = self.parse_options(self.i + 2)
                if not colon:
                    # `(?m)` applies to the rest of the enclosing group, all its alternatives included.
                    self.i = end + 1
                    inner_dotall = dotall if change is None else change
                    py, w = self.alternation(inner_dotall, depth)
                    parts.append("(?:" + py + ")")
                    return "".join(parts), width + w, True
            atom, w, quantifiable = self.atom(dotall, depth)
            atom, w = self.quantifier(atom, w, quantifiable)
            parts.append(atom)
            width += w
        return "".join(parts), width, False

    def quantifier(self, atom: str, width: int, quantifiable: bool) -> tuple[str, int]:
        s = self.s
        if self.i >= len(s):
            return atom, width
        c = s[self.i]
        if c in "*+?":
            if not quantifiable:
                if atom == "":
                    raise self.invalid("target of repeat operator is not specified")
                raise self.unsupported("a repeated anchor or look-around")
            self.i += 1
            low = 1 if c == "+" else 0
            suffix = ""
            if self.i < len(s) and s[self.i] in "?+":
                suffix = s[self.i]
                self.i += 1
            self.no_more_repeats()
            return f"(?:{atom}){c}{suffix}", width * low
        if c == "{":
            m = _QUANT_RE.match(s, self.i)
            if not m or (not m.group(1) and not m.group(3)):
                return atom, width  # not an interval: `{` is a literal, read by the next atom
            if not quantifiable:
                if atom == "":
                    raise self.invalid("target of repeat operator is not specified")
                raise self.unsupported("a repeated anchor or look-around")
            low_text, comma, high_text = m.groups()
            low = int(low_text) if low_text else 0
            high = (int(high_text) if high_text else None) if comma else low
            for v in (low, high):
                if v is not None and v > _ONIG_MAX_REPEAT:
                    raise self.invalid("too big number for repeat range")
            if high is not None and high < low:
                raise self.unsupported("a repeat range with its maximum below its minimum")
            self.i = m.end()
            rng = f"{{{low}}}" if not comma else f"{{{low},{'' if high is None else high}}}"
            if self.i < len(s) and s[self.i] == "+":
                raise self.unsupported("a repeat of an interval repeat ({n,m}+)")
            if self.i < len(s) and s[self.i] == "?":
                self.i += 1
                if not comma:  # Ruby syntax: `X{n}?` is `(?:X{n})?`, not a lazy repeat
                    self.no_more_repeats()
                    return f"(?:(?:{atom}){rng})?", 0
                self.no_more_repeats()
                return f"(?:{atom}){rng}?", width * low
            self.no_more_repeats()
            return f"(?:{atom}){rng}", width * low
        return atom, width

    def no_more_repeats(self) -> None:
        s = self.s
        if self.i < len(s):
            c = s[self.i]
            if c in "*+?" or (c == "{" and (m := _QUANT_RE.match(s, self.i)) and (m.group(1) or m.group(3))):
                raise self.unsupported("a repeat of a repeat")

    def atom(self, dotall: bool, depth: int) -> tuple[str, int, bool]:
        s = self.s
        c = s[self.i]
        if c == "(":
            return self.group(dotall, depth)
        if c == "[":
            self.i += 1
            return _py_class(self.char_class()), 1, True
        if c == ".":
            self.i += 1
            return ("(?s:.)" if dotall else "."), 1, True
        if c == "^":
            self.i += 1
            return r"(?:\A|(?<=\n)(?!\Z))", 0, False
        if c == "$":
            self.i += 1
            return r"(?=\n|\Z)", 0, False
        if c == "\\":
            return self.escape()
        if c in "*+?":
            raise self.invalid("target of repeat operator is not specified")
        self.i += 1
        return re.escape(c), 1, True

    def group(self, dotall: bool, depth: int) -> tuple[str, int, bool]:
        s = self.s
        i = self.i + 1
        if s.startswith("?#", i):
            end = s.find(")", i)
            if end < 0:
                raise self.invalid("end pattern in group")
            self.i = end + 1
            return "", 0, False
        if s.startswith("?", i):
            rest = s[i + 1 : i + 4]
            if rest.startswith(":"):
                head, self.i, quantifiable, zero = "(?:", i + 2, True, False
            elif rest.startswith("=") or rest.startswith("!"):
                head, self.i, quantifiable, zero = "(?" + rest[0], i + 2, False, True
            elif rest.startswith("<=") or rest.startswith("<!"):
                head, self.i, quantifiable, zero = "(?" + rest[:2], i + 3, False, True
            elif rest.startswith(">"):
                head, self.i, quantifiable, zero = "(?>", i + 2, True, False
            elif rest.startswith("<"):
                m = _NAME_RE.match(s, i + 2)
                if not m or not s.startswith(">", m.end()):
                    raise self.invalid("invalid group name")
                name = m.group(0)
                if name in self.names:
                    raise self.unsupported("a repeated group name")
                self.names.add(name)
                self.groups += 1
                head, self.i, quantifiable, zero = f"(?P<{name}>", m.end() + 1, True, False
            elif rest[:1] in ("i", "m", "x", "-"):
                end, change, colon = self.parse_options(i + 1)
                assert colon  # option-only groups are handled by sequence()
                self.i = end + 1
                inner, width = self.alternation(dotall if change is None else change, depth + 1)
                self.close_group()
                return "(?:" + inner + ")", width, True
            else:
                raise self.unsupported(f"the group construct (?{rest[:1]}")
        else:
            self.groups += 1
            head, self.i, quantifiable, zero = "(", i, True, False
        inner, width = self.alternation(dotall, depth + 1)
        self.close_group()
        return head + inner + ")", 0 if zero else width, quantifiable

    def close_group(self) -> None:
        if self.i >= len(self.s) or self.s[self.i] != ")":
            raise self.invalid("end pattern with unmatched parenthesis")
        self.i += 1

    def code_point(self, value: int) -> int:
        if value > _MAX_CODE_POINT or 0xD800 <= value <= 0xDFFF:
            raise self.invalid("invalid code point value")
        return value

    def escape_char(self, in_class: bool) -> tuple[str, object]:
        """Read one escape (self.i at the backslash). Returns ("char", code point) or ("set", ranges),
        or for top-level-only constructs ("py", (python text, width, quantifiable))."""
        s = self.s
        if self.i + 1 >= len(s):
            raise self.invalid("end pattern at escape")
        c = s[self.i + 1]
        self.i += 2
        if c in "wWdDsShH":
            return "set", _class_ranges(c)
        if c in "pP":
            if not s.startswith("{", self.i):
                raise self.unsupported(f"\\{c} without braces")
            end = s.find("}", self.i)
            if end < 0:
                raise self.invalid("invalid property name")
            name = s[self.i + 1 : end]
            self.i = end + 1
            negate = c == "P"
            if name.startswith("^"):
                negate = not negate
                name = name[1:]
            key = name.replace(" ", "").replace("_", "").replace("-", "")
            gc = _GC_LONG.get(key.lower())
            if gc is None:
                for leaf in list(_GC_GROUPS) + _GC_LEAVES + ["Cs"]:
                    if leaf.lower() == key.lower():
                        gc = leaf
                        break
            ranges = _gc_ranges(gc) if gc else None
            if ranges is None:
                raise self.unsupported(f"the property \\p{{{name}}}")
            return "set", _complement(ranges) if negate else ranges
        if c in _SIMPLE_ESCAPES:
            return "char", ord(_SIMPLE_ESCAPES[c])
        if c == "b" and in_class:
            return "char", 8
        if c == "x":
            if s.startswith("{", self.i):
                end = s.find("}", self.i)
                digits = s[self.i + 1 : end] if end > 0 else ""
                if not digits or len(digits) > 8 or any(d not in _HEX for d in digits):
                    raise self.invalid("invalid code point value")
                self.i = end + 1
                return "char", self.code_point(int(digits, 16))
            j = self.i
            while j < len(s) and j < self.i + 2 and s[j] in _HEX:
                j += 1
            if j == self.i:
                raise self.unsupported("\\x without hex digits")
            value = int(s[self.i : j], 16)
            if value > 0x7F:
                raise self.unsupported("\\xHH above 7F (a raw UTF-8 byte in Oniguruma)")
            self.i = j
            return "char", value
        if c == "u":
            digits = s[self.i : self.i + 4]
            if len(digits) != 4 or any(d not in _HEX for d in digits):
                raise self.invalid("invalid code point value")
            self.i += 4
            return "char", self.code_point(int(digits, 16))
        if c == "0":
            j = self.i
            while j < len(s) and j < self.i + 2 and s[j] in "01234567":
                j += 1
            value = int(s[self.i : j] or "0", 8)
            self.i = j
            return "char", value
        if not in_class:
            if c == "A":
                return "py", (r"\A", 0, False)
            if c == "z":
                return "py", (r"\Z", 0, False)
            if c == "Z":
                return "py", (r"(?=\n?\Z)", 0, False)
            if c in "bB":
                w = _word_class()
                if c == "b":
                    return "py", (f"(?:(?<={w})(?!{w})|(?<!{w})(?={w}))", 0, False)
                return "py", (f"(?:(?<={w})(?={w})|(?<!{w})(?!{w}))", 0, False)
            if c in "123456789":
                if self.i < len(s) and s[self.i].isdigit():
                    raise self.unsupported("a back-reference above 9 or an octal escape")
                if self.names:
                    raise self.unsupported("a numbered back-reference in a pattern with named groups")
                return "py", (f"(?:\\{c})", 0, True)
            if c == "k":
                m = _NAME_RE.match(s, self.i + 1) if s.startswith("<", self.i) else None
                if not m or not s.startswith(">", m.end()) or m.group(0) not in self.names:
                    raise self.unsupported("this \\k back-reference")
                self.i = m.end() + 1
                return "py", (f"(?P={m.group(0)})", 0, True)
        if c.isascii() and c.isalnum():
            raise self.unsupported(f"the escape \\{c}")
        return "char", ord(c)

    def escape(self) -> tuple[str, int, bool]:
        kind, value = self.escape_char(in_class=False)
        if kind == "char":
            return re.escape(chr(value)), 1, True  # type: ignore[arg-type]
        if kind == "set":
            return _py_class(value), 1, True  # type: ignore[arg-type]
        return value  # type: ignore[return-value]

    def class_item(self) -> tuple[str, object]:
        s = self.s
        c = s[self.i]
        if c == "\\":
            return self.escape_char(in_class=True)
        if c == "[":
            raise self.unsupported("a nested character class or POSIX bracket")
        if c == "&" and s.startswith("&&", self.i):
            raise self.unsupported("character class intersection &&")
        self.i += 1
        return "char", ord(c)

    def char_class(self) -> list[tuple[int, int]]:
        s = self.s
        negate = False
        if self.i < len(s) and s[self.i] == "^":
            negate = True
            self.i += 1
        ranges: list[tuple[int, int]] = []
        first = True
        while True:
            if self.i >= len(s):
                raise self.invalid("premature end of char-class")
            c = s[self.i]
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            if c == "]":
                self.i += 1
                kind, value = "char", ord("]")
            else:
                kind, value = self.class_item()
            if kind == "set":
                ranges += value  # type: ignore[arg-type]
                if s.startswith("-", self.i) and not s.startswith("-]", self.i):
                    raise self.invalid("unmatched range specifier in char-class")
                continue
            lo = value
            if s.startswith("-", self.i) and self.i + 1 < len(s) and s[self.i + 1] != "]":
                self.i += 1
                kind2, hi = self.class_item()
                if kind2 != "char":
                    raise self.invalid("char-class value at end of range")
                if hi < lo:  # type: ignore[operator]
                    raise self.invalid("empty range in char class")
                ranges.append((lo, hi))  # type: ignore[arg-type]
            else:
                ranges.append((lo, lo))  # type: ignore[arg-type]
        return _complement(ranges) if negate else _merge(ranges)


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


# ----------------------------------------------------------------------------------------------------------
# Normalizers. Each has `apply(s) -> s` and `track(s, z, w) -> (s, z, w)`, which also follows two facts about
# `tokenizers`' alignments (character -> byte range of the original text) that change ids:
#
# - `z`: which leading characters come from offset 0 of the original text (what `prepend_scheme: "first"`
#   looks at). z < 0: none can (this piece does not start the text); z >= 0: the piece starts the text
#   and its first z characters are aligned to offset 0.
# - `w`: how many leading characters have the empty alignment (0, 0). Only text inserted at the very start
#   gets it (a regex's empty match at 0, `Prepend("")`). `tokenizers` then mis-handles every later NFC/NFD/
#   NFKC/NFKD, Lowercase or (stripping) Strip: it panics or repeats those characters. We refuse instead.


def _misaligned(name: str) -> UnsupportedTokenizerComponent:
    return UnsupportedTokenizerComponent(
        f"normalizer {name} after text inserted at the very start (an empty regex match at 0 or an empty "
        "Prepend): tokenizers mis-aligns this text (it panics or repeats characters), so phonon_web's "
        "tokenizer refuses it"
    )


def _prefix_count(spans, k: int, content_len: int) -> int:
    """How many leading output characters of a Replace inherit an alignment that the first `k` input
    characters share (replacement characters copy the alignment of the last replaced character, or of
    the character before an empty match; an empty match at 0 gives (0, 0))."""
    count = 0
    pos = 0
    for start, end in spans:
        if start > k:
            break
        count += start - pos
        if end > k:
            return count
        count += content_len
        pos = end
    return count + max(0, k - pos)


class _Normalizer:
    # Whether this normalizer can give leading characters the (0, 0) alignment / goes through
    # `NormalizedString::transform`, which then mis-aligns.
    can_insert_at_start = False
    uses_transform = False

    def apply(self, s: str) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    def track(self, s: str, z: int, w: int) -> tuple[str, int, int]:  # pragma: no cover - interface
        raise NotImplementedError

    def flat(self) -> list[_Normalizer]:
        return [self]


class _SequenceNormalizer(_Normalizer):
    def __init__(self, items: list[_Normalizer]) -> None:
        self.items = items

    def apply(self, s: str) -> str:
        for item in self.items:
            s = item.apply(s)
        return s

    def track(self, s: str, z: int, w: int) -> tuple[str, int, int]:
        for item in self.items:
            s, z, w = item.track(s, z, w)
        return s, z, w

    def flat(self) -> list[_Normalizer]:
        return [leaf for item in self.items for leaf in item.flat()]


class _ReplaceNormalizer(_Normalizer):
    def __init__(self, regex: _Regex, content: str) -> None:
        self.regex = regex
        self.content = content
        self.template = content.replace("\\", "\\\\")
        self.can_insert_at_start = regex.can_match_empty and bool(content)

    def apply(self, s: str) -> str:
        if not s:
            return s
        if self.regex.literal:
            return s.replace(self.regex.pattern, self.content)
        if not self.regex.can_match_empty:
            return self.regex.compiled.sub(self.template, s)
        parts = []
        prev = 0
        for start, end in self.regex.spans(s):
            parts.append(s[prev:start])
            parts.append(self.content)
            prev = end
        parts.append(s[prev:])
        return "".join(parts)

    def track(self, s: str, z: int, w: int) -> tuple[str, int, int]:
        out = self.apply(s)
        if not s:
            return out, z, w
        n = len(self.content)
        if z >= 0:
            z = _prefix_count(self.regex.spans(s), z, n)
        if w > 0 or self.regex.can_match_empty:
            w = _prefix_count(self.regex.spans(s), w, n)
        return out, z, w


class _PrependNormalizer(_Normalizer):
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.can_insert_at_start = not prefix

    def apply(self, s: str) -> str:
        return self.prefix + s if s else s

    def track(self, s: str, z: int, w: int) -> tuple[str, int, int]:
        if not s:
            return s, z, w
        if not self.prefix:  # the first character is re-inserted at index 0: alignment (0, 0)
            return s, max(z, 1) if z >= 0 else z, max(w, 1)
        p = len(self.prefix)  # the prefix takes the first character's alignment
        return self.prefix + s, z + p if z >= 1 else z, w + p if w >= 1 else 0


class _StripNormalizer(_Normalizer):
    uses_transform = True

    def __init__(self, left: bool, right: bool) -> None:
        self.left = left
        self.right = right

    def apply(self, s: str) -> str:
        if self.left:
            s = s.lstrip(_WS)
        if self.right:
            s = s.rstrip(_WS)
        return s

    def track(self, s: str, z: int, w: int) -> tuple[str, int, int]:
        out = s.lstrip(_WS) if self.left else s
        removed = len(s) - len(out)
        if self.right:
            out = out.rstrip(_WS)
        if w > 0 and len(out) != len(s):
            raise _misaligned("Strip")
        if z >= 0:
            z = min(max(0, z - removed), len(out))
        return out, z, w


class _LowercaseNormalizer(_Normalizer):
    """Rust's `char::to_lowercase`, character by character."""

    uses_transform = True

    def __init__(self) -> None:
        # Rust's mappings for characters newer than Python 3.11's Unicode 14; and capital sigma, which
        # `str.lower` maps to final sigma at the end of a word while Rust always gives σ.
        self.overrides: dict[str, str] = _tables()["LOWER"]  # type: ignore[assignment]
        self.special = frozenset(self.overrides) | {"\u03a3"}

    def apply(self, s: str) -> str:
        if s.isascii():
            return s.lower()
        if not self.special.isdisjoint(s):
            overrides = self.overrides
            return "".join([overrides.get(c) or c.lower() for c in s])
        return s.lower()

    def track(self, s: str, z: int, w: int) -> tuple[str, int, int]:
        if w > 0:
            raise _misaligned("Lowercase")
        out = self.apply(s)
        if z > 0:
            z = len(self.apply(s[:z]))
        return out, z, w


class _UnicodeNormalizer(_Normalizer):
    """NFC/NFD/NFKC/NFKD as `unicode-normalization-alignments` 0.1.12 (Unicode 9.0) computes them."""

    uses_transform = True

    def __init__(self, form: str) -> None:
        self.form = form
        self.compat = "K" in form
        self.compose = form.endswith("C")

    def apply(self, s: str) -> str:
        if s.isascii():
            return s
        return _unicode_normalize(self.form, s)

    def track(self, s: str, z: int, w: int) -> tuple[str, int, int]:
        if w > 0:
            raise _misaligned(self.form)
        out = self.apply(s)
        if z < 0 or s.isascii():
            return out, z, w
        # Only the characters before the first "stable" one at or after index z can change z: a stable
        # character (ASCII, or a starter that never decomposes nor composes with what precedes it)
        # cuts the text into parts that normalize on their own.
        b = z
        while b < len(s) and not _is_stable(s[b]):
            b += 1
        pointer = 0
        count = 0
        for _char, change in _crate_normalize(s[:b], self.compat, self.compose):
            if change <= 0:
                source = pointer
                pointer += 1 - change
            else:
                source = pointer - 1
            if source >= z:
                break
            count += 1
        return out, count, w


def _needs_alignment_guard(normalizer: _Normalizer | None) -> bool:
    """Whether text can be inserted at the start before a normalizer that then mis-aligns."""
    if normalizer is None:
        return False
    inserted = False
    for leaf in normalizer.flat():
        if leaf.uses_transform and inserted:
            return True
        inserted = inserted or leaf.can_insert_at_start
    return False


# --- Unicode normalization with Unicode 9.0 behaviour ------------------------------------------------------

_R9: frozenset[int] | None = None
_NEW_COMPONENTS: frozenset[int] | None = None
_SAFE: dict[str, bool] = {}
_COMPOSE: dict[tuple[str, str], str] | None = None
_SECOND: frozenset[str] | None = None
_HANGUL_S, _HANGUL_L, _HANGUL_V, _HANGUL_T = 0xAC00, 0x1100, 0x1161, 0x11A7
_HANGUL_VCOUNT, _HANGUL_TCOUNT = 21, 28
_HANGUL_NCOUNT = _HANGUL_VCOUNT * _HANGUL_TCOUNT
_HANGUL_SCOUNT = 19 * _HANGUL_NCOUNT


def _r9() -> frozenset[int]:
    global _R9
    if _R9 is None:
        s = set()
        for a, b in _ranges("R9"):
            s.update(range(a, b + 1))
        _R9 = frozenset(s)
    return _R9


def _new_components() -> frozenset[int]:
    """Characters outside the Unicode 9.0 set that the running `unicodedata` composes canonically."""
    global _NEW_COMPONENTS, _COMPOSE, _SECOND
    if _NEW_COMPONENTS is None:
        r9 = _r9()
        decomposition = unicodedata.decomposition
        comps = set()
        pairs: dict[tuple[str, str], str] = {}
        nfc = unicodedata.normalize
        for cp in range(0x30000):
            d = decomposition(chr(cp))
            if not d or d[0] == "<":
                continue
            parts = d.split()
            if len(parts) != 2:
                continue
            first, second = chr(int(parts[0], 16)), chr(int(parts[1], 16))
            if cp in r9:
                if nfc("NFC", first + second) == chr(cp):
                    pairs[(first, second)] = chr(cp)
            else:
                comps.update(int(p, 16) for p in parts)
        _NEW_COMPONENTS = frozenset(c for c in comps if c not in r9)
        _COMPOSE = pairs
        second = {b for _, b in pairs}
        second.update(chr(c) for c in range(_HANGUL_V, _HANGUL_V + _HANGUL_VCOUNT))
        second.update(chr(c) for c in range(_HANGUL_T + 1, _HANGUL_T + _HANGUL_TCOUNT))
        _SECOND = frozenset(second)
    return _NEW_COMPONENTS


def _is_safe(ch: str) -> bool:
    """Whether the running `unicodedata` treats `ch` as Unicode 9.0 did (or as an inert character)."""
    safe = _SAFE.get(ch)
    if safe is None:
        cp = ord(ch)
        if cp in _r9():
            safe = True
        else:
            safe = not (unicodedata.combining(ch) or unicodedata.decomposition(ch) or cp in _new_components())
        _SAFE[ch] = safe
    return safe


def _is_stable(ch: str) -> bool:
    """ASCII, or a safe starter without decomposition that never composes with a preceding character."""
    if ch.isascii():
        return True
    if not _is_safe(ch) or unicodedata.combining(ch) or unicodedata.decomposition(ch):
        return False
    cp = ord(ch)
    if _HANGUL_S <= cp < _HANGUL_S + _HANGUL_SCOUNT:
        return False
    _new_components()
    return ch not in _SECOND  # type: ignore[operator]


def _unicode_normalize(form: str, s: str) -> str:
    unsafe = [c for c in set(s) if not _is_safe(c)]
    if not unsafe:
        return unicodedata.normalize(form, s)
    # Characters that Unicode 9.0 did not know are inert: cut the text around them.
    cut = re.compile("[" + "".join(re.escape(c) for c in unsafe) + "]")
    out = []
    prev = 0
    for m in cut.finditer(s):
        out.append(unicodedata.normalize(form, s[prev : m.start()]))
        out.append(m.group(0))
        prev = m.end()
    out.append(unicodedata.normalize(form, s[prev:]))
    return "".join(out)


def _ccc(ch: str) -> int:
    return unicodedata.combining(ch) if _is_safe(ch) else 0


def _decompose_char(ch: str, compat: bool, out: list[str]) -> None:
    cp = ord(ch)
    if _HANGUL_S <= cp < _HANGUL_S + _HANGUL_SCOUNT:
        index = cp - _HANGUL_S
        out.append(chr(_HANGUL_L + index // _HANGUL_NCOUNT))
        out.append(chr(_HANGUL_V + (index % _HANGUL_NCOUNT) // _HANGUL_TCOUNT))
        if index % _HANGUL_TCOUNT:
            out.append(chr(_HANGUL_T + index % _HANGUL_TCOUNT))
        return
    d = unicodedata.decomposition(ch) if _is_safe(ch) else ""
    if not d or (d[0] == "<" and not compat):
        out.append(ch)
        return
    if d[0] == "<":
        d = d.split(">", 1)[1]
    for h in d.split():
        _decompose_char(chr(int(h, 16)), compat, out)


def _compose_pair(a: str, b: str) -> str | None:
    ca, cb = ord(a), ord(b)
    if _HANGUL_L <= ca < _HANGUL_L + 19 and _HANGUL_V <= cb < _HANGUL_V + _HANGUL_VCOUNT:
        return chr(_HANGUL_S + ((ca - _HANGUL_L) * _HANGUL_VCOUNT + cb - _HANGUL_V) * _HANGUL_TCOUNT)
    if (
        _HANGUL_S <= ca < _HANGUL_S + _HANGUL_SCOUNT
        and (ca - _HANGUL_S) % _HANGUL_TCOUNT == 0
        and _HANGUL_T < cb < _HANGUL_T + _HANGUL_TCOUNT
    ):
        return chr(ca + cb - _HANGUL_T)
    _new_components()
    return _COMPOSE.get((a, b))  # type: ignore[union-attr]


def _crate_normalize(s: str, compat: bool, compose: bool) -> list[tuple[str, int]]:
    """(char, change) pairs exactly as `unicode-normalization-alignments` yields them (used for offsets)."""
    # Decompositions: each input char's first output has change 0, the others +1; runs of non-starters
    # are stably sorted by combining class.
    buffer: list[tuple[int, str, int]] = []
    ready = 0
    out: list[tuple[str, int]] = []
    for ch in s:
        parts: list[str] = []
        _decompose_char(ch, compat, parts)
        for k, d in enumerate(parts):
            cls = _ccc(d)
            if cls == 0:
                buffer[ready:] = sorted(buffer[ready:], key=lambda item: item[0])
                out.extend((c, chg) for _, c, chg in buffer)
                buffer = []
                ready = 0
            buffer.append((cls, d, 0 if k == 0 else 1))
    buffer[ready:] = sorted(buffer[ready:], key=lambda item: item[0])
    out.extend((c, chg) for _, c, chg in buffer)
    if not compose:
        return out
    # Recomposition, following the crate's state machine.
    result: list[tuple[str, int]] = []
    pending: list[tuple[str, int]] = []
    composee: tuple[str, int] | None = None
    last_ccc: int | None = None
    for ch, change in out:
        cls = _ccc(ch)
        if composee is None:
            if cls != 0:
                result.append((ch, change))
                continue
            composee = (ch, change)
            continue
        if last_ccc is None:
            r = _compose_pair(composee[0], ch)
            if r is not None:
                composee = (r, composee[1] + change - 1)
                continue
            if cls == 0:
                result.append(composee)
                composee = (ch, change)
                continue
            pending.append((ch, change))
            last_ccc = cls
            continue
        if last_ccc >= cls:
            if cls == 0:
                result.append(composee)
                result.extend(pending)
                pending = []
                composee = (ch, change)
                last_ccc = None
                continue
            pending.append((ch, change))
            last_ccc = cls
            continue
        r = _compose_pair(composee[0], ch)
        if r is not None:
            composee = (r, composee[1] + change - 1)
            continue
        pending.append((ch, change))
        last_ccc = cls
    if composee is not None:
        result.append(composee)
    result.extend(pending)
    return result


# ----------------------------------------------------------------------------------------------------------
# Pre-tokenizers: `split(pieces)` maps a list of (text, z) to a new list of (text, z), dropping empty pieces.


def _slice_z(z: int, start: int) -> int:
    """z of a slice starting at `start`: it starts the text iff its first character is at offset 0."""
    return z - start if 0 <= start < z else -1


def _split_by_behavior(
    text: str, z: int, matches: list[tuple[int, int, bool]], behavior: str
) -> list[tuple[str, int]]:
    if behavior == "Removed":
        spans = [(a, b) for a, b, is_match in matches if not is_match]
    elif behavior == "Isolated":
        spans = [(a, b) for a, b, _ in matches]
    elif behavior == "Contiguous":
        acc: list[list[int]] = []
        previous = False
        for a, b, is_match in matches:
            if is_match == previous and acc:
                acc[-1][1] = b
            else:
                acc.append([a, b])
            previous = is_match
        spans = [(a, b) for a, b in acc]
    elif behavior == "MergedWithPrevious":
        acc = []
        previous = False
        for a, b, is_match in matches:
            if is_match and not previous and acc:
                acc[-1][1] = b
            else:
                acc.append([a, b])
            previous = is_match
        spans = [(a, b) for a, b in acc]
    elif behavior == "MergedWithNext":
        acc = []
        previous = False
        for a, b, is_match in reversed(matches):
            if is_match and not previous and acc:
                acc[-1][0] = a
            else:
                acc.append([a, b])
            previous = is_match
        acc.reverse()
        spans = [(a, b) for a, b in acc]
    else:
        raise TokenizerError(f"unknown split behavior {behavior!r}")
    return [(text[a:b], _slice_z(z, a)) for a, b in spans if b > a]


class _PreTokenizer:
    needs_offsets = False

    def split(self, pieces: list[tuple[str, int]]) -> list[tuple[str, int]]:  # pragma: no cover
        raise NotImplementedError


class _MetaspacePreTokenizer(_PreTokenizer):
    def __init__(self, replacement: str, scheme: str, split: bool) -> None:
        self.replacement = replacement
        self.scheme = scheme
        self.split_words = split
        self.needs_offsets = scheme == "first"

    def split(self, pieces: list[tuple[str, int]]) -> list[tuple[str, int]]:
        rep = self.replacement
        out: list[tuple[str, int]] = []
        for text, z in pieces:
            text = text.replace(" ", rep)
            if not text.startswith(rep) and (self.scheme == "always" or (self.scheme == "first" and z > 0)):
                text = rep + text
                if z >= 1:
                    z += 1
            if not self.split_words:
                out.append((text, z))
                continue
            start = 0
            while True:
                nxt = text.find(rep, start + 1)
                if nxt < 0:
                    out.append((text[start:], _slice_z(z, start)))
                    break
                out.append((text[start:nxt], _slice_z(z, start)))
                start = nxt
        return [(t, zz) for t, zz in out if t]

    def fast_split(self, text: str) -> list[str]:
        rep = self.replacement
        text = text.replace(" ", rep)
        if self.scheme == "always" and not text.startswith(rep):
            text = rep + text
        if not self.split_words:
            return [text]
        words = text.split(rep)
        if words[0]:
            first = [words[0]]
        else:
            first = []
        return first + [rep + w for w in words[1:]]


class _WhitespaceSplitPreTokenizer(_PreTokenizer):
    _RE = re.compile("[^" + re.escape(_WS) + "]+")

    def split(self, pieces: list[tuple[str, int]]) -> list[tuple[str, int]]:
        out = []
        for text, z in pieces:
            for m in self._RE.finditer(text):
                out.append((m.group(0), _slice_z(z, m.start())))
        return out


class _SplitPreTokenizer(_PreTokenizer):
    def __init__(self, regex: _Regex, behavior: str, invert: bool) -> None:
        self.regex = regex
        self.behavior = behavior
        self.invert = invert

    def split(self, pieces: list[tuple[str, int]]) -> list[tuple[str, int]]:
        out = []
        for text, z in pieces:
            matches = self.regex.find_matches(text)
            if self.invert:
                matches = [(a, b, not m) for a, b, m in matches]
            out += _split_by_behavior(text, z, matches, self.behavior)
        return out


class _SequencePreTokenizer(_PreTokenizer):
    def __init__(self, items: list[_PreTokenizer]) -> None:
        self.items = items
        self.needs_offsets = any(item.needs_offsets for item in items)

    def split(self, pieces: list[tuple[str, int]]) -> list[tuple[str, int]]:
        for item in self.items:
            pieces = item.split(pieces)
        return pieces


# ----------------------------------------------------------------------------------------------------------
# Unigram model


class _Unigram:
    def __init__(self, vocab: list[tuple[str, float]], unk_id: int | None, byte_fallback: bool) -> None:
        if unk_id is not None:
            if not vocab:
                raise TokenizerError("Unigram vocabulary is empty but at least <unk> is needed")
            if unk_id >= len(vocab):
                raise TokenizerError("Unigram unk_id is larger than the vocabulary")
        self.vocab = vocab
        self.unk_id = unk_id
        self.byte_fallback = byte_fallback
        pieces: dict[str, tuple[int, float]] = {}
        for i, (piece, _score) in enumerate(vocab):
            pieces[piece] = (i, 0.0)
        # Like tokenizers: the id of a piece is its last occurrence, and its score is that entry's score.
        self.token_to_id = {piece: entry[0] for piece, entry in pieces.items()}
        self.pieces = {piece: (i, vocab[i][1]) for piece, (i, _) in pieces.items() if piece}
        prefixes = set()
        for piece in self.pieces:
            for j in range(1, len(piece)):
                prefixes.add(piece[:j])
        self.prefixes = frozenset(prefixes)
        min_score = float("inf")
        for _, score in vocab:
            if score < min_score:
                min_score = score
        self.unk_score = min_score - 10.0
        self.byte_ids: list[int | None] = [self.token_to_id.get(f"<0x{b:02X}>") for b in range(256)]
        self.cache: dict[str, list[tuple[int, str]]] = {}

    def tokenize(self, text: str) -> list[tuple[int, str]]:
        cached = self.cache.get(text)
        if cached is not None:
            return cached
        result = self._tokenize(text)
        cache = self.cache
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        if len(text) < 256:
            cache[text] = result
        return result

    def _best_path(self, text: str) -> list[str]:
        n = len(text)
        pieces_get = self.pieces.get
        prefixes = self.prefixes
        unk_id = self.unk_id
        unk_score = self.unk_score
        best = [0.0] * (n + 1)
        starts = [-1] * (n + 1)
        ids = [0] * (n + 1)
        for i in range(n):
            base = best[i]
            single = False
            j = i + 1
            while j <= n:
                sub = text[i:j]
                entry = pieces_get(sub)
                if entry is not None:
                    candidate = entry[1] + base
                    if starts[j] < 0 or candidate > best[j]:
                        best[j] = candidate
                        starts[j] = i
                        ids[j] = entry[0]
                    if j == i + 1:
                        single = True
                if sub not in prefixes:
                    break
                j += 1
            if not single:
                candidate = unk_score + base
                if starts[i + 1] < 0 or candidate > best[i + 1]:
                    if unk_id is None:
                        raise TextError(
                            f"character {text[i]!r} is not in the vocabulary and the tokenizer has no unk_id"
                        )
                    best[i + 1] = candidate
                    starts[i + 1] = i
                    ids[i + 1] = unk_id
        out: list[str] = []
        fused: list[str] = []
        end = n
        while end > 0:
            start = starts[end]
            if unk_id is not None and ids[end] == unk_id:
                fused.append(text[start:end])
            else:
                if fused:
                    fused.reverse()
                    out.append("".join(fused))
                    fused = []
                out.append(text[start:end])
            end = start
        if fused:
            fused.reverse()
            out.append("".join(fused))
        out.reverse()
        return out

    def _tokenize(self, text: str) -> list[tuple[int, str]]:
        if not text:
            return []
        token_to_id = self.token_to_id
        out: list[tuple[int, str]] = []
        for piece in self._best_path(text):
            tid = token_to_id.get(piece)
            if tid is not None:
                out.append((tid, piece))
                continue
            if self.byte_fallback:
                byte_ids = [self.byte_ids[b] for b in piece.encode("utf-8")]
                if None not in byte_ids:
                    raw = piece.encode("utf-8")
                    out.extend((bid, f"<0x{b:02X}>") for bid, b in zip(byte_ids, raw, strict=True))
                    continue
            if self.unk_id is None:
                raise TextError(f"{piece!r} is not in the vocabulary and the tokenizer has no unk_id")
            out.append((self.unk_id, piece))
        return out


# ----------------------------------------------------------------------------------------------------------
# Added tokens


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


# ----------------------------------------------------------------------------------------------------------
# Decoders: `decode_chain(tokens) -> tokens`


class _Decoder:
    def decode_chain(self, tokens: list[str]) -> list[str]:  # pragma: no cover - interface
        raise NotImplementedError


class _SequenceDecoder(_Decoder):
    def __init__(self, items: list[_Decoder]) -> None:
        self.items = items

    def decode_chain(self, tokens: list[str]) -> list[str]:
        for item in self.items:
            tokens = item.decode_chain(tokens)
        return tokens


class _MetaspaceDecoder(_Decoder):
    def __init__(self, replacement: str, scheme: str) -> None:
        self.replacement = replacement
        self.scheme = scheme

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        for i, token in enumerate(tokens):
            if i == 0 and self.scheme != "never":
                out.append(token.replace(self.replacement, ""))
            else:
                out.append(token.replace(self.replacement, " "))
        return out


def _byte_of(token: str) -> int | None:
    if len(token.encode("utf-8")) != 6 or not token.startswith("<0x") or not token.endswith(">"):
        return None
    digits = token[3:5]
    if digits[:1] == "+":  # Rust's u8::from_str_radix accepts a leading '+'
        digits = digits[1:]
    if not digits or any(d not in _HEX for d in digits):
        return None
    return int(digits, 16)


class _ByteFallbackDecoder(_Decoder):
    def decode_chain(self, tokens: list[str]) -> list[str]:
        out: list[str] = []
        pending = bytearray()

        def flush() -> None:
            if pending:
                try:
                    out.append(bytes(pending).decode("utf-8"))
                except UnicodeDecodeError:
                    out.extend("\ufffd" for _ in pending)
                pending.clear()

        for token in tokens:
            b = _byte_of(token)
            if b is not None:
                pending.append(b)
            else:
                flush()
                out.append(token)
        flush()
        return out


class _FuseDecoder(_Decoder):
    def decode_chain(self, tokens: list[str]) -> list[str]:
        return ["".join(tokens)]


class _StripDecoder(_Decoder):
    def __init__(self, content: str, start: int, stop: int) -> None:
        self.content = content
        self.start = start
        self.stop = stop

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        for token in tokens:
            start_cut = 0
            for i, c in enumerate(token[: self.start]):
                if c == self.content:
                    start_cut = i + 1
                else:
                    break
            stop_cut = len(token)
            for i in range(self.stop):
                index = len(token) - i - 1
                if index < 0:
                    raise TokenizerError(
                        "Strip decoder: token shorter than its stop count (tokenizers panics)"
                    )
                if token[index] == self.content:
                    stop_cut = index
                else:
                    break
            out.append(token[start_cut:stop_cut])
        return out


class _ReplaceDecoder(_Decoder):
    def __init__(self, regex: _Regex, content: str) -> None:
        self.regex = regex
        self.content = content

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        for token in tokens:
            parts = []
            for a, b, is_match in self.regex.find_matches(token):
                parts.append(self.content if is_match else token[a:b])
            out.append("".join(parts))
        return out


# ----------------------------------------------------------------------------------------------------------
# Reading the JSON


def _get(obj: dict, key: str, where: str, kind: type | tuple[type, ...], default: object = ...) -> object:
    if key not in obj:
        if default is ...:
            raise TokenizerError(f"{where}: missing field {key!r}")
        return default
    value = obj[key]
    if kind is bool:
        ok = isinstance(value, bool)
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, kind) and not isinstance(value, bool)
    if not ok:
        raise TokenizerError(f"{where}: field {key!r} has the wrong type ({value!r})")
    return value


def _type_of(obj: object, section: str) -> str:
    if not isinstance(obj, dict):
        raise TokenizerError(f"{section} must be an object or null, got {obj!r}")
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise TokenizerError(f"{section} has no 'type'")
    return kind


def _single_char(value: object, where: str) -> str:
    if not isinstance(value, str) or len(value) != 1:
        raise TokenizerError(f"{where} must be a single character, got {value!r}")
    return value


def _build_normalizer(obj: object) -> _Normalizer | None:
    if obj is None:
        return None
    kind = _type_of(obj, "normalizer")
    assert isinstance(obj, dict)
    where = f"normalizer {kind}"
    if kind == "Sequence":
        items = _get(obj, "normalizers", where, list)
        built = [_build_normalizer(item) for item in items]  # type: ignore[union-attr]
        if any(item is None for item in built):
            raise TokenizerError("normalizer Sequence contains null")
        return _SequenceNormalizer(built)  # type: ignore[arg-type]
    if kind == "Replace":
        regex = _pattern(_get(obj, "pattern", where, dict), where)
        return _ReplaceNormalizer(regex, _get(obj, "content", where, str))  # type: ignore[arg-type]
    if kind == "Prepend":
        return _PrependNormalizer(_get(obj, "prepend", where, str))  # type: ignore[arg-type]
    if kind == "Strip":
        return _StripNormalizer(
            _get(obj, "strip_left", where, bool),
            _get(obj, "strip_right", where, bool),  # type: ignore[arg-type]
        )
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        return _UnicodeNormalizer(kind)
    if kind == "Lowercase":
        return _LowercaseNormalizer()
    raise _unsupported("normalizer", kind)


def _build_pre_tokenizer(obj: object) -> _PreTokenizer | None:
    if obj is None:
        return None
    kind = _type_of(obj, "pre_tokenizer")
    assert isinstance(obj, dict)
    where = f"pre_tokenizer {kind}"
    if kind == "Metaspace":
        replacement = _single_char(obj.get("replacement"), f"{where} replacement")
        scheme = _get(obj, "prepend_scheme", where, str, "always")
        if scheme not in ("always", "first", "never"):
            raise TokenizerError(f"{where}: unknown prepend_scheme {scheme!r}")
        add_prefix_space = obj.get("add_prefix_space")
        if add_prefix_space is False:
            if scheme != "never":
                raise TokenizerError(f"{where}: add_prefix_space does not match declared prepend_scheme")
        split = obj.get("split")
        if split is None:
            split = True
        if not isinstance(split, bool):
            raise TokenizerError(f"{where}: split must be a boolean")
        return _MetaspacePreTokenizer(replacement, scheme, split)  # type: ignore[arg-type]
    if kind == "Sequence":
        items = _get(obj, "pretokenizers", where, list)
        built = [_build_pre_tokenizer(item) for item in items]  # type: ignore[union-attr]
        if any(item is None for item in built):
            raise TokenizerError("pre_tokenizer Sequence contains null")
        return _SequencePreTokenizer(built)  # type: ignore[arg-type]
    if kind == "WhitespaceSplit":
        return _WhitespaceSplitPreTokenizer()
    if kind == "Split":
        regex = _pattern(_get(obj, "pattern", where, dict), where)
        behavior = _get(obj, "behavior", where, str)
        if behavior not in ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"):
            raise TokenizerError(f"{where}: unknown behavior {behavior!r}")
        return _SplitPreTokenizer(regex, behavior, _get(obj, "invert", where, bool))  # type: ignore[arg-type]
    raise _unsupported("pre_tokenizer", kind)


def _build_decoder(obj: object) -> _Decoder | None:
    if obj is None:
        return None
    kind = _type_of(obj, "decoder")
    assert isinstance(obj, dict)
    where = f"decoder {kind}"
    if kind == "Sequence":
        items = _get(obj, "decoders", where, list)
        built = [_build_decoder(item) for item in items]  # type: ignore[union-attr]
        if any(item is None for item in built):
            raise TokenizerError("decoder Sequence contains null")
        return _SequenceDecoder(built)  # type: ignore[arg-type]
    if kind == "Metaspace":
        replacement = _single_char(obj.get("replacement"), f"{where} replacement")
        scheme = _get(obj, "prepend_scheme", where, str, "always")
        if scheme not in ("always", "first", "never"):
            raise TokenizerError(f"{where}: unknown prepend_scheme {scheme!r}")
        if obj.get("add_prefix_space") is False:
            if scheme != "never":
                raise TokenizerError(f"{where}: add_prefix_space does not match declared prepend_scheme")
        return _MetaspaceDecoder(replacement, scheme)  # type: ignore[arg-type]
    if kind == "ByteFallback":
        return _ByteFallbackDecoder()
    if kind == "Fuse":
        return _FuseDecoder()
    if kind == "Strip":
        content = _single_char(obj.get("content"), f"{where} content")
        start = _get(obj, "start", where, int)
        stop = _get(obj, "stop", where, int)
        if start < 0 or stop < 0:  # type: ignore[operator]
            raise TokenizerError(f"{where}: start and stop must not be negative")
        return _StripDecoder(content, start, stop)  # type: ignore[arg-type]
    if kind == "Replace":
        regex = _pattern(_get(obj, "pattern", where, dict), where)
        return _ReplaceDecoder(regex, _get(obj, "content", where, str))  # type: ignore[arg-type]
    raise _unsupported("decoder", kind)


def _build_model(obj: object) -> _Unigram:
    if not isinstance(obj, dict):
        raise TokenizerError("model must be an object")
    kind = obj.get("type")
    if kind is None and isinstance(obj.get("vocab"), list):
        kind = "Unigram"  # legacy files without a type tag
    if kind != "Unigram":
        raise _unsupported("model", kind)
    vocab_raw = obj.get("vocab")
    if not isinstance(vocab_raw, list):
        raise TokenizerError("Unigram model: missing vocab")
    vocab = []
    for i, item in enumerate(vocab_raw):
        if not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], str):
            raise TokenizerError(f"Unigram model: vocab entry {i} must be [piece, score], got {item!r}")
        vocab.append((item[0], _as_f64(item[1], f"Unigram model: score of entry {i}")))
    unk_id = obj.get("unk_id")
    if unk_id is not None and (isinstance(unk_id, bool) or not isinstance(unk_id, int) or unk_id < 0):
        raise TokenizerError(f"Unigram model: unk_id must be a non-negative integer or null, got {unk_id!r}")
    byte_fallback = obj.get("byte_fallback", False)
    if not isinstance(byte_fallback, bool):
        raise TokenizerError("Unigram model: byte_fallback must be a boolean")
    return _Unigram(vocab, unk_id, byte_fallback)


# ----------------------------------------------------------------------------------------------------------
# The tokenizer


@dataclass(frozen=True)
class Encoding:
    """The ids of a text and the piece each id stands for."""

    ids: list[int]
    pieces: list[str]


class Tokenizer:
    """A HuggingFace `tokenizer.json` (Unigram family) that gives the same ids as the `tokenizers` library.

    `encode(text)` equals `tokenizers.Tokenizer.from_str(json).encode(text).ids` (special tokens added by
    the post-processor, as the library does by default); `decode(ids)` equals its `decode(ids)`.
    """

    def __init__(self, config: dict) -> None:
        if not isinstance(config, dict):
            raise TokenizerError("a tokenizer file must hold a JSON object")
        version = config.get("version", "1.0")
        if version != "1.0":
            raise TokenizerError(f"unknown tokenizer file version {version!r}")
        if config.get("truncation") is not None:
            raise _unsupported("truncation", "truncation")
        padding = config.get("padding")
        if padding is not None:
            # Padding a single encoding to the longest of its batch changes nothing.
            if not (
                isinstance(padding, dict)
                and padding.get("strategy") == "BatchLongest"
                and padding.get("pad_to_multiple_of") is None
            ):
                raise _unsupported(
                    "padding", padding.get("strategy") if isinstance(padding, dict) else padding
                )
        self._normalizer = _build_normalizer(config.get("normalizer"))
        self._pre_tokenizer = _build_pre_tokenizer(config.get("pre_tokenizer"))
        self._model = _build_model(config.get("model"))
        self._decoder = _build_decoder(config.get("decoder"))
        self._post = self._build_post_processor(config.get("post_processor"))
        # Follow alignments (slower) only when the ids depend on them: for prepend_scheme "first", or when
        # a normalizer could insert text at the start ahead of one that tokenizers then mis-aligns.
        self._offsets = bool(self._pre_tokenizer and self._pre_tokenizer.needs_offsets)
        self._track = self._offsets or _needs_alignment_guard(self._normalizer)
        self._fast_metaspace = (
            self._pre_tokenizer
            if isinstance(self._pre_tokenizer, _MetaspacePreTokenizer) and not self._offsets
            else None
        )
        self._add_tokens(config.get("added_tokens", []))

    # -- construction --------------------------------------------------------------------------------------

    @classmethod
    def from_str(cls, json_text: str) -> Tokenizer:
        """Read a tokenizer from the text of a `tokenizer.json` file."""
        if isinstance(json_text, (bytes, bytearray)):
            try:
                json_text = bytes(json_text).decode("utf-8")
            except UnicodeDecodeError:
                raise TokenizerError("tokenizer file is not UTF-8") from None
        if not isinstance(json_text, str):
            raise TokenizerError(f"from_str needs the JSON text, got {type(json_text).__name__}")
        return cls(_parse_json(json_text))  # type: ignore[arg-type]

    @classmethod
    def from_file(cls, path) -> Tokenizer:
        """Read a tokenizer from a `tokenizer.json` file."""
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as exc:
            raise TokenizerError(f"cannot read tokenizer file {path}: {exc}") from None
        return cls.from_str(data)

    def _build_post_processor(self, obj: object) -> list[tuple[str, list[int], list[str]]] | None:
        """The single-sequence template as a list of ("A", [], []) and ("special", ids, tokens)."""
        if obj is None:
            return None
        kind = _type_of(obj, "post_processor")
        if kind != "TemplateProcessing":
            raise _unsupported("post_processor", kind)
        assert isinstance(obj, dict)
        where = "post_processor TemplateProcessing"
        single = _get(obj, "single", where, list)
        special = _get(obj, "special_tokens", where, dict)
        pair = obj.get("pair") or []
        for piece in pair if isinstance(pair, list) else []:
            if isinstance(piece, dict) and isinstance(piece.get("SpecialToken"), dict):
                if piece["SpecialToken"].get("id") not in special:  # type: ignore[operator]
                    raise TokenizerError(
                        f"{where}: missing special token {piece['SpecialToken'].get('id')!r}"
                    )
        out = []
        for piece in single:  # type: ignore[union-attr]
            if not isinstance(piece, dict) or len(piece) != 1:
                raise TokenizerError(f"{where}: bad template piece {piece!r}")
            ((name, body),) = piece.items()
            if not isinstance(body, dict):
                raise TokenizerError(f"{where}: bad template piece {piece!r}")
            if name == "Sequence":
                if body.get("id") != "A":
                    raise TokenizerError(f"{where}: the single template can only use sequence A")
                out.append(("A", [], []))
            elif name == "SpecialToken":
                token = special.get(body.get("id"))  # type: ignore[union-attr]
                if not isinstance(token, dict):
                    raise TokenizerError(f"{where}: missing special token {body.get('id')!r}")
                ids = token.get("ids")
                tokens = token.get("tokens")
                if (
                    not isinstance(ids, list)
                    or not isinstance(tokens, list)
                    or len(ids) != len(tokens)
                    or not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in ids)
                    or not all(isinstance(t, str) for t in tokens)
                ):
                    raise TokenizerError(f"{where}: bad special token {body.get('id')!r}")
                out.append(("special", list(ids), list(tokens)))
            else:
                raise TokenizerError(f"{where}: bad template piece {piece!r}")
        return out

    def _add_tokens(self, items: object) -> None:
        if items is None:
            items = []
        if not isinstance(items, list):
            raise TokenizerError("added_tokens must be a list")
        model = self._model
        added_map: dict[str, int] = {}
        added_r: dict[int, _AddedToken] = {}
        normalized_cache: dict[int, str] = {}
        special_set: set[str] = set()
        next_id = len(model.vocab)
        for item in items:
            if not isinstance(item, dict):
                raise TokenizerError(f"added token must be an object, got {item!r}")
            where = "added token"
            token = _AddedToken(
                content=_get(item, "content", where, str),  # type: ignore[arg-type]
                single_word=_get(item, "single_word", where, bool),  # type: ignore[arg-type]
                lstrip=_get(item, "lstrip", where, bool),  # type: ignore[arg-type]
                rstrip=_get(item, "rstrip", where, bool),  # type: ignore[arg-type]
                normalized=_get(item, "normalized", where, bool),  # type: ignore[arg-type]
                special=_get(item, "special", where, bool),  # type: ignore[arg-type]
            )
            _get(item, "id", where, int)
            if not token.content:
                continue
            existing = added_map.get(token.content)
            if existing is not None and added_r.get(existing) == token:
                continue
            new_id = existing if existing is not None else model.token_to_id.get(token.content)
            if new_id is None:
                new_id = next_id
                next_id += 1
            if token.normalized and self._normalizer is not None:
                if self._track:
                    normed = self._normalizer.track(token.content, -1, 0)[0]
                else:
                    normed = self._normalizer.apply(token.content)
                if normed != token.content:
                    normalized_cache[new_id] = normed
            added_map[token.content] = new_id
            if token.special:
                special_set.add(token.content)
            added_r[new_id] = token
        self._added_map = added_map
        self._added_r = added_r
        self._added_normalized = normalized_cache
        self._special_set = special_set
        raw_patterns = [(t.content, tid) for tid, t in added_r.items() if not t.normalized]
        norm_patterns = [
            (normalized_cache.get(tid, t.content), tid) for tid, t in added_r.items() if t.normalized
        ]
        self._raw_matcher = _AddedMatcher(raw_patterns, added_r) if raw_patterns else None
        self._norm_matcher = _AddedMatcher(norm_patterns, added_r) if norm_patterns else None
        base = len(model.vocab)
        overlapping = sum(1 for t in added_map if t in model.token_to_id)
        self._vocab_size = base + len(added_map) - overlapping

    # -- queries -------------------------------------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        """Number of ids, added tokens included (`get_vocab_size(with_added_tokens=True)`)."""
        return self._vocab_size

    def token_to_id(self, piece: str) -> int | None:
        """The id of a piece or added token, or None."""
        tid = self._added_map.get(piece)
        if tid is not None:
            return tid
        return self._model.token_to_id.get(piece)

    def id_to_token(self, token_id: int) -> str | None:
        """The piece (or added token) of an id, or None."""
        if isinstance(token_id, bool) or not isinstance(token_id, int):
            raise TextError(f"token ids are integers, got {token_id!r}")
        if token_id in self._added_r:
            return self._added_normalized.get(token_id, self._added_r[token_id].content)
        if 0 <= token_id < len(self._model.vocab):
            return self._model.vocab[token_id][0]
        return None

    def is_special(self, piece: str) -> bool:
        """Whether `piece` is the content of a special added token (skipped when decoding)."""
        return piece in self._special_set

    # -- encoding ------------------------------------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        """The ids of `text`, as `tokenizers` gives them (`encode(text).ids`)."""
        return [tid for tid, _ in self._encode(text)]

    def encode_pieces(self, text: str) -> list[str]:
        """The pieces of `text` (`encode(text).tokens`)."""
        return [piece for _, piece in self._encode(text)]

    def encode_full(self, text: str) -> Encoding:
        """Ids and pieces of `text` together."""
        pairs = self._encode(text)
        return Encoding([tid for tid, _ in pairs], [piece for _, piece in pairs])

    def _encode(self, text: str) -> list[tuple[int, str]]:
        if not isinstance(text, str):
            raise TextError(f"text to tokenize must be a str, got {type(text).__name__}")
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise TextError(
                    "text contains a lone surrogate code point, which cannot be encoded to UTF-8"
                ) from None
        out: list[tuple[int, str]] = []
        model_tokenize = self._model.tokenize
        if self._raw_matcher is not None:
            segments = self._raw_matcher.find(text)
        else:
            segments = [(0, len(text), None)]
        for start, end, tid in segments:
            piece = text[start:end]
            if not piece:
                continue
            if tid is not None:
                out.append((tid, piece))
                continue
            for sub, z, sub_tid in self._normalize_segment(piece, 1 if start == 0 else -1):
                if sub_tid is not None:
                    out.append((sub_tid, sub))
                    continue
                for word in self._pre_tokenize(sub, z):
                    out.extend(model_tokenize(word))
        if self._post is not None:
            final: list[tuple[int, str]] = []
            for kind, ids, tokens in self._post:
                if kind == "A":
                    final.extend(out)
                else:
                    final.extend(zip(ids, tokens, strict=True))
            out = final
        return out

    def _normalize_segment(self, piece: str, z: int) -> list[tuple[str, int, int | None]]:
        normalizer = self._normalizer
        if self._track:
            if normalizer is not None:
                piece, z, _ = normalizer.track(piece, z, 0)
        elif normalizer is not None:
            piece = normalizer.apply(piece)
        if not piece:
            return []
        if self._norm_matcher is None:
            return [(piece, z, None)]
        out = []
        for start, end, tid in self._norm_matcher.find(piece):
            sub = piece[start:end]
            if sub:
                out.append((sub, _slice_z(z, start), tid))
        return out

    def _pre_tokenize(self, text: str, z: int) -> list[str]:
        pre = self._pre_tokenizer
        if pre is None:
            return [text]
        if self._fast_metaspace is not None:
            return self._fast_metaspace.fast_split(text)
        return [t for t, _ in pre.split([(text, z if self._offsets else -1)])]

    # -- decoding ------------------------------------------------------------------------------------------

    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        """Text of `ids`, as `tokenizers`' `decode(ids)` (special tokens skipped by default)."""
        tokens = []
        for tid in ids:
            if isinstance(tid, bool) or not isinstance(tid, int):
                raise TextError(f"token ids are integers, got {tid!r}")
            if tid < 0 or tid > 0xFFFFFFFF:
                raise TextError(f"token id {tid} is out of range")
            token = self.id_to_token(tid)
            if token is None:
                continue
            if skip_special_tokens and token in self._special_set:
                continue
            tokens.append(token)
        if self._decoder is None:
            return " ".join(tokens)
        return "".join(self._decoder.decode_chain(tokens))


# Embedded tables, generated from `tokenizers` 0.23.3 (Oniguruma's `\\w` and general categories, Rust's
# lowercase mappings beyond Python 3.11's Unicode 14) and from `unicode-normalization-alignments` 0.1.12 (R9:
# code points with a canonical class, a decomposition or a composition in Unicode 9.0). Format after
# b85 + zlib: `name:` + comma-separated hex (gap, length) pairs per range, `;` between tables.
_DATA = (
    "c-rlKORp@qk>($&Me?0I2U;1uvpt5r7{I$^K7hfvTMf7y^Y@4GeGyDnopZ0QELpORhE#QVsxq0uU@+bh^~d_=mq$7u-anRye>i<D"
    ";}!6C(3kvo^;g2Hf0y+SCs%qIl|GP9<>llqSNbiStY76GTOY*!Z|VOY54Y-6mrM}wynri?{_59PJk;S2uV3B(8gL7q7!>%de?@$|"
    "JXU+Yd(<(3+wj~D%KnI_%ysn-<mLqr%a{fa!O|Nh&HWMlTVX2tOnG*~=Ziif;rpc1#evZKd)~wE!Xpg$Z7wH^=+HgF);~FMg)G4F"
    "(!49U9&qsARp*m=w};;!uRB}E_C&no26y&riy%7-8ZJDk=(ano%5YgQ#WK(srnUJ2i|v!wUAXs;6q0Vj!Y*I39h>XGfCjt_?6I<h"
    "Qae3(*(xPDS)jvicmTi+S-HvbfjqZ7qI`OQ(iUAkuikV9ETQN=Tu-obU6^jy#rKn<pCln+w~bjHpstvxkCS0z!<IN8RL0rPLeejC"
    "9;fVHhqo`+m)lDiTTApMqm@(7LEM!HHeHOsbLp3t+;#T1U7+8ewv5|Tu~ql$z-;^2#`=Zp@(bUP`_iRbVmBoa3ox)?wO7AFxX&ZB"
    "WS>^SaTBBqd{yo|1l)+tO(36+F#)ZAREayxF7#gd1F@e0Q^<X?i<N9-2jwSSZ`Ad;sAyX8g$H?f+2{V&9;Z^dAhc6o+WHim>_V!7"
    ";H2d2ZBU*N;pK4k?Tgr>z7|}iywNMAZ;C&X-T_KlaG?<rsl)>qrE<C0ZCI78voC#DZqk$=-%G*%1!Yh7%dX*>N;oq9QqqaW>~KEA"
    "ecL(iRBG=Zo(k=*^y$a>U2cB460Qo8b_<r}a1joDQ>GI@ogqKgP2_`;gqIBsO$dJ#Y-B-P28dM%t;jRV0$3KE-3jE|!t*MKJ(4l<"
    "jl4~uE($MUcLm7EeVV2#CbIy`+?8>6D(iy-a!MW}IO#i3iJc;Eow%#ey0dA(>Vm-Tj;e63ILsiiK%vw(P;S8K43*5epIqE4qq5pm"
    "U_@c8t~8tegdD?sF5?*JpQqEmfFAGcpyD(h#yt-3Kb(?EEGl&TY&VGox|Cb@#r}+nEr=#46#@LH8W-4Q2}x#LS0!a$As<yNd|60w"
    "<N{#1+crsduWL9aPMU@ka!=C8nK%UK5SsebeS+5HC@>?;!ySer$ct>eDI0YMeLf^RP*aVy0dj0Zvx@>bms6%s?gM4WPe*baoKjc*"
    "SjLfU%FOM1XQG!IX`d#&)P%BI=9LM{XvXUeYi>-p8c;4w!m=sORIECDa81JBoiAEI&^=i7^E`=!GHDL$tPw>c#d$gNtocRH7(m(`"
    "CyyF&G<M7lG`Jzr+c;T*@^DQvpLQ(5e8)Mh#za15$1&t_E%P~xhL=uAlU9=2AeT(t7E?IFz8O8)VC<94J?p-<)uvmv2^D!7JG;n~"
    "wxPo0WccxyJz&fzpFms_i`mdoR84Z*bn1Y$-3ai~%Z$Rxq%~5SWLun@6nTS>j1PKFH4W+*+on$oc8oDarYwAz$j3c^1yEHm{F~T("
    "(S0;s+yx3J5_*^vs612!zAnl?1H?V4-ELJFf?gSIv74z6r+r#YtW-OlVaNbyjG!2IoDGQktopHkHn4|tGvdVJjM+AORGxW;EjO&T"
    "0brb2kGx+eh7bml(%4W#8Te+kgGf$j6G2enn4HD|_jyCIQLr;+2hesSxMgCEyFO;W#jC2HRVOi>pGs~sbW}sZK%n0y{F=Ib4jb^^"
    "e(wiQo)){=JZZO89TTdFxobLt?iP=y3D;N#NZ9*iFt4^GF?>iJr?TI{D6=9c8P=9br7y-?hkA|Ylk*I@PUh<fLNL&5t%HIC7vym5"
    "VS;gN&Si6A-@sN$qPtQ4F`;#vA(KUcji%Lj9trC(7@8pmPcXKU$MkU~72tHJNkjbe;2Hys%Os*b922)SZdOa3aOn)8Sf4XdMlEb?"
    "Xl%nmduG_q7#R+yH&k;gl1*#G<7SQ%#<}0dHu{On#vx7JAmxFz-ALX<KeRo6P8yUShj7SfXDe&dzO9pB%67nn7_ccgNN${KyYQBL"
    "*v+wj!ElS?;jdR^W>fB(m9ERo_PiS9U@_aI<eY<*I@^DfR6b27I*hY`#kawQF1t4?5=*kff3vyrfyW-oDzSw1N#{5QHCNLk4m%OR"
    "!7=ef?2ECa%h_bXFjrK>q*>$#o3p%Z5Rc<9EH1D%ck3`ieRd}N>-M5cn5?KT+;5+>zIdq>2y4vGI%k}eTkwuB&TTNh22?@o!Dv@r"
    "?(Be?^nr0=n_OpAaxm5io;t9)&oaW9f)}P!F;3^8P15B)W;B)KFro&X@DL7lajZ4a?{OdG!6r;o06Qghj*VHT9Syr38VZ=jq>M>J"
    "+hokxCQ7CBzKpv-={Srr+i@RuT$~-FSxtEWFxYRb(<6fk-OIGr*6evWVzah97)q$KG7X>IF<7X#`%N2ivsW<;if~~@@itiP*thFx"
    "kMl$sLmh|hoXLtD_ZQ-8yM_$Oe$o)UQEk3K9sF{gh<~$hoH^;ln>oaqA5v*PMNgb`5W5KgJ3W4qm&c%r!Le~<h5!$f*5h|Wv{7#|"
    "2)q#|bP!+#ys!-QGfcv3D6JGu&d6>(hmN=n-$6Exn@quWrgmm~{HmNi7#b}UP*rw~r?%+;tz=J5X-iz+RCy|0QwiR%OtJ68wLk@>"
    "oyudJP?M*!1eXQQ#WH-<w*wQ@Pcha2O3=lMgKFz<E_I2w9FqgQK1EBSu#6x~s2_lgFh*t=Bfj|JyT&Vy%Z@=I9XQ>SsC&E6x%d{n"
    "IK~>Cg<k!JoMII(W|O(i>j)Plo&|T_BKSE4#+v2RI#iLW{__oI9>_3bI1Jkv3K^U&X~Z~!n#!j3X4#Mi|Fi$ZyM8_7!SS&VWtt9-"
    "ge^bGO#=5HCL@GA$cIw(Y=X?rcKTXfrc%@@wyI&_RfA0+fxZ8+!p+!r@rQZB@6^bn3*7^oi^V_a0;R_`)7k44jXZkzFd^E4xI|~$"
    ">*DzFqJb_tFxO3DL-~|Nw~R^LHp~(tzfQrbTY0;^vHs=y*Oz@46x=Y)R|!%cu^K05G10TE(JdHd+|Y&I=++@vY4PA}hif>YKn3KD"
    "P+V~)BToX(>q=D*TLl;n@(FtHz>Q493w4-cuHu7@BGKGae)s0Kj8ur>65WRRGR$FczY4h(=;WcV1qYi?@q?!}C@Y7tIDdfk%CT<X"
    "k_k6JQ#e4{epqq=2Z+3Gr;FC9*Jc}jRd+xiSOhvyE{rzc2q>MIP!7{jyBmN`(R3AxKR@J5-A(SoGwiO*B<c#+3-;&Yv6jWUaV4E8"
    "7fnVi4`yWp@8k{vBrGp)w^apZ7k4^8fh-(ZXo7(velavS=sl^>b#XFyCd&lGbVve@458x}(T|Sz|MwOay8Wxtd>@2Gt!-~^2A+V-"
    "n2ALD<m%QrNxU@`FPQe@JTJq0KgDVj;wp0dww*kTkxMV}qEADj8Vp7pGz<Qd><43&)uJ_v%8`EVqlDDbP>6%5o8m=k4?S`WB2<yl"
    "9hBvshI7JSmGm4h8UR@bpQ<A|NeR$~eDNBod78kD7a2#?3%n|ML0wcAY^FQ7`ZPgQ7`=+bg)B}!+?20;0=wO5uygYCG^4tn84<Ub"
    "up7I;5TZxiDnVp;<;&)7tTMqq)5nEJ8mOxhPZ)7@+z|lqbXOg~&UX&!rprIZqrx4<%D9*-YAT2kB8=SYRre=r@IC4B%A;tE@)R+f"
    "5d*9=g}iQ-=M;-Y{Np5}D(T#rdr@ZFpWMIzTI4@SA3;k`J+zZ*6d4&0OU@W^M2M!i>$>v@2L^#m2g@hlBJ^ihL=6LqL#jVFQ4Q(P"
    "XNlxFJ?2@?K<ogmLN%Mb?E>qKX3^DBP{cXzgT*e3xP(>#xX&ZZ0Gy$LFEkMea^Fr#<|@$BKg2l<<RMVX<#XEG5{*S1PgE=?8+S-l"
    "{SZc0<-iJG3MBdMaidh2e-`cU+rzziis@%P<BXAJ`%DPK4Le3%^E+-ICey8AMg(YI1Gt;+QnYxEm*C_n+I;DRb;>=m$|nj4WyE`m"
    "p6{={M8$$&KQc9&Q;(87G^KI)y*RWziAHElbY<QxMB*0-*0xLZ>y*1diBTA*(2DGb=qHJXP9`b9xiFTTjoREeR&r9vfII$zY#_)3"
    "A^D=ta_pp+?<B`Z^u3FDE+Aux0Uy9EW{a>L2>peXwMn_YQG|6Ja<DD34pm)jg9G^i@>uVdPLKKcU<fqLLiko&Kw!Y>y69f2JaCaV"
    "0PKWksk+O7c{K}sq!}?}kkgEjL(tO~(skudbE`^mU@MqE4ob=?6q<Ps-9fY_(0-J|R}GQ)m~UWw@`z1SA5306|E;^{updtLuy8@1"
    "w#q8NCCevj!^w&4vnFqwY-k)SYn-Le(G{Rjz~3XuQ&jgM5q5l(=)%F0`<q7!1iYG?Y=KQC5cgfkmrzMS^#A0WC*LS?z9_spNLM59"
    "ly2Z4!ZztzsNk)zsr!0d)U+n-f+vl3y=$czCfpB(PQ<ZDWClU)<QR2_cgrv!w~9=pxF+W9RrIVP7qS{pUzF%xrB;~IzA~hsT6M~j"
    "bX$_1S^I!9i_R=t!{>oZTyjjQb5+sr1CuHGGC?+xrs7UE9&GWVT5(7EoHYFU-fvh5)HRnaFNoX6E#&bO-UnJJ)YI$|A%Ii8{IOc5"
    "O5ffcJLMKU2fD%zI>aZPtU&+3*TJ>%fxb;iZmSYSvM-|!621}}ij)iVt-z@$pDEK+2(?SjA_iqAy}iq$F2pl{iXQv`WO-FQzSE7{"
    "1RedJUCtnEI&ODiawD*KsI<gU3qZ>z^q0Y;8=O_bQTiO6bh?2Tp%$-PdvwaJc7&i@xrFkgq||H>+2=Y;Q(Wl1y6;XUqKleYx4>#="
    "k6B>fq1&$zyy6K?prfUzTo8$S0XZ+`eocQrQ(v~6Z|Ap-3S9#t-U4`)8;(-QA~||7;VcM69QiX3LKYW34A7z*L7qwxhsTK(BIH+u"
    "xybtl%h!AXPS5xrsbXvrjG_@z{y{tvMYS}0+cIdV@AsCw2`-Fy3G&^+?O#D@2W64(^0dMQ*Y(9ylDBaBI?;5Nc^n<V=k@;E|9*>*"
    "lad;yGTVO&{NL{te&Y8(?R6(&&Q_M$RDR_1z9xIm8$D+xJ!kWTpJ{#fJpS=Z?~fmj2RF&9=kJ~OlLx+jbTlYMi-3q~n#UgrL!R&*"
    "M4JfiXIR<xi(=CKN>u(!oZ_z5G;!eEhLb;nm^*7_@Ww2}=>Eyq`b)mHe~C4e2c47UQFXk(Tm#*!LeH`nl&{V<?!*m0H0;le`vC7B"
    "^U?x6;)g`=lu!7VGZx0VtG^Og{kdOt%62Rj9`nD~qg?!3CCU1gFXOL>y!I6)onDyqx5F7H@5Ps1;YoGKub75=yGW3_>wbGi)dq~("
    "`sysmXA`+tPuM#W0=_!`U6EUu(*{M)wWs&x6H}l}7d;sQZXYFNw;|y6Po{l+zo7d2FTRT>FNpc_{@cI2WdMp`is<Y`9n=39a{Al8"
    "|G6|`|57>TMi3<q5B}?Y?n9-SxhBdtYNX$`KKC~qhoAG62if`$rWlT1q!G8z+$A#Vh4`wsy2KyL{o|yQJNTNee>zzoekI!eMb?HS"
    ">=sv3IsGLn$GQfMJe3Up6SE?_8J)}jXqw;nTK^^1@T!g8V|qO6c+nGCrgGD&wa4;()6bkU{v0iLBaLtrZ%I}Sut}KxdT}|-dWO@I"
    "x_<?7aU&Oj>3WlOSgMQvWE$$PZ6=hjvhQat)&D5R$`4Un`bq)2e=VL0L1SOytBzOyKRS)+MbYR)k3A<nc7M@h%MwM8EuZVL)fCIj"
    "aPv?!!{ox=en=zz^t~Z)qB$Au+eVNlftdv^z-3*p6{_riy}3QjIu|QmYMwaEsGXFE@%wN8{mnOowO><tR@)_q<f{`&qX|)fQ`JJh"
    "Oxf@oiVTo5%0#YZWP#<QjjEc=a60P2FR_|W=F3V1rujL_-cG4@yu4MgN^pCj>pe4v%%L~NBVR}aizm`7kQr8j)jkx-Y)Ed(hoy6s"
    "voV8g8`)`@RsBrRNO94e|31y>=9p)Khl#}!$AJLdb?|E`cb8gkjmJnO3(`@I*1{s5#N)9Gy#^%G#f+`^{%yN+suvbw1ZMRHDY|A7"
    "lz?;5flqFpy_s$9(H{P;dSRUOl!)`Ly*ju=1~%oaOvzB1nXpUDFW%)8NYyzX=}UQ0qtf|Quk@vP>h)`hP=3+F<08-07jm8kAgp|4"
    "Wy2R@qSmQ`^DK8Q$`9u?v05lSrz2ffj_QZz?U>g5N!C)-P&|e6!a@sMl;Cxgbz1BNNo=2{D0Th=agD?qmfL@li&V8LYT>$8%R`FV"
    "Bti28Bpq+lgnoxD32K)(%>~<8RwRDX^(SW>`P}h_)Q}HJMg`$oP?PhPHL=@ng`h>+k!F(QJFqE&m6lt6QSf)D)Dnv<Ufb_#?4g0M"
    "AA+hU&jq-x*W@bj-QqRHU=(Hr0lHo6QBgVN59Hpk*nlOyDXB*+Rqa*tLs>Q+^dGx<AnO(e?H1;gh${reEs_qE9^edl9kEbvK}F;b"
    "2js*!2@9tY<=$n%$iV2Fqtn8Q<_D*y*fk!Cl~TpCRmL^?;zZaqN+;}2vD|Ei`C<}6{g{GNJ-jUE*K=-S97O!%@@-18?3%pMkGeB6"
    "^hYPvxHXSdnqXNpL6ZV~B8`kp8VR=_Qm<l(GksS-X2#U|bL7G-bAu2EDt}FY!6#ozfNAK{<BRcF*~-f5Q@GQ1xtTm#Wq}ipGg4g+"
    "IY(g|y+b6y0^FA;XtWeSA|T7_Jlhhvd^gizgO-*3TjKI*u8W6O_BDpix|t~3^C6{Wxm)~rz|77|i5YRSBI_a4*!g4AOv_7)V0ZcG"
    ")Vh?7IfQK!j2!V}#!9&>Ak)Qkm28q$Qv@4Z+-Nn;j=ba7%oV>-Fhp$=0d`j0ov4zupnn_bDQNn%fI&NNP^c@R9Cu1eSJFNvqd>TC"
    "ugNHqFLs7I8Kqwq@$Qf+Em4d(C7*yhxtf_#(-*pYl3{YKKQ^nRt4bjED}%_qB~uUvVfTRj)T}lpyMK~Uk;49ukwW2|FzcU`Eb;!k"
    "|9A@vYF+zmLi)?6ox-A|2L&XkQnO$J*r&a_(r#I6T3`N26R!Xf(WqgFw7L!HqTw)bF+KlH_0wwIQ?vtwV`X3(-G}_GnMJK1)hnX*"
    "D6$EPS~sChnQB$D0rt_dV3d1~+PYQuGEaHq`xB&hlAP0r9fZTZEaDsm9%|60rfQiam1eSp6&XBndu`JdkjSg+ViO}x_ReL}H3FNH"
    "X%{&MHHxS!qs)58>RVtYlOz6!L>d-ZTXJkxap}#|=vaSPRIk^5QQD^~7)JbH$YgRwoA04@7gG2=^QLYGbY_9t`p}~CFxt<B`qbS="
    "AXl#b#nxWTV)KWa`eL<9G?4Wi&7nNHPGteSB-ZK3u@elSsL*NO8?B(+G#Fb~(xYQZB1DXIu%lib+}zM_rP66h(yUCZR+JRtCq;<f"
    "`q-cX%X)3Zi^w{Ma?47csmyOJ%5YGE_EhTU!$}QVq!<irDE5;5jg3HGryxn2ep6y;tbyP<R-O#cJXdJHm-dYa3HlzBQu8umJZ{8i"
    "DvJOM4Pcy#$SO0YlSVn2b95Iav{`dhM<=Ibg%wHJ)OmrloF#OQoA~&A7tW}c?(PFaz99u#tJ+j<3cOS!KFtrVg3UCFb2iffX<&%L"
    "T^@OOPf}oCxZ5TzZBm?vd0VG;RW9wyRA3+Hxr3F9CmR=ts<c<tt?NDtBv~~Vu~3%Eqf*j&vE40`(laabLmFji`<L?;Q~I>t5!GrN"
    "D7GkN&_xl@)UOk%vwFzgm6jzn?|1uKT}GjL&>UmW&L-&C=e7MJ4ScUHiM-k=P5a_`7W+D5Gt1Lm*~lTP^wFrRCyXF{y)i0#Veb!j"
    "DBXoNIKAEtTWMF#-LYt+QR!Ty#>@@IGdOS4G6)j9D(#pUP1PW1RwklpI&x}Cl}Y{Or<>QfjXp_<1%snYg~@|33JR?&UpS^7VlcE="
    "LF5EzYwHxyFR_#>>RqXFORmQXbS!+>EpGE=GNxKBJ`UG8^;kR4*&8F@#^JwS7ZWJSYJOq$p~XO8i2xaEI!CHv#{gmz3z1@Re5W-q"
    ">{ON#)Q&j~-PytSqsBZp4INvV*?C$PFC7)UbgaoZS+*uCkOfP&O6OI@ZkoHBT}t1Hd~2bUWm}xO>M_f0O07JyR_>7<Tq-JndV?pr"
    "Q@Hvm<wsfU+>UKmSVW)Re|Nq`6u-NSI`*uM8#_+Y+UfWG_XjI6GmOl&FxgwO+9eshlppbyosA-9aAR1amSI&C*H$rYk?c<oaYKM="
    "JRgG!DEu~VBvj){VXu7{_zCV?$KAn=hXff_H{fw;!0QNgv4Vnlpzd>g=<9geb*~EFM@hNv^ZIAVJ)yZU@ph1ZMmKJAnCC*1(v*P>"
    "dB*$i|MKQCNNy`=Gyy+X(Y9(UoFpZ0QUsB<gmApuO=(!cn3v9y^7;Pz@86oY{4k+6uyI#}N0h2w45{7D^cK1%G#Q0?is(lP9C||L"
    "%3fdTp~%0e1^B-3e%K=HSzqApN^JR1QMu9Bf}zk-ax85;yDnAW3tSKQPguJ}E(dQBtLNYlb+8%{SJ~;ROd?pE^@Kh|A6-Q#Qeop|"
    "d1R5ZBng@Bj-5CwEO~Sj71XR`*#%XHDMCTtE}1gJ+6@VIXl$#9@E|I1#~Q*qbiat}Ufc{R;;zkWGYNWp4;nXJwsgyQfB(b&me>Xo"
    "(FO3l<2WuW-jZ7C_dgtOs5(z+bd@<HUHNE|v50<gF2ibEjOVZs-eti+6wvQSbyl3-*etV8m)ZK~lBfOkjZVbT&+ly36Q%&zT1FGZ"
    "G8)N%Nf#48kSj4<UyG=@=bnCZ##j0gQNcT#7JvB<`D0J5V(w3mZ^*wxCz%5iAM0r0^8*Qd?kT0EJ)u&2mc0Mre1m&A#2d-yGm^LM"
    "A0M~=_#4sMRo4USIJTdF)`7fWX#GEL8+#CFI~%GfY^Ju)>7k<=YLwfqH|<W8o;n46?UwJ~yql`u%^T9Jh!33^tcRGjw)V~X7r6sQ"
    "#%4VcMu_w<kAPRD1}+hpo!Uq2c%0Brq2Dj6TTq)t_X=o?g$;GAOB<VKz;_@JZWW#?6c3>Z9W{v}3*8tO6(cQxzZCcoL{F%vMUXOd"
    "81WN{?sbS_u{t$rHg=B9tf?ypdo)K;X5cL->;@JshXh52!^GN#H*2p=RWd+X7xhq>&%;ms@7pLsG;f$W-~<NvcW}N+T!O}o{Uciw"
    "%!1_u(gb_J5~71QjW)}SXiR|1%0=(BV~>sGebRh9SIl=4v^d`@w4-Ty{vo;<?T1~35?hbaWUsQPC?b#R=q$#FW#NXRP#m4dI|L0G"
    "JOXk%X<|_oE*HHiYS<_1%WBc0ylYnyHAq?EtXeM2J_HaDzjjibk48VM;QTtY$A{RQh)9dJ8P&I!q=*vCG%u_M7N<vMOUGRtxzgcM"
    "kkJZ#Vj_we{)amPN0Q~T2xL0+ZtNy3`wN~cZUv(irTG0%l2X8Mqo>j1=bn{*H2?J%ds1RUwqUK}5O5T7S+x@*6YpcvmgjSV!)oF;"
    "+<ku~f<_OKHb9dIm!Oy-f8_v$(%B_PJM%>PgLoNMxcY;{yrG}VXLPg5w(ZwJ-(%I?+tP=%t}H+4>dA&cTn%@uV)?d_E5exG|Fpls"
    "i(B9vIyY<ZEggKEzQb67skpGICOlxEgmq5{H<Uv64B7#KQ=^wR8~0<POTgU&``xro`R{-Fzi-JF6xWw_mVRM{>M{Qg2b_=U8(MfY"
    "LmJK7xu<*yL#W8k$ekxJE+*z%M>NtMI7LLjB^2|pqAAW5`*z0nKYjnU<;nR5=5er9n^5>FM6p|!a)hARdxs5)0O)FNCv@mJ7Hc=_"
    "*7Y%>ENtxMW+A?^N<9rv-VO)e1@)RehYt0s2_0sSLf&qLu5qNZs|$sO;fKVheKhfQ<`5SrNSsOp%}s@V7Vd6tA-&HE+l>Uq1C~)R"
    "4?k!u>?x7Fu#i4%Sz`gnDaz=Lj{;xGSasqrl908(=qo95fCE+izGEjWnoI;xg-$Cw`MdVGMxVWrUBk}7bXUNW>l0%VunqPHj78>q"
    "NDy2iY*dt;_|qi7oh$rHA$u*qVaGlAD?DtY+kxTEH2lMCt|<Z(HTEOKx>HGnsLzE>xS+TfBnKgRDj}NIs1`uqLleELQ}4-o?}qY-"
    "&bGUadnH0H;((h}*umQJIm9E#w%|=XqEQ;?Ux>H_^aVlfI;aZ@QG*?_QUUZ#ddPD8PR+nLHJ-RiKT4@V-k;lt$v*TGf5DbJY&lqY"
    "kqt~IQcLMKVPlQaHUXwG<QW}I7wWJN<gKzEJ+ocOsjXZP*@Ikb?|=U58+h7EUVEZv|B9c!N#<g|By;Tj&wuGxiXHU+=l_&ZU-$cO"
    "_BW7$_^kV1*V{&`Ebw<A`WCs-es|TFK%Wne$#Na+S%S<yDl5lX`9K`+eKdCTA;X=vX86tGA<S;?LcdUer0e}R-@l#9BG2jjbS`C)"
    "gQ5P^>v;dof4qgl20-C%h6Q}C8i7zZs>Z7d8(b9h7`W&Q#IMa9O!x`jI<K;WFPK6!<vWT?%zoF#X%?Gl6Y4Lecf1TIS~l0G38$w!"
    "!&G0uP*2cyiGD<GJpB}P^wk_~PVe6ma8uWN#%B{we;z$GKLBkv8qjfc<5}z{PO5bX)1y3Bsodp3hq}Pyh(NFj1iHrzJ7fGj%QiSe"
    "9>p$xG+NCBaNN=cl=EFl1&}Sfjpu|odWZ%-Z)B^o6I7j?#;XdNGV1D*DyZ#&oFs{+-#Iw<uM=3`sXX<$Z(PI0FeY3%{_fk&UtsBz"
    "?Pc;!yJ9ihJLs#8`V)V^=i|3bBDG6mWK7VryHhIGx(hZ;(nLcv!&#ZLGB72ag;|4%Oa>ExSM3ZwRT92cYI>&EXowZ@lZHe#uQrc2"
    "f9|eRUYc{LZT&XnoE%mo9xlef9g++2Q18Y9Y*1hA<i)z0YJYVN-&#`sW&y3k%nYz;aBF#6v6R}h<yL3KG(*{=T@sqqb+6$AFj|?c"
    "g2gUheHA7kAV|M;6ddf@<JkTc%2s3q2hNX#A7(-aYo9fzPqqpEwI*_4za}laLL1(-)fbW+(7;9HTR|5wcmnym6+wS#W`*yRmY3*y"
    "g|gnzTc%ZoVe+AwTib9PR;|MC^C83`aRP=mGg<xe^g9xPdb2dvJlWY=TV+8o;(WTONer23_?j$qX{5_uQKJ?sgq^#8?_%_nM#d*l"
    "UO=+U)AjuQ2sPqQ(U4aCF(ULPa@zTA#c3tsu|af(d$kL}I*>5Bnjw`dB(%p`?vCbR{_P-(;4wptn@Nf83b{<P21WJ@dHxPYX{If@"
    "(`}j=MzP~HBQ5gOgvxv?{qcjK)?&2d$M%TKqKxzpub^RMSXyR-HWx$BT+QF#py5UKTFU|g^%Jjm!CJZ0jBF!KQLreb00&xr0W#1C"
    "^NE~R2Pn>?rqI*H4Vuu#=Y<aMtiP79Y0G-h<y>8&{m>KLElqz9><a>pj5(;qMcEXgovr$dS5Lo`QAUNZd-_2c{svdaSz;^dzO=}~"
    "pe^yI)dWXq54-^+_N5uTHEHgkqXO)ZEf|p5m?Ao~x#!<|xl}7Sm^7Mr#l>K_wlGZ4C5gtC*wc-@Hr4RI*xJw2Fn8=58P_`&cuc>|"
    "xanq(7V@LlKNFBb;+EMDgn%Lv<KaP+($J0HoF3Z0c6)Ryc<ZWr29yjTRnRcf{$&0AOEHzvddsu1y@u)=Whn!*5JeUfgjyloUg{W{"
    "JS6S%j3_KGD1hkkMO)dGi|rmkUXtK?=Fx4OJ=o*pwDaYlx*!761%(9W^ZwxXo91ElWuzv4A=%R;?i_3j$h>pm4ih3=XlA(w1W}4O"
    "E8R#NMe{}pYGrn|itA7T-AJ!E=AW)K;a}%pSxJNQl25t>{lG(<HOZ@0DH$WqtgPyY_Hz+#IwWvfBGJ5acyLhiKPaR8%E26lOx(fC"
    "CI3*JkH<B7^$+JUjB|%XpGY%?t)l5sYT~uoHGH$blr*=ebiwqY5lwu#{_~R8`*+3CG@rJ^kD~-%hy}~+20V0{ocK$DW(O=h3KexT"
    "h1N1I+*C0@`f)fagL$+H3mP=aV-HQdg?qRfKZX2dC>v-wuz5{?i^9Xt3(W(7?3(9|>X+PUd68ttlZj~ym<&T{c?HEEY{A#}vThE&"
    "!jfDZ7)o3^gWZnZ926Oy#;-0%&u$TQvr1;-KkvW&U;q2x{`lthwSL#%wywbK?K`O@>Vy5e{&vXdl+h(!ID8)+K}JzVNk*HDnvC}E"
    "#LwFiotE$Vds#4c7(0wT#vbE<F*YVej3dSg<Aia>IAdHeE*P&EuNYU1E5;kf8^#S|!n0$%V|-wYZuaTK7~Y+9VJrwgGT>hUe+K+3"
    ";Lm`61^gNCuYf-T{uS_Nz`u(3=G^)``D_hihw+ZF$N0cFV0>a6F}^TPGTs-AGsX_%g0aVV#W-MGF^(8-7!!tuamIMZxL|x>ykdM}"
    "Trs{d-elYW{|@*Y;NJm%1N=MSZ-9RX{0;E$fWHC$1MoM%e*pdl_z%F}0RIvGKgu|#i~"
)
