// Stage-0 Hopper primitives (hopper-guide 5): 128B swizzle and descriptor encodings (host),
// TMA tile loads vs the host swizzle byte for byte, wgmma m64n{64,128}k16 SS/RS in every operand
// major-ness vs a CPU GEMM, and the 1-D bulk reduce-add. Kernels run one warpgroup (128 threads).
// Sm90PrimitivesF16.*: the same wgmma checks with f16 operands (the fp16 kernels' path).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <cuda.h>
#include <cuda/ptx>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "api/tma_desc.h"
#include "gpu_test_util.h"
#include "kernels/sm90/fragment.cuh"
#include "kernels/sm90/smem_desc.cuh"
#include "kernels/sm90/swizzle.cuh"
#include "kernels/sm90/tma_pipeline.cuh"
#include "ptx/math.cuh"
#include "ptx/stmatrix.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

namespace dash::test {
namespace {

using sm90::acc_col;
using sm90::acc_row;
using sm90::swizzle128_offset;

constexpr int kThreads = 128;                                // one warpgroup
constexpr int kK = 64;                                       // GEMM depth: 4 k16 steps
constexpr uint32_t kTileBytes = sm90::subtile_bytes(64);     // [64 x 64] bf16 = 8 KiB
constexpr int kReduceFloats = 4096;                          // 16 KiB
constexpr size_t kAlignSlack = sm90::kSwizzleAtomBytes;

uint16_t bf16_bits(float x) { return to_bits(x, DType::kBF16); }

// Random bf16 (or fp16) data, never zero: (bits for the device, exact values for the CPU reference).
void random_b16(DType dt, size_t n, std::mt19937_64& rng, std::vector<uint16_t>* bits, std::vector<float>* vals) {
  std::normal_distribution<float> nd(0.f, 1.f);
  bits->resize(n);
  vals->resize(n);
  for (size_t i = 0; i < n; ++i) {
    float x = round_to(nd(rng), dt);
    if (x == 0.f) x = 0.5f;
    (*bits)[i] = to_bits(x, dt);
    (*vals)[i] = x;
  }
}

void poison(const DeviceBuffer& buf) {
  CUDA_OK(cudaMemset(buf.ptr, 0xFF, buf.bytes));  // 0xFFFF.. is NaN in bf16 and fp32
  CUDA_OK(cudaDeviceSynchronize());
}

// ------------------------------------------------------------------ host-only encodings ----

TEST(Sm90Primitives, SwizzleIsAChunkPermutationPerAtom) {
  for (int r = 0; r < 8; ++r) {
    bool seen[8] = {};
    for (int c = 0; c < 64; c += 8) {
      const uint32_t off = swizzle128_offset(r, c);
      ASSERT_EQ(off / 128, static_cast<uint32_t>(r)) << "row stays in its 128-byte line";
      const uint32_t chunk = (off % 128) / 16;
      EXPECT_EQ(chunk, static_cast<uint32_t>((c / 8) ^ r));
      EXPECT_FALSE(seen[chunk]);
      seen[chunk] = true;
      for (int e = 1; e < 8; ++e) EXPECT_EQ(swizzle128_offset(r, c + e), off + 2 * e);
    }
  }
  EXPECT_EQ(swizzle128_offset(13, 21), swizzle128_offset(5, 21) + 1024);
}

TEST(Sm90Primitives, DescriptorFieldEncoding) {
  const uint64_t k = sm90::encode_smem_desc(0x2400, sm90::SmemLayout::kSwizzle128B,
                                            sm90::kKMajorLbo, sm90::kKMajorSbo);
  EXPECT_EQ(k & 0x3FFF, 0x2400u >> 4);
  EXPECT_EQ((k >> 16) & 0x3FFF, 1u);
  EXPECT_EQ((k >> 32) & 0x3FFF, 1024u >> 4);
  EXPECT_EQ((k >> 49) & 0x7, 0u);
  EXPECT_EQ(k >> 62, 1u);
  const uint64_t mn = sm90::encode_smem_desc(0x4000, sm90::SmemLayout::kSwizzle128B, 8192,
                                             sm90::kMNMajorSbo);
  EXPECT_EQ((mn >> 16) & 0x3FFF, 8192u >> 4);
  EXPECT_EQ(sm90::advance_smem_desc(k, 32) - k, 2u) << "k16 step (32 B) is +2 in the address field";
  EXPECT_EQ(sm90::advance_smem_desc(mn, sm90::kMNMajorStepBytes) - mn, 128u);
}

// Host only. The backward forms a wgmma chain's descriptors as lo(first address) + step / 16
// with a constant high word (sw128_desc_step): the same 64-bit values as encoding every address
// on its own, for every 16-byte-aligned shared address of a CTA and every LBO / step it uses.
TEST(Sm90Primitives, DescriptorLoWordAddsWithoutCarry) {
  constexpr uint32_t kSmem = 232448;  // the sm_90 per-CTA opt-in limit
  const uint32_t lbos[] = {16, 8192, 16384};
  std::vector<uint32_t> steps;
  for (uint32_t kk = 0; kk < 8; ++kk) {
    steps.push_back(kk * sm90::kMNMajorStepBytes);                                  // MN-major k16 rows
    steps.push_back((kk / 4) * 16384 + (kk % 4) * sm90::kKMajorStepBytes);          // K-major, 128-row sub-tiles
    steps.push_back((kk / 4) * 8192 + (kk % 4) * sm90::kKMajorStepBytes);           // K-major, 64-row sub-tiles
  }
  const uint32_t hi = sm90::smem_desc_hi(sm90::SmemLayout::kSwizzle128B, 1024);
  long checked = 0, bad = 0;
  for (uint32_t lbo : lbos)
    for (uint32_t a = 0; a < kSmem; a += 16)
      for (uint32_t st : steps) {
        if (a + st >= kSmem) continue;
        const uint64_t want = sm90::encode_smem_desc(a + st, sm90::SmemLayout::kSwizzle128B, lbo, 1024);
        const uint64_t got = sm90::smem_desc_from_words(sm90::smem_desc_lo(a, lbo) + (st >> 4), hi);
        bad += want != got;
        ++checked;
      }
  EXPECT_EQ(bad, 0) << "of " << checked;
  EXPECT_GT(checked, 1000000);
}

TEST(Sm90Primitives, AccumulatorLayoutCoversTileOnce) {
  for (int n : {64, 80, 128}) {
    std::vector<int> hits(64 * n, 0);
    for (int t = 0; t < kThreads; ++t)
      for (int i = 0; i < n / 2; ++i) ++hits[acc_row(t, i) * n + acc_col(t, i)];
    for (int h : hits) ASSERT_EQ(h, 1) << "n " << n;
  }
}

// ------------------------------------------------------------------------- TMA loads ----

// One box {64, 64(, 1, 1)} into a 1024-aligned smem tile, then the raw smem bytes to `out`.
template <int kRank>
__global__ void __launch_bounds__(kThreads, 1)
tma_tile_kernel(const __grid_constant__ CUtensorMap map, int4 coord, uint8_t* out) {
  extern __shared__ uint8_t smem_raw[];
  __shared__ alignas(8) uint64_t bar;
  uint8_t* tile = sm90::align_swizzle_atom(smem_raw);
  if (threadIdx.x == 0) {
    ptx::prefetch_tensormap(&map);
    sm90::mbar_init(&bar, 1);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    sm90::mbar_arrive_expect_tx(&bar, kTileBytes);  // full box bytes, OOB-filled ones included
    if constexpr (kRank == 2) {
      sm90::tma_load_2d(tile, &map, coord.x, coord.y, &bar);
    } else {
      sm90::tma_load_4d(tile, &map, coord.x, coord.y, coord.z, coord.w, &bar);
    }
  }
  sm90::mbar_wait(&bar, 0);
  const uint4* src = reinterpret_cast<const uint4*>(tile);
  uint4* dst = reinterpret_cast<uint4*>(out);
  for (uint32_t i = threadIdx.x; i < kTileBytes / 16; i += kThreads) dst[i] = src[i];
}

// Expected smem image: element (r, c) of the box at swizzle128_offset(r, c); zero outside.
template <typename At>
std::vector<uint8_t> expected_tile(At element_or_zero) {
  std::vector<uint8_t> img(kTileBytes, 0xAB);
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 64; ++c) {
      const uint16_t b = element_or_zero(r, c);
      std::memcpy(&img[swizzle128_offset(r, c)], &b, 2);
    }
  return img;
}

void expect_same_tile(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
  ASSERT_EQ(got.size(), want.size());
  if (std::memcmp(got.data(), want.data(), got.size()) == 0) return;
  for (uint32_t off = 0; off < got.size(); off += 2) {
    if (std::memcmp(&got[off], &want[off], 2) != 0) {
      uint16_t g, w;
      std::memcpy(&g, &got[off], 2);
      std::memcpy(&w, &want[off], 2);
      FAIL() << "first mismatch at smem byte " << off << " (row " << off / 128 << ", stored chunk "
             << (off % 128) / 16 << "): got 0x" << std::hex << g << " want 0x" << w;
    }
  }
}

struct Tma2dCase {
  int col0, row0;
};

void run_tma_2d(const Tma2dCase& tc) {
  constexpr int kRows = 200, kCols = 160, kStride = 168;  // row pitch 336 B, padded
  std::mt19937_64 rng(1234);
  std::vector<uint16_t> src(static_cast<size_t>(kRows) * kStride);
  std::uniform_real_distribution<float> ud(1.f, 2.f);  // never zero: OOB zeros stand out
  for (auto& b : src) b = bf16_bits(ud(rng));
  DeviceBuffer d_src(src.size() * 2), d_out(kTileBytes);
  ASSERT_NE(d_src.ptr, nullptr);
  ASSERT_NE(d_out.ptr, nullptr);
  CUDA_OK(cudaMemcpy(d_src.ptr, src.data(), src.size() * 2, cudaMemcpyHostToDevice));
  CUtensorMap map;
  const Status st = make_tma_desc_2d_bf16(&map, d_src.ptr, kRows, kCols, kStride, 64);
  ASSERT_TRUE(st.ok()) << st.message;
  poison(d_out);
  tma_tile_kernel<2><<<1, kThreads, kTileBytes + kAlignSlack>>>(map, make_int4(tc.col0, tc.row0, 0, 0),
                                                                 d_out.as<uint8_t>());
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint8_t> got(kTileBytes);
  CUDA_OK(cudaMemcpy(got.data(), d_out.ptr, kTileBytes, cudaMemcpyDeviceToHost));
  expect_same_tile(got, expected_tile([&](int r, int c) -> uint16_t {
    const int gr = tc.row0 + r, gc = tc.col0 + c;
    return (gr < kRows && gc < kCols) ? src[static_cast<size_t>(gr) * kStride + gc] : 0;
  }));
}

TEST(Sm90Primitives, TmaLoad2DTileAtOrigin) {
  REQUIRE_GPU();
  run_tma_2d({0, 0});
}

TEST(Sm90Primitives, TmaLoad2DTileAtOffset) {
  REQUIRE_GPU();
  run_tma_2d({64, 72});
}

TEST(Sm90Primitives, TmaLoad2DTileCrossingEdgeZeroFills) {
  REQUIRE_GPU();
  run_tma_2d({128, 160});  // cols 160..191 and rows 200..223 are outside the tensor
}

// A 4-D [B, S, H, D] map with padded rows; the box at (d 64, s 64, h 2, b 1) crosses seqlen 100.
void run_tma_4d(DType dt) {
  constexpr int kB = 2, kS = 100, kH = 3, kD = 128;
  const Strides3 stride{kS * (kH * kD + 64), kH * kD + 64, kD};  // padded rows
  std::vector<uint16_t> src(static_cast<size_t>(kB) * stride.batch);
  std::mt19937_64 rng(77);
  std::uniform_real_distribution<float> ud(-2.f, -1.f);
  for (auto& b : src) b = to_bits(ud(rng), dt);
  DeviceBuffer d_src(src.size() * 2), d_out(kTileBytes);
  ASSERT_NE(d_src.ptr, nullptr);
  ASSERT_NE(d_out.ptr, nullptr);
  CUDA_OK(cudaMemcpy(d_src.ptr, src.data(), src.size() * 2, cudaMemcpyHostToDevice));
  CUtensorMap map;
  const Status st = dt == DType::kBF16 ? make_tma_desc_4d_bf16(&map, d_src.ptr, kB, kS, kH, kD, stride, 64)
                                       : make_tma_desc_4d(&map, dt, d_src.ptr, kB, kS, kH, kD, stride, 64);
  ASSERT_TRUE(st.ok()) << st.message;
  const int d0 = 64, s0 = 64, h = 2, b = 1;  // seq rows 100..127 are past the end
  poison(d_out);
  tma_tile_kernel<4><<<1, kThreads, kTileBytes + kAlignSlack>>>(map, make_int4(d0, s0, h, b),
                                                                 d_out.as<uint8_t>());
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint8_t> got(kTileBytes);
  CUDA_OK(cudaMemcpy(got.data(), d_out.ptr, kTileBytes, cudaMemcpyDeviceToHost));
  expect_same_tile(got, expected_tile([&](int r, int c) -> uint16_t {
    const int s = s0 + r, d = d0 + c;
    return s < kS ? src[b * stride.batch + s * stride.seq + h * stride.head + d] : 0;
  }));
}

TEST(Sm90Primitives, TmaLoad4DTileClipsAtSeqlen) {
  REQUIRE_GPU();
  run_tma_4d(DType::kBF16);
}

// The fp16 drafts' maps (CU_TENSOR_MAP_DATA_TYPE_FLOAT16): same bytes, same zero fill.
TEST(Sm90PrimitivesF16, TmaLoad4DF16TileClipsAtSeqlen) {
  REQUIRE_GPU();
  run_tma_4d(DType::kFP16);
}

// --------------------------------------------------------------------------- wgmma ----
// D[64 x N] = A[64 x 64] * B[64 x N]. A is given row-major (m, k), B row-major (k, n); the kernel
// stores them into smem in the requested major-ness:
//   A K-major : [64 m x 64 k] sub-tile, (m, k) at swz(m, k)            imm-trans-a 0
//   A MN-major: [64 k x 64 m] sub-tile, (m, k) at swz(k, m)            imm-trans-a 1
//   B K-major : [N n x 64 k] sub-tile, (k, n) at swz(n, k)             imm-trans-b 0
//   B MN-major: N/64 [64 k x 64 n] sub-tiles 8 KiB apart (= LBO)       imm-trans-b 1

template <typename T, int N, int kTransB>
__device__ __forceinline__ void stage_b(const T* B, uint8_t* sB) {
  for (int i = threadIdx.x; i < kK * N; i += kThreads) {
    const int k = i / N, n = i % N;
    const uint32_t off = kTransB ? (n / 64) * kTileBytes + swizzle128_offset(k, n % 64)
                                 : swizzle128_offset(n, k);
    *reinterpret_cast<T*>(sB + off) = B[i];
  }
}

template <int kTransB>
__device__ __forceinline__ uint64_t b_desc(const uint8_t* sB) {
  return kTransB ? sm90::make_mnmajor_desc(sB, kTileBytes) : sm90::make_kmajor_desc(sB);
}
__device__ __forceinline__ uint32_t k_step_bytes(int trans, int step) {
  return static_cast<uint32_t>(step) * (trans ? sm90::kMNMajorStepBytes : sm90::kKMajorStepBytes);
}

template <int N>
__device__ __forceinline__ void store_acc(const float (&acc)[N / 2], float* D) {
  const int t = threadIdx.x;
#pragma unroll
  for (int i = 0; i < N / 2; ++i) D[acc_row(t, i) * N + acc_col(t, i)] = acc[i];
}

template <int N>
__device__ __forceinline__ void nan_fill(float (&acc)[N / 2]) {
#pragma unroll
  for (int i = 0; i < N / 2; ++i) acc[i] = __int_as_float(0x7fc00000);  // scale-d 0 must ignore it
}

template <typename T, int N, int kTransA, int kTransB>
__global__ void __launch_bounds__(kThreads, 1)
wgmma_ss_kernel(const T* A, const T* B, float* D) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* sA = sm90::align_swizzle_atom(smem_raw);
  uint8_t* sB = sA + kTileBytes;
  for (int i = threadIdx.x; i < 64 * kK; i += kThreads) {
    const int m = i / kK, k = i % kK;
    const uint32_t off = kTransA ? swizzle128_offset(k, m) : swizzle128_offset(m, k);
    *reinterpret_cast<T*>(sA + off) = A[i];
  }
  stage_b<T, N, kTransB>(B, sB);
  cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);  // generic smem writes -> async proxy
  __syncthreads();

  const uint64_t desc_a = kTransA ? sm90::make_mnmajor_desc(sA, kTileBytes) : sm90::make_kmajor_desc(sA);
  const uint64_t desc_b = b_desc<kTransB>(sB);
  float acc[N / 2];
  nan_fill<N>(acc);
  ptx::warpgroup_fence_operand(acc);
  ptx::wgmma_fence();
