// Attention backward, warp-MMA version, driven by the shared schedule model.
//
// Three launches (hopper-guide 3.1): preprocess (D = rowsum(dO*O), LSE*log2e), the persistent
// main kernel (one task = one KV tile, or a symmetric pair, for all query heads of its GQA
// group; K/V resident in smem; Q/dO streamed; dK/dV in registers; dQ partials added in fp32 to
// an L2-resident accumulator in the order the schedule dictates), postprocess (dQ * scale ->
// bf16/fp16). dK/dV of a KV head are summed over its query heads inside one CTA, in a fixed
// order, so GQA needs no second reduction.
#include <cmath>

#include "kernels/kernel_params.h"
#include "kernels/tile_io.cuh"
#include "ptx/mma_sm80.cuh"
#include "ptx/semaphore.cuh"

namespace dash::kernels {
namespace {

constexpr int kBwdThreads = 256;  // 8 warps: 4 along rows x 2 along columns of every GEMM
constexpr float kLog2e = 1.4426950408889634f;

// ---- preprocess: D = rowsum(dO * O), LSE in log2 units; one warp per row --------------------
template <typename T, int D>
__global__ void __launch_bounds__(256) attn_bwd_preprocess(const BwdKernelParams p) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row = blockIdx.x * 8 + warp;
  const int h = blockIdx.y, b = blockIdx.z;
  const TileProblem& tp = p.model.p;
  if (row >= p.seqlen_q_pad) return;
  const int64_t vec = ((int64_t)b * tp.heads_q + h) * p.seqlen_q_pad + row;
  if (row >= tp.seqlen_q) {
    if (lane == 0) { p.dsum[vec] = 0.f; p.lse_log2[vec] = 0.f; }
    return;
  }
  const T* o = static_cast<const T*>(p.o.ptr) + b * p.o.sb + row * p.o.ss + h * p.o.sh;
  const T* d = static_cast<const T*>(p.dout.ptr) + b * p.dout.sb + row * p.dout.ss + h * p.dout.sh;
  float acc = 0.f;
#pragma unroll
  for (int c = lane * 2; c < D; c += 64) {
    acc += to_float(o[c]) * to_float(d[c]) + to_float(o[c + 1]) * to_float(d[c + 1]);
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
  if (lane == 0) {
    p.dsum[vec] = acc;
    const float lse = p.lse[((int64_t)b * tp.heads_q + h) * tp.seqlen_q + row];
    // Rows that see no key are fully masked in the main kernel; keep their LSE finite.
    p.lse_log2[vec] = lse == -INFINITY ? 0.f : lse * kLog2e;
  }
}

// ---- postprocess: dQ = scale * dq_accum -> T ------------------------------------------------
template <typename T, int D>
__global__ void __launch_bounds__(256) attn_bwd_postprocess(const BwdKernelParams p) {
  constexpr int kPerThread = 8;
  constexpr int kThreadsPerRow = D / kPerThread;
  const int row = blockIdx.x * (256 / kThreadsPerRow) + threadIdx.x / kThreadsPerRow;
  const int col = (threadIdx.x % kThreadsPerRow) * kPerThread;
  const int h = blockIdx.y, b = blockIdx.z;
  const TileProblem& tp = p.model.p;
  if (row >= tp.seqlen_q) return;
  const float* src = p.dq_accum + (((int64_t)b * tp.heads_q + h) * p.seqlen_q_pad + row) * D + col;
  const float4 x0 = *reinterpret_cast<const float4*>(src);
  const float4 x1 = *reinterpret_cast<const float4*>(src + 4);
  using V2 = typename Vec2<T>::type;
  V2 out[4] = {Vec2<T>::make(x0.x * p.scale, x0.y * p.scale), Vec2<T>::make(x0.z * p.scale, x0.w * p.scale),
               Vec2<T>::make(x1.x * p.scale, x1.y * p.scale), Vec2<T>::make(x1.z * p.scale, x1.w * p.scale)};
  T* dst = static_cast<T*>(p.dq.ptr) + b * p.dq.sb + row * p.dq.ss + h * p.dq.sh + col;
  *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(out);
}

// ---- main kernel -----------------------------------------------------------------------------
template <typename T, int D>
struct BwdSmem {
  static constexpr int BM = kBwdBlockM, BN = kBwdBlockN;
  static constexpr int LD = D + kSmemPad, LDP = BN + kSmemPad;
  static constexpr size_t kBytes =
      sizeof(T) * (2 * BN * LD + 2 * BM * LD + 2 * BM * LDP) + 2 * BM * sizeof(float);
};

// Warp tile of C[16 x 8*NB] += A[16 x 16*KSTEPS] * B, operands in padded smem.
//   A: row-major [m][k] (kTransA = false) or stored transposed [k][m] (kTransA = true).
//   B: stored [n][k] (kTransB = false) or [k][n] (kTransB = true).
template <typename T, int NB, int KSTEPS, bool kTransA, bool kTransB>
__device__ __forceinline__ void warp_gemm(float (&acc)[NB][4], const T* A, int lda, const T* B, int ldb,
                                          int lane) {
  static_assert(NB % 2 == 0, "two n-blocks per ldmatrix.x4");
  const int r8 = lane % 8, m1 = (lane / 8) % 2, m2 = lane / 16;
#pragma unroll 2
  for (int kk = 0; kk < KSTEPS; ++kk) {
    uint32_t a[4];
    if constexpr (kTransA) {
      // matrix q = lane/8 holds (m-half q%2, k-half q/2) of A; stored rows are k.
      ptx::ldmatrix_x4_trans(a, ptx::smem_u32(A + (16 * kk + 8 * m2 + r8) * lda + 8 * m1));
    } else {
      ptx::ldmatrix_x4(a, ptx::smem_u32(A + (r8 + 8 * m1) * lda + 16 * kk + 8 * m2));
    }
#pragma unroll
    for (int n2 = 0; n2 < NB / 2; ++n2) {
      uint32_t bb[4];
      if constexpr (kTransB) {
        ptx::ldmatrix_x4_trans(bb, ptx::smem_u32(B + (16 * kk + r8 + 8 * m1) * ldb + 16 * n2 + 8 * m2));
      } else {
        ptx::ldmatrix_x4(bb, ptx::smem_u32(B + (16 * n2 + r8 + 8 * m2) * ldb + 16 * kk + 8 * m1));
      }
      const uint32_t b0[2] = {bb[0], bb[1]}, b1[2] = {bb[2], bb[3]};
      ptx::mma_16816<T>(acc[2 * n2], a, b0);
      ptx::mma_16816<T>(acc[2 * n2 + 1], a, b1);
    }
  }
}

template <int NB>
__device__ __forceinline__ void zero(float (&acc)[NB][4]) {
#pragma unroll
  for (int n = 0; n < NB; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[n][e] = 0.f;
}

template <typename T, int D, bool kCausal>
__global__ void __launch_bounds__(kBwdThreads, 1) attn_bwd_main(const BwdKernelParams p) {
  using S = BwdSmem<T, D>;
  constexpr int BM = S::BM, BN = S::BN, LD = S::LD, LDP = S::LDP;
  constexpr int NB_S = BN / 2 / 8;   // S/dP: each warp 16 rows x BN/2 keys
  constexpr int NB_D = D / 2 / 8;    // dK/dV/dQ: each warp 16 rows x D/2 columns
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* sK = reinterpret_cast<T*>(smem_raw);  // [BN][LD]
  T* sV = sK + BN * LD;                    // [BN][LD]
  T* sQ = sV + BN * LD;                    // [BM][LD]
  T* sdO = sQ + BM * LD;                   // [BM][LD]
  T* sP = sdO + BM * LD;                   // [BM][LDP]  P, query-row major
  T* sdS = sP + BM * LDP;                  // [BM][LDP]  dS, query-row major
  float* sLse = reinterpret_cast<float*>(sdS + BM * LDP);
  float* sDsum = sLse + BM;
  __shared__ int s_task;

  const ScheduleModel& M = p.model;
  const TileProblem& tp = M.p;
  const int G = tp.q_per_kv();
  const int diag = tp.seqlen_k - tp.seqlen_q;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp % 4, wn = warp / 4;
  const int g8 = lane / 4, t4 = lane % 4;
  const bool ordered = M.deterministic();
  const int num_tasks = M.num_tasks();

  for (int iter = 0;; ++iter) {
    __syncthreads();  // everyone is done with s_task and the smem of the previous task
    if (p.dispatch == Dispatch::kDynamic) {
      if (threadIdx.x == 0) s_task = atomicAdd(p.task_counter, 1);
    } else if (threadIdx.x == 0) {
      s_task = blockIdx.x + iter * gridDim.x;
    }
    __syncthreads();
    const int task = s_task;
    if (task >= num_tasks) break;
    const int bh = M.task_head(task), slot = M.task_slot(task);
    const int b = bh / tp.heads_kv, hk = bh % tp.heads_kv;

    for (int side = 0; side < M.num_sides(slot); ++side) {
      const int j = M.kv_tile(slot, side);
      const int nsteps = M.num_steps(slot, side);
      const int total = G * nsteps;
      const T* k_base = static_cast<const T*>(p.k.ptr) + b * p.k.sb + hk * p.k.sh;
      const T* v_base = static_cast<const T*>(p.v.ptr) + b * p.v.sb + hk * p.v.sh;
      __syncthreads();  // previous side's readers of sK/sV/sQ are done
      load_tile_async<T, BN, D, kBwdThreads>(sK, k_base, p.k.ss, j * BN, tp.seqlen_k);
      load_tile_async<T, BN, D, kBwdThreads>(sV, v_base, p.v.ss, j * BN, tp.seqlen_k);

      auto load_step = [&](int s) {
        const int hq = hk * G + s % G;
        const int i = M.visit(slot, side, s / G);
        const T* q_base = static_cast<const T*>(p.q.ptr) + b * p.q.sb + hq * p.q.sh;
        const T* do_base = static_cast<const T*>(p.dout.ptr) + b * p.dout.sb + hq * p.dout.sh;
        load_tile_async<T, BM, D, kBwdThreads>(sQ, q_base, p.q.ss, i * BM, tp.seqlen_q);
        load_tile_async<T, BM, D, kBwdThreads>(sdO, do_base, p.dout.ss, i * BM, tp.seqlen_q);
        if (threadIdx.x < BM) {
          const int64_t vec = ((int64_t)b * tp.heads_q + hq) * p.seqlen_q_pad + i * BM + threadIdx.x;
          sLse[threadIdx.x] = p.lse_log2[vec];
          sDsum[threadIdx.x] = p.dsum[vec];
        }
      };
      load_step(0);
      ptx::cp_async_commit();

      float acc_dk[NB_D][4], acc_dv[NB_D][4];
      zero(acc_dk);
      zero(acc_dv);

      for (int s = 0; s < total; ++s) {
        // Program order: for step, for query head of the group (schedule.h).
        const int hq = hk * G + s % G;
        const int i = M.visit(slot, side, s / G);
        ptx::cp_async_wait<0>();
        __syncthreads();

        // S = Q K^T and dP = dO V^T: warp (wm, wn) owns rows 16wm.., keys (BN/2)wn..
        float acc_s[NB_S][4], acc_dp[NB_S][4];
        zero(acc_s);
        zero(acc_dp);
        warp_gemm<T, NB_S, D / 16, false, false>(acc_s, sQ + 16 * wm * LD, LD, sK + (BN / 2) * wn * LD, LD, lane);
        warp_gemm<T, NB_S, D / 16, false, false>(acc_dp, sdO + 16 * wm * LD, LD, sV + (BN / 2) * wn * LD, LD, lane);

        // P = exp2(S*scale*log2e - LSE*log2e) (masked), dS = P * (dP - D); stage both in smem.
#pragma unroll
        for (int n = 0; n < NB_S; ++n) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int r = 16 * wm + g8 + 8 * h;
            const int c = (BN / 2) * wn + 8 * n + 2 * t4;
            const int row = i * BM + r, key = j * BN + c;
            float pv[2], ds[2];
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const bool ok = row < tp.seqlen_q && key + e < tp.seqlen_k && (!kCausal || key + e <= row + diag);
              pv[e] = ok ? exp2f(acc_s[n][2 * h + e] * p.scale_log2 - sLse[r]) : 0.f;
              ds[e] = pv[e] * (acc_dp[n][2 * h + e] - sDsum[r]);
            }
            *reinterpret_cast<uint32_t*>(sP + r * LDP + c) = ptx::pack2<T>(pv[0], pv[1]);
            *reinterpret_cast<uint32_t*>(sdS + r * LDP + c) = ptx::pack2<T>(ds[0], ds[1]);
          }
        }
        __syncthreads();

        // dV += P^T dO, dK += dS^T Q: warp owns keys 16wm.., columns (D/2)wn..
        warp_gemm<T, NB_D, BM / 16, true, true>(acc_dv, sP + 16 * wm, LDP, sdO + (D / 2) * wn, LD, lane);
        warp_gemm<T, NB_D, BM / 16, true, true>(acc_dk, sdS + 16 * wm, LDP, sQ + (D / 2) * wn, LD, lane);
        __syncthreads();  // Q/dO/LSE/D of this step are consumed: prefetch the next step
        if (s + 1 < total) load_step(s + 1);
        ptx::cp_async_commit();

        // dQ_i partial = dS K: warp owns rows 16wm.., columns (D/2)wn..
        float acc_dq[NB_D][4];
        zero(acc_dq);
        warp_gemm<T, NB_D, BN / 16, false, true>(acc_dq, sdS + 16 * wm * LDP, LDP, sK + (D / 2) * wn, LD, lane);

        // Ordered fp32 accumulation: wait until the semaphore equals our rank, add, release.
        int* sem = p.dq_sem + ((int64_t)b * tp.heads_q + hq) * M.m + i;
        if (ordered) {
          if (warp == 0) {
            int rank;
            if (M.rank_needs_loop()) {
              rank = M.rank_partial(i, j, lane, 32);
              rank = __reduce_add_sync(0xffffffffu, rank);
            } else {
              rank = M.rank(i, j);
            }
            if (lane == 0) ptx::wait_equal(sem, rank, task, i, j);
          }
          __syncthreads();
        }
        float* acc_base = p.dq_accum + (((int64_t)b * tp.heads_q + hq) * p.seqlen_q_pad + i * BM) * D;
#pragma unroll
        for (int n = 0; n < NB_D; ++n) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int r = 16 * wm + g8 + 8 * h;
            const int c = (D / 2) * wn + 8 * n + 2 * t4;
            atomicAdd(reinterpret_cast<float2*>(acc_base + r * D + c),
                      make_float2(acc_dq[n][2 * h], acc_dq[n][2 * h + 1]));
          }
        }
        if (ordered) {
          // The adds must have landed before the next contributor may add: fence in every
          // writing thread, gather at the barrier, then one gpu-scope release.
          __threadfence();
          __syncthreads();
          if (threadIdx.x == 0) ptx::red_release_gpu_add(sem, 1);
        }
      }

