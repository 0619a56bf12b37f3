// Probe (not part of the build): does ptxas pipeline a wgmma whose group is issued in one loop
// iteration and retired in the next? Written in the ninth session after the S^T prefetch of the
// sm90 backward (docs/bwd-sm90.md "S^T prefetch") came out serialized. Compile each variant and
// read ptxas's notes:
//   for v in 0 1 3 5; do nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -Isrc -DVARIANT=$v \
//     -Xptxas -v -c bench/probes/wgmma_loop_carried.cu -o /tmp/probe.o 2>&1 | grep -E "C75|registers"; done
// nvcc 13.0, seen:
//   0  S issued and retired in the same iteration (the kernel's order)        no note, 93 registers
//   1  S for the next iteration issued at the tail under `if (it + 1 < n)`    C7514 (non-wgmma reads)
//   3  the same with the last iteration peeled (tail issue unconditional)     C7511 (register resources)
//   5  tail issue unconditional in every iteration, wait<0> after the loop    C7511 (register resources)
// With -DKILL=1 (an empty asm that redefines S before its next issue) 3 and 5 still give C7511.
// C7511 / C7514 mean every wgmma of the function is serialized (HGMMA ... ; WARPGROUP.DEPBAR 0).
// So overlaps must keep each group's issue and retirement inside one iteration, as FA3's
// intra-warpgroup overlap does (issue S_n, then the previous P V, wait<1>, softmax, wait<0>).
#include <cstdint>
#include <cuda_bf16.h>

#include "ptx/wgmma.cuh"

using namespace dash::ptx;

__device__ __forceinline__ void issue(float (&acc)[32], uint64_t a, uint64_t b) {
  warpgroup_fence_operand(acc);
#pragma unroll
  for (int kk = 0; kk < 8; ++kk) wgmma_ss<64, 0, 0, __nv_bfloat16>(acc, a + kk * 2, b + kk * 2, kk > 0 ? 1 : 0);
  wgmma_commit_group();
}

// One iteration with S already in flight. kNext: 0 no next S, 1 issue the next S before retiring
// d, 2 the same under `if (it + 1 < n)`.
template <int kNext>
__device__ __forceinline__ void body(float (&s)[32], float& sum, uint64_t a, uint64_t b, int it, int n) {
  wgmma_fence();
  float d[32];
  issue(d, a + 64, b + 64);
  wgmma_wait_group<1>();
  warpgroup_fence_operand(s);
  for (int x = 0; x < 32; ++x) sum += s[x];
#if KILL
  for (int x = 0; x < 32; ++x) asm volatile("" : "=f"(s[x]));
#endif
  if (kNext == 1 || (kNext == 2 && it + 1 < n)) {
    wgmma_fence();
    issue(s, a + it, b);
  }
  wgmma_wait_group<(kNext ? 1 : 0)>();
  warpgroup_fence_operand(d);
  for (int x = 0; x < 32; ++x) sum += d[x];
}

__global__ void probe(float* out, uint64_t a, uint64_t b, int n) {
  float s[32];
  float sum = 0.f;
#if VARIANT == 0
  for (int it = 0; it < n; ++it) {
    wgmma_fence();
    issue(s, a + it, b);
    body<0>(s, sum, a, b, it, n);
  }
#else
  if (n > 0) {
    wgmma_fence();
    issue(s, a, b);
#if VARIANT == 1
    for (int it = 0; it < n; ++it) body<2>(s, sum, a, b, it, n);
    wgmma_wait_group<0>();
#elif VARIANT == 3
    for (int it = 0; it + 1 < n; ++it) body<1>(s, sum, a, b, it, n);
    body<0>(s, sum, a, b, n, n);
#elif VARIANT == 5
    for (int it = 0; it < n; ++it) body<1>(s, sum, a, b, it, n);
    wgmma_wait_group<0>();
#endif
  }
#endif
  out[threadIdx.x] = sum;
}
