"""Parity of phonon_web's pure-Python tokenizer with the `tokenizers` library.

Every string of the hostile corpus (`tests/tokenizer_corpus.py`) must get exactly the ids `tokenizers` gives,
on the project's synthetic tokenizer and on three more tokenizer files built here with other normalizers,
Metaspace settings, added tokens, unknown-character paths and a post-processor. Smaller tests pin the
pieces that had to be copied from the library: Oniguruma regexes, Unicode normalization with Unicode 9.0
data, `prepend_scheme: "first"` offsets, serde_json's float parsing, decoders, and refusals.
"""

from __future__ import annotations

import json
import random
import struct

import pytest

tokenizers = pytest.importorskip("tokenizers")

from tokenizers import AddedToken, Regex, decoders, models, normalizers, pre_tokenizers, processors  # noqa: E402

from phonon_web.errors import TextError, TokenizerError, UnsupportedTokenizerComponent  # noqa: E402
from phonon_web.tokenizer import Tokenizer  # noqa: E402
from phonon_web.tokenizer.json_numbers import _serde_f64  # noqa: E402
from phonon_web.tokenizer.normalizers import _build_normalizer  # noqa: E402
from phonon_web.tokenizer.unicode_normalization import _crate_normalize  # noqa: E402

from .reference.make_tokenizer import BYTE_PIECES, REQUIRED_PIECES, SPECIAL_PIECES, build_tokenizer_json  # noqa: E402
from .tokenizer_corpus import LONE_SURROGATES, build_corpus  # noqa: E402

HF = tokenizers.Tokenizer


# ----------------------------------------------------------------------------------------------------------
# Fixtures: each tokenizer file is built once per session


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    return build_corpus()


@pytest.fixture(scope="module")
def synthetic_json() -> str:
    return build_tokenizer_json()


def _vocab(synthetic_json: str) -> list[tuple[str, float]]:
    return [(p, float(s)) for p, s in json.loads(synthetic_json)["model"]["vocab"]]


@pytest.fixture(scope="module")
def lowercase_first_json(synthetic_json: str) -> str:
    """NFD + Lowercase + Strip + Prepend, Metaspace "first" without splitting, a template post-processor,
    added tokens of every kind, duplicate pieces and pieces spanning words."""
    vocab = _vocab(synthetic_json)
    lowered = [(p.lower(), s) for p, s in vocab[263:]]  # duplicates on purpose: the last one wins
    extra = [
        ("▁of▁the", -6.0),
        ("▁in▁the", -6.5),
        (".▁", -4.0),
        ("e\u0301", -7.0),
        ("▁▁", -5.0),
        ("▁é", -8.0),
    ]
    tok = HF(models.Unigram(vocab[:263] + lowered + extra, unk_id=0, byte_fallback=True))
    tok.normalizer = normalizers.Sequence(
        [normalizers.NFD(), normalizers.Lowercase(), normalizers.Strip(), normalizers.Prepend("▁")]
    )
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=False)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> $B </s>", special_tokens=[("<s>", 1), ("</s>", 2)]
    )
    tok.decoder = decoders.Sequence(
        [
            decoders.ByteFallback(),
            decoders.Metaspace(replacement="▁", prepend_scheme="first"),
            decoders.Fuse(),
        ]
    )
    tok.add_special_tokens(
        [AddedToken(t, special=True, normalized=False) for t in ["<|audio_bos|>", "<|audio_prompt|>"]]
    )
    tok.add_tokens(
        [
            AddedToken("[MASK]", special=True, normalized=False, lstrip=True, rstrip=True),
            AddedToken("ok", single_word=True, normalized=False),
            AddedToken("Hello World", normalized=True),
            AddedToken("naïve", normalized=True),
            AddedToken("<|audio_latent|>", special=False, normalized=True),
            AddedToken("zzz", special=False, normalized=False, rstrip=True),
        ]
    )
    return tok.to_str()


