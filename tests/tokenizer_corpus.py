"""A hostile, deterministic text corpus for tokenizer parity tests.

`build_corpus()` returns a few thousand strings built from a seeded `random.Random` and from text found on
this machine (all optional, read in sorted order): Unicode characters sampled from every 128-code-point
block that `unicodedata` knows, plus code points it does not know yet; locale names from
`/usr/share/i18n/locales` (every script glibc ships); CPython's `test/cjkencodings/*-utf8.txt`; docstrings
of the standard library. On top of that: emoji (ZWJ sequences, skin tones, flags, keycaps), combining mark
pile-ups in every order, Hangul jamo, control characters and NUL, every kind of Unicode space and line
break, runs of spaces and newlines, numbers, punctuation soup, the tokenizer's own special tokens, byte
pieces and metaspace characters inside text, several 10,000-character texts, and the empty string.

`LONE_SURROGATES` holds strings that cannot be encoded to UTF-8 (kept apart: `tokenizers` refuses them).
"""

from __future__ import annotations

import ast
import glob
import os
import random
import re
import sys
import sysconfig
import unicodedata

SPECIAL_TOKENS = ["<|audio_bos|>", "<|audio_prompt|>", "<|audio_latent|>", "<pad>", "<unk>", "<s>", "</s>"]

EMOJI = [
    "😀", "👍", "👍🏻", "👍🏿", "👩‍💻", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇫🇷", "🇯🇵", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "1️⃣", "#️⃣", "❤️", "❤", "🧑🏽‍🚀",
    "👩🏾‍❤️‍💋‍👨🏻", "🤷‍♀️", "☃", "✈️", "🫠", "🥹", "🐈‍⬛", "🧔‍♂️", "👁️‍🗨️", "🫱🏼‍🫲🏾", "©", "™", "🀄", "🃏",
]  # fmt: skip

SPACES = [
    " ", "\t", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x85", "\xa0", "\u1680", "\u2000", "\u2003", "\u2007",
    "\u200a", "\u200b", "\u200c", "\u200d", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff",
    "\x1c", "\x1d", "\x1e", "\x1f", "\u180e", "\u2060",
]  # fmt: skip

PUNCT = list(".,!?;:'\"-()[]{}<>/\\|@#$%^&*_+=~`") + [
    "…", "—", "–", "‐", "−", "“", "”", "„", "‘", "’", "‚", "«", "»", "‹", "›", "¿", "¡", "·", "•", "†",
    "‰", "′", "″", "、", "。", "「", "」", "『", "』", "【", "】", "〈", "〉", "《", "》", "！", "？", "，",
    "．", "：", "；", "（", "）", "＂", "＇", "﹘", "﹣", "－", "⁇", "⁈", "‼", "⸮", "؟", "،", "।", "॥",
]  # fmt: skip

WORDS = (
    "the of and to in is was for on that with as by at from it an be this which or are have not but had "
    "his they you were her she there been one all we their has would when if so no will more can out "
    "Dr. Mr. Mrs. St. etc. e.g. i.e. vs. U.S.A. Ph.D. a.m. p.m. don't can't it's we're I'm y'all "
    "naïve café résumé coöperate Zürich São Paulo Øresund Łódź İstanbul ΟΔΟΣ Σίσυφος straße STRASSE "
    "ﬁnance ﬂour Ⅻ ½ ² ℃ ㎏ ｆｕｌｌｗｉｄｔｈ ｶﾀｶﾅ 𝐛𝐨𝐥𝐝 ℌ"
).split()

COMBINING = [chr(c) for c in range(0x300, 0x370)] + [
    "\u0483", "\u0591", "\u05b0", "\u05c4", "\u0610", "\u064b", "\u0651", "\u0670", "\u093c", "\u094d",
    "\u0e48", "\u0f71", "\u0f72", "\u0f74", "\u0f80", "\u1ab0", "\u1dc0", "\u20d0", "\u20e3", "\u302a",
    "\u3099", "\u309a", "\ufe20", "\U0001d165", "\U0001d16e", "\U000e0100", "\ufe0f", "\u0345", "\u0338",
    "\u08d3", "\u1abf", "\U00011c3f", "\U0001e944", "\U00016ff0", "\u0bbe", "\u0bd7", "\u0cd5", "\u0d3e",
    "\u0b3e", "\u102e", "\U000110ba", "\U00011127", "\U0001133e", "\U00011357", "\U000114b0",
    "\U000115af", "\U00011930",
]  # fmt: skip

