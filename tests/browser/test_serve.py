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
        "/%2e%2e%2fsecret.txt",
        "/%2E%2e%2Fsecret.txt",
        "/.%2e/secret.txt",
        "/%2e./secret.txt",
        "/%25252e%25252e/secret.txt",  # three layers of encoding
        "/%252e%252e%252fsecret.txt",
        "/..\\secret.txt",
        "/pyodide\\..\\..\\secret.txt",
        "/%5c..%5csecret.txt",
        "/pyodide/..%00/../secret.txt",
        "/secret.txt%00.html",
        "/%00",
        "/pyodide/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    ],
)
def test_refuses_paths_outside_the_folder(served, path):
    response, body = get(served, path)
    assert response.status == 403
    assert b"not for the web" not in body


@pytest.mark.parametrize(
    "path", ["//etc/passwd", "/etc/passwd", "///etc/passwd", "http://127.0.0.1/../secret.txt"]
)
def test_absolute_paths_stay_inside_the_folder(served, path):
    response, body = get(served, path)
    assert response.status in (403, 404)
    assert b"root:" not in body and b"not for the web" not in body


def test_ranges_of_a_file_and_out_of_range(served):
    connection = http.client.HTTPConnection("127.0.0.1", served.server_address[1], timeout=10)
    whole = b"\0asm\1\0\0\0"
    for header, status, body, content_range in [
        ("bytes=2-", 206, whole[2:], "bytes 2-7/8"),
        ("bytes=0-3", 206, whole[:4], "bytes 0-3/8"),
        ("bytes=5-100", 206, whole[5:], "bytes 5-7/8"),
        ("bytes=8-", 416, b"", "bytes */8"),
        ("bytes=-3", 416, b"", "bytes */8"),  # suffix ranges are not served: the worker never asks
        ("items=0-1", 416, b"", "bytes */8"),
    ]:
        connection.request("GET", "/pyodide/pyodide.asm.wasm", headers={"Range": header})
        response = connection.getresponse()
        got = (response.status, response.read(), response.getheader("Content-Range"))
        assert got == (status, body, content_range)
        assert response.getheader("Cross-Origin-Embedder-Policy") == "require-corp"
    connection.close()


def test_outside_detects_encoded_parents():
    assert outside("/a/../b") and outside("/%2e%2e/x") and outside("/%252e%252e/x")
    assert not outside("/weights/voices/Delia.bin") and not outside("/a..b/c")
    assert outside("/a\\b") and outside("/a%00b") and outside("/%5c") and outside("/%25252e%25252e/x")


def test_missing_files_are_404_and_requests_are_counted(served):
    before = len(served.requests)
    response, _ = get(served, "/nothing-here.js")
    assert response.status == 404
    assert served.requests[before:] == ["/nothing-here.js"]
