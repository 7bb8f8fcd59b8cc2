// The Phonon worker (a module worker started by phonon.mjs): Python (Pyodide) and the GPU live here,
// so the page's thread never stalls while the model loads or speaks.
//
// Boot: Pyodide from the site's own copy (`pyodide/`: pyodide.mjs, pyodide.asm.mjs, pyodide.asm.wasm,
// python_stdlib.zip, pyodide-lock.json from the npm package `pyodide`, pinned by the build), then our
// pure-Python wheel, unpacked straight into Pyodide's site-packages (`pyodide.unpackArchive`, no
// micropip: the package has no dependencies). Both URLs can be overridden by the page.
//
// Weights: manifest.json, weights.bin, tokenizer.json and the chosen voices, downloaded with progress,
// each checked against the SHA-256 its manifest gives (crypto.subtle) and stored in Cache Storage.
// Later loads read them from the cache without a network request; an entry whose hash no longer
// matches (corrupt, truncated) is dropped and downloaded again.
//
// Messages in:  {type: "load", id, siteURL, weightsURL, pyodideURL, wheelURL, voices, refresh, engine}
//               {type: "speak", id, text, options}     {type: "cancel", id}     {type: "stats", id}
// Messages out: {type: "progress", id, loaded, total}  {type: "audio", id, samples}
//               {type: "result", id, value}            {type: "error", id, error: {name, message}}
// Requests run one at a time, in order; "cancel" is handled at once (the engine polls it per chunk).

const CACHE_NAME = "phonon-weights-v1";

let python = null; // {pyodide, module, runtime: {load, speak, ...}} (the Python functions, as PyProxies)
const cancelled = new Set();
let chain = Promise.resolve();

self.onmessage = (event) => {
  const message = event.data;
  if (message.type === "cancel") {
    cancelled.add(message.id);
    return;
  }
  chain = chain.then(() => handle(message));
};

async function handle(message) {
  const handler = HANDLERS[message.type];
  try {
    if (!handler) throw error("InternalError", `unknown message ${message.type}`);
    const [value, transfer] = await handler(message);
    self.postMessage({ type: "result", id: message.id, value }, transfer || []);
  } catch (e) {
    self.postMessage({ type: "error", id: message.id, error: describe(e) });
  } finally {
    cancelled.delete(message.id);
  }
}

function error(name, message) {
  const e = new Error(message);
  e.name = name;
  return e;
}

function describe(e) {
  if (e && typeof e === "object") return { name: e.name || "Error", message: String(e.message || e) };
  return { name: "Error", message: String(e) };
}

function unwrap(result) {
  // runtime.py answers {ok: value} or {error: {name, message}}
  if (result.error) throw error(result.error.name, result.error.message);
  return result.ok;
}

const HANDLERS = {
  async load(m) {
    const began = performance.now();
    const times = {};
    const site = await siteInfo(m.siteURL);
    const pyodideURL = m.pyodideURL || new URL(site.pyodide, m.siteURL).href;
    const wheelURL = m.wheelURL || new URL(site.wheel, m.siteURL).href;
    // Python boots (CPU-bound) while the weights download or come out of the cache.
    const booting = python ? Promise.resolve(python) : bootPython(pyodideURL, wheelURL, times, began);
    const files = await modelFiles(m.weightsURL, m.voices, !!m.refresh, (loaded, total) =>
      self.postMessage({ type: "progress", id: m.id, loaded, total }),
    );
    times.filesSeconds = (performance.now() - began) / 1000;
    python = await booting;
    const engineBegan = performance.now();
    const info = unwrap(
      await python.runtime.load(
        files.manifestText,
        files.weights,
        files.tokenizerText,
        files.voices,
        JSON.stringify({ engine: m.engine || {}, subgroups: m.subgroups !== false, featureLevel: m.featureLevel }),
      ),
    );
    times.engineSeconds = (performance.now() - engineBegan) / 1000;
    times.totalSeconds = (performance.now() - began) / 1000;
    return [{ ...info, fromCache: files.fromCache, times, pyodideVersion: python.pyodide.version }];
  },

  async speak(m) {
    if (!python) throw error("PhononError", "no model is loaded: call Phonon.load() first");
    const id = m.id;
    const onAudio = (samples) => {
      const own = owned(samples);
      self.postMessage({ type: "audio", id, samples: own }, [own.buffer]);
    };
    const shouldStop = () => cancelled.has(id);
    const value = unwrap(await python.runtime.speak(m.text, JSON.stringify(m.options || {}), onAudio, shouldStop));
    value.audio = owned(value.audio);
    return [value, [value.audio.buffer]];
  },

  async stats() {
    return [python ? unwrap(python.runtime.stats()) : null];
  },

  async measureEncoding(m) {
    if (!python) throw error("PhononError", "no model is loaded: call Phonon.load() first");
    return [unwrap(await python.runtime.measure_encoding(m.steps || 20, m.repeats || 3))];
  },

  async resetStats() {
    if (python) python.runtime.reset_stats();
    return [null];
  },

  async close() {
    if (python) python.runtime.close();
    return [null];
  },

  // Test hook: run Python source in the worker's interpreter and return its result (JSON text).
  async _python(m) {
    if (!python) {
      const site = await siteInfo(m.siteURL);
      python = await bootPython(new URL(site.pyodide, m.siteURL).href, new URL(site.wheel, m.siteURL).href, {}, performance.now());
    }
    const result = await python.pyodide.runPythonAsync(m.code);
    return [typeof result === "string" ? result : JSON.stringify(result ?? null)];
  },
};

