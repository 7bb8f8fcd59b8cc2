"""English text normalisation for text-to-speech: written tokens ("$5.20", "9:30 p.m.", "Henry VIII") become
the words a reader would say ("five dollars and twenty cents", "nine thirty p m", "Henry the Eighth"), with
a map from every replacement back to the caller's text.

`normalize(text)` makes one pass over the text with a single precompiled alternation of patterns; at each
position the first pattern that matches wins, its handler returns the spoken words (or declines, leaving the
token as written), and everything between matches is copied unchanged. `Normalized.spans` lists every
replacement as `(norm_start, norm_end, orig_start, orig_end)`; outside the spans the two texts are equal
character for character, so `Normalized.original_span` maps any range of the output back to the input.
When a replacement would touch a letter or digit on either side, a space is added and counted inside the
replacement's span ("x&y" -> "x and y").

Number words are hand-written, not taken from `num2words` or `inflect`: the engine must install with
micropip in Pyodide and has no dependencies. `num2words` 0.5.14 is a pure-Python wheel, but it requires
`docopt`, which exists only as an sdist (micropip cannot install it), and it carries dozens of languages
we do not need; `inflect` pulls in `more_itertools` and `typeguard`, and neither library reads years,
times or currency the way we want anyway. English number words are about fifty lines.

Rules, in the order they are tried at one position:

- URLs (`https://x.org/a` -> "x dot org slash a", the scheme is dropped, `www` is spelled "w w w"), e-mail
  addresses (`a.b@c.io` -> "a dot b at c dot io") and bare domains with a known top-level domain
  (`example.com` -> "example dot com"). Letters are kept, digits are read one by one, `. / @ - _ : ? = & #`
  become words.
- Dates: ISO `2026-11-30` -> "November thirtieth, twenty twenty-six"; `30/11/2026` (also with dots) when
  one side is over 12 (day first if the first is, month first if the second is; both <= 12 is ambiguous
  and read as "three slash four slash twenty twenty-six"); `Nov. 30, 2026`, `November 30th`, `Jan 5-7` ->
  "January fifth to seventh"; `30 Nov 2026` -> "the thirtieth of November, twenty twenty-six".
- Ten-digit phone numbers (`555-123-4567`, `(555) 123-4567`) are read digit by digit in groups.
- Times: `9:30` -> "nine thirty", `9:05` -> "nine oh five", `9:00` -> "nine o'clock", `21:00` -> "twenty-one
  hundred", `21:05` -> "twenty-one oh five", `9:30 pm`, `9:30 p.m.`, `9pm` -> "... p m".
- Currency `$ £ € ¥` before a number: "five dollars and twenty cents", "three pounds and fifty pence",
  "one euro", "one hundred yen"; a scale after it keeps the amount one unit: `$3.5M` -> "three point five
  million dollars", `$2B`, `$50k`, `$1.5 billion`; `$5-10` -> "five to ten dollars"; `-$5` -> "minus five
  dollars". An amount with other than two decimals is read as a decimal ("five point five dollars").
- Decades: `1990s` -> "nineteen nineties", `the '90s` / `80s` -> "nineties" / "eighties", `2000s` -> "two
  thousands".
- Ordinals: `1st`, `22nd`, `103rd`, `1,000th`.
- Fractions: `1/2` -> "one half", `3/4` -> "three quarters", `2/3` -> "two thirds", `2 1/2` -> "two and a
  half", `½`; only denominators 2-10, 16, 32, 64 and 100 are fractions, other `a/b` are read "a slash b";
  `24/7` -> "twenty-four seven", `50/50` -> "fifty-fifty"; with a unit: `2 1/2 lbs` -> "two
  and a half pounds", `3/4in` -> "three quarters of an inch".
- Numbers, with an optional sign, range and unit: cardinals (`1,234`, `-5` -> "minus five", American style
  without "and"), decimals (`3.14` -> "three point one four", `.5` -> "point five"), numbers with leading
  zeros digit by digit (`007`), over 18 digits digit by digit; a bare four-digit integer from 1100 to 2099
  without separators or unit is read as a year (`1999` -> "nineteen ninety-nine", `2009` -> "two thousand
  nine", `1500` -> "fifteen hundred"); ranges `3-5` / `3–5` -> "three to five" (two years read as years:
  `1990-1995`, `1990-95`); units after a number, singular only for exactly one (`1 km` -> "one
  kilometer", `5 km`, `1.0 km` -> kilometers), see `_UNITS`. `in` is inches only when attached (`12in`),
  and the scales `k K M B bn` only when attached (`5M` -> "five million").
- Roman numerals, only where clearly meant: after a capitalised keyword (`Chapter IV` -> "Chapter four",
  `World War II` -> "World War two", `Part I`), after a regnal name (`Henry VIII` -> "Henry the Eighth",
  `Louis XIV`; not the numeral `I` alone, so "Henry I" is left), and `II` / `III` after any capitalised
  word (`Smith III` -> "Smith the Third"). The word "I" and words such as "MIX", "DC", "CIVIL" are never
  read as numerals.
- Abbreviations: titles before a capitalised name (`Dr.` -> "Doctor", `Mr.` -> "Mister", `Mrs.` ->
  "Missus", `Ms.` -> "Miz", `Prof.`, `St.` -> "Saint", ... also without the period), `St.` after a
  capitalised word -> "Street" (`Dr.` -> "Drive"), `e.g.` -> "for example", `i.e.` -> "that is", `etc.` ->
  "et cetera", `vs.` / `vs` -> "versus", `Jr.`, `Sr.`, `approx.`, `Ave.`, `Rd.`, `Blvd.`, and `No.`,
  `Fig.`, `Vol.`, `Ch.`, `p.`, `pp.` before a number. `Mr.`, `Mrs.`, `Ms.` are expanded before any word
  ("Mr. and Mrs. Smith").
- Symbols: `&` -> "and", `@` -> "at", `#` before a number -> "number", `+` -> "plus", `=` -> "equals", `/`
  between two letters -> "slash".

Sentence punctuation is kept. An abbreviation's own period is dropped when expanded, so it never becomes a
sentence end; for abbreviations that can end a sentence (`etc.`, `a.m.`/`p.m.`, `Jr.`, `St.` as Street,
`Nov.` at the end of a date, ...) a "." is written after the words when the text ends there or the next word
starts with a capital letter. Tokens stay one unit: `$3.5M` is matched whole, so its "." is never a
sentence end.

Left alone: plain words, already-spoken text, and code-like tokens, i.e. anything that mixes letters and
digits or has digits glued to other tokens (`mp3`, `H2O`, `v1.2.3`, `1080p`, `4x`, `978-3-16`, `3:2`,
`file.txt`, `snake_case`): the model reads them as written, and guessing wrongly is worse than not
guessing. A pattern that matches but makes no sense (`2026-13-45`, `May 45`) is left as written too.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

__all__ = ["Normalized", "normalize", "cardinal", "ordinal", "year"]


@dataclass(frozen=True)
class Normalized:
    text: str
    spans: list[tuple[int, int, int, int]]

    def original_span(self, norm_start: int, norm_end: int) -> tuple[int, int]:
        """Map the range `text[norm_start:norm_end]` back to the caller's text. A position inside a
        replacement maps to the whole written token; untouched text maps 1:1 by offset."""
        if not 0 <= norm_start <= norm_end <= len(self.text):
            raise ValueError(
                f"range {norm_start}:{norm_end} is not inside the text (length {len(self.text)})"
            )
        spans = self.spans
        # start: the last span starting at or before norm_start
        i = bisect_right(spans, norm_start, key=_first) - 1
        if i < 0:
            start = norm_start
        else:
            ns, ne, os_, oe = spans[i]
            start = os_ if norm_start < ne else norm_start - ne + oe
        if norm_end == norm_start:
            return start, start
        # end: the last span starting before norm_end
        j = bisect_left(spans, norm_end, key=_first) - 1
        if j < 0:
            end = norm_end
        else:
            ns, ne, os_, oe = spans[j]
            end = oe if norm_end <= ne else norm_end - ne + oe
        return start, end


def _first(span: tuple[int, int, int, int]) -> int:
    return span[0]


# ---------------------------------------------------------------------------------------------------------
# Number words

_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen"
).split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_SCALES = ("", "thousand", "million", "billion", "trillion", "quadrillion")
_ORD_IRREGULAR = {
    "one": "first",
    "two": "second",
    "three": "third",
    "five": "fifth",
    "eight": "eighth",
    "nine": "ninth",
    "twelve": "twelfth",
}


def _under_100(n: int) -> str:
    if n < 20:
        return _ONES[n]
    tens, ones = divmod(n, 10)
    return _TENS[tens] + ("-" + _ONES[ones] if ones else "")


def _under_1000(n: int) -> str:
    hundreds, rest = divmod(n, 100)
    if not hundreds:
        return _under_100(rest)
    return _ONES[hundreds] + " hundred" + (" " + _under_100(rest) if rest else "")


def cardinal(n: int) -> str:
    """1234 -> "one thousand two hundred thirty-four" (American: no "and"); up to 10**18 - 1."""
    if n < 0:
        return "minus " + cardinal(-n)
    if n == 0:
        return "zero"
    if n >= 10**18:
        return _digits(str(n))
    words = []
    scale = 0
    while n:
        n, group = divmod(n, 1000)
        if group:
            words.append(_under_1000(group) + (" " + _SCALES[scale] if scale else ""))
        scale += 1
    return " ".join(reversed(words))


def _ordinalize(words: str) -> str:
    cut = max(words.rfind(" "), words.rfind("-")) + 1
    head, last = words[:cut], words[cut:]
    if last in _ORD_IRREGULAR:
        return head + _ORD_IRREGULAR[last]
    if last.endswith("y"):
        return head + last[:-1] + "ieth"
    return head + last + "th"


def ordinal(n: int) -> str:
    """22 -> "twenty-second"."""
    return _ordinalize(cardinal(n))


def _pluralize(words: str) -> str:
    if words.endswith("y"):
        return words[:-1] + "ies"
    if words.endswith("x"):
        return words + "es"
    return words + "s"


def year(n: int) -> str:
    """1999 -> "nineteen ninety-nine", 2009 -> "two thousand nine", 2026 -> "twenty twenty-six",
    1900 -> "nineteen hundred", 1905 -> "nineteen oh five"."""
    if not 1000 <= n <= 9999 or 2000 <= n <= 2009 or n % 1000 == 0:
        return cardinal(n)
    hi, lo = divmod(n, 100)
    if lo == 0:
        return cardinal(hi) + " hundred"
    if lo < 10:
        return cardinal(hi) + " oh " + _ONES[lo]
    return cardinal(hi) + " " + _under_100(lo)


def _digits(s: str) -> str:
    return " ".join(_ONES[ord(c) - 48] for c in s if "0" <= c <= "9")


def _int_words(s: str) -> str:
    """Digits with optional thousands commas -> words; leading zeros or over 18 digits -> digit by digit."""
    s = s.replace(",", "")
    if not s:
        return ""
    if len(s) > 18 or (len(s) > 1 and s[0] == "0"):
        return _digits(s)
    return cardinal(int(s))


def _number_words(s: str) -> str:
    """ "1,234.56" -> "one thousand two hundred thirty-four point five six"; ".5" -> "point five"."""
    whole, dot, frac = s.partition(".")
    words = _int_words(whole) if whole else ""
    if dot:
        words = (words + " point " if words else "point ") + _digits(frac)
    return words


def _is_one(s: str) -> bool:
    return s == "1"


# ---------------------------------------------------------------------------------------------------------
# Tables

_MONTHS = ("January February March April May June July August September October November December").split()
_MONTH_RE = (
    r"Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?"
    r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?"
)


def _month(name: str) -> int:
    return {m[:3]: i for i, m in enumerate(_MONTHS, 1)}[name[:3]]


# unit -> (singular, plural)
_UNITS = {
    "km/h": ("kilometer per hour", "kilometers per hour"),
    "km/hr": ("kilometer per hour", "kilometers per hour"),
    "kph": ("kilometer per hour", "kilometers per hour"),
    "m/s": ("meter per second", "meters per second"),
    "mph": ("mile per hour", "miles per hour"),
    "kHz": ("kilohertz", "kilohertz"),
    "MHz": ("megahertz", "megahertz"),
    "GHz": ("gigahertz", "gigahertz"),
    "Hz": ("hertz", "hertz"),
    "km": ("kilometer", "kilometers"),
    "kg": ("kilogram", "kilograms"),
    "mg": ("milligram", "milligrams"),
    "mm": ("millimeter", "millimeters"),
    "cm": ("centimeter", "centimeters"),
    "ml": ("milliliter", "milliliters"),
    "mL": ("milliliter", "milliliters"),
    "TB": ("terabyte", "terabytes"),
    "GB": ("gigabyte", "gigabytes"),
    "MB": ("megabyte", "megabytes"),
    "kB": ("kilobyte", "kilobytes"),
    "KB": ("kilobyte", "kilobytes"),
    "ft": ("foot", "feet"),
    "lbs": ("pound", "pounds"),
    "lb": ("pound", "pounds"),
    "oz": ("ounce", "ounces"),
    "mi": ("mile", "miles"),
    "min": ("minute", "minutes"),
    "ms": ("millisecond", "milliseconds"),
    "m": ("meter", "meters"),
    "g": ("gram", "grams"),
    "°C": ("degree Celsius", "degrees Celsius"),
    "°F": ("degree Fahrenheit", "degrees Fahrenheit"),
    "℃": ("degree Celsius", "degrees Celsius"),
    "℉": ("degree Fahrenheit", "degrees Fahrenheit"),
    "°": ("degree", "degrees"),
    "%": ("percent", "percent"),
    "€": ("euro", "euros"),
    # attached only
    "in": ("inch", "inches"),
    "bn": ("billion", "billion"),
    "k": ("K", "K"),
    "K": ("K", "K"),
    "M": ("million", "million"),
    "B": ("billion", "billion"),
}
_ATTACHED_ONLY = frozenset({"in", "bn", "k", "K", "M", "B"})
_UNIT_RE = (
    "|".join(
        re.escape(u).replace("°", r"°\s?") for u in sorted(_UNITS, key=len, reverse=True) if u not in ("°",)
    )
    + "|°"
)

# symbol -> (singular, plural, minor singular, minor plural)
_CURRENCY = {
    "$": ("dollar", "dollars", "cent", "cents"),
    "£": ("pound", "pounds", "penny", "pence"),
    "€": ("euro", "euros", "cent", "cents"),
    "¥": ("yen", "yen", "", ""),
}
_SCALE_WORDS = {
    "k": "thousand",
    "K": "thousand",
    "thousand": "thousand",
    "M": "million",
    "million": "million",
    "B": "billion",
    "bn": "billion",
    "billion": "billion",
    "T": "trillion",
    "trillion": "trillion",
}

_FRACTIONS = {"½": (1, 2), "¼": (1, 4), "¾": (3, 4), "⅓": (1, 3), "⅔": (2, 3), "⅛": (1, 8), "⅜": (3, 8)}
_FRACTIONS.update({"⅝": (5, 8), "⅞": (7, 8)})
_SAYINGS = {("24", "7"): "twenty-four seven", ("50", "50"): "fifty-fifty"}
_FRACTION_DENOMINATORS = frozenset({2, 3, 4, 5, 6, 7, 8, 9, 10, 16, 32, 64, 100})

_TITLES = {
    "Dr": "Doctor",
    "Mr": "Mister",
    "Mrs": "Missus",
    "Ms": "Miz",
    "Prof": "Professor",
    "St": "Saint",
    "Mt": "Mount",
    "Sgt": "Sergeant",
    "Capt": "Captain",
    "Gen": "General",
    "Col": "Colonel",
    "Lt": "Lieutenant",
    "Rev": "Reverend",
    "Hon": "Honorable",
    "Gov": "Governor",
    "Sen": "Senator",
    "Rep": "Representative",
    "Pres": "President",
}
# abbreviation -> (words, may end a sentence, needs a number after it)
_ABBREVIATIONS = {
    "e.g": ("for example", False, False),
    "i.e": ("that is", False, False),
    "etc": ("et cetera", True, False),
    "vs": ("versus", False, False),
    "Jr": ("Junior", True, False),
    "Sr": ("Senior", True, False),
    "approx": ("approximately", False, False),
    "Ave": ("Avenue", True, False),
    "Blvd": ("Boulevard", True, False),
    "Rd": ("Road", True, False),
    "St": ("Street", True, False),
    "Dr": ("Drive", True, False),
    "Fig": ("figure", False, True),
    "fig": ("figure", False, True),
    "No": ("number", False, True),
    "no": ("number", False, True),
    "Nos": ("numbers", False, True),
    "Vol": ("volume", False, True),
    "vol": ("volume", False, True),
    "Ch": ("chapter", False, True),
    "ch": ("chapter", False, True),
    "p": ("page", False, True),
    "pp": ("pages", False, True),
}

_ROMAN_KEYWORDS = (
    "Chapter|Chap\\.|Part|Volume|Vol\\.|Book|Act|Scene|Section|Article|Phase|Type|Class|Level|Stage|Round"
    "|War|Episode|Appendix|Unit|Lesson|Grade|Tier|Season|Title|Bowl|Apollo|Gemini|Mark|Series|Category"
    "|Psalm|Canto|Vatican|Olympiad|Symphony|Op\\.|CHAPTER|PART|BOOK|ACT|SCENE|SECTION|WAR"
)
_REGNAL_NAMES = (
    "Henry|Edward|George|William|Richard|Charles|James|Louis|Elizabeth|Mary|Victoria|John|Paul|Pius|Benedict"
    "|Gregory|Leo|Innocent|Clement|Alexander|Frederick|Napoleon|Peter|Philip|Ferdinand|Otto|Ramses|Ramesses"
    "|Constantine|Catherine|Anne|Nicholas|Ivan|Gustav|Gustavus|Carl|Christian|Haakon|Olaf|Harald|Felipe"
    "|Juan|Carlos|Alfonso|Pedro|Manuel|Francis|Henri|Wilhelm|Friedrich|Karl|Leopold|Rudolf|Ludwig|Boniface"
    "|Urban|Sixtus|Julius|Martin|Stephen|David|Robert|Edmund|Harold|Ptolemy|Amenhotep|Thutmose|Antiochus"
    "|Selim|Mehmed|Suleiman|Murad|Rama|Kamehameha|Sancho|Baldwin|Conrad|Sigismund|Casimir|Vasili|Fyodor"
    "|Alexios|Basil|Leo|Adrian|Hadrian|Eugene|Celestine|Honorius|Nero|Darius|Xerxes|Cyrus|Artaxerxes"
)
_ROMAN_VALID = re.compile(r"M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})")
_ROMAN_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def _roman(s: str) -> int:
    """Value of a valid Roman numeral, 0 when `s` is not one."""
    if not s or not _ROMAN_VALID.fullmatch(s):
        return 0
    total = 0
    for a, b in zip(s, s[1:] + " ", strict=True):
        v = _ROMAN_VALUES[a]
        total += -v if b != " " and _ROMAN_VALUES[b] > v else v
    return total


_TLDS = (
    "com|org|net|edu|gov|mil|int|io|co|uk|us|ca|au|de|fr|es|it|nl|se|no|fi|dk|ch|at|be|pl|ru|jp|cn|in|br|mx"
    "|nz|ie|za|kr|eu|ai|dev|app|info|biz|me|tv|ly|gg|xyz|tech|online|site|store|blog|cloud|news|fm|so|sh"
)
_URL_CHAR_WORDS = {
    ".": "dot",
    "/": "slash",
    "@": "at",
    "-": "dash",
    "_": "underscore",
    ":": "colon",
    "?": "question mark",
    "=": "equals",
    "&": "and",
    "#": "hash",
    "%": "percent",
    "~": "tilde",
    "+": "plus",
}
_URL_TOKEN = re.compile(r"[A-Za-z]+|[0-9]+|.", re.S)


def _spell_address(s: str) -> str:
    s = re.sub(r"^[A-Za-z]+://", "", s).rstrip("/")
    words = []
    for tok in _URL_TOKEN.findall(s):
        c = tok[0]
        if c.isalpha() and c.isascii():
            words.append("w w w" if tok.lower() == "www" else tok)
        elif "0" <= c <= "9":
            words.append(_digits(tok))
        elif tok in _URL_CHAR_WORDS:
            words.append(_URL_CHAR_WORDS[tok])
        elif not tok.isspace():
            words.append(tok)
    return " ".join(words)


# ---------------------------------------------------------------------------------------------------------
# The one pattern

_INT = r"(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)"
_NUM = rf"(?:{_INT}(?:\.[0-9]+)?|\.[0-9]+)"
_PRE = r"(?<![\w.])(?<![0-9][-–/:,])"  # not glued to a word, a decimal or another number
_END = r"(?!\w|[-–.,:/][0-9])"  # not followed by a word character or another number
_AMPM = r"[aApP]\.?[mM](?![A-Za-z])\.?"
_STOP = r"[^\s<>\"'()\[\]{}]"
_VULGAR = "[½¼¾⅓⅔⅛⅜⅝⅞]"  # the vulgar fractions read as words
_STOP_LAST = r"[^\s<>\"'()\[\]{}.,;:!?]"

_ALTERNATIVES = [
    ("url", rf"(?<![\w@.])(?:[A-Za-z][A-Za-z0-9+.-]*://|www\.){_STOP}*{_STOP_LAST}"),
    (
        "email",
        r"(?<![\w.@+-])[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?!\w)",
    ),
    (
        "domain",
        rf"(?<![\w@./-])[A-Za-z0-9][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+)*\.(?:{_TLDS})(?![\w@-]|\.[A-Za-z0-9])"
        rf"(?:/(?:{_STOP}*{_STOP_LAST})?)?",
    ),
    (
        "iso_date",
        r"(?<![\w.-])(?P<iy>[0-9]{4})-(?P<im>[0-9]{2})-(?P<id>[0-9]{2})(?!\w|[-–.,:/][0-9])",
    ),
    (
        "slash_date",
        r"(?<![\w./-])(?P<sa>[0-9]{1,2})(?P<ss>[/.])(?P<sb>[0-9]{1,2})(?P=ss)(?P<sy>[0-9]{4})"
        r"(?!\w|[-–.,:/][0-9])",
    ),
    (
        "month_date",
        rf"(?<!\w)(?P<mm>{_MONTH_RE})(?P<mdot>\.)?\s(?P<md>[0-9]{{1,2}})(?:st|nd|rd|th)?"
        r"(?:(?:-|\s?–\s?)(?P<md2>[0-9]{1,2})(?:st|nd|rd|th)?)?"
        r"(?:,?\s(?P<my>[0-9]{4}))?(?!\w|[-–.,:/][0-9])",
    ),
    (
        "day_month",
        rf"{_PRE}(?P<dd>[0-9]{{1,2}})(?:st|nd|rd|th)?\s(?:of\s)?(?P<dm>{_MONTH_RE})(?P<ddot>\.)?"
        r"(?:,?\s(?P<dy>[0-9]{4}))?(?!\w|[-–.,:/][0-9])",
    ),
    (
        "phone",
        r"(?<![\w+-])(?:\+?1[-.\s])?(?:\([0-9]{3}\)\s?|[0-9]{3}[-.\s])[0-9]{3}[-.][0-9]{4}(?!\w|[-.][0-9])",
    ),
    (
        "time",
        rf"{_PRE}(?P<th>[0-9]{{1,2}}):(?P<tm>[0-5][0-9])(?::(?P<ts>[0-5][0-9]))?(?:\s?(?P<tap>{_AMPM}))?"
        r"(?!\w|[-–.,:/][0-9])",
    ),
    ("hour_ampm", rf"{_PRE}(?P<hh>[0-9]{{1,2}})\s?(?P<hap>{_AMPM})(?!\w)"),
    (
        "money",
        rf"(?<![\w.])(?P<cneg>[-−])?(?P<csym>[$£€¥])\s?(?P<ca>{_NUM})(?:(?:-|\s?–\s?)(?P<cb>{_NUM}))?"
        rf"(?:(?P<csp>\s?)(?P<csc>thousand|million|billion|trillion|bn|[kKMBT]))?{_END}",
    ),
    ("decade", r"(?<![\w'’])(?:['’](?P<da>[0-9]0)|(?P<db>[1-9][0-9]{2}0|[1-9]0))['’]?s(?!\w)"),
    ("ordinal", rf"{_PRE}(?P<on>{_INT})(?:st|nd|rd|th|ST|ND|RD|TH)(?!\w)"),
    (
        "fraction",
        rf"{_PRE}(?:(?P<fw>[0-9]+)\s)?(?P<fn>[0-9]+)/(?P<fd>[0-9]+)(?:(?P<fsp>\s?)(?P<fu>{_UNIT_RE}))?{_END}",
    ),
    ("ufraction", rf"(?:{_PRE}(?P<uw>[0-9]+)\s?)?(?P<uc>{_VULGAR})"),
    (
        "number",
        rf"{_PRE}(?P<qneg>[-−])?(?P<qa>{_NUM})(?:(?:-|\s?–\s?)(?P<qb>{_NUM}))?"
        rf"(?:(?P<qsp>\s?)(?P<qu>{_UNIT_RE}))?{_END}",
    ),
    ("roman_keyword", rf"(?<!\w)(?:{_ROMAN_KEYWORDS})\s+(?P<rk>[IVXLC]+)(?![\w'’-])"),
    ("roman_name", rf"(?<!\w)(?:{_REGNAL_NAMES})\s+(?P<rn>[IVX]+)(?![\w'’-])"),
    ("roman_generic", r"(?<!\w)[A-Z][a-z]+\s+(?P<rg>II|III)(?![\w'’-])"),
    (
        "title",
        rf"(?<![\w.])(?P<tt>{'|'.join(_TITLES)})\.(?=\s+[A-Z])"
        r"|(?<![\w.])(?P<tx>Mr|Mrs|Ms|Messrs)\.(?=\s)"
        r"|(?<![\w.])(?P<tn>Dr|Mr|Mrs|Ms|St)(?=\s+[A-Z][a-z])",
    ),
    (
        "abbrev",
        r"(?<![\w.])(?P<ab>"
        + "|".join(re.escape(a) for a in sorted(_ABBREVIATIONS, key=len, reverse=True))
        + r")\.|(?<![\w.])(?P<vs>vs)(?!\w)",
    ),
    ("symbol", r"&|@|#(?=[0-9])|\+|=|(?<=[A-Za-z])/(?=[A-Za-z])"),
]
_ALTERNATION = "|".join(f"(?P<{name}>{pattern})" for name, pattern in _ALTERNATIVES)
# Every alternative starts at a character that is not whitespace and either follows no word character
# or is itself no word character (a symbol, a sign, a currency) or a vulgar fraction ("3½": the "½"
# follows a digit). Saying so first changes no match, but lets the regex engine pass over the inside
# of a word with one test instead of trying all the alternatives at every letter: the Rainbow
# passage's scan took 0.9 ms against 0.54 with it (normalisation runs before the GPU can start).
_STARTS = rf"(?=\S)(?:(?<!\w)|(?=\W|{_VULGAR}))"
_MASTER = re.compile(f"{_STARTS}(?:{_ALTERNATION})")
_SENTENCE_NEXT = re.compile(r"\s*$|\s+[\"'“‘(\[]*[A-Z]")
_SPACE = re.compile(r"\s+")


def _ends_sentence(text: str, end: int) -> bool:
    """Whether a sentence may end at `end`: the text ends there or the next word is capitalised."""
    return _SENTENCE_NEXT.match(text, end) is not None


def _stop(text: str, m: re.Match, words: str) -> str:
    """Words for a token that ends with an abbreviation period which may also end the sentence."""
    return words + "." if _ends_sentence(text, m.end()) else words


# ---------------------------------------------------------------------------------------------------------
# Handlers: (text, match) -> replacement words, a list of (start, end, words) pieces, or None (leave alone)

Result = str | list[tuple[int, int, str]] | None


def _h_address(text: str, m: re.Match) -> Result:
    return _spell_address(m.group())


def _date_words(y: int | None, mo: int, d: int, day_first: bool = False) -> str | None:
    if not 1 <= mo <= 12 or not 1 <= d <= 31:
        return None
    month = _MONTHS[mo - 1]
    words = f"the {ordinal(d)} of {month}" if day_first else f"{month} {ordinal(d)}"
    return words if y is None else f"{words}, {year(y)}"


def _h_iso_date(text: str, m: re.Match) -> Result:
    return _date_words(int(m["iy"]), int(m["im"]), int(m["id"]))


def _h_slash_date(text: str, m: re.Match) -> Result:
    a, b, y = int(m["sa"]), int(m["sb"]), int(m["sy"])
    if a > 12 and b <= 12:
        return _date_words(y, b, a)
    if b > 12 and a <= 12:
        return _date_words(y, a, b)
    if a <= 12 and b <= 12:
        sep = " slash " if m["ss"] == "/" else " dot "
        return sep.join(
            (_int_words(m["sa"].lstrip("0") or "0"), _int_words(m["sb"].lstrip("0") or "0"), year(y))
        )
    return None


def _h_month_date(text: str, m: re.Match) -> Result:
    words = _date_words(int(m["my"]) if m["my"] else None, _month(m["mm"]), int(m["md"]))
    if words and m["md2"]:
        d2 = int(m["md2"])
        if not int(m["md"]) < d2 <= 31:
            return None
        month_day, comma, rest = words.partition(",")
        words = f"{month_day} to {ordinal(d2)}{comma}{rest}"
    return words


def _h_day_month(text: str, m: re.Match) -> Result:
    words = _date_words(int(m["dy"]) if m["dy"] else None, _month(m["dm"]), int(m["dd"]), day_first=True)
    if words and m["ddot"] and not m["dy"]:
        return _stop(text, m, words)
    return words


def _h_phone(text: str, m: re.Match) -> Result:
    groups = re.findall(r"[0-9]+", m.group())
    return ", ".join(_digits(g) for g in groups)


def _ampm(token: str) -> str:
    return token[0].lower() + " m"


def _h_time(text: str, m: re.Match) -> Result:
    h, mi = int(m["th"]), int(m["tm"])
    if h > 24 or (m["tap"] and not 1 <= h <= 12):
        return None
    hour = _ONES[h] if h < 20 else _under_100(h)
    if mi == 0:
        words = hour + (" hundred" if (h > 12 or h == 0) and not m["tap"] else "")
        if not m["tap"] and h <= 12 and h != 0:
            words += " o'clock"
    elif mi < 10:
        words = f"{hour} oh {_ONES[mi]}"
    else:
        words = f"{hour} {_under_100(mi)}"
    if m["ts"]:
        s = int(m["ts"])
        words += f" and {cardinal(s)} second{'s' if s != 1 else ''}"
    if m["tap"]:
        words += " " + _ampm(m["tap"])
        if m["tap"].endswith("."):
            return _stop(text, m, words)
    return words


def _h_hour_ampm(text: str, m: re.Match) -> Result:
    h = int(m["hh"])
    if not 1 <= h <= 12:
        return None
    words = f"{_ONES[h]} {_ampm(m['hap'])}"
    return _stop(text, m, words) if m["hap"].endswith(".") else words


def _h_money(text: str, m: re.Match) -> Result:
    one, many, minor_one, minor_many = _CURRENCY[m["csym"]]
    a, b, scale = m["ca"], m["cb"], m["csc"]
    if scale and len(scale) == 1 and m["csp"]:
        return None  # "$5 M": not clearly a scale
    sign = "minus " if m["cneg"] else ""
    if scale or b:
        amount = _number_words(a) + (" to " + _number_words(b) if b else "")
        if scale:
            return f"{sign}{amount} {_SCALE_WORDS[scale]} {many}"
        return f"{sign}{amount} {many}"
    whole, _, cents = a.partition(".")
    if cents and (len(cents) != 2 or not minor_one):
        return f"{sign}{_number_words(a)} {many}"
    major = int(whole.replace(",", "") or "0") if len(whole) <= 24 else -1
    c = int(cents) if cents else 0
    if major < 0:
        return f"{sign}{_number_words(a)} {many}"
    parts = []
    if major or not c:
        parts.append(f"{_int_words(whole) or 'zero'} {one if major == 1 else many}")
    if c:
        parts.append(f"{cardinal(c)} {minor_one if c == 1 else minor_many}")
    return sign + " and ".join(parts)


def _h_decade(text: str, m: re.Match) -> Result:
    digits = m["da"] or m["db"]
    n = int(digits)
    words = _under_100(n) if n < 100 else year(n)
    return _pluralize(words)


def _h_ordinal(text: str, m: re.Match) -> Result:
    s = m["on"].replace(",", "")
    if len(s) > 18 or (len(s) > 1 and s[0] == "0"):
        return None
    return ordinal(int(s))


def _fraction_words(n: str, d: str, mixed: bool) -> str | None:
    if len(n) > 18 or len(d) > 18:
        return None
    num, den = int(n), int(d)
    if den not in _FRACTION_DENOMINATORS:
        return None
    if den == 2:
        unit = "half" if num == 1 else "halves"
    elif den == 4:
        unit = "quarter" if num == 1 else "quarters"
    else:
        unit = ordinal(den) if num == 1 else _pluralize(ordinal(den))
    if mixed and num == 1:
        return "a " + unit
    return f"{cardinal(num)} {unit}"


def _h_fraction(text: str, m: re.Match) -> Result:
    n, d, w, unit = m["fn"], m["fd"], m["fw"], m["fu"]
    end = m.end()
    if unit and (unit in _ATTACHED_ONLY and m["fsp"] or unit in _SCALE_WORDS):
        unit, end = None, m.start("fsp")
    if (n, d) in _SAYINGS and not w and not unit:
        return [(m.start(), end, _SAYINGS[n, d])]
    words = _fraction_words(n, d, bool(w))
    if words is None:
        plain = f"{_int_words(n)} slash {_int_words(d)}"
        if unit:
            plain += " " + _UNITS[_unit_key(unit)][1]
        if w:
            return [(m.start("fw"), m.end("fw"), _int_words(w)), (m.start("fn"), end, plain)]
        return [(m.start(), end, plain)]
    words = f"{_int_words(w)} and {words}" if w else words
    return [(m.start(), end, _with_fraction_unit(words, unit, bool(w)))]


def _unit_key(unit: str) -> str:
    return unit.replace(" ", "") if unit.startswith("°") else unit


def _with_fraction_unit(words: str, unit: str | None, mixed: bool) -> str:
    """ "two and a half" + lb -> "two and a half pounds"; "three quarters" + mi -> "three quarters of a
    mile"."""
    if not unit:
        return words
    singular, plural = _UNITS[_unit_key(unit)]
    if mixed or unit == "%":
        return f"{words} {plural}"
    article = "an" if singular[0] in "aeiou" else "a"
    return f"{words} of {article} {singular}"


