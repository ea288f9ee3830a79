// The part of Vitest's API that the suite uses (describe and test/it with .runIf/.skipIf, test/it with
// .each, beforeEach, beforeAll/afterAll, expect and expect.fail), for the browser bundle: test files run unchanged, with Vitest's own `expect`.
import * as chai from "chai";
import { JestAsymmetricMatchers, JestChaiExpect, JestExtend } from "@vitest/expect";

chai.use(JestExtend);
chai.use(JestChaiExpect);
chai.use(JestAsymmetricMatchers);

export const expect: any = (value: unknown, message?: string) => chai.expect(value, message);
expect.fail = (message?: string) => chai.expect.fail(message);

type Fn = (...args: any[]) => unknown;
type Suite = { name: string; hooks: Fn[]; after: Fn[]; children: (Suite | Test)[]; parent: Suite | null };
type Test = { name: string; fn: Fn; args: unknown[] };

const root: Suite = { name: "", hooks: [], after: [], children: [], parent: null };
let current = root;

export function describe(name: string, body: () => void) {
  const s: Suite = { name, hooks: [], after: [], children: [], parent: current };
  current.children.push(s);
  const saved = current;
  current = s;
  body();
  current = saved;
}
// Conditional suites, as Vitest's: the body registers its tests only when it runs.
const skipped = (_name: string, _body: () => void) => {};
describe.runIf = (cond: unknown) => (cond ? describe : skipped);
describe.skipIf = (cond: unknown) => (cond ? skipped : describe);
export function beforeEach(fn: Fn) {
  current.hooks.push(fn);
}
// beforeAll: once, before the first test of its suite that runs (a file's top level is the
// root suite, shared by the bundle's files: such hooks run before the first test of all).
export function beforeAll(fn: Fn) {
  let once: Promise<unknown> | null = null;
  current.hooks.push(() => (once ??= Promise.resolve().then(fn)));
}
export function afterAll(fn: Fn) {
  current.after.push(fn);
}
function format(name: string, args: unknown[]): string {
  let i = 0;
  return name.replace(/%s/g, () => String(args[i++]));
}
function makeTest() {
  const t: any = (name: string, fn: Fn) => current.children.push({ name, fn, args: [] });
  // A row that is not an array is one argument, as in Vitest (test.each(["a", "b"])).
  t.each = (table: unknown[]) => (name: string, fn: Fn) => {
    for (const row of table) {
      const args = Array.isArray(row) ? row : [row];
      current.children.push({ name: format(name, args), fn, args });
    }
  };
  const none: any = () => {};
  none.each = () => () => {};
  t.runIf = (cond: unknown) => (cond ? t : none);
  t.skipIf = (cond: unknown) => (cond ? none : t);
  return t;
}
export const test = makeTest();
export const it = test;

// ms: the test's wall time with its beforeEach hooks (run.mjs sums them per suite).
export type Result = { name: string; ok: boolean; error?: string; ms?: number };

/** Runs every registered test in order; beforeEach hooks of enclosing suites run first. */
export async function runAll(onResult: (r: Result) => void) {
  const run = async (s: Suite, prefix: string, hooks: Fn[]) => {
    const all = [...hooks, ...s.hooks];
    for (const c of s.children) {
      if ("children" in c) await run(c, prefix + c.name + " > ", all);
      else {
        const name = prefix + c.name;
        const t0 = performance.now();
        try {
          for (const h of all) await h();
          await c.fn(...c.args);
          onResult({ name, ok: true, ms: performance.now() - t0 });
        } catch (e: any) {
          onResult({ name, ok: false, error: String(e?.stack ?? e), ms: performance.now() - t0 });
        }
      }
    }
    for (const f of s.after) await f();
  };
  await run(root, "", []);
}
