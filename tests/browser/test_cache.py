"""Weights in Cache Storage: a second load asks the network for none, a damaged entry is repaired."""

from .conftest import open_page, weights_requests

LOAD = """async () => {
    const { Phonon } = await import("./phonon.mjs");
    const tts = await Phonon.load({});
    const info = tts.info;
    const speech = await tts.speak("Hello there.", { maxFrames: 2 });
    await tts.close();
    return { info, frames: speech.frames };
}"""


def test_a_damaged_cached_file_is_dropped_and_downloaded_again(loaded, context, server, blank):
    page = open_page(context, blank)
    damaged = page.evaluate(
        """async () => {
            const cache = await caches.open("phonon-weights-v1");
            const keys = (await cache.keys()).map((r) => r.url);
            const weights = keys.find((k) => k.includes("/weights/weights.bin?"));
            const tokenizer = keys.find((k) => k.includes("/weights/tokenizer.json?"));
            // one flipped byte in the weights (same length), and a truncated tokenizer
            const bytes = new Uint8Array(await (await cache.match(weights)).arrayBuffer());
            bytes[1000] ^= 0xff;
            await cache.put(weights, new Response(bytes));
            const text = await (await cache.match(tokenizer)).text();
            await cache.put(tokenizer, new Response(text.slice(0, 100)));
            return keys.length;
        }"""
    )
    assert damaged == 6  # manifest, weights, tokenizer, three voices
    before = len(server.requests)
    result = page.evaluate(LOAD)
    fetched = weights_requests(server.requests[before:])
    assert sorted(fetched) == ["/weights/tokenizer.json", "/weights/weights.bin"]
    assert result["info"]["fromCache"] == {"manifest": True, "files": 3, "downloaded": 2, "repaired": 2}
    assert result["frames"] == 2
    # what is in the cache now matches the manifest again
    intact = page.evaluate(
        """async () => {
            const manifest = await (await fetch("weights/manifest.json")).json();
            const cache = await caches.open("phonon-weights-v1");
            const hex = async (b) => Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", b)),
                                                (x) => x.toString(16).padStart(2, "0")).join("");
            const out = [];
            for (const f of [manifest.weights, manifest.tokenizer, ...manifest.voices]) {
                const key = new URL("weights/" + f.file, location.href);
                key.searchParams.set("phonon-sha256", f.sha256);
                const hit = await cache.match(key.href);
                out.push(hit ? (await hex(await hit.arrayBuffer())) === f.sha256 : false);
            }
            return out;
        }"""
    )
    assert intact == [True] * 5
    page.close()
