"""Every case of the bad-input corpus (tests/data/bad_inputs.json) through `phonon_web.load(...).speak`:
a typed PhononError in plain words, or speech whose words point into the text; and after each case the
reference sentence still speaks exactly as it did before any case."""

from __future__ import annotations

import gc
import json
import shutil
import tracemalloc

import pytest

import phonon_web
from phonon_web import errors
from tests.bad_inputs import load_corpus

CORPUS = load_corpus("python")
PLAIN = [c for c in CORPUS["cases"] if "scenario" not in c]
SCENARIOS = {c["scenario"]: c for c in CORPUS["cases"] if "scenario" in c}
MB = 1 << 20


@pytest.fixture(scope="module")
def tts(tiny_weights):
    tts = phonon_web.load(tiny_weights)  # its own device, as a caller gets it
    yield tts
    tts.close()


def _result(speech):
    return speech.audio.tobytes(), [(w.text, w.start, w.end, w.start_char, w.end_char) for w in speech.words]


@pytest.fixture(scope="module")
def reference(tts):
    return _result(tts.speak(CORPUS["reference"]["text"], **CORPUS["reference"]["options"]))


def _still_speaks(tts, reference):
    assert _result(tts.speak(CORPUS["reference"]["text"], **CORPUS["reference"]["options"])) == reference


def _check_speech(speech, text, samples_per_frame=1920):
    assert speech.frames >= 1 and len(speech.audio) == speech.frames * samples_per_frame
    assert speech.words
    for word in speech.words:
        assert word.start_char is not None, word
        assert text[word.start_char : word.end_char] == word.text
    times = [t for w in speech.words for t in (w.start, w.end)]
    assert times == sorted(times)


def _check_error(raised, expect: str):
    assert type(raised).__name__ == expect and isinstance(raised, errors.PhononError)
    message = str(raised)
    assert 20 <= len(message) <= 400 and "Traceback" not in message, message


def test_the_corpus_is_large_and_well_formed():
    assert len(load_corpus("python")["cases"]) >= 40 and len(load_corpus("browser")["cases"]) >= 40
    for case in CORPUS["cases"]:
        assert case["expect"] == "speaks" or issubclass(getattr(errors, case["expect"]), errors.PhononError)


@pytest.mark.parametrize("case", PLAIN, ids=[c["name"] for c in PLAIN])
def test_case(tts, reference, case):
    options = {**CORPUS["defaults"], **case["options"]}
    if case["expect"] == "speaks":
        speech = tts.speak(case["text"], **options)
        _check_speech(speech, case["text"])
        if "same_as" in case:
            same = tts.speak(case["text"], **{**options, **case["same_as"]})
            assert same.audio.tobytes() == speech.audio.tobytes()
    else:
        with pytest.raises(errors.PhononError) as caught:
            tts.speak(case["text"], **options)
        _check_error(caught.value, case["expect"])
    _still_speaks(tts, reference)


@pytest.mark.parametrize(
    "options", [{"on_audio": "print"}, {"on_progress": 5}, {"cancel": 5}, {"cancel": "stop"}], ids=str
)
def test_callbacks_that_cannot_be_called_are_option_errors(tts, reference, options):
    with pytest.raises(errors.OptionError) as caught:
        tts.speak("Hello.", max_frames=1, **options)
    _check_error(caught.value, "OptionError")
    _still_speaks(tts, reference)


def test_speak_after_close(tiny_weights, door, tts, reference):
    case = SCENARIOS["speak_after_close"]
    closing = phonon_web.load(tiny_weights, door=door)
    closing.close()
    closing.close()  # twice is harmless
    with pytest.raises(errors.PhononError) as caught:
        closing.speak(case["text"], **CORPUS["defaults"])
    _check_error(caught.value, case["expect"])
    assert closing.voices == tts.voices  # what it was stays readable
    _still_speaks(tts, reference)


def test_load_twice(tiny_weights, tts, reference):
    assert SCENARIOS["load_twice"]["expect"] == "speaks"
    second = phonon_web.load(tiny_weights)  # a second device of its own
    try:
        _still_speaks(second, reference)
        _still_speaks(tts, reference)
    finally:
        second.close()


def _damage(folder, how: str) -> None:
    manifest = json.loads((folder / "manifest.json").read_text())
    weights = folder / "weights.bin"
    if how == "weights_other_model":
        manifest["config"]["model_type"] = "llama"
    elif how == "weights_config_mismatch":
        manifest["config"]["hidden_size"] *= 2
    elif how == "weights_newer_version":
        manifest["version"] += 1
    elif how == "weights_other_format":
        manifest["format"] = "safetensors-index"
    elif how == "weights_other_build":
        data = bytearray(weights.read_bytes())
        data[len(data) // 2] ^= 0xFF
        weights.write_bytes(bytes(data))
    elif how == "weights_truncated":
        weights.write_bytes(weights.read_bytes()[:-4096])
    else:
        raise AssertionError(f"no damage named {how}")
    (folder / "manifest.json").write_text(json.dumps(manifest))


WEIGHTS = sorted(s for s in SCENARIOS if s.startswith("weights_"))


@pytest.mark.parametrize("scenario", WEIGHTS)
def test_damaged_weights(tiny_weights, door, tmp_path, tts, reference, scenario):
    folder = tmp_path / "web"
    shutil.copytree(tiny_weights, folder)
    _damage(folder, scenario)
    before = door.created.copy()
    with pytest.raises(errors.PhononError) as caught:
        phonon_web.load(folder, door=door)
    _check_error(caught.value, SCENARIOS[scenario]["expect"])
    assert door.created == before  # refused before anything reached the GPU
    _still_speaks(tts, reference)


def test_100k_characters_stream_in_parts_with_flat_memory(tts, reference):
    case = SCENARIOS["long_text_streamed"]
    text, options = case["text"], {**CORPUS["defaults"], **case["options"]}
    assert len(text) >= 100_000
    parts = len(tts.engine.prepare(text))
    streamed = [0]
    progress = []

    def on_audio(samples):
        streamed[0] += len(samples)

    def on_progress(done, total):
        progress.append((done, total, streamed[0]))

    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        speech = tts.speak(text, on_audio=on_audio, on_progress=on_progress, **options)
        held, peak = tracemalloc.get_traced_memory()
        words, samples = len(speech.words), len(speech.audio)
        del speech
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    print(
        f"100k text, {parts} parts: peak {(peak - before) / MB:.1f} MB, result {(held - before) / MB:.1f} MB,"
    )
    print(f"left after dropping it {(after - before) / MB:.2f} MB")
    assert parts > 100 and progress[-1][:2] == (parts, parts)
    # streamed: by the end of part k, at least k frames had gone out through on_audio
    assert all(sent >= done * 1920 for done, _, sent in progress)
    assert streamed[0] == samples and words == len(text.split())
    # The result itself is what grows: its 18.6k words, 25k tokens (Timed objects) and 1.8 MB of audio
    # made up 17.3 MB of the 18.5 MB peak measured (the rest: the text's parts, tokenised up front).
    # 32 MB leaves room for other Pythons' object sizes but not for a copy of the result or anything
    # kept per part (a part's alignment rows, its chunks).
    assert peak - before < 32 * MB, (peak - before) / MB
    assert held - before > 4 * MB  # the words really were measured
    # nothing stays behind once the result is dropped
    assert after - before < 1 * MB, (after - before) / MB
    _still_speaks(tts, reference)
