"""Broken downloads: the worker's download layer (web/worker-files.js) against a server that cuts
connections, answers errors, sends too much or the wrong bytes, or will not store anything.

Most checks drive the layer alone (the worker's `_files` test hook: no Python, no GPU, seconds each)
on a fresh cache; after every fault the cache is audited: each entry's bytes must hash to the
SHA-256 in its key (nothing half-written is ever stored). Cancelling Phonon.load mid-download goes
through the page API.
"""

import random

import pytest

from .conftest import close, launch, open_page
from .faulty_server import FaultyServer

RETRY = {"attempts": 4, "delayMs": 60}
WEIGHTS = "/weights/weights.bin"

# Runs the download layer once in a test-hook worker; returns its answer (or error) and the cache audit.
FILES = """async ([retry, test, voices = null, refresh = false, keep = false]) => {
    if (!keep) await caches.delete("phonon-weights-v1");
    const worker = new Worker("worker.js?test-hooks", { type: "module" });
    const warnings = [];
    const answer = await new Promise((resolve) => {
        worker.onmessage = (e) => {
            if (e.data.type === "warning") warnings.push(e.data);
            else if (e.data.type === "result" || e.data.type === "error") resolve(e.data);
        };
        worker.postMessage({ type: "_files", id: 1, weightsURL: new URL("weights/", location.href).href,
                             refresh, retry, test, voices });
    });
    worker.terminate();
    return { answer, warnings, audit: await window.auditCache() };
}"""

AUDIT = """() => {
    window.auditCache = async () => {
        const cache = await caches.open("phonon-weights-v1");
        const hex = async (b) => Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", b)),
                                            (x) => x.toString(16).padStart(2, "0")).join("");
        const out = [];
        for (const request of await cache.keys()) {
            const url = new URL(request.url);
            const want = url.searchParams.get("phonon-sha256");
            const bytes = await (await cache.match(request)).arrayBuffer();
            out.push([url.pathname, want === null ? "manifest" : (await hex(bytes)) === want]);
        }
        return out.sort();
    };
}"""

EVERYTHING = sorted(
    ["/weights/manifest.json", "/weights/tokenizer.json", WEIGHTS]
    + [f"/weights/voices/{v}.bin" for v in ("Delia", "Iris", "Marcus")]
)


@pytest.fixture(scope="module")
def faulty(site):
    server = FaultyServer(site).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def page(playwright, faulty, blank):
    context = launch(playwright)
    page = open_page(context, faulty.url + "blank.html")
    page.evaluate(AUDIT)
    yield page
    close(context)


def run(page, faulty, *faults, path=WEIGHTS, retry=RETRY, test=None):
    faulty.clear()
    if faults:
        faulty.schedule(path, *faults)
    out = page.evaluate(FILES, [retry, test])
    out["requests"] = faulty.requests_for(path)
    return out


def assert_all_stored(out):
    assert out["answer"]["type"] == "result", out["answer"]
    assert out["answer"]["value"]["fromCache"]["downloaded"] == 5
    stored = [path for path, ok in out["audit"]]
    assert sorted(stored) == EVERYTHING and all(ok for _, ok in out["audit"])


def test_a_cut_connection_resumes_with_a_range(page, faulty):
    out = run(page, faulty, "cut:300000", "cut:200000")  # weights.bin is 732,244 bytes
    assert_all_stored(out)
    asked = [(status, rng) for status, rng, _ in out["requests"]]
    assert asked == [(200, None), (206, "bytes=300000-"), (206, "bytes=500000-")]


def test_a_server_without_ranges_restarts_the_file(page, faulty):
    out = run(page, faulty, "cut:200000", "no-range")
    assert_all_stored(out)
    assert [s for s, _, _ in out["requests"]] == [200, 200] and out["requests"][1][1] is not None


@pytest.mark.parametrize(
    "faults", [("status:503", "status:500"), ("long",), ("corrupt",)], ids=["5xx", "long", "hash"]
)
def test_errors_and_wrong_bytes_are_retried_with_growing_waits(page, faulty, faults):
    out = run(page, faulty, *faults)
    assert_all_stored(out)
    times = [at for _, _, at in out["requests"]]
    assert len(times) == len(faults) + 1
    assert all(r is None for _, r, _ in out["requests"])  # wrong bytes: from the start, never resumed
    waits = [b - a for a, b in zip(times, times[1:], strict=False)]
    for k, wait in enumerate(waits):
        assert wait >= RETRY["delayMs"] * 2**k / 1000 * 0.9  # 60 ms, then 120 ms, ...


