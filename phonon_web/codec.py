"""The codec decoder on the GPU: denormalised latents (12.5 frames/s) to 24 kHz audio, in chunks.

The decoder of Gradium's Phonon 31M is Pocket TTS's (Kyutai's Mimi architecture); Transformers'
`PocketTTSAudioTokenizerModel.decode` is the reference:

    latents [F][32] -> 1x1 conv (latent projection) -> depthwise ConvTranspose k2s stride s (16 rows a frame)
    -> transformer (pre-LayerNorm, RoPE, causal attention over a window, exact GELU MLP, layer scales)
    -> SEANet: conv k7, then per ratio (6, 5, 4): ELU, ConvTranspose k2r stride r, residual block
       (ELU, conv k3 to half width, ELU, conv k1 back, + input); then ELU, conv k3 to one channel
    -> 1920 samples a frame, the first 5 ms of a take faded in (PocketTTSProcessor.decode).

Streaming: every convolution is causal, so a chunk's outputs only need the chunk's inputs plus a few
rows before them. Each stage's buffer keeps those rows (its left context) in front of the chunk's rows;
after a chunk, `codec_shift.wgsl` moves the stage's last rows to the front. The transposed convs need
one previous input row; the transformer keeps its keys and values in a ring (positions continue across
chunks); the latent upsampling reads the previous frame straight from the latents buffer. So a decode
in chunks of any sizes gives exactly the one-shot decode, and, since a chunk size changes only the row
counts and how split-K sums are scheduled (never a summation order), bit for bit the same samples for
every schedule.

Nothing is allocated after construction: `chunk[F]` are prebuilt programs that read their first frame
from the state buffer, and `reset` starts a new take.

Buffers (FULL sizes, chunks of up to 16 frames = 256 rows at 200 Hz):
  latents   f32 [max_frames][32], the take's frame f at row f (given by the engine or made here)
  audio     f32 [max_frames * 1920], sample i of the take at index i
  state     u32 words: [frame_word] the next frame to decode (chunks read it, the shift moves it on);
            optional [end_word], [available_word]: frame counts, a chunk starting at or past either
            returns at once (hold a large number while unknown)
  arena 0/1 every signal between two stages, as rows x channels after `context` rows of left context:
            arena 0: transformer stream (6 rows of context for the k7 conv), convtr outputs (2 rows,
            for the residual blocks' k3 convs); arena 1: conv0 output and the residual blocks' outputs
            (1 row for the next convtr, 2 for the last conv). The signals alternate along the chain,
            so a kernel never writes one region of an arena while reading another (WebGPU's usage
            rules are per buffer); regions start at 256-byte offsets and are bound as sub-ranges.
  ring      f32 [layers][k, v][ring_size][512], slot = position % ring_size, ring_size = the next
            power of two >= window + the largest chunk's rows (512)
  q, attention, mlp, residual-block hidden buffers: per-chunk scratch; split-K partials: one buffer
            sized for the largest split GEMM.

Weights are read in the checkpoint's own layouts (no converter transforms): conv weights [out][in][k]
are contiguous along the GEMM's K = in x taps, transposed convs [in][out][2s] are gathered per output
phase, q/k rows stay interleaved rotary pairs (the QKV epilogue rotates each adjacent pair), layer
scales are applied in the residual epilogue, and the latent projection is done by the upsampling
kernel. So weights.bin holds the checkpoint's values as they are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import codec_ops as ops
from .errors import WeightsError
from .gpu.door import STORAGE, Door, Program
from .weights import TensorRef, Weights

PREFIX_LAYER = "mimi.decoder_transformer.transformer.layers."
PREFIX_SEANET = "mimi.decoder.model."
ALIGN_WORDS = 64  # 256 bytes: WebGPU's default minStorageBufferOffsetAlignment
# A split-K GEMM whose chunk has this many output tiles (x phases) or more runs its splits inside each
# tile's workgroup (codec_gemm.wgsl's SPLIT_LOOP) rather than as workgroups of their own plus a reduction.
SPLIT_LOOP_TILES = 128


@dataclass
class Signal:
    """Activations between two stages: rows of `channels` values, `rows_per_frame` per latent frame,
    with `context` rows kept in front of the chunk's rows."""

    name: str
    channels: int
    rows_per_frame: int
    context: int = 0
    arena: int | None = None  # 0 or 1 for signals with context; None for a buffer of its own
    word: int = 0  # offset in its arena
    words: int = 0  # size of its region
    buffer: object = None  # (buffer, offset bytes, size bytes) or a buffer

    def need(self, rows: int) -> None:
        self.context = max(self.context, rows)