C_RULES = [  # transform-free rules after NFKD + Lowercase (tokenizers mis-aligns the other way round)
    ("re", r"^", ">"),
    ("re", r"$", "<"),
    ("re", r"(?m)a.b", "ab"),
    ("re", r"\s+", " "),
    ("re", r"(?<=\d)(?=[a-z])", " "),
    ("re", r"\bthe\b", "THE"),
    ("re", r"q*", "~"),
    ("re", r"\p{P}+", ","),
    ("re", r"[^\w\s,~<>]", ""),
    ("re", r"\d{2,}?", "#"),
    ("re", r"(?:ab|a)c?", "A"),
    ("re", r"\A\s*", ""),
    ("re", r"[xX]", "ks"),
    ("re", r"\Z", "!"),
    ("str", "", ""),
    ("str", "oo", "o"),
    ("re", r"[\u00C0-\u00FF\u0100-\u017F]", "?"),
    ("re", r"(?<![a-z])y", "why"),
    ("re", r"\w{20,}", "long"),
]


@pytest.fixture(scope="module")
def unknown_first_json(synthetic_json: str) -> str:
    """NFKD + Lowercase + Oniguruma regex Replaces, no byte fallback (unknowns fuse into <unk>), a Split
    before Metaspace "first" with splitting."""
    vocab = _vocab(synthetic_json)
    keep = [(p, s) for p, s in vocab[263:] if all(c.isascii() or c == "▁" for c in p)]
    tok = HF(models.Unigram(vocab[:7] + keep, unk_id=0, byte_fallback=False))
    rules: list = [normalizers.NFKD(), normalizers.Lowercase()]
    for kind, pattern, content in C_RULES:
        rules.append(normalizers.Replace(Regex(pattern) if kind == "re" else pattern, content))
    tok.normalizer = normalizers.Sequence(rules)
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(r"\d+"), behavior="isolated"),
            pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=True),
        ]
    )
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.Strip(" ", 1, 0)])
    tok.add_special_tokens([AddedToken("<|audio_bos|>", special=True, normalized=False)])
    return tok.to_str()


@pytest.fixture(scope="module")
def no_unk_json(synthetic_json: str) -> str:
    """NFC, WhitespaceSplit then Split(merged with next), no unk id: some texts cannot be encoded at all."""
    vocab = _vocab(synthetic_json)
    pieces = {}
    for p, s in vocab[7:]:
        p = p.replace("▁", "")
        if p and p not in pieces:
            pieces[p] = s
    for c in map(chr, range(33, 127)):
        pieces.setdefault(c, -20.0)
    tok = HF(models.Unigram(list(pieces.items()), unk_id=None, byte_fallback=True))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Split("-", behavior="merged_with_next")]
    )
    tok.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Fuse()])
    return tok.to_str()


TOKENIZER_FIXTURES = ["synthetic_json", "lowercase_first_json", "unknown_first_json", "no_unk_json"]


def _hf_ids(hf, text: str):
    try:
        return hf.encode(text).ids
    except BaseException as exc:  # pyo3's PanicException is a BaseException
        if isinstance(exc, KeyboardInterrupt):
            raise
        return "error"


def _our_ids(ours: Tokenizer, text: str):
    try:
        return ours.encode(text)
    except (TextError, TokenizerError):
        return "error"


# ----------------------------------------------------------------------------------------------------------
# The synthetic tokenizer itself


