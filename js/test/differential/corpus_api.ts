// Differential programs over jax-js's API tables: each elementwise function, reduction and
// activation on a fixed input, and its grad, vmap and jit, as a jax-js user writes them.
import type { DiffCase, Lib } from "./harness.js";

// Inputs inside every function's domain (name -> how to make it).
const UNIT = [-0.9, -0.3, 0, 0.4, 0.8];
const POSITIVE = [0.5, 1, 2, 10];
const ABOVE_ONE = [1, 1.5, 3, 10];
const INTS = [-7, -2, 0, 3, 12];

const unitNames = [
  "sin", "cos", "tan", "arcsin", "arccos", "arctan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
  "arcsinh", "asinh", "arctanh", "atanh", "exp", "exp2", "expm1", "log1p", "negative", "positive",
  "square", "sign", "floor", "ceil", "trunc", "rint", "round", "around", "cbrt", "abs", "absolute",
  "isfinite", "isinf", "isnan", "isneginf", "isposinf", "signbit", "deg2rad", "rad2deg", "radians",
  "degrees", "sinc", "reciprocal",
];
const positiveNames = ["log", "log2", "log10", "sqrt"];
const aboveOneNames = ["arccosh", "acosh"];
// Differentiable almost everywhere on UNIT without a kink at the sample points.
const smoothUnit = new Set([
  "sin", "cos", "tan", "arcsin", "arccos", "arctan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
  "arcsinh", "asinh", "arctanh", "atanh", "exp", "exp2", "expm1", "log1p", "negative", "positive",
  "square", "deg2rad", "rad2deg", "radians", "degrees",
]);

const binaryNames = [
  "add", "subtract", "multiply", "divide", "trueDivide", "floorDivide", "remainder", "fmod", "power",
  "pow", "maximum", "minimum", "fmax", "fmin", "arctan2", "atan2", "hypot", "logaddexp", "logaddexp2",
  "copysign", "heaviside", "equal", "notEqual", "less", "lessEqual", "greater", "greaterEqual",
  "logicalAnd", "logicalOr", "logicalXor", "floatPower",
];
const smoothBinary = new Set(["add", "subtract", "multiply", "divide", "trueDivide", "arctan2", "hypot", "logaddexp", "logaddexp2"]);
const intBinaryNames = [
  "bitwiseAnd", "bitwiseOr", "bitwiseXor", "add", "subtract", "multiply", "floorDivide", "remainder",
  "maximum", "minimum", "power",
];
const shiftNames = ["leftShift", "rightShift", "bitwiseLeftShift", "bitwiseRightShift"];
const intUnaryNames = ["invert", "bitwiseNot", "bitwiseInvert", "bitwiseCount", "abs", "negative", "sign", "square"];

const reductionNames = ["sum", "prod", "mean", "max", "min", "argmax", "argmin", "std", "var_", "ptp", "nansum", "nanmean", "nanmax", "nanmin", "nanprod", "nanstd", "nanvar", "countNonzero", "all", "any"];
const smoothReductions = new Set(["sum", "prod", "mean", "std", "var_", "nansum", "nanmean"]);
const scanNames = ["cumsum", "cumprod", "nancumsum", "nancumprod"];
const cumulativeNames = ["cumulativeSum", "cumulativeProd"];
// jax-js 0.1.25 cannot run these; kiln can (NumPy's and JAX's results).
const beyond: Record<string, string> = {
  "numpy.power of int32": "jax-js 0.1.25 computes integer power through log, which has no int32 kernel",
  "numpy.sign of int32": "jax-js 0.1.25's sign of int32 fails inside its where (wrong dtype)",
};
// kiln follows JAX where jax-js differs.
const known: Record<string, string> = {
  "numpy.logicalAnd broadcast with a number": "kiln's logical ops return bool, as JAX's; jax-js 0.1.25 returns uint32 when one operand is a JS number",
  "numpy.logicalOr broadcast with a number": "kiln's logical ops return bool, as JAX's; jax-js 0.1.25 returns uint32 when one operand is a JS number",
};

const activationNames = [
  "relu", "relu6", "sigmoid", "silu", "swish", "gelu", "elu", "celu", "selu", "leakyRelu", "hardSigmoid",
  "hardSilu", "hardSwish", "hardTanh", "logSigmoid", "softSign", "softplus", "sparsePlus", "sparseSigmoid",
  "squareplus", "mish", "identity", "softmax", "logSoftmax", "logsumexp", "logmeanexp", "standardize",
];

const loose = { rtol: 1e-4, atol: 1e-5 };
const mat = (np: Lib) => np.array([[0.5, -1.25, 2], [3, 0.75, -0.5]]);
// Off every activation's kink (relu6 and the hard functions bend at -3, 0, 3 and 6).
const smoothMat = (np: Lib) => np.array([[0.5, -1.25, 2], [2.5, 0.75, -0.5]]);

