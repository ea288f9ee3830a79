// kiln's `onnx` namespace: ONNX models run through kiln's compiler (kiln::onnx in C++). A
// session has onnxruntime-web's shape (inputNames, outputNames, run(feeds) resolving to the
// outputs by name) so code can switch, and `call` is the graph as a pure function that
// grad, vmap and jit trace like any kiln function (fine-tuning an imported model).
/**
 * ONNX models run through kiln's compiler: {@link load} (or `InferenceSession.create`) checks
 * every node against kiln's rules, `run` runs the graph compiled by jit, and `call` is the
 * graph as a pure function that grad, vmap and jit trace (fine-tuning an imported model).
 * @module
 */
import { Array, callConsuming, describeValue, type Device } from "./array.js";
import { check, core } from "./core.js";
import { loadModelInput, sourceBytes } from "./model_source.js";

/**
 * One external data file of a model (onnxruntime-web's `ExternalDataFileType`): `path` is the
 * location the model's tensors name (relative to the model, e.g. `"model.onnx.data"`) and
 * `data` its contents, a Blob, or a path (Node.js) or URL to read them from. A bare string
 * is both.
 */
export type ExternalDataFile = { path: string; data: Uint8Array | ArrayBufferLike | Blob | string } | string;

/** Options of {@link load}. */
export interface LoadOptions {
  /** Where the constants (weights) go; run inputs must be on it (default: the default device). */
  device?: Device;
  /**
   * The files holding the model's external tensor data (models over 2 GB, and many exporters,
   * keep weights there), as onnxruntime-web's session option of that name. Without it, a
   * model loaded from a file path (Node.js) or a URL reads them from the model's directory.
   */
  externalData?: readonly ExternalDataFile[];
}

/** The external data files as { path, bytes }: given ones read, else found beside `source`. */
async function externalFiles(bytes: Uint8Array, source: unknown, given: unknown): Promise<{ path: string; data: Uint8Array }[]> {
  if (given !== undefined) {
    if (!globalThis.Array.isArray(given))
      throw new Error(`onnx.load: options.externalData got ${describeValue(given)}, expected an array of { path, data } or paths`);
    return Promise.all(
      given.map(async (f: unknown, i: number) => {
        const entry = typeof f === "string" ? { path: f, data: f } : f;
        if (entry === null || typeof entry !== "object" || typeof (entry as any).path !== "string")
          throw new Error(`onnx.load: options.externalData[${i}] got ${describeValue(f)}, expected { path: string, data } or a path`);
        const { path, data } = entry as { path: string; data: unknown };
        return { path, data: await sourceBytes(`onnx.load: external data '${path}'`, data) };
      }),
    );
  }
  const names: string[] = check(core.onnxExternalFiles(bytes));
  if (names.length === 0) return [];
  const text = source instanceof URL ? source.href : typeof source === "string" ? source : null;
  // Without a path or URL there is no directory to look in: load() reports each missing file.
  if (text === null) return [];
  const remote = /^(https?|file):/i.test(text);
  const base = remote ? text : text.replace(/[^/\\]*$/, "");
  return Promise.all(
    names.map(async (name) => {
      const where = remote ? new URL(name, base) : base + name;
      return { path: name, data: await sourceBytes(`onnx.load: external data '${name}'`, where) };
    }),
  );
}

/**
 * A loaded ONNX model, in onnxruntime-web's shape: `inputNames`, `outputNames` and
 * `run(feeds)` resolving to the outputs by name; `call` is the graph as a pure function.
 *
 * @example
 * ```ts
 * import { onnx, numpy as np } from "kiln";
 * const session = await onnx.InferenceSession.create("model.onnx");
 * const out = await session.run({ [session.inputNames[0]]: np.ones([1, 3, 224, 224]) });
 * const y = out[session.outputNames[0]];
 * session.release();
 * ```
 */
export class InferenceSession {
  #handle: any;
  /** The graph's input names, in order (initializers are not inputs). */
  readonly inputNames: string[];
  /** The graph's output names, in order. */
  readonly outputNames: string[];

  /** @ignore */
  constructor(handle: any) {
    this.#handle = handle;
    this.inputNames = handle.inputNames();
    this.outputNames = handle.outputNames();
  }

  /** Loads a model as `onnx.load` does (onnxruntime-web's spelling). */
  static create(source: Uint8Array | ArrayBuffer | Blob | URL | string, options: LoadOptions = {}): Promise<InferenceSession> {
    return load(source, options);
  }

  #core(op: string): any {
    if (!this.#handle) throw new ReferenceError(`${op}: the session was released`);
    return this.#handle;
  }

  /**
   * Runs the graph compiled by jit (one compilation per new set of input shapes) on `feeds`,
   * an Array per input name; resolves to every output by name. As a jitted function's call it
   * consumes the feeds (pass `x.ref` to keep one), only when it succeeds: a missing feed or a
   * dtype or shape against the model's declared types throws an Error naming the input.
   */
  async run(feeds: Record<string, Array>): Promise<Record<string, Array>> {
    const h = this.#core("onnx.run");
    if (feeds === null || typeof feeds !== "object" || feeds instanceof Array)
      throw new Error(`onnx.run: feeds got ${describeValue(feeds)}, expected an object of Arrays by input name`);
    const names = Object.keys(feeds);
    const outs: Array[] = callConsuming(names.map((n) => feeds[n]), (i) => `onnx.run: feed '${names[i]}'`, (hs) => h.run(names, hs));
    return Object.fromEntries(this.outputNames.map((n, i) => [n, outs[i]]));
  }

  /**
   * The graph as a pure function: inputs in `inputNames` order, outputs in `outputNames`
   * order. It consumes its inputs like any kiln op and works on traced values, so
   * `grad((w) => loss(session.call([x.ref, w])[0]))` differentiates through the model.
   */
  call(inputs: Array[]): Array[] {
    const h = this.#core("onnx.call");
    if (!globalThis.Array.isArray(inputs)) throw new Error(`onnx.call: inputs got ${describeValue(inputs)}, expected an array of Arrays`);
    return callConsuming(inputs, (i) => `onnx.call: input ${i}`, (hs) => h.call(hs));
  }

  /** Frees the model (its initializers); a later call throws. */
  release(): void {
    this.#handle?.delete();
    this.#handle = null;
  }
}

/**
 * Loads an ONNX model from bytes (Uint8Array, ArrayBuffer, Blob/File), a file path (Node.js)
 * or a URL. Every node is checked first: an op, opset or attribute kiln has no rule for is an
 * Error naming the node and what is supported. External tensor data comes from
 * `options.externalData`, or for a path or URL from the files beside the model; a missing
 * file, or a range or length that does not fit, is an Error naming the tensor and the file.
 *
 * @example
 * ```ts
 * const session = await onnx.load(modelBytes, { externalData: [{ path: "model.onnx.data", data: dataBytes }] });
 * ```
 */
export async function load(source: Uint8Array | ArrayBuffer | Blob | URL | string, options: LoadOptions = {}): Promise<InferenceSession> {
  const { bytes, device } = await loadModelInput("onnx.load", source, options);
  const externalData = await externalFiles(bytes, source, options.externalData);
  return new InferenceSession(check(core.onnxLoad(bytes, { device, externalData })));
}
