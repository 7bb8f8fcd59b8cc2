// The Phonon player: an AudioWorkletProcessor that plays speech chunks gaplessly as they arrive.
//
// Cross-origin isolated pages share a ring with it (SharedArrayBuffer): a Float32Array of samples
// and four Int32 slots, [WRITE, READ, END, START] (see Player in phonon.mjs); the audio thread never
// waits for a message. Other pages post {type: "chunk", samples} / {type: "end"} / {type: "stop"}
// and the processor keeps a queue. Either way it starts an utterance once PREROLL samples are there
// (or the utterance is complete), so a slow first chunk does not stutter, and it reports how far it
// has played.

const WRITE = 0, READ = 1, END = 2, START = 3;
const PREROLL = 2400; // 0.1 s at 24 kHz
const REPORT_EVERY = 10; // quanta (of 128 samples) between position messages

class PhononPlayer extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const ring = options.processorOptions && options.processorOptions.ring;
    this.shared = !!ring;
    if (ring) {
      this.indices = new Int32Array(ring.indices);
      this.data = new Float32Array(ring.data);
    }
    this.queue = [];
    this.offset = 0; // into queue[0]
    this.queued = 0;
    this.ended = false;
    this.playing = false;
    this.played = 0;
    this.quanta = 0;
    this.port.onmessage = (event) => this.message(event.data);
  }

  message(m) {
    if (m.type === "chunk") {
      this.queue.push(m.samples);
      this.queued += m.samples.length;
    } else if (m.type === "end") {
      this.ended = true;
      if (this.queued === 0) this.drained();
    } else if (m.type === "stop") {
      this.queue = [];
      this.offset = this.queued = this.played = 0;
      this.ended = this.playing = false;
    }
  }

  drained() {
    this.ended = false;
    this.playing = false;
    this.port.postMessage({ type: "drained", played: this.played });
  }

  process(inputs, outputs) {
    const out = outputs[0][0];
    if (!out) return true;
    if (this.shared) this.fromRing(out);
    else this.fromQueue(out);
    return true;
  }

  fromRing(out) {
    const idx = this.indices;
    const write = Atomics.load(idx, WRITE);
    let read = Atomics.load(idx, READ);
    const start = Atomics.load(idx, START);
    if (read < start) {
      read = start; // stop(): skip everything before the current utterance
      this.playing = false;
    }
    const available = write - read;
    if (!this.playing) this.playing = available >= PREROLL || (available > 0 && Atomics.load(idx, END) === 1);
    let n = 0;
    if (this.playing) {
      n = Math.min(available, out.length);
      const size = this.data.length;
      for (let i = 0; i < n; i++) out[i] = this.data[(read + i) % size];
      if (n < out.length) this.playing = false; // ran dry: wait for PREROLL again
    }
    out.fill(0, n);
    Atomics.store(idx, READ, read + n);
  }

  fromQueue(out) {
    if (!this.playing) this.playing = this.queued >= PREROLL || (this.queued > 0 && this.ended);
    let n = 0;
    while (this.playing && n < out.length && this.queue.length) {
      const chunk = this.queue[0];
      const take = Math.min(out.length - n, chunk.length - this.offset);
      out.set(chunk.subarray(this.offset, this.offset + take), n);
      n += take;
      this.offset += take;
      if (this.offset === chunk.length) {
        this.queue.shift();
        this.offset = 0;
      }
    }
    out.fill(0, n);
    this.queued -= n;
    this.played += n;
    if (this.playing && this.queued === 0) {
      if (this.ended) this.drained();
      else this.playing = false;
    }
    if (++this.quanta % REPORT_EVERY === 0 && n > 0) this.port.postMessage({ type: "position", played: this.played });
  }
}

registerProcessor("phonon-player", PhononPlayer);
