// kiln's `llm` namespace: GGUF language models (kiln::llm in C++) in Node.js and browsers:
// load, tokenizer, logits, and generation as an async iterator of text pieces.
//
// Generation runs one token per core call (js/src/core/llm_bindings.cpp): the iterator reads
// the pending logits asynchronously (the webgpu device has no synchronous reads), feeds them
// back to the core, which samples the token and dispatches the next decode step, and yields
// to the event loop between tokens, so a page stays responsive and an AbortSignal is seen.
// A greedy generation's pending read is the 4-byte token id the step computed on the device.
/**
 * GGUF language models (the llama architecture of SmolLM2, Gemma 3): load a file, tokenize,
 * read logits, and generate text as an async iterator of pieces (greedy or sampled, with stop
 * strings and an AbortSignal). Generation yields to the event loop between tokens.
 *
 * @example
 * ```ts
 * import { llm } from "kiln";
 * const model = await llm.load("SmolLM2-135M-Instruct-Q4_1.gguf", { device: "wasm" });
 * for await (const piece of model.chat([{ role: "user", content: "What is 2 + 2?" }], { maxTokens: 32 }))
 *   process.stdout.write(piece);
 * model.dispose();
 * ```
 * @module
 */
import { readBytes, describeValue, type Device } from "./array.js";
import { check, core, type Handle } from "./core.js";
import { loadDevice, sourceBytes } from "./model_source.js";

/** Options of {@link load}. */
export interface LoadOptions {
  /** Device of the weights and the computation (default: the default device, `wasm`). */
  device?: Device;
  /** KV cache positions: prompt plus generated tokens (default 1024, capped at the model's). */
  nCtx?: number;
  /** Prompts are padded to a multiple of this many tokens, one compiled prefill per size (32). */
  prefillBucket?: number;
  /**
   * Decode steps run each layer's attention as `lax.decodeAttention` on devices that
   * have it as its own kernels (`webgpu`): fewer kernels per token. Default false: on an
   * H100 it decoded 1.11x faster on SmolLM2 but 0.96x on a Llama-3.2-1B shape.
   */
  fusedAttention?: boolean;
}

/** Options of generation ({@link Model.generate}, {@link Model.chat}): length, sampling and stopping. */
export interface GenerateOptions {
  /** Tokens to generate at most (default 128). */
  maxTokens?: number;
  /** 0 (the default): greedy. */
  temperature?: number;
  /** Sample among this many likeliest tokens (default 40; 0: all). */
  topK?: number;
  /** Nucleus sampling: the smallest set of tokens with this much probability (default 0.95; 1: off). */
  topP?: number;
  /** llama.cpp's penalty on the last `repeatLastN` (64) tokens' logits (default 1: off). */
  repetitionPenalty?: number;
  repeatLastN?: number;
  /** Seed of the sampler's generator (default 0): same seed, same text. */
  seed?: number;
  /** Generation ends before the first of these strings; the text never contains it. */
  stop?: string | string[];
  /** Aborting it ends the generation after the current token (stats().stopReason "aborted"). */
  signal?: AbortSignal;
  /**
   * Keep generating after an end-of-generation token (default false), as benchmarks do to
   * time a fixed number of tokens (llama.cpp's `ignore_eos`).
   */
  ignoreEos?: boolean;
}

/** One turn of a conversation for {@link Model.chat}. */
export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** What a generation did: token counts, times and why it stopped. */
export interface GenerationStats {
  promptTokens: number;
  generatedTokens: number;
  /** Host wall time of the prompt's prefill (until its logits were read) and of the rest. */
  prefillMs: number;
  decodeMs: number;
  prefillTokensPerSecond: number;
  /** Tokens after the first over decodeMs (each is one decode step). */
  decodeTokensPerSecond: number;
  /**
   * Host time within decodeMs spent in the core between tokens: sampling (unless it runs on
   * the device), detokenizing, and recording the next decode step's kernels. On webgpu the
   * GPU runs a step after it is recorded, so decodeHostMs near decodeMs means the host bounds
   * the speed, not the GPU.
   */
  decodeHostMs: number;
  /**
   * "eos", "max_tokens", "context" (nCtx is full), "stop" (a stop string), "aborted" (the
   * signal, or a `break`), "disposed" (the model was) or "error".
   */
  stopReason: string;
}

