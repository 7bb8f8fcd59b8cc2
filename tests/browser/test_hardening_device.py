"""A lost GPU device: the request that sees it fails with DeviceLostError; the next request opens a new
device, builds the engine again from the files the worker kept, and speaks exactly as before.

The loss is made by the worker's `_loseDevice` test hook (GPUDevice.destroy(), as a driver reset or a
removed GPU would do); the worker refuses that message unless the page loaded with testHooks.
"""

from .conftest import SENTENCE, weights_requests


def test_a_lost_device_fails_one_request_and_the_next_rebuilds_and_speaks(loaded, server, record_property):
    before = len(server.requests)
    out = loaded.evaluate(
        """async (text) => {
            const tts = window.tts;
            const reference = await tts.speak(text, { voice: "Marcus", seed: 21, maxFrames: 2 });
            const objects = (await tts.stats()).objects;
            let chunks = 0;
            const lost = await tts.speak(text, {
                maxFrames: 8,
                onAudio: () => { if (++chunks === 1) tts._test("_loseDevice"); },
            }).then(() => null, (e) => [e.name, e.message, e instanceof window.Phonon.PhononError]);
            const began = performance.now();
            const again = await tts.speak(text, { voice: "Marcus", seed: 21, maxFrames: 2 });
            const recoverMs = performance.now() - began;
            const same = again.audio.length === reference.audio.length
                && again.audio.every((x, i) => x === reference.audio[i])
                && JSON.stringify(again.words) === JSON.stringify(reference.words);
            const objectsAfter = (await tts.stats()).objects;
            return { lost, same, recoverMs, objectsBefore: objects, objectsAfter };
        }""",
        SENTENCE,
    )
    record_property("recover_ms", out["recoverMs"])
    name, message, typed = out["lost"]
    assert name == "DeviceLostError" and typed
    assert "GPU device was lost" in message and "next request" in message
    assert out["same"]  # the new engine on the new device speaks what the old one did
    assert out["objectsAfter"] == out["objectsBefore"]  # built once again, the same objects
    assert weights_requests(server.requests[before:]) == []  # from the files the worker kept
