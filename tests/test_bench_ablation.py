"""bench/ablation.py and bench/gemv_costs.py take parts out of the shaders by replacing their text: every
cut must still find its text (else the ablation would time the whole shader under a wrong name), and a
variant must compile and run (on the tiny model, lavapipe) with the other shaders as they are."""

from __future__ import annotations

import pytest

from bench import ablation, gemv_costs
from bench.measure import use_wgsl_folder, wgsl_variant

CASES = [
    (wgsl, name, cuts) for wgsl, variants in ablation.ABLATIONS.values() for name, cuts in variants.items()
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

    wgsl, cuts = ablation.ABLATIONS["codec"][0], ablation.ABLATIONS["codec"][1]["no products"]
    whole = samples(None)
    cut = samples(wgsl_variant(wgsl, "no products", cuts))
    assert not np.array_equal(whole, cut)
    np.testing.assert_array_equal(samples(None), whole)
