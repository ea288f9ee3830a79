// kiln's `lax` namespace (jax-js names): convolutions, windowed reductions, erf and
// stopGradient, each a call into the core's op table.
import { Array, run, type ArrayLike, type Pair } from "./array.js";

export type PaddingType = "VALID" | "SAME" | "SAME_LOWER" | Pair[];

export function convGeneralDilated(
  lhs: Array,
  rhs: Array,
  windowStrides: number[],
  padding: PaddingType,
  { lhsDilation, rhsDilation, featureGroupCount }: { lhsDilation?: number[]; rhsDilation?: number[]; featureGroupCount?: number } = {},
): Array {
  return run("conv_general_dilated", [lhs, rhs], { strides: windowStrides, padding, lhsDilation, rhsDilation, featureGroupCount });
}
export function conv(lhs: Array, rhs: Array, windowStrides: number[], padding: PaddingType): Array {
  return convGeneralDilated(lhs, rhs, windowStrides, padding);
}
export function convWithGeneralPadding(lhs: Array, rhs: Array, windowStrides: number[], padding: PaddingType, lhsDilation?: number[], rhsDilation?: number[]): Array {
  return convGeneralDilated(lhs, rhs, windowStrides, padding, { lhsDilation, rhsDilation });
}
/** reduceWindow with one of np.sum, np.max, np.min, np.prod as the computation. */
export function reduceWindow(operand: Array, computation: (x: Array) => Array, windowDimensions: number[], windowStrides?: number[]): Array {
  const name = (computation as any).kilnReduce ?? computation.name;
  const op = { sum: "sum", max: "max", min: "min", prod: "prod" }[name as string];
  if (op === undefined) throw new Error(`reduceWindow: got computation ${name || "(anonymous)"}, kiln supports np.sum, np.max, np.min and np.prod`);
  return run("reduce_window", [operand], { op, window: windowDimensions, strides: windowStrides ?? windowDimensions.map(() => 1), padding: "VALID" });
}
export const erf = (x: ArrayLike): Array => run("erf", [x]);
export const erfc = (x: ArrayLike): Array => run("subtract", [1, run("erf", [x])]);
export const erfInv = (x: ArrayLike): Array => run("erf_inv", [x]);
export const stopGradient = (x: ArrayLike): Array => run("stop_gradient", [x]);
