"""The browser side of phonon_web: the static site, its build, its local server, and the worker's Python.

    python -m phonon_web.web fetch        # once: npm pack pyodide@PYODIDE_VERSION into build/vendor/
    python -m phonon_web.web build OUT_DIR [--weights DIR]
    python -m phonon_web.web serve OUT_DIR [--port 8000]

* `build.py`   assembles the site: Pyodide's core files, our wheel, the JS (`web/`), the demo and,
               optionally, a weights folder written by build_weights.py.
* `serve.py`   serves it on 127.0.0.1, cross-origin isolated, refusing paths outside the folder.
* `runtime.py` runs inside Pyodide, in the worker: loads the engine behind `navigator.gpu`, speaks.
"""

PYODIDE_VERSION = "314.0.7"
# npm's `dist.integrity` of pyodide@314.0.7 (`npm view pyodide@314.0.7 dist.integrity`): the build
# refuses a tarball that does not match.
PYODIDE_INTEGRITY = (
    "sha512-0YvXxEhfEdpLfb/XkM2BFAeMROq0iMUX2bzzH9pOttyMcWkwq+HbE5uyuGD82LN7y2q+SNvi/6V5JEsOlD2R1A=="
)
# What the site serves from the npm package: the loader, the runtime and its glue, the standard
# library and the lock file Pyodide reads at start.
PYODIDE_FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)
