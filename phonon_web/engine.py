"""The loop: text in, audio and word times out, with the language model and the codec on one GPU.

Everything GPU-side exists after construction. A request writes its ids and parameters, then submits
prebuilt command lists, each holding F language-model steps, one codec chunk of F frames and three
copies into a staging buffer (the state words, the chunk's samples, its frames' alignment rows).
F goes 1, 2, 4, 8, 16, then 32: the first audio comes after one frame, and each chunk is made before the
audio already delivered has played even on a slow GPU; on a GPU that the previous take showed to be
fast, F goes 1 then 32 (the ramp's small chunks cost a codec pass each: ~0.6 ms of an H200's time a
take). Nothing waits on the GPU between steps: the state buffer on the GPU says which frame comes next
and when speech ended, every kernel past the end returns at once, and the CPU reads each staging
buffer back a submit or two behind the GPU, through a small ring of them; the word and token times
come from the alignment rows after the take.

The CPU must keep the GPU fed: encoding a step costs the CPU about what running it costs the GPU. So
the first chunks' steps go in small submits ("pieces", chunk_leads) that the GPU runs while the CPU
encodes the next, and a take records the next take's first submits (its prefill, chunks 0 and 1) while
the GPU finishes its own last chunks (_record_ahead): the next take then starts with a chunk queued.
"""

from __future__ import annotations

import asyncio
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field

from .codec import Codec
from .errors import CancelledError, DeviceLostError, TextError
from .files import ModelFiles
from .gpu.door import READBACK, Door, Program
from .lm import STATE, STATE_WORDS, LanguageModel, frame_budget
from .normalize import Normalized
from .normalize import normalize as normalize_text
from .pace import check_speed, duration_delta_for_speed
from .request_checks import (
    check_callback,
    check_eos_threshold,
    check_flag,
    check_has_words,
    check_max_frames,
    check_seed,
    check_temperature,
    check_voice,
    readable_text,
)
from .speech import Speech
from .text import TextPart, split_text
from .timing import PositionWalk, TextLayout, Timed, align, text_layout
from .tokenizer import Encoding, Tokenizer
from .weights import Weights
from .word_spans import attach, written_words

FIRST_CHUNKS = (1, 2, 4, 8, 16)  # frames of the first chunks: the first audio comes after one frame
# then every chunk has this many: fewer submits, readbacks and codec passes. The codec's fixed costs
# (its small kernels, split-K reductions, barriers) are shared by more frames: on an H200 a chunk of 32
# costs 37.6 us a frame against 46.5 for 16 (bench/results/h200-codec-chunk-32-2026-12-01.json).
CHUNK_FRAMES = 32
# A take skips the ramp (chunks of FIRST_CHUNKS[0], then CHUNK_FRAMES) when the previous take ran at
# least this many times faster than real time. The second chunk must come before the first one's audio
# (80 ms a frame) has played: CHUNK_FRAMES frames take 32 x 80 / speed ms, under 80 ms above 32x; 128x
# leaves a margin of 4 for a take slower than the last one.
SKIP_RAMP_ABOVE = 128.0
# The steps of the chunks that start before frame PIECES_UNTIL go to the GPU in submits of their own
# ("pieces", Engine._pieces), the GPU working on each while the CPU encodes the next; a chunk's codec
# pass and readback go with its last piece. A lent H200's CPU took 120-190 us to encode a step that its
# GPU ran in ~200 (and a submit of 32 steps and the codec in 4.6 ms against the GPU's 7.6): a piece
# must be encoded while the GPU runs the ones queued before it, so the pieces grow slowly, 2, 3, 4, 5, 6,
# then LEAD_STEPS[-1] each. Chunk 2 in one submit left the GPU idle 1.6-2.7 ms a take (the timelines of
# h200-breakdown-2026-12-01-6badf76.json); past PIECES_UNTIL the CPU is a chunk ahead and each extra
# submit would only cost the GPU its boundary.
LEAD_STEPS = (2, 3, 4, 5, 6, 8)
PIECES_UNTIL = 128
# Chunks of a take recorded during the take before it (Engine._record_ahead): chunk 0 and chunk 1.
AHEAD_CHUNKS = 2
FRAME_SECONDS = 0.08  # one frame of audio (12.5 frames a second)
STAGING_SLOTS = 4  # readback buffers in the ring: more than the submits in flight
STATE_BYTES = 4 * STATE_WORDS
_JOINER = "\u2060"  # WORD JOINER: not whitespace, so the splitter keeps what it joins together


