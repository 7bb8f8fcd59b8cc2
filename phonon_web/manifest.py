"""The weights manifest: what `build_weights.py` writes next to `weights.bin`, read back by the engine.

Pure Python (standard library only): this runs in Pyodide, where there is no numpy.

A manifest (`manifest.json`, format "phonon-web-weights", version 2) says where each tensor lies in
the one weights blob and how it is stored:

* `q8`: int8 values, `rows` x `padded_cols` row-major from `offset` (each row padded with zeros to a
  multiple of the block, 32), then one f16 scale per block, `rows` x `padded_cols / block`, from
  `scales_offset`; a value is `q * scale`. `rows` = shape[0], `cols` = the product of the rest (a 0-d
  or 1-d tensor is one row). `bytes` covers the whole span, data and scales.
* `f16`: `shape` values as f16 from `offset`, the count padded to even (`bytes` a multiple of 4).
* `f32`: `shape` values as f32 from `offset` (a `--f32` build, for parity tests).

Every offset is a multiple of 4, so a shader reads the blob as `array<u32>` and a tensor starts at
word `offset / 4` (`TensorEntry.word_offset`). The manifest also lists the voices (raw f32 files),
the tokenizer file, SHA-256s of every file, and the checkpoint's configs, copied unchanged.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from .errors import WeightsError

FORMAT = "phonon-web-weights"
VERSION = 2  # 2: SEANet transposed-conv weights stored per output phase (build_weights.convtr_phases)
KINDS = ("q8", "f16", "f32")

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_AGAIN = "Build the weights again with build_weights.py (or download them again)."


@dataclass(frozen=True)
class FileEntry:
    """A file next to the manifest, with its size and SHA-256 (hex)."""

    file: str
    bytes: int
    sha256: str


@dataclass(frozen=True)
class TensorEntry:
    """One tensor in the weights blob. Offsets are in bytes from the blob's start."""

    name: str
    shape: tuple[int, ...]
    kind: str  # "q8" | "f16" | "f32"
    offset: int
    bytes: int
    scales_offset: int | None = None  # q8 only
    rows: int | None = None  # q8 only
    cols: int | None = None  # q8 only
    padded_cols: int | None = None  # q8 only

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def word_offset(self) -> int:
        """Where the tensor starts, in u32 words."""
        return self.offset // 4

    @property
    def scales_word_offset(self) -> int | None:
        """Where a q8 tensor's scales start, in u32 words."""
        return None if self.scales_offset is None else self.scales_offset // 4


@dataclass(frozen=True)
class VoiceEntry:
    """A voice: `rows` x `width` little-endian f32 latents in `file`."""

    name: str
    file: str
    rows: int
    width: int
    dtype: str
    bytes: int
    sha256: str


@dataclass(frozen=True, eq=False)
class Manifest:
    version: int
    weights: FileEntry
    tensors: tuple[TensorEntry, ...]  # sorted by name, as written
    voices: tuple[VoiceEntry, ...]
    tokenizer: FileEntry
    config: dict[str, Any]
    generation_config: dict[str, Any] | None
    processor_config: dict[str, Any] | None
    quantization: dict[str, Any] | None  # {"block": 32, "min_values": 16384}; None for an all-f32 build
    source: dict[str, Any]
    _by_name: dict[str, TensorEntry] = field(repr=False)
    _voices_by_name: dict[str, VoiceEntry] = field(repr=False)

    def tensor(self, name: str) -> TensorEntry:
        try:
            return self._by_name[name]
        except KeyError:
            raise WeightsError(
                f"the weights have no tensor {name!r}: they were built for another model or by another "
                f"version of build_weights.py. {_AGAIN}"
            ) from None

    def has_tensor(self, name: str) -> bool:
        return name in self._by_name

    def voice(self, name: str) -> VoiceEntry:
        try:
            return self._voices_by_name[name]
        except KeyError:
            raise WeightsError(
                f"no voice {name!r} in the weights; the voices are: {', '.join(self.voice_names)}."
            ) from None

    @property
    def voice_names(self) -> tuple[str, ...]:
        return tuple(v.name for v in self.voices)

    @property
    def weights_sha256(self) -> str:
        return self.weights.sha256

    @property
    def q8_block(self) -> int | None:
        return None if self.quantization is None else self.quantization["block"]


# ---------------------------------------------------------------------------------------------------
# Loading and validating
# ---------------------------------------------------------------------------------------------------
def _bad(what: str) -> WeightsError:
    return WeightsError(f"the weights manifest is invalid: {what}. {_AGAIN}")