def test_synthetic_tokenizer_layout(synthetic_json):
    data = json.loads(synthetic_json)
    vocab = data["model"]["vocab"]
    assert len(vocab) == 4001
    assert [p for p, _ in vocab[:7]] == SPECIAL_PIECES
    assert [p for p, _ in vocab[7:263]] == BYTE_PIECES
    assert data["model"]["unk_id"] == 0 and data["model"]["byte_fallback"] is True
    assert [(t["id"], t["content"], t["special"]) for t in data["added_tokens"]] == [
        (3, "<pad>", True),
        (4, "<|audio_bos|>", True),
        (5, "<|audio_prompt|>", True),
        (6, "<|audio_latent|>", True),
    ]
    assert data["normalizer"]["type"] == "Sequence" and len(data["normalizer"]["normalizers"]) >= 20
    assert data["pre_tokenizer"] == {
        "type": "Metaspace",
        "replacement": "▁",
        "prepend_scheme": "always",
        "split": True,
    }
    pieces = {p for p, _ in vocab}
    for piece in REQUIRED_PIECES:
        assert piece in pieces
    ours = Tokenizer.from_str(synthetic_json)
    assert ours.vocab_size == 4001 == HF.from_str(synthetic_json).get_vocab_size()
    for i, piece in enumerate(SPECIAL_PIECES + BYTE_PIECES):
        assert ours.token_to_id(piece) == i and ours.id_to_token(i) == piece


def test_synthetic_tokenizer_is_deterministic(synthetic_json):
    assert build_tokenizer_json() == synthetic_json


# ----------------------------------------------------------------------------------------------------------
# Parity on the corpus


def test_corpus_is_big_and_hostile(corpus):
    assert len(corpus) >= 2000
    assert "" in corpus
    assert sum(len(s) >= 10_000 for s in corpus) >= 4
    assert any("<|audio_bos|>" in s and len(s) > len("<|audio_bos|>") for s in corpus)
    assert any("\x00" in s for s in corpus) and any("\u200d" in s for s in corpus)
    assert build_corpus() == corpus


@pytest.mark.parametrize("fixture", TOKENIZER_FIXTURES)
def test_ids_match_tokenizers_on_corpus(fixture, corpus, request):
    text = request.getfixturevalue(fixture)
    hf = HF.from_str(text)
    ours = Tokenizer.from_str(text)
    mismatches = []
    for s in corpus:
        expected = _hf_ids(hf, s)
        got = _our_ids(ours, s)
        if expected != got:
            mismatches.append((s, expected, got))
    assert not mismatches, f"{len(mismatches)} mismatches, first: {mismatches[0]!r}"[:2000]
    if fixture == "no_unk_json":
        assert any(_hf_ids(hf, s) == "error" for s in corpus)  # the error path was exercised


@pytest.mark.parametrize("fixture", TOKENIZER_FIXTURES)
def test_pieces_and_decode_match_tokenizers(fixture, corpus, request):
    text = request.getfixturevalue(fixture)
    hf = HF.from_str(text)
    ours = Tokenizer.from_str(text)
    for s in corpus[::7]:
        try:
            enc = hf.encode(s)
        except Exception:
            continue
        assert ours.encode_pieces(s) == enc.tokens, s
        full = ours.encode_full(s)
        assert full.ids == enc.ids and full.pieces == enc.tokens
        assert ours.decode(enc.ids) == hf.decode(enc.ids), s
        assert ours.decode(enc.ids, skip_special_tokens=False) == hf.decode(
            enc.ids, skip_special_tokens=False
        )


@pytest.mark.parametrize("fixture", TOKENIZER_FIXTURES)
def test_decode_random_ids_matches_tokenizers(fixture, request):
    text = request.getfixturevalue(fixture)
    hf = HF.from_str(text)
    ours = Tokenizer.from_str(text)
    rng = random.Random(7)
    size = hf.get_vocab_size()
    for _ in range(400):
        n = rng.randint(0, 12)
        ids = [
            rng.choice([rng.randrange(size + 3), rng.randrange(7, 263), rng.randrange(7)]) for _ in range(n)
        ]
        assert ours.decode(ids) == hf.decode(ids), ids
        assert ours.decode(ids, skip_special_tokens=False) == hf.decode(ids, skip_special_tokens=False), ids
    for i in range(size + 2):
        assert ours.id_to_token(i) == hf.id_to_token(i)


def test_vocab_queries_match(lowercase_first_json):
    hf = HF.from_str(lowercase_first_json)
    ours = Tokenizer.from_str(lowercase_first_json)
    assert ours.vocab_size == hf.get_vocab_size()
    for piece in [
        "[MASK]",
        "ok",
        "Hello World",
        "naïve",
        "<|audio_latent|>",
        "zzz",
        "▁of▁the",
        "nope",
        "<s>",
    ]:
        assert ours.token_to_id(piece) == hf.token_to_id(piece), piece


