// Attention backward, Hopper-native main kernel (wgmma + TMA + mbarriers; docs/bwd-sm90.md).
// attn_bwd's default for bf16 head_dim 128 on sm_90 (DASH_BWD_SM90=0 disables it); everything it
// declines runs on the sm80 kernel (attn_bwd_sm80.cu).
// Also fp16 (the kernel is templated on the element type T) and head_dim 64 (dQ by one warpgroup
// per step, alternating; see "hdim 64" below and docs/bwd-sm90.md): written as drafts, the default
// since they passed the accuracy and determinism tests on an H200.
//
// What is kept from the sm80 kernel, unchanged in meaning (READ attn_bwd_sm80.cu's comments):
//   - persistent grid; tasks, sides, visit order and dQ ranks all come from ScheduleModel
//     (built by the launcher with block_m = 64, block_n = 128);
//   - program order: for side, for step, for query head of the GQA group; dK/dV of a KV head
//     summed over its query heads in registers, in that fixed order;
//   - dedicated dQ writer warps (two by default, one per staging buffer): semaphore wait for the
//     schedule's rank, bulk reduce-add,
//     wait for COMPLETION (wait_group 0, not .read), proxy fence, gpu-scope release;
//   - tile metadata MMA -> writer through the per-CTA global mailbox (2 slots);
//   - the drain rule: with dynamic dispatch and co-resident groups the CTA takes no new task
//     while its writer still owes reduces of the previous one (here the task is taken by the
//     producer warp, so that warp waits for the writer's progress counter before atomicAdd).
//
// CTA = 384 threads, 3 warpgroups:
//   WG0, WG1 (threads 0..255)  MMA; WG w owns keys 64w..64w+63 of the 128-key KV tile.
//   WG2 (threads 256..383)     producer/writer, setmaxnreg 40 (kLean, the 80-row tiles' default, or
//                              DASH_BWD_SM90_PRODUCER24=1: 24, the MMA warpgroups 240 instead of 232):
//       warp 8  lane 0: takes tasks, publishes them (task ring), issues TMA: K/V once per side,
//                      Q/dO tiles (+ LSE/D vectors, 1-D bulk copies) per step, 2-stage ring;
//       warp 9  lane 0: the dQ writer (buffer 0 only with p.dual_writer);
//       warp 10 lane 0: the task taker;
//       warp 11 lane 0: the second dQ writer (p.dual_writer: the default with dynamic dispatch;
//                      otherwise the warp leaves).
// Per step (Q tile i of query head hq, 64 rows), MMA warpgroup w (hdim 128 order; docs/bwd-sm90.md):
//   S^T  = K_w Q^T          wgmma SS m64n64k16 x D/16   (A = K rows, B = Q, both K-major)
//   dP^T = V_w dO^T         wgmma SS                    (A = V rows, B = dO)
//   P^T  = exp2(S^T * scale_log2 - LSE) (masked), dS^T = P^T (dP^T - D)      registers
//   dS^T -> smem (swizzled [128 keys x 64 q], stmatrix), proxy fence
//   dV  += P^T dO           wgmma RS m64n{D}k16 x 4     (A = P^T fragments, B = dO MN-major)
//   256-thread named barrier (both halves of dS^T stored)
//   dQ[:, 64w..64w+63] = dS K[:, 64w..]   wgmma SS m64n64k16 x 8 (A = dS MN-major (tnspA),
//                                         B = K MN-major (tnspB))
//   dK  += dS^T Q           wgmma RS                    (A = dS^T fragments, B = Q MN-major)
//   wait for dV and dQ; dQ staged fp32 for the writer while dK runs; wait for dK.
// hdim 64: the column split would need n32 halves of one swizzle atom. Instead warpgroup
// w = step % 2 computes the whole dQ tile, dQ = dS K (the same m64n64k16 x 8 SS GEMM over all
// 128 keys, with K's only hdim sub-tile), and stages it into buffer step % 2; the other warpgroup
// only arrives on dq_full; dV and dK retire before that dQ GEMM (the hdim 128 order cost 5-23%
// here). Same staging order as hdim 128 with w = 0, same postprocess.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#ifdef DASH_BWD_TRACE
#include <string>  // (trace_write)
#include <vector>
#endif

#include <cuda.h>
#include <cuda/ptx>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "api/tma_desc.h"
#include "kernels/dispatch.cuh"
#include "kernels/kernel_params.h"
#include "kernels/sm90/bwd_trace.cuh"
#include "kernels/sm90/fragment.cuh"
#include "kernels/sm90/smem_desc.cuh"
#include "kernels/sm90/swizzle.cuh"
#include "kernels/sm90/tma_pipeline.cuh"
#include "kernels/tile_io.cuh"
#include "ptx/barrier.cuh"
#include "ptx/math.cuh"
#include "ptx/semaphore.cuh"
#include "ptx/stmatrix.cuh"
#include "ptx/tma.cuh"
#include "ptx/warpgroup.cuh"
#include "ptx/wgmma.cuh"

