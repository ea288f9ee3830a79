// Runs a snippet of kiln code as the REPL page does, in the browser and in Node (the site
// check runs every guide snippet through it in both): `import` lines naming kiln's entry
// points become bindings to the loaded modules, the rest is the body of an async function (so
// top-level `await` works), and `print` / `console.log` append to the returned output.

// `import * as k from "kiln"` and `import { numpy as np, grad } from "kiln/optax"`, one line each.
const IMPORT = /^\s*import\s+(\*\s+as\s+(\w+)|\{([^}]*)\})\s+from\s+["']([^"']+)["'];?\s*$/;

export function rewriteImports(code, moduleNames) {
  return code
    .split("\n")
    .map((line, i) => {
      const m = line.match(IMPORT);
      if (!m) {
        if (/^\s*import[\s{*]/.test(line)) throw new SyntaxError(`line ${i + 1}: only \`import * as x from "kiln"\` and \`import { a, b as c } from "kiln"\` are supported here`);
        return line;
      }
      const [, , star, names, from] = m;
      if (!moduleNames.includes(from)) throw new Error(`line ${i + 1}: no module "${from}" here (${moduleNames.join(", ")})`);
      const target = `__modules[${JSON.stringify(from)}]`;
      if (star) return `const ${star} = ${target};`;
      const fields = names.split(",").map((s) => s.trim()).filter(Boolean).map((s) => s.replace(/^(\w+)\s+as\s+(\w+)$/, "$1: $2"));
      return `const { ${fields.join(", ")} } = ${target};`;
    })
    .join("\n");
}

// Numbers as NumPy prints them with precision 4: integers whole, others to 4 decimals without
// trailing zeros (the last bits differ between wasm and a GPU; printed docs must not).
function formatNumber(x) {
  if (Number.isInteger(x) || !Number.isFinite(x)) return String(x);
  const s = x.toFixed(4).replace(/0+$/, "").replace(/\.$/, "");
  return s === "-0" ? "0" : s;
}

// A kiln Array shows its dtype and shape (printing never reads, so it consumes nothing).
export function format(v) {
  if (typeof v === "string") return v;
  if (typeof v === "number") return formatNumber(v);
  if (v === null || typeof v !== "object") return String(v);
  if (typeof v.refCount === "number" && typeof v.dtype === "string") return String(v);
  if (ArrayBuffer.isView(v)) return `${v.constructor.name} [${Array.from(v, format).join(", ")}]`;
  if (Array.isArray(v)) return `[${v.map(format).join(", ")}]`;
  return `{ ${Object.entries(v).map(([k, x]) => `${k}: ${format(x)}`).join(", ")} }`;
}

const AsyncFunction = (async () => {}).constructor;

// Resolves to { output, error }: error is the thrown Error (output keeps what printed before it).
export async function evaluate(code, modules) {
  const lines = [];
  const print = (...args) => lines.push(args.map(format).join(" "));
  const console = { ...globalThis.console, log: print, info: print };
  try {
    const body = rewriteImports(code, Object.keys(modules));
    await new AsyncFunction("__modules", "print", "console", body)(modules, print, console);
    return { output: lines.join("\n"), error: null };
  } catch (error) {
    return { output: lines.join("\n"), error };
  }
}
