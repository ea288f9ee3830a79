// The elementwise functions of kiln's `numpy` namespace (and matmul, dot and their kin): one
// table from jax-js's names to the core's ops, each a single call (run) that consumes its
// Arrays. Operands broadcast with NumPy's rules and promote with JAX's (numbers weakly
// typed). numpy_ops.ts re-exports this module.
import { run, type ArrayLike, Array } from "./array.js";

const un = (op: string) => (x: ArrayLike): Array => run(op, [x]);
const bin = (op: string) => (x: ArrayLike, y: ArrayLike): Array => run(op, [x, y]);

/** Elementwise `-x`. */
export const negative = un("negative");
/** Elementwise `+x` (a copy of x). */
export const positive = un("positive");
/** Elementwise `|x|`. */
export const absolute = un("abs");
/** Elementwise `|x|` (alias of {@link absolute}). */
export const abs = absolute;
/** Elementwise sign: -1, 0 or 1 (NaN stays NaN). */
export const sign = un("sign");
/** Elementwise `e^x`. */
export const exp = un("exp");
/** Elementwise `2^x`. */
export const exp2 = un("exp2");
/** Elementwise `e^x - 1`, accurate near 0. */
export const expm1 = un("expm1");
/** Elementwise natural logarithm (NaN below 0, -inf at 0). */
export const log = un("log");
/** Elementwise `log(1 + x)`, accurate near 0. */
export const log1p = un("log1p");
/** Elementwise base-2 logarithm. */
export const log2 = un("log2");
/** Elementwise base-10 logarithm. */
export const log10 = un("log10");
/** Elementwise square root (NaN below 0). */
export const sqrt = un("sqrt");
/** Elementwise `x * x`. */
export const square = un("square");
/** Elementwise `1 / x`. */
export const reciprocal = un("reciprocal");
/** Elementwise sine (radians). */
export const sin = un("sin");
/** Elementwise cosine (radians). */
export const cos = un("cos");
/** Elementwise tangent (radians). */
export const tan = un("tan");
/** Elementwise inverse sine (alias of {@link arcsin}). */
export const asin = un("arcsin");
/** Elementwise inverse cosine (alias of {@link arccos}). */
export const acos = un("arccos");
/** Elementwise inverse tangent (alias of {@link arctan}). */
export const atan = un("arctan");
/** Elementwise inverse sine, in [-π/2, π/2]. */
export const arcsin = asin;
/** Elementwise inverse cosine, in [0, π]. */
export const arccos = acos;
/** Elementwise inverse tangent, in (-π/2, π/2). */
export const arctan = atan;
/** Elementwise hyperbolic sine. */
export const sinh = un("sinh");
/** Elementwise hyperbolic cosine. */
export const cosh = un("cosh");
/** Elementwise hyperbolic tangent. */
export const tanh = un("tanh");
/** Elementwise inverse hyperbolic sine. */
export const arcsinh = un("arcsinh");
/** Elementwise inverse hyperbolic cosine (NaN below 1). */
export const arccosh = un("arccosh");
/** Elementwise inverse hyperbolic tangent (NaN outside [-1, 1]). */
export const arctanh = un("arctanh");
/** Alias of {@link arcsinh}. */
export const asinh = arcsinh;
/** Alias of {@link arccosh}. */
export const acosh = arccosh;
/** Alias of {@link arctanh}. */
export const atanh = arctanh;
/** Elementwise floor (the largest integer not above x). */
export const floor = un("floor");
/** Elementwise ceiling (the smallest integer not below x). */
export const ceil = un("ceil");
/** Elementwise rounding to the nearest integer, halves to even (as NumPy). */
export const round = un("round");
/** Alias of {@link round}. */
export const around = round;
/** Alias of {@link round}. */
export const rint = round;
/** Elementwise rounding toward zero. */
export const trunc = un("trunc");
/** Elementwise logical NOT (nonzero is true); a bool array. */
export const logicalNot = un("logical_not");
/** Elementwise bitwise NOT of integers, logical NOT of booleans. */
export const invert = un("invert");
/** Alias of {@link invert}. */
export const bitwiseNot = invert;
/** Alias of {@link invert}. */
export const bitwiseInvert = invert;
/** Elementwise test for NaN; a bool array. */
export const isnan = un("isnan");
/** Elementwise test for ±infinity; a bool array. */
export const isinf = un("isinf");
/** Elementwise test for finite values (not NaN, not ±inf); a bool array. */
export const isfinite = un("isfinite");
/** The array flattened to 1-D in C order. */
export const ravel = un("ravel");

/** Elementwise `x + y`. Broadcasts; throws an Error on incompatible shapes. */
export const add = bin("add");
/** Elementwise `x - y`. Broadcasts; throws an Error on incompatible shapes. */
export const subtract = bin("subtract");
/** Elementwise `x * y`. Broadcasts; throws an Error on incompatible shapes. */
export const multiply = bin("multiply");
/**
 * Elementwise `x / y`; integer inputs give float32 (true division). Broadcasts; throws an Error on incompatible shapes.
 */
