// kiln's llm namespace on SmolLM2-135M-Instruct Q4_1 (data/models, `make models`) in Node.js:
// the tokenizer and greedy generation against llama.cpp's fixtures (tests/fixtures/llm, the
// ones tests/llm_test.cpp reads), logits, stop strings, AbortSignal, dispose, bad options.
// Short on purpose: on the 2-core CI machine a padded 8-token prefill takes seconds on wasm
// and each decode step about one (docs/ARCHITECTURE.md, LLM runtime in JS). Node only: the
// browser run covers generation through examples/llm-web (test/browser/llm.mjs).
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { getWebGPUDevice, init, llm, memory, profiler, type WebGpuCounters } from "../dist/index.js";
import greedyText from "../../tests/fixtures/llm/smollm2_greedy.txt?raw";
import tokenizeText from "../../tests/fixtures/llm/smollm2_tokenize.txt?raw";

const MODEL = new URL("../../data/models/SmolLM2-135M-Instruct.Q4_1.gguf", import.meta.url);
// The same tolerance as tests/llm_test.cpp (kMaxLogprobError): llama.cpp rounds activations to
// 8 bits and keeps the KV cache in f16, kiln computes in f32; a real bug moves whole nats.
const MAX_LOGPROB_ERROR = 0.75;

const fromHex = (hex: string) => new TextDecoder().decode(new Uint8Array(hex.match(/../g)!.map((h) => parseInt(h, 16))));

/** Prompt `index` of smollm2_greedy.txt: text, ids, llama.cpp's greedy ids and top-8 per position. */
function greedyCase(index: number) {
  const lines = greedyText.split("\n");
  const at = lines.findIndex((l) => l.startsWith(`prompt ${index} `));
  const [head, hex, ids] = lines[at].split("\t");
  const n = Number(head.split(" ")[2]);
  const rows = lines.slice(at + 1, at + 1 + n).map((l) => {
    const [, , greedy, ...top] = l.split(" ");
    return { greedy: Number(greedy), top: top.map((t) => t.split(":").map(Number) as [number, number]) };
  });
  return { text: fromHex(hex), ids: ids.split(" ").map(Number), rows };
}

function logSoftmax(row: Float32Array): Float64Array {
  let mx = -Infinity;
  for (const v of row) mx = Math.max(mx, v);
  let sum = 0;
  for (const v of row) sum += Math.exp(v - mx);
  const lse = mx + Math.log(sum);
  return Float64Array.from(row, (v) => v - lse);
}

async function collect(g: AsyncIterable<string>): Promise<string[]> {
  const pieces: string[] = [];
  for await (const p of g) pieces.push(p);
  return pieces;
}

let model: llm.Model;
beforeAll(async () => {
  // A short cache and prefill bucket: the prompts here are at most 8 tokens.
  model = await llm.load(MODEL, { nCtx: 64, prefillBucket: 8 });
});
afterAll(() => model?.dispose());