namespace dash::kernels {
namespace {

constexpr int kBM = kBwdSm90BlockM;  // 64 query rows per Q tile
// The 80-row Q tile (full masks; docs/bwd-sm90.md, "An 80-row Q tile"; which schedules and lengths
// take it by default: bwd_sm90_block_m, docs/perf.md v14, v16, v17): the kernel
// templates take BM = kBM or kBM80. With BM = 80, S^T / dP^T are m64n80, P^T / dS^T feed 5 k-steps,
// dQ is computed transposed (dQ^T = K^T dS^T, dS stored non-transposed) and staged in ONE buffer.
constexpr int kBM80 = kBwdSm90BlockM80;
constexpr int kBM96 = kBwdSm90BlockM96;    // head_dim 64 only (96: the default there, 112 by
constexpr int kBM112 = kBwdSm90BlockM112;  // DASH_BWD_SM90_D64_BM): the 80-row code with BM = 96 or 112
constexpr int kBN = kBwdSm90BlockN;  // 128 keys per KV tile (2 MMA warpgroups x 64)
constexpr int kThreads = 384;
constexpr int kMmaThreads = 256;
// Arrivals of the MMA side on every "consumed"/"filled" barrier: every MMA thread arrives for
// itself (mbarrier.arrive releases only the arriving thread's own accesses; compute-sanitizer
// racecheck flagged the one-lane-per-warp version after __syncwarp).
constexpr int kMmaArrivals = 256;
// 232 * 256 + 40 * 128 = 64512 <= 65536.
constexpr int kMmaRegs = 232, kProducerRegs = 40;
static_assert(kMmaRegs * kMmaThreads + kProducerRegs * 128 <= 65536, "setmaxnreg budget");
// kLean (the 80-row tiles' default; DASH_BWD_SM90_PRODUCER24=1 / =0 forces it on / off; measured in
// docs/perf.md v16: +3.6..5.5% for the 80-row atomic, 0.974x for the 64-row tiles): the producer
// warpgroup in 24 registers (FlashAttention-3's split), the MMA warps in 240. At 24 the default
// loader spilled 68 B (its loop state and hoisted schedule values) and the taker 4 B (gridDim.x):
// producer_lean keeps the loader's state in shared memory and the taker reads %nctaid where used.
constexpr int kMmaRegsLean = 240, kProducerRegsLean = 24;
static_assert(kMmaRegsLean * kMmaThreads + kProducerRegsLean * 128 <= 65536, "setmaxnreg budget");
constexpr int kBarDs = 1;            // named barrier: the 256 MMA threads, dS of both WGs written
                                     // (each step; kLag: not per step), and the exit meeting
constexpr int kProducerWarp = 8, kWriterWarp = 9, kTaskWarp = 10;
constexpr int kWriterWarp2 = 11;  // p.dual_writer (default): the second dQ writer (buffer 1)
#ifdef DASH_DEBUG_WAITS
__device__ int g_bars_layout_printed = 0;  // the barrier layout is printed once per process
#endif
static_assert(kBM == kBwdBlockM, "the workspace (dq_accum, semaphores, LSE/D) is laid out for kBwdBlockM");

// Dynamic smem, every operand tile 1024-byte aligned (128B swizzle atoms).
// kDq2 (full-mask shift's default, DASH_BWD_SM90_DQ2: bwd_sm90_dq2_for; the 80-row tile at head_dim
// 128 only; docs/bwd-sm90.md "Two dQ staging buffers at 80 rows"): two dQ staging buffers in the 80-row tile's 224 KiB, paid for by one
// dO stage (released when the step's dV GEMM retires, its last reader) and one dS buffer (the next
// step writes it once both warpgroups' dQ^T GEMMs of this step retired: ds_empty[0]).
template <int D, int BM = kBM, bool kDq2 = false>
struct Sm90BwdSmem {
  static_assert(BM == kBM || BM == kBM80 || ((BM == kBM96 || BM == kBM112) && D == 64),
                "64- or 80-row tiles (96 / 112: head_dim 64)");
  static_assert(!kDq2 || (BM == kBM80 && D == 128), "two staging buffers at 80 rows: head_dim 128 only");
  static constexpr int kChunks = D / 64;                               // 64-wide sub-tiles of hdim
  static constexpr uint32_t kKVBytes = sm90::subtile_bytes(kBN) * kChunks;  // K or V [128 x D]
  static constexpr uint32_t kQBytes = sm90::subtile_bytes(BM) * kChunks;    // Q or dO [BM x D]
  // dS^T [128 keys x 64 q] (BM 64), or dS [80 q x 128 keys] as two [80 x 64] sub-tiles (BM 80: the
  // K-major B operand of dQ^T = K^T dS^T; sub-tile w = the keys of warpgroup w)
  static constexpr uint32_t kDsBytes = BM == kBM ? sm90::subtile_bytes(kBN) : 2 * sm90::subtile_bytes(BM);
  static constexpr uint32_t kDqFloats = BM * D;                             // one staged dQ tile
  static constexpr uint32_t kDqBytes = kDqFloats * 4;
  // Staging buffers of dQ: two (one per writer), one with 80-row tiles at head_dim 128 (no room
  // for a second; the single writer then hands the buffer back once its bulk reduce has READ it).
  // Head_dim 64 with 80-row tiles keeps two: 2 x 20 KiB, 153.25 KiB in all.
  static constexpr int kDqBufs = kDq2 || BM == kBM || D == 64 ? 2 : 1;
  static constexpr int kDoStages = kDq2 ? 1 : 2;  // dO stages (Q keeps two)
  static constexpr int kDsBufs = kDq2 ? 1 : 2;    // dS (dS^T) buffers
  static constexpr uint32_t kVecBytes = BM * 4;                             // LSE or D of one Q tile
  // Buffer and parity of staged tile number `use` (the MMA side waits dq_empty with phase ^ 1).
  __device__ static constexpr int dq_buf(int use) { return kDqBufs == 2 ? use & 1 : 0; }
  __device__ static constexpr uint32_t dq_phase(int use) { return kDqBufs == 2 ? (use >> 1) & 1 : use & 1; }
  static constexpr uint32_t kKOff = 0;
  static constexpr uint32_t kVOff = kKOff + kKVBytes;
  static constexpr uint32_t kQOff = kVOff + kKVBytes;       // [2]
  static constexpr uint32_t kdOOff = kQOff + 2 * kQBytes;   // [kDoStages]
  static constexpr uint32_t kDsOff = kdOOff + kDoStages * kQBytes;  // [kDsBufs]
  static constexpr uint32_t kDqOff = kDsOff + kDsBufs * kDsBytes; // [kDqBufs] fp32, fragment order
  static constexpr uint32_t kLseOff = kDqOff + kDqBufs * kDqBytes;  // [2]
  static constexpr uint32_t kDsumOff = kLseOff + 2 * kVecBytes;  // [2]
  static constexpr uint32_t kTotal = kDsumOff + 2 * kVecBytes;
  static constexpr size_t kDynamicBytes = kTotal + sm90::kSwizzleAtomBytes;  // alignment slack
  // Bytes one Q/dO stage delivers (whole TMA boxes; zero-filled rows past seqlen count).
  static constexpr uint32_t kStepTx = 2 * kQBytes + 2 * kVecBytes;
  static constexpr uint32_t kQTx = kQBytes + 2 * kVecBytes;  // kDq2: Q, LSE, D on qdo_full; dO on do_full
  // Q and dO of stage st, the dS buffer of step `use` (its index, its offset).
  __device__ static constexpr uint32_t q_off(int st) { return kQOff + st * kQBytes; }
  __device__ static constexpr uint32_t do_off(int st) { return kdOOff + (kDoStages == 2 ? st : 0) * kQBytes; }
  __device__ static constexpr int ds_buf(int use) { return kDsBufs == 2 ? use & 1 : 0; }
  __device__ static constexpr uint32_t ds_off(int use) { return kDsOff + ds_buf(use) * kDsBytes; }
  static_assert(kKVBytes % 1024 == 0 && kQBytes % 1024 == 0 && kDsBytes % 1024 == 0 && kDqBytes % 1024 == 0 &&
                    sm90::subtile_bytes(BM) % 1024 == 0,
                "sub-tile bases stay 1024-byte aligned");
  static_assert(kVecBytes % 16 == 0, "LSE / D vectors: 16-byte bulk copies");
  static_assert(kDynamicBytes <= 232448 - 256, "fits the 227 KiB opt-in limit with the static barriers");
};

// What the MMA warpgroups tell the writer about one staged dQ tile (same layout as the sm80
// kernel's: two 32-byte slots per CTA in the global mailbox).
struct DqMeta {
  int b, hq, i, j, task;  // task >= 0: a staged tile; kMetaExit: no tile, the writer exits
  int rank;               // the semaphore value to wait for (computed by MMA warp 0: the writer
                          // warpgroup runs with 40 registers, too few for the rank loop)
  int pad[2];
};
constexpr int kMetaExit = -1;
static_assert(sizeof(DqMeta) == kDqMailboxBytesPerCta / 2, "mailbox slot size");

// One published task: its number and, computed by the taker, its (b * heads_kv + kv head, slot)
// (the head-block mapping divides by run-time values; in the 40-register loader it spilled).
// The last-wave split (ScheduleModel::split): task is the UNIT number (a whole task or a piece;
// kNoUnit: none left, the readers exit), head / slot its task's, and [t0, t1) the steps of side 0
// it visits (a whole task: t0 0 and t1 kWholeTaskSteps, i.e. every step of every side). (The end
// as a marker, not as task >= num_units: the 40-register loader spilled num_units kept live.)
struct TaskRef {
  int task, head, slot, t0, t1;
};
constexpr int kWholeTaskSteps = 1 << 30;
constexpr int kNoUnit = -1;

// mbarriers (static smem). Parity of use u of a ring slot: waiter u & 1; the refiller waits
// (u & 1) ^ 1 on the matching "empty" barrier (its first pass falls through).
struct Sm90BwdBars {
  uint64_t task_full[2];   // count 1: producer published s_task[slot]
  uint64_t task_empty[2];  // every MMA thread and the loader have read it
  uint64_t kv_full;        // count 1 + tx: K and V of a side landed
  uint64_t kv_empty;       // every MMA thread is done with K/V of the side
  uint64_t kv_near_end;    // count 1 (MMA thread 0): the task's last side reached step max(0, steps - take_ahead)
  uint64_t qdo_full[2];    // count 1 + tx: Q, dO, LSE, D of a step landed
  uint64_t qdo_empty[2];   // every MMA thread is done with the stage
  uint64_t dq_full[2];     // every MMA thread: dQ partial staged (and the mailbox slot written)
  uint64_t dq_empty[2];    // count 1: the writer's reduce of the buffer has COMPLETED
  // kLag (DRAFT, DASH_BWD_LAGGED_DQ=1) only: the dS^T buffers, in place of named barrier 1.
  uint64_t ds_full[2];     // every MMA thread: its dS^T half of the buffer is stored and fenced
  uint64_t ds_empty[2];    // every MMA thread: its dQ GEMM that read the buffer has retired
                           // (kDq2: ds_empty[0], the single dS buffer, without ds_full)
  uint64_t do_full;        // kDq2 only: count 1 + tx: dO of a step landed
  uint64_t do_empty;       // kDq2 only: every MMA thread: the step's dV GEMM (dO's last reader) retired
};

// Two values rounded to T and packed into one 32-bit word (Vec2<T>, low half first).
template <typename T>
__device__ __forceinline__ uint32_t pack_vec2(float a, float b) {
  const typename Vec2<T>::type v = Vec2<T>::make(a, b);
  return *reinterpret_cast<const uint32_t*>(&v);
}
// 4 x 4 transpose of 32-bit words across the four lanes of a quad (lane q = lane % 4): in, lane q
// holds row q; out, column q (a[m] = lane m's a[q] on entry). Two butterfly rounds: the off-diagonal
// 2 x 2 blocks swap (xor 2), then each block's off-diagonal words (xor 1). Every lane of the warp
// must call it (full-mask shuffles).
__device__ __forceinline__ void quad_transpose(uint32_t (&a)[4], int q) {
  {
    const bool hi = (q & 2) != 0;
    uint32_t s0 = hi ? a[0] : a[2], s1 = hi ? a[1] : a[3];
    s0 = __shfl_xor_sync(0xffffffffu, s0, 2);
    s1 = __shfl_xor_sync(0xffffffffu, s1, 2);
    if (hi) { a[0] = s0; a[1] = s1; } else { a[2] = s0; a[3] = s1; }
  }
  {
    const bool odd = (q & 1) != 0;
    uint32_t s0 = odd ? a[0] : a[1], s1 = odd ? a[2] : a[3];
    s0 = __shfl_xor_sync(0xffffffffu, s0, 1);
    s1 = __shfl_xor_sync(0xffffffffu, s1, 1);
    if (odd) { a[0] = s0; a[2] = s1; } else { a[1] = s0; a[3] = s1; }
  }
}

// The semaphore of dQ tile (batch b, query head hq, Q tile i) in p.dq_sem: for the writers and the
// postprocess.
__device__ __forceinline__ int64_t dq_sem_index(const ScheduleModel& M, int b, int hq, int i) {
  return ((int64_t)b * M.p.heads_q + hq) * M.m + i;
}

// ---- postprocess for the sm90 staging order --------------------------------------------------
// p.pdl: the postprocess is the main kernel's programmatic dependent and may start before that
// kernel ends: it waits for the whole grid (cudaGridDependencySynchronize) before it reads dq_accum.
// (The polling postprocess, attn_bwd_sm90_postprocess_poll below, waits per tile instead.)
__device__ __forceinline__ void postprocess_wait(const BwdKernelParams& p) {
  if (p.pdl) cudaGridDependencySynchronize();
}
// The staged dQ chunk (one float4 of dq_accum, in a tile's staging order) this thread converts:
// thread blockIdx.x * 256 + threadIdx.x of query head blockIdx.y, batch blockIdx.z; `tile` is the Q
// tile (bm rows x D columns), `c` the chunk within it. False past the last Q tile.
__device__ __forceinline__ bool staged_dq_chunk(const BwdKernelParams& p, int D, int bm, int* tile, int* c,
                                                float4* x) {
  const int chunks = bm * D / 4;
  const int chunk = blockIdx.x * 256 + threadIdx.x;
  const int h = blockIdx.y, b = blockIdx.z;
  const TileProblem& tp = p.model.p;
  *tile = chunk / chunks;
  *c = chunk % chunks;
  if (*tile >= tp.m_tiles()) return false;
  // p.dq_first_store: a tile no partial reached was never written (its semaphore is still 0).
  if (p.dq_first_store && p.dq_sem[dq_sem_index(p.model, b, h, *tile)] == 0) {
    *x = make_float4(0.f, 0.f, 0.f, 0.f);
    return true;
  }
  *x = __ldcg(reinterpret_cast<const float4*>(p.dq_accum + ((int64_t)b * tp.heads_q + h) * p.seqlen_q_pad * D +
                                              (int64_t)*tile * bm * D + 4 * *c));
  return true;
}
// dq_accum tile = [WG w (D/64)][k (8)][thread t (128)] float4: acc[4k..4k+3] of MMA thread t of
// warpgroup w, whose accumulator covers dQ columns 64w..64w+63 (fragment.cuh layout):
// (r, c), (r, c+1), (r+8, c), (r+8, c+1) with r = 16(t/32) + (t%32)/4, c = 64w + 8k + 2(t%4).
// hdim 64: one column chunk, w = 0, whichever warpgroup computed the tile.
// Chunk c of Q tile `tile` of (batch b, query head h), staged value x: dQ = scale * x to its elements.
template <typename T>
__device__ __forceinline__ void store_dq_chunk64(const BwdKernelParams& p, int b, int h, int tile, int c, float4 x) {
  const TileProblem& tp = p.model.p;
  const int w = c / (8 * 128), k = (c / 128) % 8, t = c % 128;
  const int row0 = tile * kBM + 16 * (t / 32) + (t % 32) / 4;
  const int col = 64 * w + 8 * k + 2 * (t % 4);
  using V2 = typename Vec2<T>::type;
  T* dst = static_cast<T*>(p.dq.ptr) + b * p.dq.sb + h * p.dq.sh + col;
  if (row0 < tp.seqlen_q) *reinterpret_cast<V2*>(dst + row0 * p.dq.ss) = Vec2<T>::make(x.x * p.scale, x.y * p.scale);
  if (row0 + 8 < tp.seqlen_q)
    *reinterpret_cast<V2*>(dst + (row0 + 8) * p.dq.ss) = Vec2<T>::make(x.z * p.scale, x.w * p.scale);
}
template <typename T>
__global__ void __launch_bounds__(256) attn_bwd_postprocess_sm90(const BwdKernelParams p, int D) {
  postprocess_wait(p);
  int tile, c;
  float4 x;
  if (!staged_dq_chunk(p, D, kBM, &tile, &c, &x)) return;
  store_dq_chunk64<T>(p, blockIdx.z, blockIdx.y, tile, c, x);
}

// The 80-row tile's staging order: dQ^T fragments. dq_accum tile = [WG w (2)][n (10)][thread t (128)]
// float4: acc[4n..4n+3] of the dQ^T accumulator of warpgroup w (rows = hdim 64w.., columns = the
// tile's 80 query rows): (d, q), (d, q+1), (d+8, q), (d+8, q+1) with d = 64w + 16(t/32) + (t%32)/4,
// q = 8n + 2(t%4). Head_dim 64: one warpgroup block, w = 0, whichever warpgroup computed it.
// BM: 80, or 96 / 112 (head_dim 64): n runs to BM / 8.
template <typename T, int D, int BM>
__device__ __forceinline__ void store_dq_chunk_tall(const BwdKernelParams& p, int b, int h, int tile, int c, float4 x) {
  constexpr int kN = BM / 8;
  const TileProblem& tp = p.model.p;
  const int w = c / (kN * 128), n = (c / 128) % kN, t = c % 128;
  const int d = 64 * w + 16 * (t / 32) + (t % 32) / 4;
  const int q0 = tile * BM + 8 * n + 2 * (t % 4);
  T* dst = static_cast<T*>(p.dq.ptr) + b * p.dq.sb + h * p.dq.sh + d;
  if (q0 < tp.seqlen_q) {
    dst[(int64_t)q0 * p.dq.ss] = static_cast<T>(x.x * p.scale);
    dst[(int64_t)q0 * p.dq.ss + 8] = static_cast<T>(x.z * p.scale);
  }
  if (q0 + 1 < tp.seqlen_q) {
    dst[(int64_t)(q0 + 1) * p.dq.ss] = static_cast<T>(x.y * p.scale);
    dst[(int64_t)(q0 + 1) * p.dq.ss + 8] = static_cast<T>(x.w * p.scale);
  }
}
template <typename T, int D, int BM>
__global__ void __launch_bounds__(256) attn_bwd_postprocess_sm90_bm80(const BwdKernelParams p) {
  postprocess_wait(p);
  int tile, c;
  float4 x;
  if (!staged_dq_chunk(p, D, BM, &tile, &c, &x)) return;
  store_dq_chunk_tall<T, D, BM>(p, blockIdx.z, blockIdx.y, tile, c, x);
}

// The completion queue (p.dq_queue): slot = the writers' counter, then the tile's semaphore index + 1
// stored with release (0: not yet written).
__device__ __forceinline__ void dq_queue_push(int* queue, int sem_index) {
  const int slot = atomicAdd(queue + kDqQueuePush, 1);
  ptx::st_release_gpu(queue + kDqQueueSlots + slot, sem_index + 1);
}

// The polling postprocess (p.post_poll: with p.pdl, ordered schedules): one block per dQ tile (grid
// m_tiles x heads_q x batch), started while the main kernel still runs (on the SMs its finished
// CTAs leave). Thread 0 waits until the tile's semaphore equals the tile's chain length (every
// writer releases after its add has landed, ld.acquire.gpu here), the block meets (bar.sync orders
// the other threads' reads after that acquire), then each thread converts BM * D / 1024 chunks of
// the tile, every load (through L2) issued before the stores. A tile with chain length 0 (causal
// rows that see no key; with the first store never written) is written as 0, as the other
// postprocess does. No deadlock: the main kernel lets this grid launch only once every one of its
// CTAs runs (each triggers after its start), and those finish without waiting for this grid.
// With the completion queue (p.dq_queue) a block's tile is not its grid position: the first Z blocks
// (in linear block order) take the tiles no contribution reaches (chain length 0: the first z0 Q
// tiles of every (batch, query head), causal rows that see no key), the others one queue slot each,
// in the order they acquire the pop counter, and wait until a writer has filled it. Every tile
// with a contribution is appended exactly once (by its last contribution's writer), so the slots
// filled equal the blocks that pop; no deadlock, as above.
template <typename T, int D, int BM>
__global__ void __launch_bounds__(256) attn_bwd_sm90_postprocess_poll(const BwdKernelParams p) {
  constexpr int kPer = BM * D / 4 / 256;
  static_assert(kPer * 256 * 4 == BM * D, "a tile is a whole number of 256-chunk rounds");
  const TileProblem& tp = p.model.p;
  int tile = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const bool queue = p.dq_queue != nullptr && !p.queue_diag;  // (p.queue_diag: the writers' appends only)
  if (queue) {
    __shared__ int s_index;
    if (threadIdx.x == 0) {
      const int m = tp.m_tiles();
      int z0 = 0;
      while (z0 < m && p.model.chain_length(z0) == 0) ++z0;
      const int64_t beta = ((int64_t)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
      const int64_t zero_tiles = (int64_t)tp.batch * tp.heads_q * z0;
      int index;
      if (beta < zero_tiles) {
        index = static_cast<int>((beta / z0) * m + beta % z0);
      } else {
        const int slot = atomicAdd(p.dq_queue + kDqQueuePop, 1);
        const int* q = p.dq_queue + kDqQueueSlots + slot;
        int v;
        while ((v = ptx::ld_acquire_gpu(q)) == 0) __nanosleep(128);
        index = v - 1;
      }
      s_index = index;
    }
    __syncthreads();  // (orders the other threads' reads after thread 0's acquire)
    const int index = s_index, m = tp.m_tiles();
    tile = index % m;
    h = (index / m) % tp.heads_q;
    b = index / m / tp.heads_q;
  }
  const int need = p.model.chain_length(tile);
  if (!queue) {
    if (threadIdx.x == 0) {
      const int* sem = p.dq_sem + dq_sem_index(p.model, b, h, tile);
      while (ptx::ld_acquire_gpu(sem) != need) __nanosleep(128);
    }
    __syncthreads();
  }
  const float4* src =
      reinterpret_cast<const float4*>(p.dq_accum + ((int64_t)b * tp.heads_q + h) * p.seqlen_q_pad * D + (int64_t)tile * BM * D);
  float4 x[kPer];
#pragma unroll
  for (int k = 0; k < kPer; ++k) x[k] = need == 0 ? make_float4(0.f, 0.f, 0.f, 0.f) : __ldcg(src + k * 256 + threadIdx.x);
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    if constexpr (BM == kBM)
      store_dq_chunk64<T>(p, b, h, tile, k * 256 + threadIdx.x, x[k]);
    else
      store_dq_chunk_tall<T, D, BM>(p, b, h, tile, k * 256 + threadIdx.x, x[k]);
  }
}

// NOTES: the schedule model with the tile sizes as compile-time constants. ScheduleModel's
// q_tile_begin / kv_tile_end divide 64-bit values by block_m / block_n; with run-time tile sizes
// that is a call to the 64-bit division routine, whose register needs made both the 40-register
// producer and the MMA code spill. The launcher checks p.model.p.block_{m,n} == kBM / kBN.
template <int BM>
__device__ __forceinline__ ScheduleModel fixed_tiles(const ScheduleModel& m) {
  ScheduleModel r = m;
  r.p.block_m = BM;
  r.p.block_n = kBN;
  return r;
}

// %laneid read where it is needed (volatile: not CSE'd with an early threadIdx-derived value,
// which ptxas otherwise keeps live across the role split and spills).
__device__ __forceinline__ int lane_id() {
  int l;
  asm volatile("mov.u32 %0, %%laneid;\n" : "=r"(l));
  return l;
}
// The same for %tid.x and %nctaid.x (kLean: the 80-row MMA code kept a `warp == 0` predicate,
// and the 24-register taker gridDim.x, live across their loops and spilled them).
__device__ __forceinline__ int tid_x() {
  int t;
  asm volatile("mov.u32 %0, %%tid.x;\n" : "=r"(t));
  return t;
}
__device__ __forceinline__ int nctaid_x() {
  int n;
  asm volatile("mov.u32 %0, %%nctaid.x;\n" : "=r"(n));
  return n;
}

// The dQ tile a staged partial (batch b, query head hq, Q tile i) is added to: its fp32
// accumulator tile (its semaphore: dq_sem_index). One definition for both writers.
template <int D, int BM>
__device__ __forceinline__ float* dq_accum_tile(const BwdKernelParams& p, const ScheduleModel& M, int b, int hq, int i) {
  return p.dq_accum + ((int64_t)b * M.p.heads_q + hq) * p.seqlen_q_pad * D + (int64_t)i * Sm90BwdSmem<D, BM>::kDqFloats;
}

// ---- the dQ writers (warp 9, lane 0; warp 11, lane 0 too with p.dual_writer) -------------------
// One staged dQ partial to its dq_accum tile: added (bulk reduce-add), or, for the first of its
// ordered chain with p.dq_first_store (rank 0), stored (bulk copy: dq_accum was not zeroed). Then
// the bulk group is committed.
__device__ __forceinline__ void issue_dq_bulk(const BwdKernelParams& p, float* dst, const float* src, uint32_t bytes,
                                              int rank) {
  if (p.dq_first_store && rank == 0)
    cuda::ptx::cp_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, dst, src, bytes);
  else
    cuda::ptx::cp_reduce_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, cuda::ptx::op_add, dst, src,
                                    bytes);
  cuda::ptx::cp_async_bulk_commit_group();
}
// Handles the staged tiles q = first, first + stride, ... (stride 1: every tile, buffer q % 2;
// p.dual_writer (default): two writers, stride 2, one per staging buffer).
// NOTES: one thread, like the taker and the loader. Until 2026-11-30 (seventh session) all 32
// lanes waited on dq_full and lane 0 alone arrived on dq_empty before a __syncwarp. With two
// writers the next use of a writer's buffer needs only that arrival, so a lane still inside
// its try_wait loop (lanes of a warp can leave it separately) could see dq_full complete two
// phases, wait on the parity of a phase that needs lane 0, and lane 0 waited for it at the
// __syncwarp: a deadlock. Seen as a hang of the default path (two writers) in the test suite
// under concurrent load, and in 3 of 4 stress processes with take-ahead. A barrier's waiters
// must be threads whose own arrivals gate its next phase, or one thread.
// The split rank (kSplit: shift / symmetric shift, whose dQ rank is a loop over the chain; the
// variant bwd_sm90_split_rank picks): the MMA warps
// that stage a tile each add their warp's partial count to s_rank[buf] after the dq_empty wait and
// before their dq_full arrival (which releases it); the writer takes the sum after its dq_full wait
// and clears the slot before its dq_empty arrival (the mailbox's rank is not read). (Computed by one
// warp, the loop delayed that warp's warpgroup every step and the other one waited for it at the
// dS barrier: 12% of the 80-row shift kernel's stall samples at 8k, docs/perf.md v17.)
// kWRank: which closed-form rank the dQ writer computes (0: none, the mailbox's / split rank).
constexpr int kWRankShift = 1;  // full-mask shift (ScheduleModel::shift_rank)
constexpr int kWRankSym = 2;    // causal symmetric shift (ScheduleModel::symshift_rank)
__device__ __forceinline__ int take_rank_part(int* slot) {
  const int r = *reinterpret_cast<volatile int*>(slot);
  if (r != 0) *reinterpret_cast<volatile int*>(slot) = 0;
  return r;
}

