// --pre-js of kiln's threaded Emscripten targets (CMake's KILN_WASM_THREAD_LINK): how many
// threads the wasm backend gets, decided once at load, and the size of the worker pool.

// Threads including the main thread: Module.kilnThreads (the npm package passes it), else
// $KILN_NUM_THREADS (Node), else min(hardware concurrency, 8). More than 8 workers each
// compile every large kernel once and hold a copy of the core's JS state, for little gain
// on the kernels kiln splits (docs/WASM.md, Threads).
function kilnThreadCount() {
  var n = Number(Module['kilnThreads']);
  if (!(n >= 1) && typeof process == 'object' && process.env) n = parseInt(process.env['KILN_NUM_THREADS'], 10);
  if (!(n >= 1)) {
    var hc = typeof navigator == 'object' && navigator.hardwareConcurrency;
    if (!hc && typeof process == 'object' && typeof require == 'function') {
      try {
        var os = require('os');
        hc = os.availableParallelism ? os.availableParallelism() : os.cpus().length;
      } catch (e) {}
    }
    n = Math.min(hc || 1, 8);
  }
  return (Module['kilnThreads'] = Math.max(1, Math.floor(n)));
}

// -sPTHREAD_POOL_SIZE=kilnPoolSize(): the workers Emscripten starts (and loads) before the
// core runs; the wasm backend never starts more, since a pthread beyond the pool would wait
// for the main thread's event loop. At least 1: with a pool of 0, Emscripten 3.1.6 waits
// forever for workers to report loaded and the module never resolves (seen with 1 thread
// under Node). With one thread the worker stays idle (threads() is still 1).
function kilnPoolSize() {
  return Math.max(1, kilnThreadCount() - 1);
}

// Node keeps a process alive while a worker_threads Worker is referenced; the pool's workers
// must not (the package has no exit call), so the package calls this once the core is up.
Module['kilnUnrefWorkers'] = function () {
  if (typeof PThread == 'undefined') return;
  PThread.unusedWorkers.concat(PThread.runningWorkers).forEach(function (w) {
    if (w && w.unref) w.unref();
  });
};
