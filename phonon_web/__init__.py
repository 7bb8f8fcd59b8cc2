"""phonon_web: Gradium's Phonon 31M text-to-speech on WebGPU, in the browser or natively."""

from .errors import (
    CancelledError,
    ClosedError,
    DeviceLostError,
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


def load(*args, **kwargs):
    """Load a model folder made by build_weights.py; see `phonon_web.api.load`."""
    from .api import load as _load  # the engine imports stay out of `import phonon_web`

    return _load(*args, **kwargs)


__all__ = [
    "CancelledError",
    "ClosedError",
    "DeviceLostError",
    "GpuError",
    "OptionError",
    "PhononError",
    "TextError",
    "TokenizerError",
    "UnsupportedTokenizerComponent",
    "VoiceError",
    "WeightsError",
    "__version__",
    "load",
]
