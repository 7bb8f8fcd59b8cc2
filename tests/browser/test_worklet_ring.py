"""The worklet's shared ring wraps around: 20,000 samples through a ring of 4,096, written as the page's
Player writes (only into the room the reader has freed, split at the end of the ring), must come out
gapless and in order. Rendered offline, the writer runs while the rendering is suspended every 1,024
samples (OfflineAudioContext.suspend), as the page's thread runs between audio quanta."""

WRAP = """async () => {
    const RING = 4096, TOTAL = 20000, RENDER = 24000, STEP = 1024;
    const context = new OfflineAudioContext(1, RENDER, 24000);
    await context.audioWorklet.addModule("audio-worklet.js");
    const indices = new Int32Array(new SharedArrayBuffer(16));
    const data = new Float32Array(new SharedArrayBuffer(4 * RING));
    const node = new AudioWorkletNode(context, "phonon-player", {
        numberOfInputs: 0, numberOfOutputs: 1, outputChannelCount: [1],
        processorOptions: { ring: { indices: indices.buffer, data: data.buffer } },
    });
    node.connect(context.destination);
    const ramp = Float32Array.from({ length: TOTAL }, (_, k) => ((k % 997) + 1) / 1000);
    let next = 0, wraps = 0, writes = 0;
    const write = () => {  // Player._flush: only into free room, split where the ring ends
        const w = Atomics.load(indices, 0), room = RING - (w - Atomics.load(indices, 1));
        const n = Math.min(room, TOTAL - next, 1000 + 37 * (writes++ % 13));  // sizes that straddle
        if (n <= 0) return;
        const at = w % RING, first = Math.min(n, RING - at);
        data.set(ramp.subarray(next, next + first), at);
        if (n > first) { data.set(ramp.subarray(next + first, next + n), 0); wraps++; }
        next += n;
        Atomics.store(indices, 0, w + n);
        if (next === TOTAL) Atomics.store(indices, 2, 1);
    };
    write();
    for (let t = STEP; t < RENDER; t += STEP) {
        context.suspend(t / 24000).then(() => { write(); context.resume(); });
    }
    const out = (await context.startRendering()).getChannelData(0);
    // the first sample played is where the ramp starts; from there it must run unbroken, then silence
    const start = out.findIndex((x) => x !== 0);
    let wrong = 0;
    for (let i = 0; i < TOTAL; i++) if (Math.abs(out[start + i] - ramp[i]) > 1e-7) wrong++;
    for (let i = start + TOTAL; i < RENDER; i++) if (out[i] !== 0) wrong++;
    return { wrong, wraps, start, read: Atomics.load(indices, 1), written: next };
}"""


def test_the_shared_ring_wraps_around_without_a_gap(loaded):
    out = loaded.evaluate(WRAP)
    assert out["written"] == 20000 and out["read"] == 20000
    assert out["wraps"] >= 2  # writes split at the ring's end (it went round four times in all)
    assert out["wrong"] == 0, out
