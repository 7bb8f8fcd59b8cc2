// The Phonon worker with a probe: bench.js starts this module instead of ../worker.js, so the worker's
// own fetches (Pyodide, the wheel, the weights) can be counted. A worker's resource timing entries are
// only visible inside the worker, so the probe answers on a BroadcastChannel, leaving the worker's
// message protocol with the page untouched.
import "../worker.js";

performance.setResourceTimingBufferSize(100000); // the default 250 entries could drop some

const channel = new BroadcastChannel("phonon-bench");
channel.onmessage = (event) => {
  if (event.data?.type !== "resources?") return;
  channel.postMessage({
    type: "resources",
    timeOrigin: performance.timeOrigin,
    entries: performance.getEntriesByType("resource").map((e) => e.toJSON()),
  });
};
