# Sourced by bench/h200.sh and bench/ab.sh on the lent GPU machine (a bare image with the NVIDIA driver
# and Python 3.12 + torch): unpacks libvulkan1 and friends from .gl/*.deb, installs the wheels carried
# in .whl/ (wgpu, cffi, pycparser, rendercanvas, transformers) into /tmp/site, and points the Vulkan
# loader at NVIDIA's driver. Where .gl/ or .whl/ is absent (here) it leaves the machine as it is.
if [ -d .gl ]; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
if [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
        .whl/*.whl
    export PYTHONPATH=/tmp/site:$PWD
fi
export PYTHONUNBUFFERED=1