const GENERATE_KEYS = ["maxTokens", "temperature", "topK", "topP", "repetitionPenalty", "repeatLastN", "seed", "stop", "signal", "ignoreEos"];
const LOAD_KEYS = ["device", "nCtx", "prefillBucket", "fusedAttention"];

/** An options object with only known keys; `op` names the function in the Error. */
function optionsObject(op: string, options: unknown, known: string[]): Record<string, any> {
  if (options === undefined) return {};
  if (options === null || typeof options !== "object" || globalThis.Array.isArray(options))
    throw new Error(`${op}: options got ${describeValue(options)}, expected an object`);
  for (const k of Object.keys(options))
    if (!known.includes(k)) throw new Error(`${op}: unknown option '${k}' (expected ${known.join(", ")})`);
  return options as Record<string, any>;
}

/** Token ids as a plain array of numbers, or an Error naming `op`. */
function idList(op: string, ids: unknown): number[] {
  if (ids instanceof Int32Array || ids instanceof Uint32Array) return globalThis.Array.from(ids);
  if (!globalThis.Array.isArray(ids)) throw new Error(`${op}: ids got ${describeValue(ids)}, expected an array of token ids`);
  return ids;
}

// A turn of the event loop between tokens, so timers, UI events and an AbortSignal get to run
// while a generation loops (on wasm every read settles at once). setTimeout(0) waits at least
// 1 ms in Node.js (4 ms in browsers once timers nest), a tenth of a decode step on a GPU;
// setImmediate (Node.js) and a MessageChannel message (browsers) are not clamped.
const setImmediateFn: ((f: () => void) => void) | undefined = (globalThis as any).setImmediate;
const channel = setImmediateFn || typeof MessageChannel === "undefined" ? null : new MessageChannel();
const waiting: (() => void)[] = [];
if (channel) channel.port1.onmessage = () => waiting.shift()?.();
const tick = () =>
  new Promise<void>((resolve) => {
    if (setImmediateFn) setImmediateFn(resolve);
    else if (channel) waiting.push(resolve), channel.port2.postMessage(0);
    else setTimeout(resolve, 0);
  });

function withRates(s: any): GenerationStats {
  const perSecond = (n: number, ms: number) => (ms > 0 ? (1000 * n) / ms : 0);
  return {
    ...s,
    prefillTokensPerSecond: perSecond(s.promptTokens, s.prefillMs),
    decodeTokensPerSecond: perSecond(Math.max(0, s.generatedTokens - 1), s.decodeMs),
  };
}

/** The model's tokenizer (GGUF `tokenizer.*`, llama.cpp's token ids). */
export class Tokenizer {
  /** @ignore */
  constructor(private readonly model: Model) {}
  /**
   * Token ids of `text`. addSpecial (default true) adds BOS/EOS as the file says (SmolLM2:
   * none); parseSpecial (default false) matches control tokens written in the text.
   */
  encode(text: string, options: { addSpecial?: boolean; parseSpecial?: boolean } = {}): number[] {
    const o = optionsObject("tokenizer.encode", options, ["addSpecial", "parseSpecial"]);
    const ids = check(this.model._core("tokenizer.encode").encode(text, o.addSpecial ?? true, o.parseSpecial ?? false)) as Int32Array;
    return globalThis.Array.from(ids);
  }
  /** The text of `ids`; control tokens are left out unless renderSpecial. */
  decode(ids: number[] | Int32Array, options: { renderSpecial?: boolean } = {}): string {
    const o = optionsObject("tokenizer.decode", options, ["renderSpecial"]);
    return check(this.model._core("tokenizer.decode").decode(idList("tokenizer.decode", ids), o.renderSpecial ?? false));
  }
}

/**
 * One generation: an async iterator of text pieces (`for await (const piece of ...)`), each
 * the text one token completed (possibly ""). stats() is set once it has ended.
 */
export class Generation implements AsyncIterableIterator<string> {
  private gen: any = null;
  private finished: GenerationStats | null = null;
  private readonly signal: AbortSignal | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private prefetch: { h: Handle; bytes: Promise<Uint8Array> } | null = null;
  private hostMs = 0; // time in feed(), which decodeMs counts from the first call on

