"""Assemble the static site: `python -m phonon_web.web build OUT_DIR [--weights DIR]`.

OUT_DIR gets:
  index.html, demo.css, demo.js   the demo (web/demo/), at the site's root
  phrases.json                    the benchmark texts, the demo's presets (bench/phrases.json)
  bench/                          the benchmark page (bench/page/; driven by bench/browser.py)
  phonon.mjs, phonon.js           the page API as an ES module and as a classic <script> (web/)
  phonon-checks.mjs               what load() and speak() accept (imported by phonon.mjs)
  worker.js, worker-*.js          the worker (Pyodide + engine): messages, files, boot (web/)
  gpu-submit.js                   the door's one JS function (web/); audio-worklet.js the player
  phonon-site.json                where the worker finds Pyodide and the wheel, and their SHA-256
  examples/script-tag.html        the smallest page using the classic script
  pyodide/                        Pyodide's core files, from the npm package pyodide@PYODIDE_VERSION
  wheels/phonon_web-*.whl         this package as a pure-Python wheel (the worker unpacks it)
  weights/                        with --weights: a folder written by build_weights.py, copied

Pyodide comes from `npm pack pyodide@PYODIDE_VERSION` (`python -m phonon_web.web fetch` runs it and
checks npm's integrity hash); never from a CDN. `--pyodide` takes that tarball or an unpacked package
folder (e.g. node_modules/pyodide). The wheel is built from this source tree with
`pip wheel --no-deps` unless `--wheel` gives one.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from . import PYODIDE_FILES, PYODIDE_INTEGRITY, PYODIDE_VERSION

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the source checkout (pyproject.toml, web/, bench/)
WEB = PACKAGE_ROOT / "web"
VENDOR = PACKAGE_ROOT / "build" / "vendor"
PYODIDE_TGZ = f"pyodide-{PYODIDE_VERSION}.tgz"

# web/ file -> site path
SITE_FILES = {
    "phonon.mjs": "phonon.mjs",
    "phonon.js": "phonon.js",
    "phonon-checks.mjs": "phonon-checks.mjs",
    "worker.js": "worker.js",
    "worker-messages.js": "worker-messages.js",
    "worker-files.js": "worker-files.js",
    "worker-boot.js": "worker-boot.js",
    "gpu-submit.js": "gpu-submit.js",
    "audio-worklet.js": "audio-worklet.js",
    "demo/index.html": "index.html",
    "demo/demo.css": "demo.css",
    "demo/demo.js": "demo.js",
    "examples/script-tag.html": "examples/script-tag.html",
}


class BuildError(SystemExit):
    pass


def integrity_of(path: Path) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def fetch_pyodide(dest: Path = VENDOR) -> Path:
    """`npm pack pyodide@PYODIDE_VERSION` into `dest` (once); checks npm's integrity hash."""
    dest.mkdir(parents=True, exist_ok=True)
    tgz = dest / PYODIDE_TGZ
    if not tgz.is_file():
        npm = shutil.which("npm")
        if npm is None:
            raise BuildError("npm is needed to fetch pyodide (apt-get install -y npm)")
        subprocess.run(
            [npm, "pack", f"pyodide@{PYODIDE_VERSION}", "--pack-destination", str(dest), "--silent"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    actual = integrity_of(tgz)
    if actual != PYODIDE_INTEGRITY:
        tgz.unlink()
        raise BuildError(f"{tgz} does not match npm's integrity for pyodide@{PYODIDE_VERSION}; deleted it")
    return tgz


def _pyodide_files(source: Path, out: Path) -> None:
    """Copy Pyodide's core files from a tarball or a package folder into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    if source.is_file():
        if integrity_of(source) != PYODIDE_INTEGRITY:
            raise BuildError(f"{source} is not npm's pyodide@{PYODIDE_VERSION} (integrity differs)")
        with tarfile.open(source, "r:gz") as tar:
            for name in PYODIDE_FILES:
                member = tar.extractfile(f"package/{name}")
                if member is None:
                    raise BuildError(f"{source} has no package/{name}")
                (out / name).write_bytes(member.read())
        return
    if not source.is_dir():
        raise BuildError(
            f"no Pyodide at {source}: run `python -m phonon_web.web fetch` "
            f"(npm pack pyodide@{PYODIDE_VERSION}) "
            "or pass --pyodide with the tarball or an unpacked package folder"
        )
    package = json.loads((source / "package.json").read_text())
    if package.get("version") != PYODIDE_VERSION:
        raise BuildError(
            f"{source} holds pyodide {package.get('version')}, this build pins {PYODIDE_VERSION}"
        )
    for name in PYODIDE_FILES:
        shutil.copyfile(source / name, out / name)


def build_wheel(out: Path) -> Path:
    """This package as a wheel (pure Python, with its WGSL), built from the source checkout."""
    if not (PACKAGE_ROOT / "pyproject.toml").is_file():
        raise BuildError("not a source checkout (no pyproject.toml): pass --wheel with a phonon_web wheel")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "pip", "wheel", str(PACKAGE_ROOT), "--no-deps", "-q", "-w", tmp]
        if importlib.util.find_spec("hatchling") is not None:
            command.append("--no-build-isolation")  # no network needed when hatchling is installed
        subprocess.run(command, check=True, env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
        wheels = list(Path(tmp).glob("phonon_web-*.whl"))
        if len(wheels) != 1:
            raise BuildError(f"pip wheel made {len(wheels)} phonon_web wheels")
        target = out / wheels[0].name
        shutil.copyfile(wheels[0], target)
    return target


def build_site(
    out: str | Path,
    *,
    weights: str | Path | None = None,
    pyodide: str | Path | None = None,
    wheel: str | Path | None = None,
) -> Path:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for source, target in SITE_FILES.items():
        path = out / target
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(WEB / source, path)
    shutil.copyfile(PACKAGE_ROOT / "bench" / "phrases.json", out / "phrases.json")
    bench_page = PACKAGE_ROOT / "bench" / "page"
    if bench_page.is_dir():  # a source checkout: the benchmark page comes along (bench/browser.py)
        shutil.copytree(bench_page, out / "bench", dirs_exist_ok=True)

    _pyodide_files(Path(pyodide) if pyodide else VENDOR / PYODIDE_TGZ, out / "pyodide")

    wheels = out / "wheels"
    if wheels.exists():
        shutil.rmtree(wheels)
    if wheel:
        wheels.mkdir(parents=True)
        built = wheels / Path(wheel).name
        shutil.copyfile(wheel, built)
    else:
        built = build_wheel(wheels)

    # The worker uses no byte it has not checked against these (web/worker-boot.js).
    site = {
        "pyodide": "pyodide/",
        "pyodideVersion": PYODIDE_VERSION,
        "pyodideSha256": {name: _sha256(out / "pyodide" / name) for name in PYODIDE_FILES},
        "wheel": f"wheels/{built.name}",
        "wheelSha256": _sha256(built),
    }

    if weights:
        source = Path(weights)
        if not (source / "manifest.json").is_file():
            raise BuildError(f"{source} has no manifest.json: give the folder build_weights.py wrote")
        target = out / "weights"
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(source, target)
        site["weightsManifestSha256"] = _sha256(target / "manifest.json")  # pins the default weights
    (out / "phonon-site.json").write_text(json.dumps(site, indent=1) + "\n")
    return out


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m phonon_web.web build", description="Assemble the static site."
    )
    parser.add_argument("out", help="the folder to write (made if missing; our files in it are replaced)")
    parser.add_argument("--weights", help="a folder written by build_weights.py, copied to OUT/weights/")
    parser.add_argument(
        "--pyodide",
        help=f"npm's pyodide-{PYODIDE_VERSION}.tgz or an unpacked package folder (default build/vendor/)",
    )
    parser.add_argument("--wheel", help="a phonon_web wheel to ship (default: built from this checkout)")
    args = parser.parse_args(argv)
    out = build_site(args.out, weights=args.weights, pyodide=args.pyodide, wheel=args.wheel)
    print(f"site written to {out}; serve it with: python -m phonon_web.web serve {out}")
    return 0


def fetch_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m phonon_web.web fetch", description="npm pack the pinned pyodide."
    )
    parser.add_argument("--dest", default=str(VENDOR), help=f"folder for the tarball (default {VENDOR})")
    args = parser.parse_args(argv)
    print(fetch_pyodide(Path(args.dest)))
    return 0
