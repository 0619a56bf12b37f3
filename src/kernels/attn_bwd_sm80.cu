// Attention backward, warp-MMA version, driven by the shared schedule model.
//
// Three launches (hopper-guide 3.1): preprocess (D = rowsum(dO*O), LSE*log2e), the persistent
// main kernel (one task = one KV tile, or a symmetric pair, for all query heads of its GQA
// group; K/V resident in smem; Q/dO double-buffered; dK/dV in registers; dQ partials staged in
// smem and added in fp32 to an L2-resident accumulator by a dedicated writer warp, in the order
// the schedule dictates, while the MMA warps go on with the next tile), postprocess (dQ * scale
// -> bf16/fp16). dK/dV of a KV head are summed over its query heads inside one CTA, in a fixed
// order, so GQA needs no second reduction.
#include <cmath>

#include "kernels/dispatch.cuh"
#include "kernels/kernel_params.h"
#include "kernels/tile_io.cuh"
#include "ptx/mma_sm80.cuh"
#include "ptx/barrier.cuh"
#include "ptx/semaphore.cuh"
#include "ptx/warpgroup.cuh"

#include <cuda/ptx>

namespace dash::kernels {
namespace {

constexpr int kMmaThreads = 256;  // 8 MMA warps: 4 along rows x 2 along columns of every GEMM
constexpr int kBwdThreads = kMmaThreads + 128;  // + a writer warpgroup (warp 8 writes dQ)
// Registers: 168 at entry (65536 / 384); MMA warpgroups grow to 216, the writer shrinks to 72
// (the writer's rank loop spills below 72; the MMA code needs no more than 216).
constexpr int kMmaRegs = 216, kWriterRegs = 72;
// Named barrier ids (0 is __syncthreads).
constexpr int kBarMma = 1;  // the 256 MMA threads
// The dQ meeting: every thread of the CTA meets at named barrier kBarDq once per dQ tile. The
// MMA threads have staged tile q (buffer q % 2) and the writer has finished tile q - 1, so the
// writer takes tile q while the MMA threads compute tile q + 1 into the other buffer.
// NOTES: the tile's metadata travels through a per-CTA global mailbox, not smem: the barrier
// orders it either way, but compute-sanitizer's racecheck does not model a hand-off between
// warp roles that reach the barrier from different call sites and reports the smem version.
constexpr int kBarDq = 2;
constexpr float kLog2e = 1.4426950408889634f;

// p.pdl (sm90 backward): the semaphores, task counter and mailboxes the memset zeroed (p.zero_words
// ints), zeroed by the preprocess's threads (grid-stride), one launch fewer; then the main kernel
// may launch (it waits for this grid's completion before it reads any of it:
// cudaGridDependencySynchronize).
__device__ __forceinline__ void preprocess_prologue(const BwdKernelParams& p) {
  if (p.zero_words > 0) {
    const int64_t threads = (int64_t)gridDim.x * gridDim.y * gridDim.z * blockDim.x;
    const int64_t t = (((int64_t)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
    for (int64_t i = t; i < p.zero_words; i += threads) p.zero_ptr[i] = 0;
  }
  if (p.pdl) cudaTriggerProgrammaticLaunchCompletion();
}

// ---- preprocess: D = rowsum(dO * O), LSE in log2 units; one warp per row --------------------
template <typename T, int D>
__global__ void __launch_bounds__(256) attn_bwd_preprocess(const BwdKernelParams p) {
  preprocess_prologue(p);
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
  if (p.q_pack != nullptr) {
    // DASH_BWD_REPACK=1 (draft): head-major copies of this row of Q and dO for the sm90 kernel's
    // TMA maps (row `vec` of [batch, heads_q, seqlen_q_pad, head_dim]); 4-byte pairs per lane.
    const T* q = static_cast<const T*>(p.q.ptr) + b * p.q.sb + row * p.q.ss + h * p.q.sh;
    uint32_t* qd = reinterpret_cast<uint32_t*>(static_cast<T*>(p.q_pack) + vec * D);
    uint32_t* dd = reinterpret_cast<uint32_t*>(static_cast<T*>(p.do_pack) + vec * D);
#pragma unroll
    for (int c = lane * 2; c < D; c += 64) {
      qd[c / 2] = *reinterpret_cast<const uint32_t*>(q + c);
      dd[c / 2] = *reinterpret_cast<const uint32_t*>(d + c);
    }
  }
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

// Two packed 2-byte elements (the lower one first) as floats, by register arithmetic (not through
// memory: a reinterpreted uint4 made nvcc unpack each load at once, serializing them).
template <typename T>
__device__ __forceinline__ float2 pair_to_float2(uint32_t w);
template <>
__device__ __forceinline__ float2 pair_to_float2<__nv_bfloat16>(uint32_t w) {
  return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u));
}
template <>
__device__ __forceinline__ float2 pair_to_float2<__half>(uint32_t w) {
  __half2 h;
  memcpy(&h, &w, sizeof(h));
  return __half22float2(h);
}
// p.pre_vec (the default; DASH_BWD_PRE_VEC=0 off; O / dO are 16-byte aligned, as attn_bwd requires): the same
// outputs with 16-byte loads. A row of O / dO is D / 8 lanes x 8 elements (16 lanes at head_dim
// 128, 8 at 64), so a warp covers 32 / (D / 8) rows per pass; kPasses passes per warp, every load issued before any arithmetic (4 x 2 x 16 bytes in
// flight per thread against the scalar kernel's 2 x 4 x 1-2), and 8 warps per block: 64 (D = 128)
// or 128 (D = 64) rows per block instead of 8. Each lane sums its 8 products in order, then the
// lanes of a row meet in a shuffle tree: a fixed order (deterministic), another one than the
// scalar kernel's.
constexpr int kPreVecPasses = 4;
template <int D>
constexpr int kPreVecRowsPerBlock = 8 * (32 / (D / 8)) * kPreVecPasses;  // 8 warps
template <typename T, int D>
__global__ void __launch_bounds__(256) attn_bwd_preprocess_vec(const BwdKernelParams p) {
  constexpr int kLanes = D / 8, kRowsPerWarp = 32 / kLanes, kPasses = kPreVecPasses;
  constexpr int kRowsPerBlock = kPreVecRowsPerBlock<D>;
  preprocess_prologue(p);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int sub = lane / kLanes, l = lane % kLanes;
  const int h = blockIdx.y, b = blockIdx.z;
  const TileProblem& tp = p.model.p;
  const T* o_base = static_cast<const T*>(p.o.ptr) + b * p.o.sb + h * p.o.sh + 8 * l;
  const T* d_base = static_cast<const T*>(p.dout.ptr) + b * p.dout.sb + h * p.dout.sh + 8 * l;
  uint4 ov[kPasses], dv[kPasses];
#pragma unroll
  for (int k = 0; k < kPasses; ++k) {
    const int row = blockIdx.x * kRowsPerBlock + (k * 8 + warp) * kRowsPerWarp + sub;
    if (row < tp.seqlen_q) {
      ov[k] = __ldg(reinterpret_cast<const uint4*>(o_base + (int64_t)row * p.o.ss));
      dv[k] = __ldg(reinterpret_cast<const uint4*>(d_base + (int64_t)row * p.dout.ss));
    } else {
      ov[k] = dv[k] = make_uint4(0, 0, 0, 0);
    }
  }
#pragma unroll
  for (int k = 0; k < kPasses; ++k) {
    const int row = blockIdx.x * kRowsPerBlock + (k * 8 + warp) * kRowsPerWarp + sub;
    const uint32_t ow[4] = {ov[k].x, ov[k].y, ov[k].z, ov[k].w}, dw[4] = {dv[k].x, dv[k].y, dv[k].z, dv[k].w};
    float acc = 0.f;
#pragma unroll
    for (int e = 0; e < 4; ++e) {  // elements 2e, 2e + 1 in order
      const float2 of = pair_to_float2<T>(ow[e]), df = pair_to_float2<T>(dw[e]);
      acc = fmaf(of.x, df.x, acc);
      acc = fmaf(of.y, df.y, acc);
    }
#pragma unroll
    for (int off = kLanes / 2; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (l != 0 || row >= p.seqlen_q_pad) continue;
    const int64_t vec = ((int64_t)b * tp.heads_q + h) * p.seqlen_q_pad + row;
    if (row >= tp.seqlen_q) {
      p.dsum[vec] = 0.f;
      p.lse_log2[vec] = 0.f;
      continue;
    }
    p.dsum[vec] = acc;
    const float lse = p.lse[((int64_t)b * tp.heads_q + h) * tp.seqlen_q + row];
    p.lse_log2[vec] = lse == -INFINITY ? 0.f : lse * kLog2e;
  }
}

// ---- postprocess: dQ = scale * dq_accum -> T ------------------------------------------------
// dq_accum tiles are stored in the MMA warps' fragment order (see DqStage): float4 chunk
// (k, tid) holds acc_dq[k][0..3] of MMA thread tid. One thread per chunk un-permutes it.
template <typename T, int D>
__global__ void __launch_bounds__(256) attn_bwd_postprocess(const BwdKernelParams p) {
  constexpr int BM = kBwdBlockM;
  constexpr int kChunks = BM * D / 4;  // float4 chunks per tile
  const int chunk = blockIdx.x * 256 + threadIdx.x;  // over all tiles of this (b, h)
  const int h = blockIdx.y, b = blockIdx.z;
  const TileProblem& tp = p.model.p;
  const int tile = chunk / kChunks, c = chunk % kChunks;
  if (tile >= tp.m_tiles()) return;
  const int k = c / kMmaThreads, tid = c % kMmaThreads;
  const int warp = tid / 32, lane = tid % 32;
  const int row0 = tile * BM + 16 * (warp % 4) + lane / 4;
  const int col = (D / 2) * (warp / 4) + 8 * k + 2 * (lane % 4);
  const float4 x = *reinterpret_cast<const float4*>(
      p.dq_accum + ((int64_t)b * tp.heads_q + h) * p.seqlen_q_pad * D + (int64_t)tile * BM * D + 4 * c);
  T* dst = static_cast<T*>(p.dq.ptr) + b * p.dq.sb + h * p.dq.sh + col;
  using V2 = typename Vec2<T>::type;
  if (row0 < tp.seqlen_q) *reinterpret_cast<V2*>(dst + row0 * p.dq.ss) = Vec2<T>::make(x.x * p.scale, x.y * p.scale);
  if (row0 + 8 < tp.seqlen_q)
    *reinterpret_cast<V2*>(dst + (row0 + 8) * p.dq.ss) = Vec2<T>::make(x.z * p.scale, x.w * p.scale);
}

// ---- main kernel -----------------------------------------------------------------------------
template <typename T, int D>
struct BwdSmem {
  static constexpr int BM = kBwdBlockM, BN = kBwdBlockN;
  static constexpr int LD = D + kSmemPad, LDP = BN + kSmemPad;
  static constexpr int kDqFloats = BM * D;  // one staged dQ tile (fragment order)
  // K, V | Q[2], dO[2] | P, dS | dQ stage[2] (fp32) | LSE[2], D[2]
  static constexpr size_t kBytes = sizeof(T) * (2 * BN * LD + 4 * BM * LD + 2 * BM * LDP) +
                                   2 * kDqFloats * sizeof(float) + 4 * BM * sizeof(float);
};

// What the MMA warps tell the writer warp about one staged dQ tile.
struct DqMeta {
  int b, hq, i, j, task;  // task >= 0: a staged tile; kMetaFlush / kMetaExit: no tile
  int pad[3];
};
constexpr int kMetaExit = -1;   // no more tiles: the writer exits
constexpr int kMetaFlush = -2;  // no tile: the MMA threads only wait for the writer to drain
static_assert(sizeof(DqMeta) == kDqMailboxBytesPerCta / 2, "mailbox slot size");

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

template <typename T, int D>
__device__ __forceinline__ void dq_writer(const BwdKernelParams& p, float* sDq, const DqMeta* mailbox,
                                          bool active, int lane) {
  using S = BwdSmem<T, D>;
  const ScheduleModel& M = p.model;
  const TileProblem& tp = M.p;
  const bool ordered = M.deterministic();
  for (int q = 0;; ++q) {
    const int buf = q & 1;
    ptx::named_bar_sync(kBarDq, kBwdThreads);  // the dQ meeting
    const DqMeta meta = mailbox[buf];
    if (meta.task == kMetaExit) break;
    if (meta.task == kMetaFlush || !active) continue;
    int* sem = p.dq_sem + ((int64_t)meta.b * tp.heads_q + meta.hq) * M.m + meta.i;
    int rank = 0;
    if (ordered) {
      if (M.rank_needs_loop()) {
        rank = __reduce_add_sync(0xffffffffu, M.rank_partial(meta.i, meta.j, lane, 32));
      } else {
        rank = M.rank(meta.i, meta.j);
      }
    }
    if (lane == 0) {
      float* dst = p.dq_accum + ((int64_t)meta.b * tp.heads_q + meta.hq) * p.seqlen_q_pad * D +
                   (int64_t)meta.i * S::kDqFloats;
      if (ordered) {
        ptx::wait_equal(sem, rank, meta.task, meta.i, meta.j);
        // The acquired predecessor's adds must be ordered before our async-proxy adds.
        cuda::ptx::fence_proxy_async(cuda::ptx::space_global);
      }
      cuda::ptx::cp_reduce_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, cuda::ptx::op_add, dst,
                                      sDq + buf * S::kDqFloats, (uint32_t)(S::kDqFloats * sizeof(float)));
      cuda::ptx::cp_async_bulk_commit_group();
      // NOTES: wait for completion (not `.read`): the adds must have landed in global memory
      // before the semaphore lets the next contributor add (dash-spec 4).
      cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<0>{});
      if (ordered) {
        cuda::ptx::fence_proxy_async(cuda::ptx::space_global);
        ptx::red_release_gpu_add(sem, 1);
      }
    }
    __syncwarp();
  }
}

template <typename T, int D, bool kCausal>
__global__ void __launch_bounds__(kBwdThreads, 1) attn_bwd_main(const BwdKernelParams p) {
  using S = BwdSmem<T, D>;
  constexpr int BM = S::BM, BN = S::BN, LD = S::LD, LDP = S::LDP;
  constexpr int NB_S = BN / 2 / 8;   // S/dP: each warp 16 rows x BN/2 keys
  constexpr int NB_D = D / 2 / 8;    // dK/dV/dQ: each warp 16 rows x D/2 columns
  static_assert(NB_D * 4 * kMmaThreads == S::kDqFloats, "dQ stage holds every MMA thread's fragment");
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* sK = reinterpret_cast<T*>(smem_raw);  // [BN][LD]
  T* sV = sK + BN * LD;                    // [BN][LD]
  T* sQ = sV + BN * LD;                    // [2][BM][LD]
  T* sdO = sQ + 2 * BM * LD;               // [2][BM][LD]
  T* sP = sdO + 2 * BM * LD;               // [BM][LDP]  P, query-row major
  T* sdS = sP + BM * LDP;                  // [BM][LDP]  dS, query-row major
  float* sDq = reinterpret_cast<float*>(sdS + BM * LDP);  // [2][BM*D] fragment order
  float* sLse = sDq + 2 * S::kDqFloats;    // [2][BM]
  float* sDsum = sLse + 2 * BM;            // [2][BM]
  __shared__ int s_task;
  DqMeta* mailbox = reinterpret_cast<DqMeta*>(p.dq_mailbox) + 2 * blockIdx.x;  // [2] per CTA

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x >= kMmaThreads) {
    ptx::setmaxnreg_dec<kWriterRegs>();
    // The whole writer warpgroup meets the MMA threads (a barrier over all threads of the CTA);
    // only its first warp does the work.
    dq_writer<T, D>(p, sDq, mailbox, warp == kMmaThreads / 32, lane);
    return;
  }
  ptx::setmaxnreg_inc<kMmaRegs>();

