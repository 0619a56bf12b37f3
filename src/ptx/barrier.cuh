// Named CTA barriers (bar.sync / bar.arrive with an id and a thread count).
// PTX ISA 9.7.13.1 (bar, barrier). Id 0 is __syncthreads; counts are multiples of 32.
#pragma once

namespace dash::ptx {

__device__ __forceinline__ void named_bar_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

__device__ __forceinline__ void named_bar_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace dash::ptx
