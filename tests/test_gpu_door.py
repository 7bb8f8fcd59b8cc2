"""The native door: pipelines keyed by kernel, layouts from @binding, programs replayed, counts kept."""

from pathlib import Path

import numpy as np
import pytest

from phonon_web.gpu.door import Program
from phonon_web.gpu.shaders import kernel, parse_bindings
from tests.gpu_helpers import download, run, uniform, upload

ADD = str(Path(__file__).parent / "wgsl" / "add_constant.wgsl")


def test_bindings_are_read_from_declarations():
    source = """
    @group(0) @binding(0) var<uniform> p: Params;
    // @group(0) @binding(7) var<storage, read> commented_out: array<u32>;
    @group(0) @binding(2) var<storage, read_write> out: array<f32>;
    @group(0) @binding(1) var<storage> weights: array<u32>;
    """
    kinds = [(b.index, b.kind, b.name) for b in parse_bindings(source)]
    assert kinds == [(0, "uniform", "p"), (1, "read-only-storage", "weights"), (2, "storage", "out")]
    with pytest.raises(ValueError, match="group 1"):
        parse_bindings("@group(1) @binding(0) var<uniform> p: P;")


def test_constants_are_prepended_as_wgsl():
    k = kernel(ADD, ROWS=4, SCALE=0.5, FLAG=True, OFFSET=-2)
    source = k.source()
    assert "const FLAG: bool = true;" in source
    assert "const OFFSET: i32 = -2i;" in source
    assert "const ROWS: u32 = 4u;" in source
    assert "const SCALE: f32 = 0.5f;" in source
    assert k.key == kernel(ADD, SCALE=0.5, OFFSET=-2, ROWS=4, FLAG=True).key


def test_dispatch_repeat_and_readback(door):
    data = np.arange(100, dtype=np.float32)
    buf = upload(door, data)
    params = uniform(door, 100, 1.5)
    pipeline = door.pipeline(kernel(ADD))
    group = door.bind_group(pipeline, [params, buf, upload(door, np.zeros(4, np.uint32))])
    program = Program("add")
    program.dispatch(pipeline, group, 2)
    door.submit([(program, 3)])
    np.testing.assert_array_equal(download(door, buf, count=100), data + 4.5)


def test_a_program_recorded_ahead_runs_when_it_is_submitted(door):
    """record_ahead encodes now; what it holds runs at submit_recorded, after what was submitted
    before it (the copy sees the additions), and a read waits for it. It goes once."""
    from phonon_web.gpu.door import READBACK, run_sync

    data = np.arange(64, dtype=np.float32)
    a, b = upload(door, data), upload(door, np.zeros(64, np.float32))
    staging = door.buffer(256, READBACK, "staging")
    copies = Program("copy a to b, b to staging")
    copies.copy(a, 0, b, 0, 256)
    copies.copy(b, 0, staging, 0, 256)
    recorded = door.record_ahead([(copies, 1)])
    pipeline = door.pipeline(kernel(ADD))
    add = Program("add")
    add.dispatch(
        pipeline,
        door.bind_group(pipeline, [uniform(door, 64, 1.5), a, upload(door, np.zeros(4, np.uint32))]),
        1,
    )
    door.submit([(add, 2)])
    door.submit_recorded(recorded)
    got = np.frombuffer(run_sync(door.read(staging, 0, 256)), np.float32)
    np.testing.assert_array_equal(got, data + 3.0)
    with pytest.raises(RuntimeError, match="twice"):
        door.submit_recorded(recorded)


def test_pipelines_are_cached_and_objects_counted(door):
    before = door.created.copy()
    p1 = door.pipeline(kernel(ADD, UNUSED_CONSTANT=1))
    p2 = door.pipeline(kernel(ADD, UNUSED_CONSTANT=1))
    assert p1 is p2
    assert door.created["pipeline"] == before["pipeline"] + 1
    buffers = [
        uniform(door, 1, 0.0),
        upload(door, np.zeros(4, np.float32)),
        upload(door, np.zeros(4, np.uint32)),
    ]
    door.bind_group(p1, buffers)
    assert door.created["bind_group"] == before["bind_group"] + 1
    assert door.created["buffer"] == before["buffer"] + 3


def test_bind_group_with_wrong_buffer_count_names_the_bindings(door):
    pipeline = door.pipeline(kernel(ADD))
    with pytest.raises(ValueError, match="params, data, unused"):
        door.bind_group(pipeline, [uniform(door, 1, 0.0)])


def test_copies_split_compute_passes(door):
    a = upload(door, np.ones(8, np.float32))
    b = upload(door, np.zeros(8, np.float32))
    params = uniform(door, 8, 2.0)
    pipeline = door.pipeline(kernel(ADD))
    spare = upload(door, np.zeros(4, np.uint32))
    program = Program("add-copy-add")
    program.dispatch(pipeline, door.bind_group(pipeline, [params, a, spare]), 1)
    program.copy(a, 0, b, 0, 32)
    program.dispatch(pipeline, door.bind_group(pipeline, [params, b, spare]), 1)
    door.submit([(program, 1)])
    np.testing.assert_array_equal(download(door, b, count=8), np.full(8, 5.0, np.float32))


def test_run_helper(door):
    buf = upload(door, np.zeros(64, np.float32))
    run(door, kernel(ADD), [uniform(door, 64, 1.0), buf, upload(door, np.zeros(4, np.uint32))], 1)
    assert download(door, buf, count=64).tolist() == [1.0] * 64


def test_door_reports_subgroups_on_request(door, door_without_subgroups):
    assert "subgroups" not in door_without_subgroups.features
    # lavapipe and every GPU we target have subgroups; the flag must follow the adapter
    assert ("subgroups" in door.features) == ("subgroup" in door.adapter.features)


def test_a_shader_error_is_raised_with_the_compilers_words(door, tmp_path):
    # the native door compiles through wgpuDeviceCreateShaderModuleTrusted: its errors must still raise
    bad = tmp_path / "bad.wgsl"
    bad.write_text(
        "@group(0) @binding(0) var<storage, read_write> data: array<f32>;\n"
        "@compute @workgroup_size(1) fn main() { let x: u32 = 1.5; data[0] = f32(x); }\n"
    )
    with pytest.raises(Exception, match="expected to be `u32`"):
        door.pipeline(kernel(str(bad)))


def test_fixed_count_loops_run_every_turn_without_loop_bounding(door, tmp_path):
    # naga's forced loop bounding is off in the native door (phonon_web/gpu/native.py); loops that the
    # driver may now unroll must still run each turn, nested and with an early break
    loops = tmp_path / "loops.wgsl"
    loops.write_text(
        "@group(0) @binding(0) var<storage, read_write> data: array<u32>;\n"
        "@compute @workgroup_size(64) fn main(@builtin(local_invocation_index) i: u32) {\n"
        "    var acc = 0u;\n"
        "    for (var a = 0u; a < 4u; a++) { for (var b = 0u; b <= i; b++) { acc += a + b; } }\n"
        "    loop { if (acc % 7u == 0u) { break; } acc += 1u; }\n"
        "    data[i] = acc;\n"
        "}\n"
    )
    buf = upload(door, np.zeros(64, np.uint32))
    run(door, kernel(str(loops)), [buf], 1)
    expected = []
    for i in range(64):
        acc = sum(a + b for a in range(4) for b in range(i + 1))
        while acc % 7:
            acc += 1
        expected.append(acc)
    assert download(door, buf, count=64, dtype=np.uint32).tolist() == expected
