// Loads kiln's Emscripten core once (top-level await), and turns the JS Errors that the
// core returns into thrown Errors. Everything else in the package talks to the core here.

// @ts-ignore: generated ES module without types (scripts/wrap-core.mjs)
import createKilnCore from "./kiln_core.mjs";

/** The embind object behind one Array (js/src/core/js_values.h). */
export interface Handle {
  shape(): number[];
  dtype(): string;
  weak(): boolean;
  device(): string;
  str(): string;
  bytes(): Uint8Array | Error;
  delete(): void;
  isDeleted(): boolean;
}
/** A kiln function callable from JS (a transformed JS function). */
export interface Func {
  call(args: any[]): any;
  delete(): void;
}

export const core: any = await createKilnCore();

/** An Error thrown by a JS function while the core was tracing it, rethrown unchanged. */
let pendingError: unknown = null;
export function setPendingError(e: unknown) {
  pendingError = e;
}

/** Throws if the core returned an Error; otherwise returns the result. */
export function check<T>(r: T | Error): T {
  if (r instanceof Error) {
    const e = pendingError;
    pendingError = null;
    if (e !== null) throw e;
    throw new Error(r.message);
  }
  return r;
}