describe("llm: SmolLM2 on wasm", () => {
  test("the tokenizer gives llama.cpp's ids and decodes back", () => {
    const lines = tokenizeText.split("\n").filter((l) => /^[0-9a-f]+\t[0-9 ]+$/.test(l));
    expect(lines.length).toBeGreaterThan(30);
    for (const line of [...lines.slice(0, 12), ...lines.slice(-6)]) {
      const [hex, ids] = line.split("\t");
      const text = fromHex(hex);
      const want = ids.split(" ").map(Number);
      expect(model.tokenizer.encode(text, { addSpecial: false }), text).toEqual(want);
      expect(model.tokenizer.decode(want)).toBe(text);
    }
    expect(model.tokenizer.encode("<|im_start|>", { parseSpecial: true })).toEqual([1]);
    expect(model.tokenizer.decode(Int32Array.from([1, 19556]), { renderSpecial: true })).toBe("<|im_start|>Hello");
    expect(() => model.tokenizer.encode(5 as any)).toThrow(/tokenizer.encode: text got the number 5, expected a string/);
    // A byte token that is no whole character (234: the byte 0x90) decodes to U+FFFD, not to bytes past the end.
    expect(model.tokenizer.decode([234])).toBe("\uFFFD");
    expect(() => model.tokenizer.decode([49152])).toThrow(/tokenizer.decode: token id 49152 is out of range/);
    expect(() => model.tokenizer.decode("abc" as any)).toThrow(/tokenizer.decode: ids got/);
  });

  test("logits after the prompt are llama.cpp's log-probabilities", () => {
    const c = greedyCase(0);
    expect(model.tokenizer.encode(c.text)).toEqual(c.ids); // add_bos is false in this file
    const rows = model.logits(c.ids);
    expect(rows.length).toBe(c.ids.length);
    expect(rows[0].length).toBe(model.nVocab);
    const lp = logSoftmax(rows[rows.length - 1]);
    for (const [id, want] of c.rows[0].top) if (want > -3) expect(Math.abs(lp[id] - want), `id ${id}`).toBeLessThanOrEqual(MAX_LOGPROB_ERROR);
    expect(lp.indexOf(Math.max(...lp))).toBe(c.rows[0].greedy);
    expect(() => model.logits([])).toThrow(/llm.logits: 0 tokens/);
    expect(() => model.logits([1, -2])).toThrow(/llm.logits: token id -2 is out of range/);
  });

  test("greedy generation streams llama.cpp's greedy tokens, one piece per token", async () => {
    const c = greedyCase(0);
    // Positions whose top-1/top-2 margin exceeds the tolerance are decided: kiln must agree.
    let decided = 0;
    while (decided < c.rows.length && c.rows[decided].top[0][1] - c.rows[decided].top[1][1] > MAX_LOGPROB_ERROR) decided++;
    const n = Math.min(decided, 4);
    expect(n).toBeGreaterThanOrEqual(3);
    const g = model.generate(c.text, { maxTokens: n });
    const pieces = await collect(g);
    expect(pieces.length).toBe(n);
    const want = c.rows.slice(0, n).map((r) => r.greedy);
    expect(pieces.join("")).toBe(model.tokenizer.decode(want));
    for (let k = 1; k <= n; k++) expect(pieces.slice(0, k).join("")).toBe(model.tokenizer.decode(want.slice(0, k)));
    const s = g.stats()!;
    expect(s).toMatchObject({ promptTokens: c.ids.length, generatedTokens: n, stopReason: "max_tokens" });
    expect(s.prefillTokensPerSecond).toBeGreaterThan(0);
    expect(s.decodeTokensPerSecond).toBeGreaterThan(0);
    // The host's part of the decode steps lies within them (on wasm it is nearly all of it).
    expect(s.decodeHostMs).toBeGreaterThan(0);
    expect(s.decodeHostMs).toBeLessThanOrEqual(s.decodeMs);
    expect(model.stats()).toEqual(s);
    console.log(`llm (wasm): prefill ${s.promptTokens} tokens ${s.prefillTokensPerSecond.toFixed(2)} tok/s, decode ${s.decodeTokensPerSecond.toFixed(2)} tok/s`);
  });

  test("a stop string ends the text before it; next() calls are served in order", async () => {
    // Greedy: " Paris" then "." (both decided by a wide margin in the fixture).
    const g = model.generate("The capital of France is", { maxTokens: 4, stop: [".", "never"] });
    // next() called again before the last call settled: served in order, one token each; the
    // "." token releases no text and ends it.
    const all = await Promise.all([g.next(), g.next(), g.next()]);
    expect(all).toEqual([{ done: false, value: " Paris" }, { done: false, value: "" }, { done: true, value: undefined }]);
    expect(g.stats()).toMatchObject({ generatedTokens: 2, stopReason: "stop" });
  });

  test("an AbortSignal and a break end the generation", async () => {
    const ctl = new AbortController();
    const g = model.generate("The capital of France is", { maxTokens: 8, signal: ctl.signal });
    const pieces: string[] = [];
    for await (const p of g) {
      pieces.push(p);
      ctl.abort();
    }
    expect(pieces).toEqual([" Paris"]);
    expect(g.stats()).toMatchObject({ generatedTokens: 1, stopReason: "aborted" });
    // Aborted before it starts: no prefill, no token.
    const before = model.generate("The capital of France is", { signal: ctl.signal });
    expect(await collect(before)).toEqual([]);
    expect(before.stats()).toMatchObject({ generatedTokens: 0, stopReason: "aborted" });
    // `break` calls return(): the same end.
    const b = model.generate("The capital of France is", { maxTokens: 8 });
    for await (const _ of b) break;
    expect(b.stats()).toMatchObject({ generatedTokens: 1, stopReason: "aborted" });
    expect(await b.next()).toEqual({ done: true, value: undefined });
  });

  test("ignoreEos keeps generating past the end-of-generation token", async () => {
    // Greedy SmolLM2 ends this turn after 11 tokens ...
    const messages = [{ role: "system" as const, content: "Answer in one word." }, { role: "user" as const, content: "Capital of France?" }];
    const ended = model.chat(messages, { maxTokens: 16 });
    const first = await collect(ended);
    expect(ended.stats()).toMatchObject({ stopReason: "eos" });
    expect(ended.stats()!.generatedTokens).toBeLessThan(16);
    // ... and with ignoreEos it goes on to maxTokens, starting with the same text.
    const g = model.chat(messages, { maxTokens: 16, ignoreEos: true });
    const pieces = await collect(g);
    expect(g.stats()).toMatchObject({ generatedTokens: 16, stopReason: "max_tokens" });
    expect(pieces.join("").startsWith(first.join(""))).toBe(true);
  });

  test("bad options and messages throw at the call, naming the function", () => {
    const bad: [() => unknown, RegExp][] = [
      [() => model.generate("x", { maxTokens: 0 }), /llm.generate: maxTokens is 0, expected at least 1/],
      [() => model.generate("x", { temperature: "hot" as any }), /llm.generate: option 'temperature' got the string 'hot', expected a number/],
      [() => model.generate("x", { topP: 1.5 }), /llm.generate: topP is 1.5, expected in \(0, 1\]/],
      [() => model.generate("x", { max_tokens: 3 } as any), /llm.generate: unknown option 'max_tokens'/],
      [() => model.generate("x", { stop: [""] }), /llm.generate: stop string 0 is empty/],
      [() => model.generate("x", { stop: 5 as any }), /llm.generate: option 'stop' got the number 5, expected an array/],
      [() => model.generate("x", { signal: {} as any }), /llm.generate: option 'signal' got .*, expected an AbortSignal/],
      [() => model.generate("x", { seed: -1 }), /llm.generate: option 'seed' got -1/],
      [() => model.generate("x", { ignoreEos: "yes" as any }), /llm.generate: option 'ignoreEos' got the string 'yes', expected a boolean/],
      [() => model.generate(5 as any), /llm.generate: prompt got a number, expected a string/],
      [() => model.generate("x", 3 as any), /llm.generate: options got a number, expected an object/],
      [() => model.chat([{ role: "bot", content: "hi" }] as any), /llm.chat: message 0 has role 'bot'/],
      [() => model.chat([]), /llm.chat: got no messages/],
      [() => model.chat([{ role: "user" }] as any), /llm.chat: messages\[0\].content got undefined, expected a string/],
      [() => model.chat("hi" as any), /llm.chat: messages got the string 'hi', expected an array/],
      [() => model.chat([{ role: "user", content: "hi" }], { topK: -1 }), /llm.chat: topK is -1/],
    ];
    for (const [f, re] of bad) expect(f).toThrow(re);
    expect(model.renderChat([{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }])).toBe(
      "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
    );
  });

  test("load rejects bad sources and options; dispose frees everything", async () => {
    await expect(llm.load(new Uint8Array([1, 2, 3, 4]))).rejects.toThrow(/llm.load: .*GGUF/i);
    await expect(llm.load(5 as any)).rejects.toThrow(/llm.load: got a number, expected a Uint8Array/);
    await expect(llm.load("no/such/model.gguf")).rejects.toThrow(/llm.load: cannot read 'no\/such\/model.gguf'/);
    await expect(llm.load(MODEL, { nCtx: 0 })).rejects.toThrow(/llm.load: n_ctx is 0/);
    await expect(llm.load(MODEL, { device: "gpu" as any })).rejects.toThrow(/llm.load: device 'gpu' is not available/);
    await expect(llm.load(MODEL, { ctx: 5 } as any)).rejects.toThrow(/llm.load: unknown option 'ctx'/);
    await expect(llm.load(MODEL, { fusedAttention: 1 } as any)).rejects.toThrow(/llm.load: .*fusedAttention/);
    const before = memory();
    const m = await llm.load(MODEL, { nCtx: 16 });
    expect(memory().numCoreArrays).toBeGreaterThan(before.numCoreArrays);
    const g = m.generate("Hi", { maxTokens: 2 }); // not started: dispose ends it
    m.dispose();
    m.dispose(); // twice is harmless
    expect(memory().numCoreArrays).toBe(before.numCoreArrays);
    expect(await g.next()).toEqual({ done: true, value: undefined });
    expect(g.stats()!.stopReason).toBe("disposed");
    expect(() => m.generate("Hi")).toThrow(ReferenceError);
    expect(() => m.tokenizer.encode("Hi")).toThrow(/tokenizer.encode: the model was disposed/);
    expect(() => m.logits([1])).toThrow(ReferenceError);
  });
});

