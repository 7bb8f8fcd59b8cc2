"""The browser door: WebGPU through `navigator.gpu`, from Python in Pyodide (`pyodide.ffi`).

The product runs here: the same engine as natively, in a dedicated Worker. Crossing from Python to
JavaScript costs about 0.2 us a call and looking a JS attribute up about 2 us, so nothing per dispatch
happens in Python:

* `compile(program)` turns a Program once into ONE flat JS array:
  `[0, pipeline, bindGroup, x, y, z,  1, source, sourceOffset, target, targetOffset, size, ...]`
  (tag 0 a dispatch, tag 1 a copy);
* `submit([(program, repeat), ...])` makes ONE call to a small JS function (`makeSubmit` in
  web/gpu-submit.js, made once per device; JavaScript in a file, never eval'd) that encodes every
  pair into one command encoder, one compute pass per run of dispatches (a copy ends a pass), skips
  setPipeline/setBindGroup when they repeat, and submits; `record_ahead` has the same function encode
  without submitting, for `submit_recorded` to send later.

Objects the engine holds are small Python wrappers (`BrowserBuffer`, `BrowserPipeline`,
`BrowserBindGroup`) around the JS objects, so sizes and labels are read without crossing to JS.
Bind group layouts are explicit, from `Kernel.bindings()`, shared by every pipeline with the same
signature. Shaders that use subgroups get `enable subgroups;` (Tint requires it) and
`diagnostic(off, subgroup_uniformity);` (see `__init__`). Pipelines are made with the synchronous
createComputePipeline: asynchronous creation gained nothing on SwiftShader (it compiles one at a
time either way) and would force deferring every write and submit until the pipelines exist.

Errors: everything made from `open()` to the first `finish()` (the engine's whole load) sits inside
WebGPU error scopes, so a shader that does not compile fails the load with its message. After that,
errors the GPU reports asynchronously (`uncapturederror`) are remembered and raised by the next call.
A lost device sets `lost` (its reason; `device.lost` settles once, so watching costs nothing per call)
and every later call raises `DeviceLostError`; so does a failed read, which is how a loss in the
middle of a request shows. The worker then opens a new door and builds a new engine.

The only Python callables handed to JS are those two handlers: the `lost` one is called once (and
so freed) when the device is lost or destroyed; the `uncapturederror` one is destroyed by `close()`,
which also destroys the device.

Only importable inside Pyodide (it imports `js` and `pyodide`).
"""

from __future__ import annotations

import time

import js  # type: ignore[import-not-found]  # Pyodide's view of the JS global scope
from pyodide.ffi import JsException, create_once_callable, create_proxy, jsnull, to_js  # type: ignore[import-not-found]

from ..errors import DeviceLostError, GpuError
from .door import READBACK, STORAGE, UNIFORM, Copy, Door, Program
from .shaders import Kernel

# GPUBufferUsage / GPUShaderStage / GPUMapMode values (fixed by the WebGPU spec).
_MAP_READ, _COPY_SRC, _COPY_DST, _UNIFORM, _STORAGE = 0x1, 0x4, 0x8, 0x40, 0x80
_USAGE = {
    STORAGE: _STORAGE | _COPY_SRC | _COPY_DST,
    UNIFORM: _UNIFORM | _COPY_DST,
    READBACK: _MAP_READ | _COPY_DST,
}
_COMPUTE_STAGE = 0x4
_MAP_MODE_READ = 0x1

# The limits the engine relies on, asked for at the adapter's values (the device gets WebGPU's
# defaults otherwise); everything else stays at the portable defaults on purpose.
_LIMITS_FROM_ADAPTER = ("maxStorageBufferBindingSize", "maxBufferSize")
# WebGPU's core defaults, which the kernels are written for. A device in compatibility mode starts
# lower (e.g. 128 invocations per workgroup), so these are asked for whenever the adapter has them.
_CORE_DEFAULTS = {
    "maxComputeWorkgroupSizeX": 256,
    "maxComputeWorkgroupSizeY": 256,
    "maxComputeWorkgroupSizeZ": 64,
    "maxComputeInvocationsPerWorkgroup": 256,
    "maxComputeWorkgroupStorageSize": 16384,
    "maxStorageBuffersPerShaderStage": 8,
}

