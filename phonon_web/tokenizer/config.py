"""Checked access to the fields of a tokenizer file's JSON objects; the error for unsupported components."""

from __future__ import annotations

from ..errors import TokenizerError, UnsupportedTokenizerComponent


def _unsupported(section: str, kind: object) -> UnsupportedTokenizerComponent:
    return UnsupportedTokenizerComponent(
        f"{section} type {kind!r} is not supported by phonon_web's tokenizer"
    )


def _get(obj: dict, key: str, where: str, kind: type | tuple[type, ...], default: object = ...) -> object:
    if key not in obj:
        if default is ...:
            raise TokenizerError(f"{where}: missing field {key!r}")
        return default
    value = obj[key]
    if kind is bool:
        ok = isinstance(value, bool)
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, kind) and not isinstance(value, bool)
    if not ok:
        raise TokenizerError(f"{where}: field {key!r} has the wrong type ({value!r})")
    return value


def _type_of(obj: object, section: str) -> str:
    if not isinstance(obj, dict):
        raise TokenizerError(f"{section} must be an object or null, got {obj!r}")
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise TokenizerError(f"{section} has no 'type'")
    return kind


def _single_char(value: object, where: str) -> str:
    if not isinstance(value, str) or len(value) != 1:
        raise TokenizerError(f"{where} must be a single character, got {value!r}")
    return value
