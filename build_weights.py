"""Turn Gradium's Phonon 31M checkpoint folder into the files the browser downloads.

    python build_weights.py CHECKPOINT_DIR -o OUT_DIR [--f32]

Input (as Gradium ships it): `model.safetensors` (`flow_lm.*` in bf16, `mimi.*` in f32, plus
training-only tensors), `config.json`, optional `generation_config.json` / `processor_config.json`,
`voices/*.safetensors` (one `audio_prompt` tensor each) and `tokenizer.5.0.0.json`.

Output:
  weights.bin       every kept tensor in one blob, each at a 4-byte-aligned offset, so a WGSL shader
                    reads the whole thing as `array<u32>`. Tensors of at least 16,384 values are q8
                    (int8, one f16 scale per 32 values along a row), the rest f16; `--f32` keeps all f32.
  manifest.json     where each tensor lies and how it is stored, the voices, the tokenizer, the configs
                    and SHA-256s; byte-for-byte reproducible (sorted keys, no timestamps).
  tokenizer.json    a byte copy of tokenizer.5.0.0.json.
  voices/NAME.bin   each voice's latents, raw little-endian f32, rows x width.

What happens to each tensor is decided by `RULES`, an ordered table of (regex on the original name,
action); a tensor that matches no rule is an error, so another model's checkpoint is refused by name.
The manifest's reader for the engine (pure Python, no numpy) is `phonon_web/manifest.py`.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from phonon_web.errors import WeightsError
from phonon_web.manifest import VERSION as MANIFEST_VERSION
from phonon_web.manifest import load_manifest

FORMAT = "phonon-web-weights"
VERSION = MANIFEST_VERSION  # 2: SEANet transposed-conv weights in phase order (convtr_phases)
ALIGN = 4  # every tensor and every scale table starts at a multiple of 4 bytes (one u32 word)
Q8_BLOCK = 32  # values per f16 scale, along a row
Q8_MIN_VALUES = 16_384  # tensors with at least this many values are stored q8, smaller ones f16

TOKENIZER_SOURCE = "tokenizer.5.0.0.json"
TOKENIZER_OUT = "tokenizer.json"


# ---------------------------------------------------------------------------------------------------
# Reading safetensors
# ---------------------------------------------------------------------------------------------------
# Hand-written on purpose: numpy has no bfloat16, and the `safetensors` package can only hand back a
# bf16 tensor through torch (`framework="pt"`), which a build tool should not need. The format is
# small: an 8-byte little-endian header length, a JSON header (`dtype`, `shape`, `data_offsets` per
# tensor, optional `__metadata__`), then the raw little-endian data. Reading it ourselves also lets
# every way a file can be damaged become one clear `WeightsError`.

# Bytes per element of every dtype the safetensors format defines (to validate offsets of any tensor,
# including ones we skip); only the float dtypes below can be decoded.
_DTYPE_SIZES = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "F8_E8M0": 1,
    "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
    "I32": 4, "U32": 4, "F32": 4,
    "I64": 8, "U64": 8, "F64": 8, "C64": 8,
}  # fmt: skip
_DECODABLE = ("BF16", "F16", "F32")
_MAX_HEADER_BYTES = 100_000_000  # the limit of the reference safetensors implementation


def _corrupt(path: Path, what: str) -> WeightsError:
    return WeightsError(f"{path}: {what}. The file is truncated or corrupt: download it (or make it) again.")


@dataclass(frozen=True)
class _Stored:
    dtype: str
    shape: tuple[int, ...]
    begin: int  # absolute offsets in the file
    end: int


class SafetensorsFile:
    """A parsed and validated safetensors file; tensors are decoded to float32 on request."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            self.raw = self.path.read_bytes()
        except FileNotFoundError:
            raise WeightsError(f"{self.path} is missing.") from None
        except OSError as e:
            raise WeightsError(f"{self.path} cannot be read: {e.strerror or e}.") from None
        self.metadata: dict[str, str] = {}
        self.tensors: dict[str, _Stored] = self._parse()

    def _parse(self) -> dict[str, _Stored]:
        path, raw = self.path, self.raw
        if len(raw) < 8:
            raise _corrupt(path, f"only {len(raw)} bytes, too short for a safetensors header")
        n = int.from_bytes(raw[:8], "little")
        if n > _MAX_HEADER_BYTES:
            raise _corrupt(path, f"its header claims {n:,} bytes, more than any safetensors header")
        if 8 + n > len(raw):
            raise _corrupt(
                path, f"its header claims {n:,} bytes but the file has only {len(raw) - 8:,} after the length"
            )
        try:
            header = json.loads(raw[8 : 8 + n].decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise _corrupt(path, f"its header is not valid JSON ({e})") from None
        if not isinstance(header, dict):
            raise _corrupt(path, "its header is not a JSON object")
        data_start, data_len = 8 + n, len(raw) - 8 - n
        meta = header.pop("__metadata__", None)
        if meta is not None:
            if not isinstance(meta, dict):
                raise _corrupt(path, "its __metadata__ is not a JSON object")
            self.metadata = {str(k): str(v) for k, v in meta.items()}

        tensors: dict[str, _Stored] = {}
        for name, info in header.items():
            if not isinstance(info, dict):
                raise _corrupt(path, f"the header entry of {name!r} is not an object")
            dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
            if dtype not in _DTYPE_SIZES:
                raise _corrupt(path, f"tensor {name!r} has an unknown dtype {dtype!r}")
            if not isinstance(shape, list) or not all(_is_int(d) and d >= 0 for d in shape):
                raise _corrupt(path, f"tensor {name!r} has an invalid shape {shape!r}")
            if (
                not isinstance(offsets, list)
                or len(offsets) != 2
                or not all(_is_int(o) for o in offsets)
                or not 0 <= offsets[0] <= offsets[1]
            ):
                raise _corrupt(path, f"tensor {name!r} has invalid data_offsets {offsets!r}")
            begin, end = offsets
            if end > data_len:
                raise _corrupt(
                    path,
                    f"tensor {name!r} ends at byte {end:,} of the data but the data has only {data_len:,}",
                )
            if end - begin != math.prod(shape) * _DTYPE_SIZES[dtype]:
                raise _corrupt(path, f"tensor {name!r}: {end - begin:,} bytes do not hold {dtype} {shape}")
            tensors[name] = _Stored(dtype, tuple(shape), data_start + begin, data_start + end)

        spans = sorted((t.begin, t.end, name) for name, t in tensors.items() if t.end > t.begin)
        for (_, end_a, name_a), (begin_b, _, name_b) in zip(spans, spans[1:], strict=False):
            if begin_b < end_a:
                raise _corrupt(path, f"tensors {name_a!r} and {name_b!r} overlap")
        return tensors

    def array(self, name: str) -> np.ndarray:
        """Tensor `name` as a float32 array (BF16 and F16 widened exactly)."""
        t = self.tensors[name]
        if t.dtype not in _DECODABLE:
            raise WeightsError(
                f"{self.path}: tensor {name!r} is {t.dtype}; "
                f"only {', '.join(_DECODABLE)} tensors can be converted."
            )
        count = math.prod(t.shape)
        if t.dtype == "BF16":
            # bf16 is the top half of an f32: widen the u16 into the high bits of a u32 and reinterpret.
            bits = np.frombuffer(self.raw, dtype="<u2", count=count, offset=t.begin).astype("<u4") << 16
            values = bits.view("<f4")
        elif t.dtype == "F16":
            values = np.frombuffer(self.raw, dtype="<f2", count=count, offset=t.begin).astype(np.float32)
        else:
            values = np.frombuffer(self.raw, dtype="<f4", count=count, offset=t.begin).copy()
        return values.astype(np.float32, copy=False).reshape(t.shape)


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def read_safetensors(path: str | Path) -> dict[str, np.ndarray]:
    """Every tensor of a safetensors file as float32 numpy arrays (BF16, F16 and F32 are accepted)."""
    f = SafetensorsFile(path)
    return {name: f.array(name) for name in f.tensors}


# ---------------------------------------------------------------------------------------------------
# The per-tensor rules
# ---------------------------------------------------------------------------------------------------
# A layout transform: (original name, float32 array as stored, config.json) -> the array to store.
# It may change the shape; the manifest records the shape after it.
Transform = Callable[[str, np.ndarray, dict], np.ndarray]


def as_stored(name: str, array: np.ndarray, config: dict) -> np.ndarray:
    """The identity layout: the tensor as the checkpoint holds it."""
    return array


def convtr_phases(name: str, array: np.ndarray, config: dict) -> np.ndarray:
    """A ConvTranspose1d weight [in][out][2s] (kernel twice its stride s) -> [s * out][in][2].

    The codec computes each output phase p (output row s*m + p) as a GEMM over K = (input channel i,
    tap t): t = 0 reads the previous input row through kernel tap p + s, t = 1 the current one through
    tap p. Row p * out + o of the stored matrix holds output channel o of phase p with K in the order the
    kernel walks it (k = 2i + t), so the GEMM reads whole q8 rows (16 bytes a load) instead of one value
    at a time from scattered taps. The engine finds `out` from the bias (SEANet convs have one)."""
    if array.ndim != 3 or array.shape[2] % 2:
        raise WeightsError(
            f"{name}: a transposed conv of shape {array.shape}, expected [in][out][2 x stride]"
        )
    cin, cout, taps = array.shape
    stride = taps // 2
    phases = np.empty((stride, cout, cin, 2), dtype=np.float32)
    for p in range(stride):
        phases[p, :, :, 0] = array[:, :, p + stride].T
        phases[p, :, :, 1] = array[:, :, p].T
    return phases.reshape(stride * cout, cin, 2)


@dataclass(frozen=True)
class Rule:
    pattern: str  # regex, matched with re.search against the original tensor name
    action: str  # "skip" or "keep"
    transform: Transform = as_stored
    why: str = ""


_COND = r"^flow_lm\.condition_provider\.conditioners\."
_LM_LAYER = r"^flow_lm\.transformer\.layers\.\d+\."
_FLOW = r"^flow_lm\.flow_net\."
_CODEC_LAYER = r"^mimi\.decoder_transformer\.transformer\.layers\.\d+\."

# Ordered: the first rule whose pattern matches decides. Most tensors keep the checkpoint's layout,
# which the kernels read as it is (interleaved RoPE pairs rotated in the QKV epilogues, [out][in][taps]
# convolutions gathered along K = in x taps); the SEANet transposed convolutions are stored per output
# phase (convtr_phases).
RULES: tuple[Rule, ...] = (
    # training-only
    Rule(r"^flow_lm\.flow\.w_s_t\.", "skip", why="training-only: the LSD loss weighting"),
    Rule(r"\.learnt_padding$", "skip", why="training-only: conditioner padding"),
    # The codec's encoder half, should a checkpoint carry it: the browser only decodes.
    Rule(r"^mimi\.(encoder|encoder_transformer|downsample)\.", "skip", why="codec encoder, unused"),
    # the language model: conditioners
    Rule(_COND + r"transcript_in_segment\.embed\.weight$", "keep", why="text embedding"),
    Rule(_COND + r"speaker_wavs\.output_proj\.weight$", "keep", why="voice latents -> hidden"),
    Rule(_COND + r"num_speakers\.(embed|output_proj)\.weight$", "keep", why="num_speakers condition"),
    Rule(_COND + r"duration_delta\.output_proj\.weight$", "keep", why="speaking-rate condition"),
    Rule(r"^flow_lm\.input_linear\.weight$", "keep", why="latent -> hidden"),
    Rule(r"^flow_lm\.(bos_emb|emb_mean|emb_std)$", "keep", why="BOS latent, latent statistics"),
    # the backbone
    Rule(_LM_LAYER + r"self_attn\.in_proj\.weight$", "keep", why="fused q, k, v (q/k interleaved RoPE)"),
    Rule(_LM_LAYER + r"self_attn\.out_proj\.weight$", "keep"),
    Rule(_LM_LAYER + r"norm[12]\.(weight|bias)$", "keep"),
    Rule(_LM_LAYER + r"linear[12]\.weight$", "keep"),
    Rule(r"^flow_lm\.out_norm\.(weight|bias)$", "keep"),
    Rule(r"^flow_lm\.out_eos\.(weight|bias)$", "keep", why="end-of-speech logit"),
    # the flow head
    Rule(_FLOW + r"(input_proj|cond_embed)\.(weight|bias)$", "keep"),
    Rule(_FLOW + r"time_embed\.\d+\.freqs$", "keep"),
    Rule(_FLOW + r"time_embed\.\d+\.mlp\.[02]\.(weight|bias)$", "keep"),
    Rule(_FLOW + r"time_embed\.\d+\.mlp\.3\.alpha$", "keep", why="mean-square norm gain"),
    Rule(_FLOW + r"res_blocks\.\d+\.(in_ln|mlp\.0|mlp\.2|adaLN_modulation\.1)\.(weight|bias)$", "keep"),
    Rule(_FLOW + r"final_layer\.(linear|adaLN_modulation\.1)\.(weight|bias)$", "keep"),
    # the codec decoder
    Rule(r"^mimi\.quantizer\.output_proj\.weight$", "keep", why="latent 1x1 conv"),
    Rule(r"^mimi\.upsample\.convtr\.convtr\.(weight|bias)$", "keep", why="depthwise ConvTranspose"),
    Rule(_CODEC_LAYER + r"self_attn\.in_proj\.weight$", "keep", why="fused q, k, v (q/k interleaved RoPE)"),
    Rule(_CODEC_LAYER + r"self_attn\.out_proj\.weight$", "keep"),
    Rule(_CODEC_LAYER + r"norm[12]\.(weight|bias)$", "keep"),
    Rule(_CODEC_LAYER + r"linear[12]\.weight$", "keep"),
    Rule(_CODEC_LAYER + r"layer_scale_[12]\.scale$", "keep"),
    Rule(
        r"^mimi\.decoder\.model\.\d+\.convtr\.weight$",
        "keep",
        transform=convtr_phases,
        why="SEANet ConvTranspose: one GEMM matrix per output phase",
    ),
    Rule(r"^mimi\.decoder\.model\.\d+\.(conv|convtr)\.(weight|bias)$", "keep", why="SEANet conv"),
    Rule(r"^mimi\.decoder\.model\.\d+\.block\.\d+\.conv\.(weight|bias)$", "keep", why="SEANet residual conv"),
)


# Tensors the kernels want that the checkpoint does not hold as such: constants folded from several
# tensors (for example a time embedding that is the same at every step, added once into a bias). Each
# entry reads the checkpoint's tensors through `read(name) -> float32 array` and returns new tensors,
# named under `flow_lm.` or `mimi.` (the part of the weights they belong to) and stored like any other.
Read = Callable[[str], np.ndarray]


@dataclass(frozen=True)
class Derived:
    make: Callable[[Read, dict], dict[str, np.ndarray]]
    why: str = ""


# ---- language-model layout (kept in step with phonon_web/lm.py and its kernels)
LM_DERIVED: tuple[Derived, ...] = ()
# ---- codec layout (kept in step with phonon_web/codec.py and its kernels)
CODEC_DERIVED: tuple[Derived, ...] = ()
DERIVED = LM_DERIVED + CODEC_DERIVED


def rule_for(name: str) -> Rule | None:
    for rule in RULES:
        if re.search(rule.pattern, name):
            return rule
    return None


# ---------------------------------------------------------------------------------------------------
# Checking the checkpoint against config.json
# ---------------------------------------------------------------------------------------------------
def _cfg_int(config: dict, key: str) -> int | None:
    value = config.get(key) if isinstance(config, dict) else None
    return value if _is_int(value) and value > 0 else None


def _layer_names(prefix: str, count: int, suffixes: list[str]) -> list[str]:
    return [f"{prefix}{i}.{s}" for i in range(count) for s in suffixes]


def _indices(names: list[str], pattern: str) -> set[int]:
    return {int(m.group(1)) for n in names if (m := re.match(pattern, n))}


def check_checkpoint(shapes: dict[str, tuple[int, ...]], config: dict) -> None:
    """Raise WeightsError if a required tensor is missing, a count disagrees with config.json, or an
    easy-to-check shape is wrong. `shapes` holds the kept tensors' original shapes."""
    names = sorted(shapes)
    hidden = config["hidden_size"]
    layers = config["num_hidden_layers"]
    vocab = config["vocab_size"]
    flow_cfg = config.get("flow_head_config") if isinstance(config.get("flow_head_config"), dict) else {}
    codec_cfg = (
        config.get("audio_tokenizer_config") if isinstance(config.get("audio_tokenizer_config"), dict) else {}
    )
    problems: list[str] = []

    # How many of each repeated block: from the config where it says, else as found (at least one).
    counts = {
        "flow_lm.transformer.layers.": (layers, "num_hidden_layers"),
        "flow_lm.flow_net.res_blocks.": (
            _cfg_int(flow_cfg, "num_hidden_layers"),
            "flow_head_config.num_hidden_layers",
        ),
        "flow_lm.flow_net.time_embed.": (
            0 if flow_cfg.get("flow_type") == "drifting" else 2,
            "flow_head_config.flow_type",
        ),
        "mimi.decoder_transformer.transformer.layers.": (
            _cfg_int(codec_cfg, "num_hidden_layers"),
            "audio_tokenizer_config.num_hidden_layers",
        ),
    }
    found = {prefix: _indices(names, "^" + re.escape(prefix) + r"(\d+)\.") for prefix in counts}
    n: dict[str, int] = {}
    for prefix, (expected, key) in counts.items():
        if expected is None:
            expected = max(found[prefix], default=0) + 1
        n[prefix] = expected
        extra = sorted(i for i in found[prefix] if i >= expected)
        if extra:
            problems.append(
                f"config.json ({key}) means {prefix}N for N < {expected}, but the checkpoint also has N = "
                + ", ".join(map(str, extra))
            )

    cond = "flow_lm.condition_provider.conditioners."
    required = [
        cond + "transcript_in_segment.embed.weight",
        cond + "speaker_wavs.output_proj.weight",
        cond + "num_speakers.embed.weight",
        cond + "num_speakers.output_proj.weight",
        cond + "duration_delta.output_proj.weight",
        "flow_lm.input_linear.weight",
        "flow_lm.bos_emb",
        "flow_lm.emb_mean",
        "flow_lm.emb_std",
        "flow_lm.out_norm.weight",
        "flow_lm.out_norm.bias",
        "flow_lm.out_eos.weight",
        "flow_lm.out_eos.bias",
        "flow_lm.flow_net.input_proj.weight",
        "flow_lm.flow_net.cond_embed.weight",
        "flow_lm.flow_net.final_layer.linear.weight",
        "flow_lm.flow_net.final_layer.adaLN_modulation.1.weight",
        "mimi.quantizer.output_proj.weight",
        "mimi.upsample.convtr.convtr.weight",
        "mimi.decoder.model.0.conv.weight",
    ]
    lm_layer = ["self_attn.in_proj.weight", "self_attn.out_proj.weight", "linear1.weight", "linear2.weight"]
    lm_layer += [f"norm{i}.{p}" for i in (1, 2) for p in ("weight", "bias")]
    required += _layer_names("flow_lm.transformer.layers.", n["flow_lm.transformer.layers."], lm_layer)
    required += _layer_names(
        "flow_lm.flow_net.time_embed.",
        n["flow_lm.flow_net.time_embed."],
        ["freqs", "mlp.0.weight", "mlp.2.weight", "mlp.3.alpha"],
    )
    required += _layer_names(
        "flow_lm.flow_net.res_blocks.",
        n["flow_lm.flow_net.res_blocks."],
        ["in_ln.weight", "in_ln.bias", "mlp.0.weight", "mlp.2.weight", "adaLN_modulation.1.weight"],
    )
    required += _layer_names(
        "mimi.decoder_transformer.transformer.layers.",
        n["mimi.decoder_transformer.transformer.layers."],
        lm_layer + ["layer_scale_1.scale", "layer_scale_2.scale"],
    )
    missing = [name for name in required if name not in shapes]
    if missing:
        shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
        problems.insert(0, f"{len(missing)} required tensor(s) missing: {shown}")

    # Shapes that follow directly from config.json.
    expect: dict[str, tuple[int, ...]] = {cond + "transcript_in_segment.embed.weight": (vocab, hidden)}
    intermediate = _cfg_int(config, "intermediate_size")
    for i in range(layers):
        base = f"flow_lm.transformer.layers.{i}."
        expect[base + "self_attn.in_proj.weight"] = (3 * hidden, hidden)
        expect[base + "self_attn.out_proj.weight"] = (hidden, hidden)
        for norm in ("norm1", "norm2"):
            expect[base + norm + ".weight"] = (hidden,)
        if intermediate:
            expect[base + "linear1.weight"] = (intermediate, hidden)
            expect[base + "linear2.weight"] = (hidden, intermediate)
    expect["flow_lm.out_norm.weight"] = (hidden,)
    expect["flow_lm.out_eos.weight"] = (1, hidden)
    if prompt_dim := _cfg_int(config, "audio_prompt_dim"):
        expect[cond + "speaker_wavs.output_proj.weight"] = (hidden, prompt_dim)
    if latent := _cfg_int(config, "latent_dim"):
        expect["flow_lm.input_linear.weight"] = (hidden, latent)
        for name in ("flow_lm.bos_emb", "flow_lm.emb_mean", "flow_lm.emb_std"):
            expect[name] = (latent,)
    if flow_hidden := _cfg_int(flow_cfg, "hidden_size"):
        expect["flow_lm.flow_net.cond_embed.weight"] = (flow_hidden, hidden)
    if codec_hidden := _cfg_int(codec_cfg, "hidden_size"):
        for i in range(n["mimi.decoder_transformer.transformer.layers."]):
            base = f"mimi.decoder_transformer.transformer.layers.{i}."
            expect[base + "self_attn.in_proj.weight"] = (3 * codec_hidden, codec_hidden)
    wrong = [
        f"{name} is {list(shapes[name])}, config.json implies {list(shape)}"
        for name, shape in expect.items()
        if name in shapes and tuple(shapes[name]) != shape
    ]
    if wrong:
        shown = "; ".join(wrong[:4]) + (f"; and {len(wrong) - 4} more" if len(wrong) > 4 else "")
        problems.append(f"shapes disagree with config.json: {shown}")

    if problems:
        raise WeightsError(
            "model.safetensors does not fit config.json or is incomplete: "
            + "; ".join(problems)
            + ". Use the model.safetensors and config.json of the same Phonon 31M release."
        )


# ---------------------------------------------------------------------------------------------------
# Quantisation
# ---------------------------------------------------------------------------------------------------
def _align(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def as_rows(shape: tuple[int, ...]) -> tuple[int, int]:
    """(rows, cols): rows = shape[0], cols = the product of the rest; 0-d and 1-d tensors are one row."""
    if len(shape) <= 1:
        return 1, math.prod(shape)
    return shape[0], math.prod(shape[1:])


def quantize_q8(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows x cols float32 -> (int8 rows x padded_cols, f16 scales rows x padded_cols/32).

    Values are rounded to f16 first; each block of 32 gets scale = max|v| / 127 (f32, from the f16
    values), stored as f16; q = clip(rint(v / f32(stored scale)), -127, 127), rint rounding half to
    even. A block whose stored scale is 0 (all zero, or too small for f16) has q = 0.
    """
    rows, cols = matrix.shape
    padded = -(-cols // Q8_BLOCK) * Q8_BLOCK
    v = np.zeros((rows, padded), dtype=np.float32)
    v[:, :cols] = matrix.astype(np.float16).astype(np.float32)
    blocks = v.reshape(rows, padded // Q8_BLOCK, Q8_BLOCK)
    scale = (np.abs(blocks).max(axis=2) / np.float32(127)).astype(np.float32)
    stored = scale.astype(np.float16)
    s = stored.astype(np.float32)[:, :, None]
    ratio = np.divide(blocks, s, out=np.zeros_like(blocks), where=s > 0)
    q = np.clip(np.rint(ratio), -127, 127).astype(np.int8)
    return q.reshape(rows, padded), stored


def _encode(name: str, array: np.ndarray, f32: bool) -> tuple[dict, list[bytes]]:
    """The manifest entry (offsets relative to the tensor's start) and the byte pieces of one tensor."""
    shape = tuple(int(d) for d in array.shape)
    values = array.astype(np.float32, copy=False)
    if not np.isfinite(values).all():
        raise WeightsError(f"tensor {name} holds NaN or infinite values: the checkpoint is damaged.")
    entry: dict = {"name": name, "shape": list(shape)}
    if f32:
        data = values.astype("<f4").tobytes()
        entry.update(kind="f32", offset=0, bytes=len(data))
        return entry, [data]
    if np.abs(values).max(initial=0) > np.finfo(np.float16).max:
        raise WeightsError(f"tensor {name} has values beyond the f16 range; build with --f32.")
    count = values.size
    if count < Q8_MIN_VALUES:
        half = np.zeros(count + (count & 1), dtype="<f2")
        half[:count] = values.reshape(-1)
        data = half.tobytes()
        entry.update(kind="f16", offset=0, bytes=len(data))
        return entry, [data]
    rows, cols = as_rows(shape)
    q, scales = quantize_q8(values.reshape(rows, cols))
    qbytes = q.tobytes()
    sbytes = scales.astype("<f2").tobytes()
    scales_offset = _align(len(qbytes))
    pad = b"\0" * (scales_offset - len(qbytes))
    entry.update(
        kind="q8",
        offset=0,
        bytes=scales_offset + len(sbytes),  # the whole span: int8 data, then the scales
        scales_offset=scales_offset,
        rows=rows,
        cols=cols,
        padded_cols=q.shape[1],
    )
    return entry, [qbytes, pad, sbytes]


def dequantize(entry, blob: bytes) -> np.ndarray:
    """A tensor back from the blob as float32 in its logical shape (`entry`: a manifest entry dict or
    a phonon_web.manifest.TensorEntry)."""
    e = entry if isinstance(entry, dict) else dataclasses.asdict(entry)
    shape, kind, offset = tuple(e["shape"]), e["kind"], e["offset"]
    count = math.prod(shape)
    if kind == "f32":
        return np.frombuffer(blob, dtype="<f4", count=count, offset=offset).astype(np.float32).reshape(shape)
    if kind == "f16":
        return np.frombuffer(blob, dtype="<f2", count=count, offset=offset).astype(np.float32).reshape(shape)
    if kind == "q8":
        rows, cols, padded = e["rows"], e["cols"], e["padded_cols"]
        nb = padded // Q8_BLOCK
        q = np.frombuffer(blob, dtype=np.int8, count=rows * padded, offset=offset).astype(np.float32)
        s = np.frombuffer(blob, dtype="<f2", count=rows * nb, offset=e["scales_offset"]).astype(np.float32)
        v = (q.reshape(rows, nb, Q8_BLOCK) * s.reshape(rows, nb, 1)).reshape(rows, padded)
        return np.ascontiguousarray(v[:, :cols]).reshape(shape)
    raise WeightsError(f"tensor {e['name']} has an unknown kind {kind!r}.")


# ---------------------------------------------------------------------------------------------------
# The conversion
# ---------------------------------------------------------------------------------------------------
_VOICE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_json(path: Path, required: bool) -> dict | None:
    if not path.is_file():
        if required:
            raise WeightsError(f"{path} is missing: the checkpoint folder needs its config.json.")
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise WeightsError(f"{path} is not valid JSON ({e}): download it again.") from None
    if not isinstance(data, dict):
        raise WeightsError(f"{path} is not a JSON object: download it again.")
    return data


def _check_config(config: dict, path: Path) -> None:
    bad = [key for key in ("hidden_size", "num_hidden_layers", "vocab_size") if _cfg_int(config, key) is None]
    if bad:
        raise WeightsError(
            f"{path} lacks a positive integer {', '.join(bad)}: "
            "it is not a Phonon 31M (GradiumPhononTTSConfig) config."
        )


def _read_voices(folder: Path, config: dict) -> list[tuple[str, np.ndarray]]:
    voice_dir = folder / "voices"
    files = sorted(voice_dir.glob("*.safetensors")) if voice_dir.is_dir() else []
    if not files:
        raise WeightsError(f"{voice_dir} holds no voices (*.safetensors): the engine needs at least one.")
    width = _cfg_int(config, "audio_prompt_dim")
    voices = []
    for path in files:
        name = path.stem
        if not _VOICE_NAME.match(name):
            raise WeightsError(f"{path}: a voice's file name may only use letters, digits, '_', '.', '-'.")
        f = SafetensorsFile(path)
        if set(f.tensors) != {"audio_prompt"}:
            raise WeightsError(
                f"{path} should hold exactly one tensor, audio_prompt; it holds {sorted(f.tensors)}."
            )
        prompt = f.array("audio_prompt")
        if prompt.ndim == 3 and prompt.shape[0] == 1:
            prompt = prompt[0]
        if prompt.ndim != 2 or prompt.shape[0] == 0 or (width and prompt.shape[1] != width):
            want = f"[rows, {width}]" if width else "[rows, width]"
            raise WeightsError(
                f"{path}: audio_prompt is {list(f.tensors['audio_prompt'].shape)}, expected {want}."
            )
        if not np.isfinite(prompt).all():
            raise WeightsError(f"{path}: audio_prompt holds NaN or infinite values: download it again.")
        voices.append((name, np.ascontiguousarray(prompt, dtype="<f4")))
    return voices


def _read_tokenizer(folder: Path) -> bytes:
    path = folder / TOKENIZER_SOURCE
    if not path.is_file():
        if (folder / "tokenizer.json").is_file():
            raise WeightsError(
                f"{folder} has tokenizer.json but not {TOKENIZER_SOURCE}: Phonon 31M needs "
                f"{TOKENIZER_SOURCE} (its normaliser rules are not in tokenizer.json); "
                "download it from the model's repository."
            )
        raise WeightsError(f"{path} is missing: download it from the model's repository.")
    data = path.read_bytes()
    try:
        parsed = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise WeightsError(
            f"{path} is not valid JSON ({e}): it is truncated or corrupt, download it again."
        ) from None
    if not isinstance(parsed, dict) or "model" not in parsed:
        raise WeightsError(f"{path} is not a tokenizers JSON file (no 'model'): download it again.")
    return data


def _write(path: Path, data: bytes) -> None:
    """Write atomically: a crash leaves the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def manifest_bytes(manifest: dict) -> bytes:
    return (
        json.dumps(manifest, sort_keys=True, indent=1, separators=(",", ": "), ensure_ascii=True) + "\n"
    ).encode()


def convert(checkpoint_dir: str | Path, out_dir: str | Path, f32: bool = False) -> dict:
    """Convert a checkpoint folder into OUT_DIR (see the module docstring). Returns the manifest."""
    src, out = Path(checkpoint_dir), Path(out_dir)
    if not src.is_dir():
        raise WeightsError(f"{src} is not a folder: give the checkpoint folder (with model.safetensors).")
    if out.resolve() == src.resolve():
        raise WeightsError("the output folder must differ from the checkpoint folder.")

    config = _read_json(src / "config.json", required=True)
    _check_config(config, src / "config.json")
    generation_config = _read_json(src / "generation_config.json", required=False)
    processor_config = _read_json(src / "processor_config.json", required=False)
    tokenizer = _read_tokenizer(src)
    model = SafetensorsFile(src / "model.safetensors")
    voices = _read_voices(src, config)

    kept: dict[str, Rule] = {}
    unknown = []
    for name in model.tensors:
        rule = rule_for(name)
        if rule is None:
            unknown.append(name)
        elif rule.action == "keep":
            kept[name] = rule
    if unknown:
        unknown.sort()
        shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise WeightsError(
            f"{src / 'model.safetensors'}: not a Phonon 31M tensor: {shown}. "
            "Is this another model's checkpoint?"
        )
    check_checkpoint({name: model.tensors[name].shape for name in kept}, config)

    arrays: dict[str, np.ndarray] = {}
    for derived in DERIVED:
        for name, array in derived.make(model.array, config).items():
            if not name.startswith(("flow_lm.", "mimi.")) or name in kept or name in arrays:
                raise ValueError(f"derived tensor {name!r} must be new and named under flow_lm. or mimi.")
            arrays[name] = array
    for name, rule in kept.items():
        arrays[name] = rule.transform(name, model.array(name), config)

    entries, pieces, offset = [], [], 0
    for name in sorted(arrays):
        array = arrays.pop(name)
        entry, parts = _encode(name, np.asarray(array, dtype=np.float32), f32)
        entry["offset"] = offset
        if "scales_offset" in entry:
            entry["scales_offset"] += offset
        size = sum(len(p) for p in parts)
        pad = _align(size) - size
        pieces += parts + ([b"\0" * pad] if pad else [])
        offset += size + pad
        entries.append(entry)
    blob = b"".join(pieces)
    del pieces

    voice_entries, voice_files = [], []
    for name, latents in voices:
        data = latents.tobytes()
        file = f"voices/{name}.bin"
        voice_entries.append(
            {
                "name": name,
                "file": file,
                "rows": int(latents.shape[0]),
                "width": int(latents.shape[1]),
                "dtype": "f32",
                "bytes": len(data),
                "sha256": _sha256(data),
            }
        )
        voice_files.append((file, data))

    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "weights": {"file": "weights.bin", "bytes": len(blob), "sha256": _sha256(blob)},
        "tensors": entries,
        "voices": voice_entries,
        "tokenizer": {"file": TOKENIZER_OUT, "bytes": len(tokenizer), "sha256": _sha256(tokenizer)},
        "config": config,
        "generation_config": generation_config,
        "processor_config": processor_config,
        "quantization": None if f32 else {"block": Q8_BLOCK, "min_values": Q8_MIN_VALUES},
        "source": {"model_sha256": _sha256(model.raw)},
    }
    load_manifest(manifest)  # the engine's own reader must accept what we write

    _write(out / "weights.bin", blob)
    _write(out / TOKENIZER_OUT, tokenizer)
    for file, data in voice_files:
        _write(out / file, data)
    _write(out / "manifest.json", manifest_bytes(manifest))  # last: its presence means the rest is there
    return manifest


# ---------------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="build_weights.py",
        description="Convert Gradium's Phonon 31M checkpoint into phonon_web's weights.bin + manifest.json.",
    )
    parser.add_argument(
        "checkpoint_dir", help="folder with model.safetensors, config.json, voices/, tokenizer.5.0.0.json"
    )
    parser.add_argument("-o", "--out", required=True, help="output folder")
    parser.add_argument("--f32", action="store_true", help="keep every tensor f32 (for parity tests)")
    args = parser.parse_args(argv)
    try:
        manifest = convert(args.checkpoint_dir, args.out, f32=args.f32)
    except WeightsError as e:
        print(f"build_weights: error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2

    out = Path(args.out)
    files = ["weights.bin", "manifest.json", TOKENIZER_OUT] + [v["file"] for v in manifest["voices"]]
    width = max(len(f) for f in files)
    total = 0
    for file in files:
        data = (out / file).read_bytes()
        total += len(data)
        print(f"{file:<{width}}  {len(data):>12,} bytes  sha256 {_sha256(data)}")
    kinds = {k: sum(1 for t in manifest["tensors"] if t["kind"] == k) for k in ("q8", "f16", "f32")}
    values = sum(math.prod(t["shape"]) for t in manifest["tensors"])
    print(
        f"total: {len(files)} files, {total:,} bytes; {len(manifest['tensors'])} tensors "
        f"({kinds['q8']} q8, {kinds['f16']} f16, {kinds['f32']} f32), {values:,} values; "
        f"{len(manifest['voices'])} voice(s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
