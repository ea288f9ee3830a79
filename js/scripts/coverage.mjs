// Compares kiln's JS namespaces with @jax-js/jax's by their keys (the coverage figures in
// docs/ARCHITECTURE.md and docs/COMPATIBILITY.md). Usage: node js/scripts/coverage.mjs
// [--names] [path to an installed @jax-js/jax package]; by default js/'s pinned devDependency
// (cd js && npm ci). --table FILE prints docs/COMPATIBILITY.md's table instead: per namespace,
// the names the differential corpus calls (FILE: the names after `USED` in the output of
// `KILN_DIFF_REPORT=1 npx vitest run test/differential.test.ts -t report`) and the others.
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

const here = path.dirname(new URL(import.meta.url).pathname);
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
const tableAt = args.indexOf("--table");
const usedFile = tableAt >= 0 ? args.splice(tableAt, 2)[1] : null;
const jaxDir = args[0] ?? path.join(here, "../node_modules/@jax-js/jax");
const pkg = createRequire(import.meta.url)(path.join(jaxDir, "package.json"));
const jax = await import(pathToFileURL(path.join(jaxDir, "dist/index.js")).href);
const kiln = await import(pathToFileURL(path.join(here, "../dist/index.js")).href);

const spaces = [
  ["top level", (m) => m],
  ["numpy", (m) => m.numpy],
  ["numpy.linalg", (m) => m.numpy.linalg],
  ["numpy.fft", (m) => m.numpy.fft],
  ["lax", (m) => m.lax],
  ["lax.linalg", (m) => m.lax.linalg],
  ["nn", (m) => m.nn],
  ["random", (m) => m.random],
  ["tree", (m) => m.tree],
  ["scipySpecial", (m) => m.scipySpecial],
];
if (usedFile !== null) {
  const used = new Set(readFileSync(usedFile, "utf8").split(/\s+/).filter(Boolean));
  console.log(`| namespace | names | in kiln | called by the differential corpus | not yet in the corpus |`);
  console.log(`|---|---|---|---|---|`);
  for (const [name, get] of spaces) {
    const want = Object.keys(get(jax) ?? {});
    const have = new Set(Object.keys(get(kiln) ?? {}));
    const full = (k) => (name === "top level" ? k : `${name}.${k}`);
    const inCorpus = want.filter((k) => used.has(full(k)));
    const notYet = want.filter((k) => !used.has(full(k)));
    const present = want.filter((k) => have.has(k)).length;
    console.log(`| ${name} | ${want.length} | ${present} | ${inCorpus.length}: ${inCorpus.join(", ")} | ${notYet.length}: ${notYet.join(", ")} |`);
  }
  process.exit(0);
}
console.log(`@jax-js/jax ${pkg.version}`);
for (const [name, get] of spaces) {
  const want = Object.keys(get(jax) ?? {});
  const have = new Set(Object.keys(get(kiln) ?? {}));
  const missing = want.filter((k) => !have.has(k));
  const count = want.length - missing.length;
  console.log(`${name}: ${count} of ${want.length}${missing.length ? ` (missing: ${missing.join(", ")})` : ""}`);
}
