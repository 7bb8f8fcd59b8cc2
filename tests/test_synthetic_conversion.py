"""build_weights.py on the synthetic checkpoint: what the real files will go through."""

import json

import numpy as np
import pytest

import build_weights
from phonon_web.manifest import load_manifest
from tests.reference import checkpoint as ck


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("synthetic")
    source = ck.write_checkpoint(root / "ckpt", tiny=True, seed=11)
    build_weights.convert(source, root / "web")
    return source, root / "web"


def test_training_only_tensors_are_dropped_and_the_rest_kept(tiny):
    source, web = tiny
    manifest = load_manifest((web / "manifest.json").read_bytes())
    names = {t.name for t in manifest.tensors}
    with open(source / "model.safetensors", "rb") as f:
        header = json.loads(f.read(int.from_bytes(f.read(8), "little")))
    original = set(header) - {"__metadata__"}
    training = {n for n in original if n.startswith("flow_lm.flow.w_s_t.") or n.endswith(".learnt_padding")}
    assert training, "the synthetic checkpoint must carry training-only tensors"
    assert not names & training
    # every other original tensor is in the blob, unless a layout rule folds it into a derived one
    assert names >= {n for n in original - training if not _folded(n)}


def _folded(name: str) -> bool:
    """Tensors a layout rule may fold into another (the kernels' issue); none are dropped silently."""
    rule = build_weights.rule_for(name)
    return rule is not None and rule.action == "skip"


def test_unchanged_tensors_dequantise_to_the_originals(tiny):
    source, web = tiny
    manifest = json.loads((web / "manifest.json").read_text())
    blob = (web / "weights.bin").read_bytes()
    originals = build_weights.read_safetensors(source / "model.safetensors")  # bf16 and f32, as float32
    checked = 0
    for entry in manifest["tensors"]:
        name = entry["name"]
        if name not in originals or build_weights.rule_for(name).transform is not build_weights.as_stored:
            continue
        values = originals[name].reshape(entry["shape"])
        restored = build_weights.dequantize(entry, blob)
        if entry["kind"] == "q8":
            rows = values.reshape(entry["rows"], -1)
            bound = np.abs(rows).max(axis=1, keepdims=True) / 127 * 0.5 + 1e-3 * np.abs(rows) + 1e-7
            assert (np.abs(restored.reshape(rows.shape) - rows) <= bound).all(), name
        else:
            np.testing.assert_allclose(restored, values, rtol=1e-3, atol=1e-6, err_msg=name)
        checked += 1
    assert checked >= 20


def test_full_size_file_is_about_44_mb_and_reproducible(tmp_path):
    source = ck.write_checkpoint(tmp_path / "ckpt", tiny=False, seed=0)
    first = build_weights.convert(source, tmp_path / "a")
    second = build_weights.convert(source, tmp_path / "b")
    assert first["weights"]["sha256"] == second["weights"]["sha256"]
    assert (tmp_path / "a" / "manifest.json").read_bytes() == (tmp_path / "b" / "manifest.json").read_bytes()
    assert 43e6 < first["weights"]["bytes"] < 45e6, first["weights"]["bytes"]
