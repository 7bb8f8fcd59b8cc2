"""Cancel at 100 random points, concurrent requests, and a 200-request soak, on the session's page.

One run of 200 requests through Phonon.speak / tts.play on the tiny model (frame caps of 1-3):
  * 4 references, each made one at a time before anything is cancelled ("fresh");
  * 100 requests cancelled (AbortSignal) at a random moment (seeded): before their first chunk
    (prefill), between chunks (mid-take) or, through tts.play, while the speech plays; each must
    reject at once, the worker must stop within a chunk or so, and the next request's samples must be
    the reference's, bit for bit (the chunks a cancelled request got before its cancel are checked);
  * 29 batches of 3 different requests made at once, each equal to its reference, audio and words:
    queued, never mixed;
  * 9 uncancelled requests between the cancels, equal to their reference.
Over the run the door's GPU object counts must not move, and the wasm heap and the worker's and the
page's JS heaps must stay within the bounds below (measured: see the test's printed figures).
"""

import random

from .conftest import SENTENCE

# Bounds on growth over the 200 requests, measured with room to spare (the figures are printed).
WASM_GROWTH_BYTES = 0  # Pyodide's memory never shrinks, so any growth per request would show here
JS_GROWTH_BYTES = 8 << 20

# The first takes two chunks (a point between them is mid-take); the others one frame each.
REFERENCES = [
    [SENTENCE, {"voice": "Iris", "seed": 11, "maxFrames": 2}],
    ["Hello there, how are you?", {"voice": "Marcus", "seed": 12, "maxFrames": 1}],
    ["Good day to you.", {"voice": "Delia", "seed": 13, "maxFrames": 1, "speed": 1.2}],
    ["Numbers like 42 are words.", {"voice": "Iris", "seed": 14, "maxFrames": 1, "speed": 0.8}],
]

SETUP = """async (references) => {
    const tts = window.tts;
    const heap = async () => {
        globalThis.gc?.();  // --js-flags=--expose-gc (conftest): what is left is what is kept
        const worker = await tts._test("_heap");
        const m = await performance.measureUserAgentSpecificMemory();
        const js = (scope) => m.breakdown.filter((b) => b.attribution.some((a) => a.scope === scope))
                                        .reduce((s, b) => s + b.bytes, 0);
        return { wasm: worker.wasmBytes, workerJs: js("DedicatedWorkerGlobalScope"), pageJs: js("Window") };
    };
    await tts._playerReady();  // the player's ring (8 MB, once per page) is made before measuring
    const refs = [];
    for (const [text, options] of references) {
        const chunks = [];
        const began = performance.now();
        let firstAt = null;
        const onAudio = (c) => { firstAt ??= performance.now() - began; chunks.push(c.length); };
        const speech = await tts.speak(text, { ...options, onAudio });
        refs.push({ text, options, audio: speech.audio, words: JSON.stringify(speech.words), chunks,
                    ms: performance.now() - began, firstMs: firstAt });
    }
    window.stress = { refs, heap, requests: references.length, trials: [], mismatches: [] };
    window.stress.before = { heap: await heap(), objects: (await tts.stats()).objects };
    return refs.map((r) => ({ ms: r.ms, firstMs: r.firstMs, chunks: r.chunks }));
}"""

# One cancel trial, one verification when asked, one concurrent batch when asked.
ROUND = """async (plan) => {
    const tts = window.tts, S = window.stress;
    const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
    const prefixOf = (part, whole) => part.length <= whole.length && part.every((x, i) => x === whole[i]);
    const worker = tts._connection.worker;
    for (const step of plan) {
        if (step.kind === "batch") {
            const got = await Promise.all(step.refs.map((i) => tts.speak(S.refs[i].text, S.refs[i].options)));
            S.requests += got.length;
            got.forEach((s, k) => {
                const r = S.refs[step.refs[k]];
                if (!same(s.audio, r.audio) || JSON.stringify(s.words) !== r.words) {
                    S.mismatches.push(["batch", step.refs[k]]);
                }
            });
            continue;
        }
        const r = S.refs[step.ref];
        if (step.kind === "verify") {
            const s = await tts.speak(r.text, r.options);
            S.requests++;
            if (!same(s.audio, r.audio) || JSON.stringify(s.words) !== r.words) {
                S.mismatches.push(["verify", step.ref]);
            }
            continue;
        }
        // a cancel trial: abort after step.delay ms
        const controller = new AbortController();
        const got = [];
        let spoken = false;
        const options = { ...r.options, signal: controller.signal, onAudio: (c) => got.push(...c) };
        const id = tts._connection.next;
        let workerDone = null;
        const listen = (e) => {
            const end = e.data?.type === "error" || e.data?.type === "result";
            if (e.data?.id === id && end) workerDone = performance.now();
        };
        worker.addEventListener("message", listen);
        const request = step.play
            ? tts.play(r.text, { ...options, onSpeech: () => { spoken = true; } })
            : tts.speak(r.text, options);
        let settledAt = null, outcome = null;
        request.then(() => { outcome = "finished"; settledAt = performance.now(); },
                     (e) => { outcome = e.name; settledAt = performance.now(); });
        // a playing request is cancelled step.delay ms into its playback, others into the request
        const tick = () => new Promise((resolve) => setTimeout(resolve, 2));
        while (step.play && !spoken && outcome === null) await tick();
        await new Promise((resolve) => setTimeout(resolve, step.delay));
        const phase = outcome ? "after"
            : step.play && spoken ? "mid-playback" : got.length ? "mid-take" : "prefill";
        const abortAt = performance.now();
        controller.abort();
        while (outcome === null) await new Promise((resolve) => setTimeout(resolve, 1));
        while (workerDone === null) await new Promise((resolve) => setTimeout(resolve, 2));
        worker.removeEventListener("message", listen);
        S.requests++;
        const samples = Float32Array.from(got);
        if (!prefixOf(samples, r.audio)) S.mismatches.push(["cancelled request's chunks", step.ref]);
        S.trials.push({ phase, outcome, play: step.play, delay: step.delay,
                        rejectMs: phase === "after" ? null : settledAt - abortAt,
                        workerStopMs: Math.max(0, workerDone - abortAt), samples: samples.length });
    }
    return S.requests;
}"""