def chunk_schedule(max_frames: int, first=FIRST_CHUNKS, frames=CHUNK_FRAMES) -> list[tuple[int, int]]:
    """(first frame, frames) of every chunk of a take of up to `max_frames` frames."""
    out, start = [], 0
    while start < max_frames:
        size = first[len(out)] if len(out) < len(first) else frames
        out.append((start, size))
        start += size
    return out


def chunk_leads(schedule, lead=LEAD_STEPS, until=PIECES_UNTIL) -> list[tuple[int, ...]]:
    """For every chunk of `schedule`, the steps of its pieces before its last one (Engine._pieces): none
    for chunk 0 (one step) and for chunks from frame `until` on; the pieces of the others take the
    sizes of `lead` in turn across the take, then its last size, and never the whole chunk."""
    out, taken = [], 0
    for index, (first, frames) in enumerate(schedule):
        sizes, sent = [], 0
        while index > 0 and first < until:
            size = lead[min(taken, len(lead) - 1)]
            if sent + size >= frames:
                break
            sizes.append(size)
            sent += size
            taken += 1
        out.append(tuple(sizes))
    return out


def alignment_head(config: dict) -> tuple[int, int]:
    """The (layer, head) whose attention follows the text: layer 3, head 0 in Phonon 31M, found by
    scoring every head on real speech (seed text 000). A config may name its own under
    `phonon_alignment_head`; smaller test models use their last layer."""
    chosen = config.get("phonon_alignment_head")
    if chosen is not None:
        return int(chosen[0]), int(chosen[1])
    return min(3, int(config["num_hidden_layers"]) - 1), 0


@dataclass
class _Take:
    """One part of a text, as the loop sees it."""

    ids: list[int]
    pieces: list[str]
    words: int  # as the reference counts them, exact up to the short-text rule's limit + 1 (_word_count)
    text: str  # the part as spoken (after normalisation)
    start: int  # where it starts in the spoken text
    # what the word times need of the text alone (lay_out), made while the GPU works on the take
    layout: TextLayout | None = None
    spans: list[tuple[int, int]] | None = None  # word_spans.written_words(text)

    def lay_out(self) -> None:
        if self.layout is None:
            self.layout, self.spans = text_layout(self.pieces), written_words(self.text)


@dataclass
class _Harvest:
    """What a take's readbacks bring: the samples, the alignment rows of the frames made, and the
    head's positions over those rows (found chunk by chunk while the GPU works on the next ones)."""

    samples: array = field(default_factory=lambda: array("f"))  # its first `filled` values are the take's
    filled: int = 0
    rows: list[array] = field(default_factory=list)  # array("f") rows
    walk: PositionWalk = field(default_factory=PositionWalk)

    def add(self, chunk: array) -> None:
        """Append a chunk's samples: by extend until `reserve`, into the room it made after."""
        end = self.filled + len(chunk)
        if end <= len(self.samples):
            self.samples[self.filled : end] = chunk
        else:
            del self.samples[self.filled :]
            self.samples.extend(chunk)
        self.filled = end

    def reserve(self, count: int) -> None:
        """Room for `count` samples in all, made once the take's chunks are all submitted and the GPU
        has two of them to run: extend grows an array by a sixteenth, and past a few MB a growth copies
        the whole of it (every other collect late in the Rainbow passage took the H200's host 1.7 ms
        instead of 0.6), so the collects after the GPU's last chunk should copy only their own."""
        if count > len(self.samples):
            self.samples.frombytes(bytes(4 * (count - len(self.samples))))

    def kept(self, count: int) -> array:
        """The samples, cut to the first `count` (and to those filled)."""
        del self.samples[min(count, self.filled) :]
        self.filled = len(self.samples)
        return self.samples


