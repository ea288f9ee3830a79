// `make serve-mobilenet`: serves the MobileNet page, the package build, the committed
// MobileNetV3-small program and the weight formula with the COOP/COEP headers that give a page
// SharedArrayBuffer (threads). Also used by the headless test (js/test/browser/mobilenet.mjs).
import { fileURLToPath } from "node:url";
import { startStaticServer } from "../static_server.mjs";

// Only these folders and files are served.
const allowed = /^\/(examples\/mobilenet-web\/[\w.\/-]*|js\/dist\/[\w.\/-]*|js\/test\/pte_formula\.mjs|tests\/fixtures\/pte\/mobilenet_v3_small\.pte)$/;

export const startServer = (port = 0, host = "127.0.0.1") => startStaticServer(allowed, "/examples/mobilenet-web/", port, host);

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await startServer(Number(process.env.PORT ?? 8000));
  console.log(`[kiln] MobileNet page: http://127.0.0.1:${server.address().port}/examples/mobilenet-web/`);
}
