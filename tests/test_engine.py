"""The whole engine on the tiny synthetic model (lavapipe): audio, streaming, words, no allocations."""

import pytest

from phonon_web.engine import Engine, _Harvest, chunk_leads, chunk_schedule
from phonon_web.errors import OptionError, TextError, VoiceError
from phonon_web.files import ModelFiles
from phonon_web.gpu.door import run_sync
from phonon_web.normalize import normalize as phonon_web_normalize

SENTENCE = "The birch canoe slid on the smooth planks."


@pytest.fixture(scope="module")
def files(tiny_weights):
    return ModelFiles.from_folder(tiny_weights)


@pytest.fixture(scope="module")
def engine(door, files):
    # always the ramp of first chunks: the tests below count its chunks (test_a_fast_take_skips_the_ramp
    # covers the other schedule)
    return Engine(door, files, skip_ramp_above=None)


def speak(engine, text=SENTENCE, **options):
    return run_sync(engine.speak(text, **options))


def test_speaks_with_words_and_streams_chunks(engine):
    chunks = []
    speech = speak(engine, voice="Delia", seed=1, max_frames=20, on_audio=lambda c: chunks.append(len(c)))
    spf = engine.samples_per_frame
    assert speech.sample_rate == 24000 and spf == 1920
    assert 1 <= speech.frames <= 20
    assert len(speech.audio) == speech.frames * spf
    # chunks of 1, 2, 4, 8 then 16 frames, delivered one by one as they were read back
    assert chunks[:4] == [1 * spf, 2 * spf, 4 * spf, 8 * spf][: len(chunks[:4])]
    assert sum(chunks) == len(speech.audio) and len(chunks) >= 3
    assert [w.text for w in speech.words] == SENTENCE.split()
    assert len(speech.tokens) >= len(speech.words)
    times = [t for w in speech.words for t in (w.start, w.end)]
    assert times == sorted(times) and times[-1] <= speech.duration + 1e-9
    assert speech.first_audio_seconds is not None and speech.first_audio_seconds <= speech.compute_seconds


def test_same_seed_same_samples_whatever_the_chunk_schedule(door, files, engine):
    first = speak(engine, seed=7, max_frames=14)
    again = speak(engine, seed=7, max_frames=14)
    assert first.audio.tobytes() == again.audio.tobytes()
    ones = Engine(door, files, first_chunks=(), chunk_frames=1, max_frames=32)
    eights = Engine(door, files, first_chunks=(), chunk_frames=8, max_frames=32)
    for other in (ones, eights):
        assert speak(other, seed=7, max_frames=14).audio.tobytes() == first.audio.tobytes()
    assert speak(engine, seed=8, max_frames=14).audio.tobytes() != first.audio.tobytes()