# ----------------------------------------------------------------------------------------------------------
# Errors


def test_non_text_input_raises_text_error(synthetic_json):
    ours = Tokenizer.from_str(synthetic_json)
    for bad in [None, 3, b"bytes", ["list"]]:
        with pytest.raises(TextError):
            ours.encode(bad)  # type: ignore[arg-type]
    for bad_ids in [[1.5], ["a"], [-1], [2**40]]:
        with pytest.raises(TextError):
            ours.decode(bad_ids)


def test_lone_surrogates_raise_text_error(synthetic_json):
    hf = HF.from_str(synthetic_json)
    ours = Tokenizer.from_str(synthetic_json)
    for s in LONE_SURROGATES:
        with pytest.raises(Exception):  # noqa: B017 - tokenizers refuses them too (UnicodeEncodeError)
            hf.encode(s)
        with pytest.raises(TextError):
            ours.encode(s)


def _with(synthetic_json: str, **changes) -> str:
    data = json.loads(synthetic_json)
    data.update(changes)
    return json.dumps(data)


@pytest.mark.parametrize(
    "section,component,name",
    [
        ("normalizer", {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                        "strip_accents": None, "lowercase": True}, "BertNormalizer"),
        ("normalizer", {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Precompiled",
                        "precompiled_charsmap": ""}]}, "Precompiled"),
        ("pre_tokenizer", {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                           "use_regex": True}, "ByteLevel"),
        ("pre_tokenizer", {"type": "Sequence",
                           "pretokenizers": [{"type": "Digits", "individual_digits": True}]}, "Digits"),
        ("decoder", {"type": "WordPiece", "prefix": "##", "cleanup": True}, "WordPiece"),
        ("post_processor", {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 1],
                            "trim_offsets": True, "add_prefix_space": False}, "RobertaProcessing"),
        ("model", {"type": "BPE", "vocab": {}, "merges": []}, "BPE"),
    ],
)  # fmt: skip
def test_unsupported_component_is_named(synthetic_json, section, component, name):
    with pytest.raises(UnsupportedTokenizerComponent) as info:
        Tokenizer.from_str(_with(synthetic_json, **{section: component}))
    message = str(info.value)
    assert name in message and section in message and "not supported" in message


def test_unsupported_truncation_and_regex(synthetic_json):
    trunc = {"direction": "Right", "max_length": 8, "strategy": "LongestFirst", "stride": 0}
    with pytest.raises(UnsupportedTokenizerComponent, match="truncation"):
        Tokenizer.from_str(_with(synthetic_json, truncation=trunc))
    norm = {"type": "Replace", "pattern": {"Regex": "(?i)ss"}, "content": "s"}
    with pytest.raises(UnsupportedTokenizerComponent, match="case-insensitive"):
        Tokenizer.from_str(_with(synthetic_json, normalizer=norm))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json",
        "[]",
        '{"model": null}',
        '{"version": "2.0", "model": {"type": "Unigram", "vocab": []}}',
    ],
)
def test_malformed_files_raise_tokenizer_error(text):
    with pytest.raises(TokenizerError):
        Tokenizer.from_str(text)


def test_from_file(tmp_path, synthetic_json):
    path = tmp_path / "tokenizer.json"
    path.write_text(synthetic_json, encoding="utf-8")
    assert (
        Tokenizer.from_file(path).encode("Hello world!")
        == HF.from_str(synthetic_json).encode("Hello world!").ids
    )
    with pytest.raises(TokenizerError):
        Tokenizer.from_file(tmp_path / "missing.json")


# ----------------------------------------------------------------------------------------------------------
# Oniguruma regexes