function owned(array) {
  // A typed array with a buffer of its own, safe to transfer (never a view of the wasm heap).
  return array.byteOffset === 0 && array.buffer.byteLength === array.byteLength ? array : array.slice();
}

async function siteInfo(siteURL) {
  const response = await fetch(new URL("phonon-site.json", siteURL));
  if (!response.ok) throw error("DownloadError", `phonon-site.json: HTTP ${response.status} from ${siteURL}`);
  return response.json();
}

async function bootPython(pyodideURL, wheelURL, times, began) {
  if (!pyodideURL.endsWith("/")) pyodideURL += "/";
  const { loadPyodide } = await import(pyodideURL + "pyodide.mjs");
  const pyodide = await loadPyodide({
    indexURL: pyodideURL,
    lockFileURL: pyodideURL + "pyodide-lock.json",
    stdout: (line) => console.log(line),
    stderr: (line) => console.warn(line),
  });
  times.pythonSeconds = (performance.now() - began) / 1000;
  const response = await fetch(wheelURL);
  if (!response.ok) throw error("DownloadError", `the phonon_web wheel: HTTP ${response.status} from ${wheelURL}`);
  pyodide.unpackArchive(await response.arrayBuffer(), "wheel");
  // The module and its functions, looked up once: every attribute read on a PyProxy makes a new proxy.
  const module = pyodide.pyimport("phonon_web.web.runtime");
  const runtime = {};
  for (const name of ["load", "speak", "stats", "reset_stats", "measure_encoding", "close"]) runtime[name] = module[name];
  times.packageSeconds = (performance.now() - began) / 1000;
  return { pyodide, module, runtime };
}

// ---- the model's files: network or Cache Storage, always checked -------------------------------

async function sha256(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

function cacheKey(url, hash) {
  // The hash is part of the key: a new build at the same URL never reads an old build's bytes.
  const key = new URL(url);
  key.searchParams.set("phonon-sha256", hash);
  return key.href;
}

async function openCache() {
  try {
    return await caches.open(CACHE_NAME);
  } catch {
    return null; // no Cache Storage (e.g. an opaque origin): download every time
  }
}

async function download(url, expectedBytes, onBytes) {
  let response;
  try {
    response = await fetch(url, { cache: "no-store" });
  } catch (e) {
    throw error("DownloadError", `could not download ${url}: ${e.message || e}`);
  }
  if (!response.ok) throw error("DownloadError", `could not download ${url}: HTTP ${response.status}`);
  if (expectedBytes == null || !response.body) {
    const bytes = new Uint8Array(await response.arrayBuffer());
    onBytes(bytes.length);
    return bytes;
  }
  const out = new Uint8Array(expectedBytes);
  const reader = response.body.getReader();
  let at = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (at + value.length > expectedBytes) {
      reader.cancel();
      throw error("WeightsError", `${url} is longer than its manifest says (${expectedBytes} bytes): download it again or rebuild it`);
    }
    out.set(value, at);
    at += value.length;
    onBytes(value.length);
  }
  if (at !== expectedBytes) {
    throw error("WeightsError", `${url} is truncated (${at} of ${expectedBytes} bytes): download it again`);
  }
  return out;
}

