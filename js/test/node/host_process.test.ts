// Importing kiln must not take over the host process (issue 17, item 6). Emscripten's Node
// defaults install process-wide "uncaughtException"/"unhandledRejection" handlers that
// rethrow, and exit the process on exit(); a test runner then lost its worker (and every later
// test of the file) to any error that escaped one test. Each check runs in child processes,
// for both cores: KILN_NUM_THREADS=1 loads kiln_core, 2 loads kiln_core_mt. Node only (the
// browser runner takes test/*.test.ts, not this folder).
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const jsRoot = here("../..");
const childScript = here("fixtures/host_child.mjs");
// The child processes must not think they run inside this Vitest worker.
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("VITEST") && k !== "NODE_OPTIONS"));

function node(args: string[], threads: string) {
  const r = spawnSync(process.execPath, args, { cwd: jsRoot, encoding: "utf8", timeout: 120000, env: { ...env, KILN_NUM_THREADS: threads } });
  if (r.error) throw r.error;
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, firstLine: r.stderr.split("\n")[0] };
}

/** The child's JSON lines: the first says which core loaded (kiln runs only). */
const lines = (stdout: string) => stdout.trim().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));

const cores = [
  ["kiln_core (single-threaded)", "1", false],
  ["kiln_core_mt (threaded)", "2", true],
] as const;

describe.each(cores)("%s", (_name, threads, threaded) => {
  test("the import installs no process-wide listeners", () => {
    const r = node([childScript, "listeners", "kiln"], threads);
    expect(r.status, r.stderr).toBe(0);
    const [info, counts] = lines(r.stdout);
    expect(info).toEqual({ loaded: true, threaded, sum: 499500 });
    expect(counts.after).toEqual(counts.before);
  });

  // Each mode once without kiln and once with it: the same exit code and the same first line
  // of stderr (Node's report of where the error was thrown, in the child script), so the
  // error reached Node's own handling and no handler of kiln's rethrew it.
  test.each(["rejection", "exception"])("an unhandled %s behaves exactly as without kiln", (mode) => {
    const without = node([childScript, mode, "none"], threads);
    const withKiln = node([childScript, mode, "kiln"], threads);
    expect(lines(withKiln.stdout)[0]).toMatchObject({ loaded: true, threaded });
    expect(without.status).not.toBe(0);
    expect(without.firstLine).toContain("host_child.mjs");
    expect([withKiln.status, withKiln.signal, withKiln.firstLine]).toEqual([without.status, without.signal, without.firstLine]);
  });

  test("kiln's own Error escaping from a timer is reported by Node, not rethrown by the core", () => {
    const r = node([childScript, "einsum", "kiln"], threads);
    expect(lines(r.stdout)[0]).toMatchObject({ loaded: true, threaded });
    // Node's exit code for an uncaught exception is 1; an exception thrown again inside an
    // "uncaughtException" handler (what the core's handler did) exits with 7.
    expect(r.status).toBe(1);
    expect(r.firstLine).not.toMatch(/kiln_core/);
    expect(r.stderr).toMatch(/^Error: einsum/m);
  });
});

test("a Vitest file whose tests throw from inside kiln runs all its other tests", () => {
  const out = mkdtempSync(join(tmpdir(), "kiln-host-"));
  try {
    const report = join(out, "report.json");
    const vitest = here("../../node_modules/vitest/vitest.mjs");
    const r = node([vitest, "run", "--config", here("fixtures/vitest.config.ts"), "--reporter=default", "--reporter=json", `--outputFile.json=${report}`], "2");
    // No report at all when Vitest's worker died (what the core's old handlers did).
    const output = (r.stdout + r.stderr).slice(-4000);
    expect(existsSync(report), `no JSON report; the child's output ends:\n${output}`).toBe(true);
    const json = JSON.parse(readFileSync(report, "utf8"));
    const states = Object.fromEntries(json.testResults[0].assertionResults.map((t: any) => [t.title, t.status]));
    expect(states, output).toEqual({
      "before: kiln computes": "passed",
      "an einsum with a bad spec throws out of this test (the one failure)": "failed",
      "an einsum error escapes through a timer (an unhandled error)": "passed",
      "an einsum error is left as an unhandled rejection (an unhandled error)": "passed",
      "after: kiln still computes": "passed",
    });
    expect([json.numFailedTests, json.numPassedTests, json.numTotalTests]).toEqual([1, 4, 5]);
    // Vitest caught both escaped errors itself and reports them; the run fails because of them.
    expect(r.stdout + r.stderr, output).toMatch(/Vitest caught 2 unhandled errors/);
    expect(r.status).toBe(1);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

// The generated cores themselves: no process-wide handler anywhere, and process.exit only in
// Emscripten's default `quit_`, which the `quit` that core.ts passes replaces.
test("the generated cores install no process handlers, and core.ts replaces the one process.exit", () => {
  const on = /process\s*(\.\s*on|\[\s*["']on["']\s*\])\s*\(|uncaughtException"|unhandledRejection"/g;
  const exit = /process\s*(\.\s*exit\b|\[\s*["']exit["']\s*\])/g;
  for (const f of ["kiln_core.mjs", "kiln_core_mt.mjs", "kiln_core_mt.cjs", "kiln_core_mt.worker.cjs"]) {
    const text = readFileSync(here(`../../dist/${f}`), "utf8");
    expect(text.match(on), f).toBeNull();
    const exits = text.match(exit) ?? [];
    if (f.endsWith("worker.cjs")) expect(exits, f).toEqual([]);
    else {
      expect(exits, f).toHaveLength(1);
      expect(text, f).toMatch(/quit_\s*=\s*\(\(status,\s*toThrow\)\s*=>\s*\{[^}]*\}[^}]*process\["exit"\]\(status\)/);
      expect(text, f).toMatch(/if\s*\(Module\["quit"\]\)\s*quit_\s*=\s*Module\["quit"\]/);
    }
  }
  const loader = readFileSync(here("../../dist/core.js"), "utf8");
  expect(loader.match(/\bquit\s*[,}]/g)?.length, "core.js passes `quit` to both cores").toBe(2);
});