REGEX_CASES = [
    r"^", r"$", r"\A", r"\z", r"\Z", r"^a|b$", r"(?m).", r".", r"(?m)a|.", r"(?:x(?m)|.)", r"(?m:.).",
    r"x*", r"a|", r"()", r"(?=a)", r"\b", r"\B", r"\bab\b", r"\w+", r"\W", r"\d+", r"\D", r"\s+", r"\S+",
    r"\h+", r"\H", r"\p{L}+", r"\p{Lu}", r"\P{L}", r"\p{^N}", r"\p{Punctuation}", r"[\p{P}\p{S}]+",
    r"[^\p{L}\s]", r"[a-z]+", r"[^a-z]", r"[]a]", r"[a-]", r"[-a]", r"[\-\]\\]", r"[\s\d]", r"[^\s]",
    r"[\x41-\x43]", r"[\u00e0-\u00ff]", r"\x{1F600}", r"\u00e9", r"\x41", r"\x4", r"\0", r"\t|\n",
    r"a{2}", r"a{2,}", r"a{,2}", r"a{1,2}?", r"a{2}?", r"a+?", r"a*+", r"a?+", r"a++b", r"(?>a+)b",
    r"(a)\1", r"(?<n>a)\k<n>", r"(?<=a)b", r"(?<!a)b", r"(?!a).", r"a{", r"x{ 2}", r"a{,}", r"{",
    r"(?#comment)a", r"\.", r"\/", r"\ ", r"#", r"a|b|c", r"(?:ab|a)c?", r"(a|ab)(c|bcd)(d*)",
    r"[\s\S]", r"\e|\a", r"[\b]", r"\w\b\W", r"(?<=\d)(?=[a-z])", r"\s*", r"\s*$",
    r"[&]", r"(?-m).", r"(?m-m).",
]  # fmt: skip

REGEX_TEXTS = [
    "", "a", "ab", "abc", "aab", "abab", "aaaa", "a\nb", "a\nb\n", "\n", "\n\n", "x y", "x{ 2}", "a{", "a{,}",
    "{", "ab cd", "Hello, World! 123", "naïve café ÉCOLE", "٣ 3 ² Ⅻ ⁀ _", "e\u0301 a\u0308", "ΑΒΓ αβγ",
    "tab\there", "\u3000 \xa0 \x1c \x85 \u2028", "😀 a😀b", "x*y", "abcbcd", "aaab", "1a2b33c", "\\/-]",
    "\x00\x07\x1b\x08", "#.#", "ABCDE", "àéîõü", "aaaaaaaaaa", " leading", "trailing ", "  both  ",
]  # fmt: skip


def test_regex_replace_matches_oniguruma():
    mismatches = []
    for pattern in REGEX_CASES:
        hf = normalizers.Replace(Regex(pattern), "<>")
        ours = _build_normalizer({"type": "Replace", "pattern": {"Regex": pattern}, "content": "<>"})
        for text in REGEX_TEXTS:
            expected = hf.normalize_str(text)
            got = ours.apply(text)
            if expected != got:
                mismatches.append((pattern, text, expected, got))
    assert not mismatches, mismatches[:10]


def test_regex_string_patterns_match():
    for pattern in ["", "a", ".", "a.b", "(", "\\", "$1", "▁", " ", "aa"]:
        hf = normalizers.Replace(pattern, "[$0]")
        ours = _build_normalizer({"type": "Replace", "pattern": {"String": pattern}, "content": "[$0]"})
        for text in REGEX_TEXTS:
            assert ours.apply(text) == hf.normalize_str(text), (pattern, text)


@pytest.mark.parametrize("pattern", [r"\w", r"\d", r"\s", r"\b", r"\p{L}", r"\p{P}", r"\p{So}", r"\P{Cn}"])
def test_regex_classes_match_oniguruma_on_every_code_point(pattern):
    """The embedded Oniguruma tables, checked over all of Unicode."""
    text = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    hf = normalizers.Replace(Regex(pattern), "\ue000")
    ours = _build_normalizer({"type": "Replace", "pattern": {"Regex": pattern}, "content": "\ue000"})
    assert ours.apply(text) == hf.normalize_str(text)


