// The ceiling for Wasm SIMD kernels on this machine: one core's float32 rate with 128-bit
// vectors (what f32x4 lowers to on x86-64), as independent FMA and mul/add chains, no memory;
// then kiln's matmul tile step as V8 compiles it, the ceiling of that loop.
// x86-64 with FMA3 only. `make bench-peak`; results in bench/results/wasm.md.
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

// Ten accumulators: more than FMA latency (4 cycles) x 2 pipes, so throughput-bound.
static double fma_rate(long iters) {
  double t = now();
  __asm__ volatile(
      "vxorps %%xmm14, %%xmm14, %%xmm14\n vxorps %%xmm15, %%xmm15, %%xmm15\n"
      "1:\n"
      "vfmadd231ps %%xmm14, %%xmm15, %%xmm0\n vfmadd231ps %%xmm14, %%xmm15, %%xmm1\n"
      "vfmadd231ps %%xmm14, %%xmm15, %%xmm2\n vfmadd231ps %%xmm14, %%xmm15, %%xmm3\n"
      "vfmadd231ps %%xmm14, %%xmm15, %%xmm4\n vfmadd231ps %%xmm14, %%xmm15, %%xmm5\n"
      "vfmadd231ps %%xmm14, %%xmm15, %%xmm6\n vfmadd231ps %%xmm14, %%xmm15, %%xmm7\n"
      "vfmadd231ps %%xmm14, %%xmm15, %%xmm8\n vfmadd231ps %%xmm14, %%xmm15, %%xmm9\n"
      "dec %0\n jnz 1b\n"
      : "+r"(iters)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm14", "xmm15");
  return now() - t;
}

// Six multiplies and six additions per iteration (a matmul step without FMA is half of each).
static double mul_add_rate(long iters) {
  double t = now();
  __asm__ volatile(
      "vxorps %%xmm14, %%xmm14, %%xmm14\n vxorps %%xmm15, %%xmm15, %%xmm15\n"
      "1:\n"
      "vmulps %%xmm14, %%xmm15, %%xmm0\n vmulps %%xmm14, %%xmm15, %%xmm1\n"
      "vaddps %%xmm14, %%xmm2, %%xmm2\n vaddps %%xmm14, %%xmm3, %%xmm3\n"
      "vmulps %%xmm14, %%xmm15, %%xmm4\n vmulps %%xmm14, %%xmm15, %%xmm5\n"
      "vaddps %%xmm14, %%xmm6, %%xmm6\n vaddps %%xmm14, %%xmm7, %%xmm7\n"
      "vaddps %%xmm14, %%xmm8, %%xmm8\n vaddps %%xmm14, %%xmm9, %%xmm9\n"
      "vmulps %%xmm14, %%xmm15, %%xmm10\n vmulps %%xmm14, %%xmm15, %%xmm11\n"
      "dec %0\n jnz 1b\n"
      : "+r"(iters)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
        "xmm14", "xmm15");
  return now() - t;
}

// kiln's 4x2 matmul tile step as V8 (Node 20, TurboFan) compiles it, read from
// `node --print-wasm-code` on bench/wasm/tile_sweep.mjs: 2 vector loads of the packed B strip,
// 4 broadcasts of A, 8 mul + 8 add (or 8 FMA), and the two pointer bumps and the loop count
// that V8 keeps per unrolled copy. Operands stay in L1, so this is the loop's ceiling before
// any cache or epilogue cost: what kiln's tile can reach in that engine.
static char tile_data[4096 + 256 * 32] __attribute__((aligned(64)));
#define TILE_LOADS                                                                        \
  "vmovups (%1), %%xmm10\n vmovups 16(%1), %%xmm11\n vbroadcastss (%0), %%xmm12\n"       \
  "vbroadcastss 1024(%0), %%xmm13\n vbroadcastss 2048(%0), %%xmm8\n vbroadcastss 3072(%0), %%xmm9\n"
#define TILE_LOOP "add $4, %0\n add $32, %1\n dec %2\n jnz 1b\n"
#define TILE_CLOBBERS                                                                     \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", \
      "xmm11", "xmm12", "xmm13", "xmm14", "memory"
#define MUL_ADD(a, b, acc) "vmulps %%" b ", %%" a ", %%xmm14\n vaddps %%xmm14, %%" acc ", %%" acc "\n"
#define FMA(a, b, acc) "vfmadd231ps %%" b ", %%" a ", %%" acc "\n"
#define TILE_STEP(OP)                                                                     \
  OP("xmm12", "xmm10", "xmm0") OP("xmm12", "xmm11", "xmm1") OP("xmm13", "xmm10", "xmm2")  \
  OP("xmm13", "xmm11", "xmm3") OP("xmm8", "xmm10", "xmm4") OP("xmm8", "xmm11", "xmm5")    \
  OP("xmm9", "xmm10", "xmm6") OP("xmm9", "xmm11", "xmm7")

static double tile_rate(long iters, int fma) {  // iters x 256 steps of 64 flops
  double t = now();
  for (long i = 0; i < iters; i++) {
    const char *a = tile_data, *b = tile_data + 4096;
    long n = 256;
    if (fma)
      __asm__ volatile("1:\n" TILE_LOADS TILE_STEP(FMA) TILE_LOOP : "+r"(a), "+r"(b), "+r"(n) : : TILE_CLOBBERS);
    else
      __asm__ volatile("1:\n" TILE_LOADS TILE_STEP(MUL_ADD) TILE_LOOP : "+r"(a), "+r"(b), "+r"(n) : : TILE_CLOBBERS);
  }
  return now() - t;
}

int main(void) {
  const long iters = 100000000;
  double best_fma = 1e9, best_ma = 1e9;
  for (int r = 0; r < 5; r++) {  // best of 5: the machine is shared
    double a = fma_rate(iters), b = mul_add_rate(iters);
    if (a < best_fma) best_fma = a;
    if (b < best_ma) best_ma = b;
  }
  printf("one core, 128-bit float32: FMA %.1f GFLOP/s, mul + add %.1f GFLOP/s\n",
         (double)iters * 10 * 8 / best_fma * 1e-9, (double)iters * 12 * 4 / best_ma * 1e-9);
  const long tiles = 400000;
  double best_tile[2] = {1e9, 1e9};
  for (int r = 0; r < 5; r++)
    for (int f = 0; f < 2; f++) {
      double x = tile_rate(tiles, f);
      if (x < best_tile[f]) best_tile[f] = x;
    }
  printf("kiln's 4x2 tile step as V8 emits it, operands in L1: mul + add %.1f GFLOP/s, FMA %.1f GFLOP/s\n",
         (double)tiles * 256 * 64 / best_tile[0] * 1e-9, (double)tiles * 256 * 64 / best_tile[1] * 1e-9);
  return 0;
}
