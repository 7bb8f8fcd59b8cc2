// Phonon: text-to-speech in the browser (Gradium's Phonon 31M on WebGPU, the engine in Python/Pyodide).
//
//   import { Phonon } from "./phonon.mjs";          // or <script src="phonon.js"> for window.Phonon
//   const tts = await Phonon.load({ progress: ({ loaded, total }) => ... });
//   tts.voices;                                      // ["Delia", ...]
//   const speech = await tts.speak("Hello there.", { voice: "Delia", speed: 1.0, seed: 0 });
//   speech.audio;   // Float32Array, mono, speech.sampleRate (24000)
//   speech.words;   // [{ text, start, end }, ...] in seconds; speech.tokens likewise
//   await tts.play("Hello there.", { signal });     // speaks and plays through an AudioWorklet
//
// Phonon.load(options): `progress({loaded, total})` in bytes; `onWarning({code, message})` (e.g. the
// cache is full and Phonon works without it); `weights` the folder build_weights.py wrote (default
// "weights/" next to the page; any URL) and `manifestSha256` to pin it; `voices` the voice names to
// load (default all); `refresh: true` to fetch the manifest again instead of trusting the cached one;
// `retry: {attempts, delayMs}` for downloads (default 4 attempts, waits of 0.5, 1, 2 s); `signal` to
// abort loading; `featureLevel: "compatibility"` for adapters that only offer WebGPU's compatibility
// mode; `pyodideURL`, `wheelURL` + `wheelSha256` to boot from elsewhere than this site's own copies.
// Loading again with the same settings gives the same engine (one worker, one model on the GPU).
//
// Every error is a PhononError whose `name` says what went wrong and whose message says what to do:
// load: "NoWebGPUError", "DownloadError", "WeightsError", "VoiceError", "OptionError", "GpuError",
// "PolicyError" (the page's Content-Security-Policy forbids what Phonon needs); speak/play:
// "TextError", "OptionError", "VoiceError", "DeviceLostError" (the next request rebuilds and speaks),
// "ClosedError" (after close()); a cancelled request rejects at once with the signal's AbortError.
//
// The model runs in a dedicated Worker (worker.js): Pyodide, the phonon_web wheel and the weights
// (kept in Cache Storage, checked by SHA-256 on every load). Audio chunks arrive as they are made.

const SITE_URL = new URL(".", import.meta.url).href;
const SAMPLE_RATE = 24000;

import { PhononError, loadSettings, speakRequest } from "./phonon-checks.mjs";

export { PhononError };

function abortError(signal) {
  if (signal && signal.reason instanceof Error) return signal.reason;
  return new DOMException("speech cancelled", "AbortError");
}

const NO_WEBGPU =
  "This browser has no WebGPU, which Phonon needs to run the voice model on the GPU. " +
  "Use a recent Chrome or Edge (113 or newer) or Safari 26, or enable WebGPU in this browser's settings " +
  "(chrome://flags/#enable-unsafe-webgpu; in Firefox, dom.webgpu.enabled).";

async function checkWebGPU(featureLevel) {
  if (typeof navigator === "undefined" || !navigator.gpu) {
    throw new PhononError("NoWebGPUError", NO_WEBGPU + " (navigator.gpu is missing)");
  }
  let adapter = null;
  try {
    adapter = await navigator.gpu.requestAdapter(featureLevel ? { featureLevel } : undefined);
  } catch {
    adapter = null;
  }
  if (!adapter) {
    throw new PhononError("NoWebGPUError", NO_WEBGPU + " (navigator.gpu.requestAdapter() found no adapter)");
  }
}

// ---- the player: an AudioWorklet fed from a ring buffer ----------------------------------------

const RING_SAMPLES = 1 << 21; // 87 s at 24 kHz; longer speech waits in `pending` until there is room
// Int32 slots shared with audio-worklet.js: samples written (page), samples read (worklet), whether
// the utterance is complete (page), and where the current utterance starts (page; the worklet skips
// anything before it, which is how stop() empties the ring at once).
const WRITE = 0, READ = 1, END = 2, START = 3;

class Player {
  static async create() {
    const context = new AudioContext({ sampleRate: SAMPLE_RATE, latencyHint: "interactive" });
    await context.audioWorklet.addModule(new URL("audio-worklet.js", SITE_URL).href);
    return new Player(context);
  }

