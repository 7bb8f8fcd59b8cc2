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
// Phonon.load(options): `progress({loaded, total})` in bytes; `weights` the folder build_weights.py
// wrote (default "weights/" next to the page; any URL); `voices` the voice names to load (default
// all); `pyodideURL` / `wheelURL` to boot from elsewhere than this site's own copies; `refresh: true`
// to fetch the manifest again instead of trusting the cached one; `signal` to abort loading;
// `featureLevel: "compatibility"` for adapters that only offer WebGPU's compatibility mode.
//
// Phonon.load rejects with a PhononError whose `name` says what went wrong: "NoWebGPUError" (this
// browser has no WebGPU), "DownloadError", "WeightsError" (a corrupt file), "VoiceError", "GpuError".
// speak/play reject with "TextError", "OptionError", "VoiceError", "GpuError", or the signal's
// AbortError when cancelled.
//
// The model runs in a dedicated Worker (worker.js): Pyodide, the phonon_web wheel and the weights
// (kept in Cache Storage, checked by SHA-256 on every load). Audio chunks arrive as they are made.

const SITE_URL = new URL(".", import.meta.url).href;
const SAMPLE_RATE = 24000;

export class PhononError extends Error {
  constructor(name, message) {
    super(message);
    this.name = name;
  }
}

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

class Connection {
  constructor(worker) {
    this.worker = worker;
    this.next = 1;
    this.calls = new Map();
    worker.onmessage = (event) => this._message(event.data);
    worker.onerror = (event) => {
      const e = new PhononError("InternalError", `the Phonon worker failed: ${event.message || "unknown error"}`);
      for (const call of this.calls.values()) call.reject(e);
      this.calls.clear();
    };
  }

  call(message, handlers = {}) {
    const id = this.next++;
    const promise = new Promise((resolve, reject) => this.calls.set(id, { resolve, reject, ...handlers }));
    this.worker.postMessage({ ...message, id });
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

  _message(m) {
    const call = this.calls.get(m.id);
    if (!call) return; // a cancelled call: its late messages are dropped
    if (m.type === "progress") call.progress?.({ loaded: m.loaded, total: m.total });
    else if (m.type === "audio") call.audio?.(m.samples);
    else {
      this.calls.delete(m.id);
      if (m.type === "result") call.resolve(m.value);
      else call.reject(new PhononError(m.error.name, m.error.message));
    }
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
  constructor(connection, info) {
    this._connection = connection;
    this._player = null;
    this._current = null;
    this.info = info; // adapter, features, load times, cache use
    this.voices = info.voices;
    this.sampleRate = info.sampleRate;
  }

  // Speak `text`; resolves with {audio, sampleRate, words, tokens, ...}. Options: voice, speed
  // (0.77-1.3), seed, onAudio(Float32Array) for each chunk as it is made, signal (AbortSignal),
  // normalize (default true: numbers and symbols spoken as words; words carry start_char/end_char).
  speak(text, options = {}) {
    const { signal, onAudio } = options;
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const opts = { voice: options.voice ?? null, speed: options.speed ?? 1.0, seed: options.seed ?? 0 };
    if (options.maxFrames != null) opts.max_frames = options.maxFrames; // undocumented: tests, previews
    if (options.normalize != null) opts.normalize = Boolean(options.normalize); // false: read as written
    if (options.temperature != null) opts.temperature = options.temperature;
    // undocumented, for benchmarks (bench/page/): 1e30 ignores a random model's end of speech
    if (options.eosThreshold != null) opts.eos_threshold = options.eosThreshold;
    const { id, promise } = this._connection.call(
      { type: "speak", text, options: opts },
      { audio: (samples) => onAudio?.(samples) },
    );
    if (!signal) return promise.then(speechFrom);
    const onAbort = () => {
      this._connection.cancel(id); // the engine stops at its next chunk
      this._connection.forget(id, abortError(signal)); // the caller is answered now
    };
    signal.addEventListener("abort", onAbort, { once: true });
    return promise.then(speechFrom).finally(() => signal.removeEventListener("abort", onAbort));
  }

  // Speak and play through an AudioWorklet, chunk by chunk as they are made. Resolves with the same
  // speech once it has been played to the end; `onSpeech(speech)` is called as soon as it is made
  // (its words are known then). `signal` stops generation and playback at once.
  async play(text, options = {}) {
    const { signal } = options;
    if (signal?.aborted) throw abortError(signal);
    const player = await this._playerReady();
    if (player.context.state !== "running") await player.context.resume();
    player.begin();
    const stop = () => player.stop();
    signal?.addEventListener("abort", stop, { once: true });
    try {
      const speech = await this.speak(text, {
        ...options,
        onAudio: (samples) => {
          options.onAudio?.(samples.slice());
          player.push(samples);
        },
      });
      options.onSpeech?.(speech);
      await player.end();
      if (signal?.aborted) throw abortError(signal);
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

  stop() {
    this._player?.stop();
  }

  async _playerReady() {
    if (!this._player) this._player = await Player.create();
    return this._player;
  }

  // Internal measurements: the door's submit statistics (Python's encoding cost).
  stats() {
    return this._connection.call({ type: "stats" }).promise;
  }

  resetStats() {
    return this._connection.call({ type: "resetStats" }).promise;
  }

  // Internal measurement: Python's encoding cost per language-model step and the GPU's time per
  // step (see measure_encoding in phonon_web/web/runtime.py).
  measureEncoding(steps = 20, repeats = 3) {
    return this._connection.call({ type: "measureEncoding", steps, repeats }).promise;
  }

  async close() {
    await this._player?.close();
    this._player = null;
    this._connection.worker.terminate();
  }
}

async function load(options = {}) {
  const { progress, signal } = options;
  await checkWebGPU(options.featureLevel);
  const base = typeof document !== "undefined" ? document.baseURI : SITE_URL;
  const weightsURL = new URL(options.weights ?? "weights/", base).href;
  const worker = new Worker(new URL("worker.js", SITE_URL), { type: "module", name: "phonon" });
  const connection = new Connection(worker);
  const message = {
    type: "load",
    siteURL: SITE_URL,
    weightsURL,
    voices: options.voices ?? null,
    refresh: !!options.refresh,
    subgroups: options.subgroups !== false,
    featureLevel: options.featureLevel ?? null,
    engine: options.engine ?? {},
  };
  if (options.pyodideURL) message.pyodideURL = new URL(options.pyodideURL, base).href;
  if (options.wheelURL) message.wheelURL = new URL(options.wheelURL, base).href;
  const { id, promise } = connection.call(message, { progress: (p) => progress?.(p) });
  const onAbort = () => {
    connection.forget(id, abortError(signal));
    worker.terminate();
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const info = await promise;
    return new TextToSpeech(connection, info);
  } catch (e) {
    worker.terminate();
    throw e;
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}

export const Phonon = { load, PhononError, SAMPLE_RATE, version: "0.1.0" };
export default Phonon;
