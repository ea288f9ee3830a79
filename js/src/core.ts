// Loads kiln's Emscripten core once (top-level await), and turns the JS Errors that the
// core returns into thrown Errors. Everything else in the package talks to the core here.
//
// Two cores ship (docs/WASM.md, Threads): kiln_core (single-threaded, one self-contained
// script) and kiln_core_mt (pthreads: shared memory and a pool of workers, which split large
// kernels). The threaded one needs SharedArrayBuffer and workers, which browsers give only
// to cross-origin isolated pages (COOP/COEP); Node.js always has them. KILN_NUM_THREADS=1
// (Node's environment, or globalThis.KILN_NUM_THREADS before the import) forces the
// single-threaded core, as does a machine with one hardware thread; another value sets the
// threaded core's thread count (default: min(hardware threads, 8)).

// No @types/node in this package: process is reached through globalThis.
const proc = (globalThis as any).process;
const isNode = typeof proc === "object" && typeof proc?.versions?.node === "string";

/** The requested thread count, or 0 when nothing asks for one. */
function requestedThreads(): number {
  const g = (globalThis as any).KILN_NUM_THREADS;
  const v = g !== undefined ? g : isNode ? proc.env?.KILN_NUM_THREADS : undefined;
  const n = Math.floor(Number(v));
  return n >= 1 ? n : 0;
}

/** Whether this engine can run the threaded core: shared memory and workers. */
function canUseThreads(): boolean {
  if (typeof SharedArrayBuffer === "undefined" || typeof Atomics === "undefined") return false;
  if (isNode) return true; // worker_threads
  return typeof Worker !== "undefined" && (globalThis as any).crossOriginIsolated === true;
}

/** Threads the threaded core would get: the request, else min(hardware threads, 8). */
async function threadCount(): Promise<number> {
  const want = requestedThreads();
  if (want) return want;
  let hc = Number((globalThis as any).navigator?.hardwareConcurrency) || 0;
  if (!hc && isNode) {
    // @ts-ignore: node:os without @types/node
    const os = await import("node:os");
    hc = os.availableParallelism ? os.availableParallelism() : os.cpus().length;
  }
  return Math.min(hc || 1, 8);
}

// The core never ends the host process (issue 17, item 6): Emscripten's Node shell would call
// process.exit from exit() or an escaping exception once the runtime may end; this `quit`
// throws the error to the caller instead. (The cores are also built with
// NODEJS_CATCH_EXIT=0 and NODEJS_CATCH_REJECTION=0: no process-wide handlers; CMakeLists.txt.)
const quit = (_status: number, toThrow: unknown) => {
  throw toThrow;
};

async function loadCore(): Promise<{ core: any; threaded: boolean }> {
  // One thread gains nothing from the threaded core (and costs an idle worker).
  const want = canUseThreads() ? await threadCount() : 1;
  if (want > 1) {
    // @ts-ignore: generated ES module without types (scripts/wrap-core.mjs)
    const { default: create } = await import("./kiln_core_mt.mjs");
    // The .wasm, the pool's worker script and the classic glue that the workers import lie
    // next to this module (in a bundle: next to the bundle). The scripts are .cjs: the
    // package is "type": "module", and Node would load a .js worker as an ES module.
    const here = new URL(".", import.meta.url);
    // @ts-ignore: node:url without @types/node
    const toPath: ((u: URL) => string) | null = isNode ? (await import("node:url")).fileURLToPath : null;
    const file = (name: string) => (toPath ? toPath(new URL(name, here)) : new URL(name, here).href);
    const opts: Record<string, unknown> = {
      locateFile: (name: string) => file(name.replace(/\.js$/, ".cjs")),
      mainScriptUrlOrBlob: file("kiln_core_mt.cjs"),
      kilnThreads: want,
      quit,
    };
    // Node 20's global fetch cannot load a file path, so Node gets the bytes directly.
    // @ts-ignore: node:fs without @types/node
    if (isNode) opts.wasmBinary = (await import("node:fs")).readFileSync(file("kiln_core_mt.wasm"));
    const core = await create(opts);
    // Node: idle pool workers must not keep the process alive (the package never exits it).
    core.kilnUnrefWorkers?.();
    return { core, threaded: true };
  }
  // @ts-ignore: generated ES module without types (scripts/wrap-core.mjs)
  const { default: create } = await import("./kiln_core.mjs");
  return { core: await create({ quit }), threaded: false };
}

const loaded = await loadCore();
export const core: any = loaded.core;

/**
 * Which core is loaded (a diagnostic, not part of the public API): `threaded` for
 * kiln_core_mt, the wasm backend's thread count and its maximum (1 and 1 in kiln_core), and
 * its counters: dispatches split across threads, and chunks that pool workers ran; `fma` when
 * tiled contractions use Relaxed-SIMD FMA (the engine has it and KILN_WASM_FMA is not "0").
 */
export function coreInfo(): { threaded: boolean; threads: number; maxThreads: number; splitDispatches: number; workerChunks: number; fma: boolean } {
  const [threads, maxThreads, splitDispatches, workerChunks, fma] = check(core.wasmThreads(0)) as number[];
  return { threaded: loaded.threaded, threads, maxThreads, splitDispatches, workerChunks, fma: fma === 1 };
}

/** Sets the wasm backend's thread count (1 to coreInfo().maxThreads; a diagnostic). */
export function setWasmThreads(n: number): void {
  check(core.wasmThreads(n));
}

/** The embind object behind one Array (js/src/core/js_values.h). */
export interface Handle {
  shape(): number[];
  dtype(): string;
  weak(): boolean;
  device(): string;
  str(): string;
  /** `dtype[d0,d1,...]`, as Array.toString shows it (one call for dispose's description). */
  describe(): string;
  bytes(): Uint8Array | Error;
  delete(): void;
  isDeleted(): boolean;
}
/** A kiln function callable from JS (a transformed JS function). */
export interface Func {
  call(args: any[]): any;
  delete(): void;
}

/** An Error thrown by a JS function while the core was tracing it, rethrown unchanged. */
let pendingError: unknown = null;
export function setPendingError(e: unknown) {
  pendingError = e;
}

/** What coreCallback disposes: an Array (array.ts imports this module, so not named here). */
interface DisposableArray {
  readonly _alive: boolean;
  dispose(): void;
}

/**
 * A JS callback for the core: `body` returns [what the core gets, the Arrays to dispose
 * once the core holds them (`done`)]. It never throws into the core: it keeps the error
 * and returns it.
 */
export function coreCallback(body: (cargs: any[][]) => [any, DisposableArray[]]) {
  let pending: DisposableArray[] = [];
  const jsfn: any = (cargs: any[][]) => {
    try {
      const [result, returned] = body(cargs);
      pending = returned;
      return result;
    } catch (e) {
      setPendingError(e);
      return e instanceof Error ? e : new Error(String(e));
    }
  };
  jsfn.done = () => {
    for (const a of pending) if (a._alive) a.dispose();
    pending = [];
  };
  return jsfn;
}

/**
 * Throws if the core returned an Error (of its class: the core makes a TypeError or
 * RangeError where jax-js throws one), with this call's stack; otherwise returns the result.
 */
export function check<T>(r: T | Error): T {
  if (r instanceof Error) {
    const e = pendingError;
    pendingError = null;
    if (e !== null) throw e;
    throw r instanceof TypeError ? new TypeError(r.message) : r instanceof RangeError ? new RangeError(r.message) : new Error(r.message);
  }
  return r;
}