  constructor(context) {
    this.context = context;
    this.shared = typeof SharedArrayBuffer !== "undefined" && globalThis.crossOriginIsolated === true;
    const processorOptions = {};
    if (this.shared) {
      this.indices = new Int32Array(new SharedArrayBuffer(4 * 4));
      this.data = new Float32Array(new SharedArrayBuffer(RING_SAMPLES * 4));
      processorOptions.ring = { indices: this.indices.buffer, data: this.data.buffer };
    }
    this.node = new AudioWorkletNode(context, "phonon-player", {
      numberOfInputs: 0,
      numberOfOutputs: 1,
      outputChannelCount: [1],
      processorOptions,
    });
    this.node.connect(context.destination);
    this.node.port.onmessage = (event) => this._message(event.data);
    this.pending = []; // chunks waiting for room in the ring
    this.written = 0; // samples of the current utterance handed to the worklet
    this.played = 0; // samples of the current utterance played (messages mode)
    this.drained = null;
    this.timer = 0;
  }

  _message(m) {
    if (m.type === "position") this.played = m.played;
    else if (m.type === "drained" && this.drained) {
      this.played = m.played;
      const done = this.drained;
      this.drained = null;
      done.resolve();
    }
  }

  // A new utterance: drop whatever is queued or playing.
  begin() {
    this.stop();
    this.written = 0;
    this.played = 0;
  }

  push(samples) {
    this.written += samples.length;
    if (!this.shared) {
      this.node.port.postMessage({ type: "chunk", samples }, [samples.buffer]);
      return;
    }
    this.pending.push(samples);
    this._flush();
  }

  _flush() {
    const idx = this.indices;
    while (this.pending.length) {
      const write = Atomics.load(idx, WRITE);
      const room = RING_SAMPLES - (write - Atomics.load(idx, READ));
      const chunk = this.pending[0];
      const n = Math.min(room, chunk.length);
      if (n <= 0) break;
      const at = write % RING_SAMPLES;
      const first = Math.min(n, RING_SAMPLES - at);
      this.data.set(chunk.subarray(0, first), at);
      if (n > first) this.data.set(chunk.subarray(first, n), 0);
      Atomics.store(idx, WRITE, write + n);
      if (n === chunk.length) this.pending.shift();
      else this.pending[0] = chunk.subarray(n);
    }
    clearTimeout(this.timer);
    if (this.pending.length) this.timer = setTimeout(() => this._flush(), 100);
  }

  // All samples of the utterance are pushed: resolves once they have been played.
  end() {
    const done = {};
    done.promise = new Promise((resolve) => (done.resolve = resolve));
    this.drained = done;
    if (this.shared) {
      const total = this.written;
      const check = () => {
        if (this.drained !== done) return;
        if (this.pending.length === 0 && Atomics.load(this.indices, READ) - Atomics.load(this.indices, START) >= total) {
          this.drained = null;
          done.resolve();
        } else setTimeout(check, 20);
      };
      Atomics.store(this.indices, END, 1);
      check();
    } else {
      this.node.port.postMessage({ type: "end" });
    }
    return done.promise;
  }

  stop() {
    clearTimeout(this.timer);
    this.pending = [];
    if (this.shared) {
      Atomics.store(this.indices, END, 0);
      Atomics.store(this.indices, START, Atomics.load(this.indices, WRITE)); // skipped at the next quantum
    } else {
      this.node.port.postMessage({ type: "stop" });
    }
    if (this.drained) {
      const done = this.drained;
      this.drained = null;
      done.resolve();
    }
  }

  // Seconds of the current utterance played so far.
  get position() {
    if (this.shared) {
      return Math.max(0, Atomics.load(this.indices, READ) - Atomics.load(this.indices, START)) / SAMPLE_RATE;
    }
    return this.played / SAMPLE_RATE;
  }

  close() {
    this.stop();
    this.node.disconnect();
    return this.context.close();
  }
}

// ---- the worker ---------------------------------------------------------------------------------

const closedError = () =>
  new PhononError("ClosedError", "this Phonon was closed (tts.close()): call Phonon.load() again to speak");

class Connection {
  constructor(worker) {
    this.worker = worker;
    this.next = 1;
    this.calls = new Map();
    worker.onmessage = (event) => this._message(event.data);
    worker.onerror = (event) => {
      this.rejectAll(new PhononError("InternalError", `the Phonon worker failed: ${event.message || "unknown error"}`));
    };
  }

  call(message, handlers = {}) {
    const id = this.next++;
    const promise = new Promise((resolve, reject) => this.calls.set(id, { resolve, reject, ...handlers }));
    try {
      this.worker.postMessage({ ...message, id });
    } catch (e) {
      // a value the structured clone cannot copy (a function inside `engine`, ...)
      this.forget(id, new PhononError("OptionError", `this request cannot be sent to the worker: ${e.message}`));
    }
    return { id, promise };
  }

