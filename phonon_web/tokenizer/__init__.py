"""A pure-Python reader for HuggingFace `tokenizer.json` files that gives exactly the ids of `tokenizers`.

It runs in CPython and in Pyodide with the standard library only. It implements what a Unigram (SentencePiece
style) text-to-speech tokenizer uses, following `tokenizers` 0.23 line by line where it matters:

- normalizers: `Sequence`, `Replace` (plain string or Oniguruma regex, see `oniguruma.py`), `Prepend`,
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
  Python's `float()` (see `json_numbers.py`). Tie-breaking in Viterbi can depend on that last bit.
- Unigram Viterbi adds scores in the same order, keeps the first best path on ties, gives unknown
  characters `min_score - 10`, fuses runs of unknown pieces and only then falls back to bytes.
- Oniguruma regexes are translated to Python `re` (`^`/`$` are line anchors, `(?m)` means dot-all, `\\w`,
  `\\d`, `\\s`, `\\b`, `\\p{..}` use Oniguruma's own Unicode tables, see `unicode_tables.py`), and matches are
  enumerated with Oniguruma's rule for empty matches. A regex is never run on an empty string.
- Unicode normalization is that of `unicode-normalization-alignments` 0.1.12, which has Unicode 9.0 data:
  characters that became normalization-relevant later are left alone, as that crate does (see
  `unicode_normalization.py`). `Lowercase` maps each character on its own (no final-sigma rule), with the
  mappings of Rust's newer Unicode tables added, and `Strip`/`WhitespaceSplit` use Unicode White_Space.
- `prepend_scheme: "first"` prepends only when the piece starts at offset 0 of the original text, which
  depends on how every normalizer moved the first characters; we track that (the `z` values of
  `normalizers.py`).
- Text is split around added tokens before normalization, and each part is normalized on its own.

Where `tokenizers` itself misbehaves we refuse with `UnsupportedTokenizerComponent` instead of guessing:
text inserted at the very start by an empty regex match (or an empty `Prepend`) followed by NFx,
Lowercase or Strip (it panics or repeats characters), an added token that normalizes to the empty string
(it splits at every byte), and two added tokens with the same normalized form (it picks one at random).
Lone surrogates cannot be encoded to UTF-8, so `tokenizers` rejects such text; we raise `TextError`.

Unicode tables: Oniguruma's classes, Rust's lowercase mappings and the Unicode 9.0 normalization set are
embedded (`unicode_tables.py`), so results do not depend on the running Python's `unicodedata` version,
except for normalization of characters that are normalization-relevant in both Unicode 9.0 and the
running Python (stable by Unicode's own policy) and `str.lower` for characters Python knows.

Modules:

- `tokenizer.py`: `Tokenizer` and `Encoding`, reading the file and running the pipeline;
- `json_numbers.py`: the JSON reader, with serde_json's float parsing; `config.py`: checked field access;
- `added_tokens.py`: splitting added tokens out of the text;
- `normalizers.py`, with `unicode_normalization.py` (Unicode 9.0 NFx as the Rust crate computes it);
- `pre_tokenizers.py`; `unigram.py` (the model); `post_processor.py`; `decoders.py`;
- `oniguruma.py` (Oniguruma to Python `re`) and `patterns.py` (running `String`/`Regex` patterns);
- `character_classes.py` (White_Space, `\\w`, general categories) and `unicode_tables.py` (embedded data).
"""

from __future__ import annotations

from .tokenizer import Encoding, Tokenizer

__all__ = ["Encoding", "Tokenizer"]
