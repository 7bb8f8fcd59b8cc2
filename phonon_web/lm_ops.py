"""The language model's kernels, seen from Python: which WGSL files make each one, its specialisation
constants, its parameters and its dispatch size.

Everything here runs at load time: each call makes one uniform buffer (the kernel's parameters),
fetches the pipeline (cached by the door per distinct kernel) and makes one bind group, then appends
one dispatch to a Program. Requests only write bytes into buffers that already exist.

The kernels (in wgsl/):
  gemv.wgsl               one-row matrix products with prologues/epilogues (the step), with
                          gemv_early_loads.wgsl, gemv_prologues.wgsl and gemv_extra.wgsl (or
                          gemv_extra_atomic.wgsl for E_DOWN_SPLIT, a feed-forward block in one dispatch)
  attention_step.wgsl     LayerNorm, q/k/v, RoPE and one query against the KV cache split over keys
  step_end.wgsl           the flow head's last layer, the latent, the next input row, the state advance
  condition.wgsl          the condition vector for this request's duration_delta, and the BOS row
  embed_rows.wgsl         text embedding rows for the prefill
  layernorm_rows.wgsl     LayerNorm of many rows (prefill)
  matmul.wgsl             many-row matrix product with epilogues (prefill), K split when it has few tiles
  matmul_reduce.wgsl      the sum of a split matmul's partial products, bias and epilogue
  rope_kv_rows.wgsl       RoPE on q and k of many rows, k and v into the KV cache (prefill)
  attention_prefill.wgsl  causal attention of many rows against the KV cache (prefill)
  copy_row.wgsl           one row of a matrix to a vector (the BOS row to the step's input)
  time_embedding.wgsl     the flow head's constant time embedding (once, at load)
and the helpers they include: lm_state.wgsl (the state words), lm_math.wgsl (portable sin/cos/log/erf,
the noise, RoPE on a pair), reduce_subgroups.wgsl or reduce_shared.wgsl (reductions), weights.wgsl
(reading weights), row_dot.wgsl (a matrix row's dot product), kv_cache.wgsl and kv_cache_put.wgsl
(reading and writing the KV cache), lm_sums.wgsl (exact sums across workgroups, E_DOWN_SPLIT's).
"""

from __future__ import annotations

from dataclasses import dataclass

from .gpu.door import STORAGE, UNIFORM, Door, Program
from .gpu.params import pack_params
from .gpu.shaders import kernel
from .weights import TensorRef

# The state's gate modes (lm_state.wgsl)
GATE_ALWAYS, GATE_STEP, GATE_BACKBONE = 0, 1, 2

# gemv.wgsl prologues and epilogues
P_LOAD, P_LAYERNORM, P_ADALN, P_SILU, P_ATTN_MERGE, P_NOISE = range(6)
E_STORE, E_GELU, E_SILU, E_RESIDUAL, E_GATED_RESIDUAL, E_COND_EOS, E_DOWN_SPLIT = range(7)
SUM_MAX_SHARES = 4095  # workgroups one E_DOWN_SPLIT may add to its sums (lm_sums.wgsl)
GEMV_LANES = (128, 64, 32, 16, 8)  # lanes per row a gemv may use; a workgroup (256) does 256 / lanes rows
# A gemv takes the most lanes a row (no more than its q8 rows have 16-byte chunks) that keep it within
# this many workgroups, else the fewest: fewer, wider workgroups repeat the prologue less often in all,
# and a long row spread over more lanes waits on fewer loads a lane. On the H200: the QKV product (a
# gemv then) and fc1 at 16 lanes 1.8 us faster each, the flow head's 10240 modulation rows at 8 lanes
# 11 us faster (64 or 32 here were slower than 128: bench/results/h200-ab-gemv-early-loads-2026-11-30.json);
# fc2 (2048 wide) at 64 lanes 2 us faster, and 256 here slower
# (bench/results/h200-ab-gemv-lanes-2026-11-30.json).
GEMV_MAX_GROUPS = 128
MAX_SEGMENTS = 8
CONDITION_ROWS = 16  # rows of the condition vector a workgroup of condition.wgsl makes (16 lanes a row)
WORKGROUP_BYTES = 16384  # WebGPU's portable maxComputeWorkgroupStorageSize