// One staging buffer (BM 80 at head_dim 128): one writer, stride 1, and always the early release (the buffer back
// at `.read`, so that the MMA warps can stage the next tile while this one's adds complete).
template <int D, int BM, bool kSplit, int kWRank, bool kDq2 = false>
__device__ __forceinline__ void dq_writer(const BwdKernelParams& p, uint8_t* smem, Sm90BwdBars& bars,
                                          int* s_reduced, int* s_rank, const DqMeta* mailbox, int first, int stride) {
  using L = Sm90BwdSmem<D, BM, kDq2>;
  const ScheduleModel M = fixed_tiles<BM>(p.model);
  const bool ordered = M.deterministic() && !p.debug_unordered;
  const bool early = L::kDqBufs == 1 || p.writer_early_release != 0;
  float* sDq = reinterpret_cast<float*>(smem + L::kDqOff);
#pragma unroll 1
  for (int q = first;; q += stride) {
    const int buf = L::dq_buf(q);
    sm90::mbar_wait(&bars.dq_full[buf], L::dq_phase(q));
#ifdef DASH_BWD_TRACE
    const uint32_t t_staged = bwd_trace::now32();
#endif
    const volatile DqMeta* vm = mailbox + buf;
    const int task = vm->task;
    if (task == kMetaExit) {
      // Early release, unordered: the last tiles' adds land before the writer (and the CTA) leaves.
      if (early) cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<0>{});
      break;
    }
    const int mb = vm->b, mhq = vm->hq, mi = vm->i, mj = vm->j;
    const int rank = kSplit                ? take_rank_part(s_rank + buf)
                     : kWRank == kWRankShift ? M.shift_rank(mi, mj)
                     : kWRank == kWRankSym   ? M.symshift_rank(mi, mj)
                                             : vm->rank;
    int* sem = p.dq_sem + dq_sem_index(M, mb, mhq, mi);
    float* dst = dq_accum_tile<D, BM>(p, M, mb, mhq, mi);
    if (ordered) {
      ptx::wait_equal(sem, rank, task, mi, mj);
      // The acquired predecessor's adds must be ordered before our async-proxy adds.
      cuda::ptx::fence_proxy_async(cuda::ptx::space_global);
    }
#ifdef DASH_BWD_TRACE
    const uint32_t t_acquired = bwd_trace::now32();
#endif
    if (!p.debug_no_reduce) issue_dq_bulk(p, dst, sDq + buf * L::kDqFloats, L::kDqBytes, rank);  // (diagnostic switch)
    if (early) {  // DRAFT (p.writer_early_release): the buffer back once the bulk copy has read it
      cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>{});
      cuda::ptx::mbarrier_arrive(&bars.dq_empty[buf]);
    }
    // Completion, not `.read`: the adds must have landed before the semaphore moves (dash-spec 4).
    // (Unordered with p.post_poll, DASH_BWD_ATOMIC_POLL: the semaphore counts landed adds for the polling postprocess.)
    if (ordered || !early || p.post_poll) cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<0>{});
    int append = -1;  // the completed tile's semaphore index, for the completion queue
    if (!ordered && p.post_poll) {
      // Any order: the add that makes the count the chain length is the tile's last. acq_rel, so that the block
      // that takes the tile from the queue (its slot stored with release after this) sees every writer's adds.
      cuda::ptx::fence_proxy_async(cuda::ptx::space_global);
      const int done = ptx::atom_acq_rel_gpu_add(sem, 1) + 1;
      if (p.dq_queue != nullptr && done == M.chain_length(mi)) dq_queue_push(p.dq_queue, static_cast<int>(sem - p.dq_sem));
    }
    if (ordered) {
      cuda::ptx::fence_proxy_async(cuda::ptx::space_global);
      ptx::red_release_gpu_add(sem, 1);
#ifdef DASH_BWD_TRACE
      bwd_trace::chain_put(static_cast<int>(sem - p.dq_sem), rank, t_staged, t_acquired, bwd_trace::now());
#endif
      // The tile's last contribution: to the completion queue (after the release above, so that a
      // block acquiring the slot sees every add of the tile). DRAFT (p.queue_late_append,
      // DASH_BWD_QUEUE_LATE_APPEND=1): after the staging buffer's release below instead, so that the
      // append's two L2 round trips are not between the MMA warps and their buffer.
      if (p.dq_queue != nullptr && rank + 1 == M.chain_length(mi)) append = static_cast<int>(sem - p.dq_sem);
      if (append >= 0 && !p.queue_late_append) dq_queue_push(p.dq_queue, append);
    }
    atomicAdd(s_reduced, 1);  // tiles done, for the taker's drain (an atomic: racecheck-clean)
    if (!early) cuda::ptx::mbarrier_arrive(&bars.dq_empty[buf]);
    if (append >= 0 && p.queue_late_append) dq_queue_push(p.dq_queue, append);
  }
}

// ---- the overlapped dQ writer (warp 9, lane 0; p.writer_overlap) ---------------------------------
// Same adds, same order per dQ tile, so the same bits as dq_writer. The difference: the
// completion wait of tile q (before its semaphore release) overlaps the issue of tile q + 1,
// so one writer keeps two bulk reduces in flight. Deadlock rule: never block while a release
// is owed. Before any blocking wait (the next staged partial, the next tile's semaphore) the
// owed tile is finished unless a non-blocking probe shows the wait would fall through.
template <int D, bool kSplit, int kWRank>
__device__ __forceinline__ void dq_writer_overlap(const BwdKernelParams& p, uint8_t* smem, Sm90BwdBars& bars,
                                                  int* s_reduced, int* s_rank, const DqMeta* mailbox) {
  using L = Sm90BwdSmem<D>;
  const ScheduleModel M = fixed_tiles<kBM>(p.model);
  const bool ordered = M.deterministic() && !p.debug_unordered;
  float* sDq = reinterpret_cast<float*>(smem + L::kDqOff);
  int owed_sem = -1;  // semaphore index of the issued tile whose completion + release is owed (q - 1); -1: none
  // Finish the owed tile: its adds completed (all but `keep` newest groups), release, progress.
  auto finish_owed = [&](int q_owed, bool keep_newest) {
    if (keep_newest) {
      cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<1>{});
    } else {
      cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<0>{});
    }
    if (ordered) {
      cuda::ptx::fence_proxy_async(cuda::ptx::space_global);
      ptx::red_release_gpu_add(p.dq_sem + owed_sem, 1);
    }
    atomicExch(s_reduced, q_owed + 1);
    cuda::ptx::mbarrier_arrive(&bars.dq_empty[q_owed & 1]);
    owed_sem = -1;
  };
#pragma unroll 1
  for (int q = 0;; ++q) {
    const int buf = q & 1;
    const uint32_t phase = (q >> 1) & 1;
    if (owed_sem >= 0 && !cuda::ptx::mbarrier_test_wait_parity(&bars.dq_full[buf], phase)) finish_owed(q - 1, false);
    sm90::mbar_wait(&bars.dq_full[buf], phase);
    const volatile DqMeta* vm = mailbox + buf;
    const int task = vm->task;
    if (task == kMetaExit) {
      if (owed_sem >= 0) finish_owed(q - 1, false);
      break;
    }
    const int mb = vm->b, mhq = vm->hq, mi = vm->i, mj = vm->j;
    const int rank = kSplit                ? take_rank_part(s_rank + buf)
                     : kWRank == kWRankShift ? M.shift_rank(mi, mj)
                     : kWRank == kWRankSym   ? M.symshift_rank(mi, mj)
                                             : vm->rank;
    // Kept as an int (one register fewer in the 40-register warp): < 2^31, one int each in the workspace.
    const int sem_idx = static_cast<int>(dq_sem_index(M, mb, mhq, mi));
    int* sem = p.dq_sem + sem_idx;
    float* dst = dq_accum_tile<D, kBM>(p, M, mb, mhq, mi);
    if (ordered) {
      if (owed_sem >= 0 && ptx::ld_acquire_gpu(sem) != rank) finish_owed(q - 1, false);
      ptx::wait_equal(sem, rank, task, mi, mj);
      cuda::ptx::fence_proxy_async(cuda::ptx::space_global);
    }
    if (!p.debug_no_reduce) issue_dq_bulk(p, dst, sDq + buf * L::kDqFloats, L::kDqBytes, rank);
    // Completion of the previous tile, not `.read` (dash-spec 4); this tile's group stays in flight.
    if (owed_sem >= 0) finish_owed(q - 1, !p.debug_no_reduce);
    owed_sem = sem_idx;
  }
}

// Whether the task taker takes tasks late (see task_taker), and whether it then waits on
// kv_near_end (take-ahead): one definition for the taker and the MMA warps, so that kv_near_end
// is arrived on exactly when every one of its phases is waited on.
// NOTES: a 32-bit shared address that the compiler must treat as unknown at this point, so the
// descriptors derived from it are recomputed next to each wgmma instead of being hoisted out of
// the step loop and kept live (they spilled: 16 descriptors per GEMM chain).
__device__ __forceinline__ uint32_t opaque(uint32_t x) {
  asm volatile("" : "+r"(x));
  return x;
}
__device__ __forceinline__ int opaque_int(int x) { return static_cast<int>(opaque(static_cast<uint32_t>(x))); }
__device__ __forceinline__ int64_t opaque_i64(int64_t x) {
  const uint64_t u = static_cast<uint64_t>(x);
  return static_cast<int64_t>((static_cast<uint64_t>(opaque(static_cast<uint32_t>(u >> 32))) << 32) |
                              opaque(static_cast<uint32_t>(u)));
}
// The model with its run-time fields opaque (read here, in the loop that calls it): the 24-register
// taker then recomputes what it derives from them (task counts, tile counts, the pieces' bounds)
// where it is used instead of keeping it live across its loop, where it spilled.
__device__ __forceinline__ ScheduleModel opaque_model(const ScheduleModel& m) {
  ScheduleModel r = m;
  r.p.batch = opaque_int(m.p.batch);
  r.p.heads_q = opaque_int(m.p.heads_q);
  r.p.heads_kv = opaque_int(m.p.heads_kv);
  r.p.seqlen_q = opaque_int(m.p.seqlen_q);
  r.p.seqlen_k = opaque_int(m.p.seqlen_k);
  r.n = opaque_int(m.n);
  r.m = opaque_int(m.m);
  r.tasks_per_head = opaque_int(m.tasks_per_head);
  r.head_block = opaque_int(m.head_block);
  r.split_tasks = opaque_int(m.split_tasks);
  r.split_pieces = opaque_int(m.split_pieces);
  return r;
}

// (With p.group_take the grouped schedules take late too: see task_taker's group take.)
__device__ __forceinline__ bool takes_late(const BwdKernelParams& p, const ScheduleModel& M) {
  const bool dynamic = p.dispatch == Dispatch::kDynamic;
  return dynamic && (M.min_coresident() <= 1 || p.group_take != 0) && p.take_late != 0;
}
__device__ __forceinline__ bool takes_ahead(const BwdKernelParams& p, const ScheduleModel& M) {
  return takes_late(p, M) && p.take_ahead > 0;
}

// ---- the task taker (warp 10, lane 0) -----------------------------------------------------------
// Takes tasks (atomic counter or static stride) and publishes them in a 2-slot ring read by the
// loader and the MMA warps. A warp of its own: the 40-register producer warps cannot hold the
// taker's and the loader's state together without spilling.
// NOTES: BM must be the kernel's (the model's Q tile count, steps per task and co-residency
// follow it); with the 64-row model in the 80-row kernel (bfda258) the drain rule counted tiles
// that never came and the taker's and the MMA warps' take-late rules disagreed: hangs.
template <int BM, bool kLean>
__device__ __forceinline__ void task_taker(const BwdKernelParams& p, Sm90BwdBars& bars, TaskRef* s_task,
                                           int* s_reduced) {
  const ScheduleModel M = fixed_tiles<BM>(p.model);
  const bool dynamic = p.dispatch == Dispatch::kDynamic;
  const bool drain = dynamic && M.min_coresident() > 1;
  // Late taking (p.take_late, default; DASH_BWD_TAKE_LATE=0 off): group-width-1 deterministic schedules wait for
  // lower tasks only, so taking a task early is deadlock-free, but a task taken up to two tasks
  // ahead of its start holds up every later task of its chain (spt, ascending, descending: their
  // successors wait for it while this CTA still works on its previous task). With take_late the
  // next task is taken once the MMA warps have finished the last side of the previous one
  // (kv_empty's phase of that side), as in the sm80 kernel.
  // Group take (p.group_take): grouped schedules take late as well (late && drain), and the drain
  // is skipped when the task counter has reached the end of the last taken task's group (below).
  const bool late = takes_late(p, M);  // = dynamic && (!drain || group_take) && p.take_late (host: atomic too by default)
  // The loop state in shared memory (volatile; one thread), as the 24-register loader keeps its
  // own (producer_lean): with the pieces' mapping (the last-wave split) the counters kept live
  // spilled at 24 registers.
  __shared__ int s_taker[5];
  volatile int* state = s_taker;
  state[0] = 0;  // it: the ring index
  state[1] = 0;  // tiles published (the drain rule)
  state[2] = 0;  // sides published
  state[3] = 0;  // units published
  state[4] = INT_MAX;  // the group take (drain && late): group_end_task of the last task published; else INT_MAX
#pragma unroll 1
  for (;;) {
    const int it = state[0];
    const int tiles_published = state[1], sides_published = state[2], tasks_published = state[3];
    // kv_empty completes one phase per side the MMA warps finish; phase sides_published - 1 is
    // the last side published. It cannot complete a later phase meanwhile: that needs a side of a
    // task not yet published.
    // With p.take_ahead > 0 (default 1) the wait is on kv_near_end instead: the last published side
    // has reached its step max(0, steps - take_ahead), so the next task's atomicAdd and K/V load
    // overlap that side's last steps. Same parity argument (one phase per side, none before the
    // side is published).
    // NOTES: kv_near_end completes one phase per TASK (arrived on in the task's last side only):
    // counted per side, as before 2026-11-30's fifth session, a two-sided task (symmetric shift
    // with one task per head, group width 1: seqlen_k <= 256) completed two phases, the parity
    // wait on the second passed while the first was pending, and synccheck reported the phase
    // nobody waited on ("Missing wait", docs/perf.md v6). The kv_empty wait keeps that aliasing
    // for such tasks (it can only take the next task early, which is deadlock-free; no phase
    // goes unwaited there: the loader waits on every kv_empty phase).
    if (late && tasks_published > 0) {
      if (takes_ahead(p, M))
        sm90::mbar_wait(&bars.kv_near_end, (tasks_published - 1) & 1);
      else
        sm90::mbar_wait(&bars.kv_empty, (sides_published - 1) & 1);
    }
    // NOTES: the drain rule (attn_bwd_sm80.cu): the next task may belong to the same group and
    // the previous task's last reduce may wait for its early contributions, which would queue
    // behind that reduce in this CTA's writer. So take no task until the writer has finished
    // every tile of every task taken so far (s_reduced counts the writer's completed tiles).
    // The group take (late && drain): not needed once the counter has reached the end of the last
    // taken task's group (the counter only grows, so the next atomicAdd returns a task of a higher
    // group or another head; every task this CTA still owes reduces of is in that group or a lower
    // one: docs/schedules.md "Why no schedule can deadlock"). Checked after the late wait, so that
    // the counter has moved on as far as it can.
    const int group_end = state[4];
    if (drain && tiles_published > 0 && !(group_end != INT_MAX && atomicAdd(p.task_counter, 0) >= group_end)) {
#ifdef DASH_DEBUG_WAITS
      ptx::WaitWatch watch;
#endif
      while (atomicAdd(s_reduced, 0) < tiles_published) {
        __nanosleep(64);
#ifdef DASH_DEBUG_WAITS
        if (watch.expired()) {
          printf("dash-attn: taker drain timed out: block %d tiles reduced %d of %d\n", blockIdx.x,
                 atomicAdd(s_reduced, 0), tiles_published);
          ptx::trap_after_reports();
        }
#endif
      }
    }
    const int unit = dynamic ? atomicAdd(p.task_counter, 1) : blockIdx.x + it * (kLean ? nctaid_x() : gridDim.x);
    const int tslot = it & 1;
    sm90::mbar_wait(&bars.task_empty[tslot], ((it >> 1) & 1) ^ 1);
    // (unit, head, slot, steps): the division-heavy mapping (head blocks, pieces; schedule.h)
    // computed once here, not in the 40-register loader, where it spilled. Each field stored as
    // soon as it is known (volatile, in order: at 24 registers the fields kept live spilled).
    volatile TaskRef* out = s_task + tslot;
    const ScheduleModel M = fixed_tiles<BM>(opaque_model(p.model));  // (shadows the loop-invariant one)
    const bool have = unit < M.num_units();
    out->task = have ? unit : kNoUnit;
    const int task = have ? M.unit_task(unit) : 0;
    const int slot = M.task_slot(task);
    out->slot = slot;
    out->head = M.task_head(task);
    out->t0 = 0;
    out->t1 = kWholeTaskSteps;
    if (have && unit >= M.first_split_task() && M.split()) {  // a piece (full masks: m steps per side)
      const int piece = M.unit_piece(unit);
      out->t0 = M.piece_begin(piece, M.m);
      out->t1 = M.piece_begin(piece + 1, M.m);
    }
    cuda::ptx::mbarrier_arrive(&bars.task_full[tslot]);  // release: orders the s_task stores
    if (!have) break;
    state[0] = it + 1;
    if (drain) state[1] = tiles_published + M.task_steps(slot);  // (never with a split: group width 1)
    if (drain && late) state[4] = M.group_end_task(task);
    state[2] = state[2] + M.num_sides(slot);
    state[3] = state[3] + 1;
  }
}

// Reads the task the taker published in ring slot it % 2 and frees the slot (the loader and
// every MMA thread read each one: task_empty counts kMmaArrivals + 1).
// wait_published_task waits for it and returns the ring slot without freeing it (the MMA warps of the
// split kernels free it at side 0's top, release_published_task).
__device__ __forceinline__ const TaskRef* wait_published_task(Sm90BwdBars& bars, const TaskRef* s_task, int it) {
  sm90::mbar_wait(&bars.task_full[it & 1], (it >> 1) & 1);
  return s_task + (it & 1);
}
__device__ __forceinline__ void release_published_task(Sm90BwdBars& bars, int it) {
  cuda::ptx::mbarrier_arrive(&bars.task_empty[it & 1]);
}
__device__ __forceinline__ TaskRef read_published_task(Sm90BwdBars& bars, const TaskRef* s_task, int it) {
  const TaskRef tr = *wait_published_task(bars, s_task, it);
  release_published_task(bars, it);
  return tr;
}

