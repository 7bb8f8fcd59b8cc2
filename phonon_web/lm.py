"""The language model on the GPU: (voice, text ids, seed) -> latent frames, end of speech, alignment.

Pure Python (no numpy): it builds buffers, pipelines, bind groups and Programs once, at construction;
a request writes its text ids and parameters into existing buffers and replays Programs.

A take, in Programs (each a prebuilt list of dispatches and copies, submitted by the caller):
  voice_prefill(voice)   once per voice (the constructor runs them): the voice's 125 rows through
                         the backbone; their keys and values are kept in the voice's own buffer.
  write_request(...)     not a Program: writes the text ids and the request's parameters.
  start(voice)           copies the request into the state and the voice's keys/values into the
                         cache, computes the condition vector for this duration_delta and the BOS
                         row, runs the text + BOS rows (padded to 64/128/192/256) through the
                         backbone, leaves the BOS row's residual where the step reads it, and
                         makes frame 0's noise and the flow head's input from it.
  step                   one frame. Every kernel first checks the state and returns at once once the
                         take is over, and the last one advances the state, so one submit can hold
                         any number of steps: `door.submit([(lm.start(v), 1), (lm.step, 40)])`.

The step (backbone first, skipped for frame 0 whose hidden state comes from the prefill):
  per layer: [LayerNorm + each head's q/k/v rows + RoPE + KV write + attention split over the keys]
             (attention_step.wgsl: every workgroup of a head makes 64 rows of in_proj itself),
             [out-proj GEMV whose prologue merges the splits, + residual], [LayerNorm + fc1 + GELU],
             [fc2 + residual]
  then: [out_norm + cond_embed (+ time embedding) + end-of-speech logit and decision] (one GEMV),
        [all adaLN modulations of the flow head] (one GEMV),
        per flow block: [adaLN + fc1 + SiLU], [fc2 + gated residual],
        [final layer, z = noise + v, latent, next input row, the next frame's noise and
         input_proj(noise), state advance] (step_end.wgsl).
  = 4 x layers + 2 x flow blocks + 3 dispatches (39 at full size). The text prefill is
  8 x layers + 3 dispatches (51) after 3 copies, then frame 0's noise + input_proj (one GEMV);
  a voice prefill 8 x layers + 1.

The checkpoint's layout is used as stored (build_weights.py needs no LM rules): q and k keep their
interleaved RoPE pairs (2j, 2j + 1), which the step's attention rotates as neighbouring rows, and attention
scores do not depend on the order of a head's dimensions; matrices that share an input (cond_embed and
out_eos, the adaLN modulations) are segments of one GEMV; the flow head's constant time embedding is
computed once at load (time_embedding.wgsl).

Use, per take: write_request(...), then submit start(voice) and steps (the engine submits
start_parts(voice), the same commands in three pieces, so that the GPU starts on the first early).
Queue writes are ordered with submits, so the next write_request may come before the GPU has finished
this take; but read this take's
`latents`, `eos_logits` and `alignment` (e.g. copies into staging buffers in the same or a later submit)
before the next start runs, since it reuses them.

The buffers the rest of the engine reads are listed in STATE (the state words) and on the class.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping
from dataclasses import dataclass

from . import lm_ops as ops
from .errors import TextError, VoiceError
from .gpu.door import STORAGE, Door, Program
from .weights import TensorRef, Weights

# ---------------------------------------------------------------------------------------------------
# The state buffer: u32 words (f32 ones stored as their bits). Mirrored by wgsl/lm_state.wgsl.
# ---------------------------------------------------------------------------------------------------
STATE = {
    "pos": 0,  # KV position of the row the step's backbone feeds (BOS position + frames made)
    "frames": 1,  # frames made so far
    "end": 2,  # frames to keep: 0 until the end of speech (or the budget) decides it
    "codec": 3,  # frames the codec has decoded (the codec writes it)
    "budget": 4,  # the most frames this text may make
    "seed": 5,  # noise seed
    "noise_scale": 6,  # f32: sqrt(temperature)
    "frames_after_eos": 7,  # frames kept after the end-of-speech frame
    "min_frames": 8,  # first frame whose end-of-speech logit counts
    "eos_threshold": 9,  # f32
    "dd": 10,  # f32: duration_delta * duration_delta_scale
    "text": 11,  # text tokens T
    "bos_pos": 12,  # KV position of the BOS row (voice rows + T)
    "voice_rows": 13,  # voice rows V
    "eos_frame": 14,  # the frame whose logit crossed the threshold; 0xFFFFFFFF if none
}
STATE_WORDS = 16
STATE_FLOATS = frozenset({"noise_scale", "eos_threshold", "dd"})
NO_FRAME = 0xFFFFFFFF

PREFILL_ROWS = 64  # text prefill sizes are multiples of this (text + BOS + padding)


# ---------------------------------------------------------------------------------------------------
# The noise, and its twin for the reference
# ---------------------------------------------------------------------------------------------------
_MASK = 0xFFFFFFFF


def _pcg(v: int) -> int:
    s = (v * 747796405 + 2891336453) & _MASK
    w = (((s >> ((s >> 28) + 4)) ^ s) * 277803737) & _MASK
    return ((w >> 22) ^ w) & _MASK


def _f32(x: float) -> float:
    return array("f", [x])[0]


def noise(seed: int, frame: int, temperature: float = 0.3, channels: int = 32) -> array:
    """The flow head's noise for (seed, frame) as the GPU makes it (lm_math.wgsl's noise_value times
    sqrt(temperature)): float32 values (an array('f'); np.asarray gives np.float32)."""
    scale = _f32(math.sqrt(temperature))
    base = _pcg((_pcg(seed & _MASK) + frame) & _MASK)
    out = array("f")
    for c in range(channels):
        h1 = _pcg((base + 2 * c) & _MASK)
        h2 = _pcg((base + 2 * c + 1) & _MASK)
        u1 = ((h1 >> 8) + 0.5) * 2.0**-24
        u2 = (h2 >> 8) * 2.0**-24
        n = _f32(math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2))
        out.append(_f32(n * scale))
    return out


def frame_budget(text_tokens: int, frame_rate: float = 12.5) -> int:
    """The reference's frame budget for a text: ceil((tokens / 3 + 2) * frame rate)."""
    return math.ceil((text_tokens / 3 + 2) * frame_rate)


