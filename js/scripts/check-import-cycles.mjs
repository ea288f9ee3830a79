#!/usr/bin/env node
// Fails when the modules of js/src import each other in a cycle, and prints the cycle (issue
// 18: the package's modules form a DAG, see docs/ARCHITECTURE.md, "The npm package").
//
// Every module reference counts, type-only ones included (`import type`, `export type ...
// from`, `import("./x.js").T` in a type): a type-only cycle is harmless to the loader, but it
// is still two modules that each need the other to be understood, which is what the layering
// forbids. References are read with TypeScript's own parser (a devDependency), so multi-line
// imports, `export * as ns from` and dynamic `import("./x.js")` are all seen; strings and
// comments that merely look like imports are not. Only relative references to files under
// js/src are edges; packages, node: modules and the generated cores are not in the graph.
//
// Usage: node scripts/check-import-cycles.mjs [--graph] [src dir]
//   --graph prints each module with the modules it imports (the layering docs are made from it).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ts = createRequire(import.meta.url)("typescript");

/** The module specifiers that `text` (TypeScript source) refers to, in source order. */
export function moduleReferences(text, fileName = "x.ts") {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out = [];
  const literal = (n) => (n && ts.isStringLiteralLike(n) ? n.text : null);
  const visit = (node) => {
    let spec = null;
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) spec = literal(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      spec = literal(node.moduleReference.expression);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) spec = literal(node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) spec = literal(node.argument.literal);
    if (spec !== null) out.push(spec);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** Every .ts file under `dir` (recursively), as paths relative to it with "/" separators. */
function tsFiles(dir, sub = "") {
  const out = [];
  for (const name of readdirSync(join(dir, sub)).sort()) {
    const rel = sub ? `${sub}/${name}` : name;
    if (statSync(join(dir, rel)).isDirectory()) out.push(...tsFiles(dir, rel));
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) out.push(rel);
  }
  return out;
}

/** Module graph of `srcDir`: file -> the files it references (ESM ".js" names map to ".ts"). */
export function importGraph(srcDir) {
  const files = tsFiles(srcDir);
  const known = new Set(files);
  const graph = new Map();
  for (const f of files) {
    const deps = new Set();
    for (const spec of moduleReferences(readFileSync(join(srcDir, f), "utf8"), f)) {
      if (!spec.startsWith(".")) continue;
      const target = relative(srcDir, resolve(srcDir, dirname(f), spec)).split("\\").join("/");
      const ts_ = target.replace(/\.(m?js)$/, (_, ext) => (ext === "mjs" ? ".mts" : ".ts"));
      if (known.has(ts_)) deps.add(ts_);
      else if (known.has(`${target}.ts`)) deps.add(`${target}.ts`);
      else if (known.has(`${target}/index.ts`)) deps.add(`${target}/index.ts`);
      // Anything else (the generated kiln_core*.mjs) is outside the graph.
    }
    graph.set(f, [...deps].sort());
  }
  return graph;
}

/** One cycle of `graph` as [a, b, ..., a], or null when the graph is acyclic (depth-first search). */
export function findCycle(graph) {
  const state = new Map(); // absent: unvisited, 1: on the current path, 2: done
  const path = [];
  const visit = (n) => {
    state.set(n, 1);
    path.push(n);
    for (const m of graph.get(n) ?? []) {
      if (state.get(m) === 1) return [...path.slice(path.indexOf(m)), m];
      if (!state.has(m)) {
        const c = visit(m);
        if (c) return c;
      }
    }
    path.pop();
    state.set(n, 2);
    return null;
  };
  for (const n of [...graph.keys()].sort()) {
    if (state.has(n)) continue;
    const c = visit(n);
    if (c) return c;
  }
  return null;
}

/** One cycle per group of mutually importing modules, so a report names every tangle at once. */
export function findCycles(graph) {
  const cycles = [];
  let rest = new Map(graph);
  for (let c = findCycle(rest); c; c = findCycle(rest)) {
    cycles.push(c);
    // Drop the modules that reach and are reached from this cycle (its whole tangle).
    const reach = (g, from) => {
      const seen = new Set(from);
      const todo = [...from];
      while (todo.length) for (const m of g.get(todo.pop()) ?? []) if (!seen.has(m)) (seen.add(m), todo.push(m));
      return seen;
    };
    const reverse = new Map([...rest.keys()].map((k) => [k, []]));
    for (const [k, deps] of rest) for (const d of deps) reverse.get(d)?.push(k);
    const down = reach(rest, c), up = reach(reverse, c);
    const tangle = new Set([...down].filter((m) => up.has(m)));
    rest = new Map([...rest].filter(([k]) => !tangle.has(k)).map(([k, deps]) => [k, deps.filter((d) => !tangle.has(d))]));
  }
  return cycles;
}

function main(argv) {
  const here = dirname(fileURLToPath(import.meta.url));
  const printGraph = argv.includes("--graph");
  const srcDir = resolve(argv.find((a) => !a.startsWith("--")) ?? join(here, "..", "src"));
  if (!existsSync(srcDir)) throw new Error(`check-import-cycles: no directory ${srcDir}`);

  // The checker checks itself first, so a parser or search that broke cannot pass vacuously.
  const selfTest = moduleReferences('import type { A } from "./a.js";\nexport * as b from "./b.js";\nconst c = import("./c.js");\n// import "./no.js"\n');
  if (selfTest.join(",") !== "./a.js,./b.js,./c.js") throw new Error(`check-import-cycles: self-test parsed [${selfTest}]`);
  const toy = new Map([["x.ts", ["y.ts"]], ["y.ts", ["z.ts"]], ["z.ts", ["x.ts"]]]);
  if (findCycle(toy)?.join(" ") !== "x.ts y.ts z.ts x.ts" || findCycle(new Map([["x.ts", ["y.ts"]], ["y.ts", []]])) !== null)
    throw new Error("check-import-cycles: self-test of the cycle search failed");

  const graph = importGraph(srcDir);
  const edges = [...graph.values()].reduce((n, d) => n + d.length, 0);
  if (!graph.has("index.ts") || edges === 0) throw new Error(`check-import-cycles: found no modules or imports under ${srcDir}`);
  if (printGraph) for (const [f, deps] of graph) console.log(`${f}: ${deps.join(" ")}`);
  const cycles = findCycles(graph);
  if (cycles.length) {
    for (const c of cycles) console.error(`check-import-cycles: import cycle in js/src: ${c.join(" -> ")}`);
    console.error("Move what the modules of a cycle share into a lower module that none of them imports back (docs/ARCHITECTURE.md).");
    return 1;
  }
  console.log(`check-import-cycles: ${graph.size} modules, ${edges} imports, no cycle`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2));
