// The REPL page: loads the package, then runs the textarea's code through evaluate.mjs.
// window.repl.run(code) is what the site check calls (for the page's own snippet and for every
// snippet of the guides); it resolves to { output, error } as shown on the page.
import * as kiln from "../../js/dist/index.js";
import * as optax from "../../js/dist/optax/index.js";
import * as io from "../../js/dist/io.js";
import { evaluate } from "./evaluate.mjs";

const modules = { kiln, "kiln/optax": optax, "kiln/io": io };
const $ = (id) => document.getElementById(id);

async function run(code) {
  $("run").disabled = true;
  $("output").textContent = "";
  $("error").textContent = "";
  try {
    const { output, error } = await evaluate(code, modules);
    $("output").textContent = output;
    // An error is shown on the page; it is not a console error (the code is the user's).
    const message = error ? `${error.name ?? "Error"}: ${error.message ?? error}` : "";
    $("error").textContent = message;
    return { output, error: error ? message : null };
  } finally {
    $("run").disabled = false;
  }
}

// A guide's "Open in the REPL" link carries its snippet in the hash.
const fromHash = () => location.hash.length > 1 && ($("code").value = decodeURIComponent(location.hash.slice(1)));
fromHash();
window.addEventListener("hashchange", fromHash);
const devices = await kiln.init();
$("device").textContent = `devices: ${devices.join(", ")}; default ${kiln.defaultDevice()}`;
$("run").disabled = false;
$("run").addEventListener("click", () => run($("code").value));
$("code").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    run($("code").value);
  }
});
window.repl = { ready: true, devices, run };