async function checkedFile(cache, url, entry, refresh, onBytes, stats) {
  const key = cacheKey(url, entry.sha256);
  if (cache && !refresh) {
    const cached = await cache.match(key);
    if (cached) {
      const bytes = new Uint8Array(await cached.arrayBuffer());
      if (bytes.length === entry.bytes && (await sha256(bytes)) === entry.sha256) {
        stats.fromCache += 1;
        onBytes(bytes.length);
        return bytes;
      }
      console.warn(`phonon: the cached ${url} is corrupt; downloading it again`);
      stats.repaired += 1;
      await cache.delete(key);
    }
  }
  let counted = 0;
  const bytes = await download(url, entry.bytes, (n) => {
    counted += n;
    onBytes(n);
  });
  const actual = await sha256(bytes);
  if (actual !== entry.sha256) {
    onBytes(-counted);
    throw error(
      "WeightsError",
      `${url} is corrupt or from another build (SHA-256 ${actual.slice(0, 12)}…, its manifest says ` +
        `${entry.sha256.slice(0, 12)}…): rebuild the weights or download them again`,
    );
  }
  if (cache) {
    await cache.put(key, new Response(bytes, { headers: { "Content-Type": "application/octet-stream" } }));
  }
  stats.downloaded += 1;
  return bytes;
}

async function readManifest(cache, url, refresh) {
  if (cache && !refresh) {
    const cached = await cache.match(url);
    if (cached) {
      try {
        const text = await cached.text();
        return { text, manifest: checkManifest(JSON.parse(text), url), cached: true };
      } catch {
        await cache.delete(url); // unreadable: fetch it again
      }
    }
  }
  const bytes = await download(url, null, () => {});
  const text = new TextDecoder().decode(bytes);
  let manifest;
  try {
    manifest = checkManifest(JSON.parse(text), url);
  } catch (e) {
    throw error("WeightsError", `${url} is not a phonon-web weights manifest (${e.message}): point weights at the folder build_weights.py wrote`);
  }
  return { text, manifest, cached: false };
}

function checkManifest(manifest, url) {
  const files = [manifest.weights, manifest.tokenizer, ...(manifest.voices || [])];
  if (manifest.format !== "phonon-web-weights" || files.some((f) => !f || !f.file || !/^[0-9a-f]{64}$/.test(f.sha256))) {
    throw error("WeightsError", `${url} is not a phonon-web weights manifest`);
  }
  return manifest;
}

async function modelFiles(weightsURL, voices, refresh, progress) {
  if (!weightsURL.endsWith("/")) weightsURL += "/";
  const cache = await openCache();
  const manifestURL = new URL("manifest.json", weightsURL).href;
  const { text, manifest, cached } = await readManifest(cache, manifestURL, refresh);
  const names = manifest.voices.map((v) => v.name);
  const chosen = voices == null ? names : voices;
  if (!Array.isArray(chosen) || chosen.length === 0 || chosen.some((v) => typeof v !== "string")) {
    throw error("VoiceError", "voices must be a list of voice names, e.g. ['Delia']");
  }
  const unknown = chosen.filter((v) => !names.includes(v));
  if (unknown.length) throw error("VoiceError", `unknown voice '${unknown[0]}'; the voices are: ${names.join(", ")}`);

  const entries = [
    ["weights", manifest.weights],
    ["tokenizer", manifest.tokenizer],
    ...manifest.voices.filter((v) => chosen.includes(v.name)).map((v) => ["voice:" + v.name, v]),
  ];
  const total = entries.reduce((sum, [, e]) => sum + e.bytes, 0);
  let loaded = 0;
  let last = 0;
  const onBytes = (n) => {
    loaded += n;
    const now = performance.now();
    if (now - last > 50 || loaded === total) {
      last = now;
      progress(loaded, total);
    }
  };
  progress(0, total);
  const stats = { fromCache: 0, downloaded: 0, repaired: 0 };
  const bytes = {};
  await Promise.all(
    entries.map(async ([name, entry]) => {
      bytes[name] = await checkedFile(cache, new URL(entry.file, weightsURL).href, entry, refresh, onBytes, stats);
    }),
  );
  progress(total, total);
  if (cache && !cached) await cache.put(manifestURL, new Response(text, { headers: { "Content-Type": "application/json" } }));
  if (cache) await prune(cache, weightsURL, [manifest.weights, manifest.tokenizer, ...manifest.voices]);
  const voiceBytes = {};
  for (const v of manifest.voices) if (chosen.includes(v.name)) voiceBytes[v.name] = bytes["voice:" + v.name];
  return {
    manifestText: text,
    weights: bytes.weights,
    tokenizerText: new TextDecoder().decode(bytes.tokenizer),
    voices: voiceBytes,
    fromCache: { manifest: cached, files: stats.fromCache, downloaded: stats.downloaded, repaired: stats.repaired },
  };
}

async function prune(cache, weightsURL, files) {
  // Entries of other builds under the same folder go once this build is complete and stored.
  const current = new Set(files.map((f) => cacheKey(new URL(f.file, weightsURL).href, f.sha256)));
  for (const request of await cache.keys()) {
    const url = request.url;
    if (url.startsWith(weightsURL) && url.includes("phonon-sha256=") && !current.has(url)) await cache.delete(request);
  }
}