def test_a_fast_take_skips_the_ramp(door, files):
    """After a take faster than `skip_ramp_above` times real time, the next take's chunks are 1 frame,
    then 32 (no 2, 4, 8 and 16), with the same samples bit for bit and no GPU object made; after a slower
    take the ramp comes back."""
    spf = 1920
    engine = Engine(door, files, max_frames=40, skip_ramp_above=0.0)  # every take counts as fast

    events = []  # each submit's step counts, and "audio" where a chunk was delivered

    def sizes(seed):
        chunks = []

        def on_audio(chunk):
            chunks.append(chunk)
            events.append("audio")

        speech = speak(engine, seed=seed, max_frames=40, eos_threshold=float("inf"), on_audio=on_audio)
        return [len(c) // spf for c in chunks], speech

    assert engine.last_take_speed is None
    ramp_sizes, ramp = sizes(3)
    assert ramp_sizes == [1, 2, 4, 8, 16, 9] and engine.last_take_speed > 0.0
    created = engine.door.created.copy()
    events.clear()
    real_submit = engine.door.submit

    def spy(items):
        events.append([n for program, n in items if program is engine.lm.step])
        return real_submit(items)

    engine.door.submit = spy
    try:
        fast_sizes, fast = sizes(3)
    finally:
        del engine.door.submit
    assert fast_sizes == [1, 32, 7]
    assert fast.audio.tobytes() == ramp.audio.tobytes()
    assert engine.door.created == created
    # after the start's pieces: chunk 0 (1 step), chunk 1's steps in pieces of 2, 3, 4, 5, 6, 8 and the
    # last 4 with its codec chunk, then the last 7 (too few for a piece of 8 and the rest); chunk 0 is
    # delivered once the piece of 2 is queued
    steps = [e for e in events if e]
    assert steps[:10] == [[1], [2], "audio", [3], [4], [5], [6], [8], [4], [7]]
    assert steps.count("audio") == 3
    engine.skip_ramp_above = engine.last_take_speed * 1e6  # no take is that fast
    assert sizes(3)[0] == ramp_sizes


def test_a_take_after_a_fast_one_starts_from_chunks_recorded_ahead(door, files):
    """A take on the schedule without the ramp records the next take's prefill (its own voice and size)
    and chunks 0 and 1 once its own are all submitted; the next take submits them as they are and its
    later chunks whole, with the same samples bit for bit and no GPU object made. A take whose budget
    cuts chunk 1 encodes that one; a take in another voice encodes its prefill."""
    engine = Engine(door, files, max_frames=80, skip_ramp_above=0.0)  # every take after the first: fast
    speak(engine, seed=4, max_frames=80, eos_threshold=float("inf"))  # the ramp: nothing recorded
    assert engine._ahead is None
    plain = speak(engine, seed=4, max_frames=80, eos_threshold=float("inf"))  # fast: records ahead
    assert engine._ahead is not None and engine._ahead.plan is engine.fast
    created = engine.door.created.copy()
    events = []
    real_submit, real_recorded = engine.door.submit, engine.door.submit_recorded
    engine.door.submit = lambda items: (
        events.append([n for p, n in items if p is engine.lm.step]),
        real_submit(items),
    )
    engine.door.submit_recorded = lambda recorded: (events.append("recorded"), real_recorded(recorded))
    try:
        again = speak(engine, seed=4, max_frames=80, eos_threshold=float("inf"))
        # the prefill (same voice, same size) and chunks 0 and 1 as recorded, then 32 and 15 frames whole
        assert [e for e in events if e] == ["recorded", "recorded", "recorded", [32], [15]]
        assert again.audio.tobytes() == plain.audio.tobytes() and again.frames == plain.frames == 80
        assert engine.door.created == created
        events.clear()
        cut = speak(engine, seed=4, max_frames=20, eos_threshold=float("inf"))
        # the prefill and chunk 0 as recorded; chunk 1 cut to 19 frames
        assert [e for e in events if e] == ["recorded", "recorded", [19]]
        assert cut.audio.tobytes() == plain.audio[: len(cut.audio)].tobytes()
        # another voice: its own prefill, in pieces (submits without steps), then chunk 0 as recorded
        events.clear()
        other = speak(engine, voice=engine.voices[1], seed=4, max_frames=20, eos_threshold=float("inf"))
        first = events.index("recorded")
        assert first >= 1 and events[:first] == [[]] * first and other.frames == 20
    finally:
        del engine.door.submit, engine.door.submit_recorded


def test_the_last_chunk_stops_at_the_budget(engine, monkeypatch):
    """20 frames: chunks of 1, 2, 4 and 8, then 5 of the next 16. That submit runs 5 steps and the
    codec's chunk of 8 (the smallest that holds them), and the samples are the first 20 frames of a
    take of 31 (1 + 2 + 4 + 8 + 16: no chunk cut), bit for bit."""
    submits = []
    real_submit = engine.door.submit

    def spy(items):
        submits.append(list(items))
        return real_submit(items)

    monkeypatch.setattr(engine.door, "submit", spy)
    cut = speak(engine, seed=5, max_frames=20, eos_threshold=float("inf"))
    last = submits[-1]
    assert last[0] == (engine.lm.step, 5) and last[1] == (engine.codec.chunk[8], 1)
    # chunks of 2, 4, 8 and 5 steps, the 4 and 8 in pieces (chunk_leads: 2; 3, 4; then the rest)
    steps = [n for program, n in (s[0] for s in submits[2:]) if program is engine.lm.step]
    assert steps == [2, 2, 2, 3, 4, 1, 5]
    whole = speak(engine, seed=5, max_frames=31, eos_threshold=float("inf"))
    assert cut.frames == 20 and whole.frames == 31
    assert cut.audio.tobytes() == whole.audio[: len(cut.audio)].tobytes()


def test_a_harvest_keeps_the_samples_added_whatever_room_was_reserved():
    from array import array

    got, whole = _Harvest(), array("f")
    for n, room in ((5, 0), (7, 30), (9, 0), (8, 0), (3, 0)):  # reserved after the second chunk
        chunk = array("f", [float(len(whole) + i) for i in range(n)])
        got.add(chunk)
        whole.extend(chunk)
        got.reserve(room)
        assert got.filled == len(whole) and got.samples[: got.filled] == whole
    assert len(got.samples) == 32  # the 30 reserved, outgrown by the last chunks
    assert got.kept(100) == whole and got.filled == len(whole)  # cut to what was added
    assert got.kept(10) == whole[:10]


def test_chunk_leads_grow_across_the_take_and_stop_at_their_frame():
    fast = chunk_schedule(768, (1,), 32)
    leads = chunk_leads(fast, lead=(2, 3, 4, 5, 6, 8), until=128)
    assert leads[:6] == [(), (2, 3, 4, 5, 6, 8), (8, 8, 8), (8, 8, 8), (8, 8, 8), ()]
    assert all(not sizes for (first, _), sizes in zip(fast, leads, strict=True) if first >= 128)
    ramp = chunk_schedule(60, (1, 2, 4, 8, 16), 32)
    # the sequence goes on across chunks; a chunk keeps steps for its last piece (2 frames: none ahead)
    assert chunk_leads(ramp, lead=(2, 3, 4, 5, 6, 8), until=128) == [(), (), (2,), (3, 4), (5, 6), (8, 8, 8)]
    for (_, frames), sizes in zip(ramp, chunk_leads(ramp, lead=(1,), until=128), strict=True):
        assert sum(sizes) < frames


def test_the_start_goes_in_pieces_that_make_the_whole_start(engine):
    lm = engine.lm
    for voice in engine.voices:
        lm.write_request([5, 6, 7])
        parts = lm.start_parts(voice)
        assert len(parts) > 1 and all(part.compiled is not None for part in parts)
        assert [c for part in parts for c in part.commands] == lm.start(voice).commands


def test_word_times_read_the_alignment_rows_of_every_frame_made(engine, monkeypatch):
    """Each chunk's readback brings its frames' alignment rows; together they must be the alignment
    buffer's first `frames` rows, each cut to the text's tokens (20 frames: five chunks, the last cut
    short by the budget)."""
    import numpy as np

    import phonon_web.engine as engine_module
    from tests.gpu_helpers import download

    seen = []
    real_align = engine_module.align

    def spy(rows, pieces, samples, **options):
        seen.append((list(rows), len(pieces)))
        return real_align(rows, pieces, samples, **options)

    monkeypatch.setattr(engine_module, "align", spy)
    speech = speak(engine, voice="Delia", seed=3, max_frames=20, eos_threshold=float("inf"))
    ((rows, tokens),) = seen
    assert speech.frames == len(rows) == 20
    stride = engine.lm.max_text_tokens
    table = download(engine.door, engine.lm.alignment, count=20 * stride).reshape(20, stride)
    np.testing.assert_array_equal(np.array(rows, np.float32), table[:, :tokens])


def test_no_gpu_objects_are_made_per_request(engine):
    speak(engine, "Hello there.", max_frames=6)
    before = engine.door.created.copy()
    for i in range(50):
        speak(engine, "Hello there." if i % 2 else SENTENCE, voice=engine.voices[i % 3], seed=i, max_frames=6)
    assert engine.door.created == before


def test_long_text_is_spoken_in_parts_with_shifted_times(engine):
    text = " ".join(f"Sentence number {n} has a few words in it." for n in range(60))
    takes = engine.prepare(text)
    assert len(takes) >= 2 and all(len(t.ids) <= engine.max_text_tokens for t in takes)
    parts = []
    speech = speak(engine, text, max_frames=3, on_progress=lambda done, total: parts.append((done, total)))
    assert parts[-1] == (len(takes), len(takes))
    assert len(speech.words) == len(text.split())
    starts = [w.start for w in speech.words]
    assert starts == sorted(starts)
    assert speech.words[-1].start >= (len(takes) - 1) * 3 * 0.08 - 1e-9  # past the earlier parts' audio


@pytest.mark.parametrize(
    "options, error",
    [
        ({"speed": 2.0}, OptionError),
        ({"speed": float("nan")}, OptionError),
        ({"voice": "Nobody"}, VoiceError),
        ({"seed": 1.5}, OptionError),
    ],
)
def test_bad_options_raise_typed_errors(engine, options, error):
    with pytest.raises(error):
        speak(engine, max_frames=2, **options)
    assert speak(engine, "Still speaking.", max_frames=2).frames >= 1


@pytest.mark.parametrize("text", ["", "   \n ", 5, None])
def test_bad_text_raises_text_error(engine, text):
    with pytest.raises(TextError):
        speak(engine, text, max_frames=2)


def test_words_point_back_at_the_written_text(engine):
    text = "Dr. Smith paid $5.20 for 3 kg of rice, at 9:30 pm."
    speech = speak(engine, text, seed=2, max_frames=24)
    assert all(w.start_char is not None for w in speech.words)
    assert all(text[w.start_char : w.end_char] == w.text for w in speech.words)
    spans = [(w.start_char, w.end_char) for w in speech.words]
    assert spans == sorted(spans) and all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))
    assert "".join(w.text for w in speech.words).replace(" ", "") == text.replace(" ", "")
    assert "3 kg" in [w.text for w in speech.words]  # one written token, spoken as two words
    money = next(w for w in speech.words if w.text == "$5.20")  # spoken as five dollars and twenty cents
    inside = [t for t in speech.tokens if money.start <= t.start and t.end <= money.end]
    assert len(inside) >= 4
    assert [w.text for w in speech.words][:2] == ["Dr.", "Smith"]
    plain = speak(engine, text, seed=2, max_frames=24, normalize=False)
    assert "$5.20" in [w.text for w in plain.words] and all(
        text[w.start_char : w.end_char] == w.text for w in plain.words
    )


