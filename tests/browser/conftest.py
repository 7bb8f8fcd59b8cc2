"""Browser tests: the built site in headless Chromium (SwiftShader WebGPU), driven by Playwright.

Needs /usr/bin/chromium (apt-get install chromium), the `playwright` Python package (its own browser
download is never used) and npm's pyodide tarball in build/vendor/ (`python -m phonon_web.web fetch`).
Without them the tests fail, saying which is missing (never skip into green); `bash .ci/run` installs
all three. They install nothing themselves.

The model is the TINY synthetic checkpoint (SwiftShader is a CPU rasteriser: compiling the engine's
pipelines alone takes about 25 s there), and texts are short with a frame cap (`maxFrames`).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from bench.browser import CHROMIUM, HEADLESS_FLAGS

ROOT = Path(__file__).resolve().parents[2]

FLAGS = [
    *HEADLESS_FLAGS,
    # performance.measureUserAgentSpecificMemory() answers at once instead of after the next GC (soak)
    "--enable-blink-features=ForceEagerMeasureMemory",
    "--js-flags=--expose-gc",  # gc() before the soak's heap measurements
]
WEBGPU = ["--enable-unsafe-webgpu"]

SENTENCE = "The birch canoe slid on the smooth planks."


def _missing() -> str | None:
    from phonon_web.web import build

    if shutil.which(CHROMIUM) is None and not Path(CHROMIUM).is_file():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "the playwright Python package is not installed (pip install playwright)"
    if not (build.VENDOR / build.PYODIDE_TGZ).is_file():
        return f"no {build.VENDOR / build.PYODIDE_TGZ}: run `python -m phonon_web.web fetch` once"
    return None


@pytest.fixture(autouse=True)
def _browser_ready(request):
    if "needs_nothing" in request.keywords:
        return
    reason = _missing()
    if reason is not None:
        pytest.fail(f"the browser tests cannot run: {reason}", pytrace=False)


def pytest_configure(config):
    config.addinivalue_line("markers", "needs_nothing: a browser-folder test that runs without Chromium")


@pytest.fixture(scope="session")
def tiny_weights(tmp_path_factory) -> Path:
    import build_weights
    from tests.reference import checkpoint as ck

    root = tmp_path_factory.mktemp("tiny")
    ck.write_checkpoint(root / "ckpt", tiny=True, seed=0)
    build_weights.convert(root / "ckpt", root / "web")
    return root / "web"


@pytest.fixture(scope="session")
def site(tmp_path_factory, tiny_weights) -> Path:
    from phonon_web.web.build import build_site

    return build_site(tmp_path_factory.mktemp("site") / "out", weights=tiny_weights)


@pytest.fixture(scope="session")
def server(site):
    """The site's own server (phonon_web.web.serve), every page but examples/ under the strict
    Content-Security-Policy web/README.md documents: every test proves the package runs under it."""
    from .faulty_server import POLICY, FaultyServer

    server = FaultyServer(site).start()
    server.csp = POLICY
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def playwright():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


def launch(playwright, *, webgpu: bool = True):
    """A persistent context in a fresh profile (Cache Storage starts empty)."""
    profile = tempfile.mkdtemp(prefix="phonon-chromium-")
    context = playwright.chromium.launch_persistent_context(
        profile,
        executable_path=CHROMIUM,
        headless=True,
        args=FLAGS + (WEBGPU if webgpu else []),
        viewport={"width": 1100, "height": 900},
    )
    context.set_default_timeout(180_000)
    context._phonon_profile = profile
    return context


def close(context) -> None:
    context.close()
    shutil.rmtree(context._phonon_profile, ignore_errors=True)


@pytest.fixture(scope="session")
def context(playwright):
    """One browser with WebGPU for the session: its Cache Storage carries the weights between tests."""
    context = launch(playwright)
    yield context
    close(context)


@pytest.fixture(scope="session")
def blank(server, site) -> str:
    (site / "blank.html").write_text("<!doctype html><meta charset=utf-8><title>blank</title>")
    return server.url + "blank.html"


def open_page(context, url: str, log: list | None = None):
    page = context.new_page()
    sink = log if log is not None else []
    page.on("console", lambda m: sink.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: sink.append(f"pageerror: {e}"))
    page.on("worker", lambda w: w.on("console", lambda m: sink.append(f"worker {m.type}: {m.text}")))
    page.goto(url)
    return page


@pytest.fixture(scope="session")
def loaded(context, server, blank):
    """A page with the model loaded through the ES module (`window.tts`): the first load of the
    session, so the weights come from the network and go into Cache Storage. Its worker has the test
    hooks (`testHooks: true`: losing the device, heap sizes), which a page never gets by default."""
    log: list[str] = []
    page = open_page(context, blank, log)
    before = len(server.requests)
    info = page.evaluate(
        """async () => {
            const { Phonon } = await import("./phonon.mjs");
            window.Phonon = Phonon;
            window.progress = [];
            window.tts = await Phonon.load({ testHooks: true, progress: (p) => window.progress.push(p) });
            return window.tts.info;
        }"""
    )
    page._phonon_info = info
    page._phonon_requests = server.requests[before:]
    page._phonon_log = log
    yield page
    page.evaluate("() => window.tts.close()")
    page.close()


def weights_requests(requests: list[str]) -> list[str]:
    return [r for r in requests if r.startswith("/weights/")]