def _int(value: Any, what: str, minimum: int = 0) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise _bad(f"{what} should be an integer >= {minimum}, not {value!r}")
    return value


def _str(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise _bad(f"{what} should be a non-empty string, not {value!r}")
    return value


def _obj(value: Any, what: str) -> dict:
    if not isinstance(value, dict):
        raise _bad(f"{what} should be an object")
    return value


def _relative_file(value: Any, what: str) -> str:
    path = _str(value, what)
    if path.startswith("/") or "\\" in path or ".." in path.split("/") or ":" in path:
        raise _bad(f"{what} should be a plain relative path, not {path!r}")
    return path


def _sha(value: Any, what: str) -> str:
    if not isinstance(value, str) or not _SHA256.match(value):
        raise _bad(f"{what} should be a SHA-256 as 64 lowercase hex digits")
    return value


def _file_entry(value: Any, what: str) -> FileEntry:
    d = _obj(value, what)
    return FileEntry(
        file=_relative_file(d.get("file"), f"{what}.file"),
        bytes=_int(d.get("bytes"), f"{what}.bytes"),
        sha256=_sha(d.get("sha256"), f"{what}.sha256"),
    )


def _tensor_entry(value: Any, index: int, blob_bytes: int, block: int | None) -> TensorEntry:
    d = _obj(value, f"tensors[{index}]")
    name = _str(d.get("name"), f"tensors[{index}].name")
    what = f"tensor {name!r}"
    shape = d.get("shape")
    if not isinstance(shape, list):
        raise _bad(f"{what}: shape should be a list")
    shape_t = tuple(_int(s, f"{what}: a dimension") for s in shape)
    kind = d.get("kind")
    if kind not in KINDS:
        raise _bad(f"{what}: kind {kind!r} is none of {', '.join(KINDS)}")
    offset = _int(d.get("offset"), f"{what}: offset")
    size = _int(d.get("bytes"), f"{what}: bytes")
    if offset % 4:
        raise _bad(f"{what}: offset {offset} is not a multiple of 4")
    if offset + size > blob_bytes:
        raise _bad(f"{what} ends at byte {offset + size}, past the end of the weights ({blob_bytes} bytes)")
    numel = math.prod(shape_t)
    if kind == "f32" and size != 4 * numel:
        raise _bad(f"{what}: f32 {list(shape_t)} takes {4 * numel} bytes, not {size}")
    if kind == "f16" and size != 2 * (numel + numel % 2):
        raise _bad(f"{what}: f16 {list(shape_t)} takes {2 * (numel + numel % 2)} bytes, not {size}")
    if kind != "q8":
        return TensorEntry(name, shape_t, kind, offset, size)

    if block is None:
        raise _bad(f"{what} is q8 but the manifest has no quantization block")
    rows = _int(d.get("rows"), f"{what}: rows")
    cols = _int(d.get("cols"), f"{what}: cols")
    padded = _int(d.get("padded_cols"), f"{what}: padded_cols")
    scales_offset = _int(d.get("scales_offset"), f"{what}: scales_offset")
    expected_rows = 1 if len(shape_t) <= 1 else shape_t[0]
    if rows != expected_rows or rows * cols != numel:
        raise _bad(f"{what}: rows {rows} x cols {cols} do not match the shape {list(shape_t)}")
    if padded % block or not cols <= padded < cols + block:
        raise _bad(f"{what}: padded_cols {padded} is not cols {cols} rounded up to a multiple of {block}")
    scales_end = scales_offset + 2 * rows * (padded // block)
    if scales_offset % 4 or scales_offset < offset + rows * padded or scales_end > offset + size:
        raise _bad(f"{what}: its scales at byte {scales_offset} do not follow its int8 data inside its span")
    return TensorEntry(name, shape_t, kind, offset, size, scales_offset, rows, cols, padded)


def _voice_entry(value: Any, index: int) -> VoiceEntry:
    d = _obj(value, f"voices[{index}]")
    name = _str(d.get("name"), f"voices[{index}].name")
    what = f"voice {name!r}"
    rows = _int(d.get("rows"), f"{what}: rows", 1)
    width = _int(d.get("width"), f"{what}: width", 1)
    if d.get("dtype") != "f32":
        raise _bad(f"{what}: dtype should be 'f32', not {d.get('dtype')!r}")
    size = _int(d.get("bytes"), f"{what}: bytes")
    if size != 4 * rows * width:
        raise _bad(f"{what}: {rows} x {width} f32 take {4 * rows * width} bytes, not {size}")
    return VoiceEntry(
        name=name,
        file=_relative_file(d.get("file"), f"{what}: file"),
        rows=rows,
        width=width,
        dtype="f32",
        bytes=size,
        sha256=_sha(d.get("sha256"), f"{what}: sha256"),
    )


def load_manifest(source: str | bytes | dict) -> Manifest:
    """Parse and validate a manifest (its JSON text, bytes, or the decoded dict).

    Raises WeightsError, in plain words, for a manifest of another format, a newer version than this
    phonon_web reads, or one that is damaged or inconsistent.
    """
    if isinstance(source, bytes | bytearray | memoryview):
        try:
            source = bytes(source).decode("utf-8")
        except UnicodeDecodeError:
            raise WeightsError(f"the weights manifest is not UTF-8 text: it is corrupt. {_AGAIN}") from None
    if isinstance(source, str):
        try:
            source = json.loads(source)
        except json.JSONDecodeError as e:
            raise WeightsError(
                f"the weights manifest is not valid JSON ({e}): it is truncated or corrupt. {_AGAIN}"
            ) from None
    if not isinstance(source, dict):
        raise WeightsError("the weights manifest should be a JSON object: this is not a phonon-web manifest.")
    data = source

    fmt = data.get("format")
    if fmt != FORMAT:
        raise WeightsError(
            f"this is not a phonon-web weights manifest (its format is {fmt!r}, expected {FORMAT!r}): "
            "make one from the checkpoint with build_weights.py."
        )
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _bad(f"version should be a positive integer, not {version!r}")
    if version > VERSION:
        raise WeightsError(
            f"these weights were built in manifest version {version}, newer than this phonon_web reads "
            f"(version {VERSION}): update phonon_web, or build the weights with its own build_weights.py."
        )
    if version < VERSION:
        raise WeightsError(
            f"these weights were built in manifest version {version}, older than this phonon_web reads "
            f"(version {VERSION}; the layout of some tensors changed): build them again from the "
            "checkpoint with this phonon_web's build_weights.py."
        )
    missing = [k for k in ("weights", "tensors", "voices", "tokenizer", "config") if k not in data]
    if missing:
        raise _bad(f"it lacks {', '.join(missing)}")

    weights = _file_entry(data["weights"], "weights")
    quantization = data.get("quantization")
    block = None
    if quantization is not None:
        q = _obj(quantization, "quantization")
        block = _int(q.get("block"), "quantization.block", 1)
        _int(q.get("min_values"), "quantization.min_values")

    if not isinstance(data["tensors"], list):
        raise _bad("tensors should be a list")
    tensors = tuple(_tensor_entry(t, i, weights.bytes, block) for i, t in enumerate(data["tensors"]))
    by_name: dict[str, TensorEntry] = {}
    for t in tensors:
        if t.name in by_name:
            raise _bad(f"tensor {t.name!r} is listed twice")
        by_name[t.name] = t
    spans = sorted((t.offset, t.offset + t.bytes, t.name) for t in tensors if t.bytes)
    for (_, end_a, a), (begin_b, _, b) in zip(spans, spans[1:], strict=False):
        if begin_b < end_a:
            raise _bad(f"tensors {a!r} and {b!r} overlap in the weights")

    if not isinstance(data["voices"], list):
        raise _bad("voices should be a list")
    voices = tuple(_voice_entry(v, i) for i, v in enumerate(data["voices"]))
    voices_by_name: dict[str, VoiceEntry] = {}
    for v in voices:
        if v.name in voices_by_name:
            raise _bad(f"voice {v.name!r} is listed twice")
        voices_by_name[v.name] = v

    config = _obj(data["config"], "config")
    generation_config = data.get("generation_config")
    processor_config = data.get("processor_config")
    if generation_config is not None:
        _obj(generation_config, "generation_config")
    if processor_config is not None:
        _obj(processor_config, "processor_config")
    source_info = data.get("source") or {}
    _obj(source_info, "source")

    return Manifest(
        version=version,
        weights=weights,
        tensors=tensors,
        voices=voices,
        tokenizer=_file_entry(data["tokenizer"], "tokenizer"),
        config=config,
        generation_config=generation_config,
        processor_config=processor_config,
        quantization=quantization,
        source=source_info,
        _by_name=by_name,
        _voices_by_name=voices_by_name,
    )