@pytest.mark.parametrize(
    "pattern",
    [r"(?i)a", r"(?x)a b", r"[[:alpha:]]", r"[a[b]]", r"[a&&b]", r"\pL", r"\p{Han}", r"\R", r"\X", r"\K",
     r"\G", r"\y", r"\N", r"\O", r"\Q.\E", r"\cA", r"\10", r"\x", r"\x84", r"a**", r"a{2}{3}", r"a{2}+",
     r"a{2,1}", r"(?<=a|bc)x", r"(?<=a+)x", r"(?~a)", r"(?(1)a|b)", r"\g<1>", r"\o{101}"],
)  # fmt: skip
def test_unsupported_regex_constructs_are_refused(pattern):
    with pytest.raises(UnsupportedTokenizerComponent):
        _build_normalizer({"type": "Replace", "pattern": {"Regex": pattern}, "content": ""})


@pytest.mark.parametrize(
    "pattern", [r"*a", r"(a", r"a)", r"[a", r"[]", r"[^]", r"[z-a]", r"[a-\d]", r"(?P<n>a)"]
)
def test_invalid_regexes_are_errors_in_both(pattern):
    with pytest.raises(Exception):  # noqa: B017 - Oniguruma's own error
        normalizers.Replace(Regex(pattern), "")
    with pytest.raises(TokenizerError):
        _build_normalizer({"type": "Replace", "pattern": {"Regex": pattern}, "content": ""})


# ----------------------------------------------------------------------------------------------------------
# Unicode normalization (Unicode 9.0 data, as the Rust crate has)


@pytest.mark.parametrize("form", ["NFC", "NFD", "NFKC", "NFKD"])
def test_unicode_normalization_of_every_code_point(form):
    hf = getattr(normalizers, form)()
    ours = _build_normalizer({"type": form})
    cps = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000 and c != 10]
    for i in range(0, len(cps), 200_000):
        chunk = cps[i : i + 200_000]
        text = "\n".join(map(chr, chunk))
        expected = hf.normalize_str(text)
        got = ours.apply(text)
        if expected != got:
            bad = [
                hex(c)
                for c, x, y in zip(chunk, expected.split("\n"), got.split("\n"), strict=False)
                if x != y
            ]
            pytest.fail(f"{form}: {bad[:20]}")


def test_unicode_normalization_of_mark_sequences(corpus):
    rng = random.Random(3)
    pool = [c for s in corpus for c in s if ord(c) >= 0x300][:5000] + ["a", "e", "A", " ", "\u0301", "\u0323"]
    texts = ["".join(rng.choice(pool) for _ in range(rng.randint(1, 12))) for _ in range(1500)]
    for form in ["NFC", "NFD", "NFKC", "NFKD"]:
        hf = getattr(normalizers, form)()
        ours = _build_normalizer({"type": form})
        for text in texts:
            expected = hf.normalize_str(text)
            assert ours.apply(text) == expected, (form, text)
            emulated = "".join(c for c, _ in _crate_normalize(text, "K" in form, form.endswith("C")))
            assert emulated == expected, (form, text)


def test_lowercase_matches_rust():
    hf = normalizers.Lowercase()
    ours = _build_normalizer({"type": "Lowercase"})
    for text in ["ΟΔΟΣ Σ ΣΑ", "İI", "ẞ", "\u1c89\ua7cb\U00010d50", "ABC", "Ǆǅ", "\U0001e900", "ꭰ"]:
        assert ours.apply(text) == hf.normalize_str(text), text


# ----------------------------------------------------------------------------------------------------------
# prepend_scheme "first": whether a piece starts at offset 0 depends on every normalizer

