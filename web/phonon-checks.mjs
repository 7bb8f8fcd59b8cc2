// What Phonon.load() and tts.speak() accept, checked on the page before anything is sent to the worker.
//
// The engine (phonon_web/request_checks.py) checks every speak() option again, and is the authority on
// ranges, voice names and the like. What is checked here is what cannot cross to Python as it is:
// a text that is not a string (a function or a symbol cannot even be posted to a worker), NaN and
// Infinity (JSON makes them null), BigInt (JSON refuses it), objects and functions where a value is
// expected, misspelt option names, and callbacks or signals of the wrong kind. Each is a PhononError
// whose `name` says which kind ("TextError", "OptionError", "VoiceError") and whose message says what
// to pass instead.

export class PhononError extends Error {
  constructor(name, message) {
    super(message);
    this.name = name;
  }
}

function kind(value) {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  return typeof value === "object" ? `an object (${value.constructor?.name ?? "Object"})` : `a ${typeof value}`;
}

const optionError = (message) => new PhononError("OptionError", message);

function checkNames(options, allowed, what) {
  if (options == null) return {};
  if (typeof options !== "object" || Array.isArray(options)) {
    throw optionError(`the options of ${what} must be an object such as { voice: "Delia" }, not ${kind(options)}`);
  }
  for (const name of Object.keys(options)) {
    if (!allowed.includes(name)) {
      throw optionError(`${what} has no option "${name}"; its options are: ${allowed.join(", ")}`);
    }
  }
  return options;
}

function checkFunction(options, name) {
  const value = options[name];
  if (value != null && typeof value !== "function") throw optionError(`${name} must be a function, not ${kind(value)}`);
}

function checkSignal(options) {
  const { signal } = options;
  if (signal != null && !(signal instanceof AbortSignal)) {
    throw optionError(`signal must be an AbortSignal (new AbortController().signal), not ${kind(signal)}`);
  }
}

// options[name] when it passes `test` (null when absent: the default), else OptionError.
function typed(options, name, test, hint) {
  const value = options[name];
  if (value == null) return null;
  if (test(value)) return value;
  throw optionError(`${name} must be ${hint}, not ${typeof value === "string" ? JSON.stringify(value.slice(0, 40)) : kind(value)}`);
}

const SPEAK_OPTIONS = ["voice", "speed", "seed", "normalize", "signal", "onAudio", "onSpeech", "maxFrames", "temperature", "eosThreshold"];

// The options object the worker hands to the engine (snake_case, JSON), from speak()'s options.
export function speakRequest(text, options) {
  if (typeof text !== "string") {
    throw new PhononError("TextError", `the text must be a string, not ${kind(text)}: pass the words to say`);
  }
  options = checkNames(options, SPEAK_OPTIONS, "speak()");
  checkSignal(options);
  checkFunction(options, "onAudio");
  checkFunction(options, "onSpeech");
  const voice = options.voice;
  if (voice != null && typeof voice !== "string") {
    throw new PhononError("VoiceError", `voice must be the name of a loaded voice (tts.voices), not ${kind(voice)}`);
  }
  // Left out, speed and seed take their defaults; null is refused, as None is in Python (one corpus
  // of decisions, tests/data/bad_inputs.json). A BigInt seed is taken modulo 2**32, as the engine
  // takes any integer seed.
  for (const name of ["speed", "seed"]) {
    if (options[name] === null) throw optionError(`${name} must be a number, not null: leave it out for the default`);
  }
  const seed = typeof options.seed === "bigint" ? Number(BigInt.asUintN(32, options.seed)) : typed(options, "seed", Number.isSafeInteger, "an integer");
  const request = {
    voice: voice ?? null,
    speed: typed(options, "speed", Number.isFinite, "a number from 0.77 to 1.3") ?? 1.0,
    seed: seed ?? 0,
  };
  const normalize = typed(options, "normalize", (v) => typeof v === "boolean", "true or false");
  if (normalize != null) request.normalize = normalize;
  const whole = (v) => Number.isSafeInteger(v) && v >= 1;
  const maxFrames = typed(options, "maxFrames", whole, "a whole number of frames, at least 1"); // undocumented: tests, previews
  if (maxFrames != null) request.max_frames = maxFrames;
  const temperature = typed(options, "temperature", (v) => Number.isFinite(v) && v >= 0, "a number >= 0");
  if (temperature != null) request.temperature = temperature;
  // undocumented (benchmarks): 1e30 lets every take run to its frame budget
  const eos = typed(options, "eosThreshold", Number.isFinite, "a finite number");
  if (eos != null) request.eos_threshold = eos;
  return request;
}