def _h_ufraction(text: str, m: re.Match) -> Result:
    n, d = _FRACTIONS[m["uc"]]
    words = _fraction_words(str(n), str(d), bool(m["uw"]))
    return f"{_int_words(m['uw'])} and {words}" if m["uw"] else words


def _h_number(text: str, m: re.Match) -> Result:
    a, b, unit = m["qa"], m["qb"], m["qu"]
    if unit and m["qsp"] and unit in _ATTACHED_ONLY:
        unit = None
        end = m.start("qsp")
    else:
        end = m.end()
    sign = "minus " if m["qneg"] else ""
    plain_year = a.isdigit() and len(a) == 4 and 1100 <= int(a) <= 2099
    if b:
        if (
            plain_year
            and b.isdigit()
            and (len(b) == 4 and 1100 <= int(b) <= 2099 or len(b) == 2)
            and not sign
        ):
            second = (
                year(int(b))
                if len(b) == 4
                else (_under_100(int(b)) if b[0] != "0" else "oh " + _ONES[int(b)])
            )
            words = f"{year(int(a))} to {second}"
        else:
            words = f"{sign}{_number_words(a)} to {_number_words(b)}"
    elif plain_year and not unit and not sign:
        words = year(int(a))
    else:
        words = sign + _number_words(a)
    if unit:
        singular, plural = _UNITS[_unit_key(unit)]
        words += " " + (singular if _is_one(a) and not b else plural)
    return words if end == m.end() else [(m.start(), end, words)]


