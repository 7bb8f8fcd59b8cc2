"""The benchmark page's pieces (bench/page/) in Chromium, without loading the model: deleting the
origin's storage, counting bytes from Resource Timing, and the worker probe's answer."""

from .conftest import open_page

STORAGE = """async () => {
    const { clearOriginStorage, originStorage } = await import("./bench/storage.js");
    // something in each of the three stores
    await (await caches.open("phonon-weights-v1")).put("/x", new Response("cached"));
    await (await caches.open("another")).put("/y", new Response("cached"));
    await new Promise((resolve, reject) => {
        const request = indexedDB.open("bench-test-db", 1);
        request.onupgradeneeded = () => request.result.createObjectStore("s");
        request.onsuccess = () => { request.result.close(); resolve(); };
        request.onerror = () => reject(request.error);
    });
    const root = await navigator.storage.getDirectory();
    const file = await root.getFileHandle("weights.bin", { create: true });
    const writable = await file.createWritable();
    await writable.write("bytes");
    await writable.close();
    await root.getDirectoryHandle("folder", { create: true });
    const filled = await originStorage();
    const cleared = await clearOriginStorage();
    return { filled, cleared, after: await originStorage() };
}"""


def test_the_page_deletes_cache_storage_indexeddb_and_the_private_file_system(context, server, blank):
    page = open_page(context, blank)
    result = page.evaluate(STORAGE)
    filled = result["filled"]
    assert {"phonon-weights-v1", "another"} <= set(filled["cacheNames"])
    assert "bench-test-db" in filled["databases"]
    assert {"weights.bin", "folder"} <= set(filled["files"])
    assert result["cleared"]["before"] == filled
    empty = {"cacheNames": [], "databases": [], "files": []}
    assert result["cleared"]["after"] == empty and result["after"] == empty
    page.close()


COUNT = """async () => {
    const { allRows, summarise, downloadingMs } = await import("./bench/netcount.js");
    performance.clearResourceTimings();
    // a download past the HTTP cache, then the same file revalidated (the server says no-cache: 304)
    await (await fetch("weights/manifest.json", { cache: "no-store" })).arrayBuffer();
    await (await fetch("weights/manifest.json", { cache: "no-store" })).arrayBuffer();
    const fresh = "weights/tokenizer.json?bench-test=" + Date.now(); // never in the HTTP cache before
    await (await fetch(fresh)).arrayBuffer();
    await (await fetch(fresh)).arrayBuffer();
    await (await fetch("bench/index.html", { cache: "no-store" })).arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 100)); // entries are queued, not immediate
    const rows = (await allRows({ worker: false })).filter((r) => r.initiator === "fetch");
    const overlapping = [
        { transferSize: 1, start: 0, end: 10 }, { transferSize: 1, start: 5, end: 20 },
        { transferSize: 1, start: 30, end: 40 }, { transferSize: 0, start: 100, end: 200 },
    ];
    return { rows, summary: summarise(rows), union: downloadingMs(overlapping) };
}"""


def test_bytes_are_counted_from_resource_timing_and_revalidations_are_not_downloads(
    context, server, blank, tiny_weights
):
    page = open_page(context, blank)
    result = page.evaluate(COUNT)
    manifest = (tiny_weights / "manifest.json").stat().st_size
    tokenizer = (tiny_weights / "tokenizer.json").stat().st_size
    rows = result["rows"]
    assert [r["path"] for r in rows] == [
        "/weights/manifest.json",
        "/weights/manifest.json",
        "/weights/tokenizer.json",
        "/weights/tokenizer.json",
        "/bench/index.html",
    ]
    assert [r["encodedBodySize"] for r in rows[:4]] == [manifest, manifest, tokenizer, tokenizer]
    # both no-store fetches and the first tokenizer fetch came over the network; the second tokenizer
    # fetch was a 304 revalidation (a few hundred bytes, less than its body)
    assert all(r["transferSize"] - r["encodedBodySize"] >= 300 for r in rows[:3])
    assert 0 < rows[3]["transferSize"] < rows[3]["encodedBodySize"]
    summary = result["summary"]
    assert summary["networkBodyBytes"] == 2 * manifest + tokenizer  # the bench page's file apart
    assert summary["fetches"] == 4 and summary["benchPageTransferBytes"] > 0
    assert result["union"] == 30  # [0, 20] and [30, 40]; a fetch that moved nothing does not count
    page.close()


def test_the_worker_probe_answers_with_the_workers_own_fetches(context, server, blank):
    page = open_page(context, blank)
    answer = page.evaluate(
        """async () => {
            const { workerEntries } = await import("./bench/netcount.js");
            const worker = new Worker("./bench/worker-probe.js", { type: "module" });
            // the probe imports ../worker.js, which fetches nothing until it is asked to load: give the
            // module graph a moment to load, then ask
            await new Promise((resolve) => setTimeout(resolve, 500));
            const probe = await workerEntries();
            worker.terminate();
            return { probe, pageOrigin: performance.timeOrigin };
        }"""
    )
    probe = answer["probe"]
    assert probe["type"] == "resources" and isinstance(probe["entries"], list)
    assert probe["timeOrigin"] > answer["pageOrigin"]  # the worker started after the page
    page.close()