@dataclass
class Conv:
    """A SEANet convolution (or transposed convolution) read from the checkpoint."""

    weight: TensorRef
    bias: TensorRef | None
    taps: int
    dilation: int
    transposed: bool
    stride: int = 1
    channels_in: int = 0
    channels_out: int = 0


class Codec:
    """The codec decoder of one set of weights, resident on one door's GPU.

    `latents`: f32 [max_frames][latent_dim] (denormalised; the language model writes them), made here
    unless passed in. `audio`: f32 [max_frames * samples_per_frame], sample i of the take at index i.
    `state`: u32 words; `state[frame_word]` is the codec's frame counter (the next frame to decode).
    A chunk starting at or after `state[end_word]` or `state[available_word]` (when given) does nothing.
    Programs: `reset` (a new take) and `chunk[F]` for F in chunk_sizes (decode F frames from the
    counter, then move it on by F).
    """

    def __init__(
        self,
        door: Door,
        weights: Weights,
        config: dict,
        *,
        max_frames: int = 768,
        chunk_sizes: tuple[int, ...] = (1, 2, 4, 8),
        latents=None,
        latents_word: int = 0,
        state=None,
        frame_word: int = 0,
        end_word: int | None = None,
        available_word: int | None = None,
        fade_in_duration: float | None = None,
        split_target: int = 160,
        split_min_steps: int = 4,
        split_loop_tiles: int | None = None,
    ):
        self.door = door
        self.weights = weights
        cfg = config.get("audio_tokenizer_config")
        if not isinstance(cfg, dict):  # a codec config itself, or a model config without one: defaults
            cfg = config if str(config.get("model_type", "")).startswith("pocket_tts_audio") else {}
        self.max_frames = max_frames
        self.chunk_sizes = tuple(sorted(set(chunk_sizes)))
        self.split_target = split_target
        self.split_min_steps = split_min_steps
        self.split_loop_tiles = SPLIT_LOOP_TILES if split_loop_tiles is None else split_loop_tiles
        self._read_structure(cfg)
        self.samples_per_frame = self.up_stride * _product(c.stride for c in self.convs if c.transposed)
        processor = getattr(weights.manifest, "processor_config", None) or {}
        if fade_in_duration is None:
            fade_in_duration = float(processor.get("fade_in_duration", 0.005))
        sample_rate = int(cfg.get("sampling_rate", 24000))
        self.fade_samples = int(fade_in_duration * sample_rate)
        self.sample_rate = sample_rate

        words = {"frame_word": frame_word}
        words["end_word"] = ops.NO_WORD if end_word is None else end_word
        words["avail_word"] = ops.NO_WORD if available_word is None else available_word
        self._words = words

        wbuf = weights.codec_buffer
        self.latents = (
            latents
            if latents is not None
            else door.buffer(4 * max_frames * self.latent_dim, STORAGE, "codec latents")
        )
        self.latents_word = latents_word
        self.audio = door.buffer(4 * max_frames * self.samples_per_frame, STORAGE, "codec audio")
        self.state = state if state is not None else door.buffer(16, STORAGE, "codec state")
        self._plan_buffers()
        self._dummy_read = door.buffer(16, STORAGE, "codec unused (read)")
        self._dummy_write = door.buffer(16, STORAGE, "codec unused (write)")

        self.launches: list = []  # ops.Launch, or a GEMM's plan until _finish_gemms
        self._build_upsample(wbuf)
        for layer in range(self.layers):
            self._build_layer(wbuf, layer)
        self._build_seanet(wbuf)
        self._build_shift()
        self._finish_gemms()

        self.chunk: dict[int, Program] = {}
        for frames in self.chunk_sizes:
            program = Program(f"codec chunk F={frames}")
            for launch in self.launches:
                launch.encode(program, frames)
            self.shift.encode(program, frames)
            self.chunk[frames] = door.compile(program)
        self.reset = Program("codec reset")
        self.reset.dispatch(self._reset_pipeline, self._reset_group, 1)
        door.compile(self.reset)

    # ---- structure ------------------------------------------------------------------------------
    def _ref(self, name: str) -> TensorRef:
        return self.weights[name]

    def _read_structure(self, cfg: dict) -> None:
        proj = self._ref("mimi.quantizer.output_proj.weight")
        up = self._ref("mimi.upsample.convtr.convtr.weight")
        self.hidden, self.latent_dim = proj.shape[0], proj.shape[1]
        if self.latent_dim % 4:
            raise WeightsError(f"latents of {self.latent_dim} values: a multiple of 4 is needed")
        if up.shape[0] != self.hidden or up.shape[2] % 2:
            raise WeightsError(
                f"the codec's upsampling weight is {list(up.shape)}, not [hidden, 1, 2 x stride]"
            )
        self.up_stride = up.shape[2] // 2
        self.proj, self.up = proj, up
        names = self.weights.refs
        self.layers = len(
            {m.group(1) for n in names if (m := re.match(re.escape(PREFIX_LAYER) + r"(\d+)\.", n))}
        )
        self.heads = int(cfg.get("num_attention_heads", 8))
        self.head_dim = int(cfg.get("head_dim") or self.hidden // self.heads)
        if self.head_dim > 64 or self.head_dim % 4 or self.heads * self.head_dim != self.hidden:
            raise WeightsError(f"codec attention of {self.heads} heads x {self.head_dim} is not supported")
        self.window = int(cfg.get("sliding_window", 250))
        rope = cfg.get("rope_parameters") or {}
        self.rope_theta = float(rope.get("rope_theta", cfg.get("rope_theta", 10000.0)))
        self.eps = float(cfg.get("norm_eps", 1e-5))
        act = cfg.get("hidden_act", "gelu")
        if act not in ("gelu", "gelu_pytorch_tanh", "gelu_new"):
            raise WeightsError(f"codec activation {act!r} is not supported")
        self.gelu_tanh = act != "gelu"
        self.mlp = self._ref(PREFIX_LAYER + "0.linear1.weight").shape[0]
        growth = int(cfg.get("dilation_growth_rate", 2))

        # SEANet, in the reference's order: conv, then per ratio (ELU, convtr, residual blocks), then
        # ELU, conv. Layer indices count the ELUs too, as the checkpoint's names do.
        indices = sorted(
            {int(m.group(1)) for n in names if (m := re.match(re.escape(PREFIX_SEANET) + r"(\d+)\.", n))}
        )
        self.seanet: list[tuple[str, object]] = []
        self.convs: list[Conv] = []
        block_in_ratio = 0
        for index in indices:
            base = f"{PREFIX_SEANET}{index}."
            if base + "convtr.weight" in names:
                conv = self._conv(base + "convtr.", transposed=True)
                self.seanet.append(("convtr", conv))
                block_in_ratio = 0
            elif base + "conv.weight" in names:
                self.seanet.append(("conv", self._conv(base + "conv.")))
            else:
                dilation = growth**block_in_ratio
                block_in_ratio += 1
                first = self._conv(base + "block.1.conv.", dilation=dilation)
                second = self._conv(base + "block.3.conv.")
                self.seanet.append(("block", (first, second)))
        kinds = [k for k, _ in self.seanet]
        if len(kinds) < 2 or kinds[0] != "conv" or kinds[-1] != "conv" or "conv" in kinds[1:-1]:
            raise WeightsError(f"unexpected codec SEANet layout: {kinds}")

    def _conv(self, base: str, *, transposed: bool = False, dilation: int = 1) -> Conv:
        weight = self._ref(base + "weight")
        bias = self.weights.get(base + "bias")
        if not transposed:  # [out][in][taps], as the checkpoint holds it
            out, cin, taps = weight.shape
            conv = Conv(weight, bias, taps, dilation, False, channels_in=cin, channels_out=out)
        else:  # [stride * out][in][2]: build_weights.convtr_phases
            if (
                bias is None
                or len(weight.shape) != 3
                or weight.shape[2] != 2
                or weight.shape[0] % bias.shape[0]
            ):
                raise WeightsError(
                    f"{base}weight: expected a transposed conv in phase order with its bias, got shape "
                    f"{weight.shape}: build the weights again with this phonon_web's build_weights.py"
                )
            out, cin = bias.shape[0], weight.shape[1]
            stride = weight.shape[0] // out
            conv = Conv(weight, bias, 2 * stride, dilation, True, stride, channels_in=cin, channels_out=out)
        self.convs.append(conv)
        return conv

    # ---- buffers --------------------------------------------------------------------------------
    def _plan_buffers(self) -> None:
        door, top = self.door, max(self.chunk_sizes)
        rpf = self.up_stride
        hidden = Signal("hidden", self.hidden, rpf)
        signals = [hidden]
        temps: list[Signal] = []
        steps: list[tuple] = []  # (kind, conv(s), input signal, output signal[, temp])
        current = hidden
        for kind, layer in self.seanet[:-1]:
            if kind == "conv":
                out = Signal(f"conv{len(signals)}", layer.weight.shape[0], current.rows_per_frame)
                current.need((layer.taps - 1) * layer.dilation)
                steps.append(("conv", layer, current, out))
            elif kind == "convtr":
                out = Signal(
                    f"convtr{len(signals)}", layer.channels_out, current.rows_per_frame * layer.stride
                )
                current.need(1)
                steps.append(("convtr", layer, current, out))
            else:
                first, second = layer
                temp = Signal(f"block{len(signals)} hidden", first.weight.shape[0], current.rows_per_frame)
                out = Signal(f"block{len(signals)}", second.weight.shape[0], current.rows_per_frame)
                current.need((first.taps - 1) * first.dilation)
                if (second.taps - 1) * second.dilation:
                    raise WeightsError("a residual block's second conv must have one tap")
                temps.append(temp)
                steps.append(("block", layer, current, out, temp))
            signals.append(out)
            current = out
        last = self.seanet[-1][1]
        current.need((last.taps - 1) * last.dilation)
        self.steps, self.signals, self.final_input, self.final_conv = steps, signals, current, last

        # Signals alternate between two arenas along the chain; a kernel reads one and writes the next.
        arena_words = [0, 0]
        for index, signal in enumerate(signals):
            signal.arena = index % 2
            signal.word = arena_words[signal.arena]
            signal.words = _align((signal.context + signal.rows_per_frame * top) * signal.channels)
            arena_words[signal.arena] += signal.words
            if signal.context > signal.rows_per_frame * min(self.chunk_sizes):
                raise WeightsError(f"codec stage {signal.name}: context longer than the smallest chunk")
        self.arenas = [
            door.buffer(4 * max(w, ALIGN_WORDS), STORAGE, f"codec arena {i}")
            for i, w in enumerate(arena_words)
        ]
        for signal in signals:
            signal.buffer = (self.arenas[signal.arena], 4 * signal.word, 4 * signal.words)
        for temp in temps:
            temp.buffer = door.buffer(
                4 * temp.rows_per_frame * top * temp.channels, STORAGE, f"codec {temp.name}"
            )

        rows = rpf * top
        self.ring_size = ops.next_pow2(self.window + rows)
        self.attention_rows = ops.attention_rows(rpf)
        self.keys_max = ops.attention_keys_max(self.window, self.attention_rows)
        self.ring = door.buffer(4 * self.layers * 2 * self.ring_size * self.hidden, STORAGE, "codec kv ring")
        self.q = door.buffer(4 * rows * self.hidden, STORAGE, "codec q")
        self.att = door.buffer(4 * rows * self.hidden, STORAGE, "codec attention")
        self.mlp_buffer = door.buffer(4 * rows * self.mlp, STORAGE, "codec mlp")
        self._scratch_words = 0  # split-K partials: the most any launch needs

    def _gemm(
        self,
        label,
        *,
        weight,
        x,
        y,
        rows_per_frame,
        cols,
        depth,
        phases=1,
        r=None,
        ring=None,
        kernel_options,
        fields,
    ) -> None:
        """Plan a GEMM launch; `_finish_gemms` makes it once the split-K scratch size is known."""
        splits, k_split = ops.split_plan(
            rows_per_frame * min(self.chunk_sizes),
            cols,
            depth,
            phases,
            self.split_target,
            self.split_min_steps,
        )
        if splits > 1:
            need = splits * phases * rows_per_frame * max(self.chunk_sizes) * cols
            self._scratch_words = max(self._scratch_words, need)
        spec = dict(
            label=label,
            weight=weight,
            buffers={
                "weights": self.weights.codec_buffer,
                "x": x,
                "y": y,
                "r": r if r is not None else self._dummy_read,
                "ring": ring if ring is not None else self._dummy_write,
                "state": self.state,
            },
            rows_per_frame=rows_per_frame,
            chunk_sizes=self.chunk_sizes,
            cols=cols,
            depth=depth,
            splits=splits,
            k_split=k_split,
            phases=phases,
            loop_tiles=self.split_loop_tiles,
            kernel_options=kernel_options,
            fields=dict(fields, **self._words),
        )
        self.launches.append(spec)

    def _finish_gemms(self) -> None:
        self.scratch = None
        if self._scratch_words:
            self.scratch = self.door.buffer(4 * self._scratch_words, STORAGE, "codec split-K partials")
        for index, item in enumerate(self.launches):
            if isinstance(item, dict):
                item["buffers"]["scratch"] = self.scratch
                self.launches[index] = ops.gemm_launch(self.door, **item)

    # ---- the stages ---------------------------------------------------------------------------
    def _build_upsample(self, wbuf) -> None:
        hidden = self.signals[0]
        pipeline = self.door.pipeline(ops.upsample_kernel())
        per_frames = {}
        for frames in self.chunk_sizes:
            params = ops.uniform(
                self.door,
                "codec_upsample.wgsl",
                f"codec upsample F={frames}",
                frames=frames,
                hidden=self.hidden,
                latent_dim=self.latent_dim,
                stride=self.up_stride,
                proj_kind=self.proj.kind_code,
                proj_word=self.proj.word,
                proj_scales=self.proj.scales_word,
                proj_padded=self.proj.padded_cols,
                up_kind=self.up.kind_code,
                up_word=self.up.word,
                up_scales=self.up.scales_word,
                up_padded=self.up.padded_cols,
                lat_word=self.latents_word,
                lat_ld=self.latent_dim,
                max_frames=self.max_frames,
                y_row0=hidden.context,
                **self._words,
            )
            per_frames[frames] = (params, ops.ceil_div(frames * self.hidden, 64), 1, 1)
        buffers = [wbuf, self.latents, hidden.buffer, self.state]
        self.launches.append(ops.one_shot_launch(self.door, "codec upsample", pipeline, buffers, per_frames))

    def _build_layer(self, wbuf, layer: int) -> None:
        base = f"{PREFIX_LAYER}{layer}."
        hidden = self.signals[0]
        rpf = self.up_stride
        ring_words = self.ring_size * self.hidden
        common = {"x_ld": self.hidden, "dil": 1, "y_step": 1}
        ln1 = self._ref(base + "norm1.weight"), self._ref(base + "norm1.bias")
        ln2 = self._ref(base + "norm2.weight"), self._ref(base + "norm2.bias")

        def ln_fields(pair):
            w, b = pair
            return {"ln_kind": w.kind_code, "ln_w": w.word, "ln_b": b.word, "eps": self.eps}

        no_bias = ops.vector_fields(None, "bias")
        self._gemm(
            f"codec layer {layer} qkv",
            weight=self._ref(base + "self_attn.in_proj.weight"),
            x=hidden.buffer,
            y=self.q,
            ring=self.ring,
            rows_per_frame=rpf,
            cols=3 * self.hidden,
            depth=self.hidden,
            kernel_options={"ln": True, "epilogue": ops.EPI_QKV},
            fields=dict(
                common,
                **ln_fields(ln1),
                **no_bias,
                x_row0=hidden.context,
                y_ld=self.hidden,
                rows_per_frame=rpf,
                hidden=self.hidden,
                head_dim=self.head_dim,
                ring_size=self.ring_size,
                ring_k=2 * layer * ring_words,
                ring_v=(2 * layer + 1) * ring_words,
                inv_freq=ops.rope_inverse_frequencies(self.head_dim, self.rope_theta),
            ),
        )
        pipeline = self.door.pipeline(ops.attention_kernel(self.keys_max, self.head_dim, self.attention_rows))
        per_frames = {}
        for frames in self.chunk_sizes:
            params = ops.uniform(
                self.door,
                "codec_attention.wgsl",
                f"codec layer {layer} attention F={frames}",
                rows=rpf * frames,
                hidden=self.hidden,
                window=self.window,
                ring_size=self.ring_size,
                ring_k=2 * layer * ring_words,
                ring_v=(2 * layer + 1) * ring_words,
                rows_per_frame=rpf,
                scale=self.head_dim**-0.5,
                **self._words,
            )
            per_frames[frames] = (params, rpf * frames // self.attention_rows, self.heads, 1)
        buffers = [self.q, self.ring, self.att, self.state]
        self.launches.append(
            ops.one_shot_launch(self.door, f"codec layer {layer} attention", pipeline, buffers, per_frames)
        )
        residual = dict(common, **no_bias, y_ld=self.hidden, y_row0=hidden.context)
        self._gemm(
            f"codec layer {layer} out_proj",
            weight=self._ref(base + "self_attn.out_proj.weight"),
            x=self.att,
            y=hidden.buffer,
            rows_per_frame=rpf,
            cols=self.hidden,
            depth=self.hidden,
            kernel_options={"epilogue": ops.EPI_SCALED},
            fields=dict(residual, **ops.vector_fields(self._ref(base + "layer_scale_1.scale"), "vec")),
        )
        self._gemm(
            f"codec layer {layer} linear1",
            weight=self._ref(base + "linear1.weight"),
            x=hidden.buffer,
            y=self.mlp_buffer,
            rows_per_frame=rpf,
            cols=self.mlp,
            depth=self.hidden,
            kernel_options={"ln": True, "epilogue": ops.EPI_GELU, "gelu_tanh": self.gelu_tanh},
            fields=dict(common, **ln_fields(ln2), **no_bias, x_row0=hidden.context, y_ld=self.mlp),
        )
        self._gemm(
            f"codec layer {layer} linear2",
            weight=self._ref(base + "linear2.weight"),
            x=self.mlp_buffer,
            y=hidden.buffer,
            rows_per_frame=rpf,
            cols=self.hidden,
            depth=self.mlp,
            kernel_options={"epilogue": ops.EPI_SCALED},
            fields=dict(
                residual, x_ld=self.mlp, **ops.vector_fields(self._ref(base + "layer_scale_2.scale"), "vec")
            ),
        )

    def _conv_gemm(
        self,
        label,
        conv: Conv,
        source: Signal,
        target,
        rows_per_frame,
        *,
        elu,
        y_row0=0,
        epilogue=ops.EPI_STORE,
        r=None,
        r_row0=0,
        r_ld=0,
    ) -> None:
        cin = conv.weight.shape[1]
        out = conv.weight.shape[0]
        target_buffer = target.buffer
        self._gemm(
            label,
            weight=conv.weight,
            x=source.buffer,
            y=target_buffer,
            r=r,
            rows_per_frame=rows_per_frame,
            cols=out,
            depth=cin * conv.taps,
            kernel_options={"gather": conv.taps > 1, "taps": conv.taps, "elu_a": elu, "epilogue": epilogue},
            fields=dict(
                ops.vector_fields(conv.bias, "bias"),
                dil=conv.dilation,
                x_ld=cin,
                x_row0=source.context - (conv.taps - 1) * conv.dilation,
                y_ld=out,
                y_row0=y_row0,
                y_step=1,
                r_row0=r_row0,
                r_ld=r_ld,
            ),
        )

    def _build_seanet(self, wbuf) -> None:
        for step in self.steps:
            kind, layer, source, target = step[:4]
            rpf = source.rows_per_frame
            if kind == "conv":
                self._conv_gemm(
                    f"codec {target.name}", layer, source, target, rpf, elu=False, y_row0=target.context
                )
            elif kind == "convtr":
                cin, cout, stride = layer.channels_in, layer.channels_out, layer.stride
                self._gemm(
                    f"codec {target.name}",
                    weight=layer.weight,
                    x=source.buffer,
                    y=target.buffer,
                    rows_per_frame=rpf,
                    cols=cout,
                    depth=2 * cin,
                    phases=stride,
                    kernel_options={"gather": True, "taps": 2, "elu_a": True, "transposed": True},
                    fields=dict(
                        ops.vector_fields(layer.bias, "bias"),
                        dil=1,
                        x_ld=cin,
                        x_row0=source.context - 1,
                        y_ld=cout,
                        y_row0=target.context,
                        y_step=stride,
                    ),
                )
            else:
                first, second = layer
                temp = step[4]
                self._conv_gemm(f"codec {temp.name}", first, source, temp, rpf, elu=True)
                self._conv_gemm(
                    f"codec {target.name}",
                    second,
                    temp,
                    target,
                    rpf,
                    elu=True,
                    y_row0=target.context,
                    epilogue=ops.EPI_RESIDUAL,
                    r=source.buffer,
                    r_row0=source.context,
                    r_ld=source.channels,
                )
        # the last conv, to samples
        last, source = self.final_conv, self.final_input
        if last.weight.shape[0] != 1 or last.weight.shape[1] % 4:
            raise WeightsError("the codec's last conv must make one audio channel from 4n channels")
        pipeline = self.door.pipeline(ops.audio_out_kernel())
        per_frames = {}
        for frames in self.chunk_sizes:
            rows = source.rows_per_frame * frames
            params = ops.uniform(
                self.door,
                "codec_audio_out.wgsl",
                f"codec audio F={frames}",
                rows=rows,
                cin=last.weight.shape[1],
                taps=last.taps,
                dil=last.dilation,
                w_kind=last.weight.kind_code,
                w_word=last.weight.word,
                w_scales=last.weight.scales_word,
                w_padded=last.weight.padded_cols,
                **ops.vector_fields(last.bias, "bias"),
                samples_per_frame=self.samples_per_frame,
                max_samples=self.max_frames * self.samples_per_frame,
                fade_samples=self.fade_samples,
                **self._words,
            )
            per_frames[frames] = (params, ops.ceil_div(rows, ops.AUDIO_OUT_SAMPLES), 1, 1)
        if source.context != (last.taps - 1) * last.dilation:
            raise WeightsError("the codec's last conv reads more context than its input keeps")
        buffers = [wbuf, source.buffer, self.audio, self.state]
        self.launches.append(ops.one_shot_launch(self.door, "codec audio", pipeline, buffers, per_frames))

    def _build_shift(self) -> None:
        kept = [s for s in self.signals if s.context]
        if len(kept) > 8:
            raise WeightsError("the codec has more stages with context than codec_shift.wgsl moves")
        pipeline = self.door.pipeline(ops.shift_kernel(False))
        per_frames = {}
        for frames in self.chunk_sizes:
            jobs = []
            for s in kept:
                jobs += [s.arena, s.word, s.context * s.channels, s.rows_per_frame * frames * s.channels]
            params = ops.uniform(
                self.door,
                "codec_shift.wgsl",
                f"codec shift F={frames}",
                regions=len(kept),
                frames=frames,
                jobs=jobs,
                **self._words,
            )
            per_frames[frames] = (params, 1, 1, 1)
        buffers = [self.arenas[0], self.arenas[1], self.state]
        self.shift = ops.one_shot_launch(self.door, "codec shift", pipeline, buffers, per_frames)
        jobs = []
        for s in kept:
            jobs += [s.arena, s.word, s.context * s.channels, 0]
        params = ops.uniform(
            self.door,
            "codec_shift.wgsl",
            "codec reset",
            regions=len(kept),
            frames=0,
            jobs=jobs,
            **self._words,
        )
        self._reset_pipeline = self.door.pipeline(ops.shift_kernel(True))
        self._reset_group = self.door.bind_group(self._reset_pipeline, [params] + buffers)

    # ---- facts ----------------------------------------------------------------------------------
    @property
    def dispatches(self) -> dict[int, int]:
        """Dispatches per chunk program, by chunk size."""
        return {frames: program.dispatch_count for frames, program in self.chunk.items()}


def _align(words: int) -> int:
    return -(-words // ALIGN_WORDS) * ALIGN_WORDS


def _product(values) -> int:
    out = 1
    for v in values:
        out *= v
    return out
