// The browser page's script: the Node suite's test files, run by vitest-shim.ts; results
// go to window.__kiln for test/browser/run.mjs.
import { runAll, type Result } from "./vitest-shim.js";
import { coreInfo } from "../../dist/core.js";
// @tests (run.mjs puts an import of every test/*.test.ts here)

const w = window as any;
w.__kiln = { done: false, results: [] as Result[], isolated: (globalThis as any).crossOriginIsolated === true, sab: typeof SharedArrayBuffer === "function" };
runAll((r) => w.__kiln.results.push(r)).then(
  () => {
    // Which core ran the suite (run.mjs requires the threaded one on this isolated page).
    w.__kiln.core = coreInfo();
    w.__kiln.done = true;
  },
  (e) => {
    w.__kiln.results.push({ name: "runner", ok: false, error: String(e) });
    w.__kiln.done = true;
  },
);