#pragma unroll
  for (int s = 0; s < kK / 16; ++s) {
    ptx::wgmma_ss<N, kTransA, kTransB, T>(acc, sm90::advance_smem_desc(desc_a, k_step_bytes(kTransA, s)),
                                       sm90::advance_smem_desc(desc_b, k_step_bytes(kTransB, s)),
                                       s > 0 ? 1 : 0);
  }
  ptx::wgmma_commit_group();
  ptx::wgmma_wait_group<0>();
  ptx::warpgroup_fence_operand(acc);
  store_acc<N>(acc, D);
}

// RS: A (fp32, T-exact) is read into an m64n64 accumulator-layout register tile, converted
// with acc_to_a_frag<T> (the P / dS path of attention), and multiplied with B from smem.
template <typename T, int N, int kTransB>
__global__ void __launch_bounds__(kThreads, 1)
wgmma_rs_kernel(const float* A, const T* B, float* D) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* sB = sm90::align_swizzle_atom(smem_raw);
  stage_b<T, N, kTransB>(B, sB);
  cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
  __syncthreads();

  const int t = threadIdx.x;
  float a_tile[32];  // m64n64 accumulator layout over A's (m, k)
#pragma unroll
  for (int i = 0; i < 32; ++i) a_tile[i] = A[acc_row(t, i) * kK + acc_col(t, i)];
  uint32_t a[kK / 16][4];