      // Epilogue: dK *= scale; store dK, dV rows that exist.
      T* dk_base = static_cast<T*>(p.dk.ptr) + b * p.dk.sb + hk * p.dk.sh;
      T* dv_base = static_cast<T*>(p.dv.ptr) + b * p.dv.sb + hk * p.dv.sh;
#pragma unroll
      for (int n = 0; n < NB_D; ++n) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int key = j * BN + 16 * wm + g8 + 8 * h;
          const int c = (D / 2) * wn + 8 * n + 2 * t4;
          if (key < tp.seqlen_k) {
            *reinterpret_cast<typename Vec2<T>::type*>(dk_base + (int64_t)key * p.dk.ss + c) =
                Vec2<T>::make(acc_dk[n][2 * h] * p.scale, acc_dk[n][2 * h + 1] * p.scale);
            *reinterpret_cast<typename Vec2<T>::type*>(dv_base + (int64_t)key * p.dv.ss + c) =
                Vec2<T>::make(acc_dv[n][2 * h], acc_dv[n][2 * h + 1]);
          }
        }
      }
    }
  }
}

template <typename T, int D, bool kCausal>
cudaError_t launch_main(const BwdKernelParams& p, int num_ctas, cudaStream_t stream) {
  auto kernel = attn_bwd_main<T, D, kCausal>;
  const int smem = (int)BwdSmem<T, D>::kBytes;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (err != cudaSuccess) return err;
  kernel<<<num_ctas, kBwdThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

template <typename T, int D, bool kCausal>
cudaError_t occupancy(int* ctas_per_sm) {
  auto kernel = attn_bwd_main<T, D, kCausal>;
  const int smem = (int)BwdSmem<T, D>::kBytes;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (err != cudaSuccess) return err;
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(ctas_per_sm, kernel, kBwdThreads, smem);
}

// Runs F<T, D, kCausal>() for the run-time (dtype, head_dim, causal): the one place where
// run-time flags become template parameters.
template <template <typename, int, bool> class F, typename... Args>
cudaError_t dispatch(DType dtype, int head_dim, bool causal, Args&&... args) {
  if (dtype == DType::kBF16) {
    if (head_dim == 64)
      return causal ? F<__nv_bfloat16, 64, true>::run(args...) : F<__nv_bfloat16, 64, false>::run(args...);
    return causal ? F<__nv_bfloat16, 128, true>::run(args...) : F<__nv_bfloat16, 128, false>::run(args...);
  }
  if (head_dim == 64) return causal ? F<__half, 64, true>::run(args...) : F<__half, 64, false>::run(args...);
  return causal ? F<__half, 128, true>::run(args...) : F<__half, 128, false>::run(args...);
}

template <typename T, int D, bool C>
struct MainLauncher {
  static cudaError_t run(const BwdKernelParams& p, int n, cudaStream_t s) { return launch_main<T, D, C>(p, n, s); }
};
template <typename T, int D, bool C>
struct OccupancyQuery {
  static cudaError_t run(int* out) { return occupancy<T, D, C>(out); }
};
template <typename T, int D, bool C>
struct PreLauncher {
  static cudaError_t run(const BwdKernelParams& p, cudaStream_t s) {
    const TileProblem& tp = p.model.p;
    const dim3 grid((p.seqlen_q_pad + 7) / 8, tp.heads_q, tp.batch);
    attn_bwd_preprocess<T, D><<<grid, 256, 0, s>>>(p);
    return cudaGetLastError();
  }
};
template <typename T, int D, bool C>
struct PostLauncher {
  static cudaError_t run(const BwdKernelParams& p, cudaStream_t s) {
    const TileProblem& tp = p.model.p;
    constexpr int kRowsPerBlock = 256 / (D / 8);
    const dim3 grid((tp.seqlen_q + kRowsPerBlock - 1) / kRowsPerBlock, tp.heads_q, tp.batch);
    attn_bwd_postprocess<T, D><<<grid, 256, 0, s>>>(p);
    return cudaGetLastError();
  }
};

}  // namespace

cudaError_t launch_bwd_preprocess(const BwdKernelParams& p, int head_dim, DType dtype, cudaStream_t stream) {
  return dispatch<PreLauncher>(dtype, head_dim, false, p, stream);
}
cudaError_t launch_bwd_main(const BwdKernelParams& p, int head_dim, DType dtype, bool causal, int num_ctas,
                            cudaStream_t stream) {
  return dispatch<MainLauncher>(dtype, head_dim, causal, p, num_ctas, stream);
}
cudaError_t launch_bwd_postprocess(const BwdKernelParams& p, int head_dim, DType dtype, cudaStream_t stream) {
  return dispatch<PostLauncher>(dtype, head_dim, false, p, stream);
}
cudaError_t bwd_main_occupancy(int head_dim, DType dtype, bool causal, int* ctas_per_sm) {
  return dispatch<OccupancyQuery>(dtype, head_dim, causal, ctas_per_sm);
}

}  // namespace dash::kernels
