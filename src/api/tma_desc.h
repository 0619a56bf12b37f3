// Host: TMA tensor maps for bf16 (or fp16) operands, 128-byte swizzle, box {64, rows} (64 2-byte
// elements = 128 B, the widest inner box SWIZZLE_128B allows; wider operands take one box per
// 64 columns).
// The driver's cuTensorMapEncodeTiled is reached through the runtime's entry-point query, so
// nothing links libcuda. Maps go to kernels as `const __grid_constant__ CUtensorMap`.
#pragma once

#include <cstdint>

#include <cuda.h>

#include "dash_attn/attention.h"

namespace dash {

inline constexpr uint32_t kTmaBoxCols = 64;

// Row-major bf16 matrix [rows x cols] with `row_stride` elements between rows.
// Tensor coordinates (innermost first): {col, row}. Out-of-range box elements load as zero.
Status make_tma_desc_2d_bf16(CUtensorMap* map, const void* base, uint64_t rows, uint64_t cols,
                             uint64_t row_stride, uint32_t box_rows);

// bf16 [batch, seqlen, heads, head_dim] with element strides `stride` (head_dim stride 1).
// Tensor coordinates: {d, s, h, b}; box {64, box_rows, 1, 1}, so the seqlen end of each
// (b, h) clips the box (zero fill on load, dropped on store).
Status make_tma_desc_4d_bf16(CUtensorMap* map, const void* base, int batch, int seqlen, int heads,
                             int head_dim, const Strides3& stride, uint32_t box_rows);

// The same for either 2-byte dtype (bf16 or fp16; the map's data type is the tensor's). The
// bf16 form above is this with DType::kBF16.
Status make_tma_desc_4d(CUtensorMap* map, DType dtype, const void* base, int batch, int seqlen, int heads,
                        int head_dim, const Strides3& stride, uint32_t box_rows);

}  // namespace dash