// ---- the loader (warp 8, lane 0) -----------------------------------------------------------------
// The TMA issue of one side's K and V (KV tile j of KV head hk, batch b) on kv_full, and of one
// step's Q, dO (Q tile i of query head hq), LSE and D (at the offset vec_of() returns, called after
// the tile loads are issued: computed earlier it stayed live across them and the 40-register loader
// spilled) on `full` into stage st. Shared by producer() and producer_lean(); the caller has waited
// for the buffers to be free.
template <int D, int BM, bool kDq2 = false>
__device__ __forceinline__ void load_kv(const CUtensorMap* tm_k, const CUtensorMap* tm_v, uint8_t* smem,
                                        Sm90BwdBars& bars, int j, int hk, int b) {
  using L = Sm90BwdSmem<D, BM, kDq2>;
  sm90::mbar_arrive_expect_tx(&bars.kv_full, 2 * L::kKVBytes);
#pragma unroll
  for (int c = 0; c < L::kChunks; ++c) {
    sm90::tma_load_4d(smem + L::kKOff + c * sm90::subtile_bytes(kBN), tm_k, 64 * c, j * kBN, hk, b, &bars.kv_full);
    sm90::tma_load_4d(smem + L::kVOff + c * sm90::subtile_bytes(kBN), tm_v, 64 * c, j * kBN, hk, b, &bars.kv_full);
  }
}
// kDq2: Q, LSE and D only on `full`; dO (one stage) by load_do on do_full.
template <int D, int BM, bool kDq2 = false, typename VecOf>
__device__ __forceinline__ void load_qdo(const CUtensorMap* tm_q, const CUtensorMap* tm_do, const BwdKernelParams& p,
                                         uint8_t* smem, uint64_t* full, int st, int i, int hq, int b, VecOf vec_of) {
  using L = Sm90BwdSmem<D, BM, kDq2>;
  sm90::mbar_arrive_expect_tx(full, kDq2 ? L::kQTx : L::kStepTx);
#pragma unroll
  for (int c = 0; c < L::kChunks; ++c) {
    sm90::tma_load_4d(smem + L::q_off(st) + c * sm90::subtile_bytes(BM), tm_q, 64 * c, i * BM, hq, b,
                      full);
    if constexpr (!kDq2)
      sm90::tma_load_4d(smem + L::do_off(st) + c * sm90::subtile_bytes(BM), tm_do, 64 * c, i * BM, hq,
                        b, full);
  }
  const int64_t vec = vec_of();
  const uint32_t vec_bytes = L::kVecBytes;  // (cp_async_bulk takes the size by reference)
  cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_global, smem + L::kLseOff + st * L::kVecBytes,
                           p.lse_log2 + vec, vec_bytes, full);
  cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_global, smem + L::kDsumOff + st * L::kVecBytes,
                           p.dsum + vec, vec_bytes, full);
}
// kDq2: dO of a step into its single stage, once the previous step's dV GEMM retired (do_empty).
template <int D, int BM>
__device__ __forceinline__ void load_do(const CUtensorMap* tm_do, uint8_t* smem, Sm90BwdBars& bars, int step_use, int i,
                                        int hq, int b) {
  using L = Sm90BwdSmem<D, BM, true>;
  sm90::mbar_wait(&bars.do_empty, (step_use & 1) ^ 1);
  sm90::mbar_arrive_expect_tx(&bars.do_full, L::kQBytes);
#pragma unroll
  for (int c = 0; c < L::kChunks; ++c)
    sm90::tma_load_4d(smem + L::kdOOff + c * sm90::subtile_bytes(BM), tm_do, 64 * c, i * BM, hq, b, &bars.do_full);
}
template <int D, int BM>
__device__ __forceinline__ void producer(const CUtensorMap* tm_q, const CUtensorMap* tm_k, const CUtensorMap* tm_v,
                                         const CUtensorMap* tm_do, const BwdKernelParams& p, uint8_t* smem,
                                         Sm90BwdBars& bars, const TaskRef* s_task) {
  const ScheduleModel M = fixed_tiles<BM>(p.model);
  const TileProblem& tp = M.p;
  const int G = tp.q_per_kv();
  ptx::prefetch_tensormap(tm_q);
  ptx::prefetch_tensormap(tm_k);
  ptx::prefetch_tensormap(tm_v);
  ptx::prefetch_tensormap(tm_do);
  int side_use = 0, step_use = 0;
  // The unit's step range, kept in shared memory (volatile: stored here, read at each side's top;
  // one thread): kept live across the side loop, it spilled at 40 registers.
  __shared__ int s_range[2];
  volatile int* range = s_range;
#pragma unroll 1
  for (int it = 0;; ++it) {
    const TaskRef tr = read_published_task(bars, s_task, it);
    const int task = tr.task, bh = tr.head, slot = tr.slot;
    if (task == kNoUnit) break;
    range[0] = tr.t0;
    range[1] = tr.t1;
    const int b = bh / tp.heads_kv, hk = bh % tp.heads_kv;
#pragma unroll 1
    for (int side = 0; side < M.num_sides(slot); ++side, ++side_use) {
      const int j = M.kv_tile(slot, side);
      sm90::mbar_wait(&bars.kv_empty, (side_use & 1) ^ 1);
      load_kv<D, BM>(tm_k, tm_v, smem, bars, j, hk, b);
      // Program order (schedule.h): for step, for query head of the group. A piece of a split
      // task: its steps [t0, t1) of side 0 (its only side).
      const int nsteps = min(range[1], M.num_steps(slot, side));
#pragma unroll 1
      for (int t = range[0]; t < nsteps; ++t) {
       const int i = M.visit(slot, side, t);
#pragma unroll 1
       for (int g = 0; g < G; ++g, ++step_use) {
        const int hq = hk * G + g;
        const int st = step_use & 1;
        sm90::mbar_wait(&bars.qdo_empty[st], ((step_use >> 1) & 1) ^ 1);
        load_qdo<D, BM>(tm_q, tm_do, p, smem, &bars.qdo_full[st], st, i, hq, b,
                        [&] { return ((int64_t)b * tp.heads_q + hq) * p.seqlen_q_pad + (int64_t)i * BM; });
       }
      }
    }
  }
}


// ---- the loader of the 24-register producer (kLean; warp 8, lane 0) -------------------------------
// The same loads, in the same order, on the same barriers as producer(). What differs is where
// its state lives: at 24 registers producer() kept about 17 values live across its loops (loop
// counters, the task's coordinates, schedule-model values hoisted out of the loops, e.g. the
// query heads per KV head, a division) and spilled 68 B. Here the loop state is in shared memory
// (volatile: read where used, written back at once; one thread, so no races) and every
// schedule-model value is recomputed from the kernel parameters where it is used (opaque_int:
// not hoisted). A step takes microseconds of MMA work, so the loader's extra shared-memory accesses
// (a few dozen per step) are noise.
struct LoaderState {
  int it, side_use, step_use;  // task ring index, K/V side uses, Q/dO stage uses
  int slot, b, hk, side, nsides, t, nsteps, i, g;
  int t0, t1;  // the unit's steps (TaskRef)
};
template <int D, int BM, bool kDq2 = false>
__device__ __forceinline__ void producer_lean(const CUtensorMap* tm_q, const CUtensorMap* tm_k, const CUtensorMap* tm_v,
                                              const CUtensorMap* tm_do, const BwdKernelParams& p, uint8_t* smem,
                                              Sm90BwdBars& bars, const TaskRef* s_task, volatile LoaderState* s) {
  ptx::prefetch_tensormap(tm_q);
  ptx::prefetch_tensormap(tm_k);
  ptx::prefetch_tensormap(tm_v);
  ptx::prefetch_tensormap(tm_do);
  s->it = 0;
  s->side_use = 0;
  s->step_use = 0;
#pragma unroll 1
  for (;;) {
    {
      const ScheduleModel M = fixed_tiles<BM>(p.model);
      const int it = s->it;
      const TaskRef tr = read_published_task(bars, s_task, it);
      s->it = it + 1;
      if (tr.task == kNoUnit) break;
      const int heads_kv = opaque_int(M.p.heads_kv);
      s->b = tr.head / heads_kv;
      s->hk = tr.head % heads_kv;
      s->slot = tr.slot;
      s->t0 = tr.t0;
      s->t1 = tr.t1;
      s->nsides = M.num_sides(tr.slot);
      s->side = 0;
    }
#pragma unroll 1
    for (; s->side < s->nsides; s->side = s->side + 1) {
      {
        const ScheduleModel M = fixed_tiles<BM>(p.model);
        const int side_use = s->side_use;
        s->side_use = side_use + 1;
        const int j = M.kv_tile(s->slot, s->side);
        s->nsteps = min(s->t1, M.num_steps(s->slot, s->side));
        sm90::mbar_wait(&bars.kv_empty, (side_use & 1) ^ 1);
        load_kv<D, BM, kDq2>(tm_k, tm_v, smem, bars, j, s->hk, s->b);
        s->t = s->t0;
      }
      // Program order (schedule.h): for step, for query head of the group.
#pragma unroll 1
      for (; s->t < s->nsteps; s->t = s->t + 1) {
        {
          const ScheduleModel M = fixed_tiles<BM>(p.model);
          s->i = M.visit(s->slot, s->side, s->t);
          s->g = 0;
        }
#pragma unroll 1
        for (;;) {
          const ScheduleModel M = fixed_tiles<BM>(p.model);
          const int G = opaque_int(M.p.heads_q) / opaque_int(M.p.heads_kv);
          const int g = s->g;
          if (g >= G) break;
          s->g = g + 1;
          const int step_use = s->step_use;
          s->step_use = step_use + 1;
          const int hq = s->hk * G + g, i = s->i, b = s->b;
          const int st = step_use & 1;
          sm90::mbar_wait(&bars.qdo_empty[st], ((step_use >> 1) & 1) ^ 1);
          load_qdo<D, BM, kDq2>(tm_q, tm_do, p, smem, &bars.qdo_full[st], st, i, hq, b, [&] {
            return ((int64_t)b * opaque_int(M.p.heads_q) + hq) * opaque_int(p.seqlen_q_pad) + (int64_t)i * BM;
          });
          // kDq2: the step's dO, its coordinates read back from the state (kept live across the Q
          // issue above, at 24 registers one value spilled).
          if constexpr (kDq2)
            load_do<D, BM>(tm_do, smem, bars, s->step_use - 1, s->i, s->hk * G + s->g - 1, s->b);
        }
      }
    }
  }
}

// 128B-swizzle descriptor of shared address `addr` (smem_desc.cuh encoding).
template <uint32_t kLbo, uint32_t kSbo>
__device__ __forceinline__ uint64_t sw128_desc(uint32_t addr) {
  return sm90::encode_smem_desc(addr, sm90::SmemLayout::kSwizzle128B, kLbo, kSbo);
}
// The descriptor of the k-step `bytes` past a chain's first operand address, from that
// address's low descriptor word `lo0` (sm90::smem_desc_lo; 654eaff, docs/perf.md v7): one add
// on an opaque copy (so the eight per chain are formed next to their wgmma, not hoisted and kept
// live: that spilled), and a constant high word. The same 64-bit value as sw128_desc(addr + bytes)
// (tests: Sm90Primitives.DescriptorLoWordAddsWithoutCarry); ncu at bea1336: the descriptors cost
// about 12 instructions per HGMMA of the S^T / dP^T issue, a sixth of the MMA warps' samples.
template <uint32_t kSbo>
__device__ __forceinline__ uint64_t sw128_desc_step(uint32_t lo0, uint32_t bytes) {
  constexpr uint32_t kHi = sm90::smem_desc_hi(sm90::SmemLayout::kSwizzle128B, kSbo);
  return sm90::smem_desc_from_words(opaque(lo0) + (bytes >> 4), kHi);
}

// P^T of one step, in place in the S^T accumulator (m64n64: rows = this WG's keys, columns = the
// Q tile's rows). Thread t holds keys key_row0, key_row0 + 8 and query rows 8n + 2(t%4) + e.
// lse01: the LSE pairs of n = 0 and 1, loaded by the caller before it waits for S^T (the first
// FFMAs waited on these loads: short-scoreboard stalls, 8% of the MMA warps' samples at bea1336;
// the gain of this early load was not separable from noise in the a77d6b6 A/B).
// kNG: 8-column groups of the accumulator (8: m64n64; 10: m64n80, the 80-row tile).
// kOpaqueLim: q_lim through opaque() as well (the causal 80-row tile at head_dim 128: ptxas hoisted
// q_lim - 2 quad to the kernel's top and spilled it, 4 B; the other kernels keep their code).
template <bool kMask, bool kCausal, int kFmaEvery, int kNG = 8, bool kOpaqueLim = false>
__device__ __forceinline__ void compute_p(float (&s)[4 * kNG], const float* sLse, const float2 (&lse01)[2], int key_row0,
                                          int q_row0, int q_lim, int k_lim, int diag, float scale_log2, int quad) {
  // The mask bounds relative to this thread's first row and key (654eaff), through opaque
  // values, so that the 32 predicates are formed here, on boundary tiles only. The
  // compiler hoisted them to the top of EVERY step (kept as bits of one register: ~100 of the
  // ~190 instructions there, ncu source page at bea1336), interior tiles included.
  int q_end = 0, k_end = 0, c_off = 0;
  if constexpr (kMask) {
    if constexpr (kOpaqueLim) q_lim = static_cast<int>(opaque(static_cast<uint32_t>(q_lim)));
    q_end = static_cast<int>(opaque(static_cast<uint32_t>(q_lim - q_row0 - 2 * quad)));  // qc - 2 quad < q_end
    k_end = static_cast<int>(opaque(static_cast<uint32_t>(k_lim - key_row0)));           // 8 h < k_end
    c_off = static_cast<int>(opaque(static_cast<uint32_t>(q_row0 + diag - key_row0 + 2 * quad)));  // 8 h <= qc0 + c_off
  }
#pragma unroll
  for (int n = 0; n < kNG; ++n) {
    const float2 lse2 = n < 2 ? lse01[n] : *reinterpret_cast<const float2*>(sLse + 8 * n + 2 * quad);  // LDS.64
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const float lse = e ? lse2.y : lse2.x;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int idx = 4 * n + 2 * h + e;
        float pv = ptx::ex2_mixed<kFmaEvery>(idx, fmaf(s[idx], scale_log2, -lse));
        if constexpr (kMask) {
          // row = q_row0 + qc (qc = 8n + 2 quad + e), key = key_row0 + 8h: row < q_lim, key < k_lim,
          // key <= row + diag
          const int qc0 = 8 * n + e;  // qc - 2 quad: a constant of the unrolled loop
          const bool ok = qc0 < q_end && 8 * h < k_end && (!kCausal || 8 * h <= qc0 + c_off);
          pv = ok ? pv : 0.f;
        }
        s[idx] = pv;
      }
    }
  }
}

// dS^T = P^T (dP^T - D), in place in the dP^T accumulator. P comes from its T (bf16/f16) A
// fragments (pf[k][x] packs accumulator entries 8k + 2x, 8k + 2x + 1): the fp32 S^T accumulator
// is dead before dP^T goes live, which keeps the MMA warpgroups within their registers. PyTorch's
// bf16 backward (the accuracy yardstick) uses the same rounded P.
template <typename T, int kKS = 4>
__device__ __forceinline__ void compute_ds(float (&dp)[8 * kKS], const uint32_t (&pf)[kKS][4], const float* sDsum,
                                           int quad) {
#pragma unroll
  for (int idx = 0; idx < 8 * kKS; ++idx) {
    const int n = idx / 4, e = idx % 2;
    const float2 dsum2 = *reinterpret_cast<const float2*>(sDsum + 8 * n + 2 * quad);  // LDS.64 (CSE'd per n)
    const float dsum = e ? dsum2.y : dsum2.x;
    const uint32_t packed = pf[idx / 8][(idx % 8) / 2];
    const float pv = e ? sm90::hi_of_x2<T>(packed) : sm90::lo_of_x2<T>(packed);
    dp[idx] = pv * (dp[idx] - dsum);
  }
}

// kLag (DRAFT, measured and not the default: bits equal, ordered schedules 0.95-0.99 of the default at
// 6a0d9a6, docs/perf.md v5/v8; DASH_BWD_LAGGED_DQ=1, head_dim 128 only; docs/bwd-sm90.md,
// "Lagged-dQ draft"): the dQ GEMM of step s is issued in step s + 1 (after that step's dS^T is
// stored) and the per-step named barrier becomes the ds_full / ds_empty mbarriers, so the two
// MMA warpgroups are no longer in lockstep: one may run up to about a step ahead, its softmax
// and dS math overlapping the other's GEMMs (as the forward's ping-pong does). Same GEMMs on the
// same operands in the same order per tile: the same bits as kLag = false.
template <typename T, int D, bool kCausal, bool kLag, int BM = kBM, bool kLean = false, bool kSplit = false, int kWRank = 0,
          bool kDq2 = false, bool kDq2EarlyDv = false>