const LOAD_OPTIONS = [
  "progress", "onWarning", "signal", "weights", "voices", "refresh", "featureLevel", "subgroups", "engine",
  "pyodideURL", "wheelURL", "wheelSha256", "manifestSha256", "retry", "testHooks", "test",
];

// Phonon.load()'s options, checked, as {key, message, testHooks}: `key` says which loads are the same.
export function loadSettings(options, base) {
  options = checkNames(options, LOAD_OPTIONS, "Phonon.load()");
  checkSignal(options);
  checkFunction(options, "progress");
  checkFunction(options, "onWarning");
  const url = (name, fallback) => {
    const value = options[name] ?? fallback;
    if (value == null) return null;
    if (typeof value !== "string" && !(value instanceof URL)) throw optionError(`${name} must be a URL (a string), not ${kind(value)}`);
    try {
      return new URL(value, base).href;
    } catch {
      throw optionError(`${name} is not a URL: ${String(value).slice(0, 80)}`);
    }
  };
  const hash = (name) => {
    const value = options[name];
    if (value != null && !(typeof value === "string" && /^[0-9a-f]{64}$/.test(value))) {
      throw optionError(`${name} must be a SHA-256 in hex (64 characters 0-9a-f), not ${kind(value)}`);
    }
    return value ?? null;
  };
  const flag = (name, fallback) => {
    const value = options[name] ?? fallback;
    if (typeof value !== "boolean") throw optionError(`${name} must be true or false, not ${kind(value)}`);
    return value;
  };
  const { voices, retry, engine, featureLevel } = options;
  if (voices != null && !(Array.isArray(voices) && voices.length && voices.every((v) => typeof v === "string"))) {
    throw new PhononError("VoiceError", `voices must be a list of voice names such as ["Delia"], not ${kind(voices)}`);
  }
  if (retry != null && !(Number.isSafeInteger(retry.attempts) && retry.attempts >= 1 && retry.attempts <= 10 &&
      typeof retry.delayMs === "number" && retry.delayMs >= 0 && retry.delayMs <= 60000)) {
    throw optionError("retry must be { attempts: 1 to 10, delayMs: 0 to 60000 } (the default is { attempts: 4, delayMs: 500 })");
  }
  if (engine != null && (typeof engine !== "object" || Array.isArray(engine))) throw optionError(`engine must be an object, not ${kind(engine)}`);
  if (featureLevel != null && featureLevel !== "core" && featureLevel !== "compatibility") {
    throw optionError(`featureLevel must be "core" or "compatibility", not ${kind(featureLevel)}`);
  }
  if (options.wheelURL != null && options.wheelSha256 == null) {
    throw optionError("wheelURL needs wheelSha256 (the wheel's SHA-256 in hex): the worker runs only code it has checked");
  }
  const testHooks = flag("testHooks", false);
  if (options.test != null && !testHooks) throw optionError("test needs testHooks: true");
  const message = {
    type: "load",
    weightsURL: url("weights", "weights/"),
    voices: voices ?? null,
    refresh: flag("refresh", false),
    subgroups: flag("subgroups", true),
    featureLevel: featureLevel ?? null,
    engine: engine ?? {},
    pyodideURL: url("pyodideURL"),
    wheelURL: url("wheelURL"),
    wheelSha256: hash("wheelSha256"),
    manifestSha256: hash("manifestSha256"),
    retry: retry ? { attempts: retry.attempts, delayMs: retry.delayMs } : null,
  };
  if (testHooks) message.test = options.test ?? null;
  return { key: JSON.stringify({ ...message, testHooks }), message, testHooks, refresh: message.refresh };
}
