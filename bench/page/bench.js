// The benchmark page: one run per visit, chosen by the URL, the result left in `window.benchDone`
// for bench/browser.py (and shown on the page).
//
//   ?kind=first   delete this origin's Cache Storage, IndexedDB and origin private file system, then
//                 load and speak the first Harvard sentence; count every byte the page and its worker
//                 fetched (the driver clears the HTTP cache before it opens the page)
//   ?kind=cold    the same without deleting anything: the files come from the caches
//   ?kind=warm    load, speak one untimed sentence, then every benchmark text with the round's seed
//
// Other parameters: seed (default 0), phrases (indices into phrases.json, comma separated; default
// all), maxFrames (a frame cap per text), budget=1 (ignore the model's end of speech, so every take
// runs to its frame budget or cap: the synthetic model's end of speech means nothing), voice,
// clips=1 (return the warm takes' audio as 16-bit PCM in base64).
//
// Times are performance.now(): milliseconds since this page's navigation started ("page open").

import { clearOriginStorage } from "./storage.js";
import { allRows, summarise } from "./netcount.js";

const params = new URLSearchParams(location.search);
const WARM_UP_TEXT = "This sentence warms the engine up and is not timed.";

// Start Phonon's worker from worker-probe.js (which imports ../worker.js) so its fetches can be counted.
const NativeWorker = globalThis.Worker;
globalThis.Worker = class extends NativeWorker {
  constructor(url, options) {
    const target = new URL(url, location.href);
    if (target.pathname.endsWith("/worker.js")) url = new URL("worker-probe.js" + target.search, import.meta.url);
    super(url, options);
  }
};

function status(text) {
  document.getElementById("status").textContent = text;
}

function speakOptions(seed) {
  const options = { seed, voice: params.get("voice") || undefined };
  if (params.get("maxFrames")) options.maxFrames = Number(params.get("maxFrames"));
  if (params.get("budget") === "1") options.eosThreshold = 1e30;
  return options;
}

// budget=1 passes the undocumented speak option eosThreshold; a phonon.mjs that refuses it is noted
// here (the takes then end where the model says, or at the cap) and the results say so.
let eosThresholdTaken = true;

async function speak(tts, text, options) {
  if (!eosThresholdTaken) delete options.eosThreshold;
  try {
    return await tts.speak(text, options);
  } catch (e) {
    if (options.eosThreshold == null || !String(e.message).includes("eosThreshold")) throw e;
    eosThresholdTaken = false;
    delete options.eosThreshold;
    return tts.speak(text, options);
  }
}

// Speaks and times one text as a caller sees it: call to first chunk, call to the resolved speech.
async function timedSpeak(tts, text, options) {
  let firstChunkAt = null;
  const called = performance.now();
  const speech = await speak(tts, text, {
    ...options,
    onAudio: () => {
      if (firstChunkAt === null) firstChunkAt = performance.now();
    },
  });
  const resolved = performance.now();
  return { speech, called, firstChunkAt, resolved };
}

function pcm16Base64(audio) {
  const pcm = new Int16Array(audio.length);
  for (let i = 0; i < audio.length; i++) pcm[i] = Math.max(-32768, Math.min(32767, Math.round(audio[i] * 32767)));
  let text = "";
  const bytes = new Uint8Array(pcm.buffer);
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

async function loadPhonon(voice) {
  const { Phonon } = await import("../phonon.mjs");
  const began = performance.now();
  const options = { weights: new URL("../weights/", location.href).href };
  if (voice) options.voices = [voice];
  if (params.get("featureLevel")) options.featureLevel = params.get("featureLevel"); // lavapipe via ANGLE
  const tts = await Phonon.load(options);
  return { tts, loadMs: performance.now() - began, loadStartedAt: began };
}

async function visit(kind, phrases) {
  // first visit or cold run: page open to the first audio of the first Harvard sentence
  let cleared = null;
  let clearMs = 0;
  if (kind === "first") {
    const began = performance.now();
    cleared = await clearOriginStorage();
    clearMs = performance.now() - began;
  }
  status("loading…");
  const { tts, loadMs } = await loadPhonon(params.get("voice"));
  status("speaking…");
  const seed = Number(params.get("seed") || 0);
  const { speech, called, firstChunkAt, resolved } = await timedSpeak(tts, phrases[0], speakOptions(seed));
  const list = await allRows();
  await tts.close();
  return {
    info: tts.info,
    clear: cleared && { ...cleared, ms: clearMs },
    // the deletion is the benchmark's doing, not the visit's: it is left out of the visit's time
    openToFirstAudioMs: firstChunkAt - clearMs,
    loadMs,
    callToFirstAudioMs: firstChunkAt - called,
    speakMs: resolved - called,
    frames: speech.frames,
    speechSeconds: speech.duration,
    bytes: summarise(list),
    fetches: list,
  };
}

async function warm(phrases, indices) {
  const { tts, loadMs } = await loadPhonon(params.get("voice"));
  const seed = Number(params.get("seed") || 0);
  const options = speakOptions(seed);
  status("warming up…");
  await speak(tts, WARM_UP_TEXT, { ...options, seed: seed + 1000 });
  const takes = [];
  for (const index of indices) {
    status(`speaking text ${index}…`);
    const { speech, called, firstChunkAt, resolved } = await timedSpeak(tts, phrases[index], options);
    takes.push({
      phrase: index,
      chars: phrases[index].length,
      words: speech.words.length,
      frames: speech.frames,
      speechSeconds: speech.duration,
      wallSeconds: (resolved - called) / 1000, // call to resolved speech, as the page sees it
      computeSeconds: speech.computeSeconds, // the engine's own clock, in the worker
      firstAudioMs: firstChunkAt - called,
      engineFirstAudioMs: speech.firstAudioSeconds * 1000,
      clip: params.get("clips") === "1" ? pcm16Base64(speech.audio) : undefined,
    });
  }
  await tts.close();
  return { info: tts.info, loadMs, seed, takes };
}

// What WebGPU says of the adapter, as the engine will get it (recorded with the results).
async function adapterInfo(featureLevel) {
  const adapter = await navigator.gpu?.requestAdapter(featureLevel ? { featureLevel } : undefined);
  if (!adapter) return null;
  const { vendor, architecture, device, description } = adapter.info || {};
  return { vendor, architecture, device, description, featureLevel: featureLevel || "core" };
}

async function main() {
  const kind = params.get("kind") || "cold";
  const phrases = (await (await fetch("../phrases.json")).json()).phrases;
  const indices = params.get("phrases") ? params.get("phrases").split(",").map(Number) : phrases.map((_, i) => i);
  const environment = {
    userAgent: navigator.userAgent,
    hardwareConcurrency: navigator.hardwareConcurrency,
    crossOriginIsolated: globalThis.crossOriginIsolated === true,
    adapterInfo: await adapterInfo(params.get("featureLevel")),
  };
  let result;
  if (kind === "warm") result = await warm(phrases, indices);
  else if (kind === "first" || kind === "cold") result = await visit(kind, phrases);
  else throw new Error(`unknown kind ${kind}: first, cold or warm`);
  const budget = params.get("budget") === "1" ? { eosThresholdTaken } : {};
  return { kind, url: location.href, environment, ...budget, ...result };
}

main()
  .then((result) => {
    status("done");
    const { fetches, takes, ...shown } = result;
    document.getElementById("result").textContent = JSON.stringify(shown, null, 1);
    window.benchDone = result;
  })
  .catch((e) => {
    status(`failed: ${e.name}: ${e.message}`);
    window.benchDone = { error: { name: e.name, message: String(e.message || e), stack: e.stack } };
  });