__global__ void __launch_bounds__(kThreads, 1)
    attn_bwd_sm90_main(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                       const __grid_constant__ CUtensorMap tm_v, const __grid_constant__ CUtensorMap tm_do,
                       const BwdKernelParams p) {
  // hdim 128: dQ split, WG w computes hdim columns 64w..64w+63. hdim 64: WG step % 2
  // computes all 64 columns (one swizzle atom wide), the other one skips GEMM 5.
  static_assert(D == 128 || D == 64, "head_dim 64 or 128");
  static_assert(!kLag || D == 128, "the lagged-dQ draft is written for head_dim 128");
  static_assert(BM == kBM || !kLag, "80-row tiles: not with the lagged-dQ draft");
  static_assert(BM == kBM || D == 128 || !kLean, "80-row tiles at head_dim 64: the 40 / 232 split only");
  static_assert(!kLean || !kLag, "the 24-register producer split is not built with the lagged-dQ draft");
  static_assert(!kDq2 || (BM == kBM80 && D == 128 && kLean), "two staging buffers: the 80-row kLean kernels only");
  // kDq2EarlyDv (opt-in, DASH_BWD_SM90_DQ2_EARLY_DV=1; measured in the twenty-fourth session, docs/perf.md
  // v25 item 1: +2-4% for descending / ascending / spt on 80 rows, none for shift, not the default):
  // the two-buffer kernel with dV issued as soon as P^T is packed (early dV), retired before the dS
  // barrier and dO released there, half a step earlier than after the dQ^T GEMM (docs/bwd-sm90.md
  // "Two dQ staging buffers at 80 rows").
  static_assert(!kDq2EarlyDv || kDq2, "early dV is a variant of the two-buffer kernel");
  // The kernels with the last-wave split's code (ScheduleModel::split; kernels::bwd_sm90_kernel_splits
  // says the same on the host, which plans no split for the others): full masks, the rank-free
  // variants that run ascending, descending, spt and atomic by default. Not the shift-only rank
  // variants, the causal ones, nor the drafts that spilled with it (the lagged dQ, the two-buffer
  // kernels, the 80-row tile at 232 registers).
  constexpr bool kMaySplit = !kCausal && kWRank == 0 && !kSplit && !kLag && !kDq2 && !(BM != kBM && D == 128 && !kLean);
  using L = Sm90BwdSmem<D, BM, kDq2>;
  constexpr bool kT80 = BM != kBM;  // a tall tile: 80 rows (dQ transposed; one staging buffer at head_dim 128), 96 / 112
  // 80-row tile at 232 registers: dP^T issued only after P^T is packed (S^T and dP^T do not
  // overlap), dQ^T after dK. With kLean's 240 the 64-row order, both overlaps (compile-checked: no
  // spills, no serialized wgmma).
  constexpr bool kT80Serial = kT80 && !kLean && D == 128;  // head_dim 64: dK + dV are 64 registers, not 128
  constexpr int kAcc = BM / 2;        // S^T / dP^T accumulator registers (m64nBM)
  constexpr int kKS = BM / 16;        // k-steps of P^T / dS^T in dV / dK
  extern __shared__ __align__(128) uint8_t smem_raw[];  // rounded up to 1024 below
  __shared__ Sm90BwdBars bars;
  __shared__ TaskRef s_task[2];  // ring of 2
  __shared__ int s_reduced_storage;
  __shared__ int s_rank[2];     // the split rank's partial sums, per staging buffer (take_rank_part)
  __shared__ int s_take_ahead;  // takes_ahead(p, M) ? p.take_ahead : -1 (the MMA warps' kv_near_end)
  __shared__ int s_split_last;  // split_sum: this piece completed its task
  uint8_t* smem = sm90::align_swizzle_atom(smem_raw);
  int* s_reduced = &s_reduced_storage;
  DqMeta* mailbox = reinterpret_cast<DqMeta*>(p.dq_mailbox) + 2 * blockIdx.x;

  if (threadIdx.x == 0) {
    for (int k = 0; k < 2; ++k) {
      cuda::ptx::mbarrier_init(&bars.task_full[k], 1);
      cuda::ptx::mbarrier_init(&bars.task_empty[k], kMmaArrivals + 1);  // + the loader
      cuda::ptx::mbarrier_init(&bars.qdo_full[k], 1);
      cuda::ptx::mbarrier_init(&bars.qdo_empty[k], kMmaArrivals);
      cuda::ptx::mbarrier_init(&bars.dq_full[k], kMmaArrivals);
      cuda::ptx::mbarrier_init(&bars.dq_empty[k], 1);
      cuda::ptx::mbarrier_init(&bars.ds_full[k], kMmaArrivals);
      cuda::ptx::mbarrier_init(&bars.ds_empty[k], kMmaArrivals);
    }
    cuda::ptx::mbarrier_init(&bars.do_full, 1);
    cuda::ptx::mbarrier_init(&bars.do_empty, kMmaArrivals);
    cuda::ptx::mbarrier_init(&bars.kv_full, 1);
    cuda::ptx::mbarrier_init(&bars.kv_empty, kMmaArrivals);
    cuda::ptx::mbarrier_init(&bars.kv_near_end, 1);
    s_reduced_storage = 0;
    if constexpr (kSplit) s_rank[0] = s_rank[1] = 0;
    s_take_ahead = takes_ahead(p, fixed_tiles<BM>(p.model)) ? p.take_ahead : -1;
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
#ifdef DASH_DEBUG_WAITS
    // Once per process: the shared addresses of the barriers, to decode the "mbarrier wait timed
    // out: smem 0x..." reports (the static shared layout is the same in every CTA and launch).
    if (blockIdx.x == 0 && atomicExch(&g_bars_layout_printed, 1) == 0) {
      auto a = [](const uint64_t* b) { return static_cast<unsigned>(__cvta_generic_to_shared(b)); };
      printf("dash-attn bwd_sm90 barriers (smem): task_full 0x%x,0x%x task_empty 0x%x,0x%x qdo_full 0x%x,0x%x "
             "qdo_empty 0x%x,0x%x dq_full 0x%x,0x%x dq_empty 0x%x,0x%x ds_full 0x%x,0x%x ds_empty 0x%x,0x%x "
             "kv_full 0x%x kv_empty 0x%x kv_near_end 0x%x\n",
             a(&bars.task_full[0]), a(&bars.task_full[1]), a(&bars.task_empty[0]), a(&bars.task_empty[1]),
             a(&bars.qdo_full[0]), a(&bars.qdo_full[1]), a(&bars.qdo_empty[0]), a(&bars.qdo_empty[1]),
             a(&bars.dq_full[0]), a(&bars.dq_full[1]), a(&bars.dq_empty[0]), a(&bars.dq_empty[1]),
             a(&bars.ds_full[0]), a(&bars.ds_full[1]), a(&bars.ds_empty[0]), a(&bars.ds_empty[1]),
             a(&bars.kv_full), a(&bars.kv_empty), a(&bars.kv_near_end));
    }
#endif
  }
  // p.pdl: launched as the preprocess's programmatic dependent, so the setup above overlapped its
  // tail; wait for its writes (lse_log2, dsum, the zeroed semaphores, task counter and mailboxes),
  // then let the postprocess launch (every CTA of this grid is running once all have triggered).
  if (p.pdl) {
    cudaGridDependencySynchronize();
    cudaTriggerProgrammaticLaunchCompletion();
  }
  __syncthreads();

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x >= kMmaThreads) {
    ptx::setmaxnreg_dec<kLean ? kProducerRegsLean : kProducerRegs>();
    // One staging buffer (80-row tiles at head_dim 128): one writer, dq_writer (no second writer).
    const bool two_writers = L::kDqBufs == 2 && p.dual_writer;
    if (warp == kProducerWarp) {
      if constexpr (kLean) {
        __shared__ LoaderState s_loader;
        if (lane == 0) producer_lean<D, BM, kDq2>(&tm_q, &tm_k, &tm_v, &tm_do, p, smem, bars, s_task, &s_loader);
      } else if (lane == 0) {
        producer<D, BM>(&tm_q, &tm_k, &tm_v, &tm_do, p, smem, bars, s_task);
      }
    } else if (warp == kTaskWarp) {
      if (lane == 0) task_taker<BM, kLean>(p, bars, s_task, s_reduced);
    } else if (warp == kWriterWarp) {
      if (BM == kBM && p.writer_overlap) {  // (the overlap draft has the 64-row layout only)
        if (lane == 0) dq_writer_overlap<D, kSplit, kWRank>(p, smem, bars, s_reduced, s_rank, mailbox);
      } else if (lane == 0) {
        dq_writer<D, BM, kSplit, kWRank, kDq2>(p, smem, bars, s_reduced, s_rank, mailbox, 0, two_writers ? 2 : 1);
      }
    } else if (warp == kWriterWarp2 && two_writers) {
      if (lane == 0) dq_writer<D, BM, kSplit, kWRank, kDq2>(p, smem, bars, s_reduced, s_rank, mailbox, 1, 2);  // the odd tiles (buffer 1)
    }
    return;
  }
  ptx::setmaxnreg_inc<kLean ? kMmaRegsLean : kMmaRegs>();

  // ------------------------------------------------------------------------ MMA warpgroups
  const ScheduleModel M = fixed_tiles<BM>(p.model);
  const TileProblem& tp = M.p;
  const int G = tp.q_per_kv();
  const int diag = tp.seqlen_k - tp.seqlen_q;
  // keys 64wg .. 64wg + 63 of the KV tile; broadcast from lane 0 so that the compiler knows it is
  // warp-uniform (values derived from it, e.g. the K/V descriptor addresses, go to uniform registers)
  const int wg = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 128), 0);
  const int t = threadIdx.x % 128;
  const int wq = t / 32, quad = lane % 4;
  const int key_local = 64 * wg + 16 * wq + lane / 4;  // this thread's keys: key_local, key_local + 8

  float* sDqStage = reinterpret_cast<float*>(smem + L::kDqOff);

  // Descriptors are built from this 32-bit shared address (see `opaque`). Operands:
  //   A of S^T / dP^T: this WG's 64 K / V rows, K-major (hdim in [rows x 64] sub-tiles);
  //   B of dQ: K as MN-major (hdim chunk wg, all 128 keys along the reduction).
  const uint32_t smem_u32 = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  // k16 step kk of the hdim inside [rows x 64] sub-tiles.
  auto kstep = [](int kk, uint32_t subtile) -> uint32_t {
    return (kk / 4) * subtile + (kk % 4) * sm90::kKMajorStepBytes;
  };

  // GEMM 5 (SS): dQ[:, 64 chunk..] = dS K from dS^T buffer `ds_buf`: A = the dS^T tile read
  // MN-major (tnspA), B = K MN-major (hdim sub-tile `chunk`, all 128 keys along the reduction).
  // head_dim 128: chunk = wg (each warpgroup 64 columns); head_dim 64: chunk 0 (whole tile).
  auto issue_dq = [&](float (&acc)[32], int ds_buf, int chunk) {
    const uint32_t base = opaque(smem_u32);
    const uint32_t a_lo = sm90::smem_desc_lo(base + L::kDsOff + ds_buf * L::kDsBytes, L::kDsBytes);
    const uint32_t b_lo = sm90::smem_desc_lo(base + L::kKOff + chunk * sm90::subtile_bytes(kBN), sm90::subtile_bytes(kBN));
    ptx::warpgroup_fence_operand(acc);
    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kBN / 16; ++kk)
      ptx::wgmma_ss<64, 1, 1, T>(acc, sw128_desc_step<1024>(a_lo, kk * sm90::kMNMajorStepBytes),
                                 sw128_desc_step<1024>(b_lo, kk * sm90::kMNMajorStepBytes), kk > 0 ? 1 : 0);
    ptx::wgmma_commit_group();
  };
  // GEMM 5 of the 80-row tile (SS): dQ^T[64 wg.., :] = K^T[hdim sub-tile wg, 128 keys] dS^T, m64n80k16
  // x 8: A = K's hdim sub-tile wg read MN-major (tnspA; the hdim runs along M), B = dS [80 q x 128
  // keys] K-major (two [80 x 64] sub-tiles: the keys of warpgroup 0, then of warpgroup 1).
  // Head_dim 64: chunk 0, K's only hdim sub-tile, the whole dQ^T [64 x 80] in one warpgroup.
  auto issue_dqt = [&](float (&acc)[kAcc], int ds_buf, int chunk) {
    const uint32_t base = opaque(smem_u32);
    const uint32_t a_lo = sm90::smem_desc_lo(base + L::kKOff + chunk * sm90::subtile_bytes(kBN), sm90::subtile_bytes(kBN));
    const uint32_t b_lo = sm90::smem_desc_lo(base + L::kDsOff + ds_buf * L::kDsBytes, 16);
    ptx::warpgroup_fence_operand(acc);
    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kBN / 16; ++kk)
      ptx::wgmma_ss<BM, 1, 0, T>(acc, sw128_desc_step<1024>(a_lo, kk * sm90::kMNMajorStepBytes),
                                 sw128_desc_step<1024>(b_lo, kstep(kk, sm90::subtile_bytes(BM))), kk > 0 ? 1 : 0);
    ptx::wgmma_commit_group();
  };
  // The Q tile of step tt (schedule.h visit). kWRankShift (full-mask shift with the closed-form rank:
  // start_stride 1, n <= m, every KV tile sees every Q tile, one side, KV tile = slot): (slot + tt)
  // mod m, without visit()'s general case and its modulo at the top of every step.
  auto visit_of = [&](int sl, int sd, int tt) -> int {
    if constexpr (kWRank == kWRankShift) {
      const int v = sl + tt;
      return v >= M.m ? v - M.m : v;
    }
    return M.visit(sl, sd, tt);
  };
  // The position of (Q tile ii, KV tile jj) in dQ tile ii's accumulation chain (schedule.h), as in
  // the sm80 writer; warp-uniform, meaningful in the warp that writes the mailbox.
  auto rank_of = [&](int ii, int jj) -> int {
    if constexpr (kWRank != 0) return 0;  // the writer computes it (M.shift_rank / M.symshift_rank)
    if (!M.deterministic()) return 0;
    return M.rank_needs_loop() ? __reduce_add_sync(0xffffffffu, M.rank_partial(ii, jj, lane_id(), 32)) : M.rank(ii, jj);
  };
  // kSplit (shift, symmetric shift; bwd_sm90_split_rank): for a tile staged by the nw warps w0 ..
  // w0 + nw - 1 (every one of them calls it), the loop split over the nw warps: this warp's
  // partial count, summed by the writer (take_rank_part), so that no warp carries the whole loop.
  // Goes to stage_dq as DqMeta::rank.
  auto rank_split = [&](int ii, int jj, int w0, int nw) -> int {
    // (the thread index read here, not kept live: in the 80-row kernel at 240 registers it spilled)
    return __reduce_add_sync(0xffffffffu, M.rank_partial(ii, jj, tid_x() - 32 * w0, nw * 32));
  };
  // Hands dQ tile number `use` (head_dim 128: this warpgroup's 64 columns, chunk = wg; head_dim
  // 64: the whole tile, chunk 0) to the writer: staging buffer use % 2, free once the writer's
  // reduce of tile use - 2 has completed. Fragment order: float4 (chunk, k, t) = acc[4k..4k+3].
  // Lane 0 of warp meta_warp writes the mailbox slot.
  // 80-row tile: acc = this warpgroup's dQ^T accumulator (kAcc = 40: 10 float4), one buffer.
  // kSplit: meta.rank is this warp's partial count (rank_split), added to s_rank once the buffer
  // is free (every staging warp); with late_ii >= 0 the 8 MMA warps' parts of the rank of (late_ii,
  // late_jj) are computed after the stores instead.
  auto stage_dq_late = [&](const float (&acc)[kAcc], int use, const DqMeta& meta, int chunk, int meta_warp,
                           int late_ii, int late_jj) {
    const int dbuf = L::dq_buf(use);
    sm90::mbar_wait(&bars.dq_empty[dbuf], L::dq_phase(use) ^ 1);
    if constexpr (kSplit) {
      if (meta.rank != 0 && lane_id() == 0) atomicAdd(&s_rank[dbuf], meta.rank);
    }
    float* stage = sDqStage + dbuf * L::kDqFloats;
#pragma unroll
    for (int k = 0; k < kAcc / 4; ++k)
      *reinterpret_cast<float4*>(stage + ((chunk * (kAcc / 4) + k) * 128 + t) * 4) =
          make_float4(acc[4 * k], acc[4 * k + 1], acc[4 * k + 2], acc[4 * k + 3]);
    if (warp == meta_warp && lane_id() == 0) mailbox[dbuf] = meta;
    if constexpr (kSplit) {
      if (late_ii >= 0) {
        const int part = rank_split(late_ii, late_jj, 0, 8);
        if (part != 0 && lane_id() == 0) atomicAdd(&s_rank[dbuf], part);
      }
    }
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);  // generic stores -> bulk copy
    cuda::ptx::mbarrier_arrive(&bars.dq_full[dbuf]);  // every MMA thread (kMmaArrivals)
  };
  auto stage_dq = [&](const float (&acc)[kAcc], int use, const DqMeta& meta, int chunk, int meta_warp) {
    stage_dq_late(acc, use, meta, chunk, meta_warp, -1, 0);
  };

  int side_use = 0, step_use = 0;  // step_use also numbers the dQ tiles handed to the writer
  // kLag: the dQ GEMM of step `use` (both dS^T halves stored: ds_full), then, once retired, the
  // dS^T buffer freed (ds_empty) and the partial handed to the writer. The lagged step is always
  // step_use - 1 of the same side; its Q tile and query head are kept in prev_i / prev_hq.
  auto issue_lagged_dq = [&](auto& acc, int use) {
    sm90::mbar_wait(&bars.ds_full[use & 1], (use >> 1) & 1);
    issue_dq(acc, use & 1, wg);
  };
  auto finish_lagged_dq = [&](auto& acc, int use, const DqMeta& meta) {
    ptx::warpgroup_fence_operand(acc);
    cuda::ptx::mbarrier_arrive(&bars.ds_empty[use & 1]);  // every MMA thread
    stage_dq(acc, use, meta, wg, 0);
  };
  int prev_i = 0, prev_hq = 0;
  // DRAFT (p.early_dv; not with kLag, which orders its GEMMs itself): issue dV = P^T dO as soon as
  // P^T is in registers, before waiting for dP^T, so that the tensor cores work under the dS math
  // (both warpgroups reach it together). Same GEMMs, same operands, same order per accumulator.
  // Not with the 80-row tile at 232 registers (dP^T is issued after P^T there; the P^T copy would
  // not fit); the two-buffer kernel's draft kDq2EarlyDv (240 registers: 0 spills) always takes it.
  const bool early_dv = kDq2EarlyDv || (!kLag && !kT80 && p.early_dv != 0);
  // MMA thread 0 (the kv_near_end arrivals): in the kernels with the split's code read where used
  // (tid_x: a predicate kept from the kernel's top spilled there at 240 registers), else as before.
  auto mma_thread0 = [&]() -> bool { return kMaySplit ? tid_x() == 0 : threadIdx.x == 0; };
  // The last-wave split (ScheduleModel::split): a piece's dK / dV partials go to its workspace slot
  // `part` (float4 x of MMA thread tid at x * 256 + tid: dK's D / 8 float4, then dV's); the piece
  // whose count brings its task to split_pieces sums the task's k slots in piece order, slot 0
  // first ((p0 + p1) + p2 ...), into dk / dv and returns true (it stores dK / dV); false for the
  // others. The sum order is fixed, not the arrival order: the same bits whichever piece is last.
  // Every MMA thread calls it (CTA-uniform: the unit is).
  auto split_sum = [&](float (&dk_)[D / 2], float (&dv_)[D / 2], int part) -> bool {
    constexpr int kX = D / 8;  // float4 of dK (and of dV) per thread
    const int tid = tid_x();
    float4* mine = reinterpret_cast<float4*>(p.split_partials) + static_cast<size_t>(part) * (2 * kX * kMmaThreads);
#pragma unroll
    for (int x = 0; x < kX; ++x) {
      __stcg(mine + x * kMmaThreads + tid, make_float4(dk_[4 * x], dk_[4 * x + 1], dk_[4 * x + 2], dk_[4 * x + 3]));
      __stcg(mine + (kX + x) * kMmaThreads + tid, make_float4(dv_[4 * x], dv_[4 * x + 1], dv_[4 * x + 2], dv_[4 * x + 3]));
    }
    __threadfence();  // this thread's partial is visible GPU-wide before the count moves
    ptx::named_bar_sync(kBarDs, kMmaThreads);
    const int k = M.split_pieces, sidx = part / k;
    if (tid == 0) s_split_last = atomicAdd(p.split_count + sidx, 1) == k - 1 ? 1 : 0;
    ptx::named_bar_sync(kBarDs, kMmaThreads);
    if (s_split_last == 0) return false;
    __threadfence();  // (the other pieces' partials: read after their counts, from L2)
    const float4* first = reinterpret_cast<const float4*>(p.split_partials) + static_cast<size_t>(sidx) * k * (2 * kX * kMmaThreads);
#pragma unroll
    for (int x = 0; x < 2 * kX; ++x) {
      float4 a = __ldcg(first + x * kMmaThreads + tid);
#pragma unroll 1
      for (int q = 1; q < k; ++q) {
        const float4 c = __ldcg(first + (static_cast<size_t>(q) * 2 * kX + x) * kMmaThreads + tid);
        a.x += c.x;
        a.y += c.y;
        a.z += c.z;
        a.w += c.w;
      }
      float* dst = x < kX ? &dk_[4 * x] : &dv_[4 * (x - kX)];
      dst[0] = a.x;
      dst[1] = a.y;
      dst[2] = a.z;
      dst[3] = a.w;
    }
    return true;
  };