  cancel(id) {
    this.worker.postMessage({ type: "cancel", id });
  }

  forget(id, error) {
    const call = this.calls.get(id);
    if (call) {
      this.calls.delete(id);
      call.reject(error);
    }
  }

  rejectAll(error) {
    for (const call of this.calls.values()) call.reject(error);
    this.calls.clear();
  }

  _message(m) {
    const call = this.calls.get(m?.id);
    if (!call) return; // a cancelled call: its late messages are dropped
    if (m.type === "progress") call.progress?.({ loaded: m.loaded, total: m.total });
    else if (m.type === "audio") call.audio?.(m.samples);
    else if (m.type === "warning") call.warning?.({ code: m.code, message: m.message });
    else {
      this.calls.delete(m.id);
      if (m.type === "result") call.resolve(m.value);
      else call.reject(new PhononError(m.error.name, m.error.message));
    }
  }
}

// One worker with one model, shared by every Phonon.load() with the same settings (the same weights,
// voices, ...) until the last TextToSpeech made from it is closed: loading twice gives the same
// engine, not a second copy of the model on the GPU. Requests from all of them queue in the worker.
const sessions = new Map(); // settings key -> Session (loading or loaded)

class Session {
  constructor(settings, siteURL) {
    this.key = settings.key;
    const workerURL = new URL("worker.js", SITE_URL);
    if (settings.testHooks) workerURL.search = "test-hooks";
    this.worker = new Worker(workerURL, { type: "module", name: "phonon" });
    this.connection = new Connection(this.worker);
    this.listeners = new Set(); // {progress, onWarning} of the load() calls waiting
    this.waiting = 0; // load() calls waiting for this session
    this.handles = 0; // TextToSpeech objects open on it
    this.info = null;
    this.ended = false;
    if (!settings.refresh) sessions.set(this.key, this);
    const { promise } = this.connection.call(
      { ...settings.message, siteURL },
      {
        progress: (p) => this.listeners.forEach((l) => l.progress?.(p)),
        warning: (w) => this.listeners.forEach((l) => l.onWarning?.(w)),
      },
    );
    this.ready = promise.then(
      (info) => (this.info = info),
      (e) => {
        this.end();
        throw e;
      },
    );
    this.ready.catch(() => {}); // every load() awaiting it gets the error; none is unhandled
  }

  async join({ progress, onWarning, signal }) {
    const listener = { progress, onWarning };
    this.listeners.add(listener);
    this.waiting++;
    let onAbort = null;
    const aborted = signal
      ? new Promise((_, reject) => {
          onAbort = () => reject(abortError(signal));
          signal.addEventListener("abort", onAbort, { once: true });
        })
      : null;
    try {
      const info = await (aborted ? Promise.race([this.ready, aborted]) : this.ready);
      this.handles++;
      return new TextToSpeech(this, info);
    } finally {
      this.waiting--;
      this.listeners.delete(listener);
      if (onAbort) signal.removeEventListener("abort", onAbort);
      if (!this.info && this.waiting === 0) this.end(); // every caller gave up on this load
    }
  }

  release() {
    if (--this.handles <= 0 && this.waiting === 0) this.end();
  }

  end() {
    if (this.ended) return;
    this.ended = true;
    if (sessions.get(this.key) === this) sessions.delete(this.key);
    this.connection.rejectAll(closedError());
    this.worker.terminate();
  }
}

// ---- the API ------------------------------------------------------------------------------------

function speechFrom(value) {
  return {
    audio: value.audio,
    sampleRate: value.sampleRate,
    words: value.words,
    tokens: value.tokens,
    frames: value.frames,
    duration: value.duration,
    firstAudioSeconds: value.firstAudioSeconds,
    computeSeconds: value.computeSeconds,
    realTimeFactor: value.realTimeFactor,
  };
}

class TextToSpeech {
  constructor(session, info) {
    this._session = session;
    this._connection = session.connection;
    this._calls = new Set(); // ids of this object's requests in flight (close() rejects them)
    this._closed = false;
    this._player = null;
    this.info = info; // adapter, features, load times, cache use, warnings
    this.voices = info.voices;
    this.sampleRate = info.sampleRate;
  }

  // A request to the worker; rejected with ClosedError after close().
  _call(message, handlers) {
    if (this._closed) return { id: 0, promise: Promise.reject(closedError()) };
    const call = this._connection.call(message, handlers);
    this._calls.add(call.id);
    call.promise = call.promise.finally(() => this._calls.delete(call.id));
    return call;
  }