  /** @ignore */
  constructor(
    private readonly model: Model,
    private readonly start: () => any,
    options: Record<string, any>,
  ) {
    this.signal = options.signal;
  }

  /** The generation itself: `for await (const piece of generation)`. */
  [Symbol.asyncIterator](): AsyncIterableIterator<string> {
    return this;
  }

  /** Statistics of the ended generation (null while it runs). */
  stats(): GenerationStats | null {
    return this.finished;
  }

  /** The next piece; calls made before the previous one settled wait for it, in order. */
  next(): Promise<IteratorResult<string>> {
    const r = this.queue.then(() => this.step());
    this.queue = r.catch(() => undefined);
    return r;
  }

  private async step(): Promise<IteratorResult<string>> {
    if (this.finished) return { done: true, value: undefined };
    try {
      if (!this.gen) {
        if (this.signal?.aborted) return this.end("aborted");
        this.gen = check(this.start()); // prefill is dispatched (and, on wasm, run) here
      } else if (this.signal?.aborted) {
        return this.end("aborted"); // aborted while the caller held the last piece
      }
      const read = this.prefetch ?? this.readPending();
      this.prefetch = null;
      let row: Uint8Array;
      try {
        row = await read.bytes;
      } finally {
        read.h.delete();
      }
      // Ended while the read was in flight: by return() or the model's dispose().
      if (!this.gen) return { done: true, value: undefined };
      const fed = performance.now();
      const piece = check(this.gen.feed(row)) as string;
      this.hostMs += performance.now() - fed;
      if (this.gen.done()) {
        this.end(null);
        return { done: false, value: piece };
      }
      if (this.signal?.aborted) {
        this.end("aborted");
        return { done: false, value: piece };
      }
      // The next step was dispatched by feed(); the read of its logits (greedy: its token id)
      // starts now, so on webgpu the copy joins the step's command buffer (one submit per
      // token) and the GPU works while the caller handles this piece.
      this.prefetch = this.readPending();
      await tick();
      return { done: false, value: piece };
    } catch (e) {
      if (!this.finished) this.end("error");
      throw e;
    }
  }

  /** Ends the generation early (a `break` out of `for await` calls it). */
  async return(): Promise<IteratorResult<string>> {
    if (!this.finished) this.end("aborted");
    return { done: true, value: undefined };
  }

  /** @ignore Ends it with `reason` (the model's dispose: "disposed"). */
  _end(reason: string) {
    if (!this.finished) this.end(reason);
  }

  /** Starts reading the pending logits (greedy: token id); the handle is deleted once the read is awaited (or at end). */
  private readPending(): { h: Handle; bytes: Promise<Uint8Array> } {
    const h = check(this.gen.pending()) as Handle;
    const bytes = readBytes(h);
    bytes.catch(() => {}); // awaited by the next step; unawaited when the generation ends first
    return { h, bytes };
  }

  private end(reason: string | null): IteratorResult<string> {
    if (this.prefetch) {
      this.prefetch.h.delete();
      this.prefetch = null;
    }
    if (this.gen) {
      if (reason !== null) this.gen.stop(reason);
      this.finished = withRates({ ...this.gen.stats(), decodeHostMs: this.hostMs });
      this.gen.delete();
      this.gen = null;
    } else {
      this.finished = withRates({ promptTokens: 0, generatedTokens: 0, prefillMs: 0, decodeMs: 0, decodeHostMs: 0, stopReason: reason ?? "aborted" });
    }
    this.model._ended(this);
    return { done: true, value: undefined };
  }
}

/** A GGUF language model loaded on a device (see `load`). */
export class Model {
  private handle: any;
  readonly tokenizer: Tokenizer;
  /** The device, the KV cache length and the vocabulary size. */
  readonly device: Device;
  readonly nCtx: number;
  readonly nVocab: number;
  /** `general.architecture` of the file (e.g. "llama"). */
  readonly architecture: string;
  private last: GenerationStats | null = null;
  private readonly running = new Set<Generation>();

  /** @ignore */
  constructor(handle: any) {
    this.handle = handle;
    const info = handle.info();
    this.device = info.device;
    this.nCtx = info.nCtx;
    this.nVocab = info.nVocab;
    this.architecture = info.architecture;
    this.tokenizer = new Tokenizer(this);
  }

