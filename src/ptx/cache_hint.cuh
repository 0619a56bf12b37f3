// L2 eviction-priority hints for the TMA / bulk copies (cuda::ptx has no .L2::cache_hint forms of
// cp.async.bulk.tensor or cp.reduce.async.bulk, so these are inline PTX). PTX ISA: "createpolicy"
// (9.7.9.18) and the .L2::cache_hint qualifier of cp.async.bulk.tensor / cp.async.bulk /
// cp.reduce.async.bulk (9.7.9.25). A policy only orders what L2 evicts first; it never changes
// what is read or written, so the bits of every result are the same with any hint.
#pragma once

#include <cstdint>

#include <cuda.h>

namespace dash::ptx {

// The hint a kernel parameter selects (BwdKernelParams::l2_hint_*): 0 = none (the plain
// instruction), else a policy from l2_policy().
enum L2Hint : int { kL2None = 0, kL2EvictFirst = 1, kL2EvictLast = 2, kL2EvictNormal = 3, kL2EvictLastHalf = 4 };

// A 64-bit cache policy for `hint` (not kL2None). Volatile: created where it is used, so that a
// 24- or 40-register producer does not keep it live across its loop.
__device__ __forceinline__ uint64_t l2_policy(int hint) {
  uint64_t pol;
  switch (hint) {
    case kL2EvictFirst:
      asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(pol));
      break;
    case kL2EvictLast:
      asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(pol));
      break;
    case kL2EvictLastHalf:  // half of the lines evict_last, the other half unchanged
      asm volatile("createpolicy.fractional.L2::evict_last.L2::evict_unchanged.b64 %0, 0.5;\n" : "=l"(pol));
      break;
    default:
      asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;\n" : "=l"(pol));
      break;
  }
  return pol;
}

// One table of the policies per CTA, indexed by the hint (entry 0 unused): the copies read their
// policy from it (one shared load) instead of building it, which cost the 24-register producer a
// spill. l2_policy_table_init: one thread, before a CTA barrier.
static __shared__ uint64_t s_l2_policy_table[5];
__device__ __forceinline__ void l2_policy_table_init() {
  for (int k = 1; k < 5; ++k) s_l2_policy_table[k] = l2_policy(k);
}
__device__ __forceinline__ uint64_t l2_policy_of(int hint) {
  return *static_cast<volatile uint64_t*>(&s_l2_policy_table[hint]);
}

// 4-D tile load (coordinates innermost first) completing on `bar`, with an L2 policy.
__device__ __forceinline__ void tma_load_4d_hint(void* smem_dst, const CUtensorMap* map, int32_t c0, int32_t c1,
                                                 int32_t c2, int32_t c3, uint64_t* bar, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%2, %3, %4, %5}], [%6], %7;\n" ::"r"(static_cast<uint32_t>(__cvta_generic_to_shared(smem_dst))),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3),
      "r"(static_cast<uint32_t>(__cvta_generic_to_shared(bar))), "l"(policy)
      : "memory");
}

// Shared -> global bulk reduce-add of fp32 (bulk group), with an L2 policy.
__device__ __forceinline__ void bulk_reduce_add_f32_hint(float* dst, const float* src, uint32_t bytes, uint64_t policy) {
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.L2::cache_hint.add.f32 [%0], [%1], %2, %3;\n" ::"l"(
                   dst),
               "r"(static_cast<uint32_t>(__cvta_generic_to_shared(src))), "r"(bytes), "l"(policy)
               : "memory");
}

// Shared -> global bulk copy (bulk group), with an L2 policy.
__device__ __forceinline__ void bulk_store_hint(void* dst, const void* src, uint32_t bytes, uint64_t policy) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%0], [%1], %2, %3;\n" ::"l"(dst),
               "r"(static_cast<uint32_t>(__cvta_generic_to_shared(src))), "r"(bytes), "l"(policy)
               : "memory");
}

}  // namespace dash::ptx