# Characters that Unicode 9.0 did not know and that later versions decompose, compose or reorder, or that
# Python 3.11 does not know at all (assigned in Unicode 15-17).
NEWER = [
    "\U00011938", "\U00011935\U00011930", "\u32ff", "\ua7f2", "\ua7f3", "\uab69", "\U00010781",
    "\U0001e030", "\U0001fbf0", "\U0001fbf9", "\u1c89", "\ua7cb", "\ua7cc", "\ua7dc", "\U00010d50",
    "\U00016ea0", "\U00016d63\U00016d67", "\U00016d68", "\U00011383", "\U0001e4ec", "\U0001e5ee", "\u0897",
    "\u1ac1", "\u2c2f", "\ua7c0", "\U0001f6dd", "\U0001fae8", "\U00031350", "\U0002ebf0",
]  # fmt: skip


def _unicode_blocks(rng: random.Random) -> list[str]:
    """Strings of characters sampled from each 128-code-point block that has assigned characters."""
    out = []
    for block in range(0, 0x110000, 128):
        chars = []
        for cp in range(block, block + 128):
            if 0xD800 <= cp < 0xE000:
                continue
            cat = unicodedata.category(chr(cp))
            if cat != "Cn":
                chars.append(chr(cp))
        if not chars:
            continue
        if block >= 0x20000 and block % 0x1000 and block < 0xE0000:
            continue  # the big CJK/plane-2/3 blocks look alike: keep one block in 32
        k = min(len(chars), rng.randint(1, 24))
        sample = rng.sample(chars, k)
        joiner = rng.choice(["", "", " ", "  ", "\n"])
        out.append(joiner.join(sample))
    return out


def _unassigned(rng: random.Random) -> list[str]:
    """Code points this Python does not know (some are assigned in the Unicode that Rust uses)."""
    pool = [
        cp
        for cp in range(0, 0x40000, 7)
        if not 0xD800 <= cp < 0xE000 and unicodedata.category(chr(cp)) == "Cn"
    ]
    out = []
    for _ in range(40):
        cps = rng.sample(pool, rng.randint(1, 6))
        out.append("".join(chr(c) for c in cps) + rng.choice(["", "a", " b", "\u0301"]))
    return out


_LOCALE_STRING = re.compile(r'"((?:<U[0-9A-Fa-f]{4,8}>)+)"')
_LOCALE_CHAR = re.compile(r"<U([0-9A-Fa-f]{4,8})>")


def _locale_strings(rng: random.Random, limit: int = 500) -> list[str]:
    """Day, month and other names from glibc's locale sources (every script it ships)."""
    files = sorted(glob.glob("/usr/share/i18n/locales/*"))
    found: list[str] = []
    for path in files:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        names = []
        for m in _LOCALE_STRING.finditer(text):
            s = "".join(chr(int(h, 16)) for h in _LOCALE_CHAR.findall(m.group(1)))
            if any(ord(c) > 0x7F for c in s) and not any(0xD800 <= ord(c) < 0xE000 for c in s):
                names.append(s)
        if names:
            pick = rng.sample(names, min(len(names), 3))
            found.append(" ".join(pick))
    rng.shuffle(found)
    return found[:limit]


def _cjk_test_texts() -> list[str]:
    base = os.path.join(sysconfig.get_paths()["stdlib"], "test", "cjkencodings")
    out = []
    for path in sorted(glob.glob(os.path.join(base, "*-utf8.txt"))):
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError):
            continue
        out += [line for line in text.splitlines() if line.strip()][:6]
    return out


