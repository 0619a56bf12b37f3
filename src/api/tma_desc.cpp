// Host: tensor-map construction (see tma_desc.h).
#include "api/tma_desc.h"
#include "api/status.h"

#include <cstdarg>
#include <cstdio>

#include <cudaTypedefs.h>
#include <cuda_runtime.h>

namespace dash {
namespace {

// NOTES: cudaGetDriverEntryPoint is deprecated in CUDA 13; the ByVersion form pins the ABI of
// the returned symbol to the 12.0 signature we cast to.
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    const cudaError_t e =
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q);
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      return static_cast<PFN_cuTensorMapEncodeTiled_v12000>(nullptr);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

// dims/strides innermost first; strides_bytes has rank-1 entries (dimension 0 is contiguous).
// `type` is a 2-byte element type (BFLOAT16 or FLOAT16): the box and swizzle rules are the same.
Status encode_b16_swizzle128(CUtensorMap* map, CUtensorMapDataType type, const void* base, uint32_t rank,
                             const cuuint64_t* dims, const cuuint64_t* strides_bytes,
                             const cuuint32_t* box) {
  if (map == nullptr) return make_status(StatusCode::kInvalidArgument, "tensor map: null output");
  if (base == nullptr || reinterpret_cast<uintptr_t>(base) % 16 != 0)
    return make_status(StatusCode::kInvalidArgument,
                      "tensor map: base address %p must be non-null and 16-byte aligned", base);
  for (uint32_t i = 0; i < rank; ++i) {
    if (dims[i] == 0 || dims[i] > (1ull << 32))
      return make_status(StatusCode::kInvalidArgument, "tensor map: dim %u = %llu out of [1, 2^32]",
                        i, static_cast<unsigned long long>(dims[i]));
    if (box[i] == 0 || box[i] > 256)
      return make_status(StatusCode::kInvalidArgument, "tensor map: box dim %u = %u out of [1, 256]",
                        i, box[i]);
  }
  for (uint32_t i = 0; i + 1 < rank; ++i) {
    if (strides_bytes[i] % 16 != 0 || strides_bytes[i] >= (1ull << 40))
      return make_status(StatusCode::kInvalidArgument,
                        "tensor map: stride %u = %llu bytes must be a multiple of 16 below 2^40", i,
                        static_cast<unsigned long long>(strides_bytes[i]));
  }
  if (box[0] * 2 > 128)
    return make_status(StatusCode::kInvalidArgument,
                      "tensor map: inner box %u elements exceeds the 128-byte swizzle span", box[0]);
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (encode == nullptr)
    return make_status(StatusCode::kCudaError,
                      "tensor map: cuTensorMapEncodeTiled unavailable (no CUDA driver >= 12.0)");
  const cuuint32_t elem_strides[5] = {1, 1, 1, 1, 1};
  const CUresult r = encode(map, type, rank, const_cast<void*>(base),
                            dims, strides_bytes, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return make_status(StatusCode::kCudaError, "tensor map: cuTensorMapEncodeTiled failed (CUresult %d)",
                      static_cast<int>(r));
  return Status{};
}

}  // namespace

Status make_tma_desc_2d_bf16(CUtensorMap* map, const void* base, uint64_t rows, uint64_t cols,
                             uint64_t row_stride, uint32_t box_rows) {
  if (row_stride < cols)
    return make_status(StatusCode::kInvalidArgument, "tensor map: row_stride %llu < cols %llu",
                      static_cast<unsigned long long>(row_stride),
                      static_cast<unsigned long long>(cols));
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {row_stride * 2};
  const cuuint32_t box[2] = {kTmaBoxCols, box_rows};
  return encode_b16_swizzle128(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, base, 2, dims, strides, box);
}

Status make_tma_desc_4d(CUtensorMap* map, DType dtype, const void* base, int batch, int seqlen, int heads,
                        int head_dim, const Strides3& stride, uint32_t box_rows) {
  if (dtype != DType::kBF16 && dtype != DType::kFP16)
    return make_status(StatusCode::kInvalidArgument, "tensor map: dtype must be bf16 or fp16");
  if (batch <= 0 || seqlen <= 0 || heads <= 0 || head_dim <= 0)
    return make_status(StatusCode::kInvalidArgument,
                      "tensor map: shape (batch %d, seqlen %d, heads %d, head_dim %d) must be positive",
                      batch, seqlen, heads, head_dim);
  if (stride.batch < 0 || stride.seq < 0 || stride.head < 0)
    return make_status(StatusCode::kInvalidArgument, "tensor map: negative stride");
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(head_dim), static_cast<cuuint64_t>(seqlen),
                              static_cast<cuuint64_t>(heads), static_cast<cuuint64_t>(batch)};
  const cuuint64_t strides[3] = {static_cast<cuuint64_t>(stride.seq) * 2,
                                 static_cast<cuuint64_t>(stride.head) * 2,
                                 static_cast<cuuint64_t>(stride.batch) * 2};
  const cuuint32_t box[4] = {kTmaBoxCols, box_rows, 1, 1};
  return encode_b16_swizzle128(
      map, dtype == DType::kBF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, base, 4,
      dims, strides, box);
}

Status make_tma_desc_4d_bf16(CUtensorMap* map, const void* base, int batch, int seqlen, int heads,
                             int head_dim, const Strides3& stride, uint32_t box_rows) {
  return make_tma_desc_4d(map, DType::kBF16, base, batch, seqlen, heads, head_dim, stride, box_rows);
}

}  // namespace dash
