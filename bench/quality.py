"""Speech quality of the benchmark clips: Whisper's word error rate and speaker similarity.

    python bench/quality.py CLIPS_DIR [--whisper DIR] [--speaker DIR] [--against DIR] [--out FILE.json]

CLIPS_DIR holds WAV files and a clips.json naming each one's text (bench/browser.py --clips writes
them from the last warm run). With real weights and recognisers (--whisper: a Whisper checkpoint folder,
e.g. whisper-large-v3-turbo; --speaker: a WavLM x-vector folder, e.g. wavlm-base-plus-sv):

* word error rate: Whisper's transcript of each clip against its text, both lower-cased with
  punctuation removed (jiwer), over all clips together and per clip;
* speaker similarity: the cosine of the speaker embeddings of every pair of clips (one voice, so this
  says how steady the voice is), and with --against DIR (the same texts from another runtime, e.g. the
  reference) the cosine between the two clips of each text.

Without --whisper or --speaker the models are RANDOMLY INITIALISED from small Transformers configs (no
weights can be downloaded on the machines this project is built on), and the synthetic checkpoint
speaks noise anyway: the scores then mean nothing and are recorded with `"meaningful": false`. What
this run checks is the pipeline: reading clips, resampling to 16 kHz, transcribing, scoring, embedding.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import wave
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RECOGNISER_RATE = 16000
MEANINGLESS = (
    "THESE SCORES MEAN NOTHING: {why}. They only show that the scoring runs end to end; "
    "pass --whisper and --speaker with real model folders, on clips of the real model, for real scores."
)


def read_clips(folder: Path) -> list[dict]:
    listing = json.loads((folder / "clips.json").read_text())
    clips = []
    for clip in listing["clips"]:
        with wave.open(str(folder / clip["file"]), "rb") as audio:
            rate = audio.getframerate()
            pcm = np.frombuffer(audio.readframes(audio.getnframes()), dtype=np.int16)
        clips.append({**clip, "audio": pcm.astype(np.float32) / 32768, "rate": rate})
    return clips


def to_16k(audio: np.ndarray, rate: int) -> np.ndarray:
    from math import gcd

    from scipy.signal import resample_poly

    if rate == RECOGNISER_RATE:
        return audio
    common = gcd(rate, RECOGNISER_RATE)
    return resample_poly(audio, RECOGNISER_RATE // common, rate // common).astype(np.float32)


def normalise_words(text: str) -> str:
    """Lower case, no punctuation, single spaces: what both sides of the word error rate are compared as."""
    return " ".join(re.sub(r"[^a-z0-9' ]+", " ", text.lower()).split())


class Recogniser:
    """Whisper from a folder, or a random small Whisper whose 'words' are its token ids."""

    def __init__(self, folder: Path | None):
        import torch
        from transformers import WhisperConfig, WhisperFeatureExtractor, WhisperForConditionalGeneration

        self.random = folder is None
        if folder is None:
            torch.manual_seed(0)
            config = WhisperConfig(
                vocab_size=51865, d_model=64, encoder_layers=1, decoder_layers=1,
                encoder_attention_heads=2, decoder_attention_heads=2,
                encoder_ffn_dim=128, decoder_ffn_dim=128,
            )  # fmt: skip
            self.model = WhisperForConditionalGeneration(config).eval()
            self.features = WhisperFeatureExtractor(feature_size=config.num_mel_bins)
            self.tokenizer = None
            self.name = "random Whisper (d_model 64, 1+1 layers), no trained weights"
        else:
            from transformers import WhisperProcessor

            processor = WhisperProcessor.from_pretrained(folder)
            self.model = WhisperForConditionalGeneration.from_pretrained(folder).eval()
            self.features, self.tokenizer = processor.feature_extractor, processor.tokenizer
            self.name = f"Whisper from {folder}"

    def transcribe(self, audio16k: np.ndarray) -> str:
        import torch

        inputs = self.features(audio16k, sampling_rate=RECOGNISER_RATE, return_tensors="pt")
        with torch.no_grad():
            if self.random:
                ids = self.model.generate(inputs.input_features, max_new_tokens=12, max_length=None)
                return " ".join(f"t{int(i)}" for i in ids[0, 1:])  # no vocabulary: ids stand for words
            ids = self.model.generate(inputs.input_features, language="en", task="transcribe")
        return self.tokenizer.batch_decode(ids, skip_special_tokens=True)[0]


class SpeakerEmbedder:
    """WavLM x-vectors from a folder, or a random small WavLM."""

    def __init__(self, folder: Path | None):
        import torch
        from transformers import Wav2Vec2FeatureExtractor, WavLMConfig, WavLMForXVector

        self.random = folder is None
        if folder is None:
            torch.manual_seed(0)
            config = WavLMConfig(
                hidden_size=64, num_hidden_layers=1, num_attention_heads=2, intermediate_size=128,
                conv_dim=(32,) * 7, tdnn_dim=(32, 32, 32, 32, 64), xvector_output_dim=32,
                num_buckets=32, max_bucket_distance=100,
            )  # fmt: skip
            self.model = WavLMForXVector(config).eval()
            self.features = Wav2Vec2FeatureExtractor(sampling_rate=RECOGNISER_RATE)
            self.name = "random WavLM x-vector (hidden 64, 1 layer), no trained weights"
        else:
            self.model = WavLMForXVector.from_pretrained(folder).eval()
            self.features = Wav2Vec2FeatureExtractor.from_pretrained(folder)
            self.name = f"WavLM x-vector from {folder}"

    def embed(self, audio16k: np.ndarray) -> np.ndarray:
        import torch

        inputs = self.features(audio16k, sampling_rate=RECOGNISER_RATE, return_tensors="pt")
        with torch.no_grad():
            vector = self.model(**inputs).embeddings[0].numpy()
        return vector / (np.linalg.norm(vector) or 1.0)


def mean_pairwise_cosine(vectors: list[np.ndarray]) -> float | None:
    pairs = [float(a @ b) for i, a in enumerate(vectors) for b in vectors[i + 1 :]]
    return sum(pairs) / len(pairs) if pairs else None


def score(clips_dir: Path, whisper: Path | None = None, speaker: Path | None = None,
          against: Path | None = None) -> dict:  # fmt: skip
    import jiwer

    clips = read_clips(clips_dir)
    recogniser, embedder = Recogniser(whisper), SpeakerEmbedder(speaker)
    rows, vectors = [], []
    for clip in clips:
        audio = to_16k(clip["audio"], clip["rate"])
        heard = recogniser.transcribe(audio)
        vectors.append(embedder.embed(audio))
        rows.append(
            {
                "file": clip["file"],
                "phrase": clip["phrase"],
                "seconds": len(clip["audio"]) / clip["rate"],
                "heard": heard,
                "wer": jiwer.wer(normalise_words(clip["text"]), normalise_words(heard) or "-"),
            }
        )
    truth = [normalise_words(c["text"]) for c in clips]
    heard = [normalise_words(r["heard"]) or "-" for r in rows]
    result = {
        "clips": str(clips_dir),
        "recogniser": recogniser.name,
        "speaker_model": embedder.name,
        "wer": jiwer.wer(truth, heard),
        "speaker_cosine_within": mean_pairwise_cosine(vectors),
        "per_clip": rows,
    }
    if against is not None:
        others = {c["phrase"]: embedder.embed(to_16k(c["audio"], c["rate"])) for c in read_clips(against)}
        pairs = zip(clips, vectors, strict=True)
        same_text = [float(v @ others[c["phrase"]]) for c, v in pairs if c["phrase"] in others]
        result["against"] = str(against)
        result["speaker_cosine_against"] = sum(same_text) / len(same_text) if same_text else None
    why = []
    if recogniser.random or embedder.random:
        why.append("the recogniser and/or speaker model have random weights")
    if json.loads((clips_dir / "clips.json").read_text()).get("model", "synthetic").startswith("synthetic"):
        why.append("the clips come from the synthetic checkpoint, whose random weights speak noise")
    result["meaningful"] = not why
    if why:
        result["warning"] = MEANINGLESS.format(why="; ".join(why))
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("clips", type=Path, help="a folder with clips.json and its WAV files")
    parser.add_argument("--whisper", type=Path, help="a Whisper checkpoint folder (default: random weights)")
    parser.add_argument("--speaker", type=Path, help="a WavLM x-vector folder (default: random weights)")
    parser.add_argument("--against", type=Path, help="clips of the same texts from another runtime")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    result = score(args.clips, args.whisper, args.speaker, args.against)
    print(json.dumps({k: v for k, v in result.items() if k != "per_clip"}, indent=1))
    if "warning" in result:
        print(result["warning"], file=sys.stderr)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
