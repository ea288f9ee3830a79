// Vitest setup: yield to the event loop before each test, so that Vitest's worker RPC
// (answered on the event loop) never waits behind thousands of synchronous tests.
import { beforeEach } from "vitest";

beforeEach(() => new Promise<void>((resolve) => setImmediate(resolve)));
