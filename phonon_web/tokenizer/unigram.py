"""The Unigram model: Viterbi with the library's tie-breaking, fused unknowns and byte fallback."""

from __future__ import annotations

from ..errors import TextError, TokenizerError
from .config import _unsupported
from .json_numbers import _as_f64

_CACHE_LIMIT = 50_000


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
