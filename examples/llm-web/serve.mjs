// `make serve-llm`: serves the chat page, the package build and SmolLM2 (data/models, from
// `make models`) with the COOP/COEP headers that give a page SharedArrayBuffer (threads).
// Also used by the headless test (js/test/browser/llm.mjs) through startServer().
import { fileURLToPath } from "node:url";
import { startStaticServer } from "../static_server.mjs";

// Only these folders and the model file are served (never the rest of the machine).
const allowed = /^\/(examples\/llm-web|js\/dist)\/[\w.\/-]*$|^\/data\/models\/SmolLM2-135M-Instruct\.Q4_1\.gguf$/;

export const startServer = (port = 0, host = "127.0.0.1") => startStaticServer(allowed, "/examples/llm-web/", port, host);

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await startServer(Number(process.env.PORT ?? 8000));
  console.log(`[kiln] chat page: http://127.0.0.1:${server.address().port}/examples/llm-web/`);
}
