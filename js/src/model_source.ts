// What the loaders of model files (llm.load, executorch.load, onnx.load) share: the bytes from
// what users hold (bytes, a Blob/File, a file path in Node.js, a URL) and the device option.
import { describeValue, type Device } from "./array.js";
import { core } from "./core.js";
import { initWebGpu, webGpuUnavailableReason } from "./webgpu/attach.js";

/** The device a model loads onto: `device`, else the default; an Error when it is not available. */
export async function loadDevice(op: string, device: Device | undefined): Promise<Device> {
  const d: Device = device ?? core.defaultDevice();
  if (d === "webgpu" && !(await initWebGpu()))
    throw new Error(`${op}: the webgpu device is not available${webGpuUnavailableReason() ? ` (${webGpuUnavailableReason()})` : ""}`);
  if (typeof d !== "string" || !(core.devices() as string[]).includes(d)) {
    const what = typeof d === "string" ? `'${d}'` : describeValue(d);
    throw new Error(`${op}: device ${what} is not available (have ${core.devices().join(", ")})`);
  }
  return d;
}

/** The bytes of a model source: bytes as they are, a Blob/File read, a path or URL fetched. */
export async function sourceBytes(op: string, source: unknown): Promise<Uint8Array> {
  if (source instanceof Uint8Array) return source;
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  if (typeof Blob !== "undefined" && source instanceof Blob) return new Uint8Array(await source.arrayBuffer());
  const isUrl = source instanceof URL;
  if (typeof source !== "string" && !isUrl)
    throw new Error(`${op}: got ${describeValue(source)}, expected a Uint8Array, ArrayBuffer, Blob, URL or file path`);
  const text = String(source);
  const proc = (globalThis as any).process;
  const remote = /^(https?|blob|data):/i.test(text);
  if (proc?.versions?.node && !remote) {
    // A file path or file: URL in Node.js.
    // @ts-ignore: node:fs without @types/node
    const fs = await import("node:fs/promises");
    // @ts-ignore: node:url without @types/node
    const path = text.startsWith("file:") ? (await import("node:url")).fileURLToPath(text) : text;
    try {
      const b = await fs.readFile(path);
      return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    } catch (e: any) {
      throw new Error(`${op}: cannot read '${path}': ${e?.message ?? e}`);
    }
  }
  const r = await fetch(text);
  if (!r.ok) throw new Error(`${op}: fetching '${text}' gave HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

/** A model file's load: the options object checked, its device, and the bytes of `source`. */
export async function loadModelInput(op: string, source: unknown, options: unknown): Promise<{ bytes: Uint8Array; device: Device }> {
  if (options === null || typeof options !== "object")
    throw new Error(`${op}: options got ${describeValue(options)}, expected an object`);
  const device = await loadDevice(op, (options as { device?: Device }).device);
  return { bytes: await sourceBytes(op, source), device };
}
