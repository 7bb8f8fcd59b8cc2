// The one piece of the GPU door (phonon_web/gpu/browser.py) written in JavaScript: per device, a
// function that encodes the engine's prebuilt programs and submits them in one call from Python.
//
// It lives in a file, not in a string that Python hands to eval (`pyodide.code.run_js`), so that the
// worker runs under a Content-Security-Policy without 'unsafe-eval' for our own code. The worker
// registers it as the Python module `phonon_web_js`.
//
// A program is ONE flat array made once by BrowserDoor.compile:
//   [0, pipeline, bindGroup, x, y, z,  1, source, sourceOffset, target, targetOffset, size, ...]
// (tag 0 a dispatch, tag 1 a copy). submit(program, repeat, program, repeat, ...) encodes every pair
// into one command encoder, one compute pass per run of dispatches (a copy ends a pass), skips
// setPipeline/setBindGroup when they repeat, submits, and returns the number of dispatches encoded.
// submit.record(...) encodes the same way and returns {buffer, dispatches} unsubmitted, for
// submit.submitRecorded(recorded) to send later (the engine records a take's first chunks during
// the take before it).

export function makeSubmit(device) {
  const queue = device.queue;

  // The command buffer of (program, repeat) pairs given as `args`, and its dispatch count.
  function encode(args) {
    const encoder = device.createCommandEncoder();
    let pass = null, pipe = null, group = null, dispatches = 0;
    for (let a = 0; a < args.length; a += 2) {
      const c = args[a], repeat = args[a + 1], n = c.length;
      for (let r = 0; r < repeat; r++) {
        for (let i = 0; i < n; i += 6) {
          if (c[i] === 0) {
            if (pass === null) { pass = encoder.beginComputePass(); pipe = group = null; }
            if (c[i + 1] !== pipe) { pipe = c[i + 1]; pass.setPipeline(pipe); }
            if (c[i + 2] !== group) { group = c[i + 2]; pass.setBindGroup(0, group); }
            pass.dispatchWorkgroups(c[i + 3], c[i + 4], c[i + 5]);
            dispatches++;
          } else {
            if (pass !== null) { pass.end(); pass = null; }
            encoder.copyBufferToBuffer(c[i + 1], c[i + 2], c[i + 3], c[i + 4], c[i + 5]);
          }
        }
      }
    }
    if (pass !== null) pass.end();
    return { buffer: encoder.finish(), dispatches };
  }

  function submit() {
    const recorded = encode(arguments);
    queue.submit([recorded.buffer]);
    return recorded.dispatches;
  }
  // The door's record_ahead: encoded now, submitted later (once) by submitRecorded.
  submit.record = function () { return encode(arguments); };
  submit.submitRecorded = function (recorded) {
    if (recorded.buffer === null) throw new Error("a recorded command buffer was submitted twice");
    queue.submit([recorded.buffer]);
    recorded.buffer = null;
    return recorded.dispatches;
  };
  return submit;
}
