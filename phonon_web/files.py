"""The files of one converted model (what `build_weights.py` writes), read and checked.

Natively they come from a folder; in the browser from Cache Storage (the browser door hands the same
bytes to `ModelFiles`). Every file is checked against the SHA-256 its manifest gives before use, so a
truncated or corrupted copy is refused by name instead of producing noise.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from .errors import VoiceError, WeightsError
from .manifest import Manifest, load_manifest


@dataclass
class ModelFiles:
    manifest: Manifest
    weights: bytes | bytearray | memoryview
    tokenizer_json: str
    voices: dict[str, bytes]  # voice name -> raw little-endian f32 rows x width

    @classmethod
    def from_folder(cls, folder: str | Path, voices: list[str] | None = None) -> ModelFiles:
        """Read a folder made by build_weights.py; `voices` limits which voices are read (default all)."""
        root = Path(folder)
        manifest_path = root / "manifest.json"
        if not manifest_path.is_file():
            raise WeightsError(
                f"{root} has no manifest.json: give the folder build_weights.py wrote "
                "(python build_weights.py CHECKPOINT_DIR -o OUT_DIR)"
            )
        manifest = load_manifest(manifest_path.read_bytes())
        weights = _checked(root, manifest.weights.file, manifest.weights.sha256)
        tokenizer = _checked(root, manifest.tokenizer.file, manifest.tokenizer.sha256)
        chosen = select_voices(manifest, voices)
        voice_bytes = {v.name: _checked(root, v.file, v.sha256) for v in manifest.voices if v.name in chosen}
        return cls(manifest, weights, tokenizer.decode("utf-8"), voice_bytes)


def select_voices(manifest: Manifest, voices: list[str] | None) -> list[str]:
    if voices is None:
        return list(manifest.voice_names)
    if isinstance(voices, str) or not all(isinstance(v, str) for v in voices):
        raise VoiceError("voices must be a list of voice names, e.g. ['Delia']")
    unknown = [v for v in voices if v not in manifest.voice_names]
    if unknown:
        raise VoiceError(f"unknown voice {unknown[0]!r}; the voices are: {', '.join(manifest.voice_names)}")
    if not voices:
        raise VoiceError("at least one voice must be loaded")
    return list(voices)


def check_sha256(name: str, data: bytes | bytearray | memoryview, expected: str) -> None:
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise WeightsError(
            f"{name} is corrupt or from another build (SHA-256 {actual[:12]}…, the manifest says "
            f"{expected[:12]}…): download or rebuild it"
        )


def _checked(root: Path, file: str, sha256: str) -> bytes:
    path = root / file
    if not path.is_file():
        raise WeightsError(f"{path} is missing: the folder is incomplete; run build_weights.py again")
    data = path.read_bytes()
    check_sha256(file, data, sha256)
    return data
