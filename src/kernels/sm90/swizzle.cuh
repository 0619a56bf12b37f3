// The 128-byte swizzle that TMA (CU_TENSOR_MAP_SWIZZLE_128B) writes and wgmma (descriptor
// layout type 1) reads, for bf16 tiles stored as [rows x 64] sub-tiles (128 B per row).
// Both apply it to absolute smem address bits [4:6] ^= [7:9], so sub-tile bases must be
// 1024-byte aligned (hopper-guide 2.2).
#pragma once

#include <cstdint>

namespace dash::sm90 {

inline constexpr int kSwizzleBytes = 128;        // one row of a sub-tile: 64 bf16
inline constexpr int kSwizzleAtomBytes = 1024;   // 8 rows: the XOR pattern's period
inline constexpr int kSubTileCols = 64;          // bf16 elements per sub-tile row

// Byte offset of bf16 element (row, col), col in [0, 64), inside a [rows x 64] sub-tile whose
// base is 1024-byte aligned: 16-byte chunk c of row r is stored at chunk c ^ (r % 8).
__host__ __device__ constexpr uint32_t swizzle128_offset(int row, int col) {
  return static_cast<uint32_t>(row) * kSwizzleBytes +
         ((static_cast<uint32_t>(col >> 3) ^ static_cast<uint32_t>(row & 7)) << 4) +
         static_cast<uint32_t>(col & 7) * 2u;
}

static_assert(swizzle128_offset(0, 0) == 0 && swizzle128_offset(0, 63) == 126, "row 0 is linear");
static_assert(swizzle128_offset(1, 0) == 128 + 16 && swizzle128_offset(7, 8) == 7 * 128 + 6 * 16,
              "chunk c of row r lands at chunk c ^ (r % 8)");
static_assert(swizzle128_offset(8, 9) == swizzle128_offset(0, 9) + 1024, "period of 8 rows");

// Bytes of one [rows x 64] bf16 sub-tile; a whole number of swizzle atoms when rows % 8 == 0.
__host__ __device__ constexpr uint32_t subtile_bytes(int rows) {
  return static_cast<uint32_t>(rows) * kSwizzleBytes;
}

__host__ __device__ constexpr bool is_swizzle_aligned(uint32_t smem_addr) {
  return (smem_addr & (kSwizzleAtomBytes - 1)) == 0;
}

#ifdef __CUDACC__
// Rounds a dynamic-smem pointer up to the next 1024-byte boundary (request 1 KiB extra).
__device__ __forceinline__ uint8_t* align_swizzle_atom(uint8_t* p) {
  const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  return p + ((kSwizzleAtomBytes - (a & (kSwizzleAtomBytes - 1))) & (kSwizzleAtomBytes - 1));
}
#endif

}  // namespace dash::sm90
