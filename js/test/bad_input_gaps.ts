// Failures the bad-input tables found in the TypeScript layer and that are not fixed yet,
// with the reason for each (bad_input.test.ts excuses their failing rows, except a changed
// sentinel, and fails once one of them passes, so that a fix takes it off this list).
export const knownGaps: Record<string, string> = {
  "grad": "a foreign argument fails inside as a JS TypeError that does not name it; leaks an Array it made from one argument when another is bad",
  "vmap": "a foreign argument fails inside as a JS TypeError that does not name it; leaks an Array it made from one argument when another is bad",
  "jit": "the row's traced function itself fails (np.add of mismatched shapes): its error propagates unchanged and the Array it made is not consumed, as in jax-js; the row, not kiln, needs changing",
  "vjp": "a foreign argument fails inside as a JS TypeError that does not name it",
  "linearize": "the row's traced function itself fails (np.add of mismatched shapes): its error propagates unchanged and the Array it made is not consumed, as in jax-js; the row, not kiln, needs changing",
  "jacfwd": "accepts the bad input without an Error",
  "jacrev": "accepts the bad input without an Error",
  "jacobian": "accepts the bad input without an Error",
  "hessian": "accepts the bad input without an Error",
  "makeJaxpr": "the row's traced function itself fails (np.add of mismatched shapes): its error propagates unchanged and the Array it made is not consumed, as in jax-js; the row, not kiln, needs changing",
};