def rope_table(positions: int, head_dim: int, theta: float = 10000.0) -> array:
    """(cos, sin) per (position, pair) as float32, computed as the reference does in f32: inverse
    frequencies 1 / theta ** (2i / d), angle = position * frequency, both rounded to f32."""
    half = head_dim // 2
    inv = [_f32(1.0 / _f32(theta ** _f32(2 * i / head_dim))) for i in range(half)]
    out = []
    for p in range(positions):
        for f in inv:
            angle = _f32(p * f)
            out.append(math.cos(angle))
            out.append(math.sin(angle))
    return array("f", out)


# ---------------------------------------------------------------------------------------------------
# Sizes
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LmDims:
    hidden: int
    layers: int
    heads: int
    head_dim: int
    mlp: int
    flow: int
    flow_blocks: int
    latent: int
    time_embeddings: int
    speakers: int  # the num_speakers condition's value
    eps: float
    flow_eps: float
    time_eps: float
    rope_theta: float
    frame_rate: float
    dd_scale: float
    dd_max_period: float
    dd_half: int


def _dims(config: dict, weights: Weights) -> LmDims:
    def count(prefix: str) -> int:
        n = 0
        while any(name.startswith(f"{prefix}{n}.") for name in weights.refs):
            n += 1
        return n

    hidden = config["hidden_size"]
    heads = config["num_attention_heads"]
    flow_cfg = config.get("flow_head_config") or {}
    rope = config.get("rope_parameters") or {}
    dd_proj = weights["flow_lm.condition_provider.conditioners.duration_delta.output_proj.weight"]
    return LmDims(
        hidden=hidden,
        layers=config["num_hidden_layers"],
        heads=heads,
        head_dim=config.get("head_dim") or hidden // heads,
        mlp=weights["flow_lm.transformer.layers.0.linear1.weight"].rows,
        flow=weights["flow_lm.flow_net.cond_embed.weight"].rows,
        flow_blocks=count("flow_lm.flow_net.res_blocks."),
        latent=weights["flow_lm.input_linear.weight"].cols,
        time_embeddings=count("flow_lm.flow_net.time_embed."),
        speakers=int(config.get("num_speakers", 1)),
        eps=float(config.get("layer_norm_eps", 1e-5)),
        flow_eps=float(flow_cfg.get("layer_norm_eps", 1e-6)),
        time_eps=float(flow_cfg.get("rms_norm_eps", 1e-5)),
        rope_theta=float(rope.get("rope_theta", config.get("rope_theta", 10000.0))),
        frame_rate=float(config.get("frame_rate", 12.5)),
        dd_scale=float(config.get("duration_delta_scale", 1000.0)),
        dd_max_period=float(config.get("duration_delta_max_period", 10000.0)),
        dd_half=dd_proj.cols // 2,
    )


