"""Tokens per second of phonon_web's pure-Python tokenizer and of the `tokenizers` library (a benchmark,
not a test).

Text: about 10,000 tokens of English (standard library docstrings). Tokenizer: the project's synthetic
`tokenizer.5.0.0.json` (built by `tests/reference/make_tokenizer.py`), or any file given with `--tokenizer`.
"cold" runs start with an empty piece cache (words repeated within the text hit it), "warm" runs repeat the
same text, "no piece cache" runs Viterbi on every word. Also times a 10,000-character text, and a
tokenizer with `prepend_scheme: "first"`, whose offset tracking costs a little more.

Usage: python bench/tokenizer_speed.py [--tokenizer PATH] [--repeat N]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
import sysconfig

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from bench.measure import best_of  # noqa: E402
from phonon_web.tokenizer import Tokenizer  # noqa: E402


def english_text(chars: int) -> str:
    stdlib = sysconfig.get_paths()["stdlib"]
    parts: list[str] = []
    total = 0
    for name in sorted(os.listdir(stdlib), reverse=True):  # not the order the tokenizer was trained on
        if not name.endswith(".py"):
            continue
        with open(os.path.join(stdlib, name), encoding="utf-8") as f:
            try:
                tree = ast.parse(f.read())
            except SyntaxError:
                continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                doc = ast.get_docstring(node)
                if doc:
                    parts.append(" ".join(doc.split()))
                    total += len(parts[-1])
        if total >= chars:
            break
    return " ".join(parts)[:chars]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokenizer", help="tokenizer.json (default: build the synthetic one)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    if args.tokenizer:
        with open(args.tokenizer, encoding="utf-8") as f:
            tokenizer_json = f.read()
    else:
        from tests.reference.make_tokenizer import build_tokenizer_json

        tokenizer_json = build_tokenizer_json()

    ours = Tokenizer.from_str(tokenizer_json)
    text = english_text(60_000)
    # trim to ~10,000 tokens
    ids = ours.encode(text)
    while len(ids) > 10_000:
        text = text[: int(len(text) * 10_000 / len(ids))]
        ids = ours.encode(text)
    n_tokens = len(ids)
    print(f"text: {len(text)} characters, {n_tokens} tokens")

    def cold() -> None:
        ours._model.cache.clear()
        ours.encode(text)

    rows = []
    rows.append(("phonon_web, cold cache", best_of(cold, args.repeat), n_tokens))
    rows.append(("phonon_web, warm cache", best_of(lambda: ours.encode(text), args.repeat), n_tokens))

    uncached = Tokenizer.from_str(tokenizer_json)
    uncached._model.tokenize = uncached._model._tokenize  # every word through Viterbi, every time
    rows.append(
        ("phonon_web, no piece cache at all", best_of(lambda: uncached.encode(text), args.repeat), n_tokens)
    )

    data = json.loads(tokenizer_json)
    data["pre_tokenizer"] = {
        "type": "Metaspace",
        "replacement": "▁",
        "prepend_scheme": "first",
        "split": True,
    }
    first = Tokenizer.from_str(json.dumps(data))

    def cold_first() -> None:
        first._model.cache.clear()
        first.encode(text)

    rows.append(('phonon_web, cold, prepend_scheme "first"', best_of(cold_first, args.repeat), n_tokens))

    text10k = text[:10_000]
    n10k = len(ours.encode(text10k))

    def cold10k() -> None:
        ours._model.cache.clear()
        ours.encode(text10k)

    rows.append(("phonon_web, cold, one 10,000-char text", best_of(cold10k, args.repeat), n10k))

    try:
        import tokenizers
    except ImportError:
        tokenizers = None
    if tokenizers is not None:
        hf = tokenizers.Tokenizer.from_str(tokenizer_json)
        assert hf.encode(text).ids == ids, "phonon_web and tokenizers disagree on the benchmark text"
        rows.append(
            (f"tokenizers {tokenizers.__version__}", best_of(lambda: hf.encode(text), args.repeat), n_tokens)
        )

    for name, seconds, n in rows:
        print(f"{name:45s} {n / seconds:12,.0f} tokens/s  ({seconds * 1000:8.1f} ms for {n} tokens)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