// The same model on webgpu: the decode step's kernels fit the device's storage-buffer limit
// and the KV cache is written by GPU copies, so greedy decoding gives llama.cpp's tokens
// there too. Opt-in (KILN_LLM_WEBGPU=1), not part of make test: on SwiftShader, the CPU
// WebGPU of machines without a GPU, these 3 tokens took 337 s on the 2-core machine.
const env = (globalThis as any).process?.env ?? {};
const onGpu = env.KILN_LLM_WEBGPU === "1";
const gpu = onGpu && (await init("webgpu")).includes("webgpu");
describe.runIf(onGpu)("llm: SmolLM2 on webgpu", () => {
  test("greedy generation gives llama.cpp's greedy tokens, as on wasm", async () => {
    expect(gpu).toBe(true);
    const c = greedyCase(0);
    const n = 3;
    const m = await llm.load(MODEL, { device: "webgpu", nCtx: 64, prefillBucket: 8 });
    try {
      expect(m.device).toBe("webgpu");
      const g = m.generate(c.text, { maxTokens: n });
      const pieces = await collect(g);
      expect(pieces.join("")).toBe(m.tokenizer.decode(c.rows.slice(0, n).map((r) => r.greedy)));
      expect(g.stats()).toMatchObject({ promptTokens: c.ids.length, generatedTokens: n, stopReason: "max_tokens" });
    } finally {
      m.dispose();
    }
  }, 600_000);
});

