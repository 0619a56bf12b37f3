// TMA helpers that cuda::ptx (<cuda/ptx>) lacks. The copies themselves (cp_async_bulk_tensor,
// cp_reduce_async_bulk, commit/wait_group) and the mbarrier operations come from cuda::ptx.
// PTX ISA 9.7.9.15 (Data Movement and Conversion Instructions: prefetch, prefetchu).
#pragma once

#include <cstdint>

namespace dash::ptx {

// Pulls a tensor map (a __grid_constant__ kernel parameter, addressed generically) into the
// cache that cp.async.bulk.tensor reads; one thread issues it once.
__device__ __forceinline__ void prefetch_tensormap(const void* tensor_map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(tensor_map))
               : "memory");
}

}  // namespace dash::ptx