_DISPATCH, _COPY = 0, 1

# The function that encodes (program, repeat) pairs and submits them is JavaScript, `makeSubmit` in
# web/gpu-submit.js, which the worker registers as the Python module `phonon_web_js`: defining it here
# with `run_js` would need eval, which a strict Content-Security-Policy forbids.


class NoWebGPUError(GpuError):
    """This browser (or this worker) offers no WebGPU adapter at all."""


class BrowserBuffer:
    __slots__ = ("js", "size", "kind", "label")

    def __init__(self, js_buffer, size: int, kind: str, label: str):
        self.js, self.size, self.kind, self.label = js_buffer, size, kind, label

    def __repr__(self) -> str:
        return f"BrowserBuffer({self.label!r}, {self.size} bytes, {self.kind})"


class BrowserPipeline:
    __slots__ = ("js", "layout", "decls", "label")

    def __init__(self, js_pipeline, layout, decls, label: str):
        self.js, self.layout, self.decls, self.label = js_pipeline, layout, decls, label


class BrowserBindGroup:
    __slots__ = ("js", "label")

    def __init__(self, js_group, label: str):
        self.js, self.label = js_group, label


def _object(value):
    """A Python dict/list tree as plain JS objects/arrays (JsProxies inside pass through)."""
    return to_js(value, dict_converter=js.Object.fromEntries)


def _next_task():
    """A promise resolved by a new macrotask (after the events already queued)."""
    return js.Promise.new(create_once_callable(lambda resolve, reject: js.setTimeout(resolve, 0)))


def _missing(value) -> bool:
    return value is None or value is jsnull


