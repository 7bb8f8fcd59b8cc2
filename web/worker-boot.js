// Boots Python in the worker from checked bytes only: Pyodide's five files and our wheel are each
// downloaded (with the same retries as the weights), checked against the SHA-256 that
// phonon-site.json gives (written by `python -m phonon_web.web build`, which took the files from npm's
// integrity-checked package), and only then used:
//
// * pyodide.mjs and pyodide.asm.mjs are imported from blob: URLs of the checked bytes (so the policy
//   needs `script-src blob:`); loadPyodide gets the second through its `createPyodideModule` option;
// * pyodide-lock.json is handed over parsed (`lockFileContents`);
// * pyodide.asm.wasm and python_stdlib.zip are fetched by Pyodide itself: while it boots, the worker's
//   `fetch` answers those two URLs with the checked bytes (and passes everything else through);
// * the wheel is unpacked into site-packages (no micropip, no package index).
//
// Then `makeSubmit` (gpu-submit.js) is registered as the Python module `phonon_web_js`, for the door.

import { download, phononError } from "./worker-files.js";
import { makeSubmit } from "./gpu-submit.js";

export const PYODIDE_FILES = ["pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"];

async function pinned(url, sha, what, retry) {
  if (!/^[0-9a-f]{64}$/.test(sha || "")) {
    throw phononError("DownloadError", `phonon-site.json gives no SHA-256 for ${what}: rebuild the site (python -m phonon_web.web build)`);
  }
  try {
    return await download(url, { sha, retry });
  } catch (e) {
    if (e.name !== "WeightsError") throw e;
    throw phononError(
      "DownloadError",
      `${url} is not the ${what} this site was built with (its SHA-256 differs): rebuild the site, or point ` +
        "pyodideURL / wheelURL at the files it was built with",
    );
  }
}

// The 8-byte empty module. Compiling it fails at once where a Content-Security-Policy forbids
// WebAssembly; Pyodide itself would only log that and wait forever.
const EMPTY_WASM = new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]);

async function checkPolicy() {
  try {
    await WebAssembly.compile(EMPTY_WASM);
  } catch (e) {
    throw phononError(
      "PolicyError",
      `this page's Content-Security-Policy forbids WebAssembly (${e.message}): add 'wasm-unsafe-eval' to its ` +
        "script-src (web/README.md gives the whole policy Phonon needs)",
    );
  }
}

async function importChecked(url, what) {
  try {
    return await import(url);
  } catch (e) {
    throw phononError(
      "PolicyError",
      `could not start ${what} from its checked copy (${e.message}): if this page has a Content-Security-Policy, ` +
        "its script-src needs blob: (web/README.md gives the whole policy Phonon needs)",
    );
  }
}

function moduleURL(bytes) {
  return URL.createObjectURL(new Blob([bytes], { type: "text/javascript" }));
}

// Serves `answers` (URL -> [bytes, content type]) to whoever calls fetch() until `restore()`.
function answerFetches(answers) {
  const realFetch = self.fetch;
  self.fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input), self.location.href).href;
    const answer = answers.get(url);
    if (!answer) return realFetch(input, init);
    return Promise.resolve(new Response(answer[0], { headers: { "Content-Type": answer[1] } }));
  };
  return () => (self.fetch = realFetch);
}

export async function bootPython({ pyodideURL, wheelURL, wheelSha256, site, retry, times, began }) {
  if (!pyodideURL.endsWith("/")) pyodideURL += "/";
  await checkPolicy();
  const hashes = site.pyodideSha256 || {};
  const [mjs, asm, wasm, stdlib, lock, wheel] = await Promise.all([
    ...PYODIDE_FILES.map((name) => pinned(pyodideURL + name, hashes[name], `Pyodide's ${name}`, retry)),
    pinned(wheelURL, wheelSha256, "phonon_web wheel", retry),
  ]);
  const urls = [moduleURL(mjs), moduleURL(asm)];
  const restore = answerFetches(
    new Map([
      [pyodideURL + "pyodide.asm.wasm", [wasm, "application/wasm"]],
      [pyodideURL + "python_stdlib.zip", [stdlib, "application/zip"]],
    ]),
  );
  let pyodide;
  try {
    const { loadPyodide } = await importChecked(urls[0], "pyodide.mjs");
    const createPyodideModule = (await importChecked(urls[1], "pyodide.asm.mjs")).default;
    pyodide = await loadPyodide({
      indexURL: pyodideURL,
      lockFileContents: JSON.parse(new TextDecoder().decode(lock)),
      createPyodideModule,
      stdout: (line) => console.log(line),
      stderr: (line) => console.warn(line),
    });
  } finally {
    restore();
    urls.forEach((url) => URL.revokeObjectURL(url));
  }
  times.pythonSeconds = (performance.now() - began) / 1000;
  pyodide.unpackArchive(wheel, "wheel");
  pyodide.registerJsModule("phonon_web_js", { makeSubmit });
  // The module and its functions, looked up once: every attribute read on a PyProxy makes a new proxy.
  const module = pyodide.pyimport("phonon_web.web.runtime");
  const runtime = {};
  for (const name of ["load", "speak", "needs_engine", "lose_device", "stats", "reset_stats", "measure_encoding", "close"]) {
    runtime[name] = module[name];
  }
  times.packageSeconds = (performance.now() - began) / 1000;
  return { pyodide, module, runtime };
}
