"""Decoders (`Metaspace`, `ByteFallback`, `Fuse`, `Strip`, `Replace`, `Sequence`) and building them from JSON.

Each has `decode_chain(tokens) -> tokens`.
"""

from __future__ import annotations

from ..errors import TokenizerError
from .config import _get, _single_char, _type_of, _unsupported
from .oniguruma import _HEX
from .patterns import _pattern, _Regex


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
