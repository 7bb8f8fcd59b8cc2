"""The synthetic checkpoint: Gradium's file layout, filled from the Transformers reference classes.

Gradium's real checkpoint (`gradium/phonon-31m-en`) cannot be downloaded on our machines, so every
stage of phonon_web is verified against a stand-in with the same shape:

* `model.safetensors` in Gradium's *original* tensor naming (`flow_lm.*` in bf16, `mimi.*` in f32,
  plus the training-only tensors a real file carries), written from
  `GradiumPhononTTSForConditionalGeneration` and `PocketTTSAudioTokenizerModel` at the real
  dimensions with random weights from a fixed seed;
* `config.json` (the Transformers config of the language model, with the codec's config under
  `audio_tokenizer_config`), `generation_config.json`, `processor_config.json`;
* `voices/<Name>.safetensors`, each one `audio_prompt` tensor of 125 x 512 speaker latents;
* `tokenizer.5.0.0.json`, a Unigram tokenizer trained here (see `make_tokenizer.py`).

`load_reference()` reads such a folder back into the reference classes: the language model through
Transformers' own conversion mapping for this checkpoint, the codec through `CODEC_RENAMES` (Transformers
5.24 has no mapping for `mimi.*`; the names follow the public Pocket TTS code).

Run: `python -m tests.reference.checkpoint OUT_DIR [--tiny] [--seed N]`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from transformers import (
    GradiumPhononTTSConfig,
    GradiumPhononTTSForConditionalGeneration,
    PocketTTSAudioTokenizerConfig,
    PocketTTSAudioTokenizerModel,
)

VOICE_NAMES = ("Delia", "Marcus", "Iris")  # synthetic stand-ins; the real catalogue has its own names
VOICE_ROWS = 125

# Runtime knobs of the released checkpoint that live outside the weights. The generation defaults are
# the reference's (`pocket_tts/generation_pocket_tts.py`); the processor's values follow Gradium's
# processor_config.json as described in the seed text (1 frame after the end, 3 for texts of <= 4 words).
GENERATION_CONFIG = {
    "num_flow_steps": 1,
    "eos_threshold": -4.0,
    "min_frames_before_eos": 6,
    "temperature": 0.3,
}
PROCESSOR_CONFIG = {
    "short_text_max_words": 4,
    "frames_after_eos_short_text": 3,
    "frames_after_eos": 1,
    "fade_in_duration": 0.005,
}


@dataclass(frozen=True)
class Dims:
    """The sizes that differ between the full-size and the tiny synthetic model."""

    hidden: int
    layers: int
    heads: int
    mlp: int
    flow_hidden: int
    flow_layers: int
    freq_embedding: int
    voice_width: int
    codec_hidden: int
    codec_filters: int
    codec_layers: int
    codec_heads: int
    codec_mlp: int


FULL = Dims(512, 6, 8, 2048, 512, 6, 256, 512, 512, 64, 2, 8, 2048)
TINY = Dims(64, 2, 4, 256, 64, 2, 32, 64, 64, 8, 1, 4, 128)


def lm_config(dims: Dims) -> GradiumPhononTTSConfig:
    return GradiumPhononTTSConfig(
        vocab_size=4001,
        hidden_size=dims.hidden,
        num_hidden_layers=dims.layers,
        num_attention_heads=dims.heads,
        intermediate_size=dims.mlp,
        hidden_act="gelu",
        layer_norm_eps=1e-5,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
        audio_prompt_dim=dims.voice_width,
        flow_head_config={
            "hidden_size": dims.flow_hidden,
            "num_hidden_layers": dims.flow_layers,
            "condition_dim": dims.hidden,
            "latent_dim": 32,
            "frequency_embedding_size": dims.freq_embedding,
        },
    )


def codec_config(dims: Dims) -> PocketTTSAudioTokenizerConfig:
    # Pocket TTS's codec uses the exact GELU; the Transformers default is the tanh approximation.
    return PocketTTSAudioTokenizerConfig(
        encoder_config=None,
        hidden_act="gelu",
        hidden_size=dims.codec_hidden,
        num_filters=dims.codec_filters,
        num_hidden_layers=dims.codec_layers,
        num_attention_heads=dims.codec_heads,
        num_key_value_heads=dims.codec_heads,
        intermediate_size=dims.codec_mlp,
        upsample_groups=dims.codec_hidden,
        sliding_window=250,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
    )


# ---------------------------------------------------------------------------------------------------
# Name maps. Each row is (original regex, reference template); the codec's q/k rows are permuted.
# ---------------------------------------------------------------------------------------------------
_CODEC_LAYER = r"^mimi\.decoder_transformer\.transformer\.layers\.(\d+)\."
CODEC_RENAMES: list[tuple[str, str]] = [
    (r"^mimi\.quantizer\.output_proj\.weight$", "latent_proj.weight"),
    (r"^mimi\.upsample\.convtr\.convtr\.weight$", "decoder.upsample.conv.weight"),
    (
        _CODEC_LAYER + r"self_attn\.out_proj\.weight$",
        r"decoder.decoder_transformer.layers.\1.self_attn.o_proj.weight",
    ),
    (_CODEC_LAYER + r"norm1\.(weight|bias)$", r"decoder.decoder_transformer.layers.\1.input_layernorm.\2"),
    (
        _CODEC_LAYER + r"norm2\.(weight|bias)$",
        r"decoder.decoder_transformer.layers.\1.post_attention_layernorm.\2",
    ),
    (_CODEC_LAYER + r"linear1\.weight$", r"decoder.decoder_transformer.layers.\1.mlp.fc1.weight"),
    (_CODEC_LAYER + r"linear2\.weight$", r"decoder.decoder_transformer.layers.\1.mlp.fc2.weight"),
    (
        _CODEC_LAYER + r"layer_scale_1\.scale$",
        r"decoder.decoder_transformer.layers.\1.self_attn_layer_scale.scale",
    ),
    (_CODEC_LAYER + r"layer_scale_2\.scale$", r"decoder.decoder_transformer.layers.\1.mlp_layer_scale.scale"),
    (
        r"^mimi\.decoder\.model\.(\d+)\.(?:conv|convtr)\.(weight|bias)$",
        r"decoder.decoder_seanet.layers.\1.conv.\2",
    ),
    (
        r"^mimi\.decoder\.model\.(\d+)\.block\.(\d+)\.conv\.(weight|bias)$",
        r"decoder.decoder_seanet.layers.\1.block.\2.conv.\3",
    ),
]
_CODEC_IN_PROJ = re.compile(_CODEC_LAYER + r"self_attn\.in_proj\.weight$")

_COND = "flow_lm.condition_provider.conditioners."
# Transformers name -> original name, for the language model (the inverse of Transformers' own
# `conversion_mapping["gradium_phonon_tts"]`; `load_reference` checks the round trip).
LM_RENAMES: list[tuple[str, str]] = [
    (r"^model\.embed_tokens\.weight$", _COND + "transcript_in_segment.embed.weight"),
    (r"^model\.audio_prompt_proj\.weight$", _COND + "speaker_wavs.output_proj.weight"),
    (r"^model\.num_speakers_embed\.weight$", _COND + "num_speakers.embed.weight"),
    (r"^model\.num_speakers_proj\.weight$", _COND + "num_speakers.output_proj.weight"),
    (r"^model\.duration_delta_proj\.weight$", _COND + "duration_delta.output_proj.weight"),
    (r"^model\.audio_latent_proj\.weight$", "flow_lm.input_linear.weight"),
    (r"^model\.bos_latent$", "flow_lm.bos_emb"),
    (r"^latent_mean$", "flow_lm.emb_mean"),
    (r"^latent_std$", "flow_lm.emb_std"),
    (r"^model\.norm\.(weight|bias)$", r"flow_lm.out_norm.\1"),
    (r"^eos_head\.(weight|bias)$", r"flow_lm.out_eos.\1"),
    (
        r"^model\.layers\.(\d+)\.self_attn\.o_proj\.weight$",
        r"flow_lm.transformer.layers.\1.self_attn.out_proj.weight",
    ),
    (r"^model\.layers\.(\d+)\.mlp\.fc1\.weight$", r"flow_lm.transformer.layers.\1.linear1.weight"),
    (r"^model\.layers\.(\d+)\.mlp\.fc2\.weight$", r"flow_lm.transformer.layers.\1.linear2.weight"),
    (r"^model\.layers\.(\d+)\.input_layernorm\.(weight|bias)$", r"flow_lm.transformer.layers.\1.norm1.\2"),
    (
        r"^model\.layers\.(\d+)\.post_attention_layernorm\.(weight|bias)$",
        r"flow_lm.transformer.layers.\1.norm2.\2",
    ),
    (r"^flow_head\.timestep_embeddings\.(\d+)\.freqs$", r"flow_lm.flow_net.time_embed.\1.freqs"),
    (
        r"^flow_head\.timestep_embeddings\.(\d+)\.fc1\.(weight|bias)$",
        r"flow_lm.flow_net.time_embed.\1.mlp.0.\2",
    ),
    (
        r"^flow_head\.timestep_embeddings\.(\d+)\.fc2\.(weight|bias)$",
        r"flow_lm.flow_net.time_embed.\1.mlp.2.\2",
    ),
    (r"^flow_head\.timestep_embeddings\.(\d+)\.norm\.weight$", r"flow_lm.flow_net.time_embed.\1.mlp.3.alpha"),
    (r"^flow_head\.cond_proj\.(weight|bias)$", r"flow_lm.flow_net.cond_embed.\1"),
    (r"^flow_head\.input_proj\.(weight|bias)$", r"flow_lm.flow_net.input_proj.\1"),
    (r"^flow_head\.layers\.(\d+)\.norm\.(weight|bias)$", r"flow_lm.flow_net.res_blocks.\1.in_ln.\2"),
    (r"^flow_head\.layers\.(\d+)\.fc1\.(weight|bias)$", r"flow_lm.flow_net.res_blocks.\1.mlp.0.\2"),
    (r"^flow_head\.layers\.(\d+)\.fc2\.(weight|bias)$", r"flow_lm.flow_net.res_blocks.\1.mlp.2.\2"),
    (
        r"^flow_head\.layers\.(\d+)\.adaln_proj\.(weight|bias)$",
        r"flow_lm.flow_net.res_blocks.\1.adaLN_modulation.1.\2",
    ),
    (r"^flow_head\.final_layer\.proj\.(weight|bias)$", r"flow_lm.flow_net.final_layer.linear.\1"),
    (
        r"^flow_head\.final_layer\.adaln_proj\.(weight|bias)$",
        r"flow_lm.flow_net.final_layer.adaLN_modulation.1.\1",
    ),
]
# Reference-only state that a released checkpoint does not hold.
_LM_NOT_SAVED = re.compile(r"^loss_weighting\.|^latent_stats_num_updates$")
# Kept in f32 in the file, as the reference keeps them (`_keep_in_fp32_modules_strict`).
_LM_F32 = re.compile(r"^flow_lm\.(emb_mean|emb_std|flow_net\.time_embed\.\d+\.freqs)$")


def _rename(name: str, table: list[tuple[str, str]]) -> str | None:
    for pattern, template in table:
        if re.match(pattern, name):
            return re.sub(pattern, template, name)
    return None


def interleaved_to_halves(weight: torch.Tensor, heads: int) -> torch.Tensor:
    """Rows of q or k from interleaved rotary pairs (2j, 2j+1) to the rotate-half layout (j, j + d/2)."""
    rows, cols = weight.shape
    return weight.view(heads, rows // heads // 2, 2, cols).transpose(1, 2).reshape(rows, cols)


def halves_to_interleaved(weight: torch.Tensor, heads: int) -> torch.Tensor:
    """The inverse of `interleaved_to_halves`."""
    rows, cols = weight.shape
    return weight.view(heads, 2, rows // heads // 2, cols).transpose(1, 2).reshape(rows, cols)


# ---------------------------------------------------------------------------------------------------
# Random weights
# ---------------------------------------------------------------------------------------------------
def _randomize_defaults(module: torch.nn.Module, generator: torch.Generator) -> None:
    """Replace the constant initialisations (ones, zeros, 0.01 layer scales) with random values.

    A reference left at LayerNorm = 1/0, BOS = 0, mean = 0, std = 1 would let an engine that ignores
    those tensors pass every parity test; random values make each one matter.
    """
    with torch.no_grad():
        for name, tensor in module.state_dict(keep_vars=True).items():
            if not tensor.is_floating_point() or name.endswith("freqs") or "inv_freq" in name:
                continue
            leaf = name.rsplit(".", 1)[-1]
            owner = name.rsplit(".", 1)[0] if "." in name else ""
            is_norm = "norm" in owner or "layernorm" in owner or owner.endswith("in_ln")
            if name in ("latent_std",):
                tensor.copy_(0.5 + torch.rand(tensor.shape, generator=generator))
            elif name in ("latent_mean", "model.bos_latent"):
                tensor.copy_(0.5 * torch.randn(tensor.shape, generator=generator))
            elif leaf == "scale":  # codec layer scales
                tensor.copy_(0.05 + 0.1 * torch.rand(tensor.shape, generator=generator))
            elif is_norm and leaf == "weight":
                tensor.copy_(1.0 + 0.1 * torch.randn(tensor.shape, generator=generator))
            elif is_norm and leaf == "bias":
                tensor.copy_(0.1 * torch.randn(tensor.shape, generator=generator))
            elif leaf == "bias":
                tensor.copy_(0.02 * torch.randn(tensor.shape, generator=generator))


def make_reference_models(dims: Dims = FULL, seed: int = 0):
    """The language model and codec decoder at `dims`, with random weights from `seed` (f32, eval mode)."""
    torch.manual_seed(seed)
    lm = GradiumPhononTTSForConditionalGeneration(lm_config(dims)).eval()
    codec = PocketTTSAudioTokenizerModel(codec_config(dims)).eval()
    generator = torch.Generator().manual_seed(seed + 1)
    _randomize_defaults(lm, generator)
    _randomize_defaults(codec, generator)
    with torch.no_grad():
        # An end-of-speech logit centred well below the -4 threshold, so that random takes end after a
        # data-dependent number of frames instead of at the first allowed one.
        lm.eos_head.bias.fill_(-5.0)
        lm.eos_head.weight.mul_(4.0)
    return lm, codec


def lm_to_original(lm: GradiumPhononTTSForConditionalGeneration) -> dict[str, torch.Tensor]:
    """The language model's state in Gradium's naming and dtypes (bf16, a few tensors f32)."""
    heads = lm.config.num_attention_heads
    state = lm.state_dict()
    out: dict[str, torch.Tensor] = {}
    for name, tensor in state.items():
        if _LM_NOT_SAVED.match(name) or re.search(r"self_attn\.[qkv]_proj\.weight$", name):
            continue
        original = _rename(name, LM_RENAMES)
        if original is None:
            raise KeyError(f"no original name for reference tensor {name}")
        out[original] = tensor
    for layer in range(lm.config.num_hidden_layers):
        prefix = f"model.layers.{layer}.self_attn."
        q = halves_to_interleaved(state[prefix + "q_proj.weight"], heads)
        k = halves_to_interleaved(state[prefix + "k_proj.weight"], heads)
        v = state[prefix + "v_proj.weight"]
        out[f"flow_lm.transformer.layers.{layer}.self_attn.in_proj.weight"] = torch.cat([q, k, v])
    return {
        name: tensor.detach().to(torch.float32 if _LM_F32.match(name) else torch.bfloat16).contiguous()
        for name, tensor in out.items()
    }


def codec_to_original(codec: PocketTTSAudioTokenizerModel) -> dict[str, torch.Tensor]:
    """The codec decoder's state in Pocket TTS's naming (`mimi.*`), f32."""
    state = codec.state_dict()
    heads = codec.config.num_attention_heads
    out: dict[str, torch.Tensor] = {}
    by_reference = {_codec_reference_name(name): name for name in _original_codec_names(codec)}
    for name, tensor in state.items():
        if re.search(r"self_attn\.[qkv]_proj\.weight$", name):
            continue
        out[by_reference[name]] = tensor
    for layer in range(codec.config.num_hidden_layers):
        prefix = f"decoder.decoder_transformer.layers.{layer}.self_attn."
        q = halves_to_interleaved(state[prefix + "q_proj.weight"], heads)
        k = halves_to_interleaved(state[prefix + "k_proj.weight"], heads)
        out[f"mimi.decoder_transformer.transformer.layers.{layer}.self_attn.in_proj.weight"] = torch.cat(
            [q, k, state[prefix + "v_proj.weight"]]
        )
    return {name: tensor.detach().to(torch.float32).contiguous() for name, tensor in out.items()}


def _original_codec_names(codec: PocketTTSAudioTokenizerModel) -> list[str]:
    """Every `mimi.*` name the codec decoder has in Pocket TTS, from the reference module's structure."""
    names = ["mimi.quantizer.output_proj.weight", "mimi.upsample.convtr.convtr.weight"]
    for layer in range(codec.config.num_hidden_layers):
        base = f"mimi.decoder_transformer.transformer.layers.{layer}."
        names += [base + "self_attn.out_proj.weight", base + "linear1.weight", base + "linear2.weight"]
        names += [base + f"norm{i}.{p}" for i in (1, 2) for p in ("weight", "bias")]
        names += [base + "layer_scale_1.scale", base + "layer_scale_2.scale"]
    for index, layer in enumerate(codec.decoder.decoder_seanet.layers):
        kind = type(layer).__name__
        if kind.endswith("ConvTranspose1d"):
            names += [f"mimi.decoder.model.{index}.convtr.{p}" for p in ("weight", "bias")]
        elif kind.endswith("Conv1d"):
            names += [f"mimi.decoder.model.{index}.conv.{p}" for p in ("weight", "bias")]
        elif kind.endswith("ResnetBlock"):
            for j, sub in enumerate(layer.block):
                if type(sub).__name__.endswith("Conv1d"):
                    names += [f"mimi.decoder.model.{index}.block.{j}.conv.{p}" for p in ("weight", "bias")]
    return names