// A decode step on webgpu, on a tiny model (tools/gen_tiny_llm.py: 2 layers, random weights)
// so that it runs in make test on SwiftShader: the same greedy tokens as wasm, and a steady
// state whose counters (profiler.webgpuCounters()) do not move: no pipeline after the first 3 decode
// steps, no new GPUBuffer after the second (the first decode step's outputs are still alive
// while the second allocates its own, so two sets exist; the prefill before it had other
// sizes), the same kernels every step, and two submits per step: the copy of the pending
// step's token id for readback, then the step after it, which greedy decoding dispatches
// before the token is read (llm::Generation::speculate), so the copy goes ahead of it.
const TINY = new URL("../../tests/fixtures/llm/tiny_llama.gguf", import.meta.url);
const tinyGpu = (await init("webgpu")).includes("webgpu");
describe.skipIf(!tinyGpu && !env.KILN_REQUIRE_WEBGPU)("llm: a tiny model on webgpu", () => {
  // Both attentions of a decode step: the unfused kernels (the default) and, with
  // fusedAttention, the decode_attention routine's.
  test.each([false, true])("greedy tokens equal wasm's; decode steps compile, allocate and submit nothing new (fusedAttention %s)", async (fusedAttention) => {
    const steps = 24;
    const options = { maxTokens: steps };
    // Along this prompt's greedy path the top-1/top-2 logit margin is at least 6e-3 (measured
    // on wasm), far above the devices' float differences (~1e-6): equal tokens are expected.
    const prompt = "x";
    const wasm = await llm.load(TINY, { device: "wasm", nCtx: 64, prefillBucket: 4 });
    let want: string[];
    try {
      want = await collect(wasm.generate(prompt, options));
    } finally {
      wasm.dispose();
    }
    const m = await llm.load(TINY, { device: "webgpu", nCtx: 64, prefillBucket: 4, fusedAttention });
    try {
      const got: string[] = [];
      const counters: WebGpuCounters[] = [];
      for await (const piece of m.generate(prompt, options)) {
        got.push(piece);
        counters.push(profiler.webgpuCounters()!);
      }
      expect(got).toEqual(want);
      expect(new Set(want).size).toBeGreaterThan(1); // the random model does not repeat one token
      // counters[i] is read after piece i, whose loop iteration dispatched decode step i + 1.
      const delta = (i: number, k: keyof WebGpuCounters) => counters[i][k] - counters[i - 1][k];
      // The last two pieces dispatch no step: the one for the last token was dispatched ahead.
      for (let i = 3; i < steps - 2; i++) {
        expect(delta(i, "pipelines"), `pipelines at step ${i + 1}`).toBe(0);
        expect(delta(i, "createdBuffers"), `buffers created at step ${i + 1}`).toBe(0);
        // Bind groups: the steps' outputs alternate between two sets of buffers (one step's
        // are alive while the next allocates), so the second set's groups are new once more.
        if (i > 3) expect(delta(i, "bindGroups"), `bind groups created at step ${i + 1}`).toBe(0);
        expect(delta(i, "submits"), `submits at step ${i + 1}`).toBe(2);
        expect(delta(i, "dispatches"), `dispatches at step ${i + 1}`).toBe(delta(2, "dispatches"));
        // Greedy: the step computes the argmax, and only its int32 token id comes back.
        expect(delta(i, "reads"), `reads at step ${i + 1}`).toBe(1);
        expect(delta(i, "readBytes"), `bytes read at step ${i + 1}`).toBe(4);
      }
      expect(delta(2, "createdBuffers")).toBe(0);
      // The kernels of one decode step, as Llm.TinyModelDecodeStepDispatches counts them on
      // the C++ devices (issue 20: 55 before attention merged its two score parts without a
      // concatenated softmax and length-1 reductions became elementwise; 51 + 2 since the
      // greedy step computes its argmax, a max and a lowest-index min; 46 since jit fusion
      // puts exp of the new row's score in the weighted sum's epilogue, the cache copies each
      // layer's rows from their offset in the packed output instead of realizing them first,
      // and on webgpu RMSNorm's scaled vector is read inside the matvecs: 50 on the CPU devices;
      // 44 and 48 since each layer's q and k (both q4_1; v is q4_0) are one merged matvec:
      // -1 per layer, the only change in the dispatch log; 41 since on webgpu gate and up are
      // one merged matvec whose SiLU product the down matvec recomputes in its loads (-1 per
      // layer), and small vectors at the step's start are recomputed where they are read: 40;
      // 37 since q and k are rotated by one RoPE kernel per layer and the RoPE tables' cos and
      // sin are one kernel: jit fusion computes a part of an expression as its whole); 30
      // since a step returns each layer's keys and values as views of the rotation's and the
      // q/k/v matvec's buffers (no kernel packs them: -1), and RMSNorm's sum of squares and the
      // argmax's maximum are recomputed as preludes of the kernels that read them (-2 per
      // layer, -1 for the final norm, -1 for the argmax; docs/ARCHITECTURE.md, jit). With
      // fusedAttention, 20: each layer's attention is the decode_attention routine's two
      // kernels (partial softmaxes over chunks of the cache, their merge) instead of six
      // (scores over the cache, the new row's score, max, exp, sum, weighted sum: -4 per
      // layer), the routine takes the start instead of the cache mask (-1 per step), and the
      // RoPE tables are computed in each layer's rotation kernel, which then feeds no
      // reduction but the routine (-1).
      expect(delta(2, "dispatches")).toBe(fusedAttention ? 20 : 30);
    } finally {
      m.dispose();
    }
  }, 600_000);

  // Issue 20's done-when: 1000 generated tokens compile no pipeline after the first 3 decode
  // steps and create no GPUBuffer after the second, as the context grows to 1000 positions
  // (the current length is a runtime value; the cache is allocated once at nCtx). The tiny
  // model's context_length is 2048 so that nCtx 1024 is not clipped.
  test("1000 tokens: no pipeline after step 3, no new GPUBuffer after step 2", async () => {
    const steps = 1000;
    const m = await llm.load(TINY, { device: "webgpu", nCtx: 1024, prefillBucket: 4 });
    try {
      const counters: WebGpuCounters[] = [];
      const g = m.generate("x", { maxTokens: steps, ignoreEos: true });
      for await (const _ of g) counters.push(profiler.webgpuCounters()!);
      expect(g.stats()!.generatedTokens).toBe(steps);
      expect(counters.length).toBe(steps); // one piece per token
      const grew = (i: number, k: keyof WebGpuCounters) => counters[counters.length - 1][k] - counters[i][k];
      expect(grew(2, "pipelines"), "pipelines compiled after step 3").toBe(0);
      expect(grew(1, "createdBuffers"), "GPUBuffers created after step 2").toBe(0);
    } finally {
      m.dispose();
    }
  }, 600_000);

  // Issue 20's robustness: the GPU going away in the middle of a generation (forced with
  // device.destroy()) rejects the stream with the device's error, later calls on the model
  // say the same, dispose() still works, and after init("webgpu") a new model generates.
  test("device loss during generation: a clear error, the model disposes, a new device runs again", async () => {
    const m = await llm.load(TINY, { device: "webgpu", nCtx: 64, prefillBucket: 4 });
    const got: string[] = [];
    const lost = /webgpu: the device was lost .*await init\("webgpu"\) creates a new device/s;
    await expect((async () => {
      for await (const piece of m.generate("x", { maxTokens: 12 })) {
        got.push(piece);
        if (got.length === 3) getWebGPUDevice().destroy();
      }
    })()).rejects.toThrow(lost);
    expect(got.length).toBe(3);
    await expect(collect(m.generate("x", { maxTokens: 2 }))).rejects.toThrow(lost);
    m.dispose();
    expect(await init("webgpu")).toEqual(["webgpu"]);
    const again = await llm.load(TINY, { device: "webgpu", nCtx: 64, prefillBucket: 4 });
    try {
      expect((await collect(again.generate("x", { maxTokens: 4 }))).length).toBe(4);
    } finally {
      again.dispose();
    }
  }, 600_000);
});