#pragma unroll 1
  for (int it_count = 0;; ++it_count) {
    // The task ring's index: the units read so far. On a full mask every task has one side, so it
    // is side_use, already live (a separate counter spilled in the two-buffer kernel at 240 registers).
    const int it = kCausal ? it_count : side_use;
    // The published unit; the ring slot is freed (task_empty) at the top of side 0, once its step
    // range is read there too (kept live from here across the side loop, it spilled at 240 registers).
    // (A kernel without the split's code frees it here, as before the split.)
    int task, bh, slot;  // task: the unit number
    if constexpr (kMaySplit) {
      const TaskRef* ref = wait_published_task(bars, s_task, it);
      task = ref->task;
      bh = ref->head;
      slot = ref->slot;
      if (task == kNoUnit) release_published_task(bars, it);
    } else {
      const TaskRef tr = read_published_task(bars, s_task, it);
      task = tr.task;
      bh = tr.head;
      slot = tr.slot;
    }
    if (task == kNoUnit) break;
    const int b = bh / tp.heads_kv, hk = bh % tp.heads_kv;

#pragma unroll 1
    // (80-row tile: num_sides recomputed each side from an opaque slot; kept live across the side
    // loop, its predicate was spilled.)
    for (int side = 0; side < M.num_sides(kT80 ? static_cast<int>(opaque(static_cast<uint32_t>(slot))) : slot); ++side, ++side_use) {
      const int j = M.kv_tile(slot, side);
      // Steps [tb, nsteps) of the side: all of them, or a piece's range of a split task (its only
      // side), read from the ring at side 0's top, which then frees the slot.
      int tb = 0, nsteps = M.num_steps(slot, side);
      if (kMaySplit && side == 0) {
        const volatile TaskRef* r = s_task + (it & 1);
        tb = r->t0;
        nsteps = min(r->t1, nsteps);
        release_published_task(bars, it);
      }
      const int key_row0 = j * kBN + key_local;
      DASH_BWD_TRACE_MARK(mma_thread0(), side_use, 0);
      DASH_BWD_TRACE_META(mma_thread0(), side_use, j, nsteps - tb, bh);
      sm90::mbar_wait(&bars.kv_full, side_use & 1);
      DASH_BWD_TRACE_MARK(mma_thread0(), side_use, 1);
      // kv_near_end: one arrival per task, in its last side (also a side of no steps), only when
      // the taker waits on it (takes_ahead); the taker counts tasks (see task_taker's NOTES).
      const bool last_side = side == M.num_sides(slot) - 1;
      // The take-ahead distance (or -1) from shared memory: ptxas kept takes_ahead's predicate live
      // across the side loop and spilled it there (the 80-row tile first; every kernel once
      // takes_ahead also read p.group_take).
      // (Counted from the side's first step tb: near_end_at is compared with t_step * G + g.)
      const int side_steps = (nsteps - tb) * G;
      const int take_ahead = s_take_ahead;
      const int near_end_at =
          take_ahead < 0 || !last_side ? -1 : tb * G + (side_steps > take_ahead ? side_steps - take_ahead : 0);
      if (mma_thread0() && near_end_at >= 0 && side_steps <= 0) cuda::ptx::mbarrier_arrive(&bars.kv_near_end);

      float dk[D / 2], dv[D / 2];
#pragma unroll
      for (int x = 0; x < D / 2; ++x) { dk[x] = 0.f; dv[x] = 0.f; }

      // The Q tile of the side's next step is computed during the current one, under its first
      // GEMMs (see `i_next` below): at the top of a step the tensor cores are idle (the previous
      // step retired all its groups), and the visit's integer chain (param loads, the schedule
      // switch, q_tile_begin) sat there (the v10 profile's "loop top", 7.5% of the MMA loop).
      // head_dim 128 only: at 64 the same hoist ran 0.4-1.4% slower (twelfth session's A/B).
      int i_next = D == 128 && nsteps > tb ? visit_of(slot, side, tb) : 0;
#pragma unroll 1
      for (int t_step = tb; t_step < nsteps; ++t_step) {
       const int i = D == 128 ? i_next : visit_of(slot, side, t_step);
#pragma unroll 1
       for (int g = 0; g < G; ++g, ++step_use) {
        const int hq = hk * G + g;
        const int st = step_use & 1;
        if (mma_thread0() && t_step * G + g == near_end_at) cuda::ptx::mbarrier_arrive(&bars.kv_near_end);
        const float* sLse = reinterpret_cast<const float*>(smem + L::kLseOff + st * L::kVecBytes);
        const float* sDsum = reinterpret_cast<const float*>(smem + L::kDsumOff + st * L::kVecBytes);
        sm90::mbar_wait(&bars.qdo_full[st], (step_use >> 1) & 1);

        // GEMM 1 and 2, issued back to back as two commit groups: S^T = K_w Q^T and
        // dP^T = V_w dO^T (SS, both K-major, D/16 k-steps each). P^T is computed from S^T while
        // the tensor cores still run dP^T (wait_group 1: groups retire in order), dS^T after.
        // Register peak: dK + dV (128) + both fp32 accumulators (64) + the P^T fragments (16).
        auto kmajor_issue = [&](float (&acc)[kAcc], uint32_t a_rows, uint32_t b_rows) {
          const uint32_t a_lo = sm90::smem_desc_lo(a_rows, 16), b_lo = sm90::smem_desc_lo(b_rows, 16);
          ptx::warpgroup_fence_operand(acc);
#pragma unroll
          for (int kk = 0; kk < D / 16; ++kk)
            ptx::wgmma_ss<BM, 0, 0, T>(acc, sw128_desc_step<1024>(a_lo, kstep(kk, sm90::subtile_bytes(kBN))),
                                       sw128_desc_step<1024>(b_lo, kstep(kk, sm90::subtile_bytes(BM))), kk > 0 ? 1 : 0);
          ptx::wgmma_commit_group();
        };
        // GEMM 3 and 4 (RS): dV += P^T dO, dK += dS^T Q; B = dO / Q MN-major (hdim chunks 8 KiB
        // apart), at b_off: the step's stage, L::do_off(st) / L::q_off(st). One commit group each.
        auto issue_rs = [&](float (&acc)[D / 2], uint32_t (&frag)[kKS][4], uint32_t b_off) {
          constexpr uint32_t kLbo = sm90::subtile_bytes(BM);  // hdim chunks of dO / Q, 8 KiB apart (10 at BM 80)
          const uint32_t b_lo = sm90::smem_desc_lo(opaque(smem_u32) + b_off, kLbo);
          ptx::warpgroup_fence_operand(acc);
#pragma unroll
          for (int k = 0; k < kKS; ++k) ptx::warpgroup_fence_operand(frag[k]);
          ptx::wgmma_fence();
#pragma unroll
          for (int k = 0; k < kKS; ++k)
            ptx::wgmma_rs<D, 1, T>(acc, frag[k], sw128_desc_step<1024>(b_lo, k * sm90::kMNMajorStepBytes), 1);
          ptx::wgmma_commit_group();
        };
        uint32_t pf[kKS][4], df[kKS][4];
        // hdim 128: the step's integer work that depends on i (the mask test, the dQ rank) uses
        // i_late, a copy made after the S^T / dP^T issue (opaque): otherwise the compiler hoists
        // it to the top of the step, where the tensor cores are idle.
        int i_late = i;
        {
          float sacc[kAcc], dpacc[kAcc];
          ptx::wgmma_fence();
          {
            const uint32_t base0 = opaque(smem_u32);
            kmajor_issue(sacc, base0 + L::kKOff + 64 * wg * sm90::kSwizzleBytes, base0 + L::q_off(st));
          }
          // 80-row tile at 232 registers (kT80Serial): dP^T is issued after P^T is packed (below):
          // the S^T and dP^T accumulators (2 x 40) live together with dK and dV did not fit
          // (ptxas spilled and serialized the wgmma). At kLean's 240 they fit.
          auto issue_dp = [&]() {
            const uint32_t base1 = opaque(smem_u32);
            // kDq2: dO has its own barrier (one stage, loaded once the previous step's dV retired)
            if constexpr (kDq2) {
              sm90::mbar_wait(&bars.do_full, step_use & 1);
              ptx::wgmma_fence();  // (the wait's loop between the two issues: ptxas injected this, C7519)
            }
            kmajor_issue(dpacc, base1 + L::kVOff + 64 * wg * sm90::kSwizzleBytes, base1 + L::do_off(st));
          };
          if constexpr (!kT80Serial) issue_dp();
          // Next step's Q tile (last query head of the group: the t_step loop moves on after it),
          // pinned here by the asm barrier so that it is computed while S^T and dP^T run.
          // (80-row tile: after the dP^T issue below; here, with S^T retired before P^T, ptxas
          // spilled the S^T accumulator around the visit's branches.)
          if (D == 128 && !kT80Serial && g == G - 1 && t_step + 1 < nsteps) i_next = opaque(visit_of(slot, side, t_step + 1));
          if constexpr (D == 128) i_late = static_cast<int>(opaque(static_cast<uint32_t>(i)));
          float2 lse01[2];  // under the GEMMs (all 8 pairs here spilled)
#pragma unroll
          for (int n = 0; n < 2; ++n) lse01[n] = *reinterpret_cast<const float2*>(sLse + 8 * n + 2 * quad);
          ptx::wgmma_wait_group<kT80Serial ? 0 : 1>();
          ptx::warpgroup_fence_operand(sacc);
          const int q_row0 = i_late * BM;
          const bool interior = q_row0 + BM <= tp.seqlen_q && (j + 1) * kBN <= tp.seqlen_k &&
                                (!kCausal || (j + 1) * kBN - 1 <= q_row0 + diag);
          if (interior)
            compute_p<false, kCausal, ptx::bwd_exp2_fma_every(D), kAcc / 4>(sacc, sLse, lse01, key_row0, q_row0, tp.seqlen_q, tp.seqlen_k, diag, p.scale_log2, quad);
          else
            compute_p<true, kCausal, ptx::bwd_exp2_fma_every(D), kAcc / 4, kT80 && kCausal && D == 128>(sacc, sLse, lse01, key_row0, q_row0, tp.seqlen_q, tp.seqlen_k, diag, p.scale_log2, quad);
#pragma unroll
          for (int k = 0; k < kKS; ++k) sm90::acc_to_a_frag<T>(sacc, k, pf[k]);
          if constexpr (kT80Serial) {
            ptx::wgmma_fence();
            issue_dp();
            if (g == G - 1 && t_step + 1 < nsteps) i_next = opaque(visit_of(slot, side, t_step + 1));
          }
          if (early_dv) {  // DRAFT (p.early_dv), CTA-uniform: dV's GEMM runs under the dS math
            // compute_ds reads P^T from a copy: the in-flight dV wgmma owns pf until it retires
            // (PTX: its A registers must not be accessed before the wait). Same values: same bits.
            uint32_t pc[kKS][4];
#pragma unroll
            for (int k = 0; k < kKS; ++k)
#pragma unroll
              for (int x = 0; x < 4; ++x) pc[k][x] = opaque(pf[k][x]);  // a distinct register
            issue_rs(dv, pf, L::do_off(st));
            ptx::wgmma_wait_group<1>();  // S^T and dP^T retired; dV may run
            ptx::warpgroup_fence_operand(dpacc);
            compute_ds<T>(dpacc, pc, sDsum, quad);
          } else {
            ptx::wgmma_wait_group<0>();
            ptx::warpgroup_fence_operand(dpacc);
            compute_ds<T>(dpacc, pf, sDsum, quad);
          }
#pragma unroll
          for (int k = 0; k < kKS; ++k) sm90::acc_to_a_frag<T>(dpacc, k, df[k]);
        }
        // dS^T -> smem, [128 keys x 64 q] swizzled (the MN-major A operand of dQ = dS K):
        // fragment df[k][x] holds (key_local + 8 (x % 2), query rows 16k + 8 (x / 2) + 2 quad + {0, 1}).
        // Address = swizzle128_offset(row, col): row * 128 + ((16-byte chunk ^ row % 8) << 4).
        if constexpr (kLag) {
          // Buffer step_use % 2 last held the dS^T of step step_use - 2: both warpgroups' dQ GEMMs
          // of that step must have retired (first use of each buffer: falls through).
          sm90::mbar_wait(&bars.ds_empty[step_use & 1], ((step_use >> 1) & 1) ^ 1);
        }
        // One stmatrix.x4 per k: matrix x = df[k][x] (keys + 8 (x % 2), 16-byte chunk 2k + x / 2);
        // lane 8m + r gives the address of row r of matrix m: key 64 wg + 16 wq + 8 (m % 2) + r.
        if constexpr (kT80) {
          // 80-row tile: dS (not transposed) into sub-tile wg of the buffer, [80 q x 64 keys]
          // swizzled, with stmatrix .trans: matrix x = df[k][x] (keys 16 wq + 8 (x % 2) + 0..7,
          // queries 16k + 8 (x / 2) + 0..7) lands transposed; lane 8m + r gives the address of
          // query row 16k + 8 (m / 2) + r, keys 16 wq + 8 (m % 2) .. (16-byte chunk 2 wq + m % 2).
          // kDq2: one dS buffer, free once both warpgroups' dQ^T GEMMs of the previous step retired.
          if constexpr (kDq2) sm90::mbar_wait(&bars.ds_empty[0], (step_use & 1) ^ 1);
          const uint32_t m = opaque(static_cast<uint32_t>(lane / 8)), r = lane % 8;
          const uint32_t row_addr = opaque(smem_u32) + L::ds_off(step_use) +
                                    wg * sm90::subtile_bytes(BM) + (8 * (m / 2) + r) * sm90::kSwizzleBytes +
                                    (((2 * wq + m % 2) ^ r) << 4);
#pragma unroll
          for (int k = 0; k < kKS; ++k)
            ptx::stmatrix_x4_trans(row_addr + 16 * k * sm90::kSwizzleBytes, df[k][0], df[k][1], df[k][2], df[k][3]);
        } else {
          // From opaque values: computed here, not hoisted out of the step loop and kept live.
          const uint32_t m = opaque(static_cast<uint32_t>(lane / 8)), r = lane % 8;
          const uint32_t row_addr = opaque(smem_u32) + L::kDsOff + (step_use & 1) * L::kDsBytes +
                                    (64 * wg + 16 * wq + 8 * (m % 2) + r) * sm90::kSwizzleBytes;
#pragma unroll
          for (int k = 0; k < 4; ++k)
            ptx::stmatrix_x4(row_addr + (((2 * k + m / 2) ^ r) << 4), df[k][0], df[k][1], df[k][2], df[k][3]);
        }
        cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);  // generic stores -> wgmma (async proxy)
        if constexpr (kLag) cuda::ptx::mbarrier_arrive(&bars.ds_full[step_use & 1]);  // every MMA thread

        // GEMM 3 and 4 (RS): dV += P^T dO, dK += dS^T Q (issue_rs above; with early_dv, dV was
        // issued before dS).
        // Waits for every GEMM of the step (their A fragments are then free) and fences every operand.
        auto retire_all = [&]() {
          ptx::wgmma_wait_group<0>();
          ptx::warpgroup_fence_operand(dv);
          ptx::warpgroup_fence_operand(dk);
#pragma unroll
          for (int k = 0; k < kKS; ++k) {
            ptx::warpgroup_fence_operand(pf[k]);
            ptx::warpgroup_fence_operand(df[k]);
          }
        };

        if constexpr (kLag) {
          issue_rs(dv, pf, L::do_off(st));
          issue_rs(dk, df, L::q_off(st));
          // GEMM 5 of the PREVIOUS step of this side (none at its first step), issued while
          // GEMMs 3 and 4 of this step may still run; one wait retires all three. Same register
          // peak as the unlagged order (dK + dV + P^T/dS^T fragments + this accumulator).
          const bool have_prev = t_step > tb || g > 0;  // uniform over the CTA
          float dqacc[32];
#pragma unroll
          for (int x = 0; x < 32; ++x) dqacc[x] = 0.f;  // defined on both paths (ptxas spilled otherwise)
          int rank = 0;
          if (have_prev) {
            issue_lagged_dq(dqacc, step_use - 1);
            if (warp == 0) rank = rank_of(prev_i, j);  // under the GEMMs
          }
          retire_all();
          // Q, dO, LSE, D of this stage are consumed (GEMM 5 reads only dS and K).
          cuda::ptx::mbarrier_arrive(&bars.qdo_empty[st]);  // every MMA thread (kMmaArrivals)
          if (have_prev) finish_lagged_dq(dqacc, step_use - 1, DqMeta{b, prev_hq, prev_i, j, task, rank, {0, 0}});
          prev_i = i;
          prev_hq = hq;
        } else if constexpr (kT80 && kLean) {
          // 80-row tile at 240 registers (kLean): the 64-row order. dV; (named barrier: both halves
          // of dS stored and fenced) dQ^T = K^T dS^T; dK; dQ^T staged under dK (wait_group 1).
          // Compile-checked without spills or serialization (with S^T / dP^T overlapped too) once
          // the KV tile was recomputed here and the warp test read here: kept from the step top
          // they spilled (4 more values live through the P / dS math than at 232 registers).
          if constexpr (kDq2EarlyDv) {
            // dV was issued under the dS math: retire it (dO's last reader) and release dO now.
            ptx::wgmma_wait_group<0>();
            ptx::warpgroup_fence_operand(dv);
            cuda::ptx::mbarrier_arrive(&bars.do_empty);  // every MMA thread (kMmaArrivals)
          } else {
            issue_rs(dv, pf, L::do_off(st));
          }
          ptx::named_bar_sync(kBarDs, kMmaThreads);
          // kDq2: dV (dO's last reader; kDq2EarlyDv: released above) and this warpgroup's dQ^T (a
          // reader of dS) have retired.
          auto release_do_ds = [&]() {
            if constexpr (kDq2) {
              if constexpr (!kDq2EarlyDv) cuda::ptx::mbarrier_arrive(&bars.do_empty);  // every MMA thread
              cuda::ptx::mbarrier_arrive(&bars.ds_empty[0]);  // every MMA thread (kMmaArrivals)
            }
          };
          float dqacc[kAcc];
          issue_dqt(dqacc, L::ds_buf(step_use), wg);  // this warpgroup's 64 hdim rows of dQ^T
          issue_rs(dk, df, L::q_off(st));
          const int jr = static_cast<int>(opaque(static_cast<uint32_t>(M.kv_tile(slot, side))));
          if constexpr (kSplit) {
            // The split rank after the dQ^T stores, under dK (computed before them it spilled at
            // 240 registers).
            ptx::wgmma_wait_group<1>();  // dV and dQ^T retired; dK may run
            ptx::warpgroup_fence_operand(dqacc);
            release_do_ds();
            stage_dq_late(dqacc, step_use, DqMeta{b, hq, i_late, jr, task, 0, {0, 0}}, wg, 0, i_late, jr);
          } else {
            const int rank = tid_x() < 32 ? rank_of(i_late, jr) : 0;  // under the GEMMs
            ptx::wgmma_wait_group<1>();  // dV and dQ^T retired; dK may run
            ptx::warpgroup_fence_operand(dqacc);
            release_do_ds();
            stage_dq(dqacc, step_use, DqMeta{b, hq, i_late, jr, task, rank, {0, 0}}, wg, 0);
          }
          retire_all();
          // Q, dO, LSE, D of this stage are consumed.
          cuda::ptx::mbarrier_arrive(&bars.qdo_empty[st]);  // every MMA thread (kMmaArrivals)
        } else if constexpr (kT80 && D == 128) {
          // 80-row tile at 232 registers: dV and dK, (named barrier: both halves of dS stored and
          // fenced) all retired, then dQ^T = K^T dS^T alone and its staging. With the dQ^T GEMM in
          // flight together with dK (the 64-row order), ptxas serialized every wgmma of the kernel
          // (C7512: 40 dQ^T accumulators + dK's fragments + dK + dV did not fit).
          issue_rs(dv, pf, L::do_off(st));
          issue_rs(dk, df, L::q_off(st));
          ptx::named_bar_sync(kBarDs, kMmaThreads);
          const int rank = kSplit ? rank_split(i_late, j, 0, 8) : warp == 0 ? rank_of(i_late, j) : 0;  // under dV / dK
          retire_all();
          // Q, dO, LSE, D of this stage are consumed (the dQ^T GEMM reads K and dS).
          cuda::ptx::mbarrier_arrive(&bars.qdo_empty[st]);  // every MMA thread (kMmaArrivals)
          float dqacc[kAcc];
          issue_dqt(dqacc, step_use & 1, wg);  // this warpgroup's 64 hdim rows of dQ^T
          ptx::wgmma_wait_group<0>();
          ptx::warpgroup_fence_operand(dqacc);
          stage_dq(dqacc, step_use, DqMeta{b, hq, i, j, task, rank, {0, 0}}, wg, 0);
        } else if constexpr (D == 128) {
          // Order of the tensor-core work: dV; (named barrier: both warpgroups' dS^T stored and
          // fenced) dQ[:, 64 wg .. 64 wg + 63] = dS K[:, 64 wg ..]; dK. Commit groups retire in
          // order, so wait_group 1 retires dV and dQ while dK still runs, and the dQ partial is
          // staged for the writer under dK (it was staged after all three GEMMs: +3-10%, bea1336
          // A/B). Each GEMM accumulates in the same order as before: the same bits.
          if (!early_dv) issue_rs(dv, pf, L::do_off(st));
          ptx::named_bar_sync(kBarDs, kMmaThreads);
          float dqacc[32];
          issue_dq(dqacc, step_use & 1, wg);
          issue_rs(dk, df, L::q_off(st));
          // NOTES: the rank loop (shift / symmetric shift: O(n / 32) key evaluations per lane,
          // integer divisions) runs while the tensor cores work on the GEMMs; computed after the
          // dq_empty wait it stalled both warpgroups every step (warp 0 reaches the next named
          // barrier late), a cost that grew with seqlen.
          const int rank = kSplit ? rank_split(i_late, j, 0, 8) : warp == 0 ? rank_of(i_late, j) : 0;
          ptx::wgmma_wait_group<1>();  // dV and dQ retired; dK may run
          ptx::warpgroup_fence_operand(dqacc);
          stage_dq(dqacc, step_use, DqMeta{b, hq, i, j, task, rank, {0, 0}}, wg, 0);
          retire_all();
          // Q, dO, LSE, D of this stage are consumed.
          cuda::ptx::mbarrier_arrive(&bars.qdo_empty[st]);  // every MMA thread (kMmaArrivals)
        } else {
          // hdim 64: the column split would need n32 halves of one swizzle atom. Instead warpgroup
          // dbuf = step_use % 2 computes the whole dQ tile (K's only hdim sub-tile, all 128 keys)
          // into staging buffer dbuf, after dV and dK have retired; the other warpgroup only
          // arrives on dq_full[dbuf] (the count stays kMmaArrivals). The dQ warpgroup alternates,
          // so the two stay balanced over two steps. Same staging order as hdim 128 with wg = 0.
          // (The hdim 128 order, dV / dQ / dK with dQ staged under dK, cost 5-23% here, bea1336.)
          // 80-row tile (two staging buffers at head_dim 64): the same order with dQ transposed as at
          // head_dim 128's 80-row tile, dQ^T [64 hdim x 80 q] = K^T dS^T (issue_dqt, chunk 0);
          // early_dv is off there.
          if (!early_dv) issue_rs(dv, pf, L::do_off(st));
          issue_rs(dk, df, L::q_off(st));
          ptx::named_bar_sync(kBarDs, kMmaThreads);
          retire_all();
          // Q, dO, LSE, D of this stage are consumed (GEMM 5 reads only dS and K).
          cuda::ptx::mbarrier_arrive(&bars.qdo_empty[st]);  // every MMA thread (kMmaArrivals)
          const int dbuf = step_use & 1;
          if (wg == dbuf) {  // warpgroup-uniform
            float dqacc[kAcc];
            if constexpr (kT80)
              issue_dqt(dqacc, dbuf, 0);
            else
              issue_dq(dqacc, dbuf, 0);
            const int rank = kSplit ? rank_split(i, j, 4 * wg, 4) : warp == 4 * wg ? rank_of(i, j) : 0;
            ptx::wgmma_wait_group<0>();
            ptx::warpgroup_fence_operand(dqacc);
            stage_dq(dqacc, step_use, DqMeta{b, hq, i, j, task, rank, {0, 0}}, 0, 4 * wg);
          } else {
            // NOTES: this warpgroup may arrive before the stager has waited dq_empty[dbuf]; the
            // arrival still counts toward this use's phase: the previous phase of dq_full[dbuf]
            // completed at step_use - 2, before the named barrier of step_use - 1 let us pass.
            cuda::ptx::mbarrier_arrive(&bars.dq_full[dbuf]);  // every thread of this warpgroup
          }
        }
       }
      }

      if constexpr (kLag) {
        // The side's last dQ GEMM (step step_use - 1; it reads K): issue, retire and hand it
        // over before K/V go.
        if (nsteps > tb) {
          float dqacc[32];
          issue_lagged_dq(dqacc, step_use - 1);
          const int rank = warp == 0 ? rank_of(prev_i, j) : 0;
          ptx::wgmma_wait_group<0>();
          finish_lagged_dq(dqacc, step_use - 1, DqMeta{b, prev_hq, prev_i, j, task, rank, {0, 0}});
        }
      }
      // K/V of this side are no longer read (the last step waited for all its wgmma).
      DASH_BWD_TRACE_MARK(mma_thread0(), side_use, 3);
      cuda::ptx::mbarrier_arrive(&bars.kv_empty);  // every MMA thread (kMmaArrivals)

      // A piece of a split task: dK / dV become the task's sums of partials, or this piece is not
      // the last of its task and stores nothing.
      if constexpr (kMaySplit) {
        const int part = M.unit_part(task);
        if (part >= 0 && !split_sum(dk, dv, part)) continue;
      }
      // Epilogue: dK *= scale; store the rows that exist (accumulator rows = keys, cols = hdim).
      T* dk_base = static_cast<T*>(p.dk.ptr) + b * p.dk.sb + hk * p.dk.sh;
      T* dv_base = static_cast<T*>(p.dv.ptr) + b * p.dv.sb + hk * p.dv.sh;
      // A quad's four lanes hold a row's columns 8n + 2q, +1 (q = lane % 4); transposed across the
      // quad, lane q holds columns 8n .. 8n + 7 of n = 4 k4 + q, stored with one 16-byte store
      // (p.dkv_vec16, the default; the API requires 16-byte aligned rows), else four 4-byte ones.
      // Without the transpose each warp store put 8 rows x 16 bytes, half of each 32-byte sector: the
      // DASH_BWD_TRACE timeline had this epilogue at 5.1-6.7 us per side at head_dim 128 (next74).
      // The same values: the same bits. (Row pointers from opaque copies of the strides, and one code
      // path for both store widths: formed from the uniform parameters, or with a second path, the
      // 80-row kernel kept more uniform values live across its loop and spilled 4-8 B.)
      {
        const bool vec16 = opaque_int(p.dkv_vec16) != 0;
        const int64_t ssk = opaque_i64(p.dk.ss), ssv = opaque_i64(p.dv.ss);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int key = key_row0 + 8 * h;
          const bool row_ok = key < tp.seqlen_k;  // (every lane shuffles; a missing row skips its stores)
          T* krow = dk_base + key * ssk + 8 * quad;
          T* vrow = dv_base + key * ssv + 8 * quad;
#pragma unroll
          for (int k4 = 0; k4 < D / 32; ++k4) {
            uint32_t wk[4], wv[4];
#pragma unroll
            for (int m = 0; m < 4; ++m) {
              const int n = 4 * k4 + m;
              wk[m] = pack_vec2<T>(dk[4 * n + 2 * h] * p.scale, dk[4 * n + 2 * h + 1] * p.scale);
              wv[m] = pack_vec2<T>(dv[4 * n + 2 * h], dv[4 * n + 2 * h + 1]);
            }
            quad_transpose(wk, quad);
            quad_transpose(wv, quad);
            if (row_ok) {
              if (vec16) {
                *reinterpret_cast<uint4*>(krow + 32 * k4) = make_uint4(wk[0], wk[1], wk[2], wk[3]);
                *reinterpret_cast<uint4*>(vrow + 32 * k4) = make_uint4(wv[0], wv[1], wv[2], wv[3]);
              } else {
#pragma unroll
                for (int m = 0; m < 4; ++m) {
                  *reinterpret_cast<uint32_t*>(krow + 32 * k4 + 2 * m) = wk[m];
                  *reinterpret_cast<uint32_t*>(vrow + 32 * k4 + 2 * m) = wv[m];
                }
              }
            }
          }
        }
      }
      DASH_BWD_TRACE_MARK(mma_thread0(), side_use, 4);
    }
  }
  // Tell the writer to exit after its last tile (it stays resident until that reduce completed);
  // two writers (p.dual_writer): an exit in each buffer, uses step_use and step_use + 1.
  // NOTES: first every MMA thread meets here. At head_dim 64 warpgroup w stages only buffer w, so
  // the other warpgroup has never waited on dq_empty[w]; without this meeting it could reach the
  // exit wait while warpgroup w still waits to stage its last tile, its writer two or more tiles
  // behind: the parity wait then passes on an old phase and the exit overwrites a mailbox slot
  // the writer has not read (that writer leaves early, its tiles are never added, and the chains
  // behind them hang). Found by a model of the protocol (2026-11-30, seventh session; tests/cpu/bwd_protocol_check.py); it is
  // the static-dispatch hang of docs/perf.md v8 (two writers, head_dim 64, writers far behind
  // the MMA warps). After the meeting every tile is staged, so each buffer's writer is at most
  // one phase behind each waiter.
  __syncwarp();  // reconverged after the per-thread epilogue stores (synccheck: no divergent arrival)
  ptx::named_bar_sync(kBarDs, kMmaThreads);
