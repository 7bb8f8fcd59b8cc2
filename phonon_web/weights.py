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

MODEL_TYPE = "gradium_phonon_tts"  # config.json's model_type of Phonon checkpoints
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
        check_phonon_model(manifest)
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


def check_phonon_model(manifest: Manifest) -> None:
    """WeightsError unless the manifest is of a Phonon model whose config matches its tensors' shapes.

    A manifest is checked for its own consistency when read; this catches weights of another model,
    or a config from another checkpoint, which would otherwise load and make noise."""
    config = manifest.config
    again = "convert a Phonon checkpoint with build_weights.py and load that folder"
    model_type = config.get("model_type")
    if model_type != MODEL_TYPE:
        raise WeightsError(f"these weights are of another model ({model_type!r}, not Phonon): {again}")
    try:
        sizes = ("hidden_size", "num_attention_heads", "num_hidden_layers")
        hidden, heads, layers = (int(config[k]) for k in sizes)
        head_dim = int(config.get("head_dim") or hidden // heads)
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        raise WeightsError(f"the weights' config lacks the model's sizes or has bad ones: {again}") from None
    expected = {"flow_lm.out_norm.weight": [hidden]}
    for i in range(layers):
        layer = f"flow_lm.transformer.layers.{i}."
        expected[layer + "norm1.weight"] = [hidden]
        expected[layer + "self_attn.in_proj.weight"] = [3 * heads * head_dim, hidden]
        expected[layer + "self_attn.out_proj.weight"] = [hidden, heads * head_dim]
    for name, shape in expected.items():
        if not manifest.has_tensor(name):
            raise WeightsError(f"the weights have no tensor {name!r}, which their config implies: {again}")
        actual = list(manifest.tensor(name).shape)
        if actual != shape:
            raise WeightsError(
                f"tensor {name} is {actual} but the weights' config makes it {shape}: the weights and "
                f"their config come from different models; {again}"
            )
    if manifest.has_tensor(f"flow_lm.transformer.layers.{layers}.norm1.weight"):
        raise WeightsError(f"the weights have more layers than their config's {layers}: {again}")


def _prod(values) -> int:
    out = 1
    for v in values:
        out *= v
    return out
