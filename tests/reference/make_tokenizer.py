"""Build the project's synthetic stand-in for Gradium's `tokenizer.5.0.0.json`.

Gradium's real tokenizer cannot be downloaded here, so the tests and benchmarks run on a tokenizer of
the same kind, trained with the `tokenizers` library:

- model: Unigram, exactly 4001 pieces (ids 0..4000), `unk_id` 0, byte fallback on;
- ids 0 `<unk>`, 1 `<s>`, 2 `</s>`, 3 `<pad>`, 4 `<|audio_bos|>`, 5 `<|audio_prompt|>`,
  6 `<|audio_latent|>` (ids 3..6 are also added special tokens: never normalised, split out of the
  text before anything else), then the 256 byte pieces `<0x00>`..`<0xFF>` (ids 7..262), then 3738
  learned pieces (ids 263..4000) ordered by descending score (ties by piece text);
- normalizer: a `Sequence` of 25 normalizers of the kinds a TTS front end uses: NFKC, the 23 Replace
  rules of `NORMALIZER_RULES` (plain strings and Oniguruma regexes) and a Strip before the last one;
- pre-tokenizer: `Metaspace(replacement="▁", prepend_scheme="always", split=True)`: every text
  segment (the text, or each part between special tokens) starts a new word, and pieces never span
  two words;
- post-processor: none (the engine adds the audio BOS row itself), decoder: the Llama-style
  `Replace("▁", " ") + ByteFallback + Fuse + Strip(" ", 1, 0)`.

Training text: the docstrings of the top-level modules of Python's standard library (read with `ast`,
files in sorted order, nodes in `ast.walk` order), which exist on any machine with CPython. The exact
bytes depend on the CPython version (3.11.7 here); another version gives a slightly different but
equally valid tokenizer.

Determinism: the Unigram trainer runs its E-step in parallel (float sums in varying order) and keeps
its required characters in a randomly seeded hash set, so two runs could differ. We (1) set
`TOKENIZERS_PARALLELISM=false` for the duration of training, which the library reads on every call,
so everything runs serially in one order, and (2) rebuild the final vocabulary ourselves, sorting the
learned pieces by (-score, piece). `build_tokenizer_json()` is byte-for-byte reproducible (checked by
`tests/test_tokenizer.py::test_synthetic_tokenizer_is_deterministic`).

Usage: `python -m tests.reference.make_tokenizer OUT.json`
"""

from __future__ import annotations

import ast
import json
import os
import sys
import sysconfig

VOCAB_SIZE = 4001
SPECIAL_PIECES = ["<unk>", "<s>", "</s>", "<pad>", "<|audio_bos|>", "<|audio_prompt|>", "<|audio_latent|>"]
ADDED_SPECIAL_IDS = (3, 4, 5, 6)
BYTE_PIECES = [f"<0x{b:02X}>" for b in range(256)]
N_LEARNED = VOCAB_SIZE - len(SPECIAL_PIECES) - len(BYTE_PIECES)
REQUIRED_PIECES = [".", ",", "!", "?", ";", ":", "▁", "'", '"', "-"]
MAX_TRAINING_CHARS = 900_000

# (kind, pattern, content). kind "str" is a plain-string Replace, "re" an Oniguruma regex Replace.
# Order matters: each rule sees the output of the previous one.
NORMALIZER_RULES: list[tuple[str, str, str]] = [
    # 1. control characters (but not tab/newline/CR, handled with the other whitespace) go away
    # (code points above 0x7F are written \uHHHH: in Oniguruma \xHH above 7F is a raw UTF-8 byte)
    ("re", r"[\x00-\x08\x0B\x0C\x0E-\x1F\x7F\u0080-\u0084\u0086-\u009F]", ""),
    # 2. zero-width characters, BOM, soft hyphen
    ("re", r"[\u00AD\u200B-\u200F\u2060-\u2064\uFEFF]", ""),
    # 3. curly and other single quotes to '
    ("re", r"[\u2018\u2019\u201A\u201B\u2032\u00B4\u02BC]", "'"),
    # 4. curly and other double quotes to "
    ("re", r"[\u201C\u201D\u201E\u201F\u2033\u00AB\u00BB\u301D\u301E]", '"'),
    # 5. dashes and minus signs to -
    ("re", r"[\u2010-\u2015\u2212\uFE58\uFE63\uFF0D]", "-"),
    # 6. ellipsis character
    ("str", "\u2026", "..."),
    # 7. opening brackets and parentheses become a pause
    ("re", r"[(\[{\u3008\u300A\u3010]", ", "),
    # 8. closing brackets and parentheses become a pause
    ("re", r"[)\]}\u3009\u300B\u3011]", ", "),
    # 9..13. symbols read aloud
    ("str", "&", " and "),
    ("str", "%", " percent "),
    ("str", "@", " at "),
    ("str", "+", " plus "),
    ("str", "#", " number "),
    # 14. underscores and tildes are spaces
    ("re", r"[_~]", " "),
    # 15. collapse every run of whitespace (Unicode White_Space) to one space
    ("re", r"\s+", " "),
    # 16. runs of four or more dots become an ellipsis
    ("re", r"\.{4,}", "..."),
    # 17. runs of ! and ? shrink to one
    ("re", r"!{2,}", "!"),
    ("re", r"\?{2,}", "?"),
    # 19. no space before punctuation
    ("re", r" (?=[,.!?;:])", ""),
    # 20. repeated commas (e.g. from brackets next to commas) collapse
    ("re", r",(?: ?,)+", ","),
    # 21. leading pauses and spaces go
    ("re", r"\A[ ,]+", ""),
    # 22. trailing pauses and spaces go
    ("re", r"[ ,]+\z", ""),
    # 23. a text that does not end with . ! or ? gets a final period (only a non-empty one: tokenizers
    #     never runs a regex on an empty string)
    ("re", r"(?<![.!?])\z", "."),
]


