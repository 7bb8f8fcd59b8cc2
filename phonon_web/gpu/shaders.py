"""WGSL sources: where they live, how a kernel is specialised, and the bind group layout it declares.

A kernel is one or more WGSL files concatenated (shared helpers first), preceded by `const` lines for
its specialisation constants. WGSL has no `#include` and `override` constants cannot size workgroup
arrays on every implementation, so textual constants are the portable way to specialise.

Bind group layouts are read from the `@binding` declarations rather than left to `layout: "auto"`:
"auto" drops bindings a shader does not use, after which a bind group with the full set fails, and
explicit layouts let bind groups exist before an asynchronous pipeline compile finishes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

_HERE = Path(__file__).resolve().parent
# Installed wheels carry the kernels inside the package; a source checkout has them at the top level.
_WGSL_DIRS = (_HERE.parent / "wgsl", _HERE.parent.parent / "wgsl")

_BINDING = re.compile(
    r"@group\(\s*(\d+)\s*\)\s*@binding\(\s*(\d+)\s*\)\s*var\s*(?:<\s*([a-z_]+)\s*(?:,\s*([a-z_]+)\s*)?>)?\s+(\w+)"
)


@dataclass(frozen=True)
class BindingDecl:
    """One `@binding` of group 0: its index, its kind and its name in the shader."""

    index: int
    kind: str  # "uniform", "read-only-storage" or "storage"
    name: str


@dataclass(frozen=True)
class Kernel:
    """A specialised compute shader: what a pipeline is made from and keyed by."""

    files: tuple[str, ...]
    constants: tuple[tuple[str, int | float | bool], ...] = ()
    entry: str = "main"
    features: frozenset[str] = field(default_factory=frozenset)  # e.g. {"subgroups"}

    @property
    def key(self) -> tuple:
        return (self.files, self.constants, self.entry, tuple(sorted(self.features)))

    @property
    def label(self) -> str:
        name = Path(self.files[-1]).name.removesuffix(".wgsl")  # tests and benchmarks pass full paths
        return name + "".join(f" {k}={v}" for k, v in self.constants)

    def source(self, enables: str = "") -> str:
        """The WGSL text; `enables` is the door's directive line for the features (Tint wants
        `enable subgroups;`, Naga refuses it), so each door passes its own."""
        return enables + kernel_source(self.files, self.constants)

    def bindings(self) -> tuple[BindingDecl, ...]:
        return parse_bindings(self.source())


def kernel(*files: str, entry: str = "main", features: frozenset[str] | set[str] = frozenset(), **constants):
    """`kernel("q8.wgsl", "gemv.wgsl", ROWS_PER_GROUP=4)`: a Kernel with sorted constants."""
    return Kernel(tuple(files), tuple(sorted(constants.items())), entry, frozenset(features))


@cache
def read_wgsl(name: str) -> str:
    if Path(name).is_absolute():  # tests bring their own shaders
        return Path(name).read_text(encoding="utf-8")
    for folder in _WGSL_DIRS:
        path = folder / name
        if path.is_file():
            return path.read_text(encoding="utf-8")
    raise FileNotFoundError(f"WGSL file {name!r} not found in {', '.join(str(d) for d in _WGSL_DIRS)}")


def _wgsl_literal(value: int | float | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value}u" if value >= 0 else f"{value}i"
    return repr(float(value)) + "f"  # e.g. 0.5f, 1e-05f: both valid WGSL


@cache
def kernel_source(files: tuple[str, ...], constants: tuple) -> str:
    lines = [f"const {name}: {_wgsl_type(value)} = {_wgsl_literal(value)};" for name, value in constants]
    parts = ["\n".join(lines)] + [f"// ---- {name}\n" + read_wgsl(name) for name in files]
    return "\n".join(parts)


def _wgsl_type(value: int | float | bool) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "u32" if value >= 0 else "i32"
    return "f32"


def parse_bindings(source: str) -> tuple[BindingDecl, ...]:
    """The group-0 bindings a shader declares, in index order."""
    found = {}
    for group, index, space, access, name in _BINDING.findall(_strip_comments(source)):
        if int(group) != 0:
            raise ValueError(f"binding {name} is in group {group}; phonon_web kernels use group 0 only")
        if space == "uniform":
            kind = "uniform"
        elif space == "storage":
            kind = "storage" if access == "read_write" else "read-only-storage"
        else:
            raise ValueError(f"binding {name}: only uniform and storage buffers are supported, not {space!r}")
        if int(index) in found:
            raise ValueError(f"binding {index} declared twice")
        found[int(index)] = BindingDecl(int(index), kind, name)
    return tuple(found[i] for i in sorted(found))


def _strip_comments(source: str) -> str:
    source = re.sub(r"/\*.*?\*/", "", source, flags=re.S)
    return re.sub(r"//[^\n]*", "", source)
