import os

import pytest
from hypothesis import settings

# Kernel tests run on Mesa's lavapipe when there is no GPU (CI installs mesa-vulkan-drivers).
os.environ.setdefault("PHONON_ADAPTER", "software")

# Property tests explore new examples on every local run; CI (`HYPOTHESIS_PROFILE=ci`, set by .ci/run)
# replays a fixed sequence, so that a change lands or fails on its own merits, not on a lucky draw.
# A failure found locally becomes an explicit test case.
settings.register_profile("ci", derandomize=True, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(scope="session")
def door():
    from phonon_web.gpu.native import NativeDoor

    return NativeDoor()


@pytest.fixture(scope="session")
def door_without_subgroups():
    from phonon_web.gpu.native import NativeDoor

    return NativeDoor(want_subgroups=False)


@pytest.fixture(scope="session")
def tiny_weights(tmp_path_factory):
    """The tiny synthetic model, converted: a folder phonon_web.load() reads."""
    import build_weights
    from tests.reference import checkpoint as ck

    root = tmp_path_factory.mktemp("tiny")
    ck.write_checkpoint(root / "ckpt", tiny=True, seed=0)
    build_weights.convert(root / "ckpt", root / "web")
    return root / "web"