def _normalizer():
    from tokenizers import Regex, normalizers

    rules = [normalizers.NFKC()]
    for kind, pattern, content in NORMALIZER_RULES[:-1]:
        rules.append(normalizers.Replace(Regex(pattern) if kind == "re" else pattern, content))
    rules.append(normalizers.Strip(left=True, right=True))
    kind, pattern, content = NORMALIZER_RULES[-1]
    rules.append(normalizers.Replace(Regex(pattern), content))
    return normalizers.Sequence(rules)


def training_texts(limit: int = MAX_TRAINING_CHARS) -> list[str]:
    """Paragraphs of the standard library's docstrings, in a fixed order, up to `limit` characters."""
    stdlib = sysconfig.get_paths()["stdlib"]
    texts: list[str] = []
    total = 0
    for name in sorted(os.listdir(stdlib)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(stdlib, name), encoding="utf-8") as f:
            source = f.read()
        try:
            tree = ast.parse(source)
        except SyntaxError:  # pragma: no cover - the stdlib parses
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if not doc:
                    continue
                for paragraph in doc.split("\n\n"):
                    paragraph = paragraph.strip()
                    if paragraph:
                        texts.append(paragraph)
                        total += len(paragraph)
                        if total >= limit:
                            return texts
    return texts


def _train(texts: list[str]) -> list[tuple[str, float]]:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.Unigram())
    tok.normalizer = _normalizer()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    trainer = trainers.UnigramTrainer(
        vocab_size=N_LEARNED + 1,  # + the trainer's own "<unk>", dropped below
        special_tokens=["<unk>"],
        unk_token="<unk>",
        show_progress=False,
        shrinking_factor=0.75,
        max_piece_length=16,
        n_sub_iterations=2,
    )
    saved = os.environ.get("TOKENIZERS_PARALLELISM")
    os.environ["TOKENIZERS_PARALLELISM"] = "false"  # serial training: one summation order
    try:
        tok.train_from_iterator(texts, trainer=trainer)
    finally:
        if saved is None:
            del os.environ["TOKENIZERS_PARALLELISM"]
        else:
            os.environ["TOKENIZERS_PARALLELISM"] = saved
    vocab = json.loads(tok.to_str())["model"]["vocab"]
    learned = [(piece, float(score)) for piece, score in vocab if piece != "<unk>"]

    # The trainer gives every required character that the model pruned the score
    # `min_score + 0.0001 * i`, with i in a random (hash set) order. Find those pieces by their exact
    # scores and hand the scores out again in sorted piece order.
    low = min(score for _, score in learned)
    penalties = [low]
    acc = 0.0
    for _ in range(len(learned)):
        acc += 0.0001
        penalties.append(low + acc)
    penalty_set = set(penalties)
    group = sorted(piece for piece, score in learned if score in penalty_set)
    new_scores = dict(zip(group, penalties[: len(group)], strict=True))
    learned = [(piece, new_scores.get(piece, score)) for piece, score in learned]
    # The summation order of the E-step also varies at the last bits: round those away.
    return [(piece, round(score, 6)) for piece, score in learned]


def build_tokenizer_json() -> str:
    """Train the synthetic tokenizer and return its `tokenizer.json` text (deterministic)."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    learned = _train(training_texts())
    reserved = set(SPECIAL_PIECES) | set(BYTE_PIECES)
    learned = [(p, s) for p, s in learned if p not in reserved]
    learned.sort(key=lambda item: (-item[1], item[0]))
    have = {p for p, _ in learned}
    missing = [p for p in REQUIRED_PIECES if p not in have]
    keep = N_LEARNED - len(missing)
    if keep > len(learned):
        raise RuntimeError(f"training produced only {len(learned)} pieces, need {N_LEARNED}")
    # Drop the lowest-scoring learned pieces that are not required, to make room for missing ones.
    required = set(REQUIRED_PIECES)
    while len(learned) > keep:
        for i in range(len(learned) - 1, -1, -1):
            if learned[i][0] not in required:
                del learned[i]
                break
    floor = min(s for _, s in learned)
    learned += [(p, floor - 1.0) for p in missing]
    learned.sort(key=lambda item: (-item[1], item[0]))

    vocab = [(p, 0.0) for p in SPECIAL_PIECES] + [(p, 0.0) for p in BYTE_PIECES] + learned
    assert len(vocab) == VOCAB_SIZE, len(vocab)

    tok = Tokenizer(models.Unigram(vocab, unk_id=0, byte_fallback=True))
    tok.normalizer = _normalizer()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
    )
    tok.add_special_tokens(
        [AddedToken(SPECIAL_PIECES[i], special=True, normalized=False) for i in ADDED_SPECIAL_IDS]
    )
    text = tok.to_str(pretty=True)
    check = Tokenizer.from_str(text)
    for i, piece in enumerate(SPECIAL_PIECES + BYTE_PIECES):
        assert check.token_to_id(piece) == i, piece
    assert check.get_vocab_size(with_added_tokens=True) == VOCAB_SIZE
    for piece in REQUIRED_PIECES:
        assert check.token_to_id(piece) is not None, piece
    return text + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m tests.reference.make_tokenizer OUT.json", file=sys.stderr)
        return 2
    text = build_tokenizer_json()
    with open(args[0], "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {args[0]} ({len(text)} bytes, {VOCAB_SIZE} pieces)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
