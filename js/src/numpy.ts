// kiln's `numpy` namespace, as index.ts exports it: the one-op functions (numpy_ops.ts), the
// composed ones (numpy_composite, numpy_signal, numpy_apply) and the linalg and fft
// namespaces. Only re-exports: the modules it gathers never import it (they import
// numpy_ops.ts, or numpy_composite.ts), so the namespace sits above them all. Modules above
// numpy (io, optax) import this file (docs/ARCHITECTURE.md, the npm package's layers).
/**
 * NumPy's functions over kiln Arrays, with jax-js's names (camelCase: `expandDims`,
 * `logicalAnd`) and option objects for NumPy's keyword arguments. Every function consumes its
 * Array arguments (pass `x.ref` to keep one); JS numbers are weakly typed scalars. Operands
 * broadcast with NumPy's rules and promote with JAX's.
 *
 * @example
 * ```ts
 * import { numpy as np } from "kiln";
 * const x = np.arange(6).astype(np.float32).reshape([2, 3]);
 * const y = np.sum(np.multiply(x.ref, x), 1);   // row sums of squares
 * console.log(await y.jsAsync());                // [5, 50]
 * ```
 * @module
 */
export { Array, DType, type ArrayLike } from "./array.js";
export * from "./numpy_ops.js";
export * from "./numpy_composite.js";
export * from "./numpy_forms.js";
export * as linalg from "./numpy_linalg.js";
export * as fft from "./numpy_fft.js";
export * from "./numpy_signal.js";
export * from "./numpy_apply.js";
