// The model's files for the worker: Cache Storage or the network, always checked by SHA-256.
//
// manifest.json (pinned by `manifestSha256` when the page or phonon-site.json gives one), then
// weights.bin, tokenizer.json and the chosen voices, each checked against the SHA-256 the manifest
// gives before anything uses it or stores it. Cache Storage (`phonon-weights-v1`) keys each file by
// URL + SHA-256, so a new build at the same URL never reads an old build's bytes; a cached entry that
// fails its check is deleted and downloaded again; entries of older builds are pruned.
//
// Downloads are retried (`retry.attempts`, 4 by default, waiting retry.delayMs = 0.5 s, then twice as
// long each time): a connection cut mid-file resumes with a Range request where the server honours it
// (206 with the right Content-Range) and restarts otherwise; a server error (5xx, 408, 425, 429)
// waits and tries again; a file that comes back longer than its manifest says, or whose SHA-256 is
// wrong, is downloaded again from its start. Other HTTP errors (404, 403, ...) are not retried. When
// the attempts are spent: DownloadError (the network or the server failed) or WeightsError (every
// copy the server sent differed from its manifest), each saying what to do. Only whole, checked files
// are ever put in the cache (a put stores a complete response or nothing).
//
// A cache that refuses to store (QuotaExceededError: the disk or the site's quota is full) is not an
// error: the worker goes on without the cache, with a warning the page sees (`warn`).

export const CACHE_NAME = "phonon-weights-v1";
export const RETRY = { attempts: 4, delayMs: 500 };
const RETRIED_STATUS = new Set([408, 425, 429, 500, 502, 503, 504]);

export function phononError(name, message) {
  const e = new Error(message);
  e.name = name;
  return e;
}

