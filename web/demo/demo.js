// The demo page: load the model with a progress bar, then speak with live word highlighting.
// URL parameters: ?weights=URL (default ./weights/); maxFrames (undocumented, for tests).
import { Phonon } from "./phonon.mjs";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const ui = {
  loading: $("loading"),
  loadLabel: $("load-label"),
  loadBytes: $("load-bytes"),
  loadProgress: $("load-progress"),
  failure: $("failure"),
  failureTitle: $("failure-title"),
  failureMessage: $("failure-message"),
  studio: $("studio"),
  text: $("text"),
  preset: $("preset"),
  voice: $("voice"),
  speed: $("speed"),
  speedValue: $("speed-value"),
  play: $("play"),
  stop: $("stop"),
  download: $("download"),
  state: $("state"),
  transcript: $("transcript"),
  rtf: $("stat-rtf"),
  first: $("stat-first"),
  duration: $("stat-duration"),
  adapter: $("stat-adapter"),
};

let tts = null;
let speech = null;
let running = null; // AbortController of the current run
let follow = 0; // requestAnimationFrame id of the word highlighter

function megabytes(bytes) {
  return (bytes / 1e6).toFixed(bytes < 1e7 ? 1 : 0) + " MB";
}

function fail(error) {
  ui.loading.hidden = true;
  ui.studio.hidden = true;
  ui.failure.hidden = false;
  ui.failureTitle.textContent =
    error.name === "NoWebGPUError" ? "This browser has no WebGPU" : `Phonon could not start (${error.name})`;
  ui.failureMessage.textContent = error.message;
  document.body.dataset.state = "failed";
}

async function presets() {
  try {
    const { phrases } = await (await fetch("phrases.json")).json();
    for (const phrase of phrases) {
      const option = document.createElement("option");
      option.value = phrase;
      option.textContent = phrase.length > 60 ? phrase.slice(0, 57) + "…" : phrase;
      ui.preset.append(option);
    }
  } catch {
    ui.preset.disabled = true;
  }
}

// The caller's own text, with each spoken word's characters (start_char..end_char) as a span, so
// "$5.20" lights up as one word while "five dollars and twenty cents" is heard.
function showWords(words, text) {
  const nodes = [];
  let at = 0;
  words.forEach((w, i) => {
    const span = document.createElement("span");
    span.className = "word";
    span.dataset.index = i;
    if (w.start_char != null && w.start_char >= at) {
      if (w.start_char > at) nodes.push(document.createTextNode(text.slice(at, w.start_char)));
      span.textContent = text.slice(w.start_char, w.end_char);
      at = w.end_char;
    } else {
      nodes.push(document.createTextNode(" "));
      span.textContent = w.text;
    }
    nodes.push(span);
  });
  if (at < text.length) nodes.push(document.createTextNode(text.slice(at)));
  ui.transcript.replaceChildren(...nodes);
}

function highlight(words) {
  cancelAnimationFrame(follow);
  const spans = ui.transcript.querySelectorAll(".word");
  const tick = () => {
    const t = tts.playbackTime;
    words.forEach((w, i) => {
      spans[i].classList.toggle("now", t >= w.start && t < Math.max(w.end, w.start + 0.08));
      spans[i].classList.toggle("spoken", t >= w.end);
    });
    if (running) follow = requestAnimationFrame(tick);
  };
  follow = requestAnimationFrame(tick);
}

function showStats(s) {
  ui.rtf.textContent = `${s.realTimeFactor.toFixed(s.realTimeFactor < 10 ? 2 : 1)}× real time`;
  ui.first.textContent = s.firstAudioSeconds == null ? "–" : `${Math.round(s.firstAudioSeconds * 1000)} ms`;
  ui.duration.textContent = `${s.duration.toFixed(2)} s`;
}

function busy(on) {
  ui.play.disabled = on;
  ui.stop.disabled = !on;
  ui.download.disabled = on || !speech;
}

async function play() {
  const text = ui.text.value.trim();
  if (!text) {
    ui.state.textContent = "Type something to say.";
    return;
  }
  running = new AbortController();
  busy(true);
  ui.state.textContent = "Speaking…";
  ui.transcript.replaceChildren();
  document.body.dataset.state = "speaking";
  const options = { voice: ui.voice.value, speed: Number(ui.speed.value), signal: running.signal };
  if (params.has("maxFrames")) options.maxFrames = Number(params.get("maxFrames"));
  options.onSpeech = (s) => {
    speech = s;
    showStats(s);
    showWords(s.words, text);
    highlight(s.words);
  };
  try {
    await tts.play(text, options);
    ui.state.textContent = "Done.";
    document.body.dataset.state = "done";
  } catch (e) {
    ui.state.textContent = e.name === "AbortError" ? "Stopped." : `${e.name}: ${e.message}`;
    document.body.dataset.state = e.name === "AbortError" ? "stopped" : "error";
  } finally {
    running = null;
    busy(false);
  }
}

function wav(samples, sampleRate) {
  const data = new DataView(new ArrayBuffer(44 + samples.length * 2));
  const text = (at, s) => [...s].forEach((c, i) => data.setUint8(at + i, c.charCodeAt(0)));
  text(0, "RIFF");
  data.setUint32(4, 36 + samples.length * 2, true);
  text(8, "WAVEfmt ");
  data.setUint32(16, 16, true);
  data.setUint16(20, 1, true); // PCM
  data.setUint16(22, 1, true); // mono
  data.setUint32(24, sampleRate, true);
  data.setUint32(28, sampleRate * 2, true);
  data.setUint16(32, 2, true);
  data.setUint16(34, 16, true);
  text(36, "data");
  data.setUint32(40, samples.length * 2, true);
  for (let i = 0; i < samples.length; i++) {
    data.setInt16(44 + 2 * i, Math.round(Math.max(-1, Math.min(1, samples[i])) * 32767), true);
  }
  return new Blob([data.buffer], { type: "audio/wav" });
}

function download() {
  if (!speech) return;
  const link = document.createElement("a");
  link.href = URL.createObjectURL(wav(speech.audio, speech.sampleRate));
  link.download = "phonon.wav";
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}

async function main() {
  presets();
  ui.speed.addEventListener("input", () => (ui.speedValue.textContent = `${Number(ui.speed.value).toFixed(2)}×`));
  ui.preset.addEventListener("change", () => {
    if (ui.preset.value) ui.text.value = ui.preset.value;
  });
  ui.play.addEventListener("click", play);
  ui.stop.addEventListener("click", () => running?.abort());
  ui.download.addEventListener("click", download);
  document.body.dataset.state = "loading";
  try {
    tts = await Phonon.load({
      weights: params.get("weights") ?? "weights/",
      progress: ({ loaded, total }) => {
        ui.loadProgress.value = total ? loaded / total : 0;
        ui.loadBytes.textContent = `${megabytes(loaded)} of ${megabytes(total)}`;
        if (total && loaded >= total) ui.loadLabel.textContent = "Preparing the GPU…";
      },
    });
  } catch (e) {
    fail(e);
    return;
  }
  window.tts = tts; // for the console (and the tests)
  for (const name of tts.voices) ui.voice.append(new Option(name, name));
  ui.adapter.textContent = tts.info.adapter || "WebGPU";
  ui.loading.hidden = true;
  ui.studio.setAttribute("aria-disabled", "false");
  busy(false);
  document.body.dataset.state = "ready";
}

main();
