// Generates tests/fixtures/llm/<model>_tokenize.txt and <model>_greedy.txt: llama.cpp (npm
// node-llama-cpp 3.21.1, prebuilt CPU binary) as the oracle for kiln's GGUF tokenizer and model.
//
// Usage (after `make models`):
//   cd tools/llm-oracle && npm ci --omit=optional --ignore-scripts   # prebuilt CPU binary only
//   node tools/gen_llm_fixtures.mjs [--out DIR] [--models smollm2,gemma3]
// --out writes somewhere else than tests/fixtures/llm (a second run to diff for determinism).
//
// What it writes, per model (formats repeated in each file's header):
// - <model>_tokenize.txt: each line of tests/fixtures/llm/corpus.txt (escapes \n \t \r \\
//   decoded) tokenized with no BOS and special tokens off, as `<utf-8 hex>\t<ids>`; the last
//   such line is the whole decoded corpus joined by "\n". Then `detok\t<ids>\t<utf-8 hex>`
//   lines: llama.cpp's detokenization (special tokens off) of each corpus line's ids and of
//   a spread of single ids.
// - <model>_greedy.txt: for each prompt of prompts.txt, llama.cpp's greedy continuation
//   (temperature 0, nothing else in the sampler chain, so the probabilities are a softmax over
//   the whole vocabulary), 64 tokens, with the top 8 next-token log-probabilities at every
//   position along that path. An end-of-generation token does not stop it (it is fed back like
//   any other), so every prompt has 64 teacher-forced positions; a generation test stops there.
//
// Nothing is downloaded or built: getLlama is told build "never", skipDownload, gpu false; the
// install skips node-llama-cpp's postinstall (--ignore-scripts) and its optional GPU packages.
process.env.NODE_LLAMA_CPP_SKIP_DOWNLOAD = "true";
process.env.NODE_LLAMA_CPP_GPU = "false";

import { createHash } from "node:crypto";
import { createReadStream, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const ORACLE_DIR = join(ROOT, "tools", "llm-oracle");
const FIXTURES = join(ROOT, "tests", "fixtures", "llm");
const MODELS = {
  smollm2: "SmolLM2-135M-Instruct.Q4_1.gguf",
  gemma3: "gemma-3-270m-q4_k_m.gguf",
};
// Fixed so that runs compare: 2 threads (the development machine's cores), one batch holds any
// prompt, a context that holds a prompt plus the continuation.
const THREADS = 2;
const BATCH_SIZE = 512;
const CONTEXT_SIZE = 512;
const MAX_NEW_TOKENS = 64;
const TOP_K = 8;
// Measured by running this generator twice into separate folders and diffing (see the
// commit that last changed it); printed into each header.
const DETERMINISM =
  "two runs on the same machine (same CPU variant) gave byte-identical files";

function parseArgs(argv) {
  const args = { out: FIXTURES, models: Object.keys(MODELS) };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--out") args.out = argv[++i];
    else if (argv[i] === "--models") args.models = argv[++i].split(",");
    else throw new Error(`unknown argument ${argv[i]} (use --out DIR, --models a,b)`);
  }
  return args;
}

// The corpus and prompt files keep one entry per line; \n \t \r \\ stand for the characters.
function decodeEscapes(line) {
  return line.replace(/\\([ntr\\])/g, (_, c) => ({ n: "\n", t: "\t", r: "\r", "\\": "\\" })[c]);
}

function readEntries(name) {
  const text = readFileSync(join(FIXTURES, name), "utf8");
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines.map(decodeEscapes);
}

const hex = (s) => Buffer.from(s, "utf8").toString("hex");

async function sha256File(path) {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk);
  return hash.digest("hex");
}

function committedSha(file) {
  const sums = readFileSync(join(ROOT, "tools", "models.sha256"), "utf8");
  for (const line of sums.split("\n")) {
    const [sum, name] = line.trim().split(/\s+/);
    if (name === file) return sum;
  }
  throw new Error(`${file} has no line in tools/models.sha256`);
}

// Which of the prebuilt binary's CPU-specific ggml libraries llama.cpp loaded (it picks one by
// the CPU's features at run time; their dot products round differently).
function loadedCpuVariant() {
  const maps = readFileSync("/proc/self/maps", "utf8");
  const m = maps.match(/libggml-cpu-([a-z0-9_]+)\.so/);
  return m ? m[1] : "unknown";
}

function cpuName() {
  const m = readFileSync("/proc/cpuinfo", "utf8").match(/^model name\s*:\s*(.*)$/m);
  return m ? m[1].trim() : "unknown";
}

const vocabSize = (model) => model.fileInfo.metadata.tokenizer.ggml.tokens.length;

function tokenizeLines(model, corpus) {
  const out = [];
  const entries = [...corpus, corpus.join("\n")];
  const idLists = entries.map((text) => model.tokenize(text, false));
  entries.forEach((text, i) => out.push(`${hex(text)}\t${idLists[i].join(" ")}`));
  for (const ids of idLists) out.push(`detok\t${ids.join(" ")}\t${hex(model.detokenize(ids, false))}`);
  const nVocab = vocabSize(model);
  const singles = [];
  for (let id = 0; id < 16; id++) singles.push(id);
  for (let k = 1; k <= 48; k++) singles.push(Math.floor((k * (nVocab - 1)) / 48));
  for (const id of singles) out.push(`detok\t${id}\t${hex(model.detokenize([id], false))}`);
  return out;
}

