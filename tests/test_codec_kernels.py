"""The codec decoder's kernels, each alone against numpy (float64) on lavapipe.

Weights are packed as build_weights.py packs them (q8, f16 or f32) and the expected values use the
dequantised weights, so the bounds below measure the kernels' f32 arithmetic only.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import build_weights as bw
from phonon_web import codec_ops as ops
from phonon_web.gpu.door import Program
from phonon_web.gpu.shaders import kernel
from phonon_web.weights import TensorRef
from tests.gpu_helpers import download, run, upload, zeros

RNG = np.random.default_rng(1234)


# ---------------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------------
class Blob:
    """Tensors packed into one weights buffer exactly as build_weights.py stores them."""

    def __init__(self):
        self.pieces: list[bytes] = [b"\0" * 16]  # no tensor at word 0, as in real blobs
        self.offset = 16
        self.entries: dict[str, dict] = {}

    def add(self, name: str, array: np.ndarray, kind: str) -> None:
        array = np.asarray(array, np.float32)
        if kind == "q8":
            rows, cols = bw.as_rows(array.shape)
            q, scales = bw.quantize_q8(array.reshape(rows, cols))
            qbytes = q.tobytes()
            scales_at = bw._align(len(qbytes))
            parts = [qbytes, b"\0" * (scales_at - len(qbytes)), scales.astype("<f2").tobytes()]
            entry = dict(
                name=name,
                shape=list(array.shape),
                kind="q8",
                offset=0,
                scales_offset=scales_at,
                rows=rows,
                cols=cols,
                padded_cols=q.shape[1],
            )
        elif kind == "f16":
            half = np.zeros(array.size + array.size % 2, "<f2")
            half[: array.size] = array.reshape(-1)
            parts = [half.tobytes()]
            entry = dict(name=name, shape=list(array.shape), kind="f16", offset=0)
        else:
            parts = [array.astype("<f4").tobytes()]
            entry = dict(name=name, shape=list(array.shape), kind="f32", offset=0)
        entry["offset"] += self.offset
        if "scales_offset" in entry:
            entry["scales_offset"] += self.offset
        data = b"".join(parts)
        data += b"\0" * (-len(data) % 4)
        self.pieces.append(data)
        self.offset += len(data)
        self.entries[name] = entry

    @property
    def data(self) -> bytes:
        return b"".join(self.pieces)

    def ref(self, name: str) -> TensorRef:
        e = self.entries[name]
        shape = tuple(e["shape"])
        rows = shape[0] if len(shape) > 1 else 1
        cols = math.prod(shape[1:]) if len(shape) > 1 else math.prod(shape)
        q8 = e["kind"] == "q8"
        return TensorRef(
            name=name,
            part="mimi.",
            kind=e["kind"],
            shape=shape,
            rows=e["rows"] if q8 else rows,
            cols=e["cols"] if q8 else cols,
            padded_cols=e["padded_cols"] if q8 else cols,
            word=e["offset"] // 4,
            scales_word=e.get("scales_offset", 0) // 4,
        )

    def value(self, name: str) -> np.ndarray:
        """The tensor as the kernels see it (dequantised), float64."""
        return bw.dequantize(self.entries[name], self.data).astype(np.float64)

    def upload(self, door):
        return upload(door, np.frombuffer(self.data, np.uint32))


def state_buffer(door, *words):
    return upload(door, np.array(list(words) + [0] * (8 - len(words)), np.uint32))


def submit(door, launch: ops.Launch, frames: int) -> None:
    program = Program(launch.label)
    launch.encode(program, frames)
    door.submit([(program, 1)])


def gemm(
    door,
    blob,
    name,
    *,
    x,
    rows_per_frame,
    frames,
    cols,
    depth,
    options,
    fields,
    y_init=None,
    y_words=None,
    r=None,
    ring=None,
    state=None,
    splits=1,
    k_split=None,
    phases=1,
    loop_tiles=None,
):
    """Run one GEMM launch; returns the y buffer."""
    weights = blob.upload(door)
    y = upload(door, y_init.astype(np.float32)) if y_init is not None else zeros(door, 4 * y_words)
    scratch_words = splits * phases * rows_per_frame * frames * cols
    buffers = {
        "weights": weights,
        "x": upload(door, x.astype(np.float32)),
        "y": y,
        "r": upload(door, r.astype(np.float32)) if r is not None else zeros(door, 16),
        "ring": ring if ring is not None else zeros(door, 16),
        "state": state if state is not None else state_buffer(door),
        "scratch": zeros(door, 4 * scratch_words) if splits > 1 else None,
    }
    words = {"frame_word": 0, "end_word": ops.NO_WORD, "avail_word": ops.NO_WORD}
    launch = ops.gemm_launch(
        door,
        "test gemm",
        weight=blob.ref(name),
        buffers=buffers,
        rows_per_frame=rows_per_frame,
        chunk_sizes=(frames,),
        cols=cols,
        depth=depth,
        splits=splits,
        k_split=k_split or 32 * ((depth + 31) // 32),
        phases=phases,
        loop_tiles=loop_tiles,
        kernel_options=options,
        fields=dict(fields, **words),
    )
    submit(door, launch, frames)
    return y


def elu(v):
    return np.where(v > 0, v, np.expm1(np.minimum(v, 0)))


def gelu(v):
    return torch.nn.functional.gelu(torch.from_numpy(np.asarray(v, np.float64))).numpy()


# ---------------------------------------------------------------------------------------------------
# Element-wise maths
# ---------------------------------------------------------------------------------------------------
MATH_TEST = """
@group(0) @binding(0) var<storage, read> xs: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= arrayLength(&xs)) { return; }
    let v = xs[i];
    let sc = sin_cos(v * 300.0);
    out[5u * i] = elu(v);
    out[5u * i + 1u] = gelu_erf(v);
    out[5u * i + 2u] = sc.x;
    out[5u * i + 3u] = sc.y;
    out[5u * i + 4u] = gelu_tanh(v);
}
"""


def test_elu_gelu_and_rope_sin_cos(door, tmp_path):
    shader = tmp_path / "math_test.wgsl"
    shader.write_text(MATH_TEST)
    xs = np.concatenate([np.linspace(-9, 9, 4001), RNG.standard_normal(999) * 3]).astype(np.float32)
    out = zeros(door, 4 * 5 * xs.size)
    run(door, kernel("codec_math.wgsl", str(shader)), [upload(door, xs), out], (xs.size + 63) // 64)
    got = download(door, out).reshape(-1, 5).astype(np.float64)
    x = xs.astype(np.float64)
    angle = (xs * np.float32(300.0)).astype(np.float64)  # the f32 angle, as the kernel forms it
    np.testing.assert_allclose(got[:, 0], elu(x), atol=3e-7, rtol=1e-6)
    np.testing.assert_allclose(got[:, 1], gelu(x), atol=3e-7, rtol=1e-6)
    np.testing.assert_allclose(got[:, 2], np.sin(angle), atol=5e-7)  # |angle| up to 2700
    np.testing.assert_allclose(got[:, 3], np.cos(angle), atol=5e-7)
    tanh_gelu = torch.nn.functional.gelu(torch.from_numpy(x), approximate="tanh").numpy()
    np.testing.assert_allclose(got[:, 4], tanh_gelu, atol=1e-6, rtol=1e-5)


# ---------------------------------------------------------------------------------------------------
# GEMMs
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["q8", "f16", "f32"])
def test_linear_with_bias(door, kind):
    rows, cols, depth = 70, 90, 100  # nothing a multiple of the tile
    blob = Blob()
    blob.add("w", RNG.standard_normal((cols, depth)) * 0.1, kind)
    blob.add("b", RNG.standard_normal(cols) * 0.1, "f16" if kind != "f32" else "f32")
    x = RNG.standard_normal((rows, depth))
    y = gemm(
        door,
        blob,
        "w",
        x=x,
        rows_per_frame=rows,
        frames=1,
        cols=cols,
        depth=depth,
        options={},
        fields=dict(ops.vector_fields(blob.ref("b"), "bias"), dil=1, x_ld=depth, y_ld=cols, y_step=1),
        y_words=rows * cols,
    )
    want = x @ blob.value("w").T + blob.value("b")
    np.testing.assert_allclose(download(door, y).reshape(rows, cols), want, atol=2e-5)


def test_layernorm_prologue_and_gelu_epilogue(door):
    rows, cols, depth, context = 40, 64, 96, 6
    blob = Blob()
    blob.add("w", RNG.standard_normal((cols, depth)) * 0.2, "f32")
    blob.add("g", 1 + 0.1 * RNG.standard_normal(depth), "f32")
    blob.add("b", 0.1 * RNG.standard_normal(depth), "f32")
    x = RNG.standard_normal((context + rows, depth)) * 3 + 1.5
    fields = dict(
        ops.vector_fields(None, "bias"),
        dil=1,
        x_ld=depth,
        x_row0=context,
        y_ld=cols,
        y_step=1,
        ln_kind=2,
        ln_w=blob.ref("g").word,
        ln_b=blob.ref("b").word,
        eps=1e-5,
    )
    y = gemm(
        door,
        blob,
        "w",
        x=x,
        rows_per_frame=rows,
        frames=1,
        cols=cols,
        depth=depth,
        options={"ln": True, "epilogue": ops.EPI_GELU},
        fields=fields,
        y_words=rows * cols,
    )
    h = x[context:]
    normed = (h - h.mean(1, keepdims=True)) / np.sqrt(h.var(1, keepdims=True) + 1e-5)
    want = gelu((normed * blob.value("g") + blob.value("b")) @ blob.value("w").T)
    np.testing.assert_allclose(download(door, y).reshape(rows, cols), want, atol=2e-5)


def test_scaled_residual_epilogue(door):
    rows, cols, depth = 33, 48, 64
    blob = Blob()
    blob.add("w", RNG.standard_normal((cols, depth)) * 0.1, "f16")
    blob.add("s", 0.05 + 0.1 * RNG.random(cols), "f16")
    x = RNG.standard_normal((rows, depth))
    y0 = RNG.standard_normal((rows + 2, cols))
    fields = dict(
        ops.vector_fields(None, "bias"),
        **ops.vector_fields(blob.ref("s"), "vec"),
        dil=1,
        x_ld=depth,
        y_ld=cols,
        y_row0=2,
        y_step=1,
    )
    y = gemm(
        door,
        blob,
        "w",
        x=x,
        rows_per_frame=rows,
        frames=1,
        cols=cols,
        depth=depth,
        options={"epilogue": ops.EPI_SCALED},
        fields=fields,
        y_init=y0,
    )
    want = y0.copy()
    want[2:] += blob.value("s") * (x @ blob.value("w").T)
    np.testing.assert_allclose(download(door, y).reshape(rows + 2, cols), want, atol=2e-5)


@pytest.mark.parametrize("kind", ["q8", "f32"])
def test_conv_gathers_left_context_with_elu_and_residual(door, kind):
    cin, cout, taps, dil, rows = 24, 40, 3, 2, 50
    context = (taps - 1) * dil
    blob = Blob()
    blob.add("w", RNG.standard_normal((cout, cin, taps)) * 0.1, kind)  # Conv1d [out][in][taps], as stored
    blob.add("b", RNG.standard_normal(cout) * 0.1, "f32")
    x = RNG.standard_normal((context + rows, cin))
    res = RNG.standard_normal((3 + rows, cout))
    fields = dict(
        ops.vector_fields(blob.ref("b"), "bias"),
        dil=dil,
        x_ld=cin,
        y_ld=cout,
        y_row0=1,
        y_step=1,
        r_ld=cout,
        r_row0=3,
    )
    y = gemm(
        door,
        blob,
        "w",
        x=x,
        rows_per_frame=rows,
        frames=1,
        cols=cout,
        depth=cin * taps,
        options={"gather": True, "taps": taps, "elu_a": True, "epilogue": ops.EPI_RESIDUAL},
        fields=fields,
        y_words=(rows + 1) * cout,
        r=res,
    )
    # torch's causal conv over the whole input (context included), then the residual
    w = torch.from_numpy(blob.value("w"))
    conv = torch.nn.functional.conv1d(
        torch.from_numpy(elu(x)).T[None], w, torch.from_numpy(blob.value("b")), dilation=dil
    )[0].T.numpy()
    got = download(door, y).reshape(rows + 1, cout)[1:]
    np.testing.assert_allclose(got, res[3:] + conv, atol=2e-5)


@pytest.mark.parametrize("kind", ["q8", "f16"])
def test_transposed_conv_by_output_phases(door, kind):
    cin, cout, stride, rows = 20, 12, 5, 30
    blob = Blob()
    original = RNG.standard_normal((cin, cout, 2 * stride)) * 0.1  # ConvTranspose1d's [in][out][2s]
    blob.add("w", bw.convtr_phases("w", original, {}), kind)  # [s * out][in][2], as build_weights stores it
    blob.add("b", RNG.standard_normal(cout) * 0.1, "f16")
    x = RNG.standard_normal((1 + rows, cin))  # row 0: the previous chunk's last row
    fields = dict(
        ops.vector_fields(blob.ref("b"), "bias"), dil=1, x_ld=cin, y_ld=cout, y_row0=2, y_step=stride
    )
    y = gemm(
        door,
        blob,
        "w",
        x=x,
        rows_per_frame=rows,
        frames=1,
        cols=cout,
        depth=2 * cin,
        phases=stride,
        options={"gather": True, "taps": 2, "elu_a": True, "transposed": True},
        fields=fields,
        y_words=(2 + rows * stride) * cout,
    )
    full = torch.nn.functional.conv_transpose1d(
        torch.from_numpy(elu(x)).T[None],
        torch.from_numpy(phases_back(blob.value("w"), stride)),
        torch.from_numpy(blob.value("b")),
        stride=stride,
    )[0].T.numpy()
    want = full[stride : stride * (rows + 1)]  # the outputs of rows 1.., trimmed on the right
    got = download(door, y).reshape(-1, cout)[2:]
    np.testing.assert_allclose(got, want, atol=2e-5)


def phases_back(stored: np.ndarray, stride: int) -> np.ndarray:
    """The ConvTranspose1d weight [in][out][2s] that a [s * out][in][2] phase-order weight came from."""
    rows, cin, _ = stored.shape
    cout = rows // stride
    w = np.empty((cin, cout, 2 * stride), stored.dtype)
    for p in range(stride):
        w[:, :, p + stride] = stored[p * cout : (p + 1) * cout, :, 0].T
        w[:, :, p] = stored[p * cout : (p + 1) * cout, :, 1].T
    return w


def test_convtr_phases_round_trips():
    w = RNG.standard_normal((6, 4, 8)).astype(np.float32)
    stored = bw.convtr_phases("w", w, {})
    assert stored.shape == (16, 6, 2)
    np.testing.assert_array_equal(phases_back(stored, 4), w)


def test_split_k_sums_in_the_same_order_for_every_chunk_size(door):
    cols, depth, rows_per_frame = 72, 200, 16
    blob = Blob()
    blob.add("w", RNG.standard_normal((cols, depth)) * 0.1, "q8")
    blob.add("b", RNG.standard_normal(cols) * 0.1, "f16")
    x = RNG.standard_normal((rows_per_frame * 4, depth))
    fields = dict(ops.vector_fields(blob.ref("b"), "bias"), dil=1, x_ld=depth, y_ld=cols, y_step=1)
    outs = {}
    for key, frames, loop_tiles in ((1, 1, None), (4, 4, None), ("4 looped", 4, 1)):
        y = gemm(
            door,
            blob,
            "w",
            x=x,
            rows_per_frame=rows_per_frame,
            frames=frames,
            cols=cols,
            depth=depth,
            options={"epilogue": ops.EPI_GELU},
            fields=fields,
            y_words=rows_per_frame * 4 * cols,
            splits=3,
            k_split=96,
            loop_tiles=loop_tiles,
        )
        outs[key] = download(door, y).reshape(-1, cols)
    want = gelu(x @ blob.value("w").T + blob.value("b"))
    np.testing.assert_allclose(outs[4], want, atol=2e-5)
    np.testing.assert_array_equal(outs[1][:rows_per_frame], outs[4][:rows_per_frame])
    # the same splits summed inside each tile's workgroup (K = 96 + 96 + 8: the last split is short)
    np.testing.assert_array_equal(outs["4 looped"], outs[4])
    # the full codec's first conv at 1 frame: 8 tiles of output, K = 3584 in 19 splits of 192
    splits, k_split = ops.split_plan(16, 512, 3584, 1, 160)
    assert (splits, k_split) == (19, 192) and (splits - 1) * k_split < 3584 <= splits * k_split
    assert ops.split_plan(16, 512, 3584, 1, 1) == (1, 3584)
    assert ops.split_plan(16, 512, 256, 1, 160) == (2, 128)  # at least 4 steps of K per split


def test_qkv_epilogue_rotates_and_fills_the_ring(door):
    heads, head_dim, rows_per_frame, frames, start, ring_size = 2, 16, 4, 3, 7, 16
    hidden = heads * head_dim
    rows = rows_per_frame * frames
    blob = Blob()
    blob.add("w", RNG.standard_normal((3 * hidden, hidden)) * 0.2, "f32")
    x = RNG.standard_normal((rows, hidden))
    ring = zeros(door, 4 * 2 * ring_size * hidden)
    inv = ops.rope_inverse_frequencies(head_dim, 10000.0)
    fields = dict(
        ops.vector_fields(None, "bias"),
        dil=1,
        x_ld=hidden,
        y_ld=hidden,
        rows_per_frame=rows_per_frame,
        hidden=hidden,
        head_dim=head_dim,
        ring_size=ring_size,
        ring_k=0,
        ring_v=ring_size * hidden,
        inv_freq=inv,
    )
    q = gemm(
        door,
        blob,
        "w",
        x=x,
        rows_per_frame=rows_per_frame,
        frames=frames,
        cols=3 * hidden,
        depth=hidden,
        options={"epilogue": ops.EPI_QKV},
        fields=fields,
        y_words=rows * hidden,
        ring=ring,
        state=state_buffer(door, start),
    )
    qkv = x @ blob.value("w").T
    # The reference: rows from interleaved pairs to halves, then Transformers' rotate-half RoPE.
    from transformers.models.pocket_tts_audio_tokenizer.modeling_pocket_tts_audio_tokenizer import (
        apply_rotary_pos_emb,
    )

    from tests.reference.checkpoint import interleaved_to_halves

    pos = rows_per_frame * start + np.arange(rows)
    angles = torch.from_numpy(pos[:, None] * np.array(inv)[None]).float()
    emb = torch.cat([angles, angles], -1)
    halves = lambda t: interleaved_to_halves(torch.from_numpy(t.T).contiguous(), heads).T  # noqa: E731
    qh, kh = halves(qkv[:, :hidden]), halves(qkv[:, hidden : 2 * hidden])
    shape = (1, rows, heads, head_dim)
    q_ref, k_ref = apply_rotary_pos_emb(
        qh.reshape(shape).transpose(1, 2), kh.reshape(shape).transpose(1, 2), emb.cos()[None], emb.sin()[None]
    )
    to_rows = lambda t: t.transpose(1, 2).reshape(rows, hidden).numpy()  # noqa: E731
    got_q = download(door, q).reshape(rows, hidden)
    kv = download(door, ring).reshape(2, ring_size, hidden)[:, pos % ring_size]
    back = lambda t: interleaved_to_halves(torch.from_numpy(t.T).contiguous(), heads).T.numpy()  # noqa: E731
    np.testing.assert_allclose(back(got_q), to_rows(q_ref), atol=2e-5)
    np.testing.assert_allclose(back(kv[0]), to_rows(k_ref), atol=2e-5)
    np.testing.assert_allclose(kv[1], qkv[:, 2 * hidden :], atol=2e-5)


# ---------------------------------------------------------------------------------------------------
# Attention, upsampling, audio, shift
# ---------------------------------------------------------------------------------------------------
# (head_dim, window, ring_size, rows_per_frame): the second has a head of 3 vec4s (the passes load 4
# rows at a time: a partial turn) and windows of up to 100 keys (several turns of the value pass); the
# workgroups take 4 rows each, except in the third (2: rows_per_frame 6) and the fifth (1:
# rows_per_frame 3); in the fourth a window of 255 keys makes a group's span 258 (KEYS_MAX 512)
@pytest.mark.parametrize(
    "shape", [(16, 20, 32, 4), (12, 100, 256, 16), (8, 30, 64, 6), (16, 255, 512, 4), (8, 20, 64, 3)]
)
@pytest.mark.parametrize("start", [0, 9])
def test_windowed_attention_over_the_ring(door, start, shape):
    head_dim, window, ring_size, rows_per_frame = shape
    heads, frames = 2, 3
    hidden, rows = heads * head_dim, rows_per_frame * frames
    positions = rows_per_frame * (start + frames)  # keys exist for every position before the chunk's end
    keys = RNG.standard_normal((positions, hidden))
    values = RNG.standard_normal((positions, hidden))
    ring = np.zeros((2, ring_size, hidden))
    for pos in range(positions):
        ring[0, pos % ring_size], ring[1, pos % ring_size] = keys[pos], values[pos]
    q = RNG.standard_normal((rows, hidden))
    out = zeros(door, 4 * rows * hidden)
    params = ops.uniform(
        door,
        "codec_attention.wgsl",
        "test",
        rows=rows,
        hidden=hidden,
        window=window,
        ring_size=ring_size,
        ring_k=0,
        ring_v=ring_size * hidden,
        rows_per_frame=rows_per_frame,
        scale=head_dim**-0.5,
        frame_word=1,
        end_word=ops.NO_WORD,
        avail_word=ops.NO_WORD,
    )
    buffers = [
        params,
        upload(door, q.astype(np.float32)),
        upload(door, ring.astype(np.float32)),
        out,
        state_buffer(door, 0, start),
    ]
    group = ops.attention_rows(rows_per_frame)
    kernel = ops.attention_kernel(ops.attention_keys_max(window, group), head_dim, group)
    run(door, kernel, buffers, (rows // group, heads))
    got = download(door, out).reshape(rows, hidden)
    want = np.zeros((rows, hidden))
    for m in range(rows):
        pos = rows_per_frame * start + m
        seen = np.arange(max(0, pos - window + 1), pos + 1)  # 0 <= pos - key < window
        for h in range(heads):
            cols = slice(h * head_dim, (h + 1) * head_dim)
            s = keys[seen, cols] @ q[m, cols] / math.sqrt(head_dim)
            p = np.exp(s - s.max())
            want[m, cols] = (p / p.sum()) @ values[seen, cols]
    np.testing.assert_allclose(got, want, atol=2e-6)


def test_upsample_projects_and_reads_the_previous_frame(door):
    hidden, latent_dim, stride, frames, start = 24, 32, 4, 3, 2
    blob = Blob()
    blob.add("proj", RNG.standard_normal((hidden, latent_dim, 1)) * 0.2, "q8")
    blob.add("up", RNG.standard_normal((hidden, 1, 2 * stride)) * 0.2, "f16")
    latents = RNG.standard_normal((8, latent_dim))
    context = 3
    out = zeros(door, 4 * (context + frames * stride) * hidden)
    proj, up = blob.ref("proj"), blob.ref("up")
    params = ops.uniform(
        door,
        "codec_upsample.wgsl",
        "test",
        frames=frames,
        hidden=hidden,
        latent_dim=latent_dim,
        stride=stride,
        proj_kind=proj.kind_code,
        proj_word=proj.word,
        proj_scales=proj.scales_word,
        proj_padded=proj.padded_cols,
        up_kind=up.kind_code,
        up_word=up.word,
        up_scales=up.scales_word,
        up_padded=up.padded_cols,
        lat_word=latent_dim,
        lat_ld=latent_dim,
        max_frames=4,
        y_row0=context,
        frame_word=0,
        end_word=ops.NO_WORD,
        avail_word=ops.NO_WORD,
    )
    stored = np.vstack([np.zeros((1, latent_dim)), latents])  # the take starts at word lat_word
    buffers = [
        params,
        blob.upload(door),
        upload(door, stored.astype(np.float32)),
        out,
        state_buffer(door, start),
    ]
    run(door, ops.upsample_kernel(), buffers, (frames * hidden + 63) // 64)
    got = download(door, out).reshape(-1, hidden)[context:]
    h = latents[:4] @ blob.value("proj")[:, :, 0].T  # frames past max_frames (4) read as zeros
    h = np.vstack([h, np.zeros((4, hidden))])
    w = blob.value("up")[:, 0]
    want = np.zeros((frames * stride, hidden))
    for f in range(frames):
        for t in range(stride):
            want[f * stride + t] = w[:, t] * h[start + f] + w[:, t + stride] * h[start + f - 1]
    np.testing.assert_allclose(got, want, atol=2e-5)


@pytest.mark.parametrize("start", [0, 1])
def test_audio_out_conv_bias_and_fade_in(door, start):
    cin, taps, spf, frames, fade = 8, 3, 100, 2, 120
    blob = Blob()
    blob.add("w", RNG.standard_normal((1, cin, taps)) * 0.3, "f16")
    blob.add("b", np.array([0.25]), "f16")
    rows = spf * frames
    x = RNG.standard_normal((taps - 1 + rows, cin))
    audio = upload(door, np.full(spf * 4, 7.0, np.float32))
    w, b = blob.ref("w"), blob.ref("b")
    params = ops.uniform(
        door,
        "codec_audio_out.wgsl",
        "test",
        rows=rows,
        cin=cin,
        taps=taps,
        dil=1,
        w_kind=w.kind_code,
        w_word=w.word,
        w_scales=0,
        w_padded=w.padded_cols,
        **ops.vector_fields(b, "bias"),
        samples_per_frame=spf,
        max_samples=spf * 4,
        fade_samples=fade,
        frame_word=0,
        end_word=ops.NO_WORD,
        avail_word=ops.NO_WORD,
    )
    buffers = [
        params,
        blob.upload(door),
        upload(door, x.astype(np.float32)),
        audio,
        state_buffer(door, start),
    ]
    run(door, ops.audio_out_kernel(), buffers, ops.ceil_div(rows, ops.AUDIO_OUT_SAMPLES))
    conv = torch.nn.functional.conv1d(
        torch.from_numpy(elu(x)).T[None], torch.from_numpy(blob.value("w")), torch.from_numpy(blob.value("b"))
    )[0, 0].numpy()
    ramp = np.ones(spf * 4)
    ramp[:fade] = torch.linspace(0, 1, fade).numpy()
    want = np.full(spf * 4, 7.0)
    want[start * spf : (start + frames) * spf] = conv * ramp[start * spf : (start + frames) * spf]
    np.testing.assert_allclose(download(door, audio), want, atol=2e-6)


def test_shift_moves_contexts_and_the_counter_and_skips_past_the_end(door):
    arenas = [np.arange(100, dtype=np.float32), -np.arange(100, dtype=np.float32)]
    buffers = [upload(door, a) for a in arenas]
    # region A: arena 0 from word 10, context 4 words, chunk 20 words; region B: arena 1 from 50, 2, 30
    jobs = [0, 10, 4, 20, 1, 50, 2, 30]
    words = dict(frame_word=1, end_word=2, avail_word=ops.NO_WORD)
    shift = ops.uniform(door, "codec_shift.wgsl", "t", regions=2, frames=3, jobs=jobs, **words)
    reset = ops.uniform(
        door, "codec_shift.wgsl", "t", regions=2, frames=0, jobs=[0, 10, 4, 0, 1, 50, 2, 0], **words
    )
    state = state_buffer(door, 0, 5, 6)

    run(door, ops.shift_kernel(False), [shift, *buffers, state], 1)
    a, b = download(door, buffers[0]), download(door, buffers[1])
    np.testing.assert_array_equal(a[10:14], arenas[0][30:34])
    np.testing.assert_array_equal(b[50:52], arenas[1][80:82])
    np.testing.assert_array_equal(np.delete(a, range(10, 14)), np.delete(arenas[0], range(10, 14)))
    assert download(door, state, np.uint32)[:3].tolist() == [0, 8, 6]

    run(door, ops.shift_kernel(False), [shift, *buffers, state], 1)  # frame 8 >= end 6: nothing happens
    np.testing.assert_array_equal(download(door, buffers[0]), a)
    assert download(door, state, np.uint32)[:3].tolist() == [0, 8, 6]

    run(door, ops.shift_kernel(True), [reset, *buffers, state], 1)
    a, b = download(door, buffers[0]), download(door, buffers[1])
    assert (a[10:14] == 0).all() and (b[50:52] == 0).all() and a[14] == 14
    assert download(door, state, np.uint32)[:3].tolist() == [0, 0, 6]


def test_params_follow_the_wgsl_struct():
    layout = ops.struct_layout("codec_gemm.wgsl")
    names = [f.name for f in layout]
    assert names[:3] == ["rows", "cols", "depth"] and names[-1] == "inv_freq"
    assert layout[-1].offset % 4 == 0 and layout[-1].count == 64
    data = ops.pack_struct("codec_gemm.wgsl", rows=5, eps=0.5, inv_freq=[1.0, 2.0])
    words = np.frombuffer(data, np.uint32)
    assert words[0] == 5 and len(data) % 16 == 0
    assert np.frombuffer(data, np.float32)[names.index("eps")] == 0.5
    assert np.frombuffer(data, np.float32)[layout[-1].offset + 1] == 2.0
    with pytest.raises(KeyError, match="no field"):
        ops.pack_struct("codec_gemm.wgsl", nonsense=1)


def test_shift_moves_a_context_longer_than_its_workgroup(door):
    """A context of many more values than codec_shift.wgsl's 256 invocations: several turns each,
    the last one partial, and the rows after the context untouched."""
    context, chunk = 5000, 6000
    arena = np.arange(context + chunk, dtype=np.float32)
    buffers = [upload(door, arena), upload(door, np.zeros(4, np.float32))]
    words = dict(frame_word=1, end_word=ops.NO_WORD, avail_word=ops.NO_WORD)
    shift = ops.uniform(
        door, "codec_shift.wgsl", "t", regions=1, frames=2, jobs=[0, 0, context, chunk], **words
    )
    state = state_buffer(door, 0, 3)
    run(door, ops.shift_kernel(False), [shift, *buffers, state], 1)
    got = download(door, buffers[0])
    np.testing.assert_array_equal(got[:context], arena[chunk : chunk + context])
    np.testing.assert_array_equal(got[context:], arena[context:])
    assert download(door, state, np.uint32)[1] == 5
