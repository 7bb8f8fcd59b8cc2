"""The AudioWorklet player: gapless output from the shared ring and from messages, and tts.play()
playing to the end or stopping at once on abort."""

import pytest

from .conftest import SENTENCE

# Renders the worklet offline: 37 chunks of awkward sizes (a ramp, so any gap, repeat or reorder shows)
# go in before rendering starts; the output must be the chunks back to back, then silence.
RENDER = """async (shared) => {
    const total = 24000, chunks = [];
    let next = 0;
    for (let i = 0; next < 20000; i++) {
        const n = Math.min(20000 - next, 97 + ((i * 131) % 900));
        chunks.push(Float32Array.from({ length: n }, (_, k) => ((next + k) % 1000) / 1000));
        next += n;
    }
    const context = new OfflineAudioContext(1, total, 24000);
    await context.audioWorklet.addModule("audio-worklet.js");
    const processorOptions = {};
    let indices, data;
    if (shared) {
        indices = new Int32Array(new SharedArrayBuffer(16));
        data = new Float32Array(new SharedArrayBuffer(4 * 32768));
        processorOptions.ring = { indices: indices.buffer, data: data.buffer };
    }
    const node = new AudioWorkletNode(context, "phonon-player",
        { numberOfInputs: 0, numberOfOutputs: 1, outputChannelCount: [1], processorOptions });
    node.connect(context.destination);
    let written = 0;
    for (const chunk of chunks) {
        if (shared) { data.set(chunk, written); written += chunk.length; Atomics.store(indices, 0, written); }
        else node.port.postMessage({ type: "chunk", samples: chunk });
    }
    if (shared) Atomics.store(indices, 2, 1); else node.port.postMessage({ type: "end" });
    await new Promise((r) => setTimeout(r, 200));  // messages reach the audio thread
    const out = (await context.startRendering()).getChannelData(0);
    let wrong = 0;
    for (let i = 0; i < total; i++) {
        const want = i < next ? (i % 1000) / 1000 : 0;
        if (Math.abs(out[i] - want) > 1e-7) wrong++;
    }
    return { wrong, samples: next, isolated: crossOriginIsolated };
}"""


@pytest.mark.parametrize("shared", [True, False], ids=["shared-ring", "messages"])
def test_worklet_output_is_gapless(loaded, shared):
    result = loaded.evaluate(RENDER, shared)
    assert result["isolated"]  # the server's COOP/COEP headers make SharedArrayBuffer available
    assert result["wrong"] == 0


def test_play_runs_to_the_end_and_abort_stops_playback_at_once(loaded):
    result = loaded.evaluate(
        """async (text) => {
            const tts = window.tts;
            const played = await tts.play(text, { maxFrames: 4, voice: "Iris" });
            const whole = { duration: played.duration, position: tts.playbackTime,
                            state: tts.audioContext.state, shared: tts._player.shared };
            const controller = new AbortController();
            let chunks = 0;
            const began = performance.now();
            const outcome = await tts.play(text, {
                maxFrames: 200, signal: controller.signal,
                onAudio: () => { if (++chunks === 2) controller.abort(); },
            }).then(() => "finished", (e) => e.name);
            const answered = performance.now() - began;
            await new Promise((r) => setTimeout(r, 100));
            const after = tts.playbackTime;
            await new Promise((r) => setTimeout(r, 300));
            return { whole, outcome, answered, after, later: tts.playbackTime };
        }""",
        SENTENCE,
    )
    whole = result["whole"]
    assert whole["shared"] and whole["state"] == "running"
    assert whole["duration"] == pytest.approx(4 * 0.08)
    assert whole["position"] == pytest.approx(whole["duration"], abs=1e-6)  # played every sample
    assert result["outcome"] == "AbortError"
    assert result["after"] == 0 and result["later"] == 0  # nothing plays after the abort
    assert result["answered"] < 30_000  # after two chunks, not after 200 frames