#pragma unroll
  for (int s = 0; s < kK / 16; ++s) sm90::acc_to_a_frag<T>(a_tile, s, a[s]);

  const uint64_t desc_b = b_desc<kTransB>(sB);
  float acc[N / 2];
  nan_fill<N>(acc);
  ptx::warpgroup_fence_operand(acc);
#pragma unroll
  for (int s = 0; s < kK / 16; ++s) ptx::warpgroup_fence_operand(a[s]);
  ptx::wgmma_fence();
#pragma unroll
  for (int s = 0; s < kK / 16; ++s) {
    ptx::wgmma_rs<N, kTransB, T>(acc, a[s], sm90::advance_smem_desc(desc_b, k_step_bytes(kTransB, s)),
                              s > 0 ? 1 : 0);
  }
  ptx::wgmma_commit_group();
  ptx::wgmma_wait_group<0>();
  ptx::warpgroup_fence_operand(acc);
#pragma unroll
  for (int s = 0; s < kK / 16; ++s) ptx::warpgroup_fence_operand(a[s]);
  store_acc<N>(acc, D);
}

enum class AForm { kSmemKMajor, kSmemMNMajor, kRegisters };

template <int N, int kTransB, typename T = __nv_bfloat16>
void run_gemm(AForm a_form, uint64_t seed) {
  constexpr DType kDt = std::is_same_v<T, __half> ? DType::kFP16 : DType::kBF16;
  std::mt19937_64 rng(seed);
  std::vector<uint16_t> a_bits, b_bits;
  std::vector<float> a_val, b_val;
  random_b16(kDt, 64 * kK, rng, &a_bits, &a_val);   // (m, k) row-major
  random_b16(kDt, kK * N, rng, &b_bits, &b_val);    // (k, n) row-major
  std::vector<float> ref(64 * N, 0.f);
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < N; ++n) {
      float s = 0.f;
      for (int k = 0; k < kK; ++k) s += a_val[m * kK + k] * b_val[k * N + n];
      ref[m * N + n] = s;
    }

  DeviceBuffer d_a(a_val.size() * 4), d_b(b_bits.size() * 2), d_d(ref.size() * 4);
  ASSERT_TRUE(d_a.ptr && d_b.ptr && d_d.ptr);
  if (a_form == AForm::kRegisters) {
    CUDA_OK(cudaMemcpy(d_a.ptr, a_val.data(), a_val.size() * 4, cudaMemcpyHostToDevice));
  } else {
    CUDA_OK(cudaMemcpy(d_a.ptr, a_bits.data(), a_bits.size() * 2, cudaMemcpyHostToDevice));
  }
  CUDA_OK(cudaMemcpy(d_b.ptr, b_bits.data(), b_bits.size() * 2, cudaMemcpyHostToDevice));
  poison(d_d);
  const size_t b_bytes = static_cast<size_t>(N) * kK * 2;
  const auto* A16 = d_a.as<T>();
  const auto* B16 = d_b.as<T>();
  switch (a_form) {
    case AForm::kSmemKMajor:
      wgmma_ss_kernel<T, N, 0, kTransB><<<1, kThreads, kTileBytes + b_bytes + kAlignSlack>>>(A16, B16, d_d.as<float>());
      break;
    case AForm::kSmemMNMajor:
      wgmma_ss_kernel<T, N, 1, kTransB><<<1, kThreads, kTileBytes + b_bytes + kAlignSlack>>>(A16, B16, d_d.as<float>());
      break;
    case AForm::kRegisters:
      wgmma_rs_kernel<T, N, kTransB><<<1, kThreads, b_bytes + kAlignSlack>>>(d_a.as<float>(), B16, d_d.as<float>());
      break;
  }
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<float> got(ref.size());
  CUDA_OK(cudaMemcpy(got.data(), d_d.ptr, got.size() * 4, cudaMemcpyDeviceToHost));
  int bad = 0;
  double worst = 0;
  for (int i = 0; i < 64 * N; ++i) {
    const double err = std::fabs(static_cast<double>(got[i]) - ref[i]) / (std::fabs(ref[i]) + 1.0);
    if (!(err < 1e-2)) {  // NaN (unwritten or scale-d ignored) fails too
      if (bad++ < 5)
        ADD_FAILURE() << "D[" << i / N << "][" << i % N << "] = " << got[i] << ", CPU " << ref[i];
    }
    if (!(err <= worst)) worst = err;
  }
  EXPECT_EQ(bad, 0) << bad << " of " << 64 * N << " elements off; worst relative error " << worst;
}