class BrowserDoor(Door):
    name = "navigator.gpu"

    def __init__(self, device, adapter=None, *, description: str = ""):
        """Wrap a GPUDevice (a JsProxy). Use `await BrowserDoor.open()` to get one made for the engine."""
        super().__init__()
        self.device = device
        self.adapter = adapter
        self.queue = device.queue
        self.features = frozenset(str(f) for f in js.Array.from_(device.features))
        self.limits = {name: int(getattr(device.limits, name)) for name in _LIMITS_FROM_ADAPTER}
        self.description = description
        # Tint (Chrome) wants the extension enabled in the source (Naga refuses the line, so natively
        # it is absent). Its uniformity analysis also rejects subgroup operations in loops whose bound
        # comes from a struct that also carries per-invocation ids, though the bound is the subgroup
        # size and uniform; `subgroup_uniformity` is the diagnostic WGSL provides for exactly this.
        self._enables = (
            "enable subgroups;\ndiagnostic(off, subgroup_uniformity);\n"
            if "subgroups" in self.features
            else ""
        )
        self._layouts: dict[tuple, object] = {}
        import phonon_web_js  # type: ignore[import-not-found]  # registered by web/worker.js

        self._submit_js = phonon_web_js.makeSubmit(device)
        self._record_js, self._submit_recorded_js = self._submit_js.record, self._submit_js.submitRecorded
        self._write_buffer = self.queue.writeBuffer  # bound once: attribute lookups cost ~2 us
        self.lost: str | None = None  # why the device was lost, once it is (Door.lost)
        self._error: str | None = None
        # called once, when the device is lost or destroyed (close() destroys it), which frees it
        self._on_lost = create_once_callable(self._device_lost)
        self._on_error = create_proxy(self._uncaptured_error)
        device.lost.then(self._on_lost)
        device.addEventListener("uncapturederror", self._on_error)
        # What the encoding-cost measurement reads: submits, dispatches encoded, seconds in submit();
        # and how many submits sent command buffers recorded ahead (the engine's _record_ahead).
        self.stats = {"submits": 0, "dispatches": 0, "submit_seconds": 0.0, "recorded_submits": 0}
        # Everything made from here to the first finish() is checked by error scopes: a shader that
        # does not compile or a bind group that does not match fails the load with its own message.
        self._scopes = ("out-of-memory", "validation")
        for scope in self._scopes:
            device.pushErrorScope(scope)

    @classmethod
    async def open(
        cls,
        *,
        want_subgroups: bool = True,
        power_preference: str = "high-performance",
        feature_level: str | None = None,
    ) -> BrowserDoor:
        """Request an adapter and a device with what the engine needs (subgroups when offered,
        timestamps when offered, the adapter's storage binding and buffer size limits)."""
        gpu = getattr(js.navigator, "gpu", None)
        if _missing(gpu):
            raise NoWebGPUError(
                "this browser has no WebGPU (navigator.gpu is missing): use a recent Chrome or Edge, "
                "or enable WebGPU in this browser's settings"
            )
        options = {"powerPreference": power_preference}
        if feature_level:
            options["featureLevel"] = feature_level
        adapter = await gpu.requestAdapter(_object(options))
        if _missing(adapter):
            raise NoWebGPUError(
                "this browser offers no WebGPU adapter (requestAdapter() returned null): WebGPU is "
                "disabled or the GPU is blocklisted; enable WebGPU (chrome://flags/#enable-unsafe-webgpu) "
                "or use a recent Chrome or Edge"
            )
        offered = {str(f) for f in js.Array.from_(adapter.features)}
        features = []
        if want_subgroups and "subgroups" in offered:
            features.append("subgroups")
        if "timestamp-query" in offered:
            features.append("timestamp-query")
        limits = {name: getattr(adapter.limits, name) for name in _LIMITS_FROM_ADAPTER}
        for name, value in _CORE_DEFAULTS.items():
            offered = getattr(adapter.limits, name, None)
            if isinstance(offered, int | float) and offered >= value:
                limits[name] = value
        try:
            device = await adapter.requestDevice(
                _object({"requiredFeatures": features, "requiredLimits": limits, "label": "phonon"})
            )
        except JsException as e:
            raise GpuError(f"the GPU refused to open a device: {e}") from None
        info = adapter.info
        description = " ".join(
            str(v) for v in (info.vendor, info.architecture, info.device, info.description) if v
        )
        return cls(device, adapter, description=description or "WebGPU adapter")

    # ---- state --------------------------------------------------------------------------------
    def _device_lost(self, info) -> None:
        # Runs once, from the device's `lost` promise: the only JS -> Python call loss detection costs.
        reason = getattr(info, "reason", "unknown")
        message = getattr(info, "message", "")
        if self.lost is None:
            self.lost = f"{reason}: {message}" if message else str(reason)

    def _uncaptured_error(self, event) -> None:
        message = str(event.error.message)
        js.console.error(f"phonon WebGPU error: {message}")
        if self._error is None:
            self._error = message

    def _check(self) -> None:
        if self.lost is not None:
            raise DeviceLostError(
                f"the GPU device was lost ({self.lost}): this request failed; the next request opens a "
                "new device and builds the engine again"
            )
        if self._error is not None:
            error, self._error = self._error, None
            raise GpuError(f"the GPU reported an error: {error}")

    async def finish(self) -> None:
        """Wait until the GPU has done all work submitted so far; raise GpuError for any error the
        GPU reported since the door was opened (the first call) or since the last call."""
        self._check()
        scopes, self._scopes = self._scopes, ()
        errors = []
        for _ in scopes:
            error = await self.device.popErrorScope()
            if not _missing(error):
                errors.append(str(error.message))
        await self.queue.onSubmittedWorkDone()
        if errors:
            raise GpuError("the GPU refused the engine's objects: " + "; ".join(errors))
        await _next_task()  # lets an `uncapturederror` event that is already queued arrive
        self._check()

    def close(self) -> None:
        """Destroy the device and the Python handlers JS holds."""
        if self.device is None:
            return
        self.lost = self.lost or "destroyed: closed by phonon"
        self.device.removeEventListener("uncapturederror", self._on_error)
        self.device.destroy()
        self.device = None
        self._on_error.destroy()  # `_on_lost` frees itself when `lost` resolves, which destroy() causes
        self._on_error = None

    # ---- objects ------------------------------------------------------------------------------
    def _create_buffer(self, size, kind, label):
        self._check()
        js_buffer = self.device.createBuffer(_object({"size": size, "usage": _USAGE[kind], "label": label}))
        return BrowserBuffer(js_buffer, size, kind, label)

    def _layout(self, decls):
        key = tuple((d.index, d.kind) for d in decls)
        layout = self._layouts.get(key)
        if layout is None:
            entries = [
                {"binding": d.index, "visibility": _COMPUTE_STAGE, "buffer": {"type": d.kind}} for d in decls
            ]
            group_layout = self.device.createBindGroupLayout(_object({"entries": entries}))
            pipeline_layout = self.device.createPipelineLayout(_object({"bindGroupLayouts": [group_layout]}))
            layout = self._layouts[key] = (group_layout, pipeline_layout)
        return layout

    def _create_pipeline(self, kernel: Kernel):
        self._check()
        decls = kernel.bindings()
        group_layout, pipeline_layout = self._layout(decls)
        enables = self._enables if "subgroups" in kernel.features else ""
        module = self.device.createShaderModule(
            _object({"code": kernel.source(enables), "label": kernel.label})
        )
        pipeline = self.device.createComputePipeline(
            _object(
                {
                    "layout": pipeline_layout,
                    "compute": {"module": module, "entryPoint": kernel.entry},
                    "label": kernel.label,
                }
            )
        )
        return BrowserPipeline(pipeline, group_layout, decls, kernel.label)

    def _create_bind_group(self, pipeline, entries):
        self._check()
        entries = [
            {"binding": index, "resource": {"buffer": buffer.js, "offset": offset, "size": size}}
            for index, buffer, offset, size in entries
        ]
        group = self.device.createBindGroup(
            _object({"layout": pipeline.layout, "entries": entries, "label": pipeline.label})
        )
        return BrowserBindGroup(group, pipeline.label)

    def _compile(self, program: Program):
        flat = []
        for c in program.commands:
            if isinstance(c, Copy):
                flat += (_COPY, c.source.js, c.source_offset, c.target.js, c.target_offset, c.size)
            else:
                flat += (_DISPATCH, c.pipeline.js, c.bind_group.js, c.x, c.y, c.z)
        return to_js(flat)

    # ---- work ---------------------------------------------------------------------------------
    def write(self, buffer, offset, data):
        self._check()
        view = data if isinstance(data, memoryview) else memoryview(data)
        if view.format != "B" or view.ndim != 1:
            view = view.cast("B")
        if view.nbytes:
            self._write_buffer(buffer.js, offset, to_js(view))  # one copy into a Uint8Array

    def submit(self, programs):
        self._check()
        began = time.perf_counter()
        self.stats["dispatches"] += self._submit_js(*self._arguments(programs))
        self.stats["submit_seconds"] += time.perf_counter() - began
        self.stats["submits"] += 1

    def record_ahead(self, programs):
        self._check()
        return self._record_js(*self._arguments(programs))  # a JS {buffer, dispatches}

    def submit_recorded(self, recorded):
        self._check()
        self.stats["dispatches"] += self._submit_recorded_js(recorded)
        self.stats["submits"] += 1
        self.stats["recorded_submits"] += 1

    def _arguments(self, programs) -> list:
        args = []
        for program, repeat in programs:
            if program.compiled is None:
                self.compile(program)
            args.append(program.compiled)
            args.append(repeat)
        return args

    async def read(self, buffer, offset, size):
        self._check()
        try:
            await buffer.js.mapAsync(_MAP_MODE_READ, offset, size)
        except JsException as e:
            # A map fails when the device goes; its `lost` promise may settle a moment later, and its
            # reason says more than the failed map. Either way the device is unusable now.
            await _next_task()
            self.lost = self.lost or f"reading {buffer.label!r} back failed: {e}"
            self._check()
        try:
            return buffer.js.getMappedRange(offset, size).to_bytes()  # the one copy, into Python
        finally:
            buffer.js.unmap()
