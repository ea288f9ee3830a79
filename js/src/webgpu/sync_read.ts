// Blocking reads of GPUBuffers in browsers (dataSync, js, item, while_loop's predicate), by
// the technique TF.js introduced: WebGPU has no blocking map, but drawing a canvas that has a
// webgpu context into a 2D canvas and reading that canvas's pixels (getImageData) makes the
// browser wait for the GPU work the canvas depends on. The buffer's bytes are copied into the
// canvas texture as bgra8unorm pixels. Two canvases are needed because each alpha mode loses
// something on the way to the 2D canvas: an "opaque" canvas keeps the three color bytes
// exactly (its alpha reads as 255), a "premultiplied" one keeps the alpha byte exactly (the
// colors come back divided by it). Each read is a GPU round trip plus pixel copies: the
// asynchronous read (runtime.read) stays the fast path.
//
// Node.js with Dawn (npm `webgpu`) has no OffscreenCanvas and no other blocking path (mapAsync
// settles only when the event loop turns), so there create() returns null.
/// <reference types="@webgpu/types" />

const WIDTH = 256; // pixels per canvas row: 1024 bytes, a multiple of WebGPU's 256-byte bytesPerRow alignment
const HEIGHT = 64; // rows per round trip: 64 KiB
const COPY_DST_TEXTURE = 0x2; // GPUTextureUsage.COPY_DST (the global exists only in browsers)

interface Target {
  canvas: OffscreenCanvas;
  context: GPUCanvasContext;
}

export class CanvasReader {
  readonly #targets: Target[]; // [opaque, premultiplied]
  readonly #host: OffscreenCanvasRenderingContext2D;

  /** A reader for this device, or null where the environment has no blocking path. */
  static create(device: GPUDevice): CanvasReader | null {
    if (typeof OffscreenCanvas === "undefined") return null;
    let reader: CanvasReader;
    try {
      reader = new CanvasReader(device);
    } catch {
      return null; // no webgpu or 2d context on an OffscreenCanvas here
    }
    // A browser whose compositor cannot see WebGPU canvases (headless Chromium without ANGLE:
    // --use-angle=swiftshader) draws them blank: reads would return zeros, so probe once.
    const probe = new Uint8Array([0x01, 0x80, 0xfe, 0x7f, 0x00, 0xff, 0x3c, 0x81]);
    const buffer = device.createBuffer({ size: probe.length, usage: 0x4 | 0x8 /* COPY_SRC | COPY_DST */ });
    try {
      device.queue.writeBuffer(buffer, 0, probe);
      const got = reader.read(device, buffer, 0, probe.length);
      return got.every((b, i) => b === probe[i]) ? reader : null;
    } catch {
      return null;
    } finally {
      buffer.destroy();
    }
  }

  private constructor(device: GPUDevice) {
    this.#targets = (["opaque", "premultiplied"] as const).map((alphaMode) => {
      const canvas = new OffscreenCanvas(WIDTH, HEIGHT);
      const context = canvas.getContext("webgpu") as GPUCanvasContext | null;
      if (!context) throw new Error("no webgpu context on an OffscreenCanvas");
      context.configure({ device, format: "bgra8unorm", usage: COPY_DST_TEXTURE, alphaMode });
      return { canvas, context };
    });
    const host = new OffscreenCanvas(WIDTH, HEIGHT).getContext("2d", { willReadFrequently: true });
    if (!host) throw new Error("no 2d context on an OffscreenCanvas");
    // Drawing replaces the pixels (no blending with the previous read's premultiplied ones).
    host.globalCompositeOperation = "copy";
    this.#host = host;
  }

  /**
   * Bytes [offset, offset + bytes) of `buffer` after the work already submitted; the buffer
   * must hold `bytes` rounded up to 4. Up to 3 bytes (a bool or int8 scalar: a while loop's
   * predicate) need only the color channels, so one round trip instead of two.
   */
  read(device: GPUDevice, buffer: GPUBuffer, offset: number, bytes: number): Uint8Array {
    const out = new Uint8Array(Math.ceil(bytes / 4) * 4);
    const chunk = WIDTH * HEIGHT * 4;
    const targets = bytes <= 3 ? this.#targets.slice(0, 1) : this.#targets;
    for (let start = 0; start < out.length; start += chunk)
      this.#chunk(device, targets, buffer, offset + start, out.subarray(start, Math.min(out.length, start + chunk)));
    return out.subarray(0, bytes);
  }

  #chunk(device: GPUDevice, targets: Target[], buffer: GPUBuffer, offset: number, out: Uint8Array): void {
    const pixels = out.length / 4;
    const full = Math.floor(pixels / WIDTH), rest = pixels % WIDTH;
    const rows = full + (rest ? 1 : 0), width = rows > 1 ? WIDTH : pixels;
    targets.forEach(({ canvas, context }, k) => {
      const texture = context.getCurrentTexture();
      const enc = device.createCommandEncoder();
      // Whole rows, then the last partial row: a copy may not read past the buffer's end.
      if (full) enc.copyBufferToTexture({ buffer, offset, bytesPerRow: WIDTH * 4 }, { texture }, { width: WIDTH, height: full });
      if (rest)
        enc.copyBufferToTexture({ buffer, offset: offset + full * WIDTH * 4, bytesPerRow: WIDTH * 4 }, { texture, origin: { x: 0, y: full } }, { width: rest, height: 1 });
      device.queue.submit([enc.finish()]);
      this.#host.drawImage(canvas, 0, 0); // waits for the copy
      const px = this.#host.getImageData(0, 0, width, rows).data;
      // Memory byte order of a bgra8unorm texel is B, G, R, A; getImageData gives R, G, B, A.
      if (k === 0) for (let i = 0; i < out.length; i += 4) (out[i] = px[i + 2]), (out[i + 1] = px[i + 1]), (out[i + 2] = px[i]);
      else for (let i = 3; i < out.length; i += 4) out[i] = px[i];
    });
  }
}
