// Counts every byte the page and its worker fetched, from Resource Timing (same origin, so sizes and
// times are all exposed). The page sees its own entries; the worker's come from worker-probe.js.
//
// transferSize is 0 when the HTTP cache answered; otherwise it is the body plus the headers, which
// Chromium counts as a flat 300 bytes (so a 304 revalidation is 300 bytes). encodedBodySize is the body
// as sent, also for a body that came out of the HTTP cache. So a response whose body came over the
// network is one whose transferSize exceeds its body by at least 300 bytes, and networkBodyBytes sums
// those bodies: on a first visit it equals what Playwright's network events report (bench/browser.py
// checks it once per run). The benchmark page's own
// files (under /bench/, and the texts it reads) are not Phonon's and are reported apart.

const PROBE_TIMEOUT_MS = 5000;
const HEADER_BYTES = 300;

export const cameOverNetwork = (r) => r.transferSize > 0 && r.transferSize - r.encodedBodySize >= HEADER_BYTES;

export function workerEntries() {
  return new Promise((resolve, reject) => {
    const channel = new BroadcastChannel("phonon-bench");
    const timer = setTimeout(() => {
      channel.close();
      reject(new Error("the worker probe did not answer (is the worker running worker-probe.js?)"));
    }, PROBE_TIMEOUT_MS);
    channel.onmessage = (event) => {
      if (event.data?.type !== "resources") return;
      clearTimeout(timer);
      channel.close();
      resolve(event.data);
    };
    channel.postMessage({ type: "resources?" });
  });
}

// One row per fetch, times in ms since the page's time origin.
export function rows(entries, timeOrigin, pageTimeOrigin, where) {
  const shift = timeOrigin - pageTimeOrigin;
  return entries.map((e) => ({
    where,
    path: new URL(e.name).pathname,
    initiator: e.initiatorType,
    transferSize: e.transferSize,
    encodedBodySize: e.encodedBodySize,
    decodedBodySize: e.decodedBodySize,
    start: e.startTime + shift,
    end: e.responseEnd + shift,
  }));
}

// Total time during which at least one download was running: the union of [start, end] of every
// fetch that moved bytes.
export function downloadingMs(list) {
  const spans = list
    .filter((r) => r.transferSize > 0)
    .map((r) => [r.start, r.end])
    .sort((a, b) => a[0] - b[0]);
  let total = 0;
  let from = -Infinity;
  let to = -Infinity;
  for (const [start, end] of spans) {
    if (start > to) {
      if (to > from) total += to - from;
      from = start;
      to = end;
    } else to = Math.max(to, end);
  }
  if (to > from) total += to - from;
  return total;
}

export const isBenchFile = (path) => path.startsWith("/bench/") || path === "/phrases.json";

export function summarise(list) {
  const sum = (items, key) => items.reduce((s, r) => s + r[key], 0);
  const phonon = list.filter((r) => !isBenchFile(r.path));
  const bench = list.filter((r) => isBenchFile(r.path));
  return {
    networkBodyBytes: sum(phonon.filter(cameOverNetwork), "encodedBodySize"),
    transferBytes: sum(phonon, "transferSize"),
    bodyBytes: sum(phonon, "encodedBodySize"),
    fetches: phonon.length,
    downloadingMs: downloadingMs(phonon),
    benchPageTransferBytes: sum(bench, "transferSize"),
  };
}

// Every fetch so far, page and worker; `worker` false when the page has no Phonon worker yet.
export async function allRows({ worker = true } = {}) {
  const origin = performance.timeOrigin;
  const page = performance.getEntriesByType("navigation").concat(performance.getEntriesByType("resource"));
  const list = rows(page.map((e) => e.toJSON()), origin, origin, "page");
  if (worker) {
    const probe = await workerEntries();
    list.push(...rows(probe.entries, probe.timeOrigin, origin, "worker"));
  }
  return list;
}