TEST(Sm90Primitives, WgmmaSSKMajorN64) {
  REQUIRE_GPU();
  run_gemm<64, 0>(AForm::kSmemKMajor, 1);
}
TEST(Sm90Primitives, WgmmaSSKMajorN128) {
  REQUIRE_GPU();
  run_gemm<128, 0>(AForm::kSmemKMajor, 2);
}
TEST(Sm90Primitives, WgmmaSSBMNMajorN64) {
  REQUIRE_GPU();
  run_gemm<64, 1>(AForm::kSmemKMajor, 3);
}
TEST(Sm90Primitives, WgmmaSSBMNMajorN128) {
  REQUIRE_GPU();
  run_gemm<128, 1>(AForm::kSmemKMajor, 4);  // two 64-wide N chunks: exercises LBO
}
TEST(Sm90Primitives, WgmmaSSAMNMajorN64) {
  REQUIRE_GPU();
  run_gemm<64, 0>(AForm::kSmemMNMajor, 5);
}
TEST(Sm90Primitives, WgmmaSSAMNMajorN128) {
  REQUIRE_GPU();
  run_gemm<128, 0>(AForm::kSmemMNMajor, 6);
}
TEST(Sm90Primitives, WgmmaSSBothMNMajorN64) {
  REQUIRE_GPU();
  run_gemm<64, 1>(AForm::kSmemMNMajor, 7);
}
TEST(Sm90Primitives, WgmmaSSBothMNMajorN128) {
  REQUIRE_GPU();
  run_gemm<128, 1>(AForm::kSmemMNMajor, 8);
}
TEST(Sm90Primitives, WgmmaRSKMajorN64) {
  REQUIRE_GPU();
  run_gemm<64, 0>(AForm::kRegisters, 9);
}
TEST(Sm90Primitives, WgmmaRSKMajorN128) {
  REQUIRE_GPU();
  run_gemm<128, 0>(AForm::kRegisters, 10);
}
TEST(Sm90Primitives, WgmmaRSBMNMajorN64) {
  REQUIRE_GPU();
  run_gemm<64, 1>(AForm::kRegisters, 11);
}
TEST(Sm90Primitives, WgmmaRSBMNMajorN128) {
  REQUIRE_GPU();
  run_gemm<128, 1>(AForm::kRegisters, 12);
}
// stmatrix .x4 and .x4.trans from the mma register layout: thread t holds, in register m, the
// b16 pair (row t / 4, columns 2 (t % 4), 2 (t % 4) + 1) of 8x8 matrix m; matrix m's rows go to
// 16-byte smem rows 8m .. 8m + 7 (lane 8m + r gives row r's address). Plain: smem row 8m + r holds
// row r of matrix m; .trans: it holds column r.
__global__ void stmatrix_kernel(uint16_t* out, int trans) {
  __shared__ __align__(16) uint16_t tile[32 * 8];  // 32 rows of 16 bytes
  const int t = threadIdx.x;
  uint32_t reg[4];
  for (int m = 0; m < 4; ++m) {
    const int row = t / 4, col = 2 * (t % 4);
    const uint32_t lo = static_cast<uint32_t>(m * 64 + row * 8 + col);  // element id = m*64 + row*8 + col
    reg[m] = lo | ((lo + 1) << 16);
  }
  const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(tile)) + 16u * t;  // lane t: row t
  if (trans)
    ptx::stmatrix_x4_trans(addr, reg[0], reg[1], reg[2], reg[3]);
  else
    ptx::stmatrix_x4(addr, reg[0], reg[1], reg[2], reg[3]);
  __syncwarp();
  for (int i = t; i < 32 * 8; i += 32) out[i] = tile[i];
}