function unaryCases(names: string[], values: number[], smooth: Set<string>): DiffCase[] {
  return names.flatMap((f) => [
    { name: `numpy.${f}`, run: ({ numpy: np }: Lib) => np[f](np.array(values)) },
    ...(smooth.has(f)
      ? [
          { name: `grad of numpy.${f}`, tol: loose, run: ({ numpy: np, grad }: Lib) => grad((x: any) => np.sum(np[f](x)))(np.array(values)) },
          { name: `jit of numpy.${f}`, run: ({ numpy: np, jit }: Lib) => jit((x: any) => np[f](x))(np.array(values)) },
        ]
      : []),
  ]);
}

export const apiCases: DiffCase[] = [
  ...unaryCases(unitNames, UNIT, smoothUnit),
  ...unaryCases(positiveNames, POSITIVE, new Set(positiveNames)),
  ...unaryCases(aboveOneNames, ABOVE_ONE, new Set()),
  ...binaryNames.flatMap((f) => [
    { name: `numpy.${f}`, run: ({ numpy: np }: Lib) => np[f](np.array([0.5, -1.5, 2, 3, -0.25]), np.array([2, 0.5, -1, 3, 0.75])) },
    { name: `numpy.${f} broadcast with a number`, run: ({ numpy: np }: Lib) => np[f](mat(np), 1.5) },
    ...(smoothBinary.has(f)
      ? [{ name: `grad of numpy.${f}`, tol: loose, run: ({ numpy: np, grad }: Lib) => grad((x: any, y: any) => np.sum(np[f](x, y)), { argnums: [0, 1] })(np.array([0.5, 1.5, 2]), np.array([2, 0.5, 1])) }]
      : []),
  ]),
  ...intBinaryNames.map((f) => ({ name: `numpy.${f} of int32`, run: ({ numpy: np }: Lib) => np[f](np.array(INTS, { dtype: np.int32 }), np.array([3, 2, 5, 2, 1], { dtype: np.int32 })) })),
  ...shiftNames.map((f) => ({ name: `numpy.${f} of int32`, run: ({ numpy: np }: Lib) => np[f](np.array([1, 5, 64, 7, 3], { dtype: np.int32 }), np.array([0, 1, 3, 2, 4], { dtype: np.int32 })) })),
  ...intUnaryNames.map((f) => ({ name: `numpy.${f} of int32`, run: ({ numpy: np }: Lib) => np[f](np.array(INTS, { dtype: np.int32 })) })),
  ...reductionNames.flatMap((f) => [
    { name: `numpy.${f}`, run: ({ numpy: np }: Lib) => np[f](mat(np)) },
    { name: `numpy.${f} along axis 0`, run: ({ numpy: np }: Lib) => np[f](mat(np), 0) },
    { name: `numpy.${f} keepdims`, run: ({ numpy: np }: Lib) => np[f](mat(np), 1, { keepdims: true }) },
    ...(smoothReductions.has(f)
      ? [
          { name: `grad of numpy.${f}`, tol: loose, run: ({ numpy: np, grad }: Lib) => grad((x: any) => np.sum(np[f](x, 1)))(mat(np)) },
          { name: `vmap of numpy.${f}`, run: ({ numpy: np, vmap }: Lib) => vmap((x: any) => np[f](x))(mat(np)) },
        ]
      : []),
  ]),
  ...scanNames.flatMap((f) => [
    { name: `numpy.${f}`, run: ({ numpy: np }: Lib) => np[f](mat(np), 1) },
    { name: `grad of numpy.${f}`, tol: loose, run: ({ numpy: np, grad }: Lib) => grad((x: any) => np.sum(np[f](x, 0)))(mat(np)) },
  ]),
  ...cumulativeNames.flatMap((f) => [
    { name: `numpy.${f} without an axis`, run: ({ numpy: np }: Lib) => np[f](mat(np)) },
    { name: `numpy.${f}`, run: ({ numpy: np }: Lib) => np[f](mat(np), { axis: 1 }) },
    { name: `numpy.${f} of 1-d`, run: ({ numpy: np }: Lib) => np[f](np.array([1, 2, 3])) },
  ]),
  ...activationNames.flatMap((f) => [
    { name: `nn.${f}`, tol: loose, run: ({ numpy: np, nn }: Lib) => nn[f](smoothMat(np)) },
    { name: `grad of nn.${f}`, tol: loose, run: ({ numpy: np, nn, grad }: Lib) => grad((x: any) => np.sum(nn[f](x)))(smoothMat(np)) },
    { name: `vmap of nn.${f}`, tol: loose, run: ({ numpy: np, nn, vmap }: Lib) => vmap((x: any) => nn[f](x))(smoothMat(np)) },
  ]),
  {
    name: "grad of nn.hardSigmoid at its upper kink",
    knownDifference: "kiln follows JAX's relu6, whose derivative is 0 at 0 and 6; jax-js 0.1.25 takes the inner side's slope (1/6 for hardSigmoid at 3)",
    run: ({ numpy: np, nn, grad }: Lib) => grad((x: any) => np.sum(nn.hardSigmoid(x)))(np.array([3])),
  },
].map((c) => ({ ...c, beyondJaxjs: beyond[c.name], knownDifference: (c as DiffCase).knownDifference ?? known[c.name] }));
