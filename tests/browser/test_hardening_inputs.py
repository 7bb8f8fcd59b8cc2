"""Bad input through Phonon.speak / Phonon.load: a typed PhononError in plain words, and the engine
speaks the reference sentence exactly as before afterwards.

The cases are the shared corpus tests/data/bad_inputs.json (decoded here in JavaScript, as a page
would hold them: lone surrogates as JS strings, NaN as NaN, a BigInt seed as a BigInt), plus what
only a page can do wrong (JS_ONLY). Scenarios that need another weights folder are covered by the
download tests (a wrong hash, a truncated file) and natively; the 100,000-character text is a native
test (on SwiftShader it would take an hour of frames).

In the browser a corpus case's "CancelledError" is the signal's AbortError, as for any web API, and
the cases that speak make one frame unless they say otherwise (SwiftShader takes about a second a
frame here).
"""

import json

import pytest

from tests.bad_inputs import CORPUS

from .conftest import SENTENCE

# Runs every case in the page; after every CHECK_EVERY cases and at the end, the reference request
# must give the very samples it gave first.
RUN_CORPUS = """async ([raw, cases, checkEvery]) => {
    const tts = window.tts;
    const decode = (v) => {
        if (Array.isArray(v)) return v.map(decode);
        if (v === null || typeof v !== "object") return v;
        const keys = Object.keys(v).sort().join();
        if (keys === "special") return v.special === "cancelled" ? AbortSignal.abort() : Number(v.special);
        if (keys === "codepoints") return v.codepoints.map((c) => String.fromCodePoint(c)).join("");
        if (keys === "repeat,times") return v.repeat.repeat(v.times);
        if (keys === "bigint") return BigInt(v.bigint);
        return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, decode(x)]));
    };
    const jsOptions = (options) => {
        const out = {};
        for (const [k, v] of Object.entries(options)) {
            out[{ max_frames: "maxFrames", cancel: "signal" }[k] ?? k] = v;
        }
        return out;
    };
    const corpus = JSON.parse(raw);
    const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
    const ref = decode(corpus.reference);
    const speakRef = () => tts.speak(ref.text, jsOptions(ref.options));
    const first = await speakRef();
    const outcome = async (text, options) => {
        try {
            const s = await tts.speak(text, options);
            return { name: "speaks", speech: s };
        } catch (e) {
            return { name: e.name, message: e.message, typed: e instanceof window.Phonon.PhononError };
        }
    };
    const results = [];
    let checks = 0, checksFailed = 0;
    for (const [i, c] of cases.entries()) {
        const options = jsOptions({ ...decode(corpus.defaults), max_frames: 1, ...decode(c.options) });
        const got = await outcome(decode(c.text), options);
        const row = { name: c.name, expect: c.expect, got: got.name,
                      message: got.message ?? null, typed: got.typed ?? null };
        if (got.speech) {
            const s = got.speech;
            const times = s.words.flatMap((w) => [w.start, w.end]);
            row.sane = s.audio.length === s.frames * 1920 && s.frames >= 1
                && times.every((t, k) => k === 0 || t >= times[k - 1]);
            if (c.same_as) {
                const twin = await tts.speak(decode(c.text), jsOptions({ ...options, ...decode(c.same_as) }));
                row.sameAsTwin = same(s.audio, twin.audio);
            }
        }
        results.push(row);
        if ((i + 1) % checkEvery === 0 || i === cases.length - 1) {
            checks++;
            if (!same((await speakRef()).audio, first.audio)) checksFailed++;
        }
    }
    return { results, checks, checksFailed, referenceFrames: first.frames };
}"""

# What only JavaScript can get wrong: [label, text expression, options expression, expected name]
JS_ONLY = [
    ("text undefined", "undefined", "{}", "TextError"),
    ("text a function", "() => 'Hello'", "{}", "TextError"),
    ("text a Symbol", "Symbol('Hello')", "{}", "TextError"),
    ("text a String object", "new String('Hello')", "{}", "TextError"),
    ("text a BigInt", "5n", "{}", "TextError"),
    ("options a string", "'Hello.'", "'fast'", "OptionError"),
    ("options an array", "'Hello.'", "[1, 2]", "OptionError"),
    ("a misspelt option", "'Hello.'", "{ sped: 1.1 }", "OptionError"),
    ("speed a BigInt", "'Hello.'", "{ speed: 1n }", "OptionError"),
    ("speed an object", "'Hello.'", "{ speed: { value: 1 } }", "OptionError"),
    ("seed Infinity", "'Hello.'", "{ seed: Infinity }", "OptionError"),
    ("seed beyond 2**53", "'Hello.'", "{ seed: 2 ** 60 }", "OptionError"),
    ("voice an object", "'Hello.'", "{ voice: { name: 'Delia' } }", "VoiceError"),
    ("onAudio not a function", "'Hello.'", "{ onAudio: 'log' }", "OptionError"),
    ("signal not an AbortSignal", "'Hello.'", "{ signal: { aborted: true } }", "OptionError"),
    ("signal already aborted", "'Hello.'", "{ signal: AbortSignal.abort() }", "AbortError"),
    ("normalize a number", "'Hello.'", "{ normalize: 1 }", "OptionError"),
    ("maxFrames a string", "'Hello.'", "{ maxFrames: '2' }", "OptionError"),
]

