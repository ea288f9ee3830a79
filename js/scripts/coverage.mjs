// Compares kiln's JS namespaces with @jax-js/jax's by their keys (the coverage figures in
// docs/ARCHITECTURE.md and docs/COMPATIBILITY.md). Usage: node js/scripts/coverage.mjs
// [--names] [path to an installed @jax-js/jax package]; by default js/'s pinned devDependency
// (cd js && npm ci). --names lists every jax-js name with whether kiln has it.
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

const here = path.dirname(new URL(import.meta.url).pathname);
const args = process.argv.slice(2);
const listNames = args.includes("--names");
const jaxDir = args.find((a) => a !== "--names") ?? path.join(here, "../node_modules/@jax-js/jax");
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
console.log(`@jax-js/jax ${pkg.version}`);
for (const [name, get] of spaces) {
  const want = Object.keys(get(jax) ?? {});
  const have = new Set(Object.keys(get(kiln) ?? {}));
  const missing = want.filter((k) => !have.has(k));
  const count = want.length - missing.length;
  console.log(`${name}: ${count} of ${want.length}${missing.length ? ` (missing: ${missing.join(", ")})` : ""}`);
  if (listNames) for (const k of want) console.log(`  ${name === "top level" ? "" : `${name}.`}${k}${have.has(k) ? "" : " (missing)"}`);
}