void run_stmatrix(int trans) {
  DeviceBuffer d_out(32 * 8 * 2);
  ASSERT_TRUE(d_out.ptr);
  poison(d_out);
  stmatrix_kernel<<<1, 32>>>(d_out.as<uint16_t>(), trans);
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint16_t> got(32 * 8);
  CUDA_OK(cudaMemcpy(got.data(), d_out.ptr, got.size() * 2, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int m = 0; m < 4; ++m)
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 8; ++c) {
        // smem row 8m + r, element c: matrix m's (r, c), or its (c, r) with .trans
        const int want = trans ? m * 64 + c * 8 + r : m * 64 + r * 8 + c;
        const int have = got[(8 * m + r) * 8 + c];
        if (have != want && bad++ < 5)
          ADD_FAILURE() << (trans ? ".trans" : "plain") << " matrix " << m << " row " << r << " col " << c
                        << ": " << have << ", expected " << want;
      }
  EXPECT_EQ(bad, 0);
}

TEST(Sm90Primitives, StmatrixX4) {
  REQUIRE_GPU();
  run_stmatrix(0);
}
TEST(Sm90Primitives, StmatrixX4Trans) {
  REQUIRE_GPU();
  run_stmatrix(1);
}

// m64n80k16 with B K-major [80 n x 64 k] (the planned 80-row Q tile, docs/bwd-sm90.md last
// section): S^T = K_w Q^T (A K-major), dQ^T = K^T dS^T (A MN-major), and RS. Written in the
// twelfth session; not yet run on a GPU when they landed.
TEST(Sm90Primitives, WgmmaSSKMajorN80) {
  REQUIRE_GPU();
  run_gemm<80, 0>(AForm::kSmemKMajor, 13);
}
TEST(Sm90Primitives, WgmmaSSAMNMajorN80) {
  REQUIRE_GPU();
  run_gemm<80, 0>(AForm::kSmemMNMajor, 14);
}
TEST(Sm90Primitives, WgmmaRSKMajorN80) {
  REQUIRE_GPU();
  run_gemm<80, 0>(AForm::kRegisters, 15);
}

