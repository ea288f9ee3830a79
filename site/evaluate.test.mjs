// Tests of the REPL's evaluator (site/demos/repl/evaluate.mjs) on its own, without kiln: the
// import forms it rewrites or refuses, how values print, and errors returned with the output
// printed before them. Run by `make test-site` before the site check.
import assert from "node:assert/strict";
import { evaluate, format, rewriteImports } from "./demos/repl/evaluate.mjs";

const names = ["kiln", "kiln/optax"];
assert.equal(rewriteImports('import * as k from "kiln";', names), 'const k = __modules["kiln"];');
assert.equal(rewriteImports("import { numpy as np, grad } from 'kiln/optax'", names), 'const { numpy: np, grad } = __modules["kiln/optax"];');
assert.equal(rewriteImports('const s = "import";\nx;', names), 'const s = "import";\nx;');
assert.throws(() => rewriteImports('import k from "kiln";', names), /line 1: only/);
assert.throws(() => rewriteImports('\nimport { a } from "react";', names), /line 2: no module "react"/);

assert.equal(format(3), "3");
assert.equal(format(0.1 + 0.2), "0.3");
assert.equal(format(2.71828), "2.7183");
assert.equal(format(-0.00001), "0");
assert.equal(format([[1, 0.5], [true, null]]), "[[1, 0.5], [true, null]]");
assert.equal(format(new Float32Array([1, 0.25])), "Float32Array [1, 0.25]");
assert.equal(format({ w: 2, b: [1] }), "{ w: 2, b: [1] }");
// A kiln Array (anything with refCount and dtype) prints through its toString, without reading.
assert.equal(format({ refCount: 1, dtype: "float32", toString: () => "Array:float32[2]" }), "Array:float32[2]");

const fake = { kiln: { two: 2 } };
assert.deepEqual(await evaluate('import { two } from "kiln";\nprint("x", two * 2);\nconsole.log(await Promise.resolve(1.5));', fake), { output: "x 4\n1.5", error: null });
const r = await evaluate('print("before");\nthrow new RangeError("no");', fake);
assert.equal(r.output, "before");
assert.ok(r.error instanceof RangeError);
const syntax = await evaluate("print(", fake);
assert.ok(syntax.error instanceof SyntaxError);
console.log("[site] evaluator tests: ok");