BAD_LOADS = [
    ("options a number", "5", "OptionError"),
    ("an unknown option", "{ weigths: 'weights/' }", "OptionError"),
    ("weights not a URL", "{ weights: 42 }", "OptionError"),
    ("voices a string", "{ voices: 'Delia' }", "VoiceError"),
    ("voices empty", "{ voices: [] }", "VoiceError"),
    ("an unknown voice", "{ voices: ['Nobody'], retry: { attempts: 1, delayMs: 0 } }", "VoiceError"),
    ("progress not a function", "{ progress: 1 }", "OptionError"),
    ("refresh a string", "{ refresh: 'yes' }", "OptionError"),
    ("retry unbounded", "{ retry: { attempts: 1000, delayMs: 0 } }", "OptionError"),
    ("a bad featureLevel", "{ featureLevel: 'turbo' }", "OptionError"),
    ("wheelURL without its hash", "{ wheelURL: 'wheels/x.whl' }", "OptionError"),
    (
        "weights where there are none",
        "{ weights: 'nowhere/', retry: { attempts: 2, delayMs: 0 } }",
        "DownloadError",
    ),
    ("signal already aborted", "{ signal: AbortSignal.abort() }", "AbortError"),
]


def test_the_corpus_gets_typed_errors_and_the_engine_speaks_alike_after(loaded, record_property):
    corpus = json.loads(CORPUS.read_text(encoding="utf-8"))
    cases = [c for c in corpus["cases"] if c.get("only", "browser") == "browser" and "scenario" not in c]
    assert len(cases) >= 40
    out = loaded.evaluate(RUN_CORPUS, [CORPUS.read_text(encoding="utf-8"), cases, 16])
    record_property("corpus_cases", len(out["results"]))
    wrong = []
    for row in out["results"]:
        expect = "AbortError" if row["expect"] == "CancelledError" else row["expect"]
        if row["got"] != expect:
            wrong.append(row)
        elif expect == "speaks":
            if not row["sane"] or row.get("sameAsTwin") is False:
                wrong.append(row)
        elif expect != "AbortError" and not (row["typed"] and len(row["message"]) > 20):
            wrong.append(row)  # a PhononError with words, not a bare name
    assert not wrong, wrong
    assert out["checks"] >= 4 and out["checksFailed"] == 0


@pytest.mark.parametrize("label, text, options, name", JS_ONLY, ids=[c[0] for c in JS_ONLY])
def test_what_only_a_page_can_get_wrong(loaded, label, text, options, name):
    got = loaded.evaluate(
        f"""async () => window.tts.speak({text}, {options}).then(
            () => null, (e) => [e.name, e.message, e instanceof window.Phonon.PhononError])"""
    )
    assert got is not None and got[0] == name, got
    if name != "AbortError":
        assert got[2] and len(got[1]) > 20  # typed, in words


def test_bad_load_options_are_typed_errors(loaded):
    # the options are written into the function's source: the page's policy forbids eval (rightly)
    cases = ",\n".join(f"[{label!r}, () => ({expr})]" for label, expr, _ in BAD_LOADS)
    got = loaded.evaluate(
        f"""async () => {{
            const out = {{}};
            for (const [label, options] of [{cases}]) {{
                out[label] = await window.Phonon.load(options()).then(
                    (t) => {{ t.close(); return ["loaded"]; }}, (e) => [e.name, e.message]);
            }}
            return out;
        }}"""
    )
    for label, _, name in BAD_LOADS:
        assert got[label][0] == name, (label, got[label])
        if name != "AbortError":
            assert len(got[label][1]) > 20