def _docstrings(limit_chars: int = 60_000) -> list[str]:
    """English paragraphs (stdlib docstrings, modules in sorted order)."""
    stdlib = sysconfig.get_paths()["stdlib"]
    out: list[str] = []
    total = 0
    for name in sorted(os.listdir(stdlib))[::5]:
        if not name.endswith(".py"):
            continue
        try:
            with open(os.path.join(stdlib, name), encoding="utf-8") as f:
                tree = ast.parse(f.read())
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
        doc = ast.get_docstring(tree)
        if doc:
            for paragraph in doc.split("\n\n"):
                out.append(paragraph)
                total += len(paragraph)
        if total > limit_chars:
            break
    return out


def _english_long(paragraphs: list[str], n: int) -> str:
    text = " ".join(paragraphs)
    while len(text) < n:
        text = text + " " + text
    return text[:n]


def _mark_pileups(rng: random.Random) -> list[str]:
    bases = ["a", "e", "i", "o", "u", "A", "E", "n", "c", "s", "z", "ω", "α", "и", "ю", "ᄀ", "가", "ㄱ",
             "क", "ক", "த", "ಕ", "ക", "ଓ", "ေ", "𑄱", "𑍇", "𑒹", "𑖸", "1", " ", "", "\u0301",
             "Å", "ǰ", "ẛ"]  # fmt: skip
    out = []
    for _ in range(220):
        s = ""
        for _ in range(rng.randint(1, 4)):
            s += rng.choice(bases) + "".join(rng.choice(COMBINING) for _ in range(rng.randint(0, 4)))
        out.append(s)
    # Hangul jamo sequences, composable or not
    for _ in range(30):
        s = ""
        for _ in range(rng.randint(1, 5)):
            s += chr(rng.randint(0x1100, 0x1112)) + chr(rng.randint(0x1161, 0x1175))
            if rng.random() < 0.5:
                s += chr(rng.randint(0x11A8, 0x11C2))
            if rng.random() < 0.2:
                s += chr(rng.randint(0xAC00, 0xD7A3))
        out.append(s)
    return out


