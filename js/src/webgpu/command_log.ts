// The runtime's calls into the GPU queue that must keep their order (dispatches and copies
// into the open command encoder, submits, buffer writes and destruction): run at once, or,
// while a dispatched pipeline is still being created asynchronously, held in order and
// replayed once every pipeline they wait for has settled. WebGPU cannot encode a dispatch of a
// pipeline that does not exist yet, so a jit program's first run records its commands here
// while all its pipelines compile in parallel (pipelines.ts), instead of compiling them one
// after another inside createComputePipeline.
/// <reference types="@webgpu/types" />
import type { AsyncCheck } from "./pipelines.js";

export class CommandLog {
  #held: (() => void)[] = [];
  // Pipelines the held commands wait for, not settled yet; a new object per hold, so that a
  // pipeline settling after a forced replay (replay() for a blocking read) counts for nothing.
  #waiting = { n: 0 };
  #drained: Promise<void> | null = null;
  #resolveDrained: (() => void) | null = null;
  /** Holds started since the runtime began (a counter for tests and benches). */
  holds = 0;

  /** `onError`: what a replayed command threw (a lost device), for the next read to report. */
  constructor(private readonly onError: (e: unknown) => void) {}

  /** Whether commands are being held now. */
  get holding(): boolean {
    return this.#held.length > 0;
  }

  /** Resolves once no command is held (at once when none is). */
  drained(): Promise<void> {
    return this.#drained ?? Promise.resolve();
  }

  /** Runs `command` now, or after the held ones when there are any. */
  run(command: () => void): void {
    if (this.#held.length) this.#held.push(command);
    else command();
  }

  /** Holds `command` (and every command after it) until `check` has settled. */
  after(check: AsyncCheck, command: () => void): void {
    if (!this.#held.length) {
      this.holds++;
      this.#waiting = { n: 0 };
      this.#drained = new Promise<void>((r) => (this.#resolveDrained = r));
    }
    this.#held.push(command);
    const waiting = this.#waiting;
    waiting.n++;
    check.ready.then(() => {
      if (--waiting.n === 0 && waiting === this.#waiting) this.replay();
    });
  }

  /**
   * Runs the held commands in order (the caller made sure their pipelines exist: settled, or
   * created synchronously for a blocking read).
   */
  replay(): void {
    const held = this.#held;
    this.#held = [];
    this.#waiting = { n: 0 };
    for (const command of held) {
      try {
        command();
      } catch (e) {
        this.onError(e);
      }
    }
    const resolve = this.#resolveDrained;
    this.#drained = this.#resolveDrained = null;
    resolve?.();
  }
}