def test_load_twice_is_the_same_engine_and_close_is_per_caller(loaded, server):
    before = len(server.requests)
    out = loaded.evaluate(
        """async (text) => {
            const again = await window.Phonon.load({ testHooks: true });
            const shared = again._connection === window.tts._connection;
            const a = await again.speak(text, { seed: 4, maxFrames: 2 });
            const b = await window.tts.speak(text, { seed: 4, maxFrames: 2 });
            await again.close();
            await again.close(); // twice is harmless
            const afterClose = await again.speak(text).then(() => null, (e) => [e.name, e.message]);
            const stillThere = (await window.tts.speak(text, { seed: 4, maxFrames: 2 })).audio;
            const same = (x, y) => x.length === y.length && x.every((v, i) => v === y[i]);
            return { shared, same: same(a.audio, b.audio) && same(a.audio, stillThere), afterClose,
                     closed: again.closed };
        }""",
        SENTENCE,
    )
    assert out["shared"] and out["same"] and out["closed"]
    assert out["afterClose"][0] == "ClosedError" and "Phonon.load()" in out["afterClose"][1]
    assert [r for r in server.requests[before:] if r.startswith("/weights/")] == []  # nothing loaded again


def test_garbage_messages_get_typed_refusals_and_the_worker_keeps_working(loaded):
    out = loaded.evaluate(
        """async (text) => {
            const worker = window.tts._connection.worker;
            const replies = [];
            const listen = (e) => { if (e.data?.id == null || e.data.id >= 900000) replies.push(e.data); };
            worker.addEventListener("message", listen);
            const garbage = [
                null, 7, "speak", [], {}, { type: 5 }, { type: "speak" },
                { type: "speak", id: -1, text: "a", options: {} },
                { type: "speak", id: 1.5, text: "a", options: {} },
                { type: "speak", id: 900001 }, { type: "speak", id: 900002, text: 5, options: {} },
                { type: "speak", id: 900003, text: "a", options: null },
                { type: "speak", id: 900004, text: "a", options: {}, extra: true },
                { type: "__proto__", id: 900005 }, { type: "toString", id: 900006 },
                { type: "constructor", id: 900007 },
                { type: "load", id: 900008, siteURL: "javascript:alert(1)", weightsURL: "x" },
                { type: "measureEncoding", id: 900009, steps: 1e12, repeats: 1 },
                { type: "_python", id: 900010, siteURL: location.href, code: "1" },  // hooks on: valid
                { type: "_python", id: 900011, code: 5 },
                { type: "cancel", id: "all" },
                { type: "speak", id: 900012, text, options: { max_frames: 1 } },
                { type: "speak", id: 900012, text, options: { max_frames: 1 } },  // an id in use
            ];
            for (const g of garbage) worker.postMessage(g);
            const speech = await window.tts.speak(text, { maxFrames: 1 });
            await new Promise((r) => setTimeout(r, 200));
            worker.removeEventListener("message", listen);
            return { sent: garbage.length, replies, frames: speech.frames };
        }""",
        SENTENCE,
    )
    refusals = [r for r in out["replies"] if r["type"] == "error"]
    assert all(r["error"]["name"] == "MessageError" for r in refusals), refusals
    words = [r["error"]["message"] for r in refusals]
    assert all("refused a message" in w or "in use" in w for w in words)
    answered = {r["id"] for r in out["replies"]}
    assert {900001, 900002, 900003, 900004, 900005, 900006, 900007, 900008, 900009, 900011} <= answered
    results = [r for r in out["replies"] if r["type"] == "result"]
    assert sorted(r["id"] for r in results) == [900010, 900012]  # _python (hooks are on) and one speak
    assert len(refusals) == out["sent"] - 2
    assert out["frames"] == 1  # and the worker still speaks


def test_test_hooks_are_unknown_messages_in_a_normal_worker(loaded):
    out = loaded.evaluate(
        """async () => {
            const worker = new Worker("worker.js", { type: "module" });
            const replies = [];
            worker.onmessage = (e) => replies.push(e.data);
            for (const [i, type] of ["_python", "_loseDevice", "_files", "_heap"].entries()) {
                worker.postMessage({ type, id: i + 1, siteURL: location.href, code: "1" });
            }
            await new Promise((r) => setTimeout(r, 500));
            worker.terminate();
            return replies;
        }"""
    )
    assert len(out) == 4
    assert all(r["error"]["name"] == "MessageError" for r in out)
    assert all("unknown message type" in r["error"]["message"] for r in out)
