"""build_weights.py (checkpoint folder -> weights.bin + manifest.json) and phonon_web/manifest.py.

Every checkpoint here is a tiny one made in the test (hidden 64, 2 layers, vocab 300), in Gradium's
naming and dtypes (`flow_lm.*` bf16 with a few f32 tensors, `mimi.*` f32, training-only extras).
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors.torch import save_file

import build_weights as bw
from phonon_web.errors import WeightsError
from phonon_web.manifest import FORMAT, load_manifest

REPO = Path(__file__).resolve().parents[1]
H, LAYERS, VOCAB, MLP, LATENT, PROMPT_DIM = 64, 2, 300, 256, 32, 300
FLOW_H, FLOW_LAYERS, FREQ = 64, 2, 32
CODEC_H, CODEC_LAYERS, CODEC_MLP = 64, 1, 128
EMBED = "flow_lm.condition_provider.conditioners.transcript_in_segment.embed.weight"

CONFIG = {
    "model_type": "gradium_phonon_tts",
    "vocab_size": VOCAB,
    "hidden_size": H,
    "num_hidden_layers": LAYERS,
    "num_attention_heads": 4,
    "intermediate_size": MLP,
    "latent_dim": LATENT,
    "audio_prompt_dim": PROMPT_DIM,
    "layer_norm_eps": 1e-5,
    "flow_head_config": {
        "hidden_size": FLOW_H,
        "num_hidden_layers": FLOW_LAYERS,
        "latent_dim": LATENT,
        "condition_dim": H,
        "frequency_embedding_size": FREQ,
    },
    "audio_tokenizer_config": {
        "hidden_size": CODEC_H,
        "num_hidden_layers": CODEC_LAYERS,
        "num_attention_heads": 4,
    },
}

# Row 0 of the embedding: values whose ratio to the block scale (2**-7) is exactly k + 0.5, to check
# that rounding goes half to even; 127 * 2**-7 sets the scale. All exact in bf16 and f16.
HALVES = [0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, -3.5, 126.5, -126.5, 127.0]
HALVES_Q = [0, 2, 2, 4, 0, -2, -2, -4, 126, -126, 127]


def shapes() -> dict[str, tuple[tuple[int, ...], str]]:
    """Original name -> (shape, dtype) of the tiny model, training-only extras included."""
    c = "flow_lm.condition_provider.conditioners."
    t: dict[str, tuple[tuple[int, ...], str]] = {
        EMBED: ((VOCAB, H), "bf16"),
        c + "speaker_wavs.output_proj.weight": ((H, PROMPT_DIM), "bf16"),  # q8, cols 300 -> 320
        c + "num_speakers.embed.weight": ((32, 16), "bf16"),
        c + "num_speakers.output_proj.weight": ((H, 16), "bf16"),
        c + "duration_delta.output_proj.weight": ((H, 128), "bf16"),
        "flow_lm.input_linear.weight": ((H, LATENT), "bf16"),
        "flow_lm.bos_emb": ((LATENT,), "bf16"),
        "flow_lm.emb_mean": ((LATENT,), "f32"),
        "flow_lm.emb_std": ((LATENT,), "f32"),
        "flow_lm.out_norm.weight": ((H,), "bf16"),
        "flow_lm.out_norm.bias": ((H,), "bf16"),
        "flow_lm.out_eos.weight": ((1, H), "bf16"),
        "flow_lm.out_eos.bias": ((1,), "bf16"),
        # training-only
        "flow_lm.flow.w_s_t.0.weight": ((32, 2), "bf16"),
        "flow_lm.flow.w_s_t.0.bias": ((32,), "bf16"),
        c + "transcript_in_segment.learnt_padding": ((1, 1, H), "bf16"),
        c + "speaker_wavs.learnt_padding": ((1, 1, H), "bf16"),
    }
    for i in range(LAYERS):
        p = f"flow_lm.transformer.layers.{i}."
        t[p + "self_attn.in_proj.weight"] = ((3 * H, H), "bf16")
        t[p + "self_attn.out_proj.weight"] = ((H, H), "bf16")
        t[p + "linear1.weight"] = ((MLP, H), "bf16")  # exactly 16,384 values: q8
        t[p + "linear2.weight"] = ((H, MLP), "bf16")
        for n in ("norm1", "norm2"):
            t[p + n + ".weight"] = ((H,), "bf16")
            t[p + n + ".bias"] = ((H,), "bf16")
    f = "flow_lm.flow_net."
    for n, shape in (("input_proj", (FLOW_H, LATENT)), ("cond_embed", (FLOW_H, H))):
        t[f + n + ".weight"] = (shape, "bf16")
        t[f + n + ".bias"] = ((FLOW_H,), "bf16")
    for k in range(2):
        p = f"{f}time_embed.{k}."
        t[p + "freqs"] = ((FREQ // 2,), "f32")
        t[p + "mlp.0.weight"] = ((FLOW_H, FREQ), "bf16")
        t[p + "mlp.0.bias"] = ((FLOW_H,), "bf16")
        t[p + "mlp.2.weight"] = ((FLOW_H, FLOW_H), "bf16")
        t[p + "mlp.2.bias"] = ((FLOW_H,), "bf16")
        t[p + "mlp.3.alpha"] = ((FLOW_H,), "bf16")
    for j in range(FLOW_LAYERS):
        p = f"{f}res_blocks.{j}."
        for n, rows in (
            ("in_ln", None),
            ("mlp.0", FLOW_H),
            ("mlp.2", FLOW_H),
            ("adaLN_modulation.1", 3 * FLOW_H),
        ):
            t[p + n + ".weight"] = (((FLOW_H,) if rows is None else (rows, FLOW_H)), "bf16")
            t[p + n + ".bias"] = (((FLOW_H,) if rows is None else (rows,)), "bf16")
    t[f + "final_layer.linear.weight"] = ((LATENT, FLOW_H), "bf16")
    t[f + "final_layer.linear.bias"] = ((LATENT,), "bf16")
    t[f + "final_layer.adaLN_modulation.1.weight"] = ((2 * FLOW_H, FLOW_H), "bf16")
    t[f + "final_layer.adaLN_modulation.1.bias"] = ((2 * FLOW_H,), "bf16")
    # the codec decoder, f32
    t["mimi.quantizer.output_proj.weight"] = ((CODEC_H, LATENT, 1), "f32")
    t["mimi.upsample.convtr.convtr.weight"] = ((CODEC_H, 1, 32), "f32")
    for i in range(CODEC_LAYERS):
        p = f"mimi.decoder_transformer.transformer.layers.{i}."
        t[p + "self_attn.in_proj.weight"] = ((3 * CODEC_H, CODEC_H), "f32")
        t[p + "self_attn.out_proj.weight"] = ((CODEC_H, CODEC_H), "f32")
        t[p + "linear1.weight"] = ((CODEC_MLP, CODEC_H), "f32")
        t[p + "linear2.weight"] = ((CODEC_H, CODEC_MLP), "f32")
        for n in ("norm1", "norm2"):
            t[p + n + ".weight"] = ((CODEC_H,), "f32")
            t[p + n + ".bias"] = ((CODEC_H,), "f32")
        t[p + "layer_scale_1.scale"] = ((CODEC_H,), "f32")
        t[p + "layer_scale_2.scale"] = ((CODEC_H,), "f32")
    d = "mimi.decoder.model."
    for n, shape in (
        ("0.conv", (CODEC_H, CODEC_H, 7)),  # 28,672 values: q8 with cols 448
        ("2.convtr", (CODEC_H, 32, 12)),
        ("3.block.1.conv", (16, 32, 3)),
        ("3.block.3.conv", (32, 16, 1)),
        ("5.conv", (1, 32, 3)),
    ):
        t[d + n + ".weight"] = (shape, "f32")
        t[d + n + ".bias"] = ((shape[1] if "convtr" in n else shape[0],), "f32")
    return t


def kept_shapes() -> dict[str, tuple[tuple[int, ...], str]]:
    return {
        n: v
        for n, v in shapes().items()
        if not (n.startswith("flow_lm.flow.w_s_t.") or n.endswith(".learnt_padding"))
    }


def model_tensors(seed: int = 0) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    out = {}
    for name, (shape, dtype) in shapes().items():
        value = 0.05 * torch.randn(shape, generator=g)
        out[name] = value.to(torch.bfloat16 if dtype == "bf16" else torch.float32)
    embed = out[EMBED].float()
    embed[0] = 0.0
    embed[0, : len(HALVES)] = torch.tensor(HALVES) * 2.0**-7
    embed[1] = 0.0  # two all-zero blocks
    out[EMBED] = embed.to(torch.bfloat16)
    return out


def write_checkpoint(
    folder: Path,
    tensors: dict[str, torch.Tensor] | None = None,
    config: dict | None = None,
    tokenizer_name: str = "tokenizer.5.0.0.json",
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    save_file(
        model_tensors() if tensors is None else tensors,
        folder / "model.safetensors",
        metadata={"format": "pt"},
    )
    (folder / "config.json").write_text(json.dumps(config or CONFIG, indent=2))
    (folder / "generation_config.json").write_text(json.dumps({"temperature": 0.3, "eos_threshold": -4.0}))
    (folder / tokenizer_name).write_text(
        json.dumps({"version": "1.0", "model": {"type": "Unigram", "vocab": []}})
    )
    (folder / "voices").mkdir(exist_ok=True)
    g = torch.Generator().manual_seed(7)
    save_file(
        {"audio_prompt": torch.randn(1, 7, PROMPT_DIM, generator=g)}, folder / "voices" / "Delia.safetensors"
    )
    save_file(
        {"audio_prompt": torch.randn(5, PROMPT_DIM, generator=g)}, folder / "voices" / "marcus.safetensors"
    )
    return folder


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    return write_checkpoint(tmp_path_factory.mktemp("ckpt") / "phonon-31m")


@pytest.fixture(scope="module")
def built(checkpoint, tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("out")
    return out, bw.convert(checkpoint, out)


def originals(checkpoint: Path) -> dict[str, np.ndarray]:
    """The checkpoint's tensors in the layout build_weights stores them (each rule's transform)."""
    out = {}
    for name, array in bw.read_safetensors(checkpoint / "model.safetensors").items():
        rule = bw.rule_for(name)
        out[name] = array if rule is None or rule.action == "skip" else rule.transform(name, array, {})
    return out


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------------------------------------------
# Reading safetensors
# ---------------------------------------------------------------------------------------------------
def test_read_safetensors_decodes_bf16_f16_f32_exactly(tmp_path):
    g = torch.Generator().manual_seed(1)
    src = {
        "a": torch.randn(3, 5, generator=g).to(torch.bfloat16),
        "b": torch.randn(7, generator=g).to(torch.float16),
        "c": torch.randn(2, 2, 2, generator=g),
        "d": torch.tensor([-0.0, float("1e-40"), 3.0e38, -2.5]).to(torch.bfloat16),
    }
    save_file(src, tmp_path / "x.safetensors")
    got = bw.read_safetensors(tmp_path / "x.safetensors")
    assert set(got) == set(src)
    for name, tensor in src.items():
        assert got[name].dtype == np.float32
        assert got[name].shape == tuple(tensor.shape)
        np.testing.assert_array_equal(got[name], tensor.float().numpy())
    assert np.signbit(got["d"][0])


def _header_file(path: Path, header: dict | bytes, data: bytes) -> Path:
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + data)
    return path


@pytest.mark.parametrize(
    ("header", "data", "words"),
    [
        (b"{not json", b"", "not valid JSON"),
        (b"[1, 2]", b"", "not a JSON object"),
        ({"a": {"dtype": "Q4", "shape": [2], "data_offsets": [0, 2]}}, b"\0\0", "unknown dtype"),
        ({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 4, "ends at byte"),
        ({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}, b"\0" * 8, "do not hold"),
        ({"a": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}}, b"\0" * 8, "invalid data_offsets"),
        ({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, b"\0" * 4, "invalid shape"),
        (
            {
                "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]},
            },
            b"\0" * 12,
            "overlap",
        ),
    ],
)
def test_corrupt_headers_are_weights_errors(tmp_path, header, data, words):
    path = _header_file(tmp_path / "model.safetensors", header, data)
    with pytest.raises(WeightsError) as info:
        bw.read_safetensors(path)
    message = str(info.value)
    assert words in message
    assert str(path) in message and "truncated or corrupt" in message and "again" in message


def test_truncated_model_is_a_weights_error_wherever_it_is_cut(checkpoint, tmp_path):
    raw = (checkpoint / "model.safetensors").read_bytes()
    header_len = int.from_bytes(raw[:8], "little")
    for cut in (
        0,
        3,
        8,
        9,
        8 + header_len // 2,
        8 + header_len,
        8 + header_len + 1000,
        len(raw) // 2,
        len(raw) - 1,
    ):
        path = tmp_path / f"cut{cut}.safetensors"
        path.write_bytes(raw[:cut])
        with pytest.raises(WeightsError, match="truncated or corrupt"):
            bw.read_safetensors(path)


def test_truncated_model_fails_the_conversion(checkpoint, tmp_path):
    folder = tmp_path / "ckpt"
    shutil.copytree(checkpoint, folder)
    raw = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(raw[: len(raw) - 100])
    with pytest.raises(WeightsError, match=r"model\.safetensors.*truncated or corrupt.*again"):
        bw.convert(folder, tmp_path / "out")
    assert not (tmp_path / "out" / "manifest.json").exists()


# ---------------------------------------------------------------------------------------------------
# The output
# ---------------------------------------------------------------------------------------------------
def test_two_runs_give_identical_files(checkpoint, built, tmp_path):
    out1, manifest1 = built
    manifest2 = bw.convert(checkpoint, tmp_path / "again")
    assert manifest1 == manifest2
    first, second = files_of(out1), files_of(tmp_path / "again")
    assert set(first) == {
        "weights.bin",
        "manifest.json",
        "tokenizer.json",
        "voices/Delia.bin",
        "voices/marcus.bin",
    }
    assert first == second
    assert sha(first["manifest.json"]) == sha(second["manifest.json"])


def test_manifest_describes_the_files(checkpoint, built):
    out, manifest = built
    on_disk = json.loads((out / "manifest.json").read_text())
    assert on_disk == manifest
    assert on_disk["format"] == FORMAT and on_disk["version"] == bw.VERSION == 2
    blob = (out / "weights.bin").read_bytes()
    assert manifest["weights"] == {"file": "weights.bin", "bytes": len(blob), "sha256": sha(blob)}
    tok = (checkpoint / "tokenizer.5.0.0.json").read_bytes()
    assert (out / "tokenizer.json").read_bytes() == tok
    assert manifest["tokenizer"] == {"file": "tokenizer.json", "bytes": len(tok), "sha256": sha(tok)}
    assert manifest["config"] == CONFIG
    assert manifest["generation_config"] == {"temperature": 0.3, "eos_threshold": -4.0}
    assert manifest["processor_config"] is None
    assert manifest["quantization"] == {"block": 32, "min_values": 16384}
    assert manifest["source"]["model_sha256"] == sha((checkpoint / "model.safetensors").read_bytes())
    names = [t["name"] for t in manifest["tensors"]]
    assert names == sorted(names)


def test_every_kept_tensor_and_no_training_only_one(checkpoint, built):
    _, manifest = built
    names = {t["name"] for t in manifest["tensors"]}
    assert names == set(kept_shapes())
    assert not any("w_s_t" in n or "learnt_padding" in n for n in names)


def test_layout_alignment_and_kinds(built):
    out, manifest = built
    blob_len = manifest["weights"]["bytes"]
    spans = []
    for t in manifest["tensors"]:
        count = math.prod(t["shape"])
        assert t["offset"] % 4 == 0 and t["bytes"] % 4 == 0
        assert t["kind"] == ("q8" if count >= 16384 else "f16")
        if t["kind"] == "q8":
            rows, cols = t["rows"], t["cols"]
            assert rows == t["shape"][0] and rows * cols == count
            assert t["padded_cols"] % 32 == 0 and cols <= t["padded_cols"] < cols + 32
            assert t["scales_offset"] % 4 == 0
            assert t["scales_offset"] == t["offset"] + rows * t["padded_cols"]
            assert t["bytes"] == bw._align(rows * t["padded_cols"] + 2 * rows * t["padded_cols"] // 32)
        else:
            assert t["bytes"] == 2 * (count + count % 2)
        spans.append((t["offset"], t["offset"] + t["bytes"]))
    spans.sort()
    assert spans[0][0] == 0 and spans[-1][1] == blob_len
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:], strict=False))
    by_name = {t["name"]: t for t in manifest["tensors"]}
    assert (
        by_name["flow_lm.condition_provider.conditioners.speaker_wavs.output_proj.weight"]["padded_cols"]
        == 320
    )
    assert by_name["mimi.decoder.model.0.conv.weight"]["cols"] == 448
    assert by_name["flow_lm.transformer.layers.0.linear1.weight"]["kind"] == "q8"  # exactly 16,384


def _blocks(entry: dict, blob: bytes):
    rows, padded = entry["rows"], entry["padded_cols"]
    scales = np.frombuffer(blob, "<f2", rows * padded // 32, entry["scales_offset"]).astype(np.float32)
    q = np.frombuffer(blob, np.int8, rows * padded, entry["offset"])
    return q.reshape(rows, padded // 32, 32), scales.reshape(rows, padded // 32)


def test_q8_tensors_dequantize_within_half_a_step(checkpoint, built):
    out, manifest = built
    blob = (out / "weights.bin").read_bytes()
    src = originals(checkpoint)
    checked = 0
    for t in manifest["tensors"]:
        if t["kind"] != "q8":
            continue
        rows, cols, padded = t["rows"], t["cols"], t["padded_cols"]
        want = np.zeros((rows, padded), np.float32)
        want[:, :cols] = src[t["name"]].reshape(rows, cols).astype(np.float16).astype(np.float32)
        got = np.zeros((rows, padded), np.float32)
        deq = bw.dequantize(t, blob)
        assert deq.shape == tuple(t["shape"]) and deq.dtype == np.float32
        got[:, :cols] = deq.reshape(rows, cols)
        q, scales = _blocks(t, blob)
        assert (q[:, :, :].reshape(rows, padded)[:, cols:] == 0).all()  # padding quantises to 0
        err = np.abs(got - want).reshape(rows, padded // 32, 32).max(axis=2)
        assert (err <= scales / 2 * (1 + 1e-6) + 1e-12).all(), t["name"]
        # each block's scale is max|v| / 127 of its f16 values, rounded to f16
        amax = np.abs(want).reshape(rows, padded // 32, 32).max(axis=2)
        np.testing.assert_array_equal(scales, (amax / np.float32(127)).astype(np.float16).astype(np.float32))
        checked += 1
    assert checked == sum(1 for shape, _ in kept_shapes().values() if math.prod(shape) >= 16384) == 8


def test_f16_tensors_are_the_f16_rounding(checkpoint, built):
    out, manifest = built
    blob = (out / "weights.bin").read_bytes()
    src = originals(checkpoint)
    for t in manifest["tensors"]:
        if t["kind"] == "f16":
            np.testing.assert_array_equal(
                bw.dequantize(t, blob), src[t["name"]].astype(np.float16).astype(np.float32)
            )


def test_round_half_to_even_and_all_zero_blocks_in_the_blob(built):
    out, manifest = built
    blob = (out / "weights.bin").read_bytes()
    entry = next(t for t in manifest["tensors"] if t["name"] == EMBED)
    q, scales = _blocks(entry, blob)
    assert scales[0, 0] == 2.0**-7
    assert q[0, 0, : len(HALVES)].tolist() == HALVES_Q
    assert (q[1] == 0).all() and (scales[1] == 0).all()
    assert (q[0, 1] == 0).all() and scales[0, 1] == 0  # the rest of row 0 is zero too


def test_quantize_q8_rules_directly():
    m = np.zeros((2, 40), np.float32)
    m[0, : len(HALVES)] = np.array(HALVES, np.float32) * 2.0**-7
    m[0, 33] = 1.0e-9  # a block whose scale underflows f16: stored 0, q 0
    m[1, :] = np.linspace(-3, 3, 40)
    q, s = bw.quantize_q8(m)
    assert q.shape == (2, 64) and q.dtype == np.int8 and s.shape == (2, 2) and s.dtype == np.float16
    assert q[0, : len(HALVES)].tolist() == HALVES_Q
    assert s[0, 1] == 0 and (q[0, 32:] == 0).all()
    assert q[1].max() == 127 and q[1].min() == -127 and (q[1, 40:] == 0).all()


@settings(max_examples=40, deadline=None, database=None)
@given(
    rows=st.integers(1, 4),
    cols=st.integers(1, 100),
    exponent=st.integers(-30, 12),
    seed=st.integers(0, 2**31 - 1),
)
def test_quantize_q8_error_bound(rows, cols, exponent, seed):
    rng = np.random.default_rng(seed)
    m = (rng.standard_normal((rows, cols)) * 2.0**exponent).astype(np.float32)
    m[rng.random((rows, cols)) < 0.1] = 0.0
    q, s = bw.quantize_q8(m)
    v16 = np.zeros(q.shape, np.float32)
    v16[:, :cols] = m.astype(np.float16).astype(np.float32)
    blocks = v16.reshape(rows, -1, 32)
    scale = s.astype(np.float32)
    exact_scale = np.abs(blocks).max(axis=2) / np.float32(127)
    deq = q.reshape(rows, -1, 32).astype(np.float32) * scale[:, :, None]
    err = np.abs(deq - blocks).max(axis=2)
    assert (np.abs(q) <= 127).all()
    # Half a step wherever the stored scale is a normal f16 (>= 2**-14: blocks with max|v| >= ~0.0078).
    normal = scale >= 2.0**-14
    assert (err[normal] <= scale[normal] / 2 * (1 + 1e-6)).all()
    # Below that the f16 scale is subnormal and coarse: the largest values may clip at 127, so the
    # error also has the scale's own rounding, times 127 (a scale that underflows to 0 zeroes the block).
    assert (err <= scale / 2 + 127 * np.abs(exact_scale - scale) + 1e-30).all()


def test_f32_build_round_trips_exactly(checkpoint, tmp_path):
    manifest = bw.convert(checkpoint, tmp_path / "f32", f32=True)
    assert manifest["quantization"] is None
    blob = (tmp_path / "f32" / "weights.bin").read_bytes()
    src = originals(checkpoint)
    for t in manifest["tensors"]:
        assert t["kind"] == "f32" and t["offset"] % 4 == 0
        np.testing.assert_array_equal(bw.dequantize(t, blob), src[t["name"]])
    load_manifest((tmp_path / "f32" / "manifest.json").read_text())


def test_voices_are_raw_f32_rows(checkpoint, built):
    out, manifest = built
    assert [v["name"] for v in manifest["voices"]] == ["Delia", "marcus"]
    for v in manifest["voices"]:
        data = (out / v["file"]).read_bytes()
        src = bw.read_safetensors(checkpoint / "voices" / f"{v['name']}.safetensors")["audio_prompt"]
        src = src.reshape(-1, PROMPT_DIM)
        assert (v["rows"], v["width"], v["dtype"]) == (src.shape[0], PROMPT_DIM, "f32")
        assert v["bytes"] == len(data) and v["sha256"] == sha(data)
        np.testing.assert_array_equal(np.frombuffer(data, "<f4").reshape(src.shape), src)


# ---------------------------------------------------------------------------------------------------
# Refusing what is not a Phonon 31M checkpoint
# ---------------------------------------------------------------------------------------------------
def _variant(tmp_path: Path, tensors=None, config=None, tokenizer_name="tokenizer.5.0.0.json") -> Path:
    return write_checkpoint(tmp_path / "variant", tensors, config, tokenizer_name)


def test_unknown_tensor_is_named(tmp_path):
    tensors = model_tensors()
    tensors["model.layers.0.mlp.gate_proj.weight"] = torch.zeros(4, 4)
    with pytest.raises(WeightsError) as info:
        bw.convert(_variant(tmp_path, tensors), tmp_path / "out")
    assert "model.layers.0.mlp.gate_proj.weight" in str(info.value)
    assert "not a Phonon 31M tensor" in str(info.value) and "another model" in str(info.value)


def test_missing_tensors_are_listed(tmp_path):
    tensors = model_tensors()
    del tensors["flow_lm.transformer.layers.1.linear2.weight"]
    del tensors["mimi.upsample.convtr.convtr.weight"]
    with pytest.raises(WeightsError) as info:
        bw.convert(_variant(tmp_path, tensors), tmp_path / "out")
    message = str(info.value)
    assert "2 required tensor(s) missing" in message
    assert (
        "flow_lm.transformer.layers.1.linear2.weight" in message
        and "mimi.upsample.convtr.convtr.weight" in message
    )


def test_layer_count_comes_from_config(tmp_path):
    with pytest.raises(WeightsError, match=r"flow_lm\.transformer\.layers\.2\.self_attn\.in_proj\.weight"):
        bw.convert(_variant(tmp_path, config={**CONFIG, "num_hidden_layers": 3}), tmp_path / "out")
    with pytest.raises(WeightsError, match="N = 1"):
        bw.convert(_variant(tmp_path / "b", config={**CONFIG, "num_hidden_layers": 1}), tmp_path / "out")


def test_shapes_are_checked_against_config(tmp_path):
    with pytest.raises(WeightsError) as info:
        bw.convert(_variant(tmp_path, config={**CONFIG, "vocab_size": 301}), tmp_path / "out")
    assert EMBED in str(info.value) and "[300, 64]" in str(info.value) and "[301, 64]" in str(info.value)


def test_config_must_be_a_phonon_config(tmp_path):
    with pytest.raises(WeightsError, match="hidden_size"):
        bw.convert(_variant(tmp_path, config={"model_type": "llama"}), tmp_path / "out")
    folder = _variant(tmp_path / "b")
    (folder / "config.json").write_text("{oops")
    with pytest.raises(WeightsError, match="not valid JSON"):
        bw.convert(folder, tmp_path / "out")


def test_plain_tokenizer_json_is_refused(tmp_path):
    folder = _variant(tmp_path, tokenizer_name="tokenizer.json")
    with pytest.raises(WeightsError) as info:
        bw.convert(folder, tmp_path / "out")
    assert "tokenizer.5.0.0.json" in str(info.value) and "tokenizer.json" in str(info.value)


def test_bad_voice_files(tmp_path):
    folder = _variant(tmp_path)
    save_file({"audio_prompt": torch.zeros(7, 12)}, folder / "voices" / "narrow.safetensors")
    with pytest.raises(WeightsError, match=r"narrow\.safetensors.*\[7, 12\]"):
        bw.convert(folder, tmp_path / "out")
    (folder / "voices" / "narrow.safetensors").unlink()
    save_file({"latents": torch.zeros(7, PROMPT_DIM)}, folder / "voices" / "other.safetensors")
    with pytest.raises(WeightsError, match="audio_prompt"):
        bw.convert(folder, tmp_path / "out")
    shutil.rmtree(folder / "voices")
    with pytest.raises(WeightsError, match="no voices"):
        bw.convert(folder, tmp_path / "out")


# ---------------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------------
def test_cli_prints_sizes_and_hashes(checkpoint, tmp_path, capsys):
    assert bw.main([str(checkpoint), "-o", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    blob = (tmp_path / "out" / "weights.bin").read_bytes()
    assert sha(blob) in printed and f"{len(blob):,}" in printed
    assert "voices/Delia.bin" in printed and "total:" in printed


def test_cli_error_is_one_line_and_exit_2(checkpoint, tmp_path):
    folder = tmp_path / "ckpt"
    shutil.copytree(checkpoint, folder)
    raw = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(raw[:20])
    run = subprocess.run(
        [sys.executable, str(REPO / "build_weights.py"), str(folder), "-o", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    assert "truncated or corrupt" in run.stderr


# ---------------------------------------------------------------------------------------------------
# phonon_web.manifest
# ---------------------------------------------------------------------------------------------------
def test_manifest_reader_loads_what_build_weights_writes(built):
    out, written = built
    m = load_manifest((out / "manifest.json").read_text())
    assert m.weights_sha256 == written["weights"]["sha256"]
    assert m.config == CONFIG and m.q8_block == 32
    assert len(m.tensors) == len(written["tensors"])
    e = m.tensor(EMBED)
    assert (e.kind, e.shape, e.rows, e.cols, e.padded_cols) == ("q8", (VOCAB, H), VOCAB, H, H)
    assert e.word_offset * 4 == e.offset and e.scales_word_offset * 4 == e.scales_offset
    assert m.voice_names == ("Delia", "marcus") and m.voice("marcus").rows == 5
    assert m.tokenizer.file == "tokenizer.json"
    blob = (out / "weights.bin").read_bytes()
    written_embed = next(t for t in written["tensors"] if t["name"] == EMBED)
    np.testing.assert_array_equal(bw.dequantize(e, blob), bw.dequantize(written_embed, blob))
    with pytest.raises(WeightsError, match="no tensor"):
        m.tensor("flow_lm.nope")
    with pytest.raises(WeightsError, match="Delia, marcus"):
        m.voice("Nobody")
    assert load_manifest((out / "manifest.json").read_bytes()).tensors == m.tensors


def test_manifest_reader_rejects_other_formats_and_damage(built):
    _, written = built
    with pytest.raises(WeightsError, match="not a phonon-web weights manifest"):
        load_manifest({**written, "format": "gguf"})
    with pytest.raises(WeightsError, match="not a phonon-web weights manifest"):
        load_manifest({"weight_map": {}})
    with pytest.raises(WeightsError, match="newer than this phonon_web"):
        load_manifest({**written, "version": bw.VERSION + 1})
    with pytest.raises(WeightsError, match="older than this phonon_web reads"):
        load_manifest({**written, "version": bw.VERSION - 1})
    with pytest.raises(WeightsError, match="not valid JSON"):
        load_manifest(json.dumps(written)[:-20])
    with pytest.raises(WeightsError, match="lacks tensors"):
        load_manifest({k: v for k, v in written.items() if k != "tensors"})
    tensors = [dict(t) for t in written["tensors"]]
    tensors[0]["offset"] += 2
    with pytest.raises(WeightsError, match="multiple of 4"):
        load_manifest({**written, "tensors": tensors})
    tensors = [dict(t) for t in written["tensors"]]
    tensors[-1]["offset"] = written["weights"]["bytes"]
    with pytest.raises(WeightsError, match="past the end"):
        load_manifest({**written, "tensors": tensors})
    tensors = [dict(t) for t in written["tensors"]]
    tensors[1]["offset"] = tensors[0]["offset"]
    with pytest.raises(WeightsError, match="overlap"):
        load_manifest({**written, "tensors": tensors})
    with pytest.raises(WeightsError, match="listed twice"):
        load_manifest({**written, "tensors": written["tensors"] + written["tensors"][:1]})
    with pytest.raises(WeightsError, match="sha256"):
        load_manifest({**written, "weights": {**written["weights"], "sha256": "abc"}})
    with pytest.raises(WeightsError, match="relative path"):
        load_manifest({**written, "tokenizer": {**written["tokenizer"], "file": "../etc/passwd"}})
    with pytest.raises(WeightsError, match="no quantization block"):
        load_manifest({**written, "quantization": None})