def _h_roman_keyword(text: str, m: re.Match) -> Result:
    n = _roman(m["rk"])
    if not n:
        return None
    return [(m.start("rk"), m.end("rk"), cardinal(n))]


def _h_roman_name(text: str, m: re.Match) -> Result:
    n = _roman(m["rn"])
    if n < 2 or m["rn"] == "X":
        return None
    return [(m.start("rn"), m.end("rn"), "the " + ordinal(n).title())]


def _h_roman_generic(text: str, m: re.Match) -> Result:
    return [(m.start("rg"), m.end("rg"), "the " + ordinal(_roman(m["rg"])).title())]


_CAPITALISED_BEFORE = re.compile(r"(?:^|[^\w.])[A-Z][a-z]+\s+$")


def _capitalised_before(text: str, start: int) -> bool:
    return _CAPITALISED_BEFORE.search(text, max(0, start - 40), start) is not None


def _h_title(text: str, m: re.Match) -> Result:
    if m["tx"]:
        return _TITLES.get(m["tx"], "Messieurs")
    t = m["tt"] or m["tn"]
    if t in ("St", "Dr") and _capitalised_before(text, m.start()):
        # "Main St. Then", "Elm Dr. Later": a street name, which may end the sentence
        return _stop(text, m, _ABBREVIATIONS[t][0]) if m["tt"] else None
    return _TITLES[t]


