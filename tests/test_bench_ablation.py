"""bench/ablation.py and bench/gemv_costs.py take parts out of the shaders by replacing their text: every
cut must still find its text (else the ablation would time the whole shader under a wrong name), and
every variant must compile and run (on the tiny model, lavapipe) with the other shaders as they are."""

from __future__ import annotations

import pytest

from bench import ablation, gemv_costs
from bench.measure import use_wgsl_folder, wgsl_variant

CASES = [
    (wgsl, name, cuts) for _, wgsl, variants in ablation.ABLATIONS.values() for name, cuts in variants.items()
]
CASES += [(gemv_costs.GEMV, name, cuts) for name, cuts in gemv_costs.CUTS.items()]


@pytest.mark.parametrize(("wgsl", "name", "cuts"), CASES, ids=[f"{w.stem}: {n}" for w, n, _ in CASES])
def test_every_cut_finds_its_text_and_changes_the_shader(wgsl, name, cuts):
    folder = wgsl_variant(wgsl, name, cuts)
    if not cuts:
        assert folder is None
        return
    text = (folder / wgsl.name).read_text()
    assert text != wgsl.read_text()
    for old, new in cuts:
        assert new in text and (old not in text or old in new)


VARIANTS = [case for case in CASES if case[2]]


@pytest.mark.parametrize(("wgsl", "name", "cuts"), VARIANTS, ids=[f"{w.stem}: {n}" for w, n, _ in VARIANTS])
def test_every_variant_compiles_and_speaks(tiny_weights, wgsl, name, cuts):
    """The engine builds every pipeline at load, so a variant whose cut leaves a shader that does not
    compile fails here (gemv_costs' 'no weight rows' once did, unnoticed until a run on the H200); a
    take of two frames then runs the prefill, the step and the codec with it."""
    import phonon_web
    from phonon_web.gpu.door import run_sync

    use_wgsl_folder(wgsl_variant(wgsl, name, cuts))
    try:
        engine = phonon_web.load(tiny_weights).engine
        speech = run_sync(engine.speak("Cut.", voice=engine.voices[0], seed=1, max_frames=2))
        engine.door.close()
    finally:
        use_wgsl_folder(None)
    assert speech.frames <= 2 and len(speech.audio) == speech.frames * engine.samples_per_frame


def test_a_missing_cut_stops_the_run(tmp_path):
    shader = tmp_path / "x.wgsl"
    shader.write_text("fn main() {}\n")
    with pytest.raises(SystemExit, match="no longer in x.wgsl"):
        wgsl_variant(shader, "gone", [("not there", "")])


def test_a_variant_runs_the_codec(tiny_weights):
    """The codec without its tile products: the variant is the one compiled (the samples change) and
    the project's shaders come back after it."""
    import numpy as np

    import phonon_web
    from bench.codec_costs import make_frames
    from tests.gpu_helpers import download

    def samples(folder):
        use_wgsl_folder(folder)
        try:
            engine = phonon_web.load(tiny_weights).engine
            make_frames(engine, 4)
            codec = engine.codec
            engine.door.submit([(codec.reset, 1), (codec.chunk[1], 1)])
            out = download(engine.door, codec.audio, count=codec.samples_per_frame)
            engine.door.close()
            return out
        finally:
            use_wgsl_folder(None)

    _, wgsl, variants = ablation.ABLATIONS["codec"]
    cuts = variants["no products"]
    whole = samples(None)
    cut = samples(wgsl_variant(wgsl, "no products", cuts))
    assert not np.array_equal(whole, cut)
    np.testing.assert_array_equal(samples(None), whole)
