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


class DeviceLostError(GpuError):
    """The GPU device was lost (driver reset, GPU removed, device destroyed) during or before a request.

    The request fails; the next request rebuilds the engine on a new device (`Phonon.speak` does this
    itself; the browser worker does it with a new BrowserDoor), weights uploaded again."""


class ClosedError(PhononError):
    """speak() was called after close(): load the model again with phonon_web.load()."""


class CancelledError(PhononError):
    """The request was cancelled by its caller before it finished."""
