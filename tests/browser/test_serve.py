"""The local server: 127.0.0.1 only, cross-origin isolation headers, MIME types, nothing outside."""

import http.client

import pytest

from phonon_web.web.serve import SiteServer, outside

pytestmark = pytest.mark.needs_nothing


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("served")
    site = root / "site"
    (site / "pyodide").mkdir(parents=True)
    (site / "index.html").write_text("<!doctype html><title>x</title>")
    (site / "phonon.mjs").write_text("export const x = 1;\n")
    (site / "pyodide" / "pyodide.asm.wasm").write_bytes(b"\0asm\1\0\0\0")
    (root / "secret.txt").write_text("not for the web")
    server = SiteServer(site).start()
    yield server
    server.shutdown()
    server.server_close()


def get(server, path: str, method: str = "GET"):
    connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    connection.putrequest(method, path, skip_host=False, skip_accept_encoding=True)
    connection.endheaders()
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response, body


def test_listens_on_loopback_only(served):
    assert served.server_address[0] == "127.0.0.1"
    assert served.url.startswith("http://127.0.0.1:")


@pytest.mark.parametrize(
    "path, mime",
    [
        ("/", "text/html; charset=utf-8"),
        ("/phonon.mjs", "text/javascript"),
        ("/pyodide/pyodide.asm.wasm", "application/wasm"),
    ],
)
def test_isolation_headers_and_mime_types(served, path, mime):
    response, _ = get(served, path)
    assert response.status == 200
    assert response.getheader("Content-Type") == mime
    assert response.getheader("Cross-Origin-Opener-Policy") == "same-origin"
    assert response.getheader("Cross-Origin-Embedder-Policy") == "require-corp"


@pytest.mark.parametrize(
    "path",
    [
        "/../secret.txt",
        "/pyodide/../../secret.txt",
        "/%2e%2e/secret.txt",
        "/%2E%2E/secret.txt",
        "/pyodide/%2e%2e/%2e%2e/secret.txt",
        "/%252e%252e/secret.txt",
        "/..%2fsecret.txt",
        "/..%5csecret.txt",
    ],
)
def test_refuses_paths_outside_the_folder(served, path):
    response, body = get(served, path)
    assert response.status == 403
    assert b"not for the web" not in body


def test_outside_detects_encoded_parents():
    assert outside("/a/../b") and outside("/%2e%2e/x") and outside("/%252e%252e/x")
    assert not outside("/weights/voices/Delia.bin") and not outside("/a..b/c")


def test_missing_files_are_404_and_requests_are_counted(served):
    before = len(served.requests)
    response, _ = get(served, "/nothing-here.js")
    assert response.status == 404
    assert served.requests[before:] == ["/nothing-here.js"]