# matmul.wgsl epilogues
M_STORE, M_GELU, M_RESIDUAL, M_PARTIAL = 0, 1, 2, 3
TILE = 64  # matmul output tile (rows and columns)
# A matmul with fewer output tiles than this splits its K until its workgroups reach about this many
# (a GPU has tens to a hundred-odd cores: the H200 132, an M3 Max 40). The partial sums of every
# split matmul share one buffer of SPLIT_GROUPS tiles, so nothing is allocated per matmul.
SPLIT_GROUPS = 128
SPLIT_MIN_K = 64  # a split walks at least this much of K (4 steps of 16)

_KIND = {"q8": 0, "f16": 1, "f32": 2}

_GEMV_HEADER = (
    "gate rows n_segments src_offset ln_w ln_b ln_kind ln_affine ln_eps mod_shift mod_scale mod_gate "
    "dst_offset normed_offset write_normed head_dim heads part_stride align align_head align_stride "
    "aux_offset sum_in sum_out"
).split()
_FLOATS = {"ln_eps", "eps"}


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def matmul_k_split(k: int, tiles: int, splits: int | None = None) -> int:
    """How much of K each workgroup of a matmul with `tiles` output tiles walks (a multiple of 16).

    Chosen so that tiles x splits stays within SPLIT_GROUPS (the partial-sum buffer's size) and each
    split walks at least SPLIT_MIN_K; `splits` asks for a number (tests), within the same bounds."""
    if splits is None:
        splits = SPLIT_GROUPS // tiles
    splits = max(1, min(splits, SPLIT_GROUPS // tiles, k // SPLIT_MIN_K))
    return _ceil(_ceil(k, splits), 16) * 16


@dataclass(frozen=True)
class Segment:
    """Rows of one matrix (and its optional bias) in a multi-matrix GEMV."""

    weight: TensorRef
    bias: TensorRef | None = None


class _LmKernelsBase:
    """Builds the language model's dispatches on one door; holds the dummy buffers unused bindings get."""

    def __init__(self, door: Door, weights_buffer, *, subgroups: bool | None = None):
        self.door = door
        self.weights = weights_buffer
        if subgroups is None:
            subgroups = "subgroups" in door.features
        self.subgroups = subgroups
        self.reduce = "reduce_subgroups.wgsl" if subgroups else "reduce_shared.wgsl"
        self.features = frozenset({"subgroups"}) if subgroups else frozenset()
        # Unused bindings get these; read-only and writable ones apart, since one buffer cannot be
        # bound both ways in one dispatch.
        self.dummy_read = door.buffer(16, STORAGE, "lm dummy (read)")
        self.dummy_write = door.buffer(16, STORAGE, "lm dummy (write)")
        door.write(self.dummy_read, 0, bytes(16))
        door.write(self.dummy_write, 0, bytes(16))
        self._partials = None  # matmul partial sums, made when the first split matmul is built

    # ---- plumbing ----------------------------------------------------------------------------
    def _kernel(
        self, main: str, *, state: bool, weights: bool, reduce: bool, kv: bool = False, parts=(), **constants
    ):
        """`main` and the helpers it asks for; `parts`: files of its own that come just before it."""
        files = []
        if state:
            files.append("lm_state.wgsl")
        files.append("lm_math.wgsl")
        if reduce:
            files.append(self.reduce)
        if weights:
            files.append("weights.wgsl")
        if kv:
            files.append("kv_cache.wgsl")
        files.extend(parts)
        files.append(main)
        features = self.features if reduce else frozenset()
        return kernel(*files, features=features, **constants)

    def _params(self, data: bytes, label: str):
        buffer = self.door.buffer(len(data), UNIFORM, f"params {label}")
        self.door.write(buffer, 0, data)
        return buffer

    def _dispatch(self, program: Program, k, buffers: list, groups) -> None:
        pipeline = self.door.pipeline(k)
        group = self.door.bind_group(pipeline, buffers)
        x, y, z = (groups, 1, 1) if isinstance(groups, int) else (*groups, 1, 1)[:3]
        if x > 65535:  # WebGPU's portable limit per dimension
            x, y = 65535, _ceil(x, 65535)
        program.dispatch(pipeline, group, x, y, z)

    def _r(self, buffer):
        return self.dummy_read if buffer is None else buffer

    def _w(self, buffer):
        return self.dummy_write if buffer is None else buffer

    # ---- gemv.wgsl ---------------------------------------------------------------------------
    def gemv(
        self,
        program: Program,
        segments: list[Segment],
        *,
        prologue: int = P_LOAD,
        epilogue: int = E_STORE,
        state,
        src=None,
        aux=None,
        dst=None,
        extra=None,
        gate: int = GATE_ALWAYS,
        splits: int = 1,
        lanes: int | None = None,
        down: Segment | None = None,
        label: str = "gemv",
        **fields,
    ) -> None:
        """y = W x over the rows of `segments` (all with the same number of columns). `splits`: with
        P_ATTN_MERGE, the attention's splits per head (a kernel constant, so the merge's loops over them
        run a fixed number of times). `lanes` per row: None chooses (see GEMV_MAX_GROUPS).
        E_DOWN_SPLIT: `down` is fc2 (its columns are the rows here); y goes through GELU and fc2 into the
        exact sums at word `sum_out` of `extra` (gemv.wgsl)."""
        if not 1 <= len(segments) <= MAX_SEGMENTS:
            raise ValueError(f"{label}: 1 to {MAX_SEGMENTS} segments")
        k = segments[0].weight.cols
        kp = _ceil(k, 32) * 32
        if lanes is None:
            rows = sum(seg.weight.rows for seg in segments)
            fits = [n for n in GEMV_LANES if n <= max(kp // 16, GEMV_LANES[-1])]
            lanes = next((n for n in fits if _ceil(rows, 256 // n) <= GEMV_MAX_GROUPS), fits[-1])
        if lanes not in GEMV_LANES:
            raise ValueError(f"{label}: {lanes} lanes per row; a gemv uses one of {GEMV_LANES}")
        if prologue == P_ATTN_MERGE and fields.get("heads", 0) * splits > 256:
            raise ValueError(f"{label}: at most 256 (head, split) pairs to merge")
        if 4 * kp + 5 * 1024 > WORKGROUP_BYTES:  # x, plus the reductions' and the merge's scratch
            raise ValueError(
                f"{label}: {k} columns do not fit in {WORKGROUP_BYTES} bytes of workgroup memory"
            )
        seg_words, end = [], 0
        for seg in segments:
            w = seg.weight
            if w.cols != k:
                raise ValueError(f"{label}: {w.name} has {w.cols} columns, not {k}")
            if w.kind == "q8" and w.padded_cols != kp:
                raise ValueError(f"{label}: {w.name} is padded to {w.padded_cols}, not {kp}")
            if (w.kind == "f16" and k % 8) or (w.kind == "f32" and k % 4):
                raise ValueError(f"{label}: {w.name}: {k} columns do not split into 16-byte reads")
            end += w.rows
            seg_words += _segment_words(seg, end)
        if epilogue == E_DOWN_SPLIT:
            seg_words += self._down_words(down, end, lanes, extra, label)
        elif down is not None:
            raise ValueError(f"{label}: `down` goes with E_DOWN_SPLIT only")
        seg_words += [0] * (8 * MAX_SEGMENTS - len(seg_words))
        values = {name: 0 for name in _GEMV_HEADER}
        values.update(gate=gate, rows=end, n_segments=len(segments), ln_eps=1e-5)
        sum_in = fields.pop("sum_in", None)  # the word of the sums E_RESIDUAL adds (None: none)
        values["sum_in"] = 0 if sum_in is None else 1 + sum_in
        for name, value in fields.items():
            if name not in values or name.startswith("_") or name in ("rows", "n_segments"):
                raise TypeError(f"{label}: unknown gemv field {name}")
            values[name] = value
        data = pack_params(*[_field(n, values[n]) for n in _GEMV_HEADER], *seg_words)
        extra_file = "gemv_extra_atomic.wgsl" if epilogue == E_DOWN_SPLIT else "gemv_extra.wgsl"
        kern = self._kernel(
            "gemv.wgsl",
            parts=(
                "lm_sums.wgsl",
                "row_dot.wgsl",
                extra_file,
                "gemv_early_loads.wgsl",
                "gemv_prologues.wgsl",
            ),
            state=True,
            weights=True,
            reduce=True,
            K=k,
            KP=kp,
            PROLOGUE=prologue,
            EPILOGUE=epilogue,
            SPLITS=splits if prologue == P_ATTN_MERGE else 1,
            LANES=lanes,
            DOWN=down.weight.rows if epilogue == E_DOWN_SPLIT else 1,
        )
        buffers = [
            self._params(data, label),
            self.weights,
            state,
            self._r(src),
            self._r(aux),
            self._w(dst),
            self._w(extra),
        ]
        self._dispatch(program, kern, buffers, _ceil(end, 256 // lanes))

    def _down_words(self, down: Segment | None, rows: int, lanes: int, sums, label: str) -> list[int]:
        """E_DOWN_SPLIT's fc2 as gemv.wgsl's segs[1], after checking that the kernel can take it."""
        if down is None or sums is None:
            raise ValueError(f"{label}: E_DOWN_SPLIT needs `down` (fc2) and `extra` (its sums)")
        w = down.weight
        if w.cols != rows:
            raise ValueError(f"{label}: {w.name} has {w.cols} columns, not the {rows} rows of fc1")
        if lanes > 64:  # each workgroup's rows are read four at a time
            raise ValueError(f"{label}: E_DOWN_SPLIT takes at most 64 lanes a row, got {lanes}")
        if _ceil(rows, 256 // lanes) > SUM_MAX_SHARES:
            raise ValueError(f"{label}: more than {SUM_MAX_SHARES} workgroups would add to one sum")
        if w.kind == "f16" and w.cols % 2:
            raise ValueError(f"{label}: {w.name}: an f16 fc2 needs an even number of columns, not {w.cols}")
        return _segment_words(down, w.rows)


def _segment_words(seg: Segment, end: int) -> list[int]:
    """gemv.wgsl's Segment: rows end at `end` (counted across segments), the weight and its bias."""
    w, bias = seg.weight, seg.bias
    return [
        end,
        _KIND[w.kind],
        w.word,
        w.scales_word,
        w.padded_cols,
        bias.word if bias else 0,
        _KIND[bias.kind] if bias else 0,
        int(bias is not None),
    ]


def _field(name: str, value):
    if name in _FLOATS:
        return float(value)
    if isinstance(value, bool):
        return int(value)
    return value


def ln_fields(weight: TensorRef | None, bias: TensorRef | None, eps: float) -> dict:
    """The LayerNorm fields of a gemv: affine when weight/bias are given."""
    if weight is None:
        return {"ln_affine": 0, "ln_eps": eps}
    if bias is None or weight.kind != bias.kind:
        raise ValueError("a LayerNorm's weight and bias must both exist and share a kind")
    return {
        "ln_w": weight.word,
        "ln_b": bias.word,
        "ln_kind": _KIND[weight.kind],
        "ln_affine": 1,
        "ln_eps": eps,
    }


def _weight_fields(ref: TensorRef) -> list:
    """(kind, word, scales, padded) of a matrix, as the kernels' parameters list them."""
    return [_KIND[ref.kind], ref.word, ref.scales_word, ref.padded_cols]


def _vector_fields(ref: TensorRef) -> list:
    if ref.kind == "q8":
        raise ValueError(f"{ref.name}: vectors are read as f16 or f32, not q8")
    return [_KIND[ref.kind], ref.word]


class LmKernelsMore:
    """Mixed into LmKernels below: the other kernels (kept apart from gemv for reading order)."""

    door: Door

    # ---- attention_step.wgsl -----------------------------------------------------------------
    def attention_step(
        self,
        program: Program,
        *,
        state,
        x,
        in_proj: TensorRef,
        rope,
        kv,
        partials,
        alignment,
        layer: int,
        layers: int,
        heads: int,
        head_dim: int,
        splits: int,
        part_stride: int,
        chunk: int,
        kv_f16: bool,
        align: bool,
        align_head: int,
        align_stride: int,
        gate: int = GATE_BACKBONE,
        sum_in: int | None = None,
        sum_clear: int | None = None,
        **ln,
    ) -> None:
        """LayerNorm (`ln`: ln_fields), the q/k/v rows of `in_proj` (no bias), RoPE, the new key and value
        into `kv` and attention over it, left in `partials` as `splits` parts a head for the output
        projection's merge: splits - 1 over the cached keys (`chunk` at most each), one for the new key.
        `sum_in`: the word in `partials` of a fused feed-forward's sums to add to x (None: x alone);
        `sum_clear`: the word of the sums to clear for this layer's own fused feed-forward."""
        if head_dim not in (16, 32, 64):
            raise ValueError(f"head_dim {head_dim}: the step's attention takes 16, 32 or 64")
        if splits < 2:
            raise ValueError("the step's attention has at least one split over the cache and the new key")
        hidden = heads * head_dim
        if in_proj.cols != hidden or in_proj.rows != 3 * hidden:
            raise ValueError(f"{in_proj.name}: {in_proj.rows} x {in_proj.cols}, not {3 * hidden} x {hidden}")
        kp = _ceil(hidden, 32) * 32
        if kp > 4 * 256 or (in_proj.kind == "f16" and hidden % 8) or (in_proj.kind == "f32" and hidden % 4):
            raise ValueError(f"{in_proj.name}: width {hidden}: at most 1024, in 16-byte reads")
        fields = {"ln_w": 0, "ln_b": 0, "ln_kind": 0, "ln_affine": 0, "ln_eps": 1e-5}
        if set(ln) - set(fields):
            raise TypeError(f"attention step: unknown LayerNorm fields {sorted(set(ln) - set(fields))}")
        fields.update(ln)
        row_words = hidden // (2 if kv_f16 else 1)
        data = pack_params(
            gate, layer, layers, heads, part_stride, row_words, int(align), align_head,
            align_stride, head_dim**-0.5, _KIND[in_proj.kind], in_proj.word,
            in_proj.scales_word, fields["ln_w"], fields["ln_b"], fields["ln_kind"],
            fields["ln_affine"], float(fields["ln_eps"]),
            0 if sum_in is None else 1 + sum_in, 0 if sum_clear is None else 1 + sum_clear,
        )  # fmt: skip
        k = self._kernel(
            "attention_step.wgsl", state=True, weights=True, reduce=True, kv=True,
            parts=("kv_cache_put.wgsl", "lm_sums.wgsl", "row_dot.wgsl"),
            K=hidden, KP=kp, LANES=max(8, 256 // head_dim), KV_F16=bool(kv_f16), HEAD_DIM=head_dim,
            CHUNK=chunk, OLD_SPLITS=splits - 1,
        )  # fmt: skip
        buffers = [
            self._params(data, f"attention step {layer}"), self.weights, state, x, rope, kv, partials,
            alignment,
        ]  # fmt: skip
        self._dispatch(program, k, buffers, heads * (splits + 2))

    # ---- step_end.wgsl -----------------------------------------------------------------------
    def step_end(
        self,
        program: Program,
        *,
        state,
        flow_x,
        mods,
        cond,
        flow_io,
        latents,
        x,
        eps: float,
        mod_shift: int,
        mod_scale: int,
        linear: TensorRef,
        linear_bias: TensorRef,
        mean: TensorRef,
        std: TensorRef,
        input_linear: TensorRef,
        input_proj: TensorRef,
        input_proj_bias: TensorRef,
        hidden: int,
    ) -> None:
        latent, width = linear.rows, linear.cols
        if 256 % latent or (256 // latent) % 4 or width % (4 * 256 // latent) or latent % 4:
            raise ValueError(
                f"latent size {latent} / flow width {width}: the step's end reads 4 values at a time"
            )
        if width > 512 or hidden > 512:
            raise ValueError(f"flow width {width} / hidden {hidden}: the step's end takes at most 512")
        if (input_proj.rows, input_proj.cols) != (width, latent):
            shape = f"{input_proj.rows} x {input_proj.cols}"
            raise ValueError(f"{input_proj.name} is {shape}, not {width} x {latent}")
        data = pack_params(
            GATE_STEP, float(eps), mod_shift, mod_scale,
            *_weight_fields(linear), *_vector_fields(linear_bias), *_vector_fields(mean),
            *_vector_fields(std), *_weight_fields(input_linear), *_weight_fields(input_proj),
            *_vector_fields(input_proj_bias),
        )  # fmt: skip
        k = self._kernel(
            "step_end.wgsl", state=True, weights=True, reduce=True, F=width, LATENT=latent, HIDDEN=hidden
        )
        buffers = [
            self._params(data, "step end"),
            self.weights,
            state,
            flow_x,
            mods,
            cond,
            flow_io,
            latents,
            x,
        ]
        self._dispatch(program, k, buffers, 1)

    # ---- condition.wgsl ----------------------------------------------------------------------
    def condition(
        self,
        program: Program,
        *,
        state,
        cond,
        rows,
        speakers: int,
        speaker_embed: TensorRef,
        speaker_proj: TensorRef,
        duration_proj: TensorRef,
        input_linear: TensorRef,
        bos: TensorRef,
        periods: list[float],
        hidden: int,
    ) -> None:
        half = len(periods)
        if half % 4:
            raise ValueError("the duration embedding's half size must be a multiple of 4")
        data = pack_params(
            speakers, _KIND[speaker_embed.kind], speaker_embed.word, 0,
            *_weight_fields(speaker_proj), *_weight_fields(duration_proj), *_weight_fields(input_linear),
            *_vector_fields(bos), 0, 0, *[float(p) for p in periods],
        )  # fmt: skip
        k = self._kernel(
            "condition.wgsl", state=True, weights=True, reduce=False,
            HIDDEN=hidden, HALF=half, SPEAKER_DIM=speaker_embed.cols, LATENT=input_linear.cols,
            ROWS_PER_GROUP=CONDITION_ROWS,
        )  # fmt: skip
        groups = _ceil(hidden, CONDITION_ROWS)
        self._dispatch(program, k, [self._params(data, "condition"), self.weights, state, cond, rows], groups)

    # ---- time_embedding.wgsl -----------------------------------------------------------------
    def time_embedding(
        self, program: Program, *, out, t: float, first: bool, divisor: float, eps: float, refs: dict
    ) -> None:
        fc1, fc2 = refs["fc1"], refs["fc2"]
        data = pack_params(
            float(t), int(first), float(divisor), float(eps), *_vector_fields(refs["freqs"]),
            *_weight_fields(fc1), *_vector_fields(refs["fc1_bias"]), *_weight_fields(fc2),
            *_vector_fields(refs["fc2_bias"]), *_vector_fields(refs["alpha"]),
        )  # fmt: skip
        k = self._kernel(
            "time_embedding.wgsl", state=False, weights=True, reduce=True, F=fc2.rows, FREQ=fc1.cols
        )
        self._dispatch(program, k, [self._params(data, "time embedding"), self.weights, out], 1)

    # ---- prefill -----------------------------------------------------------------------------
    def embed_rows(self, program: Program, *, state, text_ids, rows, embed: TensorRef, count: int) -> None:
        data = pack_params(*_weight_fields(embed))
        k = self._kernel("embed_rows.wgsl", state=True, weights=True, reduce=False, HIDDEN=embed.cols)
        buffers = [self._params(data, "embed rows"), self.weights, state, text_ids, rows]
        self._dispatch(program, k, buffers, count)

    def layernorm_rows(
        self, program: Program, *, x, y, weight: TensorRef, bias: TensorRef, eps, count
    ) -> None:
        if weight.kind != bias.kind:
            raise ValueError("a LayerNorm's weight and bias must share a kind")
        data = pack_params(_KIND[weight.kind], weight.word, bias.word, float(eps))
        k = self._kernel("layernorm_rows.wgsl", state=False, weights=True, reduce=True, HIDDEN=weight.cols)
        self._dispatch(program, k, [self._params(data, "layernorm rows"), self.weights, x, y], count)

    def matmul(
        self,
        program: Program,
        *,
        a,
        out,
        weight: TensorRef,
        rows: int,
        bias: TensorRef | None = None,
        epilogue: int = M_STORE,
        splits: int | None = None,
    ) -> None:
        """out (rows x weight.rows) = a W^T (+ bias), then the epilogue. `splits` of K: None chooses."""
        if weight.cols % 16:
            raise ValueError(f"{weight.name}: matmul needs the columns in steps of 16, not {weight.cols}")
        tiles = (_ceil(weight.rows, TILE), _ceil(rows, TILE))
        k_split = matmul_k_split(weight.cols, tiles[0] * tiles[1], splits)
        splits = _ceil(weight.cols, k_split)
        has_bias = int(bias is not None)
        bias_kind, bias_word = (_KIND[bias.kind], bias.word) if bias else (0, 0)
        data = pack_params(
            rows, weight.rows, weight.cols, weight.word, weight.scales_word, weight.padded_cols,
            has_bias, bias_kind, bias_word, k_split, 0, 0,
        )  # fmt: skip
        first = M_PARTIAL if splits > 1 else epilogue
        k = self._kernel(
            "matmul.wgsl", state=False, weights=True, reduce=False, KIND=_KIND[weight.kind], EPILOGUE=first
        )
        target = self._partial_sums() if splits > 1 else out
        buffers = [self._params(data, f"matmul {weight.name}"), self.weights, a, target]
        self._dispatch(program, k, buffers, (*tiles, splits))
        if splits == 1:
            return
        data = pack_params(rows, weight.rows, splits, has_bias, bias_kind, bias_word, 0, 0)
        k = self._kernel("matmul_reduce.wgsl", state=False, weights=True, reduce=False, EPILOGUE=epilogue)
        buffers = [self._params(data, f"matmul reduce {weight.name}"), self.weights, target, out]
        self._dispatch(program, k, buffers, _ceil(rows * weight.rows, 256))

    def _partial_sums(self):
        if self._partials is None:
            self._partials = self.door.buffer(4 * SPLIT_GROUPS * TILE * TILE, STORAGE, "matmul partials")
        return self._partials

    def rope_kv_rows(
        self,
        program: Program,
        *,
        state,
        qkv,
        rope,
        q,
        kv,
        text: bool,
        layer,
        layers,
        heads,
        head_dim,
        kv_f16,
        count,
    ) -> None:
        row_words = heads * head_dim // (2 if kv_f16 else 1)
        data = pack_params(int(text), layer, layers, row_words)
        k = self._kernel(
            "rope_kv_rows.wgsl", state=True, weights=False, reduce=False, kv=True,
            parts=("kv_cache_put.wgsl",), KV_F16=bool(kv_f16), HIDDEN=heads * head_dim, HEAD_DIM=head_dim,
        )  # fmt: skip
        buffers = [self._params(data, f"rope kv {layer}"), state, qkv, rope, q, kv]
        self._dispatch(program, k, buffers, count)

    def attention_prefill(
        self,
        program: Program,
        *,
        state,
        q,
        kv,
        out,
        alignment,
        text: bool,
        layer,
        layers,
        heads,
        head_dim,
        kv_f16,
        max_keys,
        align: bool,
        align_head: int,
        count: int,
    ) -> None:
        if 64 % (head_dim // 2):
            raise ValueError(f"head_dim {head_dim}: half of it must divide 64")
        if 4 * (max_keys + 3 * head_dim) + 3 * 1024 > WORKGROUP_BYTES:
            raise ValueError(f"{max_keys} keys do not fit in {WORKGROUP_BYTES} bytes of workgroup memory")
        row_words = heads * head_dim // (2 if kv_f16 else 1)
        data = pack_params(int(text), layer, layers, heads, row_words, int(align), align_head, head_dim**-0.5)
        k = self._kernel(
            "attention_prefill.wgsl", state=True, weights=False, reduce=True, kv=True,
            KV_F16=bool(kv_f16), HEAD_DIM=head_dim, MAX_KEYS=max_keys,
        )  # fmt: skip
        buffers = [self._params(data, f"attention prefill {layer}"), state, q, kv, out, alignment]
        self._dispatch(program, k, buffers, count * heads)

    def copy_row(self, program: Program, *, state, rows, x, hidden: int) -> None:
        k = self._kernel("copy_row.wgsl", state=True, weights=False, reduce=False, HIDDEN=hidden)
        self._dispatch(program, k, [state, rows, x], 1)


class LmKernels(LmKernelsMore, _LmKernelsBase):
    """Builds the language model's dispatches on one door (see the module docstring)."""