#pragma unroll 1
  for (int use = step_use; use <= step_use + (L::kDqBufs == 2 && p.dual_writer ? 1 : 0); ++use) {
    const int dbuf = L::dq_buf(use);
    sm90::mbar_wait(&bars.dq_empty[dbuf], L::dq_phase(use) ^ 1);
    if (threadIdx.x == 0) mailbox[dbuf] = DqMeta{0, 0, 0, 0, kMetaExit, 0, {0, 0}};
    cuda::ptx::mbarrier_arrive(&bars.dq_full[dbuf]);  // every MMA thread (kMmaArrivals)
  }
}

template <typename T, int D, bool kCausal, bool kLag, int BM = kBM, bool kLean = false, bool kSplit = false, int kWRank = 0,
          bool kDq2 = false, bool kDq2EarlyDv = false>
cudaError_t set_smem_attr() {
  return cudaFuncSetAttribute(attn_bwd_sm90_main<T, D, kCausal, kLag, BM, kLean, kSplit, kWRank, kDq2, kDq2EarlyDv>,
                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(Sm90BwdSmem<D, BM, kDq2>::kDynamicBytes));
}

// A launch, as the programmatic dependent of the stream's previous kernel when `pdl` (p.pdl).
template <typename... Params, typename... Args>
cudaError_t launch_kernel(bool pdl, void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                          Args&&... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = pdl ? 1 : 0;
  return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

#ifdef DASH_BWD_TRACE
// DASH_BWD_TRACE builds (sm90/bwd_trace.cuh): the stamps cleared before each main launch and, with
// DASH_BWD_TRACE_FILE set, written after it (the call then waits for the kernel): one CSV line
// per side that ran, "cta,side,t0,t1,t2,t3,t4,j,steps,head" (ns; 0 = not reached), after a
// header line with the launch's grid and tile sizes. The file holds the last launch's sides.
cudaError_t trace_clear(cudaStream_t stream) {
  void* buf = nullptr;
  cudaError_t err = cudaGetSymbolAddress(&buf, bwd_trace::g_buf);
  if (err == cudaSuccess) err = cudaMemsetAsync(buf, 0, sizeof(bwd_trace::g_buf), stream);
  if (err == cudaSuccess) err = cudaGetSymbolAddress(&buf, bwd_trace::g_chain);
  if (err == cudaSuccess) err = cudaMemsetAsync(buf, 0, sizeof(bwd_trace::g_chain), stream);
  return err;
}
cudaError_t trace_write(const BwdKernelParams& p, int num_ctas, cudaStream_t stream) {
  const char* path = std::getenv("DASH_BWD_TRACE_FILE");
  if (path == nullptr || *path == 0) return cudaSuccess;
  std::vector<unsigned long long> h(sizeof(bwd_trace::g_buf) / sizeof(unsigned long long));
  cudaError_t err = cudaStreamSynchronize(stream);
  if (err == cudaSuccess) err = cudaMemcpyFromSymbol(h.data(), bwd_trace::g_buf, sizeof(bwd_trace::g_buf));
  if (err != cudaSuccess) return err;
  FILE* f = std::fopen(path, "w");
  if (f == nullptr) return cudaSuccess;  // a diagnostic: no file, no trace
  std::fprintf(f, "# grid %d block_m %d block_n %d batch %d heads_q %d heads_kv %d seqlen_q %d seqlen_k %d causal %d\n",
               num_ctas, p.model.p.block_m, p.model.p.block_n, p.model.p.batch, p.model.p.heads_q, p.model.p.heads_kv,
               p.model.p.seqlen_q, p.model.p.seqlen_k, p.model.p.causal ? 1 : 0);
  std::fprintf(f, "cta,side,t0,t1,t2,t3,t4,j,steps,head\n");
  for (int c = 0; c < bwd_trace::kCtas; ++c)
    for (int sd = 0; sd < bwd_trace::kSides; ++sd) {
      const unsigned long long* e = &h[(static_cast<size_t>(c) * bwd_trace::kSides + sd) * bwd_trace::kEvents];
      if (e[0] == 0) continue;
      std::fprintf(f, "%d,%d,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu\n", c, sd, e[0], e[1], e[2], e[3], e[4],
                   (e[5] >> 16) & 0xffff, e[5] & 0xffff, e[5] >> 32);
    }
  std::fclose(f);
  // The dQ chains' stamps (bwd_trace::chain_put): PATH.chain.csv, one line per link that was released.
  std::vector<unsigned long long> c(sizeof(bwd_trace::g_chain) / sizeof(unsigned long long));
  if ((err = cudaMemcpyFromSymbol(c.data(), bwd_trace::g_chain, sizeof(bwd_trace::g_chain))) != cudaSuccess) return err;
  const std::string chain_path = std::string(path) + ".chain.csv";
  if ((f = std::fopen(chain_path.c_str(), "w")) == nullptr) return cudaSuccess;
  std::fprintf(f, "# m_tiles %d heads_q %d batch %d chain_ranks %d schedule %d\n", p.model.p.m_tiles(), p.model.p.heads_q,
               p.model.p.batch, bwd_trace::kChainRanks, static_cast<int>(p.model.schedule));
  std::fprintf(f, "sem,rank,staged,acquired,released\n");
  for (int e = 0; e < bwd_trace::kChainEntries; ++e) {
    const unsigned long long* v = &c[static_cast<size_t>(e) * bwd_trace::kChainEvents];
    if (v[2] == 0) continue;
    std::fprintf(f, "%d,%d,%llu,%llu,%llu\n", e / bwd_trace::kChainRanks, e % bwd_trace::kChainRanks, v[0], v[1], v[2]);
  }
  std::fclose(f);
  return cudaSuccess;
}
#endif

template <typename T, int D, bool kCausal, bool kLag, int BM = kBM, bool kLean = false, bool kSplit = false, int kWRank = 0,
          bool kDq2 = false, bool kDq2EarlyDv = false>
cudaError_t launch_main(const BwdKernelParams& p, const BwdSm90Maps& maps, int num_ctas, cudaStream_t stream) {
  cudaError_t err = set_smem_attr<T, D, kCausal, kLag, BM, kLean, kSplit, kWRank, kDq2, kDq2EarlyDv>();
  if (err != cudaSuccess) return err;
#ifdef DASH_BWD_TRACE
  if ((err = trace_clear(stream)) != cudaSuccess) return err;
#endif
  err = launch_kernel(p.pdl != 0, attn_bwd_sm90_main<T, D, kCausal, kLag, BM, kLean, kSplit, kWRank, kDq2, kDq2EarlyDv>,
                      dim3(num_ctas), dim3(kThreads), Sm90BwdSmem<D, BM, kDq2>::kDynamicBytes, stream, maps.q, maps.k,
                      maps.v, maps.dout, p);
#ifdef DASH_BWD_TRACE
  if (err == cudaSuccess) err = trace_write(p, num_ctas, stream);
#endif
  return err;
}

// The lagged and kLean variants have the same shared memory (kLean: 48 static bytes more, far
// below what a second CTA would need) and launch bounds as the default one: one occupancy for
// all; the 80-row tile has its own.
template <typename T, int D, bool kCausal, int BM = kBM, bool kLean = false>
cudaError_t occupancy(int* ctas_per_sm) {
  cudaError_t err = set_smem_attr<T, D, kCausal, false, BM, kLean>();
  if (err != cudaSuccess) return err;
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(ctas_per_sm, attn_bwd_sm90_main<T, D, kCausal, false, BM, kLean>,
                                                       kThreads, Sm90BwdSmem<D, BM>::kDynamicBytes);
}

// The 80-row tile (full masks): at head_dim 128, bf16 with either register split and fp16 with
// the 24 / 240 split only (at 232 registers the fp16 tile spilled, 68-72 B, thirteenth session; at
// 240 it compiles clean, v15); at head_dim 64 bf16 and fp16 with the 40 / 232 split only (two dQ
// staging buffers). bwd_sm90_has_bm80 says which the host may pick.
template <typename T, int D, bool C>
constexpr bool kHasBm80Lean = D == 128;
template <typename T, int D, bool C>
constexpr bool kHasBm80Wide = (!C && D == 128 && std::is_same_v<T, __nv_bfloat16>) || D == 64;
template <typename T, int D, bool C>
constexpr bool kHasBm80 = kHasBm80Lean<T, D, C> || kHasBm80Wide<T, D, C>;
// The two-staging-buffer kernels (kDq2; bwd_sm90_dq2_for says for which schedules): head_dim 128, the
// 24 / 240 split (bwd_sm90_has_dq2 on the host); causal masks with the causal 80-row draft
// (DASH_BWD_SM90_D128_CAUSAL_BM80=1, bf16: the early-dV variant only, no rank variants).
template <typename T, int D, bool C>
constexpr bool kHasBm80Dq2 = D == 128;

template <typename T, int D, bool C>
struct MainLauncher {
  // head_dim 64's taller tiles (96 rows by default, 112 by DASH_BWD_SM90_D64_BM), the 80-row set of variants
  // at the 40 / 232 split (full: base, kWRankShift, kSplit; causal: base).
  template <int BM>
  static cudaError_t run_d64_tall(const BwdKernelParams& p, const BwdSm90Maps& maps, int num_ctas,
                                  cudaStream_t stream, bool lean, bool wrank, bool split) {
    if constexpr (D == 64) {
      if constexpr (!C) {
        if (!lean && wrank) return launch_main<T, D, C, false, BM, false, false, kWRankShift>(p, maps, num_ctas, stream);
        if (!lean && split) return launch_main<T, D, C, false, BM, false, true>(p, maps, num_ctas, stream);
      }
      if (!lean) return launch_main<T, D, C, false, BM>(p, maps, num_ctas, stream);
    }
    return cudaErrorNotSupported;
  }
  static cudaError_t run(const BwdKernelParams& p, const BwdSm90Maps& maps, int num_ctas, cudaStream_t stream) {
    // The 24 / 240-register split (kLean): the 80-row tiles' default, DASH_BWD_SM90_PRODUCER24
    // forces it on / off (bwd_sm90_producer_regs); not with the lagged draft.
    const bool lean = bwd_sm90_producer_regs(p.model.p.block_m, D) == kProducerRegsLean;
    // The split-rank variants (kSplit) exist for each tile's default split (bwd_sm90_split_rank).
    const bool split = bwd_sm90_split_rank(p.model, D);
    // The writer-rank variants (kWRank): full-mask shift's closed-form rank (kWRankShift) or causal
    // symmetric shift's (kWRankSym, 64-row tiles only), computed by the dQ writer
    // (bwd_sm90_writer_rank).
    const bool wrank = bwd_sm90_writer_rank(p.model, D);
    if (p.model.p.block_m == kBM80) {
      if constexpr (kHasBm80Lean<T, D, C>) {
        if constexpr (!C) {  // (causal 80-row tiles: no rank variants)
          // Two dQ staging buffers, one dO stage, one dS buffer (shift by default: bwd_sm90_dq2_for).
          if constexpr (kHasBm80Dq2<T, D, C>) {
            if (lean && bwd_sm90_dq2_for(p.model.schedule)) {
              // Opt-in (DASH_BWD_SM90_DQ2_EARLY_DV=1, bf16; measured: docs/perf.md v25 item 1): the
              // early-dV variant, base and shift's writer rank (the split-rank variant keeps the
              // default kernel).
              if constexpr (std::is_same_v<T, __nv_bfloat16>) {
                if (bwd_sm90_dq2_early_dv_enabled() && !split) {
                  if (wrank)
                    return launch_main<T, D, C, false, kBM80, true, false, kWRankShift, true, true>(p, maps, num_ctas, stream);
                  return launch_main<T, D, C, false, kBM80, true, false, 0, true, true>(p, maps, num_ctas, stream);
                }
              }
              if (wrank) return launch_main<T, D, C, false, kBM80, true, false, kWRankShift, true>(p, maps, num_ctas, stream);
              if (split) return launch_main<T, D, C, false, kBM80, true, true, 0, true>(p, maps, num_ctas, stream);
              return launch_main<T, D, C, false, kBM80, true, false, 0, true>(p, maps, num_ctas, stream);
            }
          }
          if (lean && wrank) return launch_main<T, D, C, false, kBM80, true, false, kWRankShift>(p, maps, num_ctas, stream);
          if (lean && split) return launch_main<T, D, C, false, kBM80, true, true>(p, maps, num_ctas, stream);
        } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
          // The causal draft's two-buffer kernel (DRAFT, twenty-eighth session; bwd_sm90_has_dq2): bf16,
          // the early-dV variant only (the causal base two-buffer kernel spilled 8 B, this one
          // compiles clean), for the schedules bwd_sm90_dq2_for names (DASH_BWD_SM90_DQ2=1: every one).
          // Shift / symmetric shift count their rank in one warp (no rank variants at causal 80 rows).
          if (lean && bwd_sm90_dq2_for(p.model.schedule))
            return launch_main<T, D, C, false, kBM80, true, false, 0, true, true>(p, maps, num_ctas, stream);
        }
        if (lean) return launch_main<T, D, C, false, kBM80, true>(p, maps, num_ctas, stream);
      }
      if constexpr (kHasBm80Wide<T, D, C>) {
        if constexpr (D == 64 && !C) {  // (causal 80-row tiles: no rank variants)
          if (!lean && wrank) return launch_main<T, D, C, false, kBM80, false, false, kWRankShift>(p, maps, num_ctas, stream);
          if (!lean && split) return launch_main<T, D, C, false, kBM80, false, true>(p, maps, num_ctas, stream);
        }
        if (!lean) return launch_main<T, D, C, false, kBM80>(p, maps, num_ctas, stream);
      }
      return cudaErrorNotSupported;  // no such 80-row kernel (the host asks bwd_sm90_has_bm80 first)
    }
    if (p.model.p.block_m == kBM96) return run_d64_tall<kBM96>(p, maps, num_ctas, stream, lean, wrank, split);
    if (p.model.p.block_m == kBM112) return run_d64_tall<kBM112>(p, maps, num_ctas, stream, lean, wrank, split);
    // DASH_BWD_LAGGED_DQ=1 (draft): the lagged-dQ variant, head_dim 128 only.
    if constexpr (D == 128) {
      if (bwd_lagged_dq_enabled()) return launch_main<T, D, C, true>(p, maps, num_ctas, stream);
    }
    if (lean) return launch_main<T, D, C, false, kBM, true>(p, maps, num_ctas, stream);
    if (wrank) return launch_main<T, D, C, false, kBM, false, false, C ? kWRankSym : kWRankShift>(p, maps, num_ctas, stream);
    if (split) return launch_main<T, D, C, false, kBM, false, true>(p, maps, num_ctas, stream);
    return launch_main<T, D, C, false>(p, maps, num_ctas, stream);
  }
};
template <typename T, int D, bool C>
struct OccupancyQuery {
  static cudaError_t run(int block_m, int* ctas_per_sm) {
    if (block_m == kBM80) {
      // Either split: the same shared memory and launch bounds (kLean: 48 static bytes more).
      if constexpr (kHasBm80<T, D, C>) return occupancy<T, D, C, kBM80, kHasBm80Lean<T, D, C>>(ctas_per_sm);
      return cudaErrorNotSupported;
    }
    if (block_m == kBM96 || block_m == kBM112) {
      if constexpr (D == 64)
        return block_m == kBM96 ? occupancy<T, D, C, kBM96, false>(ctas_per_sm) : occupancy<T, D, C, kBM112, false>(ctas_per_sm);
      return cudaErrorNotSupported;
    }
    return occupancy<T, D, C>(ctas_per_sm);
  }
};
// f(std::integral_constant<int, BM>) for the run-time tile height block_m: 64, 80, and at head_dim
// 64 also 96 / 112 (the heights the sm90 kernels are built for).
template <int D, typename F>
cudaError_t with_tile_height(int block_m, F&& f) {
  if (block_m == kBM80) return f(std::integral_constant<int, kBM80>{});
  if constexpr (D == 64) {
    if (block_m == kBM96) return f(std::integral_constant<int, kBM96>{});
    if (block_m == kBM112) return f(std::integral_constant<int, kBM112>{});
  }
  return f(std::integral_constant<int, kBM>{});
}

