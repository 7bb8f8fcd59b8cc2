"""Safe to embed: the strict Content-Security-Policy, and nothing fetched used unchecked.

The policy is the one web/README.md documents (POLICY, asserted to be there word for word): no
'unsafe-eval', no 'unsafe-inline'. The session's server sends it on every response (tests/browser/
conftest.py), so every browser test runs under it: the page, the worker (which takes its policy from
its own script's response) and the worklet; the demo speaks under it in test_pages.py. Here: what
happens where a page's policy lacks what Phonon needs, and a changed byte in what the worker boots.
"""

from .conftest import ROOT, open_page
from .faulty_server import POLICY, FaultyServer

BOOT = """async (code) => {
    const worker = new Worker("worker.js?test-hooks", { type: "module" });
    const answer = await new Promise((resolve) => {
        worker.onmessage = (e) => {
            if (e.data.type === "result" || e.data.type === "error") resolve(e.data);
        };
        worker.postMessage({ type: "_python", id: 1, siteURL: new URL(".", location.href).href, code });
    });
    worker.terminate();
    return answer;
}"""


def test_the_readme_documents_the_policy():
    assert POLICY in (ROOT / "web" / "README.md").read_text()


def test_the_session_runs_under_the_policy(loaded, server):
    sent = loaded.evaluate("async () => (await fetch('worker.js')).headers.get('content-security-policy')")
    assert sent == POLICY
    violations = [line for line in loaded._phonon_log if "Content Security Policy" in line]
    assert not violations, violations


def test_a_policy_without_what_phonon_needs_is_a_typed_error_not_a_hang(context, site, blank):
    server = FaultyServer(site).start()
    try:
        # without 'wasm-unsafe-eval', Pyodide alone would log a warning and wait forever
        server.csp = POLICY.replace(" 'wasm-unsafe-eval'", "")
        page = open_page(context, server.url + "blank.html")
        answer = page.evaluate(BOOT, "1")
        assert answer["error"]["name"] == "PolicyError" and "'wasm-unsafe-eval'" in answer["error"]["message"]
        page.close()
        server.csp = POLICY.replace(" blob:", "")
        page = open_page(context, server.url + "blank.html")
        answer = page.evaluate(BOOT, "1")
        assert answer["error"]["name"] == "PolicyError" and "blob:" in answer["error"]["message"]
        page.close()
    finally:
        server.shutdown()
        server.server_close()


def test_pyodide_and_the_wheel_are_checked_before_use(context, site, blank):
    """A changed byte in any of Pyodide's files or in our wheel stops the boot with a typed error."""
    import json

    server = FaultyServer(site).start()
    wheel = "/" + json.loads((site / "phonon-site.json").read_text())["wheel"]
    try:
        page = open_page(context, server.url + "blank.html")
        retry_faults = ["corrupt"] * 4  # every attempt gets the changed copy
        pyodide = ["/pyodide/pyodide.asm.wasm", "/pyodide/pyodide.mjs", "/pyodide/python_stdlib.zip"]
        for path in [*pyodide, wheel]:
            server.clear()
            server.schedule(path, *retry_faults)
            answer = page.evaluate(BOOT, "1")
            assert answer["type"] == "error", (path, answer)
            assert answer["error"]["name"] == "DownloadError", (path, answer)
            assert "SHA-256 differs" in answer["error"]["message"] and path in answer["error"]["message"]
        server.clear()
        assert page.evaluate(BOOT, "'booted'") == {"type": "result", "id": 1, "value": "booted"}
        page.close()
    finally:
        server.shutdown()
        server.server_close()