  const ScheduleModel& M = p.model;
  const TileProblem& tp = M.p;
  const int G = tp.q_per_kv();
  const int diag = tp.seqlen_k - tp.seqlen_q;
  const int wm = warp % 4, wn = warp / 4;
  const int g8 = lane / 4, t4 = lane % 4;
  const int num_tasks = M.num_tasks();
  int qstep = 0;  // dQ tiles handed to the writer so far (selects the stage buffer)

  // NOTES: with dynamic dispatch and co-resident groups (shift, symmetric shift) the CTA must
  // not take its next task while the writer still owes reduces of the previous one: the next
  // task may belong to the same group, and the previous task's last reduce may wait for the
  // next task's early contributions, which would queue behind it in this CTA (a deadlock). So
  // the MMA threads first meet the writer once more with no tile: after that meeting the
  // writer has finished every tile of the previous task. Static dispatch (next task at least
  // one group width away) and rank-by-slot schedules (waits only on lower tasks) need no drain.
  bool owes_tiles = false;  // tiles handed to the writer since the last drain

  for (int iter = 0;; ++iter) {
    if (owes_tiles && p.dispatch == Dispatch::kDynamic && M.min_coresident() > 1) {
      if (threadIdx.x == 0) mailbox[qstep & 1] = DqMeta{0, 0, 0, 0, kMetaFlush};
      __syncwarp();
      ptx::named_bar_sync(kBarDq, kBwdThreads);  // the dQ meeting, no tile
      ++qstep;
      owes_tiles = false;
    }
    ptx::named_bar_sync(kBarMma, kMmaThreads);  // everyone is done with s_task and the smem
    if (threadIdx.x == 0)
      s_task = p.dispatch == Dispatch::kDynamic ? atomicAdd(p.task_counter, 1) : blockIdx.x + iter * gridDim.x;
    __syncwarp();  // reconverge warp 0 before the barrier (synccheck: no divergent arrival)
    ptx::named_bar_sync(kBarMma, kMmaThreads);
    const int task = s_task;
    if (task >= num_tasks) break;
    const int bh = M.task_head(task), slot = M.task_slot(task);
    const int b = bh / tp.heads_kv, hk = bh % tp.heads_kv;

    for (int side = 0; side < M.num_sides(slot); ++side) {
      const int j = M.kv_tile(slot, side);
      const int total = G * M.num_steps(slot, side);
      const T* k_base = static_cast<const T*>(p.k.ptr) + b * p.k.sb + hk * p.k.sh;
      const T* v_base = static_cast<const T*>(p.v.ptr) + b * p.v.sb + hk * p.v.sh;
      ptx::named_bar_sync(kBarMma, kMmaThreads);  // previous side's readers of sK/sV are done
      load_tile_async<T, BN, D, kMmaThreads>(sK, k_base, p.k.ss, j * BN, tp.seqlen_k);
      load_tile_async<T, BN, D, kMmaThreads>(sV, v_base, p.v.ss, j * BN, tp.seqlen_k);

      // Program order: for step, for query head of the group (schedule.h).
      auto load_step = [&](int s) {
        const int hq = hk * G + s % G;
        const int i = M.visit(slot, side, s / G);
        const int buf = s & 1;
        const T* q_base = static_cast<const T*>(p.q.ptr) + b * p.q.sb + hq * p.q.sh;
        const T* do_base = static_cast<const T*>(p.dout.ptr) + b * p.dout.sb + hq * p.dout.sh;
        load_tile_async<T, BM, D, kMmaThreads>(sQ + buf * BM * LD, q_base, p.q.ss, i * BM, tp.seqlen_q);
        load_tile_async<T, BM, D, kMmaThreads>(sdO + buf * BM * LD, do_base, p.dout.ss, i * BM, tp.seqlen_q);
        if (threadIdx.x < BM) {
          const int64_t vec = ((int64_t)b * tp.heads_q + hq) * p.seqlen_q_pad + i * BM + threadIdx.x;
          sLse[buf * BM + threadIdx.x] = p.lse_log2[vec];
          sDsum[buf * BM + threadIdx.x] = p.dsum[vec];
        }
      };
      load_step(0);
      ptx::cp_async_commit();

      float acc_dk[NB_D][4], acc_dv[NB_D][4];
      zero(acc_dk);
      zero(acc_dv);

      for (int s = 0; s < total; ++s) {
        const int hq = hk * G + s % G;
        const int i = M.visit(slot, side, s / G);
        const int buf = s & 1;
        const T* cQ = sQ + buf * BM * LD;
        const T* cdO = sdO + buf * BM * LD;
        const float* cLse = sLse + buf * BM;
        const float* cDsum = sDsum + buf * BM;
        ptx::cp_async_wait<0>();
        ptx::named_bar_sync(kBarMma, kMmaThreads);  // step s landed; step s-1 fully consumed
        if (s + 1 < total) load_step(s + 1);        // overlaps this whole step
        ptx::cp_async_commit();

        // S = Q K^T and dP = dO V^T: warp (wm, wn) owns rows 16wm.., keys (BN/2)wn..
        float acc_s[NB_S][4], acc_dp[NB_S][4];
        zero(acc_s);
        zero(acc_dp);
        warp_gemm<T, NB_S, D / 16, false, false>(acc_s, cQ + 16 * wm * LD, LD, sK + (BN / 2) * wn * LD, LD, lane);
        warp_gemm<T, NB_S, D / 16, false, false>(acc_dp, cdO + 16 * wm * LD, LD, sV + (BN / 2) * wn * LD, LD, lane);

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
              pv[e] = ok ? exp2f(acc_s[n][2 * h + e] * p.scale_log2 - cLse[r]) : 0.f;
              ds[e] = pv[e] * (acc_dp[n][2 * h + e] - cDsum[r]);
            }
            *reinterpret_cast<uint32_t*>(sP + r * LDP + c) = ptx::pack2<T>(pv[0], pv[1]);
            *reinterpret_cast<uint32_t*>(sdS + r * LDP + c) = ptx::pack2<T>(ds[0], ds[1]);
          }
        }
        ptx::named_bar_sync(kBarMma, kMmaThreads);

