// TMA + mbarrier building blocks on top of cuda::ptx. PTX ISA: "cp.async.bulk.tensor" (Data
// Movement and Conversion Instructions, tensor copy) and 9.7.13.15 "mbarrier" (init,
// arrive.expect_tx, try_wait.parity). One elected thread initialises and arms; consumers wait.
#pragma once

#include "ptx/debug_wait.cuh"

#include <cstdint>
#include <cstdio>

#include <cuda.h>
#include <cuda/ptx>

namespace dash::sm90 {

// Initialise a barrier expecting `arrivals` arrive-ons per phase, and make the init visible to
// the async proxy (the TMA unit) before anyone uses it; follow with a CTA barrier.
__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t arrivals) {
  cuda::ptx::mbarrier_init(bar, arrivals);
  cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
}

// Arrive (count 1) and add `bytes` to the transaction count of the current phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                       cuda::ptx::space_shared, bar, bytes);
}

// Spin until the phase with parity `phase` completes. In DASH_DEBUG_WAITS builds the spin is
// bounded (src/ptx/debug_wait.cuh) and traps with the barrier and phase instead of hanging
// (hopper-guide 6).
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t phase) {
#ifdef DASH_DEBUG_WAITS
  ptx::WaitWatch watch;
  while (!cuda::ptx::mbarrier_try_wait_parity(bar, phase)) {
    if (watch.expired()) {
      printf("dash-attn: mbarrier wait timed out: smem 0x%x phase %u block %d thread %d\n",
             static_cast<unsigned>(__cvta_generic_to_shared(bar)), phase, blockIdx.x, threadIdx.x);
      ptx::trap_after_reports();
    }
  }
#else
  while (!cuda::ptx::mbarrier_try_wait_parity(bar, phase)) {
  }
#endif
}

// 2-D / 4-D tile loads, coordinates innermost first, completing on `bar` (complete_tx::bytes).
__device__ __forceinline__ void tma_load_2d(void* smem_dst, const CUtensorMap* map, int32_t c0,
                                            int32_t c1, uint64_t* bar) {
  const int32_t coords[2] = {c0, c1};
  cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, smem_dst,
                                  map, coords, bar);
}
__device__ __forceinline__ void tma_load_4d(void* smem_dst, const CUtensorMap* map, int32_t c0,
                                            int32_t c1, int32_t c2, int32_t c3, uint64_t* bar) {
  const int32_t coords[4] = {c0, c1, c2, c3};
  cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, smem_dst,
                                  map, coords, bar);
}

}  // namespace dash::sm90
