// Randomized differential programs (test/differential/random_programs.ts and
// random_families.ts) against @jax-js/jax 0.1.25 on kiln's cpu and wasm devices.
// KILN_DIFF_PROGRAMS and KILN_DIFF_SEED set how many and from which seed
// (tools/differential_long.sh runs 20 000 in parts).
import * as jaxjs from "@jax-js/jax";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import * as kiln from "../dist/index.js";
import { checkOnKiln, provideFloat16Array, provideIteratorHelpers, runProgram, type DiffCase, type Outcome } from "./differential/harness.js";
import { mixedCase } from "./differential/random_families.js";

const count = Number(process.env.KILN_DIFF_PROGRAMS ?? 1000);
const firstSeed = Number(process.env.KILN_DIFF_SEED ?? 1);
const cases: DiffCase[] = Array.from({ length: count }, (_, i) => mixedCase(firstSeed + i));
const oracle: Outcome[] = [];
// With shape ops and jvp/vmap-of-jit/jit-of-grad, kiln's wasm device took 45 ms a program at
// load 20 on the 2-core machine (3000 in 134 s); 50 ms each keeps long runs under the limit.
const timeoutMs = 60_000 + count * 50;
let removeFloat16Array = () => {};
// Thousands of programs in one test: the event loop turns now and then, so that Vitest's
// worker RPC is answered (a part of 2500 programs once failed on its timeout, all passing).
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

beforeAll(async () => {
  provideIteratorHelpers();
  removeFloat16Array = await provideFloat16Array();
  await jaxjs.init("cpu");
  jaxjs.defaultDevice("cpu");
  for (const [i, c] of cases.entries()) {
    oracle.push(runProgram(jaxjs, c));
    if (i % 200 === 199) await yieldToEventLoop();
  }
}, timeoutMs);
afterAll(() => removeFloat16Array());

// One test per device (not per program): a thousand tests' setup would cost more than the
// programs. Every difference is listed in the failure message.
describe("randomized differential programs", () => {
  // A generator that made mostly failing programs would compare little but error classes.
  test("nearly all programs run on jax-js", () => {
    const errors = cases.map((c, i) => [c, oracle[i]] as const).filter(([c, o]) => o.kind === "error" && c.beyondJaxjs === undefined);
    expect(errors.length, errors.slice(0, 20).map(([c, o]) => `${c.name}: ${JSON.stringify(o)}`).join("\n")).toBeLessThan(count * 0.02);
  });

  for (const device of ["cpu", "wasm"] as const) {
    test(`${count} programs from seed ${firstSeed} on ${device}`, async () => {
      kiln.defaultDevice(device);
      const differences: string[] = [];
      for (const [i, c] of cases.entries()) {
        const d = checkOnKiln(kiln, c, oracle[i]);
        if (d !== null) differences.push(`${c.name}: ${d}`);
        if (i % 200 === 199) await yieldToEventLoop();
      }
      if (process.env.KILN_DIFF_REPORT) for (const d of differences) console.log(`DIFF ${device} | ${d}`);
      expect(differences, differences.slice(0, 20).join("\n")).toEqual([]);
    }, timeoutMs);
  }
});
