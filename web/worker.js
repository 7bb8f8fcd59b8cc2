// The Phonon worker (a module worker started by phonon.mjs): Python (Pyodide) and the GPU live here,
// so the page's thread never stalls while the model loads or speaks.
//
// worker-boot.js boots Pyodide and our wheel from checked bytes; worker-files.js brings the model's
// files (Cache Storage or the network, retried, checked by SHA-256); worker-messages.js says which
// messages are accepted; phonon_web/web/runtime.py (Python) builds the engine and speaks.
//
// Messages in:  {type: "load", id, siteURL, weightsURL, ...}  {type: "speak", id, text, options}
//               {type: "cancel", id}  {type: "stats", id}  {type: "close", id}  ... (worker-messages.js)
// Messages out: {type: "progress", id, loaded, total}  {type: "audio", id, samples}
//               {type: "warning", id, code, message}  {type: "result", id, value}
//               {type: "error", id, error: {name, message}}
// Requests run one at a time, in order. "cancel" is handled at once: a request not started yet is
// answered CancelledError without running; a running one stops at its next chunk.
//
// A lost GPU device fails the request that sees it (DeviceLostError); the next request opens a new
// device and builds a new engine from the files this worker keeps (`model`), then speaks.

import { refusal } from "./worker-messages.js";
import { modelFiles, phononError, RETRY } from "./worker-files.js";
import { bootPython } from "./worker-boot.js";

const TEST_HOOKS = new URL(self.location.href).searchParams.has("test-hooks");

let python = null; // {pyodide, module, runtime} once booted
let model = null; // {files, options}: what load() built the engine from, kept to build it again
const inFlight = new Set(); // ids queued or running
const cancelled = new Set();
let chain = Promise.resolve();

self.onmessage = (event) => {
  const message = event.data;
  const problem = refusal(message, TEST_HOOKS);
  if (problem) {
    const id = Number.isSafeInteger(message?.id) && message.id > 0 ? message.id : null;
    reply({ type: "error", id, error: { name: "MessageError", message: `the Phonon worker refused a message: ${problem}` } });
    return;
  }
  if (message.type === "cancel") {
    if (inFlight.has(message.id)) cancelled.add(message.id);
    return;
  }
  if (message.type === "_loseDevice") {
    // now, not in turn: the test destroys the device under a running request
    python?.runtime.lose_device();
    reply({ type: "result", id: message.id, value: null });
    return;
  }
  if (inFlight.has(message.id)) {
    reply({ type: "error", id: message.id, error: { name: "MessageError", message: `request id ${message.id} is already in use` } });
    return;
  }
  inFlight.add(message.id);
  chain = chain.then(() => handle(message));
};

function reply(message, transfer = []) {
  self.postMessage(message, transfer);
}

async function handle(message) {
  const { id } = message;
  try {
    if (cancelled.has(id)) throw phononError("CancelledError", "the request was cancelled before it started");
    const [value, transfer] = await HANDLERS[message.type](message);
    reply({ type: "result", id, value }, transfer || []);
  } catch (e) {
    reply({ type: "error", id, error: describe(e) });
  } finally {
    cancelled.delete(id);
    inFlight.delete(id);
  }
}

function describe(e) {
  if (e && typeof e === "object") return { name: String(e.name || "Error"), message: String(e.message || e) };
  return { name: "Error", message: String(e) };
}

function unwrap(result) {
  // runtime.py answers {ok: value} or {error: {name, message}}
  if (result.error) throw phononError(result.error.name, result.error.message);
  return result.ok;
}

function notLoaded() {
  return phononError("NotLoadedError", "no model is loaded in this worker: call Phonon.load() first");
}

// The engine, built again on a new device when the last one was lost.
async function readyEngine() {
  if (!python || !model) throw notLoaded();
  if (python.runtime.needs_engine()) await buildEngine();
}

async function buildEngine() {
  const { files, options } = model;
  return unwrap(await python.runtime.load(files.manifestText, files.weights, files.tokenizerText, files.voices, options));
}

async function siteInfo(siteURL) {
  let response;
  try {
    response = await fetch(new URL("phonon-site.json", siteURL), { cache: "no-cache" });
  } catch (e) {
    throw phononError("DownloadError", `could not fetch phonon-site.json from ${siteURL} (${e.message}): check the network connection`);
  }
  if (!response.ok) throw phononError("DownloadError", `phonon-site.json: HTTP ${response.status} from ${siteURL}`);
  return response.json();
}

