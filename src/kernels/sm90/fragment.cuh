// Register layouts of the m64nNk16 wgmma (PTX ISA 9.7.15.5.1.1, "Register Fragments").
// Accumulator (N/2 fp32 per thread): warp w of the warpgroup owns rows 16w..16w+15; for each
// 8-column group j, lane l holds (r, c), (r, c+1), (r+8, c), (r+8, c+1) at indices 4j..4j+3,
// with r = 16w + l/4 and c = 8j + 2(l%4).
// RS A operand (4 x b32 per thread per k16 step): the same rows, columns 16s..16s+15 of an
// accumulator, packed to bf16 (or f16) pairs; so an m64nN accumulator feeds N/16 k-steps of the
// next GEMM.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace dash::sm90 {

// Row / column of accumulator register i held by thread t (0..127) of the warpgroup.
__host__ __device__ constexpr int acc_row(int t, int i) {
  return 16 * (t / 32) + (t % 32) / 4 + 8 * ((i % 4) / 2);
}
__host__ __device__ constexpr int acc_col(int t, int i) {
  return 8 * (i / 4) + 2 * (t % 4) + (i % 2);
}

static_assert(acc_row(0, 0) == 0 && acc_row(127, 3) == 63 && acc_col(3, 31) == 63,
              "m64n64 accumulator covers 64 x 64");

#ifdef __CUDACC__
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);  // .x (low half) = lo
  return *reinterpret_cast<const uint32_t*>(&v);
}

__device__ __forceinline__ uint32_t pack_f16x2(float lo, float hi) {
  const __half2 v = __floats2half2_rn(lo, hi);  // .x (low half) = lo
  return *reinterpret_cast<const uint32_t*>(&v);
}

// Two floats packed as a pair of the wgmma element type T (__nv_bfloat16 or __half), low = lo.
template <typename T>
__device__ __forceinline__ uint32_t pack_x2(float lo, float hi);
template <>
__device__ __forceinline__ uint32_t pack_x2<__nv_bfloat16>(float lo, float hi) { return pack_bf16x2(lo, hi); }
template <>
__device__ __forceinline__ uint32_t pack_x2<__half>(float lo, float hi) { return pack_f16x2(lo, hi); }

// The inverse, per half: the low (lo_of_x2) or high (hi_of_x2) element of a packed pair.
template <typename T>
__device__ __forceinline__ float lo_of_x2(uint32_t packed);
template <typename T>
__device__ __forceinline__ float hi_of_x2(uint32_t packed);
template <>
__device__ __forceinline__ float lo_of_x2<__nv_bfloat16>(uint32_t packed) { return __uint_as_float(packed << 16); }
template <>
__device__ __forceinline__ float hi_of_x2<__nv_bfloat16>(uint32_t packed) {
  return __uint_as_float(packed & 0xFFFF0000u);
}
template <>
__device__ __forceinline__ float lo_of_x2<__half>(uint32_t packed) {
  return __half2float(__ushort_as_half(static_cast<unsigned short>(packed & 0xFFFFu)));
}
template <>
__device__ __forceinline__ float hi_of_x2<__half>(uint32_t packed) {
  return __half2float(__ushort_as_half(static_cast<unsigned short>(packed >> 16)));
}

// A fragment for k16 step `step` (columns 16*step..16*step+15) of an fp32 accumulator, as pairs
// of the GEMM's element type T (bf16 by default, or __half).
template <typename T = __nv_bfloat16, int kAccRegs>
__device__ __forceinline__ void acc_to_a_frag(const float (&acc)[kAccRegs], int step,
                                              uint32_t (&a)[4]) {
  const int b = 8 * step;
  a[0] = pack_x2<T>(acc[b + 0], acc[b + 1]);  // row r,   cols 16s + 2(l%4) + {0,1}
  a[1] = pack_x2<T>(acc[b + 2], acc[b + 3]);  // row r+8, same columns
  a[2] = pack_x2<T>(acc[b + 4], acc[b + 5]);  // row r,   cols 16s + 8 + 2(l%4) + {0,1}
  a[3] = pack_x2<T>(acc[b + 6], acc[b + 7]);  // row r+8
}
#endif

}  // namespace dash::sm90