def _h_abbrev(text: str, m: re.Match) -> Result:
    if m["vs"]:
        return "versus"
    words, may_end, needs_number = _ABBREVIATIONS[m["ab"]]
    if needs_number:
        if not re.match(r"\s*[0-9]", text[m.end() : m.end() + 8]):
            return None
        return words
    if m["ab"] in ("St", "Dr") and not _capitalised_before(text, m.start()):
        return None
    return _stop(text, m, words) if may_end else words


_SYMBOL_WORDS = {"&": "and", "@": "at", "#": "number", "+": "plus", "=": "equals", "/": "slash"}


def _h_symbol(text: str, m: re.Match) -> Result:
    return _SYMBOL_WORDS[m.group()]


_HANDLERS = {
    "url": _h_address,
    "email": _h_address,
    "domain": _h_address,
    "iso_date": _h_iso_date,
    "slash_date": _h_slash_date,
    "month_date": _h_month_date,
    "day_month": _h_day_month,
    "phone": _h_phone,
    "time": _h_time,
    "hour_ampm": _h_hour_ampm,
    "money": _h_money,
    "decade": _h_decade,
    "ordinal": _h_ordinal,
    "fraction": _h_fraction,
    "ufraction": _h_ufraction,
    "number": _h_number,
    "roman_keyword": _h_roman_keyword,
    "roman_name": _h_roman_name,
    "roman_generic": _h_roman_generic,
    "title": _h_title,
    "abbrev": _h_abbrev,
    "symbol": _h_symbol,
}
assert set(_HANDLERS) == {name for name, _ in _ALTERNATIVES}


def normalize(text: str) -> Normalized:
    """Rewrite written tokens of `text` as spoken English words; see the module docstring for the rules."""
    out: list[str] = []
    spans: list[tuple[int, int, int, int]] = []
    pos = 0  # next unread character of `text`
    npos = 0  # length of the output so far
    last = ""  # last character written
    for m in _MASTER.finditer(text):
        result = _HANDLERS[m.lastgroup](text, m)
        if result is None:
            continue
        pieces = [(m.start(), m.end(), result)] if isinstance(result, str) else result
        for start, end, words in pieces:
            if start < pos or not words:
                continue
            if start > pos:
                chunk = text[pos:start]
                out.append(chunk)
                npos += len(chunk)
                last = chunk[-1]
            if last.isalnum() and words[0].isalnum():
                words = " " + words
            if end < len(text) and text[end].isalnum() and words[-1].isalnum():
                words += " "
            out.append(words)
            spans.append((npos, npos + len(words), start, end))
            npos += len(words)
            last = words[-1]
            pos = end
    out.append(text[pos:])
    return Normalized("".join(out), spans)