function topLogprobs(probabilities) {
  const pairs = [];
  for (const [id, p] of probabilities) {
    pairs.push(`${id}:${Math.log(p).toFixed(5)}`);
    if (pairs.length === TOP_K) break;
  }
  return pairs;
}

// Greedy continuation of one prompt: each step yields the chosen token and the probabilities
// it was chosen from, i.e. teacher forcing along llama.cpp's own greedy path.
async function greedyLines(context, model, promptIndex, promptText) {
  const sequence = context.getSequence();
  try {
    const bos = model.tokens.shouldPrependBosToken ? [model.tokens.bos] : [];
    const promptIds = [...bos, ...model.tokenize(promptText, false)];
    const steps = [];
    const iterator = sequence.evaluateWithMetadata(
      promptIds, { probabilities: true }, { temperature: 0, yieldEogToken: true });
    for await (const { token, probabilities } of iterator) {
      steps.push(`${promptIndex} ${steps.length} ${token} ${topLogprobs(probabilities).join(" ")}`);
      if (steps.length === MAX_NEW_TOKENS) break;
    }
    const head = `prompt ${promptIndex} ${steps.length}\t${hex(promptText)}\t${promptIds.join(" ")}`;
    return [head, ...steps];
  } finally {
    sequence.dispose();
  }
}

function header(kind, info) {
  return [
    `# ${kind} fixture from llama.cpp (release ${info.llamaCpp} as node-llama-cpp names it) via npm node-llama-cpp ${info.nlcVersion}, prebuilt CPU binary; written by tools/gen_llm_fixtures.mjs`,
    `# model ${info.file} sha256 ${info.sha}`,
    `# add_bos ${info.addBos} bos ${info.bos} eos ${info.eos} vocab ${info.nVocab}`,
    `# threads ${THREADS} batch ${BATCH_SIZE} context ${CONTEXT_SIZE} cpu-variant ${info.variant} on ${info.cpu}`,
    `# determinism: ${DETERMINISM}`,
  ];
}

const TOKENIZE_FORMAT = [
  "# format: <utf-8 text as hex>\\t<token ids, no BOS, special tokens off> for each corpus line,",
  "# then the whole corpus joined by newlines; then detok\\t<ids>\\t<utf-8 hex of llama.cpp's detokenization>",
];
const GREEDY_FORMAT = [
  "# format: per prompt, a line `prompt <index> <n positions>\\t<prompt utf-8 hex>\\t<prompt ids, with BOS when add_bos>`,",
  `# then n lines \`<index> <position> <greedy id> <id:logprob> x${TOP_K}\` (natural log, highest first; the greedy id`,
  "# is fed back for the next position). Greedy = temperature 0, 64 tokens; an end-of-generation token is fed back too.",
];

async function modelInfo(llama, model, nlcVersion, file, sha) {
  return {
    nlcVersion,
    llamaCpp: llama.llamaCppRelease?.release ?? "unknown",
    file,
    sha,
    addBos: model.tokens.shouldPrependBosToken,
    bos: model.tokens.bos,
    eos: model.tokens.eos,
    nVocab: vocabSize(model),
    variant: loadedCpuVariant(),
    cpu: cpuName(),
  };
}

async function generateForModel(llama, nlcVersion, name, args) {
  const file = MODELS[name];
  if (!file) throw new Error(`unknown model ${name} (known: ${Object.keys(MODELS).join(", ")})`);
  const path = join(ROOT, "data", "models", file);
  const sha = await sha256File(path);
  if (sha !== committedSha(file)) throw new Error(`${file}: sha256 ${sha} is not the committed one`);
  const model = await llama.loadModel({ modelPath: path, gpuLayers: 0, useMmap: true });
  const context = await model.createContext({
    contextSize: CONTEXT_SIZE, batchSize: BATCH_SIZE, threads: THREADS, sequences: 1,
  });
  const info = await modelInfo(llama, model, nlcVersion, file, sha);
  const tokenize = [...header("tokenizer", info), ...TOKENIZE_FORMAT,
    ...tokenizeLines(model, readEntries("corpus.txt"))];
  writeFileSync(join(args.out, `${name}_tokenize.txt`), tokenize.join("\n") + "\n");
  const greedy = [...header("greedy", info), ...GREEDY_FORMAT];
  const prompts = readEntries("prompts.txt");
  for (let i = 0; i < prompts.length; i++) greedy.push(...(await greedyLines(context, model, i, prompts[i])));
  writeFileSync(join(args.out, `${name}_greedy.txt`), greedy.join("\n") + "\n");
  console.log(`[gen_llm_fixtures] ${name}: ${tokenize.length} tokenizer lines, ${greedy.length} greedy lines (cpu variant ${info.variant})`);
  await context.dispose();
  await model.dispose();
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  mkdirSync(args.out, { recursive: true });
  const nlcDir = join(ORACLE_DIR, "node_modules", "node-llama-cpp");
  const nlcVersion = JSON.parse(readFileSync(join(nlcDir, "package.json"), "utf8")).version;
  const { getLlama } = await import(pathToFileURL(join(nlcDir, "dist", "index.js")).href);
  const llama = await getLlama({
    gpu: false, build: "never", usePrebuiltBinaries: true, skipDownload: true,
    maxThreads: THREADS, progressLogs: false, logLevel: "error",
  });
  for (const name of args.models) await generateForModel(llama, nlcVersion, name, args);
  await llama.dispose();
}

await main();
