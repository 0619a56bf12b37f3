// Attention forward (O and LSE), warp-MMA version: one CTA per (Q tile, query head, batch),
// 4 warps x 16 query rows, K/V tiles double-buffered with cp.async, online softmax in fp32.
#include <cmath>

#include "kernels/kernel_params.h"
#include "kernels/tile_io.cuh"
#include "ptx/mma_sm80.cuh"

namespace dash::kernels {
namespace {

constexpr int kFwdThreads = 128;

template <typename T, int D, bool kCausal>
__global__ void __launch_bounds__(kFwdThreads) attn_fwd_kernel(const FwdKernelParams p) {
  constexpr int BM = kFwdBlockM, BN = kFwdBlockN, LD = D + kSmemPad;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* sQ = reinterpret_cast<T*>(smem_raw);  // [BM][LD]
  T* sK = sQ + BM * LD;                    // [2][BN][LD]
  T* sV = sK + 2 * BN * LD;                // [2][BN][LD]

  const int i = blockIdx.x, hq = blockIdx.y, b = blockIdx.z;
  const int hk = hq / (p.heads_q / p.heads_kv);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t4 = lane % 4;

  TileProblem tp;
  tp.seqlen_q = p.seqlen_q; tp.seqlen_k = p.seqlen_k;
  tp.block_m = BM; tp.block_n = BN; tp.causal = kCausal;
  const int j_end = tp.kv_tile_end(i);
  const int diag = p.seqlen_k - p.seqlen_q;

  const T* q_base = static_cast<const T*>(p.q.ptr) + b * p.q.sb + hq * p.q.sh;
  const T* k_base = static_cast<const T*>(p.k.ptr) + b * p.k.sb + hk * p.k.sh;
  const T* v_base = static_cast<const T*>(p.v.ptr) + b * p.v.sb + hk * p.v.sh;

  load_tile_async<T, BM, D, kFwdThreads>(sQ, q_base, p.q.ss, i * BM, p.seqlen_q);
  if (j_end > 0) {
    load_tile_async<T, BN, D, kFwdThreads>(sK, k_base, p.k.ss, 0, p.seqlen_k);
    load_tile_async<T, BN, D, kFwdThreads>(sV, v_base, p.v.ss, 0, p.seqlen_k);
  }
  ptx::cp_async_commit();

  float acc_o[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc_o[n][e] = 0.f;
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.f, 0.f};
  const int row_lo = i * BM + warp * 16 + g;  // this thread's rows: row_lo and row_lo + 8

  uint32_t qf[D / 16][4];
  for (int j = 0; j < j_end; ++j) {
    const int buf = j & 1;
    if (j + 1 < j_end) {
      load_tile_async<T, BN, D, kFwdThreads>(sK + (buf ^ 1) * BN * LD, k_base, p.k.ss, (j + 1) * BN, p.seqlen_k);
      load_tile_async<T, BN, D, kFwdThreads>(sV + (buf ^ 1) * BN * LD, v_base, p.v.ss, (j + 1) * BN, p.seqlen_k);
    }
    ptx::cp_async_commit();
    ptx::cp_async_wait<1>();
    __syncthreads();
    if (j == 0) {
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk)
        ptx::ldmatrix_x4(qf[kk], ptx::smem_u32(sQ + (warp * 16 + (lane % 8) + 8 * ((lane / 8) % 2)) * LD +
                                               16 * kk + 8 * (lane / 16)));
    }
    const T* cK = sK + buf * BN * LD;
    const T* cV = sV + buf * BN * LD;

    // S = Q K^T for this warp's 16 rows x BN keys.
    float s[BN / 8][4];
#pragma unroll
    for (int n = 0; n < BN / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) s[n][e] = 0.f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
#pragma unroll
      for (int n2 = 0; n2 < BN / 16; ++n2) {
        uint32_t bk[4];
        ptx::ldmatrix_x4(bk, ptx::smem_u32(cK + (16 * n2 + (lane % 8) + 8 * (lane / 16)) * LD + 16 * kk +
                                           8 * ((lane / 8) % 2)));
        const uint32_t b0[2] = {bk[0], bk[1]}, b1[2] = {bk[2], bk[3]};
        ptx::mma_16816<T>(s[2 * n2], qf[kk], b0);
        ptx::mma_16816<T>(s[2 * n2 + 1], qf[kk], b1);
      }
    }
    // Mask (key tail, causal) and online softmax; scale folded into exp2.
    float new_max[2] = {row_max[0], row_max[1]};
#pragma unroll
    for (int n = 0; n < BN / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = j * BN + 8 * n + 2 * t4 + (e & 1);
        const int row = row_lo + 8 * (e >> 1);
        const bool ok = key < p.seqlen_k && (!kCausal || key <= row + diag);
        s[n][e] = ok ? s[n][e] : -INFINITY;
        new_max[e >> 1] = fmaxf(new_max[e >> 1], s[n][e]);
      }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      new_max[h] = fmaxf(new_max[h], __shfl_xor_sync(0xffffffffu, new_max[h], 1));
      new_max[h] = fmaxf(new_max[h], __shfl_xor_sync(0xffffffffu, new_max[h], 2));
    }
    float base[2], corr[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      base[h] = new_max[h] == -INFINITY ? 0.f : new_max[h] * p.scale_log2;
      corr[h] = row_max[h] == -INFINITY ? 0.f : exp2f(row_max[h] * p.scale_log2 - base[h]);
      row_max[h] = new_max[h];
      row_sum[h] *= corr[h];
    }
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc_o[n][e] *= corr[e >> 1];
#pragma unroll
    for (int n = 0; n < BN / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[n][e] = exp2f(s[n][e] * p.scale_log2 - base[e >> 1]);
        row_sum[e >> 1] += s[n][e];
      }
    // O += P V, P straight from the accumulators (m16n8 C layout == m16n8k16 A layout).
#pragma unroll
    for (int kc = 0; kc < BN / 16; ++kc) {
      const uint32_t a[4] = {ptx::pack2<T>(s[2 * kc][0], s[2 * kc][1]), ptx::pack2<T>(s[2 * kc][2], s[2 * kc][3]),
                             ptx::pack2<T>(s[2 * kc + 1][0], s[2 * kc + 1][1]),
                             ptx::pack2<T>(s[2 * kc + 1][2], s[2 * kc + 1][3])};
#pragma unroll
      for (int n2 = 0; n2 < D / 16; ++n2) {
        uint32_t bv[4];
        ptx::ldmatrix_x4_trans(bv, ptx::smem_u32(cV + (16 * kc + (lane % 8) + 8 * ((lane / 8) % 2)) * LD +
                                                 16 * n2 + 8 * (lane / 16)));
        const uint32_t b0[2] = {bv[0], bv[1]}, b1[2] = {bv[2], bv[3]};
        ptx::mma_16816<T>(acc_o[2 * n2], a, b0);
        ptx::mma_16816<T>(acc_o[2 * n2 + 1], a, b1);
      }
    }
    __syncthreads();  // buffer `buf` is refilled two iterations later
  }
  ptx::cp_async_wait<0>();