        // dV += P^T dO, dK += dS^T Q: warp owns keys 16wm.., columns (D/2)wn..
        warp_gemm<T, NB_D, BM / 16, true, true>(acc_dv, sP + 16 * wm, LDP, cdO + (D / 2) * wn, LD, lane);
        warp_gemm<T, NB_D, BM / 16, true, true>(acc_dk, sdS + 16 * wm, LDP, cQ + (D / 2) * wn, LD, lane);

        // dQ_i partial = dS K: warp owns rows 16wm.., columns (D/2)wn..
        float acc_dq[NB_D][4];
        zero(acc_dq);
        warp_gemm<T, NB_D, BN / 16, false, true>(acc_dq, sdS + 16 * wm * LDP, LDP, sK + (D / 2) * wn, LD, lane);

        // Hand the partial to the writer warp: store in fragment order (16 B per thread,
        // consecutive across the warp: no bank conflicts). Buffer qstep % 2 was last used by
        // tile qstep - 2, which the writer finished before the previous meeting.
        const int dbuf = qstep & 1;
        float* stage = sDq + dbuf * S::kDqFloats;
#pragma unroll
        for (int n = 0; n < NB_D; ++n)
          *reinterpret_cast<float4*>(stage + (n * kMmaThreads + threadIdx.x) * 4) =
              make_float4(acc_dq[n][0], acc_dq[n][1], acc_dq[n][2], acc_dq[n][3]);
        if (threadIdx.x == 0) mailbox[dbuf] = DqMeta{b, hq, i, j, task};
        cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);  // generic writes -> bulk copy
        __syncwarp();
        ptx::named_bar_sync(kBarDq, kBwdThreads);  // the dQ meeting
        ++qstep;
        owes_tiles = true;
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
  // Tell the writer to exit once it has finished the last tile (it stays resident, keeping the
  // smem alive, until its last bulk reduce has completed).
  if (threadIdx.x == 0) mailbox[qstep & 1] = DqMeta{0, 0, 0, 0, kMetaExit};
  __syncwarp();
  ptx::named_bar_sync(kBarDq, kBwdThreads);  // the dQ meeting
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
    if (p.pre_vec) {  // see attn_bwd_preprocess_vec (the repack draft keeps the scalar kernel)
      const dim3 grid((p.seqlen_q_pad + kPreVecRowsPerBlock<D> - 1) / kPreVecRowsPerBlock<D>, tp.heads_q, tp.batch);
      attn_bwd_preprocess_vec<T, D><<<grid, 256, 0, s>>>(p);
      return cudaGetLastError();
    }
    const dim3 grid((p.seqlen_q_pad + 7) / 8, tp.heads_q, tp.batch);
    attn_bwd_preprocess<T, D><<<grid, 256, 0, s>>>(p);
    return cudaGetLastError();
  }
};
template <typename T, int D, bool C>
struct PostLauncher {
  static cudaError_t run(const BwdKernelParams& p, cudaStream_t s) {
    const TileProblem& tp = p.model.p;
    const int chunks = tp.m_tiles() * kBwdBlockM * D / 4;
    const dim3 grid((chunks + 255) / 256, tp.heads_q, tp.batch);
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
