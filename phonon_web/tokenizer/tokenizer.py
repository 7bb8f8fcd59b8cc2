"""`Tokenizer` and `Encoding`: a tokenizer file read into its components, and the encode/decode pipeline."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import TextError, TokenizerError
from .added_tokens import _AddedMatcher, _AddedToken
from .config import _get, _unsupported
from .decoders import _build_decoder
from .json_numbers import _parse_json
from .normalizers import _build_normalizer, _needs_alignment_guard
from .post_processor import _build_post_processor
from .pre_tokenizers import _build_pre_tokenizer, _MetaspacePreTokenizer, _slice_z
from .unigram import _build_model


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
        self._post = _build_post_processor(config.get("post_processor"))
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
