"""The site's own server (phonon_web.web.serve) with faults a test schedules, and an optional
Content-Security-Policy header: for the download and CSP tests only, never shipped.

    server = FaultyServer(site).start()
    server.schedule("/weights/weights.bin", "cut:300000", "status:503")   # the next two requests
    server.csp = POLICY                                     # on every response but examples/

Faults, each used by one request to its path, in order:
  cut:N       the headers promise the whole file (or range), N bytes follow, then (0.3 s later) the
              connection closes
  status:S    an HTTP error S with no body (500, 503, 404, ...)
  long        the file with 64 bytes too many, its Content-Length matching (a file longer than its manifest)
  corrupt     the file with one byte changed, same length (a wrong SHA-256)
  no-range    a Range request answered 200 with the whole file (a server without ranges)
  slow:MS     the file in 16 KiB pieces, MS milliseconds apart (so a test can cancel mid-download)
Every request is logged as (path, status, Range header or None, seconds since start).
"""

from __future__ import annotations

import os
import socket
import threading
import time
import urllib.parse

from phonon_web.web.serve import Handler, SiteServer

# The policy web/README.md documents for the demo (tests/browser/test_embedding.py checks it is there).
POLICY = (
    "default-src 'self'; script-src 'self' blob: 'wasm-unsafe-eval'; "
    "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


class FaultyHandler(Handler):
    server: FaultyServer

    def end_headers(self):
        # examples/ is exempt: the script-tag example is one page with its script inline, on purpose
        if self.server.csp and not self.path.startswith("/examples/"):
            self.send_header("Content-Security-Policy", self.server.csp)
        super().end_headers()

    def send_response(self, code, message=None):
        self.server.note(self.path, code, self.headers.get("Range"))
        super().send_response(code, message)

    def do_GET(self):
        path = urllib.parse.urlsplit(self.path).path
        fault = self.server.next_fault(path)
        if fault is None:
            return super().do_GET()
        kind, _, arg = fault.partition(":")
        file = self.translate_path(self.path)
        data = open(file, "rb").read() if os.path.isfile(file) else b""
        if kind == "status":
            self.send_response(int(arg))
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif kind == "cut":
            first = _range_start(self.headers.get("Range"))
            part = data[first:]
            self.send_response(206 if first else 200)
            if first:
                self.send_header("Content-Range", f"bytes {first}-{len(data) - 1}/{len(data)}")
            self.send_header("Content-Length", str(len(part)))
            self.end_headers()
            self.wfile.write(part[: int(arg)])
            self.wfile.flush()
            time.sleep(0.3)  # the bytes reach the page's reader before the connection goes
            self.connection.shutdown(socket.SHUT_RDWR)  # the rest never comes
            self.close_connection = True
        elif kind in ("long", "corrupt", "no-range", "slow"):
            if kind == "long":
                data += bytes(64)
            elif kind == "corrupt":
                data = data[:100] + bytes([data[100] ^ 0xFF]) + data[101:]
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if kind != "slow":
                self.wfile.write(data)
                return
            try:
                for at in range(0, len(data), 16384):
                    self.wfile.write(data[at : at + 16384])
                    self.wfile.flush()
                    time.sleep(int(arg) / 1000)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the page cancelled: that is what slow downloads are for
        else:
            raise ValueError(f"unknown fault {fault!r}")


def _range_start(header: str | None) -> int:
    if not header or not header.startswith("bytes="):
        return 0
    return int(header[6:].split("-")[0])


class FaultyServer(SiteServer):
    def __init__(self, directory, port: int = 0):
        super().__init__(directory, port)
        self.RequestHandlerClass = _with_directory(str(self.directory))
        self.csp: str | None = None
        self._faults: dict[str, list[str]] = {}
        self.log: list[tuple[str, int, str | None, float]] = []
        self._began = time.monotonic()
        self._fault_lock = threading.Lock()

    def handle_error(self, request, client_address):
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # a page that went away mid-download (a cancelled load): expected, not news
        super().handle_error(request, client_address)

    def schedule(self, path: str, *faults: str) -> None:
        with self._fault_lock:
            self._faults.setdefault(path, []).extend(faults)

    def clear(self) -> None:
        with self._fault_lock:
            self._faults.clear()
            self.log.clear()

    def next_fault(self, path: str) -> str | None:
        with self._fault_lock:
            queue = self._faults.get(path)
            return queue.pop(0) if queue else None

    def note(self, url_path: str, status: int, range_header: str | None) -> None:
        path = urllib.parse.urlsplit(url_path).path
        self.log.append((path, status, range_header, time.monotonic() - self._began))

    def requests_for(self, path: str) -> list[tuple[int, str | None, float]]:
        return [(status, rng, at) for p, status, rng, at in self.log if p == path]


def _with_directory(directory: str):
    def make(*args, **kwargs):
        return FaultyHandler(*args, directory=directory, **kwargs)

    return make
