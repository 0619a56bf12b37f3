// Inter-CTA semaphores for the ordered dQ reduction.
// PTX ISA: 9.7.13.4 (ld with .acquire), 9.7.13.5 (red with .release), 8 (memory model).
#pragma once

#include <cstdint>
#include <cstdio>

namespace dash::ptx {

__device__ __forceinline__ int ld_acquire_gpu(const int* p) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void red_release_gpu_add(int* p, int v) {
  asm volatile("red.release.gpu.global.add.s32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}

// Spin until *sem == expected. One thread per CTA calls this. In DASH_DEBUG_WAITS builds the
// spin is bounded and traps with the context instead of hanging.
#if defined(DASH_DEBUG_WAITS) && !defined(DASH_DEBUG_WAIT_SPINS)
#define DASH_DEBUG_WAIT_SPINS (1ll << 26)  // polls before a debug wait traps (-DDASH_DEBUG_WAIT_SPINS=N)
#endif
__device__ __forceinline__ void wait_equal(const int* sem, int expected, int task, int q_tile,
                                           int kv_tile) {
#ifdef DASH_DEBUG_WAITS
  long long spins = 0;
  int seen;
  while ((seen = ld_acquire_gpu(sem)) != expected) {
    if (++spins > DASH_DEBUG_WAIT_SPINS) {
      printf("dash-attn: dQ semaphore wait timed out: task %d q_tile %d kv_tile %d expected %d "
             "seen %d\n", task, q_tile, kv_tile, expected, seen);
      __trap();
    }
  }
#else
  (void)task; (void)q_tile; (void)kv_tile;
  while (ld_acquire_gpu(sem) != expected) {
    __nanosleep(32);
  }
#endif
}

}  // namespace dash::ptx