// f16 operands (drafts): every operand form the fp16 sm90 kernels use, and the rest.
#define DASH_F16_GEMM_TEST(name, n, tb, form, seed) \
  TEST(Sm90PrimitivesF16, name) {                    \
    REQUIRE_GPU();                                   \
    run_gemm<n, tb, __half>(form, seed);             \
  }
DASH_F16_GEMM_TEST(WgmmaF16SSKMajorN64, 64, 0, AForm::kSmemKMajor, 101)      // bwd S^T, dP^T
DASH_F16_GEMM_TEST(WgmmaF16SSKMajorN128, 128, 0, AForm::kSmemKMajor, 102)    // fwd S
DASH_F16_GEMM_TEST(WgmmaF16SSBMNMajorN128, 128, 1, AForm::kSmemKMajor, 104)
DASH_F16_GEMM_TEST(WgmmaF16SSAMNMajorN64, 64, 0, AForm::kSmemMNMajor, 105)
DASH_F16_GEMM_TEST(WgmmaF16SSBothMNMajorN64, 64, 1, AForm::kSmemMNMajor, 107)  // bwd dQ
DASH_F16_GEMM_TEST(WgmmaF16RSKMajorN64, 64, 0, AForm::kRegisters, 109)
DASH_F16_GEMM_TEST(WgmmaF16RSBMNMajorN64, 64, 1, AForm::kRegisters, 111)     // fwd/bwd hdim 64 P V, dV, dK
DASH_F16_GEMM_TEST(WgmmaF16RSBMNMajorN128, 128, 1, AForm::kRegisters, 112)   // fwd/bwd hdim 128 P V, dV, dK
#undef DASH_F16_GEMM_TEST