def _soup(rng: random.Random, alphabet: list[str], n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def build_corpus(seed: int = 1234) -> list[str]:
    rng = random.Random(seed)
    paragraphs = _docstrings()
    corpus: list[str] = ["", " ", "  ", "\n", ".", "a", "A", "▁", "▁▁", " ▁", "▁ ", "<", ">", "|", "\x00"]

    # Plain English, as is and perturbed
    corpus += paragraphs[:300]
    for p in paragraphs[300:500]:
        words = p.split()
        rng.shuffle(words)
        corpus.append(" ".join(words[:30]))

    sentences = [
        "Hello, world!", "Hello world", "hello world.", "  Hello world  ", "Hello (world)!",
        "Hi [there] {you}.", "Wait... what?!", "Wait.... what??? No!!!", "It costs $5.99 (approx. 5%).",
        "Call me @ 555-1234 #2.", "Tom & Jerry + friends", "snake_case and kebab-case ~ tilde",
        "“Smart quotes” and ‘single ones’", "A—dash – and ‒ more ― dashes − minus", "ellipsis… here",
        "trailing comma,", "leading, comma", ", , ,leading commas", "trailing spaces and commas , , ",
        "(((nested (brackets))))", "a , b , c ; d : e", "tab\tseparated\tvalues",
        "line\nbreaks\n\nand\r\nCRLF",
        "no final punctuation", "question?", "exclamation!", "ends with ellipsis...", "ends with space. ",
        "  ", "\t\n", "...", "!?", "?!", "1,234,567.89", "3.14159", "-42", "+1 (555) 010-9999", "1/2 ½ 3⁄4",
        "10:30 a.m.", "2024-01-01T00:00:00Z", "Ⅻ o'clock", "x²+y²=z²", "H₂O", "℃ and ℉", "№ 5", "ﬁne ﬂow",
        "ＡＢＣ１２３", "ｈｅｌｌｏ　ｗｏｒｌｄ", "ǅungla", "İstanbul ISTANBUL ıi", "ΣΊΣΥΦΟΣ ΟΔΟΣ Σ",
        "straße STRASSE ẞ", "Ǆ ǅ ǆ", "ﬀ ﬃ ﬄ ﬅ ﬆ",
    ]  # fmt: skip
    corpus += sentences

    # Special tokens, byte pieces and other pieces inside text
    fragments = SPECIAL_TOKENS + [
        "<|audio_bos", "audio_bos|>", "<|audio_bos|", "<<|audio_bos|>>", "<|AUDIO_BOS|>", "< |audio_bos| >",
        "<0x41>", "<0x00>", "<0xFF>", "<0xZZ>", "<0x4>", "<0x+F>", "▁", "▁▁▁", "<unk><unk>", "</s></s>",
    ]  # fmt: skip
    for _ in range(200):
        parts = []
        for _ in range(rng.randint(1, 6)):
            r = rng.random()
            if r < 0.4:
                parts.append(rng.choice(fragments))
            elif r < 0.7:
                parts.append(rng.choice(WORDS))
            elif r < 0.85:
                parts.append(rng.choice(SPACES))
            else:
                parts.append(rng.choice(PUNCT))
        corpus.append(rng.choice(["", " ", ""]).join(parts))

    # Unicode from everywhere
    corpus += _unicode_blocks(rng)
    corpus += _unassigned(rng)
    corpus += NEWER
    corpus += [rng.choice(["", "a", " ", "é"]) + c + rng.choice(["", "b", "\u0301", " "]) for c in NEWER]
    corpus += _locale_strings(rng)
    corpus += _cjk_test_texts()

    # Emoji
    for _ in range(120):
        corpus.append(
            " ".join(
                rng.choice(EMOJI) * rng.randint(1, 3) + rng.choice(["", "!", " wow", ".", "\u200d"])
                for _ in range(rng.randint(1, 4))
            )
        )

    # Combining marks and jamo
    corpus += _mark_pileups(rng)

    # Control characters, NUL, odd whitespace, runs of spaces and newlines
    controls = [chr(c) for c in list(range(0, 32)) + list(range(0x7F, 0xA0))]
    for _ in range(150):
        corpus.append(
            _soup(
                rng, controls + SPACES + ["a", "b", "Z", ".", ",", " ", "  "] + WORDS[:20], rng.randint(1, 25)
            )
        )
    for n in (1, 2, 3, 5, 8, 17, 64):
        corpus += [" " * n, "\n" * n, "a" + " " * n + "b", " " * n + "word" + " " * n, "\u3000" * n + "x"]
        corpus += ["\t" * n + "x", "\xa0" * n, "x" + "\r\n" * n + "y", "," * n + "a", "a" + "." * n]

    # Numbers and punctuation soup
    for _ in range(150):
        corpus.append(_soup(rng, list("0123456789") + PUNCT + [" "], rng.randint(1, 30)))
    for _ in range(80):
        corpus.append(str(rng.randint(-(10**12), 10**12)) + rng.choice(["", ".", ",5", "e10", "%", " km"]))

    # Mixed everything
    everything = (
        [c for s in corpus[:2000] for c in s[:3]] + EMOJI + SPACES + PUNCT + COMBINING + WORDS + fragments
    )
    for _ in range(300):
        corpus.append(_soup(rng, everything, rng.randint(1, 40)))

    # Very long texts
    corpus.append(_english_long(paragraphs, 10_000))
    corpus.append(_english_long(paragraphs[::-1], 10_000).upper())
    corpus.append(_soup(rng, everything, 10_000))
    corpus.append(_soup(rng, WORDS + [" "] * 10 + PUNCT, 4_000)[:10_000])
    corpus.append("a" * 10_000)
    corpus.append(" " * 10_000)
    corpus.append(("word " * 2_000)[:10_000])
    corpus.append("".join(rng.choice(COMBINING) for _ in range(3_000)))
    corpus.append(("<|audio_bos|>x " * 1000)[:10_000])
    corpus.append(("中文字符" * 2_500)[:10_000])
    return corpus


# Python strings that are not valid Unicode text (lone surrogates): UTF-8 cannot encode them.
LONE_SURROGATES = ["\ud800", "a\udfffb", "\udc80\udc80", "ok \ud83d then", "\ud83d" + "\ude00"[::-1]]


if __name__ == "__main__":  # pragma: no cover - manual inspection
    c = build_corpus()
    print(len(c), sum(map(len, c)), max(map(len, c)), file=sys.stderr)
