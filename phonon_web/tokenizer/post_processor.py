"""The post-processor: `TemplateProcessing` for a single sequence, read from JSON."""

from __future__ import annotations

from ..errors import TokenizerError
from .config import _get, _type_of, _unsupported


def _build_post_processor(obj: object) -> list[tuple[str, list[int], list[str]]] | None:
    """The single-sequence template as a list of ("A", [], []) and ("special", ids, tokens)."""
    if obj is None:
        return None
    kind = _type_of(obj, "post_processor")
    if kind != "TemplateProcessing":
        raise _unsupported("post_processor", kind)
    assert isinstance(obj, dict)
    where = "post_processor TemplateProcessing"
    single = _get(obj, "single", where, list)
    special = _get(obj, "special_tokens", where, dict)
    pair = obj.get("pair") or []
    for piece in pair if isinstance(pair, list) else []:
        if isinstance(piece, dict) and isinstance(piece.get("SpecialToken"), dict):
            if piece["SpecialToken"].get("id") not in special:  # type: ignore[operator]
                raise TokenizerError(f"{where}: missing special token {piece['SpecialToken'].get('id')!r}")
    out = []
    for piece in single:  # type: ignore[union-attr]
        if not isinstance(piece, dict) or len(piece) != 1:
            raise TokenizerError(f"{where}: bad template piece {piece!r}")
        ((name, body),) = piece.items()
        if not isinstance(body, dict):
            raise TokenizerError(f"{where}: bad template piece {piece!r}")
        if name == "Sequence":
            if body.get("id") != "A":
                raise TokenizerError(f"{where}: the single template can only use sequence A")
            out.append(("A", [], []))
        elif name == "SpecialToken":
            token = special.get(body.get("id"))  # type: ignore[union-attr]
            if not isinstance(token, dict):
                raise TokenizerError(f"{where}: missing special token {body.get('id')!r}")
            ids = token.get("ids")
            tokens = token.get("tokens")
            if (
                not isinstance(ids, list)
                or not isinstance(tokens, list)
                or len(ids) != len(tokens)
                or not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in ids)
                or not all(isinstance(t, str) for t in tokens)
            ):
                raise TokenizerError(f"{where}: bad special token {body.get('id')!r}")
            out.append(("special", list(ids), list(tokens)))
        else:
            raise TokenizerError(f"{where}: bad template piece {piece!r}")
    return out
