import os

import pytest

# Kernel tests run on Mesa's lavapipe when there is no GPU (CI installs mesa-vulkan-drivers).
os.environ.setdefault("PHONON_ADAPTER", "software")


@pytest.fixture(scope="session")
def door():
    from phonon_web.gpu.native import NativeDoor

    return NativeDoor()


@pytest.fixture(scope="session")
def door_without_subgroups():
    from phonon_web.gpu.native import NativeDoor

    return NativeDoor(want_subgroups=False)
