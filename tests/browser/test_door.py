"""BrowserDoor (phonon_web/gpu/browser.py) in a worker's Pyodide, on SwiftShader: the door's own checks.

Each check runs Python in the worker through its test hook (`_python`, only in a worker started with
`?test-hooks`), with no model loaded: the same WGSL test kernel as tests/test_gpu_door.py, its
expected values computed without numpy.
"""

import json
from pathlib import Path

import pytest

from .conftest import open_page

ADD_WGSL = (Path(__file__).parents[1] / "wgsl" / "add_constant.wgsl").read_text()

SETUP = f"""
import json
from array import array
from phonon_web.gpu.browser import BrowserDoor
from phonon_web.gpu.door import Program, READBACK, STORAGE, UNIFORM
from phonon_web.gpu.params import pack_params
from phonon_web.gpu.shaders import kernel

with open("/tmp/add_constant.wgsl", "w") as f:
    f.write({ADD_WGSL!r})
ADD = "/tmp/add_constant.wgsl"
door = await BrowserDoor.open()

def upload(values, code="f"):
    data = array(code, values).tobytes()
    buffer = door.buffer(len(data), STORAGE, "test")
    door.write(buffer, 0, data)
    return buffer

def uniform(*values):
    data = pack_params(*values)
    buffer = door.buffer(len(data), UNIFORM, "params")
    door.write(buffer, 0, data)
    return buffer

async def download(buffer, count):
    staging = door.buffer(4 * count, READBACK, "readback")
    program = Program("download")
    program.copy(buffer, 0, staging, 0, 4 * count)
    door.submit([(program, 1)])
    out = array("f")
    out.frombytes(await door.read(staging, 0, 4 * count))
    return list(out)
"""


@pytest.fixture(scope="module")
def python(context, blank):
    """Run Python source in a fresh worker's Pyodide; returns the JSON its last expression gives."""
    page = open_page(context, blank)

    def run(code: str):
        result = page.evaluate(
            """async (code) => {
                const worker = window.__doorWorker ??= new Worker("worker.js?test-hooks", { type: "module" });
                return await new Promise((resolve) => {
                    worker.onmessage = (e) => {
                        if (e.data.type === "result" || e.data.type === "error") resolve(e.data);
                    };
                    const siteURL = new URL(".", location.href).href;
                    worker.postMessage({ type: "_python", id: 1, siteURL, code });
                });
            }""",
            SETUP + code,
        )
        assert result["type"] == "result", result
        return json.loads(result["value"])

    yield run
    page.close()


def test_dispatch_repeat_copy_and_readback(python):
    out = python(
        """
buf = upload(range(100))
params = uniform(100, 1.5)
pipeline = door.pipeline(kernel(ADD))
group = door.bind_group(pipeline, [params, buf, upload([0] * 4, "I")])
program = Program("add")
program.dispatch(pipeline, group, 2)
door.submit([(program, 3)])
values = await download(buf, 100)
await door.finish()
json.dumps({"values": values, "features": sorted(door.features), "limits": door.limits,
            "created": dict(door.created), "stats": door.stats})
"""
    )
    assert out["values"] == [i + 4.5 for i in range(100)]
    assert "subgroups" in out["features"]  # SwiftShader offers them; the door asks for them
    assert out["limits"]["maxStorageBufferBindingSize"] >= 128 << 20
    assert out["created"]["pipeline"] == 1 and out["created"]["bind_group"] == 1
    assert out["stats"]["dispatches"] == 3  # one program repeated 3 times, encoded by one JS call


def test_copies_split_passes_and_pipelines_are_cached(python):
    out = python(
        """
a = upload([1.0] * 8)
b = upload([0.0] * 8)
params = uniform(8, 2.0)
pipeline = door.pipeline(kernel(ADD))
same = door.pipeline(kernel(ADD))
spare = upload([0] * 4, "I")
program = Program("add-copy-add")
program.dispatch(pipeline, door.bind_group(pipeline, [params, a, spare]), 1)
program.copy(a, 0, b, 0, 32)
program.dispatch(pipeline, door.bind_group(pipeline, [params, b, spare]), 1)
door.compile(program)
door.submit([(program, 1)])
json.dumps({"b": await download(b, 8), "cached": pipeline is same, "pipelines": door.created["pipeline"]})
"""
    )
    assert out == {"b": [5.0] * 8, "cached": True, "pipelines": 1}


def test_a_program_recorded_ahead_runs_when_it_is_submitted(python):
    out = python(
        """
a = upload(range(64))
b = upload([0.0] * 64)
staging = door.buffer(256, READBACK, "staging")
copies = Program("copy a to b, b to staging")
copies.copy(a, 0, b, 0, 256)
copies.copy(b, 0, staging, 0, 256)
recorded = door.record_ahead([(copies, 1)])
pipeline = door.pipeline(kernel(ADD))
add = Program("add")
add.dispatch(pipeline, door.bind_group(pipeline, [uniform(64, 1.5), a, upload([0] * 4, "I")]), 1)
door.submit([(add, 2)])
door.submit_recorded(recorded)
got = array("f")
got.frombytes(await door.read(staging, 0, 256))
try:
    door.submit_recorded(recorded)
    twice = "accepted"
except Exception as error:
    twice = str(error)
json.dumps({"got": list(got), "twice": twice})
"""
    )
    assert out["got"] == [i + 3.0 for i in range(64)]  # the copies ran after the additions
    assert "submitted twice" in out["twice"]


def test_errors_are_typed(python):
    out = python(
        """
from phonon_web.errors import GpuError
pipeline = door.pipeline(kernel(ADD))
try:
    door.bind_group(pipeline, [uniform(1, 0.0)])
    wrong_count = None
except ValueError as e:
    wrong_count = str(e)
# a mappable buffer bound as storage: WebGPU's validation refuses it, finish() raises it
await door.finish()
tiny = door.buffer(16, READBACK, "not storage")
door.bind_group(pipeline, [uniform(1, 0.0), tiny, upload([0], "I")])
try:
    await door.finish()
    validation = None
except GpuError as e:
    validation = str(e)
door.close()
try:
    door.write(tiny, 0, bytes(4))
    lost = None
except GpuError as e:
    lost = f"{type(e).__name__}: {e}"
json.dumps({"wrong_count": wrong_count, "validation": validation, "lost": lost})
"""
    )
    assert "params, data, unused" in out["wrong_count"]
    assert out["validation"] is not None
    assert out["lost"].startswith("DeviceLostError: the GPU device was lost") and "new device" in out["lost"]
