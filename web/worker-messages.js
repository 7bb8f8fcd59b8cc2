// The messages the worker accepts, and nothing else: each type with the fields it may carry.
//
// The worker is a dedicated Worker, so only the page that made it can post to it; still, a page embeds
// other people's scripts, and a bug that posts the wrong thing must get a typed answer
// ({type: "error", id, error: {name: "MessageError", message}}), never a crashed or confused worker.
// Every message needs `type` (one of SHAPES) and `id` (a positive integer, unique among the requests
// in flight); fields not listed for its type are refused, and so are listed ones of the wrong kind.
//
// Test hooks (types starting with "_") exist only in a worker started with `?test-hooks` in its URL
// (Phonon.load({testHooks: true})): in a normal worker they are unknown types like any other.

const KINDS = {
  string: (v) => typeof v === "string",
  boolean: (v) => typeof v === "boolean",
  count: (v) => Number.isSafeInteger(v) && v >= 1 && v <= 10000,
  url: (v) => typeof v === "string" && URL.canParse(v) && /^(https?|blob):/.test(v),
  sha256: (v) => typeof v === "string" && /^[0-9a-f]{64}$/.test(v),
  object: (v) => v !== null && typeof v === "object" && !Array.isArray(v),
  names: (v) => Array.isArray(v) && v.every((x) => typeof x === "string"),
  retry: (v) =>
    KINDS.object(v) && Number.isSafeInteger(v.attempts) && v.attempts >= 1 && v.attempts <= 10 &&
    typeof v.delayMs === "number" && v.delayMs >= 0 && v.delayMs <= 60000,
};

// field -> kind; a "?" after the kind: the field may be absent or null
const SHAPES = {
  load: {
    siteURL: "url", weightsURL: "url", pyodideURL: "url?", wheelURL: "url?", wheelSha256: "sha256?",
    manifestSha256: "sha256?", voices: "names?", refresh: "boolean", subgroups: "boolean",
    featureLevel: "string?", engine: "object", retry: "retry?",
  },
  speak: { text: "string", options: "object" },
  cancel: {},
  stats: {},
  resetStats: {},
  measureEncoding: { steps: "count", repeats: "count" },
  close: {},
};

const TEST_SHAPES = {
  ...SHAPES,
  load: { ...SHAPES.load, test: "object?" },
  _python: { siteURL: "url", code: "string" }, // run Python in the worker (tests/browser/test_door.py)
  _loseDevice: {}, // destroy the GPUDevice now, as a driver reset would
  _files: { weightsURL: "url", voices: "names?", refresh: "boolean", retry: "retry?", test: "object?" },
  _heap: {}, // the wasm memory's size and the worker's JS heap
};

// What is wrong with `message`, in a few words, or null when it is one the worker handles.
export function refusal(message, testHooks) {
  const shapes = testHooks ? TEST_SHAPES : SHAPES;
  if (!KINDS.object(message)) {
    return `a message must be an object, not ${message === null ? "null" : Array.isArray(message) ? "an array" : typeof message}`;
  }
  const { type, id } = message;
  if (typeof type !== "string" || !Object.hasOwn(shapes, type)) return `unknown message type ${JSON.stringify(String(type)).slice(0, 40)}`;
  if (!Number.isSafeInteger(id) || id < 1) return `the ${type} message needs a positive integer id`;
  const fields = shapes[type];
  for (const key of Object.keys(message)) {
    if (key !== "type" && key !== "id" && !Object.hasOwn(fields, key)) return `the ${type} message has no field ${JSON.stringify(key).slice(0, 40)}`;
  }
  for (const [key, spec] of Object.entries(fields)) {
    const optional = spec.endsWith("?");
    const value = message[key];
    if (optional && value == null) continue;
    if (!KINDS[optional ? spec.slice(0, -1) : spec](value)) return `the ${type} message's ${key} is not a valid ${spec.replace("?", "")}`;
  }
  return null;
}