  // Speak `text`; resolves with {audio, sampleRate, words, tokens, ...}. Options: voice, speed
  // (0.77-1.3), seed (an integer; a BigInt is taken modulo 2**32), onAudio(Float32Array) for each chunk
  // as it is made, signal (AbortSignal), normalize (default true: numbers and symbols spoken as words;
  // words carry start_char/end_char). Calls made while one runs wait their turn, in order.
  speak(text, options = {}) {
    let request;
    try {
      request = speakRequest(text, options);
    } catch (e) {
      return Promise.reject(e);
    }
    const { signal, onAudio } = options ?? {};
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const { id, promise } = this._call({ type: "speak", text, options: request }, { audio: (samples) => onAudio?.(samples) });
    if (!signal) return promise.then(speechFrom);
    const onAbort = () => {
      this._connection.cancel(id); // the engine stops at its next chunk (or never starts)
      this._connection.forget(id, abortError(signal)); // the caller is answered now
    };
    signal.addEventListener("abort", onAbort, { once: true });
    return promise.then(speechFrom).finally(() => signal.removeEventListener("abort", onAbort));
  }

  // Speak and play through an AudioWorklet, chunk by chunk as they are made. Resolves with the same
  // speech once it has been played to the end; `onSpeech(speech)` is called as soon as it is made
  // (its words are known then). `signal` stops generation and playback at once.
  async play(text, options = {}) {
    speakRequest(text, options); // the same checks as speak(), before the player starts
    const { signal } = options ?? {};
    if (signal?.aborted) throw abortError(signal);
    if (this._closed) throw closedError();
    const player = await this._playerReady();
    if (player.context.state !== "running") await player.context.resume();
    player.begin();
    const stop = () => player.stop();
    signal?.addEventListener("abort", stop, { once: true });
    try {
      const speech = await this.speak(text, {
        ...options,
        onSpeech: undefined,
        onAudio: (samples) => {
          options.onAudio?.(samples.slice());
          player.push(samples);
        },
      });
      options.onSpeech?.(speech);
      await player.end();
      if (signal?.aborted) throw abortError(signal);
      if (this._closed) throw closedError();
      return speech;
    } catch (e) {
      player.stop();
      throw e;
    } finally {
      signal?.removeEventListener("abort", stop);
    }
  }

  // Seconds of the utterance being played (for following the words), 0 when nothing plays.
  get playbackTime() {
    return this._player ? this._player.position : 0;
  }

  get audioContext() {
    return this._player?.context ?? null;
  }

  get closed() {
    return this._closed;
  }

  stop() {
    this._player?.stop();
  }

  async _playerReady() {
    if (!this._player) this._player = await Player.create();
    return this._player;
  }

  // Internal measurements: the door's submit statistics (Python's encoding cost).
  stats() {
    return this._call({ type: "stats" }).promise;
  }

  resetStats() {
    return this._call({ type: "resetStats" }).promise;
  }

  // Internal measurement: Python's encoding cost per language-model step and the GPU's time per
  // step (see measure_encoding in phonon_web/web/runtime.py).
  measureEncoding(steps = 20, repeats = 3) {
    return this._call({ type: "measureEncoding", steps, repeats }).promise;
  }

  // Test hooks (Phonon.load({testHooks: true}) only; the worker refuses them otherwise).
  _test(type, fields = {}) {
    return this._call({ type, ...fields }).promise;
  }

  // Stops this object's requests (they reject with ClosedError) and its player. The model stays loaded
  // while another Phonon.load() of the same settings still holds it; the last close() ends the worker
  // and frees the GPU. Calls after close() reject with ClosedError; closing twice is harmless.
  async close() {
    if (this._closed) return;
    this._closed = true;
    for (const id of this._calls) {
      this._connection.cancel(id);
      this._connection.forget(id, closedError());
    }
    this._calls.clear();
    const player = this._player;
    this._player = null;
    this._session.release();
    await player?.close();
  }
}

// Loads the model (or joins a load of the same settings already made or under way: the same engine).
async function load(options = {}) {
  const base = typeof document !== "undefined" ? document.baseURI : SITE_URL;
  const settings = loadSettings(options, base);
  const { signal } = options ?? {};
  if (signal?.aborted) throw abortError(signal);
  await checkWebGPU(settings.message.featureLevel);
  const session = (!settings.refresh && sessions.get(settings.key)) || new Session(settings, SITE_URL);
  return session.join(options ?? {});
}

export const Phonon = { load, PhononError, SAMPLE_RATE, version: "0.1.0" };
export default Phonon;