# ---------------------------------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------------------------------
class LanguageModel:
    """Phonon's backbone, end-of-speech head and flow head as GPU Programs (see the module docstring).

    Buffers the rest of the engine reads:
      state        u32[16], words in STATE
      latents      f32[max_frames][latent]: denormalised latents (z * emb_std + emb_mean), for the codec
      eos_logits   f32[max_frames]: each frame's end-of-speech logit
      alignment    f32[max_frames][max_text_tokens]: layer align_layer, head align_head's attention
                   over the text tokens; frame 0's row from the BOS row in the prefill
      hidden       f32[flow + hidden]: [condition of the flow head, normalised hidden state] of the
                   last frame (for parity checks)
    """

    def __init__(
        self,
        door: Door,
        weights: Weights,
        config,
        *,
        voices: Mapping[str, bytes | bytearray | memoryview],
        generation_config: dict | None = None,
        processor_config: dict | None = None,
        max_text_tokens: int = 240,
        max_frames: int = 768,
        kv_f16: bool = True,
        align_layer: int = 3,
        align_head: int = 0,
        subgroups: bool | None = None,
        prefill_voices: bool = True,
        fuse_mlp: bool = True,
    ):
        if hasattr(config, "config"):  # a Manifest
            generation_config = generation_config or config.generation_config
            processor_config = processor_config or config.processor_config
            config = config.config
        self.door = door
        self.weights = weights
        self.config = config
        self.generation_config = dict(generation_config or {})
        self.processor_config = dict(processor_config or {})
        self.dims = d = _dims(config, weights)
        if not 0 <= align_layer < d.layers or not 0 <= align_head < d.heads:
            raise ValueError(f"align_layer {align_layer} / align_head {align_head} outside the model")
        if not voices:
            raise ValueError("the language model needs at least one voice")
        self.max_text_tokens = max_text_tokens
        self.max_frames = max_frames
        self.kv_f16 = kv_f16
        self.align_layer = align_layer
        self.align_head = align_head
        self.fuse_mlp = fuse_mlp

        width = config.get("audio_prompt_dim") or weights[_SPEAKER_PROJ].cols
        self.voice_rows = {}
        for name, data in voices.items():
            rows, rest = divmod(len(data), 4 * width)
            if rest or not rows:
                raise ValueError(f"voice {name!r}: {len(data)} bytes are not rows of {width} f32")
            self.voice_rows[name] = rows
        max_voice = max(self.voice_rows.values())
        self.prefill_sizes = tuple(
            PREFILL_ROWS * i for i in range(1, math.ceil((max_text_tokens + 1) / PREFILL_ROWS) + 1)
        )
        self.max_positions = max_voice + max(self.prefill_sizes[-1], max_text_tokens + max_frames)
        # the step's attention: parts over the cached keys (at most 256 keys each), one for the new key
        self.splits = max(7, math.ceil(self.max_positions / 256)) + 1
        self.chunk = math.ceil(self.max_positions / (self.splits - 1))
        self.part_stride = d.head_dim + 4
        self.kv_row_words = d.hidden // 2 if kv_f16 else d.hidden
        rows = max(self.prefill_sizes[-1], max_voice)

        self.kernels = ops.LmKernels(door, weights.lm_buffer, subgroups=subgroups)

        def buf(count: int, label: str, words: int = 4):
            return door.buffer(count * words, STORAGE, f"lm {label}")

        # the state and the request
        self.state = buf(STATE_WORDS, "state")
        self.request = buf(STATE_WORDS, "request")
        self.text_ids = buf(max_text_tokens, "text ids")
        # the step's vectors
        self.x = buf(d.hidden, "x")
        self.mlp = buf(d.mlp, "mlp")
        # the attention's parts, then two sets of a fused feed-forward's sums (lm_sums.wgsl, two words an
        # element): layer l's block adds to set l % 2 while the layer after reads set (l - 1) % 2
        parts = d.heads * self.splits * self.part_stride
        sums = 2 * d.hidden
        self.sums_at = (parts, parts + sums)
        self.partials = buf(parts + 2 * sums, "attention partials + feed-forward sums")
        self.hidden = buf(d.flow + d.hidden, "flow condition + hidden")
        self.mods = buf(d.flow_blocks * 3 * d.flow + 2 * d.flow, "adaLN modulations")
        self.flow_x = buf(d.flow, "flow x")
        self.flow_tmp = buf(d.flow, "flow tmp")
        self.flow_io = buf(2 * d.latent, "noise + z")
        self.cond = buf(d.hidden, "condition")
        self.time_embedding = buf(d.flow, "time embedding")
        # outputs
        self.latents = buf(max_frames * d.latent, "latents")
        self.eos_logits = buf(max_frames, "eos logits")
        self.alignment = buf(max_frames * max_text_tokens, "alignment")
        # the cache and the RoPE table
        self.kv = buf(self.max_positions * d.layers * 2 * self.kv_row_words, "kv cache")
        self.rope = buf(self.max_positions * d.head_dim, "rope table")
        door.write(self.rope, 0, rope_table(self.max_positions, d.head_dim, d.rope_theta).tobytes())
        # the prefill's rows
        self.rows_x = buf(rows * d.hidden, "prefill x")
        self.rows_y = buf(rows * d.hidden, "prefill y")
        self.rows_qkv = buf(rows * 3 * d.hidden, "prefill qkv")
        self.rows_q = buf(rows * d.hidden, "prefill q")
        self.rows_mlp = buf(rows * d.mlp, "prefill mlp")
        for b in (self.state, self.eos_logits, self.alignment, self.latents, self.kv):
            door.write(b, 0, bytes(b.size))

        # voices: latents in, keys/values out
        self.voice_latents, self.voice_kv, self.voice_words = {}, {}, {}
        for name, data in voices.items():
            v = self.voice_rows[name]
            self.voice_latents[name] = buf(v * width, f"voice {name} latents")
            door.write(self.voice_latents[name], 0, bytes(data))
            self.voice_kv[name] = buf(v * d.layers * 2 * self.kv_row_words, f"voice {name} kv")
            self.voice_words[name] = buf(1, f"voice {name} rows")
            door.write(self.voice_words[name], 0, array("I", [v]).tobytes())

        # ---- Programs ----
        self._time_program = Program("lm time embedding")
        self._build_time_embedding(self._time_program)
        self._voice_programs = {}
        for name in voices:
            program = Program(f"lm voice prefill {name}")
            self._build_voice_prefill(program, name)
            self._voice_programs[name] = door.compile(program)
        self._text_programs = {}
        for size in self.prefill_sizes:
            program = Program(f"lm text prefill {size}")
            self._build_text_prefill(program, size)
            self._text_programs[size] = program
        self._start_programs = {}
        self._start_parts = {}
        for name in voices:
            for size in self.prefill_sizes:
                program = Program(f"lm start {name} {size}")
                self._build_voice_start(program, name)
                program.extend(self._text_programs[size])
                self._build_first_noise(program)
                self._start_programs[name, size] = door.compile(program)
                parts = _cut(program, START_CUTS)
                self._start_parts[name, size] = tuple(door.compile(part) for part in parts)
        self.step = Program("lm step")
        self._build_step(self.step)
        door.compile(self.step)

        self._last_size = self.prefill_sizes[0]
        door.submit([(self._time_program, 1)])
        if prefill_voices:
            self.prefill_voices()

    # ---- requests ---------------------------------------------------------------------------------
    def voice_prefill(self, voice: str) -> Program:
        """The Program that prefills `voice` into its own key/value buffer (the constructor runs it)."""
        return self._voice_programs[self._voice(voice)]

    def prefill_voices(self) -> None:
        self.door.submit([(p, 1) for p in self._voice_programs.values()])

    def prefill_size(self, text_tokens: int) -> int:
        """The padded prefill rows for a text: text + BOS, rounded up to a multiple of 64."""
        for size in self.prefill_sizes:
            if text_tokens + 1 <= size:
                return size
        raise TextError(f"{text_tokens} text tokens is more than this engine takes ({self.max_text_tokens})")

    def frames_after_eos_for(self, words: int | None) -> int:
        """Frames kept after the end-of-speech frame: more for short texts (processor_config)."""
        p = self.processor_config
        if words is not None and words <= p.get("short_text_max_words", 4):
            return int(p.get("frames_after_eos_short_text", 3))
        return int(p.get("frames_after_eos", 1))

    def write_request(
        self,
        text_ids,
        *,
        seed: int = 0,
        temperature: float | None = None,
        duration_delta: float = 0.0,
        frames_after_eos: int | None = None,
        words: int | None = None,
        min_frames: int | None = None,
        eos_threshold: float | None = None,
        budget: int | None = None,
    ) -> int:
        """Write one text's ids and parameters; returns its frame budget. `start(voice)` then uses them.

        Defaults come from the checkpoint's generation_config (temperature, eos_threshold,
        min_frames_before_eos) and processor_config (frames after the end of speech, by `words`); the
        budget is the reference's, ceil((tokens / 3 + 2) * 12.5), at most max_frames.
        """
        ids = [int(i) for i in text_ids]
        t = len(ids)
        if not 1 <= t <= self.max_text_tokens:
            raise TextError(
                f"a text must have 1 to {self.max_text_tokens} tokens, not {t}: split longer texts"
            )
        g = self.generation_config
        if temperature is None:
            temperature = float(g.get("temperature", 0.3))
        if frames_after_eos is None:
            frames_after_eos = self.frames_after_eos_for(words)
        if min_frames is None:
            min_frames = int(g.get("min_frames_before_eos", 6))
        if eos_threshold is None:
            eos_threshold = float(g.get("eos_threshold", -4.0))
        if budget is None:
            budget = frame_budget(t, self.dims.frame_rate)
        budget = max(1, min(int(budget), self.max_frames))
        values = {
            "pos": 0,
            "frames": 0,
            "end": 0,
            "codec": 0,
            "budget": budget,
            "seed": int(seed) & _MASK,
            "noise_scale": math.sqrt(temperature),
            "frames_after_eos": int(frames_after_eos),
            "min_frames": int(min_frames),
            "eos_threshold": float(eos_threshold),
            "dd": float(duration_delta) * self.dims.dd_scale,
            "text": t,
            "bos_pos": 0,
            "voice_rows": 0,
            "eos_frame": NO_FRAME,
        }
        words_out = array("I", [0] * STATE_WORDS)
        for name, index in STATE.items():
            value = values[name]
            if name in STATE_FLOATS:
                value = array("I", array("f", [value]).tobytes())[0]
            words_out[index] = value
        self.door.write(self.request, 0, words_out.tobytes())
        self.door.write(self.text_ids, 0, array("I", ids).tobytes())
        self._last_size = self.prefill_size(t)
        return budget

    def start(self, voice: str, text_tokens: int | None = None) -> Program:
        """The Program that starts the take written by the last write_request, in `voice`."""
        size = self._last_size if text_tokens is None else self.prefill_size(text_tokens)
        return self._start_programs[self._voice(voice), size]

    def start_parts(self, voice: str) -> tuple[Program, ...]:
        """start(voice) cut in pieces at START_CUTS, each to be submitted on its own as soon as it is
        encoded: the GPU starts on the first while the CPU encodes the rest (a submit runs only once it
        is whole, and encoding the whole start took the H200's host ~0.5 ms)."""
        return self._start_parts[self._voice(voice), self._last_size]

    def _voice(self, voice: str) -> str:
        if voice not in self.voice_rows:
            raise VoiceError(f"unknown voice {voice!r}; the loaded voices are {', '.join(self.voice_rows)}")
        return voice

    # ---- building the Programs ----------------------------------------------------------------------
    def _w(self, name: str) -> TensorRef:
        return self.weights[name]

    def _build_time_embedding(self, program: Program) -> None:
        d, n = self.dims, self.dims.time_embeddings
        times = [k / (n - 1) if n > 1 else 0.0 for k in range(n)]  # LSD: start and end of the one step
        for k in range(n):
            p = f"flow_lm.flow_net.time_embed.{k}."
            refs = {
                "freqs": self._w(p + "freqs"),
                "fc1": self._w(p + "mlp.0.weight"),
                "fc1_bias": self._w(p + "mlp.0.bias"),
                "fc2": self._w(p + "mlp.2.weight"),
                "fc2_bias": self._w(p + "mlp.2.bias"),
                "alpha": self._w(p + "mlp.3.alpha"),
            }
            self.kernels.time_embedding(
                program,
                out=self.time_embedding,
                t=times[k],
                first=k == 0,
                divisor=float(n) if k == n - 1 else 0.0,
                eps=d.time_eps,
                refs=refs,
            )
        if n == 0:
            self.door.write(self.time_embedding, 0, bytes(4 * d.flow))

    def _prefill_layers(self, program: Program, count: int, text: bool, kv) -> None:
        """The backbone over `count` prefill rows: a text's (KV positions after the voice's, in the
        cache) or a voice's (positions from 0, in the voice's own key/value buffer, same layout)."""
        d, k = self.dims, self.kernels
        for layer in range(d.layers):
            p = f"flow_lm.transformer.layers.{layer}."
            k.layernorm_rows(
                program,
                x=self.rows_x,
                y=self.rows_y,
                weight=self._w(p + "norm1.weight"),
                bias=self._w(p + "norm1.bias"),
                eps=d.eps,
                count=count,
            )
            k.matmul(
                program,
                a=self.rows_y,
                out=self.rows_qkv,
                weight=self._w(p + "self_attn.in_proj.weight"),
                rows=count,
            )
            k.rope_kv_rows(
                program,
                state=self.state,
                qkv=self.rows_qkv,
                rope=self.rope,
                q=self.rows_q,
                kv=kv,
                text=text,
                layer=layer,
                layers=d.layers,
                heads=d.heads,
                head_dim=d.head_dim,
                kv_f16=self.kv_f16,
                count=count,
            )
            k.attention_prefill(
                program,
                state=self.state,
                q=self.rows_q,
                kv=kv,
                out=self.rows_y,
                alignment=self.alignment,
                text=text,
                layer=layer,
                layers=d.layers,
                heads=d.heads,
                head_dim=d.head_dim,
                kv_f16=self.kv_f16,
                max_keys=max(self.voice_rows.values()) + self.prefill_sizes[-1],
                align=text and layer == self.align_layer,
                align_head=self.align_head,
                count=count,
            )
            k.matmul(
                program,
                a=self.rows_y,
                out=self.rows_x,
                weight=self._w(p + "self_attn.out_proj.weight"),
                rows=count,
                epilogue=ops.M_RESIDUAL,
            )
            k.layernorm_rows(
                program,
                x=self.rows_x,
                y=self.rows_y,
                weight=self._w(p + "norm2.weight"),
                bias=self._w(p + "norm2.bias"),
                eps=d.eps,
                count=count,
            )
            k.matmul(
                program,
                a=self.rows_y,
                out=self.rows_mlp,
                weight=self._w(p + "linear1.weight"),
                rows=count,
                epilogue=ops.M_GELU,
            )
            k.matmul(
                program,
                a=self.rows_mlp,
                out=self.rows_x,
                weight=self._w(p + "linear2.weight"),
                rows=count,
                epilogue=ops.M_RESIDUAL,
            )

    def _build_voice_prefill(self, program: Program, voice: str) -> None:
        v = self.voice_rows[voice]
        self.kernels.matmul(
            program, a=self.voice_latents[voice], out=self.rows_x, weight=self._w(_SPEAKER_PROJ), rows=v
        )
        self._prefill_layers(program, v, text=False, kv=self.voice_kv[voice])

    def _build_voice_start(self, program: Program, voice: str) -> None:
        program.copy(self.request, 0, self.state, 0, 4 * STATE_WORDS)
        program.copy(self.voice_words[voice], 0, self.state, 4 * STATE["voice_rows"], 4)
        program.copy(self.voice_kv[voice], 0, self.kv, 0, self.voice_kv[voice].size)

    def _build_text_prefill(self, program: Program, size: int) -> None:
        d, k = self.dims, self.kernels
        c = "flow_lm.condition_provider.conditioners."
        half = d.dd_half
        periods = [_f32(d.dd_max_period ** _f32(i / (half - 1))) for i in range(half)]
        k.condition(
            program,
            state=self.state,
            cond=self.cond,
            rows=self.rows_x,
            speakers=d.speakers,
            speaker_embed=self._w(c + "num_speakers.embed.weight"),
            speaker_proj=self._w(c + "num_speakers.output_proj.weight"),
            duration_proj=self._w(c + "duration_delta.output_proj.weight"),
            input_linear=self._w("flow_lm.input_linear.weight"),
            bos=self._w("flow_lm.bos_emb"),
            periods=periods,
            hidden=d.hidden,
        )
        k.embed_rows(
            program,
            state=self.state,
            text_ids=self.text_ids,
            rows=self.rows_x,
            embed=self._w(c + "transcript_in_segment.embed.weight"),
            count=size,
        )
        self._prefill_layers(program, size, text=True, kv=self.kv)
        k.copy_row(program, state=self.state, rows=self.rows_x, x=self.x, hidden=d.hidden)

    def _fused(self, layer: int) -> bool:
        """Whether `layer`'s feed-forward is one dispatch (E_DOWN_SPLIT). The last layer's is not: what
        reads its output (the final norm, the end-of-speech head) reads x whole."""
        return self.fuse_mlp and 0 <= layer < self.dims.layers - 1

    def _build_step(self, program: Program) -> None:
        d, k = self.dims, self.kernels
        B = ops.GATE_BACKBONE
        for layer in range(d.layers):
            p = f"flow_lm.transformer.layers.{layer}."
            align = layer == self.align_layer
            heads = dict(head_dim=d.head_dim, heads=d.heads)
            # the sums of the previous layer's fused feed-forward, which x lacks, and this layer's
            sums_in = self.sums_at[(layer - 1) % 2] if self._fused(layer - 1) else None
            sums_out = self.sums_at[layer % 2] if self._fused(layer) else None
            k.attention_step(
                program,
                state=self.state,
                x=self.x,
                in_proj=self._w(p + "self_attn.in_proj.weight"),
                rope=self.rope,
                kv=self.kv,
                partials=self.partials,
                alignment=self.alignment,
                layer=layer,
                layers=d.layers,
                splits=self.splits,
                part_stride=self.part_stride,
                chunk=self.chunk,
                kv_f16=self.kv_f16,
                align=align,
                align_head=self.align_head,
                align_stride=self.max_text_tokens,
                sum_in=sums_in,
                sum_clear=sums_out,
                **heads,
                **ops.ln_fields(self._w(p + "norm1.weight"), self._w(p + "norm1.bias"), d.eps),
            )
            k.gemv(
                program,
                [ops.Segment(self._w(p + "self_attn.out_proj.weight"))],
                prologue=ops.P_ATTN_MERGE,
                epilogue=ops.E_RESIDUAL,
                state=self.state,
                src=self.partials,
                dst=self.x,
                extra=self.alignment,
                gate=B,
                splits=self.splits,
                part_stride=self.part_stride,
                align=int(align),
                align_head=self.align_head,
                align_stride=self.max_text_tokens,
                sum_in=sums_in,
                label=f"out proj {layer}",
                **heads,
            )
            norm2 = ops.ln_fields(self._w(p + "norm2.weight"), self._w(p + "norm2.bias"), d.eps)
            if sums_out is not None:
                k.gemv(
                    program,
                    [ops.Segment(self._w(p + "linear1.weight"))],
                    prologue=ops.P_LAYERNORM,
                    epilogue=ops.E_DOWN_SPLIT,
                    down=ops.Segment(self._w(p + "linear2.weight")),
                    state=self.state,
                    src=self.x,
                    extra=self.partials,
                    gate=B,
                    sum_out=sums_out,
                    label=f"feed-forward {layer}",
                    **norm2,
                )
                continue
            k.gemv(
                program,
                [ops.Segment(self._w(p + "linear1.weight"))],
                prologue=ops.P_LAYERNORM,
                epilogue=ops.E_GELU,
                state=self.state,
                src=self.x,
                dst=self.mlp,
                gate=B,
                label=f"fc1 {layer}",
                **norm2,
            )
            k.gemv(
                program,
                [ops.Segment(self._w(p + "linear2.weight"))],
                epilogue=ops.E_RESIDUAL,
                state=self.state,
                src=self.mlp,
                dst=self.x,
                gate=B,
                label=f"fc2 {layer}",
            )

        S = ops.GATE_STEP
        f = "flow_lm.flow_net."
        k.gemv(
            program,
            [
                ops.Segment(self._w(f + "cond_embed.weight"), self._w(f + "cond_embed.bias")),
                ops.Segment(self._w("flow_lm.out_eos.weight"), self._w("flow_lm.out_eos.bias")),
            ],
            prologue=ops.P_LAYERNORM,
            epilogue=ops.E_COND_EOS,
            state=self.state,
            src=self.x,
            aux=self.time_embedding,
            dst=self.hidden,
            extra=self.eos_logits,
            gate=S,
            write_normed=1,
            normed_offset=d.flow,
            label="condition + eos",
            **ops.ln_fields(self._w("flow_lm.out_norm.weight"), self._w("flow_lm.out_norm.bias"), d.eps),
        )
        blocks = [f"{f}res_blocks.{j}.adaLN_modulation.1." for j in range(d.flow_blocks)]
        blocks.append(f + "final_layer.adaLN_modulation.1.")
        k.gemv(
            program,
            [ops.Segment(self._w(b + "weight"), self._w(b + "bias")) for b in blocks],
            prologue=ops.P_SILU,
            state=self.state,
            src=self.hidden,
            dst=self.mods,
            gate=S,
            label="adaLN modulations",
        )
        F = d.flow
        for j in range(d.flow_blocks):
            p = f"{f}res_blocks.{j}."
            k.gemv(
                program,
                [ops.Segment(self._w(p + "mlp.0.weight"), self._w(p + "mlp.0.bias"))],
                prologue=ops.P_ADALN,
                epilogue=ops.E_SILU,
                state=self.state,
                src=self.flow_x,
                aux=self.mods,
                dst=self.flow_tmp,
                gate=S,
                mod_shift=3 * F * j,
                mod_scale=3 * F * j + F,
                label=f"flow fc1 {j}",
                **ops.ln_fields(self._w(p + "in_ln.weight"), self._w(p + "in_ln.bias"), d.flow_eps),
            )
            k.gemv(
                program,
                [ops.Segment(self._w(p + "mlp.2.weight"), self._w(p + "mlp.2.bias"))],
                epilogue=ops.E_GATED_RESIDUAL,
                state=self.state,
                src=self.flow_tmp,
                aux=self.mods,
                dst=self.flow_x,
                gate=S,
                mod_gate=3 * F * j + 2 * F,
                label=f"flow fc2 {j}",
            )
        final = 3 * F * d.flow_blocks
        k.step_end(
            program,
            state=self.state,
            flow_x=self.flow_x,
            mods=self.mods,
            cond=self.cond,
            flow_io=self.flow_io,
            latents=self.latents,
            x=self.x,
            eps=d.flow_eps,
            mod_shift=final,
            mod_scale=final + F,
            linear=self._w(f + "final_layer.linear.weight"),
            linear_bias=self._w(f + "final_layer.linear.bias"),
            mean=self._w("flow_lm.emb_mean"),
            std=self._w("flow_lm.emb_std"),
            input_linear=self._w("flow_lm.input_linear.weight"),
            input_proj=self._w(f + "input_proj.weight"),
            input_proj_bias=self._w(f + "input_proj.bias"),
            hidden=d.hidden,
        )

    def _build_first_noise(self, program: Program) -> None:
        """Frame 0's noise and the flow head's input from it (each step's end makes the next frame's)."""
        f = "flow_lm.flow_net."
        self.kernels.gemv(
            program,
            [ops.Segment(self._w(f + "input_proj.weight"), self._w(f + "input_proj.bias"))],
            prologue=ops.P_NOISE,
            state=self.state,
            dst=self.flow_x,
            extra=self.flow_io,
            gate=ops.GATE_STEP,
            label="noise + input_proj",
        )


_SPEAKER_PROJ = "flow_lm.condition_provider.conditioners.speaker_wavs.output_proj.weight"
# Where start_parts cuts a take's start (command indices): the first piece is small (the copies, the
# condition and about a layer), so the GPU starts early; each later piece is encoded while the GPU
# runs the one before.
START_CUTS = (16, 40)


def _cut(program: Program, cuts: tuple[int, ...]) -> list[Program]:
    """`program`'s commands in consecutive pieces ending at `cuts` (empty pieces left out)."""
    pieces, begin = [], 0
    for end in (*cuts, len(program.commands)):
        end = min(end, len(program.commands))
        if end > begin:
            piece = Program(f"{program.label} [{begin}:{end}]")
            piece.commands = program.commands[begin:end]
            pieces.append(piece)
            begin = end
    return pieces