def _codec_reference_name(original: str) -> str:
    reference = _rename(original, CODEC_RENAMES)
    if reference is None:
        raise KeyError(f"{original} is not a codec tensor this harness knows")
    return reference


def training_only_tensors(dims: Dims, generator: torch.Generator) -> dict[str, torch.Tensor]:
    """Tensors a released checkpoint carries from training, which every loader must ignore."""
    sizes = [2, 32, 32, 32, 1]  # the LSD loss weighting MLP
    out = {}
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        out[f"flow_lm.flow.w_s_t.{2 * i}.weight"] = torch.randn(n_out, n_in, generator=generator)
        out[f"flow_lm.flow.w_s_t.{2 * i}.bias"] = torch.randn(n_out, generator=generator)
    for conditioner in ("transcript_in_segment", "speaker_wavs"):
        out[_COND + conditioner + ".learnt_padding"] = torch.randn(1, 1, dims.hidden, generator=generator)
    return {name: t.to(torch.bfloat16) for name, t in out.items()}


# ---------------------------------------------------------------------------------------------------
# Writing and reading the folder
# ---------------------------------------------------------------------------------------------------
def write_checkpoint(out_dir: str | Path, tiny: bool = False, seed: int = 0) -> Path:
    """Write a synthetic checkpoint folder laid out as Gradium ships one. Returns the folder."""
    from .make_tokenizer import build_tokenizer_json

    dims = TINY if tiny else FULL
    out = Path(out_dir)
    (out / "voices").mkdir(parents=True, exist_ok=True)
    lm, codec = make_reference_models(dims, seed)
    generator = torch.Generator().manual_seed(seed + 2)

    tensors = lm_to_original(lm)
    tensors.update(codec_to_original(codec))
    tensors.update(training_only_tensors(dims, generator))
    save_file(tensors, out / "model.safetensors", metadata={"format": "pt"})

    config = lm.config.to_dict()
    config["audio_tokenizer_config"] = codec.config.to_dict()
    config.pop("transformers_version", None)
    config["codec_comment"] = "synthetic phonon_web checkpoint: random weights, not a model of speech"
    _write_json(out / "config.json", config)
    _write_json(out / "generation_config.json", GENERATION_CONFIG)
    _write_json(out / "processor_config.json", PROCESSOR_CONFIG)

    for name in VOICE_NAMES:
        latents = torch.randn(1, VOICE_ROWS, dims.voice_width, generator=generator)
        save_file({"audio_prompt": latents.contiguous()}, out / "voices" / f"{name}.safetensors")
    (out / "tokenizer.5.0.0.json").write_text(build_tokenizer_json(), encoding="utf-8")
    return out


