"""phonon_web: Gradium's Phonon 31M text-to-speech on WebGPU, in the browser or natively."""

from .errors import (
    CancelledError,
    GpuError,
    OptionError,
    PhononError,
    TextError,
    TokenizerError,
    UnsupportedTokenizerComponent,
    VoiceError,
    WeightsError,
)

__version__ = "0.1.0"

__all__ = [
    "CancelledError",
    "GpuError",
    "OptionError",
    "PhononError",
    "TextError",
    "TokenizerError",
    "UnsupportedTokenizerComponent",
    "VoiceError",
    "WeightsError",
    "__version__",
]