async function boot(m, site, times, began) {
  if (python) return python;
  if (m.wheelURL && !m.wheelSha256) {
    throw phononError("OptionError", "wheelURL needs wheelSha256 (the wheel's SHA-256, hex): the worker runs only code it has checked");
  }
  return bootPython({
    pyodideURL: m.pyodideURL || new URL(site.pyodide, m.siteURL).href,
    wheelURL: m.wheelURL || new URL(site.wheel, m.siteURL).href,
    wheelSha256: m.wheelURL ? m.wheelSha256 : site.wheelSha256,
    site,
    retry: m.retry || RETRY,
    times,
    began,
  });
}

function warner(id, into) {
  return (code, message) => {
    console.warn(`phonon: ${message}`);
    into.push({ code, message });
    reply({ type: "warning", id, code, message });
  };
}

const HANDLERS = {
  async load(m) {
    const began = performance.now();
    const times = {};
    const warnings = [];
    const site = await siteInfo(m.siteURL);
    // The default weights are pinned by the site's build; other weights by the page (manifestSha256).
    const ownWeights = new URL("weights/", m.siteURL).href === new URL(m.weightsURL.replace(/\/?$/, "/")).href;
    // Python boots (CPU-bound) while the weights download or come out of the cache.
    const booting = boot(m, site, times, began);
    booting.catch(() => {}); // awaited below; a failure of the files first must not go unhandled
    const files = await modelFiles({
      weightsURL: m.weightsURL,
      voices: m.voices,
      refresh: m.refresh,
      manifestSha256: m.manifestSha256 || (ownWeights ? site.weightsManifestSha256 : null),
      retry: m.retry || RETRY,
      progress: (loaded, total) => reply({ type: "progress", id: m.id, loaded, total }),
      warn: warner(m.id, warnings),
      failPut: m.test?.failCachePut,
    });
    times.filesSeconds = (performance.now() - began) / 1000;
    python = await booting;
    const engineBegan = performance.now();
    model = {
      files,
      options: JSON.stringify({ engine: m.engine, subgroups: m.subgroups, featureLevel: m.featureLevel }),
    };
    const info = await buildEngine();
    times.engineSeconds = (performance.now() - engineBegan) / 1000;
    times.totalSeconds = (performance.now() - began) / 1000;
    return [{ ...info, fromCache: files.fromCache, warnings, times, pyodideVersion: python.pyodide.version }];
  },

  async speak(m) {
    await readyEngine();
    const id = m.id;
    const onAudio = (samples) => {
      const own = owned(samples);
      reply({ type: "audio", id, samples: own }, [own.buffer]);
    };
    const shouldStop = () => cancelled.has(id);
    const value = unwrap(await python.runtime.speak(m.text, JSON.stringify(m.options), onAudio, shouldStop));
    value.audio = owned(value.audio);
    return [value, [value.audio.buffer]];
  },

  async stats() {
    return [python ? unwrap(python.runtime.stats()) : null];
  },

  async measureEncoding(m) {
    await readyEngine();
    return [unwrap(await python.runtime.measure_encoding(m.steps, m.repeats))];
  },

  async resetStats() {
    if (python) python.runtime.reset_stats();
    return [null];
  },

  async close() {
    if (python) python.runtime.close();
    model = null;
    return [null];
  },

  // ---- test hooks (only with ?test-hooks; see worker-messages.js) ----

  async _python(m) {
    if (!python) {
      const site = await siteInfo(m.siteURL);
      python = await boot({ siteURL: m.siteURL }, site, {}, performance.now());
    }
    const result = await python.pyodide.runPythonAsync(m.code);
    return [typeof result === "string" ? result : JSON.stringify(result ?? null)];
  },

  // The download layer alone (no Python, no GPU): what the fault-injection tests drive.
  async _files(m) {
    const warnings = [];
    const files = await modelFiles({
      weightsURL: m.weightsURL,
      voices: m.voices,
      refresh: m.refresh,
      retry: m.retry || RETRY,
      progress: () => {},
      warn: warner(m.id, warnings),
      failPut: m.test?.failCachePut,
    });
    return [{ fromCache: files.fromCache, attempts: files.attempts, warnings, weightsBytes: files.weights.length }];
  },

  async _heap() {
    const memory = python?.pyodide._module?.HEAP8?.length ?? null;
    return [{ wasmBytes: memory, jsUsedBytes: self.performance?.memory?.usedJSHeapSize ?? null }];
  },
};

function owned(array) {
  // A typed array with a buffer of its own, safe to transfer (never a view of the wasm heap).
  return array.byteOffset === 0 && array.buffer.byteLength === array.byteLength ? array : array.slice();
}