def _write_json(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


@dataclass
class Reference:
    lm: GradiumPhononTTSForConditionalGeneration
    codec: PocketTTSAudioTokenizerModel
    missing_keys: list[str]
    unexpected_keys: list[str]
    voices: dict[str, torch.Tensor]


def load_reference(checkpoint_dir: str | Path) -> Reference:
    """Load a checkpoint folder into the reference classes, in f32, and report what did not fit."""
    folder = Path(checkpoint_dir)
    lm, info = GradiumPhononTTSForConditionalGeneration.from_pretrained(
        folder, dtype=torch.float32, output_loading_info=True
    )
    lm.eval()
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    codec_cfg = PocketTTSAudioTokenizerConfig(**{**config["audio_tokenizer_config"], "encoder_config": None})
    codec = PocketTTSAudioTokenizerModel(codec_cfg).eval()

    original = load_file(folder / "model.safetensors")
    heads = codec_cfg.num_attention_heads
    codec_state: dict[str, torch.Tensor] = {}
    unexpected = list(info["unexpected_keys"])
    for name, tensor in original.items():
        if not name.startswith("mimi."):
            continue
        match = _CODEC_IN_PROJ.match(name)
        if match:
            q, k, v = tensor.float().chunk(3)
            prefix = f"decoder.decoder_transformer.layers.{match.group(1)}.self_attn."
            codec_state[prefix + "q_proj.weight"] = interleaved_to_halves(q, heads)
            codec_state[prefix + "k_proj.weight"] = interleaved_to_halves(k, heads)
            codec_state[prefix + "v_proj.weight"] = v
            continue
        reference = _rename(name, CODEC_RENAMES)
        if reference is None:
            unexpected.append(name)
        else:
            codec_state[reference] = tensor.float()
    result = codec.load_state_dict(codec_state, strict=False)
    voices = {
        path.stem: load_file(path)["audio_prompt"].reshape(-1, lm.config.audio_prompt_dim).float()
        for path in sorted((folder / "voices").glob("*.safetensors"))
    }
    return Reference(
        lm=lm,
        codec=codec,
        missing_keys=list(info["missing_keys"]) + list(result.missing_keys),
        unexpected_keys=unexpected + list(result.unexpected_keys),
        voices=voices,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", help="folder to write the checkpoint into")
    parser.add_argument("--tiny", action="store_true", help="a small model for fast tests")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    out = write_checkpoint(args.out_dir, tiny=args.tiny, seed=args.seed)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"wrote {'tiny' if args.tiny else 'full-size'} synthetic checkpoint to {out} ({size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
