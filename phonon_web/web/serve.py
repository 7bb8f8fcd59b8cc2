"""A local static server for the built site: 127.0.0.1 only, cross-origin isolated, nothing outside it.

    python -m phonon_web.web serve OUT_DIR [--port 8000]

Every response carries `Cross-Origin-Opener-Policy: same-origin` and
`Cross-Origin-Embedder-Policy: require-corp` (so the page is cross-origin isolated and the audio ring
can be a SharedArrayBuffer), `Cross-Origin-Resource-Policy: same-origin` and `Cache-Control: no-cache`
(the browser revalidates the site's files; the weights live in Cache Storage and are never asked for
again once stored). `.wasm` is served as application/wasm (streaming compilation needs it) and `.mjs`
as text/javascript. A path that leaves the folder (`..`, `%2e%2e`, a backslash or a symbolic link
out) is refused with 403 before the file system is touched. A `Range: bytes=FIRST-[LAST]` request for a
file gets 206 with that part (the worker resumes a download cut mid-file from where it stopped, as it
would from any static host or CDN); a range outside the file gets 416.

The server counts the requests it answers (`server.requests`), which the browser tests use to prove
that a second load fetches no weights.
"""

from __future__ import annotations

import argparse
import os
import posixpath
import re
import threading
import urllib.parse
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HOST = "127.0.0.1"

MIME_TYPES = {
    ".wasm": "application/wasm",
    ".mjs": "text/javascript",
    ".js": "text/javascript",
    ".json": "application/json",
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".zip": "application/zip",
    ".whl": "application/zip",
    ".bin": "application/octet-stream",
    ".wgsl": "text/plain; charset=utf-8",
    ".map": "application/json",
    ".txt": "text/plain; charset=utf-8",
}

SECURITY_HEADERS = {
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "require-corp",
    "Cross-Origin-Resource-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-cache",
}


def outside(url_path: str) -> bool:
    """Whether a request path tries to leave the served folder (after percent-decoding, repeatedly)."""
    path = urllib.parse.urlsplit(url_path).path
    for _ in range(3):  # %252e%252e decodes to %2e%2e and then to ..: refuse every layer
        decoded = urllib.parse.unquote(path)
        if decoded == path:
            break
        path = decoded
    if "\\" in path or "\0" in path:
        return True
    return any(part == ".." for part in path.split("/"))


_RANGE = re.compile(r"bytes=(\d+)-(\d*)")  # one range; anything else is answered 416


class Handler(SimpleHTTPRequestHandler):
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, **MIME_TYPES}
    server: SiteServer

    def _refuse_outside(self) -> bool:
        if outside(self.path):
            self.send_error(403, "path outside the served folder")
            return True
        real = os.path.realpath(self.translate_path(self.path))
        root = os.path.realpath(self.directory)
        if real != root and not real.startswith(root + os.sep):
            self.send_error(403, "path outside the served folder")
            return True
        return False

    def do_GET(self):
        self.server.count(self.path)
        if self._refuse_outside():
            return
        if self.headers.get("Range") and os.path.isfile(self.translate_path(self.path)):
            self._send_range(self.translate_path(self.path), self.headers["Range"])
        else:
            super().do_GET()

    def _send_range(self, path: str, header: str) -> None:
        """One byte range of a file (206), or 416 when it is not one this file has."""
        size = os.path.getsize(path)
        match = _RANGE.fullmatch(header.strip())
        first = int(match[1]) if match else size
        last = min(int(match[2]), size - 1) if match and match[2] else size - 1
        if first >= size or first > last:
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{size}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(206)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Range", f"bytes {first}-{last}/{size}")
        self.send_header("Content-Length", str(last - first + 1))
        self.end_headers()
        with open(path, "rb") as f:
            f.seek(first)
            self.wfile.write(f.read(last - first + 1))

    def end_headers(self):
        self.send_header("Accept-Ranges", "bytes")
        for name, value in SECURITY_HEADERS.items():
            self.send_header(name, value)
        super().end_headers()

    def do_HEAD(self):
        self.server.count(self.path)
        if not self._refuse_outside():
            super().do_HEAD()

    def guess_type(self, path):
        return MIME_TYPES.get(posixpath.splitext(str(path))[1].lower()) or super().guess_type(path)

    def log_message(self, format, *args):
        if self.server.verbose:
            super().log_message(format, *args)


class SiteServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, directory: str | Path, port: int = 0, verbose: bool = False):
        directory = Path(directory).resolve()
        if not directory.is_dir():
            raise SystemExit(
                f"{directory} is not a folder: build the site first (python -m phonon_web.web build)"
            )
        self.directory = directory
        self.verbose = verbose
        self.requests: list[str] = []
        self._lock = threading.Lock()
        super().__init__((HOST, port), partial(Handler, directory=str(directory)))

    def count(self, path: str) -> None:
        with self._lock:
            self.requests.append(urllib.parse.urlsplit(path).path)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.server_address[1]}/"

    def start(self) -> SiteServer:
        """Serve in a background thread (tests); `shutdown()` stops it."""
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m phonon_web.web serve", description=__doc__.split("\n")[0]
    )
    parser.add_argument("directory", help="the folder `python -m phonon_web.web build` wrote")
    parser.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (default 8000, 0 = any)")
    parser.add_argument("--quiet", action="store_true", help="do not log each request")
    args = parser.parse_args(argv)
    server = SiteServer(args.directory, args.port, verbose=not args.quiet)
    print(f"serving {server.directory} at {server.url} (127.0.0.1 only; Ctrl+C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
