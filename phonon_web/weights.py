"""The converted weights on the GPU: the blob uploaded once, and where each tensor lies in it.

The blob from `build_weights.py` goes into two storage buffers, one for the language model
(`flow_lm.*`) and one for the codec (`mimi.*`): each part stays under WebGPU's portable 128 MiB
binding limit even in the f32 parity build, and every kernel binds only the part it reads. A
`TensorRef` gives a kernel what it needs to find a tensor: its part, its offset in u32 words and its
storage kind; shaders unpack q8/f16 themselves, so no shader needs `shader-f16`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import WeightsError
from .gpu.door import STORAGE, Door
from .manifest import Manifest

KIND_CODES = {"q8": 0, "f16": 1, "f32": 2}  # the KIND specialisation constant of the kernels
PARTS = ("flow_lm.", "mimi.")


@dataclass(frozen=True)
class TensorRef:
    name: str
    part: str  # "flow_lm." or "mimi."
    kind: str  # "q8", "f16" or "f32"
    shape: tuple[int, ...]
    rows: int
    cols: int
    padded_cols: int  # q8 rows are padded to a multiple of 32 values; equal to cols otherwise
    word: int  # offset of the data in u32 words from the start of the part's buffer
    scales_word: int  # q8 only: offset of the f16 scales in words (0 otherwise)

    @property
    def kind_code(self) -> int:
        return KIND_CODES[self.kind]


class Weights:
    """The weights of one manifest, resident on one door's GPU."""

    def __init__(self, door: Door, manifest: Manifest, blob: bytes | bytearray | memoryview):
        if len(blob) != manifest.weights.bytes:
            raise WeightsError(
                f"the weights file has {len(blob)} bytes but its manifest says {manifest.weights.bytes}: "
                "it is truncated or belongs to another build; download it again"
            )
        self.manifest = manifest
        self.refs: dict[str, TensorRef] = {}
        self.buffers: dict[str, object] = {}
        view = memoryview(blob)
        for part in PARTS:
            entries = [t for t in manifest.tensors if t.name.startswith(part)]
            if not entries:
                raise WeightsError(f"the weights file has no {part}* tensors: is it a Phonon 31M build?")
            start = min(t.offset for t in entries)
            end = max(t.offset + t.bytes for t in entries)
            buffer = door.buffer(end - start, STORAGE, label=f"weights {part.rstrip('.')}")
            door.write(buffer, 0, view[start:end])
            self.buffers[part] = buffer
            for t in entries:
                q8 = t.kind == "q8"
                rows = t.rows if q8 else (t.shape[0] if t.shape else 1)
                cols = t.cols if q8 else _prod(t.shape[1:]) if len(t.shape) > 1 else _prod(t.shape)
                self.refs[t.name] = TensorRef(
                    name=t.name,
                    part=part,
                    kind=t.kind,
                    shape=tuple(t.shape),
                    rows=rows,
                    cols=cols,
                    padded_cols=t.padded_cols if q8 else cols,
                    word=(t.offset - start) // 4,
                    scales_word=((t.scales_offset - start) // 4) if q8 else 0,
                )

    def __getitem__(self, name: str) -> TensorRef:
        try:
            return self.refs[name]
        except KeyError:
            raise WeightsError(
                f"the weights have no tensor {name!r}: rebuild them with this version"
            ) from None

    def get(self, name: str) -> TensorRef | None:
        return self.refs.get(name)

    def buffer(self, ref: TensorRef):
        return self.buffers[ref.part]

    @property
    def lm_buffer(self):
        return self.buffers["flow_lm."]

    @property
    def codec_buffer(self):
        return self.buffers["mimi."]


def _prod(values) -> int:
    out = 1
    for v in values:
        out *= v
    return out