FINISH = """async () => {
    const S = window.stress, tts = window.tts;
    return { before: S.before, after: { heap: await S.heap(), objects: (await tts.stats()).objects },
             trials: S.trials, mismatches: S.mismatches, requests: S.requests };
}"""


def plan_rounds(rng: random.Random, refs_ms: list[float]) -> list[list[dict]]:
    """100 cancel trials, each followed by a batch of three (one-frame references) or a verification."""
    rounds, batches = [], 0
    for trial in range(100):
        play = trial % 10 == 9  # every tenth through tts.play, cancelled while it plays (~0.2 s)
        ref = 0 if trial % 3 else rng.randrange(4)
        delay = rng.uniform(0, 150) if play else rng.uniform(0, refs_ms[ref])
        steps = [{"kind": "trial", "ref": ref, "delay": round(delay), "play": play}]
        if trial % 10 == 4 and trial < 90:  # 9 verifications
            steps.append({"kind": "verify", "ref": rng.randrange(4)})
        elif batches < 29:
            steps.append({"kind": "batch", "refs": rng.sample(range(1, 4), 3)})
            batches += 1
        rounds.append(steps)
    return rounds


def test_cancel_concurrency_and_soak_over_200_requests(loaded, record_property):
    refs = loaded.evaluate(SETUP, REFERENCES)
    assert refs[0]["chunks"] == [1920, 1920]  # the 2-frame reference has a point between its chunks
    rng = random.Random(6)
    rounds = plan_rounds(rng, [r["ms"] for r in refs])
    for at in range(0, len(rounds), 20):  # in slices, so that a hang shows where it is
        loaded.evaluate(ROUND, [s for r in rounds[at : at + 20] for s in r])
    out = loaded.evaluate(FINISH)

    trials = out["trials"]
    names = ("prefill", "mid-take", "mid-playback", "after")
    phases = {p: sum(t["phase"] == p for t in trials) for p in names}
    cancelled = [t for t in trials if t["phase"] != "after"]
    reject = sorted(t["rejectMs"] for t in cancelled)
    stop = sorted(t["workerStopMs"] for t in cancelled if not t["play"] or t["phase"] != "mid-playback")
    growth = {k: out["after"]["heap"][k] - out["before"]["heap"][k] for k in out["before"]["heap"]}
    figures = {
        "requests": out["requests"],
        "cancel_points": len(trials),
        "phases": phases,
        "reject_ms_median_max": [round(reject[len(reject) // 2], 1), round(reject[-1], 1)],
        "worker_stop_ms_median_max": [round(stop[len(stop) // 2]), round(stop[-1])],
        "heap_before": out["before"]["heap"],
        "heap_growth": growth,
        "objects": out["after"]["objects"],
    }
    for key, value in figures.items():
        record_property(key, value)
    print("\nstress:", figures)

    assert out["requests"] == 200 and len(trials) == 100
    assert not out["mismatches"], out["mismatches"]
    assert phases["prefill"] >= 10 and phases["mid-take"] >= 10 and phases["mid-playback"] >= 5
    assert all(t["outcome"] == "AbortError" for t in cancelled)
    assert reject[-1] < 50  # the caller is answered at once
    # the worker stops at its next chunk: typically sooner than a whole reference request takes, and
    # always within a few (the GPU finishes what was submitted; two cores shared with other work)
    longest = max(r["ms"] for r in refs)
    assert stop[len(stop) // 2] < longest and stop[-1] < 3 * longest
    assert out["after"]["objects"] == out["before"]["objects"]  # nothing on the GPU per request
    assert growth["wasm"] <= WASM_GROWTH_BYTES
    assert growth["workerJs"] < JS_GROWTH_BYTES and growth["pageJs"] < JS_GROWTH_BYTES
