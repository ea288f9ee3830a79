// The seeded weight formula of tests/pte_formula.h (see there) in JavaScript, for the
// ExecuTorch models exported with external constants: the same float32 values bit for bit
// (32-bit wrapping multiplies through Math.imul, one rounding from double to float32).
// Plain JS so that examples/mobilenet-web, which runs the same program, imports it too.
function seedOf(name) {
  let h = 2166136261;
  for (const c of new TextEncoder().encode(name)) h = Math.imul(h ^ c, 16777619) >>> 0;
  return h;
}

/**
 * The values of the tensor `name` of `shape` (float32).
 * @param {string} name
 * @param {number[]} shape
 * @returns {Float32Array}
 */
export function formulaValues(name, shape) {
  const n = shape.reduce((a, b) => a * b, 1);
  let center = 0, spread = 0.1;
  if (name.startsWith("input")) spread = 1;
  else if (name.endsWith("running_var")) [center, spread] = [1, 0.5];
  else if (name.endsWith("weight") && shape.length === 1) [center, spread] = [1, 0.25];
  else if (name.endsWith("weight")) spread = Math.sqrt(6 / (n / shape[0]));
  const seed = seedOf(name);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let x = (Math.imul(i, 0x9e3779b9) + seed) >>> 0;
    x = (x ^ (x >>> 16)) >>> 0;
    x = Math.imul(x, 0x85ebca6b) >>> 0;
    x = (x ^ (x >>> 13)) >>> 0;
    x = Math.imul(x, 0xc2b2ae35) >>> 0;
    x = (x ^ (x >>> 16)) >>> 0;
    const u = (x >>> 8) / 16777216;
    out[i] = center + spread * (2 * u - 1);
  }
  return out;
}
