"""The engine's two doors to the GPU: `native` (wgpu-py, CPython) and `browser` (navigator.gpu, Pyodide).

Both implement `door.Door`; the engine never imports wgpu or pyodide itself.
"""