def test_spent_retries_are_a_download_error_saying_what_to_do(page, faulty):
    out = run(page, faulty, *["status:503"] * 4)
    error = out["answer"]["error"]
    assert error["name"] == "DownloadError"
    assert "after 4 attempts" in error["message"] and "check the network connection" in error["message"]
    assert len(out["requests"]) == 4  # bounded
    assert all(ok for _, ok in out["audit"]) and WEIGHTS not in [p for p, _ in out["audit"]]


def test_wrong_bytes_every_time_are_a_weights_error(page, faulty):
    out = run(page, faulty, *["corrupt"] * 4)
    error = out["answer"]["error"]
    assert error["name"] == "WeightsError" and "rebuild the weights" in error["message"]
    assert all(ok for _, ok in out["audit"]) and WEIGHTS not in [p for p, _ in out["audit"]]


def test_a_missing_file_is_not_retried(page, faulty):
    out = run(page, faulty, "status:404")
    error = out["answer"]["error"]
    assert error["name"] == "DownloadError" and "404" in error["message"] and "weights" in error["message"]
    assert len(out["requests"]) == 1


def test_a_full_disk_falls_back_to_no_cache_with_a_warning(page, faulty):
    out = run(page, faulty, test={"failCachePut": "QuotaExceededError"})
    assert out["answer"]["type"] == "result", out["answer"]
    assert out["answer"]["value"]["weightsBytes"] > 0  # the files are there, for this visit
    assert out["audit"] == []  # and nothing is stored
    assert [w["code"] for w in out["warnings"]] == ["cache-unavailable"]  # once, not per file
    message = out["warnings"][0]["message"]
    assert "QuotaExceededError" in message and "without the cache" in message
    assert out["answer"]["value"]["warnings"] == [{"code": "cache-unavailable", "message": message}]


def test_cancelling_load_mid_download_answers_at_once_and_stores_nothing_partial(
    page, faulty, record_property
):
    rng = random.Random(7)
    latencies = []
    for _ in range(3):
        faulty.clear()
        faulty.schedule(WEIGHTS, "slow:80")  # 45 pieces, 80 ms apart: about 3.6 s
        delay = rng.uniform(300, 3000)
        got = page.evaluate(
            """async (delay) => {
                await caches.delete("phonon-weights-v1");
                const { Phonon } = await import("./phonon.mjs");
                const controller = new AbortController();
                const loading = Phonon.load({ signal: controller.signal });
                let answeredAt = null, name = null;
                loading.then(() => (name = "loaded"),
                             (e) => { name = e.name; answeredAt = performance.now(); });
                await new Promise((r) => setTimeout(r, delay));
                const abortAt = performance.now();
                controller.abort();
                while (name === null) await new Promise((r) => setTimeout(r, 1));
                return { name, ms: answeredAt - abortAt };
            }""",
            delay,
        )
        assert got["name"] == "AbortError"
        latencies.append(got["ms"])
        audit = page.evaluate("() => window.auditCache()")
        assert all(ok for _, ok in audit) and WEIGHTS not in [p for p, _ in audit]
    record_property("load_cancel_ms", latencies)
    assert max(latencies) < 50


def test_voices_loads_only_those_and_refresh_asks_for_the_manifest_again(page, faulty):
    faulty.clear()
    out = page.evaluate(FILES, [RETRY, None, ["Iris"]])
    assert out["answer"]["value"]["fromCache"]["downloaded"] == 3  # weights, tokenizer, Iris
    fetched = sorted({p for p, _, _, _ in faulty.log if p.startswith("/weights/")})
    iris = ["/weights/manifest.json", WEIGHTS, "/weights/tokenizer.json", "/weights/voices/Iris.bin"]
    assert fetched == sorted(iris)

    faulty.clear()  # again from the cache: nothing asked for
    out = page.evaluate(FILES, [RETRY, None, ["Iris"], False, True])
    cached = {"manifest": True, "files": 3, "downloaded": 0, "repaired": 0}
    assert out["answer"]["value"]["fromCache"] == cached
    assert [p for p, _, _, _ in faulty.log if p.startswith("/weights/")] == []

    faulty.clear()  # refresh: the manifest and the files again, from the network
    out = page.evaluate(FILES, [RETRY, None, ["Iris"], True, True])
    assert out["answer"]["value"]["fromCache"]["manifest"] is False
    assert "/weights/manifest.json" in [p for p, _, _, _ in faulty.log]
