// Device building blocks shared by the attention kernels: type traits and padded smem tiles.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/kernel_params.h"
#include "ptx/mma_sm80.cuh"

namespace dash::kernels {

// Row padding of 8 b16 elements (16 B): consecutive rows start 4 banks apart, so ldmatrix
// reads of 8 rows x 16 B are conflict-free without a swizzle.
constexpr int kSmemPad = 8;

// Copy rows [row0, row0 + kRows) of one (batch, head) slice into a padded smem tile
// [kRows][D + kSmemPad] with cp.async; rows at or past `seqlen` are zero-filled.
template <typename T, int kRows, int D, int kThreads>
__device__ __forceinline__ void load_tile_async(T* smem, const T* base, int64_t seq_stride,
                                                int row0, int seqlen) {
  constexpr int kChunksPerRow = D * int(sizeof(T)) / 16;
  constexpr int kChunks = kRows * kChunksPerRow;
  static_assert(kChunks % kThreads == 0, "tile must split evenly over the threads");
#pragma unroll
  for (int c = threadIdx.x; c < kChunks; c += kThreads) {
    const int r = c / kChunksPerRow;
    const int col = (c % kChunksPerRow) * (16 / int(sizeof(T)));
    const int row = row0 + r;
    const bool in = row < seqlen;
    const T* src = base + (in ? (int64_t)row * seq_stride : 0) + col;
    ptx::cp_async_16(ptx::smem_u32(smem + r * (D + kSmemPad) + col), src, in);
  }
}

template <typename T>
struct Vec2;
template <>
struct Vec2<__nv_bfloat16> {
  using type = __nv_bfloat162;
  static __device__ __forceinline__ type make(float a, float b) { return __floats2bfloat162_rn(a, b); }
};
template <>
struct Vec2<__half> {
  using type = __half2;
  static __device__ __forceinline__ type make(float a, float b) { return __floats2half2_rn(a, b); }
};

template <typename T>
__device__ __forceinline__ float to_float(T x);
template <>
__device__ __forceinline__ float to_float<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }
template <>
__device__ __forceinline__ float to_float<__half>(__half x) { return __half2float(x); }

}  // namespace dash::kernels