// ------------------------------------------------------------------- bulk reduce-add ----

// Each CTA stages 16 KiB of fp32 in smem and reduce-adds it into dst `reps` times.
__global__ void __launch_bounds__(kThreads, 1)
bulk_reduce_kernel(const float* src, float* dst, int reps) {
  extern __shared__ uint8_t smem_raw[];
  float* buf = reinterpret_cast<float*>(sm90::align_swizzle_atom(smem_raw));
  for (int i = threadIdx.x; i < kReduceFloats; i += kThreads) buf[i] = src[i];
  cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);  // bulk copies read via the async proxy
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int r = 0; r < reps; ++r) {
      cuda::ptx::cp_reduce_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared,
                                      cuda::ptx::op_add, dst, buf, kReduceFloats * 4u);
    }
    cuda::ptx::cp_async_bulk_commit_group();
    cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<0>{});
  }
}

TEST(Sm90Primitives, BulkReduceAddF32Twice) {
  REQUIRE_GPU();
  constexpr int kCtas = 3, kReps = 2;
  std::vector<float> src(kReduceFloats), init(kReduceFloats), want(kReduceFloats);
  for (int i = 0; i < kReduceFloats; ++i) {
    src[i] = 0.25f * static_cast<float>((i * 37) % 101) + 0.5f;  // quarter-integers: exact sums
    init[i] = -0.5f * static_cast<float>(i % 503) - 3.f;
    want[i] = init[i] + static_cast<float>(kCtas * kReps) * src[i];
  }
  DeviceBuffer d_src(kReduceFloats * 4), d_dst(kReduceFloats * 4);
  ASSERT_TRUE(d_src.ptr && d_dst.ptr);
  CUDA_OK(cudaMemcpy(d_src.ptr, src.data(), kReduceFloats * 4, cudaMemcpyHostToDevice));
  poison(d_dst);
  CUDA_OK(cudaMemcpy(d_dst.ptr, init.data(), kReduceFloats * 4, cudaMemcpyHostToDevice));
  bulk_reduce_kernel<<<kCtas, kThreads, kReduceFloats * 4 + kAlignSlack>>>(d_src.as<float>(),
                                                                          d_dst.as<float>(), kReps);
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<float> got(kReduceFloats);
  CUDA_OK(cudaMemcpy(got.data(), d_dst.ptr, kReduceFloats * 4, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < kReduceFloats; ++i) {
    if (got[i] != want[i] && bad++ < 5) ADD_FAILURE() << "dst[" << i << "] = " << got[i] << ", want " << want[i];
  }
  EXPECT_EQ(bad, 0);
}

// ------------------------------------------------------------------- exp2 on the FMA pipe ----

__global__ void ex2_kernel(const float* x, float* fma_out, float* mufu_out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    fma_out[i] = ptx::ex2_fma(x[i]);
    mufu_out[i] = ptx::ex2_approx_ftz(x[i]);
  }
}