@dataclass
class _RecordedStart:
    """Command buffers recorded during a take for the next one (Engine._record_ahead): the chunks
    of `plan` from chunk 0 on, and the prefill `start_parts` in one."""

    plan: _Plan
    chunks: list
    start_parts: tuple[Program, ...]
    start: object


@dataclass
class _Plan:
    """A chunk schedule, (first frame, frames) a chunk, each chunk's prebuilt submit and the steps it
    sends ahead in pieces (chunk_leads)."""

    schedule: list[tuple[int, int]]
    submits: list[list[tuple[Program, int]]]
    leads: list[tuple[int, ...]]


class Engine:
    """Phonon 31M on one GPU door. `speak()` is a coroutine; natively `phonon_web.api` runs it."""

    def __init__(
        self,
        door: Door,
        files: ModelFiles,
        *,
        kv_f16: bool = True,
        max_frames: int = 768,
        max_text_tokens: int = 240,
        lag: int = 2,
        first_chunks: tuple[int, ...] = FIRST_CHUNKS,
        chunk_frames: int = CHUNK_FRAMES,
        skip_ramp_above: float | None = SKIP_RAMP_ABOVE,
    ):
        # what a new engine on a new door needs to be this one (after a lost device)
        self.options = dict(
            kv_f16=kv_f16,
            max_frames=max_frames,
            max_text_tokens=max_text_tokens,
            lag=lag,
            first_chunks=first_chunks,
            chunk_frames=chunk_frames,
            skip_ramp_above=skip_ramp_above,
        )
        self.door = door
        self.manifest = files.manifest
        self.tokenizer = Tokenizer.from_str(files.tokenizer_json)
        self.weights = Weights(door, files.manifest, files.weights)
        align_layer, align_head = alignment_head(files.manifest.config)
        self.lm = LanguageModel(
            door,
            self.weights,
            files.manifest,
            voices=files.voices,
            align_layer=align_layer,
            align_head=align_head,
            kv_f16=kv_f16,
            max_frames=max_frames,
            max_text_tokens=max_text_tokens,
        )
        self.codec = Codec(
            door,
            self.weights,
            files.manifest.config,
            max_frames=max_frames,
            chunk_sizes=tuple(sorted({*first_chunks, chunk_frames})),
            latents=self.lm.latents,
            state=self.lm.state,
            frame_word=STATE["codec"],
            available_word=STATE["frames"],
        )
        self.voices = tuple(self.lm.voice_rows)
        self.max_frames = max_frames
        self.max_text_tokens = max_text_tokens
        self.sample_rate = self.codec.sample_rate
        self.samples_per_frame = self.codec.samples_per_frame
        self.lag = max(1, lag)
        self._special = {i for i in range(self.tokenizer.vocab_size) if self.tokenizer.is_special(i)}

        # The ring of staging buffers, and for every chunk of both schedules its submit, made now. Each
        # readback brings the state words, the chunk's samples and its frames' alignment rows (so no
        # readback of its own after the take: a submit and a wait for the GPU fewer).
        self.skip_ramp_above = skip_ramp_above
        self.last_take_speed: float | None = None  # x real time of the last take, None before one
        ramp = chunk_schedule(max_frames, first_chunks, chunk_frames)
        fast = chunk_schedule(max_frames, first_chunks[:1], chunk_frames)
        stride = self.lm.max_text_tokens
        self._row_bytes = 4 * stride
        largest = max(size for _, size in ramp + fast)
        slot_bytes = STATE_BYTES + largest * (4 * self.samples_per_frame + self._row_bytes)
        self._staging = [door.buffer(slot_bytes, READBACK, f"staging {i}") for i in range(STAGING_SLOTS)]
        readbacks: dict[tuple[int, int, int], Program] = {}  # (first, frames, slot): shared by the plans
        self.ramp, self.fast = (self._plan(schedule, readbacks) for schedule in (ramp, fast))
        # the next take's first command buffers, recorded during the last take
        self._ahead: _RecordedStart | None = None
        # Requests take the GPU one at a time, in order (see `speak`).
        self._queue = asyncio.Lock()
        self._requests = 0  # running or waiting

    def _plan(self, schedule: list[tuple[int, int]], readbacks: dict) -> _Plan:
        submits = []
        for index, (first, frames) in enumerate(schedule):
            key = (first, frames, index % STAGING_SLOTS)
            if key not in readbacks:
                readback = Program(f"readback frames {first}+{frames}")
                slot = self._staging[key[2]]
                kept = min(frames, self.max_frames - first)
                audio_at = 4 * first * self.samples_per_frame
                audio_bytes = 4 * kept * self.samples_per_frame
                readback.copy(self.lm.state, 0, slot, 0, STATE_BYTES)
                readback.copy(self.codec.audio, audio_at, slot, STATE_BYTES, audio_bytes)
                rows_at = STATE_BYTES + audio_bytes
                rows_bytes = kept * self._row_bytes
                readback.copy(self.lm.alignment, first * self._row_bytes, slot, rows_at, rows_bytes)
                self.door.compile(readback)
                readbacks[key] = readback
            submits.append([(self.lm.step, frames), (self.codec.chunk[frames], 1), (readbacks[key], 1)])
        return _Plan(schedule, submits, chunk_leads(schedule))

    def plan(self) -> _Plan:
        """The chunk schedule of the next take: the ramp, or no ramp after a take that was fast enough
        (`skip_ramp_above`)."""
        above, last = self.skip_ramp_above, self.last_take_speed
        return self.fast if above is not None and last is not None and last >= above else self.ramp

    # ---- text -----------------------------------------------------------------------------------
    def prepare(self, text: str, normalize: bool = True) -> list[_Take]:
        """Tokenise `text` and cut it into parts the model takes (at most max_text_tokens each)."""
        return self._prepare(text, normalize)[1]

    def _prepare(self, text: str, normalize: bool) -> tuple[Normalized, list[_Take]]:
        text = readable_text(text)  # same length: offsets into it are offsets into the caller's text
        spoken = normalize_text(text) if normalize else Normalized(text, [])
        check_has_words(spoken.text)
        # Parts never cut inside what one written token became ("$3.5M" -> three point five million
        # dollars): the splitter sees the spaces inside replacements as word joiners.
        view = list(spoken.text)
        for start, end, _, _ in spoken.spans:
            for i in range(start, end):
                if view[i] == " ":
                    view[i] = _JOINER
        # The splitter counts the tokens of the whole text (and of its parts when it is long); a part
        # that was counted is not tokenised again (0.2 ms of the Rainbow passage's start).
        encoded: dict[str, Encoding] = {}

        def count(text: str) -> int:
            text = text.replace(_JOINER, " ")
            if text not in encoded:
                encoded[text] = self.tokenizer.encode_full(text)
            return len(encoded[text].ids)

        parts = split_text("".join(view), count, self.max_text_tokens)
        takes = []
        for part in parts:
            part = TextPart(spoken.text[part.start : part.end], part.start, part.end)
            encoding = encoded.get(part.text) or self.tokenizer.encode_full(part.text)
            kept = [
                (i, p) for i, p in zip(encoding.ids, encoding.pieces, strict=True) if i not in self._special
            ]
            if not kept:
                continue
            ids = [i for i, _ in kept]
            takes.append(_Take(ids, [p for _, p in kept], self._word_count(ids), part.text, part.start))
        if not takes:
            raise TextError("the text has nothing to say: give it at least one word")
        return spoken, takes

    def _word_count(self, ids: list[int]) -> int:
        """len(tokenizer.decode(ids).split()), the reference's count for its short-text rule (more frames
        after the end of speech for texts of at most `short_text_max_words`), exact up to that limit + 1.
        Only the rule reads it, and decoding a whole part cost the 2-core machine 2.5 ms for the Rainbow
        passage's 184 tokens, so a long part's first tokens are decoded first: the decoded text of a prefix
        is the start of the whole's (the decoders work token by token), so all its words but the last
        are the whole's and the last begins one: as many words or more."""
        limit = int(self.lm.processor_config.get("short_text_max_words", 4))
        prefix = ids[: 8 * (limit + 2)]
        if len(prefix) < len(ids):
            words = len(self.tokenizer.decode(prefix).split())
            if words > limit:
                return words
        return len(self.tokenizer.decode(ids).split())

    # ---- speaking -------------------------------------------------------------------------------
    async def speak(
        self,
        text: str,
        *,
        voice: str | None = None,
        speed: float = 1.0,
        seed: int = 0,
        temperature: float | None = None,
        on_audio: Callable[[array], object] | None = None,
        on_progress: Callable[[int, int], object] | None = None,
        should_stop: Callable[[], bool] | None = None,
        max_frames: int | None = None,
        eos_threshold: float | None = None,
        normalize: bool = True,
    ) -> Speech:
        """Speak `text`; `on_audio(samples)` gets each chunk (array('f')) as soon as it is read back.

        `max_frames` caps the frames of each part below the model's own budget (tests, previews);
        `eos_threshold` overrides the checkpoint's end-of-speech threshold (float("inf") makes every
        part run to its budget: benchmarks of models whose end of speech means nothing).
        `normalize=False` reads the text as written (numbers, symbols and abbreviations are otherwise
        spoken as words); either way each word carries `start_char`/`end_char` into `text`.
        The seed is any integer, taken modulo 2**32.

        Calls made while one runs wait their turn (an asyncio.Lock): one request at a time owns the
        GPU's state. `should_stop()` returning true ends the request with CancelledError at the next
        chunk, part or readback; the engine stays as usable as before. A lost device raises
        DeviceLostError, and so does every later call: build a new Engine on a new door."""
        began = time.perf_counter()
        voice = check_voice(voice, self.voices)
        dd = duration_delta_for_speed(check_speed(speed))
        seed = check_seed(seed)
        options = (
            check_temperature(temperature),
            check_max_frames(max_frames),
            check_eos_threshold(eos_threshold),
        )
        check_callback("on_audio", on_audio)
        check_callback("on_progress", on_progress)
        check_callback("should_stop", should_stop)
        spoken, takes = self._prepare(text, check_flag("normalize", normalize))
        _stop_if(should_stop)  # a request cancelled already does not wait its turn to say so
        if self._requests == 0:
            # A new lock whenever none waits: an asyncio.Lock belongs to the event loop it first waited
            # in, and tests run one loop after another (natively `run_sync` runs none at all).
            self._queue = asyncio.Lock()
        self._requests += 1
        try:
            async with self._queue:
                request = (voice, dd, seed, options, on_audio, on_progress, should_stop, began)
                return await self._speak_now(text, spoken, takes, request)
        finally:
            self._requests -= 1

    async def _speak_now(self, text, spoken, takes, request) -> Speech:
        voice, dd, seed, options, on_audio, on_progress, should_stop, began = request
        try:
            if self.door.lost:
                raise DeviceLostError(_lost_words(self.door.lost))
            speech = Speech(audio=array("f"))
            offset = 0.0
            for index, take in enumerate(takes):
                _stop_if(should_stop)  # before each part's prefill
                samples, rows, positions, frames = await self._take(
                    take, voice, dd, seed + index, options, on_audio, should_stop, speech, began
                )
                take.lay_out()  # (done already unless the take ended early)
                words, tokens = align(
                    rows,
                    take.pieces,
                    samples,
                    sample_rate=self.sample_rate,
                    positions=positions,
                    layout=take.layout,
                )
                if offset:  # (the first part's times need no shift)
                    words = [Timed(w.text, w.start + offset, w.end + offset) for w in words]
                    tokens = [Timed(t.text, t.start + offset, t.end + offset) for t in tokens]
                speech.words += attach(words, take.text, take.start, spoken.original_span, text, take.spans)
                speech.tokens += tokens
                if speech.audio:
                    speech.audio.extend(samples)
                else:  # the take's own array: a long take's 6 MB were copied after the GPU finished
                    speech.audio = samples
                speech.frames += frames
                offset += len(samples) / self.sample_rate
                if on_progress is not None:
                    on_progress(index + 1, len(takes))
        except (CancelledError, DeviceLostError):
            raise
        except Exception as error:
            # A door learns of a lost device from what fails; a failure it explains is a lost device.
            reason = self.door.note_failure(error)
            if reason:
                raise DeviceLostError(_lost_words(reason)) from error
            raise
        speech.compute_seconds = time.perf_counter() - began
        return speech

    async def _take(self, take, voice, dd, seed, options, on_audio, should_stop, speech, began):
        lm, door = self.lm, self.door
        temperature, cap, eos_threshold = options
        budget = None if cap is None else max(1, min(int(cap), frame_budget(len(take.ids))))
        budget = lm.write_request(
            take.ids,
            seed=seed,
            temperature=temperature,
            duration_delta=dd,
            words=take.words,
            budget=budget,
            eos_threshold=eos_threshold,
        )
        got = _Harvest()
        pending: list[int] = []
        end = 0
        done = False
        plan = self.plan()
        start_parts = lm.start_parts(voice)  # the prefill, for the voice and the size write_request chose
        recorded = self._ahead if self._ahead is not None and self._ahead.plan is plan else None
        self._ahead = None  # used now or never: a recorded command buffer goes once
        ahead = recorded.chunks if recorded else []
        started = time.perf_counter()
        for index, (first, frames) in enumerate(plan.schedule):
            if first >= budget:
                break
            submit = plan.submits[index]
            cut = first + frames > budget
            if cut:
                submit = self._last_submit(plan, index, budget - first)
            if index == 0:
                # The prefill goes alone, in pieces, so that the GPU starts on it while the CPU encodes
                # the rest and the first chunk (a submit runs only once it is whole: together they began
                # ~0.7 ms later); as recorded in one piece when the last take guessed it.
                if recorded and recorded.start_parts is start_parts:
                    door.submit_recorded(recorded.start)
                else:
                    for part in start_parts:
                        door.submit([(part, 1)])
                submit = [(self.codec.reset, 1), *submit]
            if index < len(ahead) and not cut:
                pieces = [ahead[index]]  # recorded during the last take (_record_ahead)
            else:
                # after recorded chunks the GPU has a chunk queued: no pieces needed
                pieces = self._pieces(submit, () if ahead else plan.leads[index])
            self._send(pieces[0])
            pending.append(index)
            # first audio as early as possible: chunk 0 is read as soon as chunk 1's first piece is
            # queued behind it
            if index == 1 and pending[0] == 0:
                end, done = await self._collect(plan, pending.pop(0), take, got, on_audio, speech, began)
            for piece in pieces[1:] if not done else ():
                self._send(piece)
            while pending and len(pending) > self.lag and not done:
                end, done = await self._collect(plan, pending.pop(0), take, got, on_audio, speech, began)
            if done:
                break
            _stop_if(should_stop)
        if not done:
            # every chunk is submitted: the CPU would otherwise wait for the GPU
            take.lay_out()
            self._record_ahead(plan, start_parts)
            got.reserve(budget * self.samples_per_frame)
        while pending and not done:
            _stop_if(should_stop)
            end, done = await self._collect(plan, pending.pop(0), take, got, on_audio, speech, began)
        frames_kept = end if end else min(budget, got.filled // self.samples_per_frame)
        samples = got.kept(frames_kept * self.samples_per_frame)
        del got.rows[frames_kept:]
        self.last_take_speed = frames_kept * FRAME_SECONDS / max(time.perf_counter() - started, 1e-9)
        _stop_if(should_stop)
        return samples, got.rows, got.walk.positions[:frames_kept], frames_kept

    def _record_ahead(self, plan: _Plan, start_parts: tuple[Program, ...]) -> None:
        """Record the next take's first two chunks (AHEAD_CHUNKS) and its prefill now, while the GPU
        finishes this take's last chunks. They hold no request data (a take's start writes it into
        buffers), and encoding them at the next take's start kept its GPU waiting for the CPU (the
        pieces). The chunks are the schedule's without the ramp, recorded after a take that used it
        (the next take will too); the prefill is this take's voice and padded size, the next take's
        when it is a sentence like this one in the same voice (otherwise it encodes its own)."""
        if plan is not self.fast:
            return
        firsts = [[(self.codec.reset, 1), *plan.submits[0]], *plan.submits[1:AHEAD_CHUNKS]]
        chunks = [self.door.record_ahead(submit) for submit in firsts]
        start = self.door.record_ahead([(part, 1) for part in start_parts])
        if start is not None and all(chunk is not None for chunk in chunks):
            self._ahead = _RecordedStart(plan, chunks, start_parts, start)

    def _send(self, piece) -> None:
        if isinstance(piece, list):
            self.door.submit(piece)
        else:
            self.door.submit_recorded(piece)

    @staticmethod
    def _pieces(submit: list[tuple[Program, int]], leads: tuple[int, ...]) -> list[list[tuple[Program, int]]]:
        """A chunk's submit as the GPU gets it: `leads` steps in submits of their own (as many of them
        as leave steps for the last), then the rest with the codec pass and the readback. The CPU reads
        chunk 0 once chunk 1's first piece is queued, and the GPU works on each piece while the CPU
        encodes the next (chunk 1's 16 steps in one submit took a lent H200's CPU 3.4 ms to encode:
        first audio waited for it, and the GPU idled)."""
        (step, steps), rest = submit[0], submit[1:]
        pieces, sent = [], 0
        for lead in leads:
            if sent + lead >= steps:
                break
            pieces.append([(step, lead)])
            sent += lead
        return [*pieces, [(step, steps - sent), *rest]]

    def _last_submit(self, plan: _Plan, index: int, frames: int) -> list[tuple[Program, int]]:
        """Chunk `index`'s submit cut to the `frames` left of the take's budget: that many steps, and the
        smallest codec chunk that holds them (steps and codec frames past the budget would be made and
        thrown away: about 50 us a step on an H200, and a whole codec chunk)."""
        fit = min(size for size in self.codec.chunk_sizes if size >= frames)
        step, _, readback = plan.submits[index]
        return [(step[0], frames), (self.codec.chunk[fit], 1), readback]

    async def _collect(self, plan, index, take, got, on_audio, speech, began) -> tuple[int, bool]:
        """Read chunk `index` of `plan` back into `got`: its samples up to the end of speech (delivered)
        and the alignment rows of the frames made. Returns (end, done)."""
        first, frames = plan.schedule[index]
        slot = self._staging[index % STAGING_SLOTS]
        kept = min(frames, self.max_frames - first)
        audio_bytes = 4 * kept * self.samples_per_frame
        data = await self.door.read(slot, 0, STATE_BYTES + audio_bytes + kept * self._row_bytes)
        state = array("I")
        state.frombytes(data[:STATE_BYTES])
        made, end, decoded = state[STATE["frames"]], state[STATE["end"]], state[STATE["codec"]]
        # rows of frames not made (past the end) were not written this take: they are not kept
        made_here = max(0, min(first + kept, made) - first)
        if made_here:
            rows_at = STATE_BYTES + audio_bytes
            values = array("f")
            values.frombytes(data[rows_at : rows_at + made_here * self._row_bytes])
            stride, tokens = self._row_bytes // 4, len(take.ids)
            # arrays, not lists: no float objects until they are read, and nothing for the cyclic
            # garbage collector to walk (a long take's rows are 150k values)
            new_rows = [values[f * stride : f * stride + tokens] for f in range(made_here)]
            got.rows.extend(new_rows)
            got.walk.extend(new_rows)
        last = min(first + frames, end if end else made, decoded)
        if last > first:
            chunk = array("f")
            chunk.frombytes(data[STATE_BYTES : STATE_BYTES + 4 * (last - first) * self.samples_per_frame])
            got.add(chunk)
            if speech.first_audio_seconds is None:
                speech.first_audio_seconds = time.perf_counter() - began
            if on_audio is not None:
                on_audio(chunk)
        return end, bool(end) and decoded >= end


def _stop_if(should_stop) -> None:
    # Cancelling leaves nothing half-done that the next request reads: each take starts by writing
    # its whole request and resetting the state, the language model's cache and the codec's stream.
    if should_stop is not None and should_stop():
        raise CancelledError("speak() was cancelled")


def _lost_words(reason: str) -> str:
    return (
        f"the GPU device was lost ({reason}): this request failed; the next request rebuilds the engine "
        "on a new device, uploading the weights again"
    )
