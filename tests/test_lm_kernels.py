"""Each language-model kernel alone against numpy, on lavapipe (subgroup size 8) with and without
subgroups: gemv (q8/f16/f32, its prologues and epilogues, a feed-forward block in one dispatch and the
exact sums it leaves), the split attention and its merge, RoPE and
the KV writes (f16 and f32 caches), the prefill's kernels, the condition vector, the time embedding,
the noise against its Python twin, the end-of-speech decision, the gates and the state advance.

Tolerances: the kernels compute in f32 like numpy's float64 reference rounded to f32 inputs; sums of
a few hundred to a few thousand products differ by about 1e-6 relative. Weights are compared against
their own dequantised values (what build_weights stores), so q8 costs no tolerance here. f16 caches
round keys and values to f16 (2^-11 relative), hence the looser bound there.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

import build_weights as bw
from phonon_web import lm_ops as ops
from phonon_web.gpu.door import Program
from phonon_web.lm import STATE, noise, rope_table
from phonon_web.weights import TensorRef
from tests.gpu_helpers import download, upload, zeros

WGSL = Path(__file__).resolve().parents[1] / "wgsl"


# ---------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------
@pytest.fixture(params=["subgroups", "shared"])
def any_door(request, door, door_without_subgroups):
    """Both reduction paths: subgroups (lavapipe's size is 8) and workgroup memory only."""
    if request.param == "subgroups":
        assert "subgroups" in door.features
        return door
    return door_without_subgroups


def make_blob(door, tensors: dict[str, tuple[np.ndarray, str]]):
    """Tensors packed as build_weights stores them (q8 / f16 / f32), uploaded as one weights buffer.
    Returns (buffer, TensorRefs, dequantised values)."""
    pieces, entries, offset = [b"\0" * 16], {}, 16  # tensors do not start at word 0 in real blobs
    for name, (array, kind) in tensors.items():
        array = np.asarray(array, np.float32)
        if kind == "q8":
            rows, cols = bw.as_rows(array.shape)
            q, scales = bw.quantize_q8(array.reshape(rows, cols))
            data = q.tobytes()
            scales_at = bw._align(len(data))
            parts = [data, b"\0" * (scales_at - len(data)), scales.astype("<f2").tobytes()]
            entry = dict(kind="q8", scales_offset=scales_at, rows=rows, cols=cols, padded_cols=q.shape[1])
        elif kind == "f16":
            half = np.zeros(array.size + array.size % 2, "<f2")
            half[: array.size] = array.reshape(-1)
            parts, entry = [half.tobytes()], dict(kind="f16")
        else:
            parts, entry = [array.astype("<f4").tobytes()], dict(kind="f32")
        size = sum(len(p) for p in parts)
        entry.update(name=name, shape=list(array.shape), offset=offset, bytes=size)
        if "scales_offset" in entry:
            entry["scales_offset"] += offset
        pad = bw._align(size) - size
        pieces += parts + [b"\0" * pad]
        offset += size + pad
        entries[name] = entry
    blob = b"".join(pieces)
    refs, values = {}, {}
    for name, e in entries.items():
        values[name] = bw.dequantize(e, blob).astype(np.float64)
        shape = tuple(e["shape"])
        q8 = e["kind"] == "q8"
        rows = e["rows"] if q8 else (shape[0] if len(shape) > 1 else 1)
        cols = e["cols"] if q8 else int(np.prod(shape[1:] if len(shape) > 1 else shape))
        refs[name] = TensorRef(
            name,
            "flow_lm.",
            e["kind"],
            shape,
            rows,
            cols,
            e.get("padded_cols", cols),
            e["offset"] // 4,
            e.get("scales_offset", 0) // 4,
        )
    return upload(door, np.frombuffer(blob, np.uint32)), refs, values


def make_state(door, **words):
    state = np.zeros(16, np.uint32)
    for name, value in words.items():
        state[STATE[name]] = np.float32(value).view(np.uint32) if isinstance(value, float) else value
    return upload(door, state)


def submit(door, build):
    program = Program("test")
    build(program)
    door.submit([(program, 1)])


def layer_norm(x, w=None, b=None, eps=1e-5):
    y = (x - x.mean()) / np.sqrt(x.var() + eps)
    return y if w is None else y * w + b


def gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def silu(x):
    return x / (1 + np.exp(-x))


def rel(got, want):
    return float(np.abs(np.asarray(got, np.float64) - want).max() / max(np.abs(want).max(), 1e-30))


def rotate_pairs(v, pos, head_dim):
    """RoPE on interleaved pairs (2j, 2j+1) of each head, with lm.rope_table's angles."""
    table = np.asarray(rope_table(pos + 1, head_dim), np.float64).reshape(pos + 1, head_dim // 2, 2)[pos]
    c, s = np.tile(table[:, 0], len(v) // head_dim), np.tile(table[:, 1], len(v) // head_dim)
    a, b = v[0::2], v[1::2]
    out = np.empty_like(v)
    out[0::2], out[1::2] = a * c - b * s, b * c + a * s
    return out


# ---------------------------------------------------------------------------------------------------
# the state table
# ---------------------------------------------------------------------------------------------------
def test_state_words_match_lm_state_wgsl():
    text = (WGSL / "lm_state.wgsl").read_text()
    consts = {m[0].lower(): int(m[1]) for m in re.findall(r"const S_(\w+): u32 = (\d+)u;", text)}
    assert consts == STATE


# ---------------------------------------------------------------------------------------------------
# gemv.wgsl
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "k, lanes",
    # 512 and 2048 are the model's widths; 200 pads its q8 rows; 2560 is too long for the early
    # loads of the input (the late path), and for the rows' at 32 lanes; 8 and 16 lanes a row take 2
    # to 16 turns each; 64 and 128 lanes take rows of 2048 and 2560 in two turns, and rows of 512 with
    # lanes to spare (they read nothing)
    [(512, 32), (200, 32), (2048, 32), (2560, 32), (512, 16), (200, 8), (2048, 8), (2048, 64),
     (2560, 128), (512, 64)],
)
def test_gemv_segments_of_every_kind_with_layernorm_and_gelu(any_door, k, lanes):
    rng = np.random.default_rng(k)
    blob, refs, w = make_blob(
        any_door,
        {
            "a": (rng.standard_normal((40, k)) * 0.1, "q8"),
            "b": (rng.standard_normal((24, k)) * 0.1, "f16"),
            "c": (rng.standard_normal((9, k)) * 0.1, "f32"),
            "a_bias": (rng.standard_normal(40), "f16"),
            "c_bias": (rng.standard_normal(9), "f32"),
            "ln_w": (1 + 0.1 * rng.standard_normal(k), "f16"),
            "ln_b": (0.1 * rng.standard_normal(k), "f16"),
        },
    )
    kern = ops.LmKernels(any_door, blob)
    x = (rng.standard_normal(k) * 2 + 0.5).astype(np.float32)
    src, dst = upload(any_door, np.concatenate([np.zeros(3, np.float32), x])), zeros(any_door, 4 * 80)
    segments = [
        ops.Segment(refs["a"], refs["a_bias"]),
        ops.Segment(refs["b"]),
        ops.Segment(refs["c"], refs["c_bias"]),
    ]
    submit(
        any_door,
        lambda p: kern.gemv(
            p,
            segments,
            prologue=ops.P_LAYERNORM,
            epilogue=ops.E_GELU,
            state=make_state(any_door),
            src=src,
            dst=dst,
            src_offset=3,
            dst_offset=5,
            lanes=lanes,
            **ops.ln_fields(refs["ln_w"], refs["ln_b"], 1e-5),
        ),
    )
    xn = layer_norm(x.astype(np.float64), w["ln_w"], w["ln_b"])
    y = np.concatenate([w["a"], w["b"], w["c"]]) @ xn + np.concatenate(
        [w["a_bias"], np.zeros(24), w["c_bias"]]
    )
    got = download(any_door, dst, count=80)
    assert rel(got[5:78], gelu(y)) < 2e-6
    assert (got[:5] == 0).all() and (got[78:] == 0).all()


@pytest.mark.parametrize("kind, lanes", [("q8", 32), ("f16", 32), ("f32", 32), ("q8", 8), ("f16", 16)])
def test_gemv_adaln_silu_then_gated_residual(any_door, kind, lanes):
    """The flow head's residual block: adaLN + fc1 + SiLU, then fc2 + gated residual."""
    rng = np.random.default_rng(1)
    f = 256
    blob, refs, w = make_blob(
        any_door,
        {
            "fc1": (rng.standard_normal((f, f)) * 0.1, kind),
            "fc1_b": (rng.standard_normal(f) * 0.1, "f32"),
            "fc2": (rng.standard_normal((f, f)) * 0.1, kind),
            "fc2_b": (rng.standard_normal(f) * 0.1, "f16"),
            "ln_w": (1 + 0.1 * rng.standard_normal(f), "f32"),
            "ln_b": (0.1 * rng.standard_normal(f), "f32"),
        },
    )
    kern = ops.LmKernels(any_door, blob)
    x = rng.standard_normal(f).astype(np.float32)
    mods = (rng.standard_normal(3 * f + 7) * 0.5).astype(np.float32)
    xb, modb, tmp = upload(any_door, x), upload(any_door, mods), zeros(any_door, 4 * f)
    state = make_state(any_door)

    def build(p):
        kern.gemv(
            p,
            [ops.Segment(refs["fc1"], refs["fc1_b"])],
            prologue=ops.P_ADALN,
            epilogue=ops.E_SILU,
            state=state,
            src=xb,
            aux=modb,
            dst=tmp,
            mod_shift=7,
            mod_scale=7 + f,
            lanes=lanes,
            **ops.ln_fields(refs["ln_w"], refs["ln_b"], 1e-6),
        )
        kern.gemv(
            p,
            [ops.Segment(refs["fc2"], refs["fc2_b"])],
            epilogue=ops.E_GATED_RESIDUAL,
            state=state,
            src=tmp,
            aux=modb,
            dst=xb,
            mod_gate=7 + 2 * f,
            lanes=lanes,
        )

    submit(any_door, build)
    m = mods.astype(np.float64)
    x64 = x.astype(np.float64)
    h = layer_norm(x64, w["ln_w"], w["ln_b"], 1e-6) * (1 + m[7 + f : 7 + 2 * f]) + m[7 : 7 + f]
    h = silu(w["fc1"] @ h + w["fc1_b"])
    want = x64 + m[7 + 2 * f : 7 + 3 * f] * (w["fc2"] @ h + w["fc2_b"])
    assert rel(download(any_door, xb, count=f), want) < 2e-6


def test_gemv_silu_prologue_store_and_residual(any_door):
    rng = np.random.default_rng(2)
    blob, refs, w = make_blob(
        any_door, {"m": (rng.standard_normal((33, 64)), "f16"), "b": (rng.standard_normal(33), "f16")}
    )
    kern = ops.LmKernels(any_door, blob)
    c = rng.standard_normal(64).astype(np.float32)
    out = rng.standard_normal(33).astype(np.float32)
    srcb, dst, res = upload(any_door, c), zeros(any_door, 4 * 33), upload(any_door, out)
    state = make_state(any_door)

    def build(p):
        seg = [ops.Segment(refs["m"], refs["b"])]
        kern.gemv(p, seg, prologue=ops.P_SILU, state=state, src=srcb, dst=dst)
        kern.gemv(p, seg, epilogue=ops.E_RESIDUAL, state=state, src=srcb, dst=res)

    submit(any_door, build)
    c64 = c.astype(np.float64)
    assert rel(download(any_door, dst, count=33), w["m"] @ silu(c64) + w["b"]) < 2e-6
    assert rel(download(any_door, res, count=33), out + w["m"] @ c64 + w["b"]) < 2e-6


# ---------------------------------------------------------------------------------------------------
# a feed-forward block in one dispatch (E_DOWN_SPLIT) and the exact sums it leaves (lm_sums.wgsl)
# ---------------------------------------------------------------------------------------------------
def sum_words(values) -> np.ndarray:
    """lm_sums.wgsl's layout of `values` (n of them): n words of a = floor(v * 2^8), then n of b, the
    rest in units of 2^-28."""
    scaled = np.asarray(values, np.float64) * 256.0
    a = np.floor(scaled)
    b = np.round((scaled - a) * 2.0**20)
    return np.concatenate([a.astype(np.int64).astype(np.int32).view(np.uint32), b.astype(np.uint32)])


def sum_values(words: np.ndarray) -> np.ndarray:
    n = len(words) // 2
    a, b = words[:n].view(np.int32).astype(np.int64), words[n:].astype(np.int64)
    return (a * 2.0**20 + b) / 2.0**28


@pytest.mark.parametrize(
    "kind, k, rows, lanes, bias",
    [("q8", 512, 2048, None, False), ("q8", 200, 300, 16, True), ("q8", 64, 96, 8, False),
     ("f16", 200, 300, 16, True), ("f32", 64, 72, 32, False), ("q8", 96, 50, 64, True)],
)  # fmt: skip
def test_feed_forward_in_one_dispatch_adds_exact_sums(any_door, kind, k, rows, lanes, bias):
    """fc1 (LayerNorm prologue) and GELU, then fc2, every workgroup adding its share of fc2's output to
    sums that already hold something. 512 x 2048 at the default lanes: the real block (16 lanes, fc2's
    16 columns a workgroup loaded up front); 8, 32 and 64 lanes and f16/f32 fc2 load as they go; 300 and
    50 rows leave the last workgroup part empty."""
    rng = np.random.default_rng(rows)
    tensors = {
        "fc1": (rng.standard_normal((rows, k)) * 0.1, kind),
        "fc2": (rng.standard_normal((k, rows)) * 0.05, kind),
        "ln_w": (1 + 0.1 * rng.standard_normal(k), "f16"),
        "ln_b": (0.1 * rng.standard_normal(k), "f16"),
    }
    if bias:
        tensors |= {"b1": (rng.standard_normal(rows) * 0.1, "f32"), "b2": (rng.standard_normal(k), "f16")}
    blob, refs, w = make_blob(any_door, tensors)
    kern = ops.LmKernels(any_door, blob)
    x = (rng.standard_normal(k) * 2 + 0.5).astype(np.float32)
    before = rng.standard_normal(k) * 3
    at = 7  # the sums sit past other words, which stay as they were
    words = np.full(2 * k + 2 * at, 0xDEADBEEF, np.uint32)
    words[at : at + 2 * k] = sum_words(before)
    sums = upload(any_door, words)
    submit(
        any_door,
        lambda p: kern.gemv(
            p,
            [ops.Segment(refs["fc1"], refs.get("b1"))],
            prologue=ops.P_LAYERNORM,
            epilogue=ops.E_DOWN_SPLIT,
            down=ops.Segment(refs["fc2"], refs.get("b2")),
            state=make_state(any_door),
            src=upload(any_door, x),
            extra=sums,
            sum_out=at,
            lanes=lanes,
            **ops.ln_fields(refs["ln_w"], refs["ln_b"], 1e-5),
        ),
    )
    hidden = w["fc1"] @ layer_norm(x.astype(np.float64), w["ln_w"], w["ln_b"]) + (w["b1"] if bias else 0)
    want = before + w["fc2"] @ gelu(hidden) + (w["b2"] if bias else 0)
    got = download(any_door, sums, np.uint32)
    assert rel(sum_values(got[at : at + 2 * k]), want) < 2e-6
    assert (got[:at] == 0xDEADBEEF).all() and (got[at + 2 * k :] == 0xDEADBEEF).all()


def test_feed_forward_refuses_what_its_kernel_cannot_take(door):
    rng = np.random.default_rng(0)
    blob, refs, _ = make_blob(
        door, {"fc1": (rng.standard_normal((64, 32)), "q8"), "fc2": (rng.standard_normal((32, 48)), "q8")}
    )
    kern = ops.LmKernels(door, blob)
    common = dict(epilogue=ops.E_DOWN_SPLIT, state=make_state(door), src=zeros(door, 128))
    fc1, sums = [ops.Segment(refs["fc1"])], zeros(door, 256)
    with pytest.raises(ValueError, match="48 columns, not the 64 rows"):
        kern.gemv(Program("t"), fc1, down=ops.Segment(refs["fc2"]), extra=sums, **common)
    with pytest.raises(ValueError, match="needs `down`"):
        kern.gemv(Program("t"), fc1, extra=sums, **common)
    with pytest.raises(ValueError, match="E_DOWN_SPLIT only"):
        kern.gemv(Program("t"), fc1, down=ops.Segment(refs["fc2"]), state=make_state(door))


def test_residual_adds_the_sums(any_door):
    """E_RESIDUAL with sum_in: the residual, plus the sums (read from src past its input), plus W x."""
    rng = np.random.default_rng(3)
    blob, refs, w = make_blob(any_door, {"m": (rng.standard_normal((40, 64)) * 0.1, "q8")})
    kern = ops.LmKernels(any_door, blob)
    x = rng.standard_normal(64).astype(np.float32)
    extra_sum = rng.standard_normal(40) * 4 - 1
    residual = rng.standard_normal(40).astype(np.float32)
    src = np.concatenate([x.view(np.uint32), sum_words(extra_sum)])
    dst = upload(any_door, residual)
    submit(
        any_door,
        lambda p: kern.gemv(
            p, [ops.Segment(refs["m"])], epilogue=ops.E_RESIDUAL, state=make_state(any_door),
            src=upload(any_door, src), dst=dst, sum_in=64,
        ),
    )  # fmt: skip
    want = residual + extra_sum + w["m"] @ x.astype(np.float64)
    assert rel(download(any_door, dst, count=40), want) < 2e-6


def test_gemv_noise_prologue_matches_the_python_twin(any_door):
    blob, refs, _ = make_blob(any_door, {"eye": (np.eye(32), "f32"), "zero": (np.zeros(32), "f32")})
    kern = ops.LmKernels(any_door, blob)
    for seed, frame, temperature in [(0, 0, 0.3), (7, 1, 0.3), (123456789, 700, 1.0), (2**32 - 1, 5, 0.7)]:
        flow_io, dst = zeros(any_door, 4 * 64), zeros(any_door, 4 * 32)
        state = make_state(
            any_door,
            seed=seed,
            frames=frame,
            noise_scale=float(np.float32(math.sqrt(temperature))),
            budget=9999,
        )
        submit(
            any_door,
            lambda p, state=state, flow_io=flow_io, dst=dst: kern.gemv(
                p,
                [ops.Segment(refs["eye"], refs["zero"])],
                prologue=ops.P_NOISE,
                state=state,
                dst=dst,
                extra=flow_io,
                gate=ops.GATE_STEP,
            ),
        )
        want = np.asarray(noise(seed, frame, temperature), np.float64)
        assert np.abs(download(any_door, flow_io, count=32) - want).max() < 2e-6
        assert np.abs(download(any_door, dst, count=32) - want).max() < 2e-6
    # it is noise: close to standard normal over many draws (checked on the twin)
    draws = np.concatenate([np.asarray(noise(1, f, 1.0)) for f in range(300)])
    assert abs(draws.mean()) < 0.05 and abs(draws.std() - 1) < 0.05


@pytest.mark.parametrize(
    "frames, end, logit, expect_end, expect_eos_frame",
    [
        (5, 0, -3.0, 0, None),  # before min_frames: ignored
        (6, 0, -3.0, 9, 6),  # the frame, then frames_after_eos = 2 more
        (6, 0, -4.5, 0, None),  # below the threshold
        (7, 20, -3.0, 20, None),  # already decided
        (60, 0, -3.0, 62, 60),  # capped by the budget
    ],
)
def test_end_of_speech_decision(door, frames, end, logit, expect_end, expect_eos_frame):
    rng = np.random.default_rng(4)
    h = 64
    blob, refs, w = make_blob(
        door,
        {
            "cond": (rng.standard_normal((h, h)) * 0.1, "f16"),
            "cond_b": (rng.standard_normal(h), "f16"),
            "eos": (np.zeros((1, h)), "f32"),
            "eos_b": (np.array([logit]), "f32"),
            "ln_w": (np.ones(h), "f32"),
            "ln_b": (np.zeros(h), "f32"),
        },
    )
    kern = ops.LmKernels(door, blob)
    state = make_state(
        door,
        frames=frames,
        end=end,
        budget=62,
        min_frames=6,
        frames_after_eos=2,
        eos_threshold=-4.0,
        eos_frame=0xFFFFFFFF,
    )
    x = rng.standard_normal(h).astype(np.float32)
    temb = rng.standard_normal(h).astype(np.float32)
    dst, eos = zeros(door, 4 * 2 * h), zeros(door, 4 * 64)
    submit(
        door,
        lambda p: kern.gemv(
            p,
            [ops.Segment(refs["cond"], refs["cond_b"]), ops.Segment(refs["eos"], refs["eos_b"])],
            prologue=ops.P_LAYERNORM,
            epilogue=ops.E_COND_EOS,
            state=state,
            src=upload(door, x),
            aux=upload(door, temb),
            dst=dst,
            extra=eos,
            gate=ops.GATE_STEP,
            write_normed=1,
            normed_offset=h,
            **ops.ln_fields(refs["ln_w"], refs["ln_b"], 1e-5),
        ),
    )
    words = download(door, state, np.uint32)
    if frames >= (end or 10**9):
        return
    assert words[STATE["end"]] == expect_end
    assert words[STATE["eos_frame"]] == (0xFFFFFFFF if expect_eos_frame is None else expect_eos_frame)
    assert download(door, eos, count=64)[frames] == np.float32(logit)
    xn = layer_norm(x.astype(np.float64))
    out = download(door, dst, count=2 * h)
    assert rel(out[:h], w["cond"] @ xn + w["cond_b"] + temb) < 2e-6
    assert rel(out[h:], xn) < 2e-6


@pytest.mark.parametrize(
    "gate, frames, end, budget, runs",
    [
        (ops.GATE_STEP, 3, 0, 10, True),
        (ops.GATE_STEP, 3, 3, 10, False),  # past the end of speech
        (ops.GATE_STEP, 10, 0, 10, False),  # out of budget
        (ops.GATE_BACKBONE, 0, 0, 10, False),  # frame 0's hidden state comes from the prefill
        (ops.GATE_BACKBONE, 1, 0, 10, True),
        (ops.GATE_ALWAYS, 10, 4, 10, True),  # the prefill ignores the state
    ],
)
def test_gates(door, gate, frames, end, budget, runs):
    blob, refs, _ = make_blob(door, {"m": (np.ones((8, 8)), "f32")})
    kern = ops.LmKernels(door, blob)
    dst = zeros(door, 32)
    state = make_state(door, frames=frames, end=end, budget=budget)
    submit(
        door,
        lambda p: kern.gemv(
            p,
            [ops.Segment(refs["m"])],
            state=state,
            src=upload(door, np.ones(8, np.float32)),
            dst=dst,
            gate=gate,
        ),
    )
    assert (download(door, dst, count=8) == (8.0 if runs else 0.0)).all()


# ---------------------------------------------------------------------------------------------------
# attention_step.wgsl (LayerNorm, q/k/v, RoPE, the cache, split attention) + the merge in gemv's prologue
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind, kv_f16", [("q8", False), ("q8", True), ("f32", False), ("f16", True)])
@pytest.mark.parametrize(
    "heads, head_dim, keys, splits, sums",
    [(8, 64, 301, 8, True), (4, 16, 5, 8, True), (4, 64, 3, 8, False), (4, 64, 301, 12, False),
     (4, 64, 301, 4, False), (4, 32, 200, 3, False)],
)  # fmt: skip
def test_step_attention_from_the_residual_merged_by_the_output_projection(
    any_door, kind, kv_f16, heads, head_dim, keys, splits, sums
):
    """The new key sits at position keys - 1. 8 x 64: the real width (two input elements an
    invocation); keys=3: most splits over the cache get no key (they must weigh nothing); splits=12: the
    merge loads a head's parts eight at a time, so a count that is not a multiple of 8 takes its guarded
    path; splits=4 and 3 leave ~100 keys a split, two turns of the score and value passes (64 keys a
    turn; 8 pairs a lane at head_dim 64, 4 at 32). f32 and f16 in_proj rows take the load-as-you-go
    dot. `sums`: the layer after a fused feed-forward, whose input is x plus that block's sums (in
    `partials` past the parts), which the attention and the output projection's residual both add; the
    attention clears the next sums."""
    rng = np.random.default_rng(5)
    layers, layer, max_pos = 2, 1, 400
    pos = keys - 1
    chunk = math.ceil(max_pos / (splits - 1))
    hidden = heads * head_dim
    voice, text, frame, stride, align_head = min(100, max(pos - 3, 0)), 3 if keys < 50 else 150, 3, 160, 2
    text = min(text, pos - voice)
    blob, refs, w = make_blob(
        any_door,
        {
            "in_proj": (rng.standard_normal((3 * hidden, hidden)) * 0.1, kind),
            "ln_w": (1 + 0.1 * rng.standard_normal(hidden), "f16"),
            "ln_b": (0.1 * rng.standard_normal(hidden), "f16"),
            "out": (rng.standard_normal((hidden, hidden)) * 0.1, "q8"),
        },
    )
    kern = ops.LmKernels(any_door, blob)
    cache_type = np.float16 if kv_f16 else np.float32
    cache = (rng.standard_normal((max_pos, layers, 2, hidden)) * 1.5).astype(cache_type)
    stored = cache.reshape(-1).view(np.uint32)
    kv = upload(any_door, stored)
    x = rng.standard_normal(hidden).astype(np.float32)
    residual = rng.standard_normal(hidden).astype(np.float32)
    part_stride = head_dim + 4
    parts = heads * splits * part_stride
    block_sum = rng.standard_normal(hidden) * 2  # what a fused feed-forward left: x is the rest
    words = np.zeros(parts + 4 * hidden, np.uint32)
    words[parts : parts + 2 * hidden] = sum_words(block_sum)
    words[parts + 2 * hidden :] = 0xDEADBEEF  # the next layer's sums, which the attention clears
    partials, alignment = upload(any_door, words), zeros(any_door, 4 * 8 * stride)
    layer_input = x - block_sum.astype(np.float32) if sums else x
    xb = upload(any_door, residual)
    state = make_state(any_door, pos=pos, frames=frame, budget=99, voice_rows=voice, text=text)
    rope = upload(any_door, np.asarray(rope_table(max_pos, head_dim), np.float32))
    geometry = dict(head_dim=head_dim, heads=heads)

    def build(p):
        kern.attention_step(
            p,
            state=state,
            x=upload(any_door, layer_input),
            in_proj=refs["in_proj"],
            rope=rope,
            kv=kv,
            partials=partials,
            alignment=alignment,
            splits=splits,
            part_stride=part_stride,
            chunk=chunk,
            kv_f16=kv_f16,
            align=True,
            align_head=align_head,
            align_stride=stride,
            layer=layer,
            layers=layers,
            sum_in=parts if sums else None,
            sum_clear=parts + 2 * hidden if sums else None,
            **geometry,
            **ops.ln_fields(refs["ln_w"], refs["ln_b"], 1e-5),
        )
        kern.gemv(
            p,
            [ops.Segment(refs["out"])],
            prologue=ops.P_ATTN_MERGE,
            epilogue=ops.E_RESIDUAL,
            state=state,
            src=partials,
            dst=xb,
            extra=alignment,
            gate=ops.GATE_BACKBONE,
            splits=splits,
            part_stride=part_stride,
            align=1,
            align_head=align_head,
            align_stride=stride,
            sum_in=parts if sums else None,
            **geometry,
        )

    submit(any_door, build)
    qkv = w["in_proj"] @ layer_norm(x.astype(np.float64), w["ln_w"], w["ln_b"])
    q = rotate_pairs(qkv[:hidden], pos, head_dim).reshape(heads, head_dim)
    new_k, new_v = rotate_pairs(qkv[hidden : 2 * hidden], pos, head_dim), qkv[2 * hidden :]
    # the cache afterwards: row pos of this layer holds the new key and value, nothing else changed
    after = download(any_door, kv, np.uint32).view(cache.dtype).reshape(cache.shape)
    bound = 2e-3 if kv_f16 else 2e-6  # f16 rounding
    assert rel(after[pos, layer, 0], new_k) < bound and rel(after[pos, layer, 1], new_v) < bound
    changed = np.ones(max_pos, bool)
    changed[pos] = False
    assert (after[changed] == cache[changed]).all() and (after[pos, 1 - layer] == cache[pos, 1 - layer]).all()
    # attention over the old keys as cached and the new one as computed (f32, before any rounding)
    c = cache.astype(np.float64)[:pos, layer]
    k_ = np.concatenate([c[:, 0], new_k[None]]).reshape(keys, heads, head_dim)
    v_ = np.concatenate([c[:, 1], new_v[None]]).reshape(keys, heads, head_dim)
    scores = np.einsum("hd,khd->hk", q, k_) / math.sqrt(head_dim)
    probs = np.exp(scores - scores.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    attn = np.einsum("hk,khd->hd", probs, v_).reshape(-1)
    residual_sum = residual + (block_sum if sums else 0)
    assert rel(download(any_door, xb, count=hidden), residual_sum + w["out"] @ attn) < 5e-6
    after_words = download(any_door, partials, np.uint32)[parts:]
    assert (after_words[: 2 * hidden] == words[parts : parts + 2 * hidden]).all()  # read, not changed
    assert (after_words[2 * hidden :] == (0 if sums else 0xDEADBEEF)).all()
    rows = download(any_door, alignment).reshape(8, stride)
    np.testing.assert_allclose(
        rows[frame, :text], probs[align_head, voice : voice + text], rtol=2e-5, atol=1e-9
    )
    assert not rows[frame, text:].any() and not np.delete(rows, frame, axis=0).any()


# ---------------------------------------------------------------------------------------------------
# the prefill
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kind, k, splits",
    [("q8", 48, 1), ("f16", 48, 1), ("f32", 48, 1), ("q8", 208, 2), ("q8", 208, 3), ("q8", 208, 11)],
)
def test_matmul_epilogues(any_door, kind, k, splits):
    """Rows and columns that are not multiples of the 64 x 64 tile; with splits > 1, K in parts
    (partial sums, then matmul_reduce.wgsl). K = 208 does not divide evenly, so the last split is
    shorter than the others; 11 asks for more splits than SPLIT_MIN_K allows and gets 3."""
    rng = np.random.default_rng(6 + splits)
    rows, m = 70, 96
    blob, refs, w = make_blob(
        any_door, {"w": (rng.standard_normal((m, k)) * 0.2, kind), "b": (rng.standard_normal(m), "f16")}
    )
    kern = ops.LmKernels(any_door, blob)
    a = rng.standard_normal((rows, k)).astype(np.float32)
    base = rng.standard_normal((rows, m)).astype(np.float32)
    ab, store, act, res = (
        upload(any_door, a),
        zeros(any_door, 4 * rows * m),
        zeros(any_door, 4 * rows * m),
        upload(any_door, base),
    )
    program = Program("matmul")
    kern.matmul(program, a=ab, out=store, weight=refs["w"], rows=rows, bias=refs["b"], splits=splits)
    kern.matmul(program, a=ab, out=act, weight=refs["w"], rows=rows, epilogue=ops.M_GELU, splits=splits)
    kern.matmul(program, a=ab, out=res, weight=refs["w"], rows=rows, epilogue=ops.M_RESIDUAL, splits=splits)
    # a split matmul is a pass with z = its splits, then a reduction
    parts = min(splits, k // ops.SPLIT_MIN_K)
    assert [c.z for c in program.commands] == ([parts, 1] if parts > 1 else [1]) * 3
    any_door.compile(program)
    any_door.submit([(program, 1)])
    y = a.astype(np.float64) @ w["w"].T
    assert rel(download(any_door, store).reshape(rows, m), y + w["b"]) < 2e-6
    assert rel(download(any_door, act).reshape(rows, m), gelu(y)) < 2e-6
    assert rel(download(any_door, res).reshape(rows, m), base + y) < 2e-6


def test_matmul_split_choice_stays_within_the_partial_buffer():
    for k in (64, 512, 2048, 4096):
        for tiles in range(1, 3 * ops.SPLIT_GROUPS):
            k_split = ops.matmul_k_split(k, tiles)
            splits = -(-k // k_split)
            assert k_split % 16 == 0 and k_split >= min(k, ops.SPLIT_MIN_K)
            assert splits == 1 or splits * tiles <= ops.SPLIT_GROUPS
    # the prefill's 64-row products on a 512-wide model: out-proj (8 tiles) and fc2 (K 2048) split
    assert -(-512 // ops.matmul_k_split(512, 8)) == 8
    assert -(-2048 // ops.matmul_k_split(2048, 8)) == 16
    assert ops.matmul_k_split(512, 256) == 512  # enough tiles: no split


def test_layernorm_rows_and_embed_rows(any_door):
    rng = np.random.default_rng(7)
    h, n, text = 64, 10, 6
    blob, refs, w = make_blob(
        any_door,
        {
            "ln_w": (1 + 0.1 * rng.standard_normal(h), "f16"),
            "ln_b": (0.1 * rng.standard_normal(h), "f16"),
            "embed": (rng.standard_normal((300, h)), "q8"),
        },
    )
    kern = ops.LmKernels(any_door, blob)
    x = (rng.standard_normal((n, h)) * 3 + 1).astype(np.float32)
    xb, y = upload(any_door, x), zeros(any_door, 4 * n * h)
    rows = upload(any_door, np.full((n, h), 7.0, np.float32))
    ids = [5, 299, 0, 17, 17, 200]
    state = make_state(any_door, text=text)

    def build(p):
        kern.layernorm_rows(p, x=xb, y=y, weight=refs["ln_w"], bias=refs["ln_b"], eps=1e-5, count=n)
        kern.embed_rows(
            p,
            state=state,
            text_ids=upload(any_door, np.array(ids, np.uint32)),
            rows=rows,
            embed=refs["embed"],
            count=n,
        )

    submit(any_door, build)
    want = np.stack([layer_norm(r, w["ln_w"], w["ln_b"]) for r in x.astype(np.float64)])
    assert rel(download(any_door, y).reshape(n, h), want) < 2e-6
    got = download(any_door, rows).reshape(n, h)
    np.testing.assert_array_equal(got[:text], w["embed"][ids].astype(np.float32))
    assert (got[text] == 7.0).all()  # the BOS row is condition.wgsl's
    assert (got[text + 1 :] == 0).all()


@pytest.mark.parametrize("kv_f16", [False, True])
def test_rope_kv_rows_then_causal_prefill_attention(any_door, kv_f16):
    rng = np.random.default_rng(8)
    heads, head_dim, layers, layer, voice, n, text = 4, 16, 2, 0, 20, 10, 6
    hidden = heads * head_dim
    kern = ops.LmKernels(any_door, upload(any_door, np.zeros(4, np.uint32)))
    prefix = rng.standard_normal((voice, 2, hidden)).astype(np.float32)
    cache = np.zeros((voice + n + 5, layers, 2, hidden), np.float32)
    cache[:voice, layer] = prefix
    if kv_f16:
        cache = cache.astype(np.float16)
        prefix = cache[:voice, layer].astype(np.float32)
    kv = upload(any_door, cache.reshape(-1).view(np.uint32))
    qkv = rng.standard_normal((n, 3 * hidden)).astype(np.float32)
    rope = upload(any_door, np.asarray(rope_table(voice + n + 5, head_dim), np.float32))
    q, out, alignment = (
        zeros(any_door, 4 * n * hidden),
        zeros(any_door, 4 * n * hidden),
        zeros(any_door, 4 * 16),
    )
    state = make_state(any_door, voice_rows=voice, text=text)
    geometry = dict(layer=layer, layers=layers, heads=heads, head_dim=head_dim, kv_f16=kv_f16, count=n)

    def build(p):
        kern.rope_kv_rows(
            p, state=state, qkv=upload(any_door, qkv), rope=rope, q=q, kv=kv, text=True, **geometry
        )
        kern.attention_prefill(
            p,
            state=state,
            q=q,
            kv=kv,
            out=out,
            alignment=alignment,
            text=True,
            max_keys=voice + n,
            align=True,
            align_head=1,
            **geometry,
        )

    submit(any_door, build)
    q64 = np.stack(
        [rotate_pairs(r[:hidden].astype(np.float64), voice + i, head_dim) for i, r in enumerate(qkv)]
    )
    k64 = np.stack(
        [
            rotate_pairs(r[hidden : 2 * hidden].astype(np.float64), voice + i, head_dim)
            for i, r in enumerate(qkv)
        ]
    )
    v64 = qkv[:, 2 * hidden :].astype(np.float64)
    bound = 2e-3 if kv_f16 else 2e-6
    assert rel(download(any_door, q).reshape(n, hidden), q64) < 2e-6
    got_cache = download(any_door, kv, np.uint32)
    got_cache = (got_cache.view(np.float16) if kv_f16 else got_cache.view(np.float32)).reshape(cache.shape)
    assert rel(got_cache[voice : voice + n, layer, 0], k64) < bound
    assert rel(got_cache[voice : voice + n, layer, 1], v64) < bound
    keys = np.concatenate([prefix[:, 0].astype(np.float64), k64])
    values = np.concatenate([prefix[:, 1].astype(np.float64), v64])
    if kv_f16:
        keys, values = (
            keys.astype(np.float16).astype(np.float64),
            values.astype(np.float16).astype(np.float64),
        )
    want = np.zeros((n, hidden))
    for i in range(n):
        for h in range(heads):
            sl = slice(h * head_dim, (h + 1) * head_dim)
            s = keys[: voice + i + 1, sl] @ q64[i, sl] / math.sqrt(head_dim)
            p = np.exp(s - s.max())
            p /= p.sum()
            want[i, sl] = p @ values[: voice + i + 1, sl]
            if i == text and h == 1:
                np.testing.assert_allclose(
                    download(any_door, alignment, count=text), p[voice : voice + text], rtol=2e-5
                )
    assert rel(download(any_door, out).reshape(n, hidden), want) < 3e-6


# ---------------------------------------------------------------------------------------------------
# condition.wgsl, time_embedding.wgsl, step_end.wgsl
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dd", [0.0, 0.6, -0.45, 2.5])
def test_condition_vector_and_bos_row(door, dd):
    rng = np.random.default_rng(9)
    h, half, latent, text = 64, 64, 32, 5
    blob, refs, w = make_blob(
        door,
        {
            "ns_embed": (rng.standard_normal((32, 16)), "f16"),
            "ns_proj": (rng.standard_normal((h, 16)) * 0.2, "f16"),
            "dd_proj": (rng.standard_normal((h, 2 * half)) * 0.2, "q8"),
            "in": (rng.standard_normal((h, latent)) * 0.2, "f16"),
            "bos": (rng.standard_normal(latent), "f32"),
        },
    )
    kern = ops.LmKernels(door, blob)
    periods = (np.float32(10000.0) ** (np.arange(half, dtype=np.float32) / np.float32(half - 1))).astype(
        np.float32
    )
    scaled = float(np.float32(dd * 1000.0))
    state = make_state(door, dd=scaled, text=text, voice_rows=125)
    cond, rows = zeros(door, 4 * h), zeros(door, 4 * 8 * h)
    submit(
        door,
        lambda p: kern.condition(
            p,
            state=state,
            cond=cond,
            rows=rows,
            speakers=1,
            speaker_embed=refs["ns_embed"],
            speaker_proj=refs["ns_proj"],
            duration_proj=refs["dd_proj"],
            input_linear=refs["in"],
            bos=refs["bos"],
            periods=[float(v) for v in periods],
            hidden=h,
        ),
    )
    phases = (np.float32(scaled) / periods).astype(np.float64)
    e = np.concatenate([np.cos(phases), np.sin(phases)])
    want = w["ns_proj"] @ w["ns_embed"][1] + w["dd_proj"] @ e
    # The phases reach 1000 * |dd| radians, so the 1-2 ulp that WGSL's division may differ by (NVIDIA's
    # does: 2.4e-6 at dd = 0.6) move sin and cos by up to ~1e-4 absolute: a bound that grows with |dd|.
    bound = 2e-6 + 2e-5 * abs(dd)
    assert rel(download(door, cond), want) < bound
    assert rel(download(door, rows).reshape(8, h)[text], w["in"] @ w["bos"] + want) < bound
    words = download(door, state, np.uint32)
    assert words[STATE["pos"]] == words[STATE["bos_pos"]] == 125 + text


def test_time_embedding(door):
    rng = np.random.default_rng(10)
    f, freq = 64, 32
    tensors = {}
    for k in range(2):
        tensors |= {
            f"freqs{k}": (np.exp(-math.log(10000) * np.arange(freq // 2) / (freq // 2)), "f32"),
            f"fc1_{k}": (rng.standard_normal((f, freq)) * 0.3, "f16"),
            f"fc1b_{k}": (rng.standard_normal(f) * 0.1, "f16"),
            f"fc2_{k}": (rng.standard_normal((f, f)) * 0.3, "q8" if k else "f16"),
            f"fc2b_{k}": (rng.standard_normal(f) * 0.1, "f16"),
            f"alpha{k}": (1 + 0.1 * rng.standard_normal(f), "f16"),
        }
    blob, refs, w = make_blob(door, tensors)
    kern = ops.LmKernels(door, blob)
    out = zeros(door, 4 * f)

    def build(p):
        for k, t in enumerate((0.0, 1.0)):
            keys = ("freqs", "fc1", "fc1_bias", "fc2", "fc2_bias", "alpha")
            names = (f"freqs{k}", f"fc1_{k}", f"fc1b_{k}", f"fc2_{k}", f"fc2b_{k}", f"alpha{k}")
            kern.time_embedding(
                p,
                out=out,
                t=t,
                first=k == 0,
                divisor=2.0 if k else 0.0,
                eps=1e-5,
                refs={key: refs[n] for key, n in zip(keys, names, strict=True)},
            )

    submit(door, build)
    want = 0
    for k, t in enumerate((0.0, 1.0)):
        angles = t * w[f"freqs{k}"]
        hdn = w[f"fc2_{k}"] @ silu(
            w[f"fc1_{k}"] @ np.concatenate([np.cos(angles), np.sin(angles)]) + w[f"fc1b_{k}"]
        )
        hdn = hdn + w[f"fc2b_{k}"]
        want = want + w[f"alpha{k}"] * hdn / np.sqrt((hdn**2).mean() + 1e-5)
    assert rel(download(door, out), want / 2) < 2e-6


@pytest.mark.parametrize("kind, other", [("q8", "f16"), ("f16", "q8")])
def test_step_end_latent_next_row_next_noise_and_advance(any_door, kind, other):
    """`kind` for the projection and input_linear, `other` for input_proj: q8 matrices take the early
    loads, f16 ones the late path."""
    rng = np.random.default_rng(11)
    f, latent, h = 512, 32, 64
    seed, temperature = 99, 0.3
    blob, refs, w = make_blob(
        any_door,
        {
            "lin": (rng.standard_normal((latent, f)) * 0.1, kind),
            "lin_b": (rng.standard_normal(latent) * 0.1, "f16"),
            "mean": (rng.standard_normal(latent), "f32"),
            "std": (0.5 + rng.random(latent), "f32"),
            "in": (rng.standard_normal((h, latent)) * 0.2, kind),
            "proj": (rng.standard_normal((f, latent)) * 0.2, other),
            "proj_b": (rng.standard_normal(f) * 0.1, "f16"),
        },
    )
    kern = ops.LmKernels(any_door, blob)
    fx = rng.standard_normal(f).astype(np.float32)
    mods = (rng.standard_normal(2 * f + 3) * 0.5).astype(np.float32)
    cond = rng.standard_normal(h).astype(np.float32)
    io = np.concatenate([rng.standard_normal(latent), np.zeros(latent)]).astype(np.float32)
    iob, latents, x = upload(any_door, io), zeros(any_door, 4 * 8 * latent), zeros(any_door, 4 * h)
    scale = float(np.float32(math.sqrt(temperature)))
    state = make_state(any_door, frames=4, pos=200, budget=5, seed=seed, noise_scale=scale)
    flow_x = upload(any_door, fx)
    mod_buffer, cond_buffer = upload(any_door, mods), upload(any_door, cond)

    def build(p):
        kern.step_end(
            p,
            state=state,
            flow_x=flow_x,
            mods=mod_buffer,
            cond=cond_buffer,
            flow_io=iob,
            latents=latents,
            x=x,
            eps=1e-6,
            mod_shift=3,
            mod_scale=3 + f,
            linear=refs["lin"],
            linear_bias=refs["lin_b"],
            mean=refs["mean"],
            std=refs["std"],
            input_linear=refs["in"],
            input_proj=refs["proj"],
            input_proj_bias=refs["proj_b"],
            hidden=h,
        )

    submit(any_door, build)
    m = mods.astype(np.float64)
    xs = layer_norm(fx.astype(np.float64), eps=1e-6) * (1 + m[3 + f : 3 + 2 * f]) + m[3 : 3 + f]
    z = io[:latent] + w["lin"] @ xs + w["lin_b"]
    got = download(any_door, latents).reshape(8, latent)
    assert rel(got[4], z * w["std"] + w["mean"]) < 2e-6 and not np.delete(got, 4, axis=0).any()
    assert rel(download(any_door, x), w["in"] @ z + cond) < 2e-6
    # the next frame's noise (frame 5), kept for its step's end, and the flow head's input from it
    next_noise = np.asarray(noise(seed, 5, temperature), np.float64)
    got_io = download(any_door, iob)
    assert np.abs(got_io[:latent] - next_noise).max() < 2e-6 and rel(got_io[latent:], z) < 2e-6
    assert rel(download(any_door, flow_x), w["proj"] @ next_noise + w["proj_b"]) < 2e-6
    words = download(any_door, state, np.uint32)
    assert (words[STATE["frames"]], words[STATE["pos"]], words[STATE["end"]]) == (5, 201, 5)  # end = budget
    # past the end it does nothing
    outputs = (iob, flow_x, x, latents)
    before = [download(any_door, b) for b in outputs]
    submit(any_door, build)
    assert (download(any_door, state, np.uint32)[:3] == words[:3]).all()
    assert all((download(any_door, b) == v).all() for b, v in zip(outputs, before, strict=True))
