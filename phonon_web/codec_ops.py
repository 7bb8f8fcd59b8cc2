"""The codec decoder's kernels seen from Python: how each is specialised, its parameters, its launches.

Pure Python (no numpy): this runs in Pyodide. `codec.py` puts these pieces together into the decoder.

Every kernel's uniform is a flat `struct Params` of 4-byte scalars (and, at the end, arrays of vec4).
The field order is read from the WGSL file itself (`struct_layout`), and parameters are given by
name, so Python and WGSL cannot drift apart silently.

All kernels of a chunk read the chunk's first frame from the engine's state buffer (`codec_chunk.wgsl`),
so one prebuilt program per chunk size serves every chunk of every take.
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass, field
from functools import cache

from .gpu.door import UNIFORM, Door, Program
from .gpu.shaders import kernel, read_wgsl
from .weights import TensorRef

NO_WORD = 0xFFFFFFFF  # "no such state word" in a kernel's frame/end/available fields
NO_TENSOR = 3  # a kind code meaning "no tensor" (no bias, no scale)
TILE = 64  # the GEMM's output tile, both ways
K_STEP = 32  # the GEMM's step along K
AUDIO_OUT_SAMPLES = 16  # samples a workgroup of codec_audio_out.wgsl makes

EPI_STORE, EPI_GELU, EPI_SCALED, EPI_RESIDUAL, EPI_QKV = range(5)

_STRUCT = re.compile(r"struct\s+Params\s*\{(.*?)\}", re.S)
_FIELD = re.compile(r"(\w+)\s*:\s*(u32|i32|f32|array<\s*vec4<\s*(u32|f32)\s*>\s*,\s*(\d+)\s*>)\s*,")


@dataclass(frozen=True)
class Field:
    name: str
    scalar: str  # "u32", "i32" or "f32"
    count: int  # 1 for a scalar; 4 * N for array<vec4<...>, N>
    offset: int  # in 4-byte words


@cache
def struct_layout(wgsl_file: str) -> tuple[Field, ...]:
    """The fields of `struct Params` in a kernel file, in order, with their word offsets."""
    match = _STRUCT.search(re.sub(r"//[^\n]*", "", read_wgsl(wgsl_file)))
    if match is None:
        raise ValueError(f"{wgsl_file} declares no struct Params")
    fields, offset = [], 0
    for name, kind, array_scalar, array_len in _FIELD.findall(match.group(1)):
        if array_len:
            if offset % 4:
                raise ValueError(f"{wgsl_file}: array {name} must start at a multiple of 16 bytes")
            fields.append(Field(name, array_scalar, 4 * int(array_len), offset))
            offset += 4 * int(array_len)
        else:
            fields.append(Field(name, kind, 1, offset))
            offset += 1
    return tuple(fields)


def pack_struct(wgsl_file: str, **values) -> bytes:
    """The bytes of `wgsl_file`'s Params with the named values (others zero), padded to 16 bytes."""
    layout = struct_layout(wgsl_file)
    known = {f.name for f in layout}
    unknown = set(values) - known
    if unknown:
        raise KeyError(f"{wgsl_file}: Params has no field {', '.join(sorted(unknown))}")
    out = bytearray()
    for f in layout:
        value = values.get(f.name, () if f.count > 1 else 0)
        items = list(value) if f.count > 1 else [value]
        if len(items) > f.count:
            raise ValueError(f"{wgsl_file}: {f.name} holds {f.count} values, not {len(items)}")
        items += [0] * (f.count - len(items))
        code = {"u32": "<I", "i32": "<i", "f32": "<f"}[f.scalar]
        for item in items:
            out += struct.pack(code, float(item) if f.scalar == "f32" else int(item))
    out += b"\0" * (-len(out) % 16 or (16 if not out else 0))
    return bytes(out)


def uniform(door: Door, wgsl_file: str, label: str, **values):
    """A uniform buffer holding `wgsl_file`'s Params, written once."""
    data = pack_struct(wgsl_file, **values)
    buffer = door.buffer(len(data), UNIFORM, label)
    door.write(buffer, 0, data)
    return buffer


