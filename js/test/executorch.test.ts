// kiln's executorch namespace: every committed `.pte` program (tests/fixtures/pte, written by
// tools/gen_pte_fixtures.py with ExecuTorch 1.5.1) against ExecuTorch's own outputs on cpu,
// wasm and webgpu (where Node has an adapter), the same cases tests/executorch_test.cpp runs
// in C++; then the API's contract: method names, consumption of inputs, errors naming the
// method and argument, one trace per input signature. Node only: the programs are read from the repository's files.
import { describe, expect, test } from "vitest";
import { executorch, init, numpy as np } from "../dist/index.js";
import { compare, compareAsync, parseFixtures, type FixArray } from "./fixtures.js";
import programsText from "../../tests/fixtures/pte/programs.txt?raw";
import modelsText from "../../tests/fixtures/pte/models.txt?raw";
import { formulaValues } from "./pte_formula.mjs";

const cases = parseFixtures(programsText);
const file = (name: string) => new URL(`../../tests/fixtures/pte/${name}.pte`, import.meta.url);
const programs = new Map<string, Promise<executorch.Program>>();
const program = (name: string, device = "cpu") => {
  const key = `${name}@${device}`;
  if (!programs.has(key)) programs.set(key, executorch.load(file(name), { device: device as any }));
  return programs.get(key)!;
};
const onDevice = (a: FixArray, device: string) =>
  np.array(a.dtype === "bool" ? a.values.map((v) => v !== 0) : a.values, { shape: a.shape, dtype: a.dtype as any, device: device as any });

// webgpu where Node has an adapter (Dawn; SwiftShader on machines without a GPU, with
// KILN_REQUIRE_WEBGPU=1 failing instead of skipping): it reads back asynchronously only.
const haveGpu = (await init("webgpu")).includes("webgpu");
if (!haveGpu && process.env.KILN_REQUIRE_WEBGPU === "1") throw new Error("KILN_REQUIRE_WEBGPU=1 but no webgpu adapter");
const devices = haveGpu ? ["cpu", "wasm", "webgpu"] : ["cpu", "wasm"];

// On SwiftShader, contractions of 16+ rows, columns and ridx take the workgroup-tiled WGSL
// path, whose shaders SwiftShader compiles slowly: the 17-token GPT block ~130 s (2-4 s for
// its 3- and 8-token runs), the 16-token decoder step 39 s, the Whisper block 39 s, the ViT
// 27 s, MobileNetV3-small 86 s (all pass); ResNet-18 (64x64: 20 convolutions of up to 512
// channels) is left out with them, not yet timed there. make test leaves these to KILN_PTE_WEBGPU_ALL=1
// (and GPU machines) to keep its time.
const slowOnSwiftShader = new Set(process.env.KILN_PTE_WEBGPU_ALL === "1" ? [] : [
  "gpt_block_dynamic_2", "gpt2_kv_decoder_2", "whisper_encoder_block_0", "vit_small_0", "mobilenet_v3_small_0",
  "resnet18_0",
]);

describe.each(devices)("executorch programs on %s", (device) => {
  const run = cases.filter((c) => device !== "webgpu" || !slowOnSwiftShader.has(c.id));
  test.each(run.map((c) => [c.id, c] as const))("%s", async (_id, c) => {
    const p = await program(c.op, device);
    const inputs = c.inputs.map((i) => onDevice(i.arr, device));
    const outs = await p.run(c.params.method[0], inputs);
    expect(outs.length).toBe(c.expects.length);
    for (const [i, o] of outs.entries()) {
      expect(o.device).toBe(device);
      const diff = device === "webgpu" ? await compareAsync(o, c.expects[i], c.tol) : compare(o, c.expects[i], c.tol);
      expect(diff, `output ${i}`).toBeNull();
      o.dispose();
    }
  });
});

