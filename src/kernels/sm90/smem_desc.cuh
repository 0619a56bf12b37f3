// wgmma shared-memory matrix descriptors (PTX ISA 9.7.15.5.1.2, "Matrix Descriptor Format")
// for bf16 operands in the 128-byte-swizzled layout of swizzle.cuh.
//
//   bits  0-13  start address >> 4      bits 32-45  stride byte offset (SBO) >> 4
//   bits 16-29  leading byte offset >> 4 bits 49-51  base offset (0: 1024 B aligned atoms)
//   bits 62-63  layout: 0 none, 1 = 128B swizzle, 2 = 64B, 3 = 32B
//
// K-major (K contiguous, imm-trans 0): the operand is [MN rows x 64 K] sub-tiles; SBO = 1024
//   (next 8-row group along MN); LBO unused for swizzled K-major (we put 16 B). One k16 step
//   inside the 64-wide atom = +32 B on the start address.
// MN-major (MN contiguous, imm-trans 1): the operand is [K rows x 64 MN] sub-tiles; SBO = 1024
//   (next 8-row group along K); LBO = bytes between consecutive 64-wide MN sub-tiles
//   (= K extent * 128 B when they are stacked). One k16 step = +16 rows = +2048 B.
#pragma once

#include <cstdint>

#include "kernels/sm90/swizzle.cuh"

namespace dash::sm90 {

enum class SmemLayout : uint32_t { kInterleave = 0, kSwizzle128B = 1, kSwizzle64B = 2, kSwizzle32B = 3 };

inline constexpr uint32_t kKMajorSbo = 8 * kSwizzleBytes;        // 1024
inline constexpr uint32_t kKMajorLbo = 16;                       // ignored by the hardware
inline constexpr uint32_t kKMajorStepBytes = 16 * 2;             // k16 of bf16 along a row
inline constexpr uint32_t kMNMajorSbo = 8 * kSwizzleBytes;       // 1024
inline constexpr uint32_t kMNMajorStepBytes = 16 * kSwizzleBytes; // k16 rows of 128 B

// Encodes a descriptor from a shared-window byte address (what __cvta_generic_to_shared gives).
__host__ __device__ constexpr uint64_t encode_smem_desc(uint32_t smem_addr, SmemLayout layout,
                                                        uint32_t lbo_bytes, uint32_t sbo_bytes) {
  return static_cast<uint64_t>((smem_addr >> 4) & 0x3FFFu) |
         (static_cast<uint64_t>((lbo_bytes >> 4) & 0x3FFFu) << 16) |
         (static_cast<uint64_t>((sbo_bytes >> 4) & 0x3FFFu) << 32) |
         (static_cast<uint64_t>(static_cast<uint32_t>(layout) & 0x3u) << 62);
}

static_assert(encode_smem_desc(0x400, SmemLayout::kSwizzle128B, 16, 1024) ==
                  ((1ull << 62) | (64ull << 32) | (1ull << 16) | 0x40ull),
              "field positions per the PTX descriptor table");

// Moves the start address by a byte offset (multiple of 16). Only the low 14-bit field changes
// as long as the address stays inside the 256 KiB shared window.
__host__ __device__ constexpr uint64_t advance_smem_desc(uint64_t desc, uint32_t bytes) {
  return desc + static_cast<uint64_t>(bytes >> 4);
}

// The descriptor's two 32-bit words: lo = start-address field | LBO field, hi = SBO field |
// layout. For 16-byte-aligned shared addresses a and a + bytes both below 2^18 (all of shared
// memory), smem_desc_lo(a + bytes) == smem_desc_lo(a) + bytes / 16: the address field does not
// carry into the LBO field (Sm90Primitives.DescriptorLoWordAddsWithoutCarry, a host test, checks
// it over the whole range). A k-step of a wgmma chain is then one 32-bit add, and hi is a
// compile-time constant.
__host__ __device__ constexpr uint32_t smem_desc_lo(uint32_t smem_addr, uint32_t lbo_bytes) {
  return ((smem_addr >> 4) & 0x3FFFu) | (((lbo_bytes >> 4) & 0x3FFFu) << 16);
}
__host__ __device__ constexpr uint32_t smem_desc_hi(SmemLayout layout, uint32_t sbo_bytes) {
  return ((sbo_bytes >> 4) & 0x3FFFu) | ((static_cast<uint32_t>(layout) & 0x3u) << 30);
}
__host__ __device__ constexpr uint64_t smem_desc_from_words(uint32_t lo, uint32_t hi) {
  return (static_cast<uint64_t>(hi) << 32) | lo;
}
static_assert(smem_desc_from_words(smem_desc_lo(0x400, 16), smem_desc_hi(SmemLayout::kSwizzle128B, 1024)) ==
                  encode_smem_desc(0x400, SmemLayout::kSwizzle128B, 16, 1024),
              "the two words make up encode_smem_desc");

#ifdef __CUDACC__
// Descriptor for a 1024-byte aligned swizzled sub-tile. With DASH_DEBUG_WAITS the alignment is
// checked at run time (a misaligned base silently reads the wrong bytes otherwise).
__device__ __forceinline__ uint64_t make_smem_desc(const void* smem_ptr, SmemLayout layout,
                                                   uint32_t lbo_bytes, uint32_t sbo_bytes) {
  const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem_ptr));
#ifdef DASH_DEBUG_WAITS
  if (layout == SmemLayout::kSwizzle128B && !is_swizzle_aligned(addr)) __trap();
#endif
  return encode_smem_desc(addr, layout, lbo_bytes, sbo_bytes);
}

// K-major bf16 operand: [MN x 64] sub-tile with K contiguous. k16 step s -> +32 B * s.
__device__ __forceinline__ uint64_t make_kmajor_desc(const void* subtile) {
  return make_smem_desc(subtile, SmemLayout::kSwizzle128B, kKMajorLbo, kKMajorSbo);
}

// MN-major bf16 operand: [K x 64] sub-tiles with MN contiguous, consecutive 64-wide MN chunks
// mn_chunk_stride bytes apart. k16 step s -> +2048 B * s.
__device__ __forceinline__ uint64_t make_mnmajor_desc(const void* subtile, uint32_t mn_chunk_stride) {
  return make_smem_desc(subtile, SmemLayout::kSwizzle128B, mn_chunk_stride, kMNMajorSbo);
}
#endif

}  // namespace dash::sm90
