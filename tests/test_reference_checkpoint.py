"""The synthetic checkpoint is laid out as Gradium's and the reference classes load it back whole."""

import json
import math

import pytest
import torch
from safetensors import safe_open

from tests.reference import checkpoint as ck


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return ck.write_checkpoint(tmp_path_factory.mktemp("tiny"), tiny=True, seed=3)


def test_folder_has_gradiums_files(tiny_dir):
    for name in ("model.safetensors", "config.json", "generation_config.json", "processor_config.json"):
        assert (tiny_dir / name).is_file(), name
    assert (tiny_dir / "tokenizer.5.0.0.json").is_file()
    voices = sorted(p.stem for p in (tiny_dir / "voices").glob("*.safetensors"))
    assert voices == sorted(ck.VOICE_NAMES) and len(voices) >= 3
    config = json.loads((tiny_dir / "config.json").read_text())
    assert config["model_type"] == "gradium_phonon_tts"
    assert config["audio_tokenizer_config"]["hidden_act"] == "gelu"  # exact GELU, as Pocket TTS


def test_original_naming_and_dtypes(tiny_dir):
    with safe_open(tiny_dir / "model.safetensors", "pt") as f:
        names = set(f.keys())
        dtypes = {name: f.get_slice(name).get_dtype() for name in names}
    assert "flow_lm.condition_provider.conditioners.transcript_in_segment.embed.weight" in names
    assert "flow_lm.transformer.layers.0.self_attn.in_proj.weight" in names
    assert "mimi.upsample.convtr.convtr.weight" in names
    assert "mimi.decoder.model.0.conv.weight" in names and "mimi.decoder.model.2.convtr.weight" in names
    assert "mimi.decoder.model.3.block.1.conv.weight" in names
    # the training-only tensors a released file carries, which every loader must ignore
    assert any(n.startswith("flow_lm.flow.w_s_t.") for n in names)
    assert any(n.endswith(".learnt_padding") for n in names)
    assert all(dtypes[n] == "F32" for n in names if n.startswith("mimi."))
    lm_dtypes = {
        dtypes[n] for n in names if n.startswith("flow_lm.") and "freqs" not in n and "emb_" not in n
    }
    assert lm_dtypes == {"BF16"}
    assert not any(n.startswith(("model.", "flow_head.", "decoder.")) for n in names)


def test_reference_loads_everything_back(tiny_dir):
    ref = ck.load_reference(tiny_dir)
    assert ref.missing_keys == []
    assert ref.unexpected_keys == []
    lm, codec = ck.make_reference_models(ck.TINY, seed=3)
    kept_f32 = {"latent_mean", "latent_std"}
    for name, expected in lm.state_dict().items():
        if name.startswith("loss_weighting") or name == "latent_stats_num_updates":
            continue
        if name not in kept_f32 and not name.endswith("freqs"):
            expected = expected.to(torch.bfloat16)
        torch.testing.assert_close(ref.lm.state_dict()[name], expected.float(), rtol=0, atol=0, msg=name)
    for name, expected in codec.state_dict().items():
        torch.testing.assert_close(ref.codec.state_dict()[name], expected, rtol=0, atol=0, msg=name)
    assert set(ref.voices) == set(ck.VOICE_NAMES)
    assert all(v.shape == (ck.VOICE_ROWS, ck.TINY.voice_width) for v in ref.voices.values())


def test_same_seed_same_bytes(tmp_path):
    a = ck.write_checkpoint(tmp_path / "a", tiny=True, seed=5)
    b = ck.write_checkpoint(tmp_path / "b", tiny=True, seed=5)
    c = ck.write_checkpoint(tmp_path / "c", tiny=True, seed=6)
    assert (a / "model.safetensors").read_bytes() == (b / "model.safetensors").read_bytes()
    assert (a / "model.safetensors").read_bytes() != (c / "model.safetensors").read_bytes()


def test_full_size_dimensions_match_the_model_card(tmp_path):
    out = ck.write_checkpoint(tmp_path / "full", tiny=False, seed=0)
    with safe_open(out / "model.safetensors", "pt") as f:
        shapes = {name: f.get_slice(name).get_shape() for name in f.keys()}
    kept = {
        n: s for n, s in shapes.items() if not (n.startswith("flow_lm.flow.w_s_t.") or "learnt_padding" in n)
    }
    lm_values = sum(math.prod(s) for n, s in kept.items() if n.startswith("flow_lm."))
    codec_values = sum(math.prod(s) for n, s in kept.items() if n.startswith("mimi."))
    # model.md: backbone + flow head 30.79 M values, codec decoder 10.31 M, 41.09 M in all (card: 41.1 M)
    assert abs(lm_values - 30.79e6) < 0.01e6, lm_values
    assert abs(codec_values - 10.31e6) < 0.01e6, codec_values
    assert shapes["flow_lm.condition_provider.conditioners.transcript_in_segment.embed.weight"] == [4001, 512]
    assert shapes["flow_lm.transformer.layers.5.self_attn.in_proj.weight"] == [1536, 512]
    assert shapes["mimi.quantizer.output_proj.weight"] == [512, 32, 1]
    assert shapes["mimi.upsample.convtr.convtr.weight"] == [512, 1, 32]
    ref = ck.load_reference(out)
    assert ref.missing_keys == [] and ref.unexpected_keys == []


def _rope_interleaved(x, positions, theta=10000.0):
    """Rotary embedding on interleaved pairs (2j, 2j+1), as the original checkpoint's code applies it."""
    d = x.shape[-1]
    inv = 1.0 / theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    angle = positions[:, None] * inv[None, :]
    even, odd = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = even * angle.cos() - odd * angle.sin()
    out[..., 1::2] = even * angle.sin() + odd * angle.cos()
    return out


def _rope_halves(x, positions, theta=10000.0):
    d = x.shape[-1]
    inv = 1.0 / theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    angle = torch.cat([positions[:, None] * inv[None, :]] * 2, dim=-1)
    rotated = torch.cat([-x[..., d // 2 :], x[..., : d // 2]], dim=-1)
    return x * angle.cos() + rotated * angle.sin()


def test_rotary_row_permutation_preserves_attention_scores():
    """Interleaved rows with interleaved RoPE give the same q.k as permuted rows with rotate-half RoPE."""
    heads, head_dim, width = 4, 16, 32
    gen = torch.Generator().manual_seed(0)
    wq = torch.randn(heads * head_dim, width, generator=gen, dtype=torch.float64)
    wk = torch.randn(heads * head_dim, width, generator=gen, dtype=torch.float64)
    x = torch.randn(7, width, generator=gen, dtype=torch.float64)
    pos = torch.arange(7, dtype=torch.float64) + 3

    def scores(q_rows, k_rows, rope):
        q = (x @ q_rows.T).view(7, heads, head_dim).transpose(0, 1)
        k = (x @ k_rows.T).view(7, heads, head_dim).transpose(0, 1)
        return rope(q, pos) @ rope(k, pos).transpose(1, 2)

    original = scores(wq, wk, _rope_interleaved)
    permuted = scores(ck.interleaved_to_halves(wq, heads), ck.interleaved_to_halves(wk, heads), _rope_halves)
    torch.testing.assert_close(original, permuted)
    torch.testing.assert_close(ck.halves_to_interleaved(ck.interleaved_to_halves(wq, heads), heads), wq)