// ptx::ex2_fma (the softmax's FMA-pipe exp2) against exp2 in double over the softmax's range:
// relative error below 1.2e-4 (fitted: 9.5e-5) wherever the result is a normal float, exact at
// integers, +0 for x <= -127 and -inf like MUFU.EX2 with ftz, and within 2^-125 absolute in the
// last binade above that.
TEST(Sm90Primitives, Exp2OnFmaPipeMatchesExp2) {
  REQUIRE_GPU();
  std::vector<float> x;
  std::mt19937_64 rng(20261130);
  std::uniform_real_distribution<float> ud(-130.f, 0.5f);
  for (int i = 0; i < 200000; ++i) x.push_back(ud(rng));
  for (int k = -140; k <= 1; ++k) x.push_back(static_cast<float>(k));  // integers
  for (float v : {-0.f, -1e-7f, -0.9999999f, -126.5f, -127.f, -127.5f, -1000.f, -INFINITY}) x.push_back(v);
  const int n = static_cast<int>(x.size());
  DeviceBuffer d_x(n * 4), d_f(n * 4), d_m(n * 4);
  ASSERT_TRUE(d_x.ptr && d_f.ptr && d_m.ptr);
  CUDA_OK(cudaMemcpy(d_x.ptr, x.data(), n * 4, cudaMemcpyHostToDevice));
  poison(d_f);
  poison(d_m);
  ex2_kernel<<<(n + 255) / 256, 256>>>(d_x.as<float>(), d_f.as<float>(), d_m.as<float>(), n);
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<float> got(n), mufu(n);
  CUDA_OK(cudaMemcpy(got.data(), d_f.ptr, n * 4, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(mufu.data(), d_m.ptr, n * 4, cudaMemcpyDeviceToHost));
  int bad = 0;
  double worst = 0.0;
  for (int i = 0; i < n; ++i) {
    const double want = std::exp2(static_cast<double>(x[i]));
    const double g = got[i];
    bool ok;
    if (x[i] <= -127.f) {
      ok = g == 0.0 && !std::signbit(got[i]) && mufu[i] == 0.f;
    } else if (x[i] < -126.f) {
      ok = std::isfinite(g) && g >= 0.0 && std::fabs(g - want) <= std::ldexp(1.0, -125);
    } else {
      const double rel = std::fabs(g - want) / want;
      worst = std::max(worst, rel);
      ok = rel < 1.2e-4 && (x[i] != std::floor(x[i]) || g == want);
    }
    if (!ok && bad++ < 5) ADD_FAILURE() << "ex2_fma(" << x[i] << ") = " << got[i] << ", want " << want;
  }
  EXPECT_EQ(bad, 0);
  EXPECT_GT(worst, 1e-6);  // the polynomial really ran (MUFU.EX2 is within ~2 ulp)
  RecordProperty("max_rel_err", std::to_string(worst));
}

}  // namespace
}  // namespace dash::test