export async function sha256(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

function cacheKey(url, hash) {
  const key = new URL(url);
  key.searchParams.set("phonon-sha256", hash);
  return key.href;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// One attempt's failure: `restart` drops what was received (the next attempt starts from byte 0);
// `content` marks a file that arrived whole but is not the manifest's (length or hash).
class Attempt extends Error {
  constructor(message, { restart = false, content = false } = {}) {
    super(message);
    this.restart = restart;
    this.content = content;
  }
}

// Where a 206 answer starts (Content-Range: bytes FIRST-LAST/TOTAL), or -1.
function rangeStart(response, total) {
  const match = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(response.headers.get("Content-Range") || "");
  if (!match || (match[3] !== "*" && Number(match[3]) !== total)) return -1;
  return Number(match[1]);
}

// Downloads `url` and returns its bytes once their SHA-256 is `sha` (when given) and their length
// `size` (when given). `onBytes(n)` reports progress (negative when received bytes are dropped).
export async function download(url, { size = null, sha = null, onBytes = () => {}, retry = RETRY, attempts: log = [] } = {}) {
  let buffer = size == null ? null : new Uint8Array(size);
  let at = 0; // bytes of `buffer` already received (resumable)
  let contentOnly = true; // every failure so far was a wrong length or hash
  let last = "";
  const drop = () => {
    onBytes(-at);
    at = 0;
  };
  for (let attempt = 1; attempt <= retry.attempts; attempt++) {
    if (attempt > 1) await sleep(retry.delayMs * 2 ** (attempt - 2));
    try {
      const headers = at > 0 ? { Range: `bytes=${at}-` } : {};
      let response;
      try {
        response = await fetch(url, { cache: "no-store", headers });
      } catch (e) {
        throw new Attempt(`the connection failed (${e.message || e})`);
      }
      log.push({ attempt, status: response.status, from: at });
      if (!response.ok) {
        const what = `HTTP ${response.status}`;
        if (RETRIED_STATUS.has(response.status)) throw new Attempt(`the server answered ${what}`);
        throw phononError(
          "DownloadError",
          `could not download ${url}: the server answered ${what}; check that the weights URL points at ` +
            "the folder build_weights.py wrote (the `weights` option of Phonon.load)",
        );
      }
      if (response.status === 206 && rangeStart(response, size) !== at) {
        response.body?.cancel().catch(() => {});
        throw new Attempt("the server answered a range it was not asked for", { restart: true });
      }
      if (response.status !== 206 && at > 0) drop(); // the server sent the whole file again: from its start
      if (buffer == null) {
        const bytes = new Uint8Array(await readAll(response));
        onBytes(bytes.length);
        at = bytes.length;
        buffer = bytes;
      } else {
        at = await readInto(response, buffer, at, onBytes);
        if (at < size) throw new Attempt(`the download ended after ${at} of ${size} bytes`);
      }
      if (sha != null) {
        const actual = await sha256(buffer.subarray(0, at));
        if (actual !== sha) {
          throw new Attempt(`its SHA-256 is ${actual.slice(0, 12)}…, its manifest says ${sha.slice(0, 12)}…`, {
            restart: true,
            content: true,
          });
        }
      }
      return buffer.subarray(0, at);
    } catch (e) {
      if (!(e instanceof Attempt)) throw e;
      if (typeof e.at === "number") at = e.at; // what arrived before the cut is kept for the next attempt
      last = e.message;
      contentOnly &&= e.content;
      if (e.restart) drop();
      if (size == null) {
        buffer = null; // a file of unknown size is never resumed: it starts again
        at = 0;
      }
    }
  }
  if (contentOnly) {
    throw phononError(
      "WeightsError",
      `${url} does not match its manifest after ${retry.attempts} downloads (${last}): the files on the ` +
        "server are corrupt or from another build; rebuild the weights with build_weights.py and deploy them together",
    );
  }
  throw phononError(
    "DownloadError",
    `could not download ${url} after ${retry.attempts} attempts (${last}): check the network connection and ` +
      "call Phonon.load() again; the files already downloaded are kept and will not be fetched again",
  );
}

async function readAll(response) {
  try {
    return await response.arrayBuffer();
  } catch (e) {
    throw new Attempt(`the connection was cut (${e.message || e})`);
  }
}

// Streams a response into `buffer` from `at`; returns where it ended. A cut connection keeps what
// arrived (the next attempt resumes from there); a body longer than the buffer restarts the file.
async function readInto(response, buffer, at, onBytes) {
  const reader = response.body.getReader();
  for (;;) {
    let chunk;
    try {
      chunk = await reader.read();
    } catch (e) {
      throw Object.assign(new Attempt(`the connection was cut after ${at} bytes (${e.message || e})`), { at });
    }
    if (chunk.done) return at;
    const value = chunk.value;
    if (at + value.length > buffer.length) {
      reader.cancel().catch(() => {});
      throw new Attempt(`it is longer than its manifest says (${buffer.length} bytes)`, { restart: true, content: true });
    }
    buffer.set(value, at);
    at += value.length;
    onBytes(value.length);
  }
}

// ---- Cache Storage --------------------------------------------------------------------------------

// The cache as this load uses it: `cache` becomes null once storing fails (then nothing is stored).
class Store {
  constructor(cache, warn, failPut) {
    this.cache = cache;
    this.warn = warn;
    this.failPut = failPut; // test hook: the name of a DOMException every put throws
  }

  async put(key, response) {
    if (!this.cache) return;
    try {
      if (this.failPut) throw new DOMException("(test hook) cache.put refused", this.failPut);
      await this.cache.put(key, response);
    } catch (e) {
      this.cache = null;
      this.warn(
        "cache-unavailable",
        `this browser would not store the model (${e.name}: ${e.message}); Phonon works without the cache, ` +
          "and the next visit downloads the model again. Free some disk space or site storage to keep it.",
      );
    }
  }
}

async function openCache(warn) {
  try {
    return await caches.open(CACHE_NAME);
  } catch (e) {
    warn("cache-unavailable", `no Cache Storage here (${e.name}); the model is downloaded on every visit`);
    return null;
  }
}

async function checkedFile(store, url, entry, refresh, onBytes, stats, retry) {
  const key = cacheKey(url, entry.sha256);
  if (store.cache && !refresh) {
    const cached = await store.cache.match(key);
    if (cached) {
      const bytes = new Uint8Array(await cached.arrayBuffer());
      if (bytes.length === entry.bytes && (await sha256(bytes)) === entry.sha256) {
        stats.fromCache += 1;
        onBytes(bytes.length);
        return bytes;
      }
      console.warn(`phonon: the cached ${url} is corrupt; downloading it again`);
      stats.repaired += 1;
      await store.cache.delete(key);
    }
  }
  const attempts = [];
  const bytes = await download(url, { size: entry.bytes, sha: entry.sha256, onBytes, retry, attempts });
  stats.attempts[url] = attempts;
  await store.put(key, new Response(bytes, { headers: { "Content-Type": "application/octet-stream" } }));
  stats.downloaded += 1;
  return bytes;
}

async function readManifest(store, url, refresh, pinned, retry) {
  const check = async (text) => {
    if (pinned && (await sha256(new TextEncoder().encode(text))) !== pinned) {
      throw phononError(
        "WeightsError",
        `${url} is not the manifest this site was built with (its SHA-256 differs): rebuild the site with these weights`,
      );
    }
    return checkManifest(JSON.parse(text), url);
  };
  if (store.cache && !refresh) {
    const cached = await store.cache.match(url);
    if (cached) {
      try {
        const text = await cached.text();
        return { text, manifest: await check(text), cached: true };
      } catch {
        await store.cache.delete(url); // unreadable or not the pinned one: fetch it again
      }
    }
  }
  const text = new TextDecoder().decode(await download(url, { sha: pinned, retry }));
  let manifest;
  try {
    manifest = await check(text);
  } catch (e) {
    if (e.name === "WeightsError") throw e;
    throw phononError(
      "WeightsError",
      `${url} is not a phonon-web weights manifest (${e.message}): point weights at the folder build_weights.py wrote`,
    );
  }
  return { text, manifest, cached: false };
}

function checkManifest(manifest, url) {
  const files = [manifest.weights, manifest.tokenizer, ...(manifest.voices || [])];
  const valid = (f) => f && typeof f.file === "string" && /^[0-9a-f]{64}$/.test(f.sha256) && Number.isSafeInteger(f.bytes);
  if (manifest.format !== "phonon-web-weights" || !files.every(valid)) {
    throw phononError("WeightsError", `${url} is not a phonon-web weights manifest`);
  }
  return manifest;
}

// Everything `runtime.load` needs: {manifestText, weights, tokenizerText, voices, fromCache}.
export async function modelFiles({ weightsURL, voices, refresh, manifestSha256, retry = RETRY, progress, warn, failPut }) {
  if (!weightsURL.endsWith("/")) weightsURL += "/";
  const store = new Store(await openCache(warn), warn, failPut);
  const manifestURL = new URL("manifest.json", weightsURL).href;
  const { text, manifest, cached } = await readManifest(store, manifestURL, refresh, manifestSha256, retry);
  const names = manifest.voices.map((v) => v.name);
  const chosen = voices == null ? names : voices;
  if (!Array.isArray(chosen) || chosen.length === 0 || chosen.some((v) => typeof v !== "string")) {
    throw phononError("VoiceError", "voices must be a list of voice names, e.g. ['Delia']");
  }
  const unknown = chosen.filter((v) => !names.includes(v));
  if (unknown.length) throw phononError("VoiceError", `unknown voice '${unknown[0]}'; the voices are: ${names.join(", ")}`);

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
  const stats = { fromCache: 0, downloaded: 0, repaired: 0, attempts: {} };
  const bytes = {};
  await Promise.all(
    entries.map(async ([name, entry]) => {
      const url = new URL(entry.file, weightsURL).href;
      bytes[name] = await checkedFile(store, url, entry, refresh, onBytes, stats, retry);
    }),
  );
  progress(total, total);
  if (!cached) await store.put(manifestURL, new Response(text, { headers: { "Content-Type": "application/json" } }));
  if (store.cache) await prune(store.cache, weightsURL, [manifest.weights, manifest.tokenizer, ...manifest.voices]);
  const voiceBytes = {};
  for (const v of manifest.voices) if (chosen.includes(v.name)) voiceBytes[v.name] = bytes["voice:" + v.name];
  return {
    manifestText: text,
    weights: bytes.weights,
    tokenizerText: new TextDecoder().decode(bytes.tokenizer),
    voices: voiceBytes,
    fromCache: { manifest: cached, files: stats.fromCache, downloaded: stats.downloaded, repaired: stats.repaired },
    attempts: stats.attempts,
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