// The models exported with external constants (tools/pte_models.py): their weights and
// large inputs come from the seeded formula (pte_formula.mjs, as tests/pte_formula.h).
const modelCases = parseFixtures(modelsText);
// The static input shapes of the models whose input is a formula (their programs declare them).
const modelInputShapes: Record<string, number[]> = {
  whisper_encoder_block: [1, 16, 40], vit_small: [1, 3, 32, 32], mobilenet_v3_small: [1, 3, 224, 224],
  resnet18: [1, 3, 64, 64],
};
// The two conv nets on the cpu device (the interpreter) took 41 s (ResNet-18) and 11 s
// (MobileNetV3-small) of this file's 73 s on the loaded 2-core machine (wasm: 2.8 s for all 9
// models). What they check is covered twice without them: this file's wasm run of the same
// cases goes through the same JS and binding code, and the C++ suite runs the same cases on the
// same interpreter code (ExecutorchModels.EveryModelMatchesExecuTorch in the ASan stage's cpu
// run). KILN_PTE_CPU_ALL=1 runs them here too.
const slowOnInterpreter = new Set(process.env.KILN_PTE_CPU_ALL === "1" ? [] : ["resnet18_0", "mobilenet_v3_small_0"]);
describe.each(devices)("executorch models on %s", (device) => {
  const run = modelCases.filter((c) => (device !== "webgpu" || !slowOnSwiftShader.has(c.id)) && (device !== "cpu" || !slowOnInterpreter.has(c.id)));
  test.each(run.map((c) => [c.id, c] as const))("%s", async (_id, c) => {
    const p = await executorch.load(file(c.op), {
      device: device as any,
      namedData: (name, { dtype, shape }) =>
        dtype === "float32" ? np.array(formulaValues(name, shape), { shape, device: device as any })
                            : np.zeros(shape, { dtype: dtype as any, device: device as any }),
    });
    const generated = (c.params.formula_inputs ?? []).map(Number);
    const written = c.inputs.map((i) => onDevice(i.arr, device));
    const inputs = [];
    for (let k = 0, w = 0; k < generated.length + written.length; k++) {
      if (!generated.includes(k)) { inputs.push(written[w++]); continue; }
      const shape = modelInputShapes[c.op];
      inputs.push(np.array(formulaValues(`input${k}`, shape), { shape, device: device as any }));
    }
    const outs = await p.run(c.params.method[0], inputs);
    expect(outs.length).toBe(c.expects.length);
    for (const [i, o] of outs.entries()) {
      const diff = device === "webgpu" ? await compareAsync(o, c.expects[i], c.tol) : compare(o, c.expects[i], c.tol);
      expect(diff, `output ${i}`).toBeNull();
      o.dispose();
    }
    p.dispose();
  }, 120_000);
});

describe("executorch API", () => {
  test("named data from the .ptd file the exporter wrote", async () => {
    // The LSTM's weights as ExecuTorch wrote them (tools/gen_pte_fixtures.py): the same
    // values as the formula, so the outputs are the same bits.
    const fromFile = await executorch.load(file("lstm"), { device: "cpu", namedData: new URL("../../tests/fixtures/pte/lstm.ptd", import.meta.url) });
    const fromFormula = await executorch.load(file("lstm"), {
      device: "cpu", namedData: (name, { shape }) => np.array(formulaValues(name, shape), { shape, device: "cpu" }),
    });
    const inputs = () => [np.linspace(-1, 1, 2 * 7 * 8, true, { device: "cpu" }).reshape([2, 7, 8]), np.full([2, 2, 24], 0.25, { device: "cpu" }), np.full([2, 2, 24], 0.25, { device: "cpu" })];
    const a = await fromFile.run("forward", inputs());
    const b = await fromFormula.run("forward", inputs());
    for (const [i, o] of a.entries()) expect(o.js()).toEqual(b[i].js());
    fromFile.dispose();
    fromFormula.dispose();
    await expect(executorch.load(file("lstm"), { namedData: new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9]) })).rejects.toThrow(/ptd: file identifier/);
  });

  test("method names and the supported operators", async () => {
    const p = await program("mlp");
    expect(p.methodNames).toEqual(["forward"]);
    const ops = executorch.supportedOperators();
    expect(ops.length).toBeGreaterThan(50);
    expect(ops).toEqual([...ops].sort());
    expect(ops).toContain("aten::addmm.out");
  });

  test("run consumes its inputs only when it succeeds", async () => {
    const p = await program("mlp");
    const x = np.zeros([4, 16], { device: "cpu" });
    await expect(p.run("forward", [x.ref, x.ref])).rejects.toThrow(/forward/);
    expect(x.refCount).toBe(3); // the failed call took nothing
    x.dispose();
    x.dispose();
    const [y] = await p.run("forward", [x]);
    expect(y.shape).toEqual([4, 10]);
    expect(x.refCount).toBe(0);
    y.dispose();
  });

  test("bad inputs name the method and the argument", async () => {
    const p = await program("mlp");
    await expect(p.run("forward", [np.zeros([4, 16], { dtype: np.int32, device: "cpu" })])).rejects.toThrow(/forward.*(input|argument).*0|dtype/);
    await expect(p.run("forward", [np.zeros([4, 15], { device: "cpu" })])).rejects.toThrow(/forward/);
    await expect(p.run("backward", [np.zeros([4, 16], { device: "cpu" })])).rejects.toThrow(/backward/);
    await expect(p.run("forward", [1 as any])).rejects.toThrow(/input 0 of 'forward'/);
    await expect(executorch.load(new Uint8Array([1, 2, 3, 4]))).rejects.toThrow(/executorch\.load|pte/);
    await expect(executorch.load(42 as any)).rejects.toThrow(/executorch\.load: got/);
  });

  test("a dynamic sequence length traces once per bucket", async () => {
    const p = await executorch.load(file("gpt_block_dynamic"), { device: "cpu" });
    // 5, 8 and 7 share the bucket of 8 tokens; 3 is in the bucket of 4
    for (const n of [5, 8, 7, 3, 5]) {
      const [y] = await p.run("forward", [np.zeros([1, n], { dtype: np.int32, device: "cpu" })]);
      expect(y.shape).toEqual([1, n, 16]);
      y.dispose();
    }
    expect(p.traces("forward")).toBe(2);
    p.dispose();
    await expect(p.run("forward", [np.zeros([1, 5], { dtype: np.int32, device: "cpu" })])).rejects.toThrow(/disposed/);
  });
});