template <typename T, int D, bool C>
struct PostLauncher {
  static cudaError_t run(const BwdKernelParams& p, cudaStream_t stream) {
    const TileProblem& tp = p.model.p;
    return with_tile_height<D>(tp.block_m, [&](auto bm) {
      constexpr int BM = decltype(bm)::value;
      if (p.post_poll)  // one block per dQ tile
        return launch_kernel(true, attn_bwd_sm90_postprocess_poll<T, D, BM>, dim3(tp.m_tiles(), tp.heads_q, tp.batch),
                             dim3(256), 0, stream, p);
      const dim3 grid((tp.m_tiles() * BM * D / 4 + 255) / 256, tp.heads_q, tp.batch);  // a thread per chunk
      if constexpr (BM == kBM)
        return launch_kernel(p.pdl != 0, attn_bwd_postprocess_sm90<T>, grid, dim3(256), 0, stream, p, D);
      else  // the tall tiles' staging order (dQ^T)
        return launch_kernel(p.pdl != 0, attn_bwd_postprocess_sm90_bm80<T, D, BM>, grid, dim3(256), 0, stream, p);
    });
  }
};

}  // namespace

cudaError_t bwd_sm90_prepare(const AttnShape& s, const TensorRef& q, const TensorRef& k, const TensorRef& v,
                             const TensorRef& dout, int block_m, BwdSm90Maps* maps) {
  if (!bwd_sm90_covers(s.dtype, s.head_dim)) return cudaErrorNotSupported;
  const bool tall_ok = (block_m == kBM80 || ((block_m == kBM96 || block_m == kBM112) && s.head_dim == 64)) &&
                       bwd_sm90_has_bm80(s);
  if (block_m != kBM && !tall_ok) return cudaErrorNotSupported;
  if (!current_device_is_sm90()) return cudaErrorNotSupported;  // sm_90a code only
  const Strides3 sq{q.sb, q.ss, q.sh}, sk{k.sb, k.ss, k.sh}, sv{v.sb, v.ss, v.sh}, sd{dout.sb, dout.ss, dout.sh};
  const DType dt = s.dtype;
  // A stride the TMA cannot express is "not supported": the caller uses the sm80 kernel.
  if (!make_tma_desc_4d(&maps->q, dt, q.ptr, s.batch, s.seqlen_q, s.heads_q, s.head_dim, sq, block_m).ok() ||
      !make_tma_desc_4d(&maps->dout, dt, dout.ptr, s.batch, s.seqlen_q, s.heads_q, s.head_dim, sd, block_m).ok() ||
      !make_tma_desc_4d(&maps->k, dt, k.ptr, s.batch, s.seqlen_k, s.heads_kv, s.head_dim, sk, kBN).ok() ||
      !make_tma_desc_4d(&maps->v, dt, v.ptr, s.batch, s.seqlen_k, s.heads_kv, s.head_dim, sv, kBN).ok())
    return cudaErrorNotSupported;
  return cudaSuccess;
}

cudaError_t launch_bwd_main_sm90(const BwdKernelParams& p, const BwdSm90Maps& maps, int head_dim, DType dtype,
                                 bool causal, int num_ctas, cudaStream_t stream) {
  if (p.model.p.block_n != kBN) return cudaErrorNotSupported;
  if (!bwd_sm90_covers(dtype, head_dim)) return cudaErrorNotSupported;
  const int bm = p.model.p.block_m;
  if (bm != kBM && bm != kBM80 && bm != kBM96 && bm != kBM112) return cudaErrorNotSupported;  // MainLauncher: which tall kernels exist
  return dispatch<MainLauncher>(dtype, head_dim, causal, p, maps, num_ctas, stream);
}

cudaError_t launch_bwd_postprocess_sm90(const BwdKernelParams& p, int head_dim, DType dtype, cudaStream_t stream) {
  if (!bwd_sm90_covers(dtype, head_dim)) return cudaErrorNotSupported;
  return dispatch<PostLauncher>(dtype, head_dim, false, p, stream);
}

cudaError_t bwd_main_sm90_occupancy(int head_dim, DType dtype, bool causal, int block_m, int* ctas_per_sm) {
  if (!bwd_sm90_covers(dtype, head_dim)) return cudaErrorNotSupported;
  return dispatch<OccupancyQuery>(dtype, head_dim, causal, block_m, ctas_per_sm);
}

}  // namespace dash::kernels
