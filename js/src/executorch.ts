// kiln's `executorch` namespace: ExecuTorch `.pte` programs exported from PyTorch, run through
// kiln's compiler (kiln::executorch in C++): each method is traced once per input signature
// (for dynamic shapes, once per power-of-two bucket of sizes) into one jit-fused function.
/**
 * ExecuTorch `.pte` programs exported from PyTorch, run through kiln's compiler: each method is
 * traced once per input signature into one jit-fused function on the inputs' device; a method
 * exported with dynamic sizes is traced once per bucket (each dynamic size rounded up to a
 * power of two), so a new size in a bucket compiles nothing.
 *
 * @example
 * ```ts
 * import { executorch, numpy as np } from "kiln";
 * const program = await executorch.load("model.pte");
 * const [y] = await program.run("forward", [np.ones([1, 3])]);
 * console.log(await y.jsAsync());
 * program.dispose();
 * ```
 * @module
 */
import { Array, callConsuming, describeValue, type Device } from "./array.js";
import { check, core } from "./core.js";
import { loadModelInput, sourceBytes } from "./model_source.js";

/** Options of {@link load}. */
export interface LoadOptions {
  /** Where the constants (weights) go; run inputs must be on it (default: the default device). */
  device?: Device;
  /**
   * The weights of a program exported with external constants (ExecuTorch's
   * `external_constants`: the `.pte` holds the structure only): each external tensor's value
   * under its fully qualified name ("features.0.0.weight"), of the program's dtype and
   * shape, on `device`. The program keeps its own reference; the caller still owns them.
   * Or the `.ptd` file the exporter wrote beside the program (ExecuTorch's FlatTensor named
   * data), as any source {@link load} takes: bytes, Blob, path (Node.js) or URL.
   */
  namedData?: Record<string, Array> | NamedDataProvider | NamedDataFile;
}

/**
 * Makes the value of one external tensor on request: its fully qualified name, dtype and
 * shape as the program declares them. The Arrays it returns are freed after the load.
 */
export type NamedDataProvider = (name: string, spec: { dtype: string; shape: number[] }) => Array;

/** A `.ptd` named-data file: bytes, a Blob, a path (Node.js) or a URL. */
export type NamedDataFile = Uint8Array | ArrayBuffer | Blob | URL | string;

const isFileSource = (v: unknown) =>
  typeof v === "string" || v instanceof URL || v instanceof ArrayBuffer || ArrayBuffer.isView(v) ||
  (typeof Blob !== "undefined" && v instanceof Blob);

/** A loaded `.pte` program: its methods (usually just "forward") and how to run them. */
export class Program {
  #handle: any;
  /** The program's method names, in the file's order. */
  readonly methodNames: string[];

  /** @ignore */
  constructor(handle: any) {
    this.#handle = handle;
    this.methodNames = handle.methodNames();
  }

  #core(op: string): any {
    if (!this.#handle) throw new ReferenceError(`${op}: the program was disposed`);
    return this.#handle;
  }

  /**
   * Runs `method` on `inputs`, one Array per method input in order (ExecuTorch's Long inputs
   * are int32 Arrays). As a jitted function's call, it consumes the inputs (pass `x.ref` to
   * keep one), and only when it succeeds: a wrong count, dtype or shape throws an Error naming
   * the method and the argument, and consumes nothing. Resolves to the outputs.
   */
  async run(method: string, inputs: Array[]): Promise<Array[]> {
    const h = this.#core("executorch.run");
    if (typeof method !== "string") throw new Error(`executorch.run: method got ${describeValue(method)}, expected a string`);
    if (!globalThis.Array.isArray(inputs))
      throw new Error(`executorch.run: inputs got ${describeValue(inputs)}, expected an array of Arrays`);
    return callConsuming(inputs, (i) => `executorch.run: input ${i} of '${method}'`, (hs) => h.run(method, hs));
  }

  /**
   * How many times `method` was traced and compiled: once per distinct input signature, or
   * per bucket of dynamic sizes (plus the exact-shape traces of a method that needs them).
   */
  traces(method: string): number {
    return this.#core("executorch.traces").traces(method);
  }

  /** Frees the program (its constants); a later call throws. */
  dispose(): void {
    this.#handle?.delete();
    this.#handle = null;
  }
}

/**
 * Loads a `.pte` program from bytes (Uint8Array, ArrayBuffer, Blob/File), a file path
 * (Node.js) or a URL (fetched). Operators kiln has no rule for, and delegate calls, are an
 * Error at load that names them and lists the supported operators.
 *
 * @throws Error on a file that is not a `.pte` program, or names the unsupported operators.
 */
export async function load(source: Uint8Array | ArrayBuffer | Blob | URL | string, options: LoadOptions = {}): Promise<Program> {
  const { bytes, device } = await loadModelInput("executorch.load", source, options);
  const named: unknown = (options as LoadOptions).namedData ?? {};
  const asHandle = (name: string, a: unknown) => {
    if (!(a instanceof Array)) throw new TypeError(`executorch.load: namedData['${name}'] got ${describeValue(a)}, expected an Array`);
    return a._h();
  };
  if (isFileSource(named)) {
    const ptd = await sourceBytes("executorch.load: namedData", named);
    return new Program(check(core.executorchLoad(bytes, { device, ptd })));
  }
  const made: Array[] = [];
  if (typeof named === "function") {
    const provide = (name: string, dtype: string, shape: number[]) => {
      const a = named(name, { dtype, shape });
      const h = asHandle(name, a);
      made.push(a);
      return h;
    };
    try {
      return new Program(check(core.executorchLoad(bytes, { device, provide })));
    } finally {
      for (const a of made) a.dispose();
    }
  }
  if (typeof named !== "object" || named === null)
    throw new TypeError(`executorch.load: namedData got ${describeValue(named)}, expected an object of Arrays, a function or a .ptd file`);
  const handles: Record<string, unknown> = {};
  for (const [name, a] of Object.entries(named)) handles[name] = asHandle(name, a);
  return new Program(check(core.executorchLoad(bytes, { device, namedData: handles })));
}

/** Every ExecuTorch operator kiln runs ("aten::add.out", ...), sorted. */
export function supportedOperators(): string[] {
  return core.executorchOperators();
}