FIRST_NORMALIZERS = [
    normalizers.Strip(),
    normalizers.Strip(left=True, right=False),
    normalizers.Replace(Regex(r"^\s+"), ""),
    normalizers.Replace(Regex(r"^ "), "xy"),
    normalizers.Replace(Regex(r"\A"), "z"),
    normalizers.Replace(Regex(r"(?=a)"), "q"),
    normalizers.Replace(Regex(r"\s"), ""),
    normalizers.Replace(" ", ""),
    normalizers.Replace("", "-"),
    normalizers.Prepend(""),
    normalizers.Prepend("pp"),
    normalizers.NFD(),
    normalizers.NFC(),
    normalizers.NFKC(),
    normalizers.NFKD(),
    normalizers.Lowercase(),
    normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Strip()]),
    normalizers.Sequence([normalizers.Strip(), normalizers.Prepend("")]),
    normalizers.Sequence([normalizers.Replace(Regex(r"^."), ""), normalizers.Prepend("")]),
    normalizers.Sequence([normalizers.Lowercase(), normalizers.Replace(Regex(r"^i."), "J")]),
    normalizers.Sequence([normalizers.NFKD(), normalizers.Replace(Regex(r"^\S\S"), "")]),
]


def test_first_prepend_scheme_follows_offsets(corpus):
    texts = [s for s in corpus if len(s) <= 40][:700] + [
        "  ab", " ab", "ab", "\u2000ab", "①ab", "İab", "e\u0301a", "\u0301ab", "ǅx", "ﬁx", "a", " a", "aa",
        "<|audio_bos|> a", "a<|audio_bos|>", "<|audio_bos|>", " <|audio_bos|>", "\u1100\u1161\u11a8x",
    ]  # fmt: skip
    vocab = [("<unk>", 0.0)] + [(c, -1.0) for c in "abcdefghijklmnopqrstuvwxyz▁ "] + [("▁a", -1.5)]
    for norm in FIRST_NORMALIZERS:
        for split in (True, False):
            tok = HF(models.Unigram(vocab, 0, False))
            tok.normalizer = norm
            tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=split)
            tok.add_special_tokens([AddedToken("<|audio_bos|>", special=True, normalized=False)])
            text = tok.to_str()
            ours = Tokenizer.from_str(text)
            for s in texts:
                assert ours.encode_pieces(s) == tok.encode(s).tokens, (text[-400:], s)


def test_insertions_at_the_start_then_transforms_are_refused():
    """tokenizers mis-aligns text inserted at the very start once NFx, Lowercase or Strip runs after it:
    it panics, or repeats characters. phonon_web refuses those texts rather than guess."""
    vocab = [("<unk>", 0.0)] + [(c, -1.0) for c in "abcdefghijklmnopqrstuvwxyz▁ >ABC-xy"]
    cases = [
        (
            normalizers.Sequence([normalizers.Replace(Regex("^"), ">"), normalizers.Lowercase()]),
            ["Abc", " "],
            [],
        ),
        (normalizers.Sequence([normalizers.Replace(Regex("^"), ">"), normalizers.Strip()]), ["ab "], ["ab"]),
        (normalizers.Sequence([normalizers.Replace(Regex("^"), ">"), normalizers.NFKC()]), ["ab", "é"], []),
        (normalizers.Sequence([normalizers.Replace(Regex("(?=a)"), ">"), normalizers.NFD()]), ["ab"], ["ba"]),
        (normalizers.Sequence([normalizers.Prepend(""), normalizers.Lowercase()]), ["Ab"], []),
        (normalizers.Sequence([normalizers.Replace("", "-"), normalizers.NFD()]), ["ab"], []),
        (
            normalizers.Sequence(
                [
                    normalizers.Replace(Regex("^a"), ""),
                    normalizers.Replace(Regex("^"), ">"),
                    normalizers.Replace(Regex("^>"), "xy"),
                    normalizers.Lowercase(),
                ]
            ),
            ["ab", "bb"],
            [],
        ),
    ]
    for norm, refused, fine in cases:
        tok = HF(models.Unigram(vocab, 0, False))
        tok.normalizer = norm
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        ours = Tokenizer.from_str(tok.to_str())
        for text in refused:
            with pytest.raises(UnsupportedTokenizerComponent, match="mis-aligns"):
                ours.encode(text)
            try:
                garbled = tok.encode(text).tokens
            except BaseException as exc:  # pyo3's PanicException
                assert "Panic" in type(exc).__name__
            else:
                assert garbled != tok.encode(text.replace(" ", "")).tokens or garbled.count(">") > 1
        for text in fine:
            assert ours.encode(text) == tok.encode(text).ids