#pragma unroll
  for (int h = 0; h < 2; ++h) {
    row_sum[h] += __shfl_xor_sync(0xffffffffu, row_sum[h], 1);
    row_sum[h] += __shfl_xor_sync(0xffffffffu, row_sum[h], 2);
  }
  T* o_base = static_cast<T*>(p.o.ptr) + b * p.o.sb + hq * p.o.sh;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = row_lo + 8 * h;
    if (row >= p.seqlen_q) continue;
    const float inv = row_sum[h] > 0.f ? 1.f / row_sum[h] : 0.f;
    T* orow = o_base + (int64_t)row * p.o.ss;
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      *reinterpret_cast<typename Vec2<T>::type*>(orow + 8 * n + 2 * t4) =
          Vec2<T>::make(acc_o[n][2 * h] * inv, acc_o[n][2 * h + 1] * inv);
    }
    if (t4 == 0) {
      const float lse = row_sum[h] > 0.f ? row_max[h] * p.scale + logf(row_sum[h]) : -INFINITY;
      p.lse[((int64_t)b * p.heads_q + hq) * p.seqlen_q + row] = lse;
    }
  }
}

template <typename T, int D, bool kCausal>
cudaError_t launch(const FwdKernelParams& p, cudaStream_t stream) {
  constexpr int LD = D + kSmemPad;
  constexpr size_t smem = sizeof(T) * (kFwdBlockM * LD + 4 * kFwdBlockN * LD);
  auto kernel = attn_fwd_kernel<T, D, kCausal>;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
  if (err != cudaSuccess) return err;
  const dim3 grid((p.seqlen_q + kFwdBlockM - 1) / kFwdBlockM, p.heads_q, p.batch);
  kernel<<<grid, kFwdThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_fwd(const FwdKernelParams& p, int head_dim, DType dtype, bool causal,
                       cudaStream_t stream) {
  // One place turns run-time flags into template parameters.
  if (dtype == DType::kBF16) {
    if (head_dim == 64) return causal ? launch<__nv_bfloat16, 64, true>(p, stream) : launch<__nv_bfloat16, 64, false>(p, stream);
    return causal ? launch<__nv_bfloat16, 128, true>(p, stream) : launch<__nv_bfloat16, 128, false>(p, stream);
  }
  if (head_dim == 64) return causal ? launch<__half, 64, true>(p, stream) : launch<__half, 64, false>(p, stream);
  return causal ? launch<__half, 128, true>(p, stream) : launch<__half, 128, false>(p, stream);
}

}  // namespace dash::kernels
