// Vitest in Node: the suite under test/ against the built package in dist/.
import { existsSync, readdirSync } from "node:fs";
import { defineConfig } from "vitest/config";

// The webgpu tests on machines without a GPU: Dawn (npm `webgpu`) refuses lavapipe, so point
// the Vulkan loader at SwiftShader from Debian's chromium, and load chromium's libvulkan
// (when there is no system one). Only when the machine has no GPU driver of its own and the
// caller set nothing; the forked test process inherits this environment. Mesa's Vulkan ICDs
// (installed with libvulkan1's recommends) do not count without a GPU device node: they find
// no hardware there, and Dawn would be left with lavapipe alone.
const icdDirs = ["/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d"];
const hasIcd = icdDirs.some((d) => existsSync(d) && readdirSync(d).some((f) => f.endsWith(".json")));
const hasGpu = existsSync("/dev/dri") || existsSync("/dev/nvidia0");
const swiftshader = "/usr/lib/chromium/vk_swiftshader_icd.json";
if (!(hasIcd && hasGpu) && !process.env.VK_ICD_FILENAMES && existsSync(swiftshader)) {
  process.env.VK_ICD_FILENAMES = swiftshader;
  if (!existsSync("/usr/lib/x86_64-linux-gnu/libvulkan.so.1"))
    process.env.LD_LIBRARY_PATH = ["/usr/lib/chromium", process.env.LD_LIBRARY_PATH].filter(Boolean).join(":");
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/setup.ts"],
    environment: "node",
    testTimeout: 60000,
    // Two test files at a time, each in a forked process of its own (CI has 2 cores): one
    // process ran the files one after another, and the stage's wall time was the sum of
    // theirs (~300 s in CI) while much of each file's time is one JS thread.
    pool: "forks",
    poolOptions: { forks: { minForks: 1, maxForks: 2 } },
  },
});
