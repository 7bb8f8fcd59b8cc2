"""The native door: WebGPU from CPython through wgpu-py (wgpu-native on Vulkan, Metal or D3D12).

Used for the fast kernel and parity tests (on Mesa's lavapipe here), the command line and GPU
measurements. Replaying a program calls wgpu-native's C functions directly through cffi with handles
extracted once at compile time: the Python wrappers cost several microseconds a call, and a step is
about fifty dispatches of three calls each.
"""

from __future__ import annotations

import os

from .door import READBACK, STORAGE, UNIFORM, Copy, Door, Program
from .shaders import Kernel

_LAVAPIPE_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"

# The limits the engine relies on; everything else stays at WebGPU's portable defaults on purpose.
_LIMITS_FROM_ADAPTER = ("max-storage-buffer-binding-size", "max-buffer-size")

RUNTIME_CHECKS_BOUNDS = 0x1  # WGPUShaderRuntimeChecks_BoundsChecks: clamp indices, bound no loops


class NativeDoor(Door):
    name = "wgpu-py"

    def __init__(self, adapter=None, *, want_subgroups: bool = True, extra_features: tuple[str, ...] = ()):
        super().__init__()
        import wgpu  # imported here so that the browser never needs it
        from wgpu.backends.wgpu_native._ffi import ffi, lib

        self._wgpu, self._ffi, self._lib = wgpu, ffi, lib
        if adapter is None:
            adapter = request_adapter()
        self.adapter = adapter
        features = []
        if want_subgroups and "subgroup" in adapter.features | {
            f.replace("subgroups", "subgroup") for f in adapter.features
        }:
            features.append("subgroup")
        if "timestamp-query" in adapter.features:
            features.append("timestamp-query")
        # e.g. "timestamp-query-inside-passes" for bench/gpu_profile.py; never needed by the engine
        features += [f for f in extra_features if f in adapter.features]
        limits = {name: adapter.limits[name] for name in _LIMITS_FROM_ADAPTER}
        self.device = adapter.request_device_sync(required_features=features, required_limits=limits)
        self.queue = self.device.queue
        self.features = frozenset("subgroups" if f == "subgroup" else f for f in features)
        self.limits = dict(self.device.limits)
        info = adapter.info
        self.description = (
            f"{info.get('device', '?')} ({info.get('backend_type', '?')}, {info.get('adapter_type', '?')})"
        )
        self._layouts: dict[tuple, object] = {}
        # id of a buffer -> index of the submission that last copied into it
        self._written_by: dict[int, int] = {}
        # bench/take_gpu_timeline.py's hook (None otherwise): an object whose pass_writes() gives each
        # compute pass its timestamp writes and whose resolve(encoder) ends each command buffer.
        self.pass_clock = None
        # One map callback for every read: it records the status the next `read` waits for.
        self._map_status = [0]

        @ffi.callback("void(WGPUMapAsyncStatus, WGPUStringView, void *, void *)")
        def mapped(status, message, userdata1, userdata2):
            self._map_status[0] = status

        self._map_callback = mapped
        self._map_info = ffi.new(
            "WGPUBufferMapCallbackInfo *",
            {"mode": lib.WGPUCallbackMode_AllowProcessEvents, "callback": mapped},
        )

    # ---- loss ---------------------------------------------------------------------------------
    # wgpu-py only logs the device-lost callback, so loss is learnt from what fails: a map (`read`), or
    # a call wgpu-py refuses because "Parent device is lost" (`note_failure`, on the engine's error path).
    def note_failure(self, error):
        if self.lost is None and isinstance(error, self._wgpu.GPUError) and "lost" in str(error).lower():
            self.lost = str(error).strip().splitlines()[-1].strip() or "the device is lost"
        return self.lost

    def destroy_device(self) -> None:
        """Destroy the device (wgpuDeviceDestroy), as a driver reset would lose it: for tests of loss."""
        self.lost = self.lost or "destroyed by destroy_device()"
        self.device.destroy()

    def close(self) -> None:
        """Free the device's memory now rather than when Python collects it; the door is unusable after."""
        self.lost = self.lost or "closed"
        self.device.destroy()

    # ---- objects ------------------------------------------------------------------------------
    def _create_buffer(self, size, kind, label):
        usage = self._wgpu.BufferUsage
        flags = {
            STORAGE: usage.STORAGE | usage.COPY_SRC | usage.COPY_DST,
            UNIFORM: usage.UNIFORM | usage.COPY_DST,
            READBACK: usage.MAP_READ | usage.COPY_DST,
        }[kind]
        return self.device.create_buffer(size=size, usage=flags, label=label)

    def _create_pipeline(self, kernel: Kernel):
        decls = kernel.bindings()
        layout_key = tuple((d.index, d.kind) for d in decls)
        layout = self._layouts.get(layout_key)
        if layout is None:
            entries = [
                {
                    "binding": d.index,
                    "visibility": self._wgpu.ShaderStage.COMPUTE,
                    "buffer": {"type": d.kind},
                }
                for d in decls
            ]
            bgl = self.device.create_bind_group_layout(entries=entries)
            layout = self.device.create_pipeline_layout(bind_group_layouts=[bgl])
            layout._phonon_bgl = bgl
            self._layouts[layout_key] = layout
        module = self._create_module(kernel.source(), kernel.label)
        pipeline = self.device.create_compute_pipeline(
            layout=layout, compute={"module": module, "entry_point": kernel.entry}, label=kernel.label
        )
        pipeline._phonon_bgl = layout._phonon_bgl
        return pipeline

    def _create_module(self, code: str, label: str):
        """A WGSL module with bounds checks but without naga's forced loop bounding.

        wgpu-native by default makes naga give every loop a hidden 64-bit counter that breaks after
        2**64 turns (wgpu's guard against the undefined behaviour of an infinite loop). A loop with a
        second exit is one the driver will not unroll, nor hoist its loads out of, so each turn of a
        fixed four- or eight-turn loop pays a memory latency (gfx-rs/wgpu#7698 reports the same
        slowdown; bench/results/h200-ab-shader-checks-2026-11-30.json measures ours). Every loop in
        wgsl/ counts up to a bound set by its constants, its parameters or the state words the engine
        writes, so the guard buys this engine nothing; the browsers' compilers guard loops in their
        own ways. Bounds checks (index clamping) stay on, as in the browser. RUNTIME_CHECKS_BOUNDS
        is WGPUShaderRuntimeChecks_BoundsChecks in wgpu.h (a `static const`, which cffi cannot read).
        PHONON_SHADER_CHECKS=wgpu-default (wgpu-native's own checks) or none (no bounds checks
        either) exist for the A/B runs in bench/results; nothing else should set it.
        """
        ffi, lib = self._ffi, self._lib
        from wgpu.backends.wgpu_native._api import GPUShaderModule, libf  # libf raises wgpu's errors

        trusted = getattr(libf, "wgpuDeviceCreateShaderModuleTrusted", None)
        checks = os.environ.get("PHONON_SHADER_CHECKS", "bounds")  # for A/B runs: see the docstring
        if trusted is None or checks == "wgpu-default":
            return self.device.create_shader_module(code=code, label=label)

        code_bytes, label_bytes = code.encode(), label.encode()
        source = ffi.new("WGPUShaderSourceWGSL *")
        source.chain.next = ffi.NULL
        source.chain.sType = lib.WGPUSType_ShaderSourceWGSL
        code_buffer = ffi.new("char[]", code_bytes)
        source.code.data, source.code.length = code_buffer, len(code_bytes)
        descriptor = ffi.new("WGPUShaderModuleDescriptor *")
        descriptor.nextInChain = ffi.cast("WGPUChainedStruct *", source)
        label_buffer = ffi.new("char[]", label_bytes)
        descriptor.label.data, descriptor.label.length = label_buffer, len(label_bytes)
        handle = trusted(self.device._internal, descriptor, 0 if checks == "none" else RUNTIME_CHECKS_BOUNDS)
        if handle == ffi.NULL:
            raise RuntimeError(f"shader module {label!r} could not be created")
        return GPUShaderModule(label, handle, self.device)

    def _create_bind_group(self, pipeline, entries):
        entries = [
            {"binding": index, "resource": {"buffer": buffer, "offset": offset, "size": size}}
            for index, buffer, offset, size in entries
        ]
        return self.device.create_bind_group(layout=pipeline._phonon_bgl, entries=entries)

    def _compile(self, program: Program):
        # Runs of dispatches become tuples of raw handles; copies stay as they are. A pipeline or bind
        # group equal to the previous dispatch's is not set again (None): every wgpu-native call costs
        # microseconds, and consecutive dispatches often share a pipeline.
        compiled, run = [], []
        previous = (None, None)
        for command in program.commands:
            if isinstance(command, Copy):
                if run:
                    compiled.append(("pass", tuple(run)))
                    run, previous = [], (None, None)
                compiled.append(("copy", command))
            else:
                pipe, group = command.pipeline._internal, command.bind_group._internal
                same_pipe, same_group = pipe == previous[0], group == previous[1]
                run.append((None if same_pipe else pipe, None if same_group else group, *_counts(command)))
                previous = (pipe, group)
        if run:
            compiled.append(("pass", tuple(run)))
        # keep the Python objects alive as long as the program is
        keep = [(c.pipeline, c.bind_group) for c in program.commands if not isinstance(c, Copy)]
        targets = tuple({id(c.target): c.target for c in program.commands if isinstance(c, Copy)}.values())
        return (compiled, keep, targets)

    # ---- work ---------------------------------------------------------------------------------
    def write(self, buffer, offset, data):
        self.queue.write_buffer(buffer, offset, data)

    def submit(self, programs):
        self._submit(self.record(programs).finish(), programs)

    def record_ahead(self, programs):
        return _Recorded(self.record(programs).finish(), programs)

    def submit_recorded(self, recorded):
        buffer, recorded.buffer = recorded.buffer, None
        if buffer is None:
            raise RuntimeError("a recorded command buffer was submitted twice")
        self._submit(buffer, recorded.programs)

    def _submit(self, command_buffer, programs):
        # Submitted for its index, so that `read` can wait for this submission alone. The command
        # buffer's Python object releases its handle when dropped (after the submit, or unsubmitted).
        commands = self._ffi.new("WGPUCommandBuffer[]", [command_buffer._internal])
        index = self._lib.wgpuQueueSubmitForIndex(self.queue._internal, 1, commands)
        for program, _ in programs:
            for target in program.compiled[2]:
                self._written_by[id(target)] = index

    def record(self, programs):
        """A command encoder holding [(program, repeat)], its passes ended: `submit` without the
        finish and the submit (bench/encode_costs.py times the three apart). A program is compiled
        here if it was not yet."""
        lib, null = self._lib, self._ffi.NULL
        set_pipeline = lib.wgpuComputePassEncoderSetPipeline
        set_bind_group = lib.wgpuComputePassEncoderSetBindGroup
        dispatch = lib.wgpuComputePassEncoderDispatchWorkgroups
        encoder = self.device.create_command_encoder()
        clock = self.pass_clock
        # One compute pass for every run of dispatches up to the next copy, across programs and
        # repeats: a pass per dispatch costs ten times more on NVIDIA's Vulkan driver.
        compute = None
        for program, repeat in programs:
            if program.compiled is None:
                self.compile(program)
            compiled = program.compiled[0]
            for _ in range(repeat):
                for kind, item in compiled:
                    if kind == "copy":
                        if compute is not None:
                            compute.end()
                            compute = None
                        encoder.copy_buffer_to_buffer(
                            item.source, item.source_offset, item.target, item.target_offset, item.size
                        )
                        continue
                    if compute is None:
                        if clock is None:
                            compute = encoder.begin_compute_pass()
                        else:
                            compute = encoder.begin_compute_pass(timestamp_writes=clock.pass_writes())
                        handle = compute._internal
                    # the first dispatch of a compiled run always sets its pipeline and bind group
                    for pipe, group, x, y, z in item:
                        if pipe is not None:
                            set_pipeline(handle, pipe)
                        if group is not None:
                            set_bind_group(handle, 0, group, 0, null)
                        dispatch(handle, x, y, z)
        if compute is not None:
            compute.end()
        if clock is not None:
            clock.resolve(encoder)
        return encoder

    async def read(self, buffer, offset, size):
        # wgpu-py's map_sync waits until the device has finished everything submitted so far, so a
        # read of chunk i would also wait for chunk i + 2 and leave the GPU idle while the next chunk
        # is encoded. Mapping through wgpu-native directly and polling for the submission that wrote
        # this buffer waits for that work alone. (wgpu-py's own promise cannot be used for this: its
        # poll thread delivers the callback only after waiting for all work.)
        ffi, lib = self._ffi, self._lib
        self._map_status[0] = 0
        lib.wgpuBufferMapAsync(buffer._internal, lib.WGPUMapMode_Read, offset, size, self._map_info[0])
        index = self._written_by.get(id(buffer))
        wanted = ffi.NULL if index is None else ffi.new("WGPUSubmissionIndex *", index)
        lib.wgpuDevicePoll(self.device._internal, True, wanted)
        while self._map_status[0] == 0:  # the callback fires inside a poll
            lib.wgpuDevicePoll(self.device._internal, True, ffi.NULL)
        if self._map_status[0] != lib.WGPUMapAsyncStatus_Success:
            from ..errors import DeviceLostError

            # The engine maps nothing twice and reads only buffers it copied into, so a failed map means
            # the device is gone (or broken): either way only a new device helps.
            self.lost = self.lost or f"a read back failed with map status {self._map_status[0]}"
            raise DeviceLostError(
                f"reading a GPU buffer back failed ({self.lost}): the GPU device was lost; "
                "the next request rebuilds the engine on a new device"
            )
        try:
            pointer = lib.wgpuBufferGetConstMappedRange(buffer._internal, offset, size)
            return bytes(ffi.buffer(pointer, size))
        finally:
            lib.wgpuBufferUnmap(buffer._internal)