  /** @ignore The core object, or a ReferenceError naming `op` once disposed. */
  _core(op: string): any {
    if (!this.handle) throw new ReferenceError(`${op}: the model was disposed`);
    return this.handle;
  }
  /** @ignore */
  get disposed(): boolean {
    return this.handle === null;
  }
  /** @ignore */
  _ended(g: Generation) {
    this.running.delete(g);
    if (g.stats()) this.last = g.stats();
  }

  /**
   * A raw completion of `prompt` (BOS as the file's add_bos says; control tokens written in
   * the prompt are tokens): an async iterator of text pieces. Options are checked now.
   */
  generate(prompt: string, options: GenerateOptions = {}): Generation {
    const h = this._core("llm.generate");
    const o = this.checkOptions("llm.generate", options);
    if (typeof prompt !== "string") throw new Error(`llm.generate: prompt got ${describeValue(prompt)}, expected a string`);
    return this.track(new Generation(this, () => h.start(prompt, o), o));
  }

  /** The assistant's reply to `messages` under the file's chat template, as generate does. */
  chat(messages: ChatMessage[], options: GenerateOptions = {}): Generation {
    const h = this._core("llm.chat");
    const o = this.checkOptions("llm.chat", options);
    check(h.renderChat(messages)); // bad messages fail now, not at the first token
    return this.track(new Generation(this, () => h.startChat(messages, o), o));
  }

  /** The prompt text chat() generates from (the template applied, the reply's turn opened). */
  renderChat(messages: ChatMessage[]): string {
    return check(this._core("llm.chat").renderChat(messages));
  }

  /**
   * The logits after each token of `ids` (a fresh context, one prefill): one Float32Array of
   * nVocab entries per token (row i: the next-token logits after ids[0..i]).
   */
  logits(ids: number[] | Int32Array): Float32Array[] {
    const flat = check(this._core("llm.logits").logits(idList("llm.logits", ids))) as Float32Array;
    const rows: Float32Array[] = [];
    for (let i = 0; i < flat.length; i += this.nVocab) rows.push(flat.subarray(i, i + this.nVocab));
    return rows;
  }

  /** Statistics of the last generation that ended (null before one has). */
  stats(): GenerationStats | null {
    return this.last;
  }

  /** Frees the weights and every running generation's cache; later calls throw a ReferenceError. */
  dispose(): void {
    if (!this.handle) return;
    for (const g of [...this.running]) g._end("disposed");
    this.handle.delete();
    this.handle = null;
  }

  private track(g: Generation): Generation {
    this.running.add(g);
    return g;
  }

  private checkOptions(op: string, options: unknown): Record<string, any> {
    const o = { ...optionsObject(op, options, GENERATE_KEYS) };
    if (typeof o.stop === "string") o.stop = [o.stop];
    const s = o.signal;
    if (s !== undefined && (s === null || typeof s !== "object" || typeof s.aborted !== "boolean"))
      throw new Error(`${op}: option 'signal' got ${describeValue(s)}, expected an AbortSignal`);
    delete o.signal; // the core reads the rest; the iterator keeps the signal
    check(core.llmCheckOptions(op, o));
    return { ...o, signal: s };
  }
}

/**
 * Loads a GGUF model (SmolLM2's llama architecture; q4_0, q4_1, q8_0, f16, f32 weights):
 * from bytes (Uint8Array, ArrayBuffer, Blob/File), a file path (Node.js) or a URL (fetched).
 *
 * @param options - `device`, `nCtx` (KV cache length), `prefillBucket` and `fusedAttention`; unknown
 *   keys are an Error.
 * @throws Error when the file is not a GGUF model kiln can run (its architecture or a weight
 * type is named), or the options are invalid.
 * @example
 * ```ts
 * const model = await llm.load(new URL("./smollm2.gguf", import.meta.url));
 * let text = "";
 * for await (const piece of model.generate("Once upon a time", { maxTokens: 16 })) text += piece;
 * ```
 */
export async function load(source: Uint8Array | ArrayBuffer | Blob | URL | string, options: LoadOptions = {}): Promise<Model> {
  const o = optionsObject("llm.load", options, LOAD_KEYS);
  const device = await loadDevice("llm.load", o.device);
  const bytes = await sourceBytes("llm.load", source);
  return new Model(check(core.llmLoad(bytes, { ...o, device })));
}
