// Named CTA barriers (barrier.sync / barrier.arrive with an id and a thread count).
// PTX ISA 9.7.13.1 (bar, barrier). Id 0 is __syncthreads; counts are multiples of 32.
// NOTES: the non-.aligned forms: `bar.sync` means `barrier.sync.aligned`, which requires the
// whole warp to be converged at the instruction; after a lane-0-only store that is not
// guaranteed (synccheck reports it), and the unaligned form costs nothing measurable here.
#pragma once

namespace dash::ptx {

__device__ __forceinline__ void named_bar_sync(int id, int threads) {
  asm volatile("barrier.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

__device__ __forceinline__ void named_bar_arrive(int id, int threads) {
  asm volatile("barrier.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace dash::ptx