export const trueDivide = bin("divide");
/** Alias of {@link trueDivide}. */
export const divide = trueDivide;
/** Elementwise `floor(x / y)`. Broadcasts; throws an Error on incompatible shapes. */
export const floorDivide = bin("floor_divide");
/**
 * Elementwise remainder with the sign of the divisor (NumPy's `mod`). Broadcasts; throws an Error on incompatible shapes.
 */
export const remainder = bin("mod");
/** Elementwise `x ** y`. Broadcasts; throws an Error on incompatible shapes. */
export const power = bin("power");
/** Alias of {@link power}. */
export const pow = power;
/** Elementwise maximum (NaN if either is NaN). Broadcasts; throws an Error on incompatible shapes. */
export const maximum = bin("maximum");
/** Elementwise minimum (NaN if either is NaN). Broadcasts; throws an Error on incompatible shapes. */
export const minimum = bin("minimum");
/** Alias of {@link arctan2}. */
export const atan2 = bin("arctan2");
/**
 * Elementwise angle of the point (x, y) = (second, first argument): `arctan2(y, x)`, in [-π, π]. Broadcasts; throws an Error on incompatible shapes.
 */
export const arctan2 = atan2;
/**
 * Elementwise `log(exp(x) + exp(y))` without overflow. Broadcasts; throws an Error on incompatible shapes.
 */
export const logaddexp = bin("logaddexp"); // one primitive in the core (NaN/inf as JAX)
/** Elementwise `x == y`; a bool array. Broadcasts; throws an Error on incompatible shapes. */
export const equal = bin("equal");
/** Elementwise `x != y`; a bool array. Broadcasts; throws an Error on incompatible shapes. */
export const notEqual = bin("not_equal");
/** Elementwise `x < y`; a bool array. Broadcasts; throws an Error on incompatible shapes. */
export const less = bin("less");
/** Elementwise `x <= y`; a bool array. Broadcasts; throws an Error on incompatible shapes. */
export const lessEqual = bin("less_equal");
/** Elementwise `x > y`; a bool array. Broadcasts; throws an Error on incompatible shapes. */
export const greater = bin("greater");
/** Elementwise `x >= y`; a bool array. Broadcasts; throws an Error on incompatible shapes. */
export const greaterEqual = bin("greater_equal");
/**
 * Elementwise logical AND (nonzero is true); a bool array. Broadcasts; throws an Error on incompatible shapes.
 */
export const logicalAnd = bin("logical_and");
/** Elementwise logical OR; a bool array. Broadcasts; throws an Error on incompatible shapes. */
export const logicalOr = bin("logical_or");
/** Elementwise logical XOR; a bool array. Broadcasts; throws an Error on incompatible shapes. */
export const logicalXor = bin("logical_xor");
/**
 * Elementwise bitwise AND of integers or booleans. Broadcasts; throws an Error on incompatible shapes.
 */
export const bitwiseAnd = bin("bitwise_and");
/**
 * Elementwise bitwise OR of integers or booleans. Broadcasts; throws an Error on incompatible shapes.
 */
export const bitwiseOr = bin("bitwise_or");
/**
 * Elementwise bitwise XOR of integers or booleans. Broadcasts; throws an Error on incompatible shapes.
 */
export const bitwiseXor = bin("bitwise_xor");
/** Elementwise `x << y` of integers. Broadcasts; throws an Error on incompatible shapes. */
export const leftShift = bin("left_shift");
/**
 * Elementwise `x >> y` of integers (arithmetic for int32). Broadcasts; throws an Error on incompatible shapes.
 */
export const rightShift = bin("right_shift");
/** Alias of {@link leftShift}. */
export const bitwiseLeftShift = leftShift;
/** Alias of {@link rightShift}. */
export const bitwiseRightShift = rightShift;
/**
 * Matrix product with NumPy's rules: 1-D operands are promoted to matrices, leading axes broadcast. Broadcasts; throws an Error on incompatible shapes.
 *
 * @example
 * ```ts
 * const y = np.matmul(np.ones([2, 3]), np.ones([3, 4])); // shape [2, 4], every entry 3
 * ```
 */
export const matmul = bin("matmul");
/**
 * NumPy's dot: the inner product of vectors, the matrix product of 2-D arrays, and a sum over the last axis of x and the second-to-last of y otherwise. Broadcasts; throws an Error on incompatible shapes.
 */
export const dot = bin("dot");
/**
 * The inner product of the two arrays flattened. Broadcasts; throws an Error on incompatible shapes.
 */
export const vdot = bin("vdot");
/**
 * The inner product over the last axes of x and y. Broadcasts; throws an Error on incompatible shapes.
 */
export const inner = bin("inner");
/**
 * The outer product of x and y flattened: shape [x.size, y.size]. Broadcasts; throws an Error on incompatible shapes.
 */
export const outer = bin("outer");