def test_parts_never_cut_inside_a_written_token(engine, monkeypatch):
    monkeypatch.setattr(engine, "max_text_tokens", 24)  # small parts: words must be cut, replacements fit
    text = "They raised $3.5M and then $12.75 more on 2026-11-30 with 1,234 backers."
    spoken = phonon_web_normalize(text)
    takes = engine.prepare(text)
    assert len(takes) >= 3 and all(len(t.ids) <= 24 for t in takes)
    for take in takes:
        for start, end, _, _ in spoken.spans:  # no part ends strictly inside a replacement
            assert not (start < take.start + len(take.text) < end), (take.text, spoken.text[start:end])
            assert not (start < take.start < end), (take.text, spoken.text[start:end])


@pytest.mark.parametrize(
    "text",
    [
        "Hello.",
        "One two three four.",
        "One two three four five.",
        "Supercalifragilisticexpialidocious " * 3,  # few words, many tokens
        "Pneumonoultramicroscopicsilicovolcanoconiosis! " + "a " * 40,
        "word " * 60,
        "Ünïcödé wörds, ñ, ß and 漢字 " * 6,
    ],
)
def test_word_count_decides_the_short_text_rule_as_the_reference(engine, text):
    """The take's word count (the reference's len(decode(ids).split())) is exact up to the short-text
    limit + 1, and beyond it a count that is still above the limit: the only thing that reads it."""
    limit = int(engine.lm.processor_config.get("short_text_max_words", 4))
    for take in engine.prepare(text):
        exact = len(engine.tokenizer.decode(take.ids).split())
        assert (take.words <= limit) == (exact <= limit)
        assert take.words == exact if exact <= limit + 1 else limit < take.words <= exact
