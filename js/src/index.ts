// The npm package `kiln`: the public API of @jax-js/jax 0.1.x over kiln's C++ core.
// Devices, the default device, devicePut and blockUntilReady live here; the rest is re-exported.
import { Array, DType, type Device } from "./array.js";
import { check, core } from "./core.js";
import * as numpy from "./numpy.js";
import * as lax from "./lax.js";
import * as nn from "./nn.js";
import * as random from "./random.js";
import * as tree from "./tree.js";
import * as scipySpecial from "./scipy_special.js";
import { JsTreeDef, type JsTree } from "./tree.js";

export { Array, DType, type Device, numpy, lax, nn, random, tree, scipySpecial, JsTreeDef, type JsTree };
export { grad, valueAndGrad, vmap, jit, jvp, vjp, linearize, jacfwd, jacrev, jacrev as jacobian, hessian, makeJaxpr, ClosedJaxpr, Jaxpr, type OwnedFunction } from "./transforms.js";

/** Every device name jax-js knows; those kiln has are returned by init(). */
export const devices: Device[] = ["cpu", "wasm", "webgpu", "webgl"];

const available = (): Device[] => core.devices() as Device[];

// jax-js's default device is wasm; kiln's core starts on cpu, so switch once at load.
if (available().includes("wasm")) check(core.setDefaultDevice("wasm"));

/** Initializes devices (all by default) and returns those available. */
export async function init(...devicesToInit: Device[]): Promise<Device[]> {
  const have = available();
  return devicesToInit.length === 0 ? have : devicesToInit.filter((d) => have.includes(d));
}

/** Returns the default device, after setting it when one is given. */
export function defaultDevice(device?: Device): Device {
  if (device !== undefined) {
    if (!available().includes(device)) throw new Error(`defaultDevice: device '${device}' is not available (have ${available().join(", ")})`);
    check(core.setDefaultDevice(device));
  }
  return core.defaultDevice() as Device;
}

/** Copies every Array (and number) of x to `device`; the inputs are consumed. */
export async function devicePut<T extends JsTree<any>>(x: T, device?: Device): Promise<any> {
  return tree.map((leaf: any) => {
    if (leaf instanceof Array) {
      if (device === undefined || leaf.device === device) return leaf;
      const h = leaf._h();
      const bytes = check(h.bytes());
      const out = new Array(check(core.fromBytes(bytes, h.shape(), h.dtype(), device)));
      leaf.dispose();
      return out;
    }
    if (typeof leaf === "number" || typeof leaf === "boolean") return numpy.array(leaf, { device });
    return leaf;
  }, x);
}

/** Waits until every Array leaf is computed; does not consume them. */
export async function blockUntilReady<T extends JsTree<any>>(x: T): Promise<T> {
  for (const leaf of tree.leaves(x)) if (leaf instanceof Array) await leaf.blockUntilReady();
  return x;
}