class _Recorded:
    """A finished command buffer and the (program, repeat) pairs it holds, waiting for its submit."""

    __slots__ = ("buffer", "programs")

    def __init__(self, buffer, programs):
        self.buffer, self.programs = buffer, programs


def _counts(command) -> tuple[int, int, int]:
    return command.x, command.y, command.z


def request_adapter(prefer_software: bool | None = None):
    """The best adapter wgpu-py finds; on a machine with no GPU, Mesa's lavapipe when installed."""
    import wgpu

    if prefer_software is None:
        prefer_software = os.environ.get("PHONON_ADAPTER", "") == "software"
    if prefer_software and os.path.exists(_LAVAPIPE_ICD):
        os.environ.setdefault("VK_ICD_FILENAMES", _LAVAPIPE_ICD)
    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    if adapter is None and os.path.exists(_LAVAPIPE_ICD) and "VK_ICD_FILENAMES" not in os.environ:
        os.environ["VK_ICD_FILENAMES"] = _LAVAPIPE_ICD
        adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    if adapter is None:
        from ..errors import PhononError

        raise PhononError(
            "no WebGPU adapter found: install a GPU driver with Vulkan, Metal or D3D12 support, "
            "or Mesa's lavapipe (apt-get install mesa-vulkan-drivers) to run on the CPU"
        )
    return adapter
