// kiln's `numpy` namespace, as index.ts exports it: the one-op functions (numpy_ops.ts), the
// composed ones (numpy_composite, numpy_signal, numpy_apply) and the linalg and fft
// namespaces. Only re-exports: the modules it gathers never import it (they import
// numpy_ops.ts, or numpy_composite.ts), so the namespace sits above them all. Modules above
// numpy (io, optax) import this file (docs/ARCHITECTURE.md, the npm package's layers).
export { Array, DType, type ArrayLike } from "./array.js";
export * from "./numpy_ops.js";
export * from "./numpy_composite.js";
export * from "./numpy_forms.js";
export * as linalg from "./numpy_linalg.js";
export * as fft from "./numpy_fft.js";
export * from "./numpy_signal.js";
export * from "./numpy_apply.js";