def rope_inverse_frequencies(head_dim: int, theta: float) -> list[float]:
    """1 / theta ** (2j / head_dim) rounded to f32 as the reference computes it (checked equal to
    torch's inv_freq for the model's sizes)."""
    f32 = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]  # noqa: E731
    return [f32(1.0 / f32(theta ** (2 * j / head_dim))) for j in range(head_dim // 2)]


# ---------------------------------------------------------------------------------------------------
# The kernels
# ---------------------------------------------------------------------------------------------------
GEMM_FILES = ("weights.wgsl", "codec_math.wgsl", "codec_chunk.wgsl", "codec_gemm.wgsl")


def gemm_kernel(
    wkind: int,
    *,
    gather: bool = False,
    elu_a: bool = False,
    ln: bool = False,
    transposed: bool = False,
    epilogue: int = EPI_STORE,
    split: bool = False,
    split_loop: bool = False,
    gelu_tanh: bool = False,
    taps: int = 1,
    entry: str = "main",
):
    return kernel(
        *GEMM_FILES,
        entry=entry,
        WKIND=wkind,
        GATHER=gather,
        TAPS=taps if gather else 1,  # a constant, so that the gathers divide by a constant
        ELU_A=elu_a,
        LN=ln,
        TRANSPOSED=transposed,
        EPI=epilogue,
        SPLIT=split,
        SPLIT_LOOP=split_loop,
        GELU_TANH=gelu_tanh,
    )


def attention_rows(rows_per_frame: int) -> int:
    """Rows a workgroup of codec_attention.wgsl takes: 4 (sharing each key and value they load) where
    that divides rows_per_frame, so that groups start at the same positions whichever chunk holds them."""
    return math.gcd(4, rows_per_frame)


def attention_keys_max(window: int, rows: int) -> int:
    """The most keys a workgroup's rows see together (window + rows - 1), rounded up to 256."""
    return ceil_div(window + rows - 1, 256) * 256


def attention_kernel(keys_max: int, head_dim: int, rows: int = 1):
    return kernel(
        "codec_math.wgsl",
        "codec_chunk.wgsl",
        "codec_attention.wgsl",
        KEYS_MAX=keys_max,
        HEAD_DIM=head_dim,
        ROWS=rows,
    )


def upsample_kernel():
    return kernel("weights.wgsl", "codec_chunk.wgsl", "codec_upsample.wgsl")


def audio_out_kernel():
    return kernel("weights.wgsl", "codec_math.wgsl", "codec_chunk.wgsl", "codec_audio_out.wgsl")


def shift_kernel(reset: bool):
    return kernel("codec_chunk.wgsl", "codec_shift.wgsl", RESET=reset)


def split_plan(
    rows: int, cols: int, depth: int, phases: int, target: int, min_steps: int = 4
) -> tuple[int, int]:
    """(splits, K per split) for a GEMM whose smallest chunk has `rows` rows: K is split until about
    `target` workgroups run, keeping at least `min_steps` steps of K per split. Chosen once per layer,
    from the smallest chunk, so that every chunk size sums in the same order."""
    steps = -(-depth // K_STEP)
    tiles = -(-rows // TILE) * -(-cols // TILE) * phases
    splits = max(1, min(-(-target // tiles), steps // min_steps)) if target > tiles else 1
    per_split = -(-steps // splits)
    splits = -(-steps // per_split)
    return splits, per_split * K_STEP


def weight_fields(ref: TensorRef, prefix: str = "w") -> dict[str, int]:
    """A matrix's offsets for a kernel's `{prefix}_word`, `_scales`, `_cols`, `_padded` fields."""
    return {
        f"{prefix}_word": ref.word,
        f"{prefix}_scales": ref.scales_word,
        f"{prefix}_cols": ref.cols,
        f"{prefix}_padded": ref.padded_cols,
    }


def vector_fields(ref: TensorRef | None, prefix: str) -> dict[str, int]:
    if ref is None:
        return {f"{prefix}_kind": NO_TENSOR, f"{prefix}_word": 0}
    return {f"{prefix}_kind": ref.kind_code, f"{prefix}_word": ref.word}


# ---------------------------------------------------------------------------------------------------
# Launches: one object per kernel launch of the decoder, with a uniform per chunk size
# ---------------------------------------------------------------------------------------------------
@dataclass
class Launch:
    """A kernel launched once per chunk (maybe with a split-K reduction after it)."""

    label: str
    steps: dict[int, list[tuple]] = field(default_factory=dict)  # frames -> [(pipeline, group, x, y, z)]

    def encode(self, program: Program, frames: int) -> None:
        for pipeline, group, x, y, z in self.steps[frames]:
            program.dispatch(pipeline, group, x, y, z)


def gemm_launch(
    door: Door,
    label: str,
    *,
    weight: TensorRef,
    buffers: dict,
    rows_per_frame: int,
    chunk_sizes: tuple[int, ...],
    cols: int,
    depth: int,
    splits: int,
    k_split: int,
    phases: int = 1,
    loop_tiles: int | None = None,
    kernel_options: dict,
    fields: dict,
) -> Launch:
    """A GEMM launch (and its split-K reduction when `splits` > 1). `buffers` maps weights, x, y, r,
    ring, state (and scratch when split) to bindings; `fields` are the Params that do not depend on the
    chunk size. A split GEMM whose chunk has `loop_tiles` output tiles (x phases) or more runs its
    splits inside each tile's workgroup instead (SPLIT_LOOP: the same sums, one dispatch)."""
    order = ("weights", "x", "y", "r", "ring", "state")
    split = splits > 1
    main = door.pipeline(gemm_kernel(weight.kind_code, split=split, **kernel_options))
    main_buffers = [(dict(buffers, y=buffers["scratch"]) if split else buffers)[name] for name in order]
    if split:
        reduce = door.pipeline(gemm_kernel(weight.kind_code, entry="reduce", **kernel_options))
        reduce_buffers = [dict(buffers, x=buffers["scratch"])[name] for name in order]
    looped = None  # the SPLIT_LOOP pipeline, made when a chunk size first needs it
    launch = Launch(label)
    for frames in chunk_sizes:
        rows = rows_per_frame * frames
        tiles = ceil_div(cols, TILE) * ceil_div(rows, TILE) * phases
        loop = split and loop_tiles is not None and tiles >= loop_tiles
        params = uniform(
            door,
            "codec_gemm.wgsl",
            f"{label} F={frames}",
            rows=rows,
            cols=cols,
            depth=depth,
            k_split=k_split,
            splits=splits,
            phases=phases,
            **weight_fields(weight),
            **fields,
        )
        if loop:
            if looped is None:
                looped = door.pipeline(gemm_kernel(weight.kind_code, split_loop=True, **kernel_options))
            group = door.bind_group(looped, [params] + [buffers[name] for name in order])
            launch.steps[frames] = [(looped, group, ceil_div(cols, TILE), ceil_div(rows, TILE), phases)]
            continue
        group = door.bind_group(main, [params] + main_buffers)
        steps = [(main, group, ceil_div(cols, TILE), ceil_div(rows, TILE), splits * phases)]
        if split:
            group = door.bind_group(reduce, [params] + reduce_buffers)
            steps.append((reduce, group, ceil_div(rows * ceil_div(cols, 4), 256), 1, phases))
        launch.steps[frames] = steps
    return launch


def one_shot_launch(door: Door, label: str, pipeline, buffers: list, per_frames: dict[int, tuple]) -> Launch:
    """A launch whose bind group differs per chunk size only by its uniform (binding 0).
    `per_frames[frames] = (params_buffer, x, y, z)`."""
    launch = Launch(label)
    for frames, (params, x, y, z) in per_frames.items():
        launch.steps[frames] = [(pipeline, door.bind_group(pipeline, [params] + buffers), x, y, z)]
    return launch


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def next_pow2(n: int) -> int:
    return 1 << max(0, math.ceil(math.log2(max(1, n))))
