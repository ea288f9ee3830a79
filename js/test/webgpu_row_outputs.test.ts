// Tree reductions whose lane groups sum several outputs at once (webgpu::WgslParams::row_outputs:
// each lane loads what the outputs share, a matvec's x, once for all of them). The rule picks
// 2 only for reductions of 4M terms or more, which no other test reaches on SwiftShader, so
// this one forces 4 in a child process (the setting is read once, when the device is made)
// and compares with cpu there; the quantized matvec's chunks also read x and the words through
// vec4 views of their buffers. Node-only (test/browser/run.mjs).
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";
import { init } from "../dist/index.js";

const gpu = (await init("webgpu")).includes("webgpu");
const child = fileURLToPath(new URL("./child/tree_row_outputs.mjs", import.meta.url));

test.skipIf(!gpu && !process.env.KILN_REQUIRE_WEBGPU)("webgpu: tree reductions with 4 outputs per lane group equal cpu", () => {
  const out = execFileSync(process.execPath, [child], { env: { ...process.env, KILN_WEBGPU_ROW_OUTPUTS: "4" }, encoding: "utf8", timeout: 120000 });
  const report = JSON.parse(out.trim().split("\n").pop()!);
  expect(report.error).toBeUndefined();
  // 24 and 40 rows take 4 outputs per lane group; 13 rows fall back to 1 (4 does not divide 13).
  expect(report.widths).toEqual([1, 4]);
  // The q4_1 matvec's chunks read x and the packed words by four (wgsl_vec_loads.h).
  expect(report.vec4Views).toBeGreaterThan(0);
  for (const r of report.results) expect(r.worst, r.name).toBeLessThanOrEqual(1);
}, 180000);
