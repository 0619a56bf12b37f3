// Inter-CTA semaphores for the ordered dQ reduction.
// PTX ISA: 9.7.13.4 (ld with .acquire), 9.7.13.5 (red with .release), 8 (memory model).
#pragma once

#include "ptx/debug_wait.cuh"

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

// Returns the old value.
__device__ __forceinline__ int atom_acq_rel_gpu_add(int* p, int v) {
  int old;
  asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], %2;\n" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}

__device__ __forceinline__ void st_release_gpu(int* p, int v) {
  asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}

// Spin until *sem == expected. One thread per CTA calls this. In DASH_DEBUG_WAITS builds the
// wait is bounded (src/ptx/debug_wait.cuh) and traps with the context instead of hanging.
__device__ __forceinline__ void wait_equal(const int* sem, int expected, int task, int q_tile,
                                           int kv_tile) {
#ifdef DASH_DEBUG_WAITS
  WaitWatch watch;
  int seen;
  while ((seen = ld_acquire_gpu(sem)) != expected) {
    __nanosleep(32);
    if (watch.expired()) {
      printf("dash-attn: dQ semaphore wait timed out: block %d thread %d task %d q_tile %d kv_tile %d "
             "expected %d seen %d\n", blockIdx.x, threadIdx.x, task, q_tile, kv_tile, expected, seen);
      trap_after_reports();
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
