"""Every error a caller can cause has its own type, and its message says what to do about it.

All of them derive from `PhononError`, so `except PhononError` catches anything the library raises on
purpose; anything else escaping is a bug.
"""


class PhononError(Exception):
    """Base class of every error phonon_web raises on purpose."""


class TokenizerError(PhononError):
    """A tokenizer file is malformed or uses a component this pure-Python tokenizer does not implement."""


class UnsupportedTokenizerComponent(TokenizerError):
    """The tokenizer file names a normalizer, pre-tokenizer, model or decoder we do not implement.

    We refuse rather than guess: a silently different tokenisation makes the model say something else.
    """


class TextError(PhononError):
    """The text cannot be spoken as given (empty, not a string, ...)."""


class WeightsError(PhononError):
    """A checkpoint or converted weights file is missing, truncated, corrupt or of another model."""


class OptionError(PhononError):
    """An option of speak() is out of range or of the wrong type."""


class VoiceError(OptionError):
    """The voice asked for is not among the loaded voices."""


class GpuError(PhononError):
    """No usable WebGPU adapter, or the GPU device was lost during work."""


class CancelledError(PhononError):
    """The request was cancelled by its caller before it finished."""