def test_added_token_edge_cases():
    vocab = [("<unk>", 0.0)] + [(c, -1.0) for c in "abcdefghijklmnopqrstuvwxyz▁ "]
    # single_word uses the regex crate's \\w (join controls are word characters, ² is not)
    tok = HF(models.Unigram(vocab, 0, False))
    tok.add_tokens([AddedToken("ok", single_word=True, normalized=False), AddedToken(" zz", rstrip=True)])
    ours = Tokenizer.from_str(tok.to_str())
    for text in [
        "ok",
        "ok ok",
        "ok\u200d",
        "\u200dok",
        "²ok",
        "ok½",
        "éok",
        "o\u0301ok",
        "_ok",
        "okok",
        " zz  zz a",
    ]:
        assert ours.encode(text) == tok.encode(text).ids, text
    # a normalized token that normalizes to nothing: tokenizers splits at every byte, we refuse the file
    tok = HF(models.Unigram(vocab, 0, False))
    tok.normalizer = normalizers.Replace("x", "")
    tok.add_tokens([AddedToken("xx", normalized=True)])
    with pytest.raises(UnsupportedTokenizerComponent, match="empty string"):
        Tokenizer.from_str(tok.to_str())
    # two tokens with the same normalized form: tokenizers picks one at random, we refuse such text
    tok = HF(models.Unigram(vocab, 0, False))
    tok.normalizer = normalizers.Lowercase()
    tok.add_tokens([AddedToken("AB", normalized=True), AddedToken("ab", normalized=True)])
    ours = Tokenizer.from_str(tok.to_str())
    assert ours.encode("cd") == tok.encode("cd").ids
    with pytest.raises(UnsupportedTokenizerComponent, match="random"):
        ours.encode("xaby")


# ----------------------------------------------------------------------------------------------------------
# Scores are read as serde_json reads them


def test_scores_are_parsed_like_serde_json():
    rng = random.Random(11)
    values = []
    for i in range(30_000):
        if i % 3 == 0:
            x = struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
            if x != x or x in (float("inf"), float("-inf")):
                x = -1.5
        else:
            x = -rng.random() * rng.choice([1, 10, 20, 1e-3, 1e5])
        values.append(x)
    vocab = [("<unk>", 0.0)] + [(f"p{i}", v) for i, v in enumerate(values)]
    text = HF(models.Unigram(vocab, 0, False)).to_str()
    reparsed = json.loads(HF.from_str(text).to_str())["model"]["vocab"]  # what Rust read, printed exactly
    python_scores = [score for _, score in json.loads(text)["model"]["vocab"]]
    ours = Tokenizer.from_str(text)
    differs = 0
    for (piece, score), (piece2, rust_score), py in zip(
        ours._model.vocab, reparsed, python_scores, strict=True
    ):
        assert piece == piece2 and score == rust_score, (piece, score, rust_score)
        differs += score != py
    assert differs > 1000  # serde_json really is inexact, so this test means something
    for literal in ["0", "-0", "1e5", "1E-5", "123456789012345678901234", "1.5e308", "-2.5e-320", "0.1e-400"]:
        assert isinstance(_serde_f64(literal), float)


def test_equal_scores_keep_the_first_best_path():
    vocab = [("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("ab", -2.0), ("abc", -3.0), ("c", -1.0), ("bc", -2.0)]
    tok = HF(models.Unigram(vocab, 0, False))
    ours = Tokenizer.from_str(tok.to_str())
    for s in ["ab", "abc", "bc", "abcabc", "cab", "abx", "xxab", "<unk>ab", "a<unk>"]:
        assert ours.encode(s) == tok.encode(s).ids, s
