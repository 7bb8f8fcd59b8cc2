// Phonon as a classic script: <script src="phonon.js"></script> defines window.Phonon.
//
//   const tts = await Phonon.load({ progress });
//   const speech = await tts.speak("Hello there.", { voice: tts.voices[0] });
//
// The code is phonon.mjs (the ES module, next to this file), imported on first use; once it has been
// imported, window.Phonon also carries its other members (PhononError, SAMPLE_RATE, version).
(function () {
  "use strict";
  var script = document.currentScript;
  var moduleURL = new URL("phonon.mjs", script && script.src ? script.src : document.baseURI).href;
  var loading = null;
  function ready() {
    if (!loading) {
      loading = import(moduleURL).then(function (module) {
        Object.assign(Phonon, module.Phonon);
        return module.Phonon;
      });
    }
    return loading;
  }
  var Phonon = {
    // Resolves with the full API once phonon.mjs is imported.
    ready: ready,
    load: function (options) {
      return ready().then(function (api) {
        return api.load(options);
      });
    },
  };
  window.Phonon = Phonon;
})();
