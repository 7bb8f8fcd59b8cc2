"""Translation of Oniguruma patterns (Ruby syntax, as `tokenizers` builds them) to Python `re`."""

from __future__ import annotations

import re

from ..errors import TokenizerError, UnsupportedTokenizerComponent
from .character_classes import (
    _GC_GROUPS,
    _GC_LEAVES,
    _GC_LONG,
    _MAX_CODE_POINT,
    _class_ranges,
    _complement,
    _gc_ranges,
    _merge,
    _py_class,
    _word_class,
)

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
