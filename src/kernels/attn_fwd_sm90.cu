// Attention forward (O and LSE), Hopper-native version (hopper-guide stages 2/3, docs/fwd-sm90.md).
// bf16 and fp16 (the fp16 instantiations were a draft until they passed on an H200): the
// kernel is templated on the element type T, which changes only the wgmma type, the P fragment
// packing, the TMA data type and the O conversion.
//
// One CTA per (128-row Q tile, query head, batch); 384 threads = 3 warpgroups:
//   WG0  producer: setmaxnreg 24; one thread issues every TMA load (Q once, then K/V tiles of
//        128 keys into a 2-stage ring, 3 in the ping-pong variant), the other producer warps
//        leave after setmaxnreg.
//   WG1, WG2  consumers: setmaxnreg 240; each owns 64 query rows of the tile.
// Per key block (processed from the last visible block down to block 0):
//   S = Q K^T   wgmma SS m64n128k16, both operands K-major (hdim as 64-wide sub-tiles); at head_dim
//               128 causal wgmma RS with Q as register fragments (fwd_q_regs, docs/fwd-sm90.md)
//   online softmax in registers (exp2, softmax scale folded into the exponent)
//   O += P V    wgmma RS m64n{D}k16: P is the S accumulator packed to T (bf16/f16) A fragments,
//               V [keys][d] is the B operand in MN-major form (transpose immediate 1)
// The next block's S GEMM is issued before this block's P V GEMM, so the softmax of block j+1
// runs while the tensor cores do P_j V_j (FA3's intra-warpgroup overlap, written from scratch).
//
// Barriers (all mbarriers, dynamic-smem independent, static __shared__):
//   q_full            count 1 + tx (Q bytes)           parity 0, used once
//   k_full[s], v_full[s]  count 1 + tx (K/V tile bytes) use u of stage s waits parity u & 1
//   kv_empty[s]       count 8 (lane 0 of each consumer warp, after the P V GEMM of the stage)
//                     producer's use u of stage s waits parity (u & 1) ^ 1 (first pass falls through)
//   k_empty[s]        (fwd_split_kv_release kernels: 176-key tiles, hdim 64 full) count 8, after the
//                     S GEMM that read K of the stage; the producer waits it before the K load and
//                     kv_empty (then V only) before the V load
// Expected bytes are whole boxes: TMA counts the zero-filled rows past seqlen as delivered.
//
// Ping-pong variant (kPingPong, DASH_FWD_PINGPONG=1; NOT YET RUN ON A GPU, docs/fwd-sm90.md):
// the same per-row math, plus two named barriers that make the consumer warpgroups take turns
// issuing their GEMMs (WG1, WG2, WG1, ...), so that one warpgroup's softmax runs while the other
// one's GEMMs occupy the tensor cores; and a 3-stage K/V ring instead of 2.
//   kBarTurnWG1 / kBarTurnWG2 (ids 1 / 2, 256 threads): WG w bar.syncs its own id before issuing
//   the GEMMs of a step and bar.arrives on the other WG's id right after issuing them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

#include <cuda.h>
#include <cuda/ptx>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "api/tma_desc.h"
#include "kernels/kernel_params.h"
#include "kernels/sm90/fragment.cuh"
#include "kernels/sm90/smem_desc.cuh"
#include "kernels/sm90/swizzle.cuh"
#include "kernels/sm90/tma_pipeline.cuh"
#include "kernels/tile_io.cuh"
#include "ptx/barrier.cuh"
#include "ptx/math.cuh"
#include "ptx/mma_sm80.cuh"
#include "ptx/tma.cuh"
#include "ptx/warpgroup.cuh"
#include "ptx/wgmma.cuh"

namespace dash::kernels {
namespace {

constexpr int kBM = 128;           // query rows per CTA (2 consumer warpgroups x 64)
constexpr int kBNBase = 128;       // keys per K/V tile
// 176-key tiles (DASH_FWD_BN176=1, head_dim 128, full masks; docs/fwd-sm90.md "176-key tiles"):
// 27% fewer key blocks per Q tile, so the per-block fixed costs (row max / sum shuffles, the
// rescale of O, barrier and issue overhead) are shared by more keys. S takes 88 registers per
// consumer thread instead of 64, P 44 instead of 32; the K/V ring has 2 stages (3 do not fit).
constexpr int kBN176 = 176;
constexpr int kStagesBase = 2;      // K/V ring depth, default variant
constexpr int kStagesPingPong = 3;  // K/V ring depth, ping-pong variant (128-key tiles)
constexpr int fwd_stages(bool pingpong, int bn) { return pingpong && bn == kBNBase ? kStagesPingPong : kStagesBase; }
// K and V of a stage released separately: K after the S GEMM that read it (k_empty), V after the
// P V GEMM (kv_empty), instead of both after P V. With one release, a 2-stage ring has the
// next-but-one K load start only when the current P V ends, one block before that K is needed:
// the 176-key kernels' ping-pong variant starved (0.72-0.77 of the 128-key speed; with the split
// release 0.97-1.02, H200, 114b83c / 82703d9). In the 128-key kernels (scripts/gpu-next25.sh,
// old / new forward time, min of 3 rounds): hdim 64 full 1.007-1.019 (kept), hdim 128 0.996-1.005
// (not kept: the same speed), hdim 64 causal 0.946-0.974 (not kept). docs/fwd-sm90.md.
constexpr bool fwd_split_kv_release(int bn, int d, bool causal) { return bn != kBNBase || (d == 64 && !causal); }
constexpr int kThreads = 384;      // producer WG + 2 consumer WGs
constexpr int kProducerRegs = 24;
constexpr int kConsumerRegs = 240;
constexpr int kConsumerWarps = 8;  // arrivals on kv_empty per phase
static_assert(kProducerRegs * 128 + 2 * kConsumerRegs * 128 <= 65536, "setmaxnreg budget");
// Named barriers of the ping-pong variant (id 0 is __syncthreads, the only other one this kernel
// uses). Each is shared by the two consumer warpgroups: 128 bar.sync + 128 bar.arrive.
constexpr int kBarTurnWG1 = 1;  // WG1 may issue its GEMMs
constexpr int kBarTurnWG2 = 2;  // WG2 may issue its GEMMs
constexpr int kTurnThreads = 256;
constexpr size_t kMaxSmemPerCta = 227 * 1024;  // sm_90 opt-in limit (dynamic + static)
// Q as register A fragments of the S GEMM (wgmma RS, loaded once per tile with ldmatrix) instead
// of the shared-memory operand (SS): the S GEMM then reads only K from shared memory, and Q's
// buffer is released as soon as the fragments are loaded; D / 4 more registers per consumer
// thread, the same bits. Measured (H200, docs/perf.md v26 item 4, min of 3 interleaved rounds):
// hdim 128 causal 1.009-1.034x at 1k-16k (faster in every round), hdim 128 full 0.97-0.98x from
// 2k, hdim 64 0.94-0.98x from 4k. So the default is head_dim 128 causal only;
// DASH_FWD_Q_REGS=1 / 0 builds every 128-key kernel with / without it (experiments).
#ifndef DASH_FWD_Q_REGS
#define DASH_FWD_Q_REGS -1
#endif
constexpr bool fwd_q_regs(int d, bool causal, int bn) {
  return bn == kBNBase && (DASH_FWD_Q_REGS == 1 || (DASH_FWD_Q_REGS < 0 && d == 128 && causal));
}

// Byte sizes of the smem tiles ([rows x 64] 2-byte (bf16/f16) sub-tiles, 128 B per row, 1024 B aligned).
template <int D, int kStages, int kBN>
struct Sm90FwdSmem {
  static constexpr uint32_t kQBytes = sm90::subtile_bytes(kBM) * (D / 64);   // one TMA box per sub-tile
  static constexpr uint32_t kKVBytes = sm90::subtile_bytes(kBN) * (D / 64);  // one K or one V tile
  static constexpr uint32_t kQOff = 0;
  static constexpr uint32_t kKOff = kQOff + kQBytes;
  static constexpr uint32_t kVOff = kKOff + kStages * kKVBytes;
  static constexpr uint32_t kTotal = kVOff + kStages * kKVBytes;
  static constexpr size_t kDynamicBytes = kTotal + sm90::kSwizzleAtomBytes;  // alignment slack
  static_assert(kQBytes % sm90::kSwizzleAtomBytes == 0 && kKVBytes % sm90::kSwizzleAtomBytes == 0,
                "every sub-tile base stays 1024-byte aligned");
  // + static shared memory: ptxas reports 1024 B (the mbarriers, padded for the 1024-aligned
  // dynamic window), cuobjdump -res-usage SHARED:2048; the larger one is assumed. hdim 128 with
  // 3 stages: 225 KiB dynamic + 2 KiB = 227 KiB, exactly the limit.
  static_assert(kDynamicBytes + 2048 <= kMaxSmemPerCta, "K/V ring does not fit in shared memory");
};

enum WaitWhat : int { kWaitQ = 0, kWaitK = 1, kWaitV = 2, kWaitEmpty = 3, kWaitQEmpty = 4 };

// mbarrier parity wait. DASH_DEBUG_WAITS: bounded (~2^32 clocks, about 2 s) and traps with what
// was awaited, the stage and the parity instead of hanging (hopper-guide 6).
__device__ __forceinline__ void wait_stage(uint64_t* bar, uint32_t parity, int what, int stage) {
#ifdef DASH_DEBUG_WAITS
  const long long t0 = clock64();
  while (!cuda::ptx::mbarrier_try_wait_parity(bar, parity)) {
    if (clock64() - t0 > (1ll << 32)) {
      const char* names[5] = {"Q full", "K full", "V full", "KV empty", "Q empty"};
      printf("dash-attn fwd_sm90: mbarrier wait timed out: %s stage %d parity %u block (%d,%d,%d) thread %d\n",
             names[what % 5], stage, parity, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x);
      __trap();
    }
  }
#else
  (void)what;
  (void)stage;
  while (!cuda::ptx::mbarrier_try_wait_parity(bar, parity)) {
  }
#endif
}

// Key blocks [0, n) of kBN keys that some row of the tile at m0 can see (bottom-right aligned causal).
template <int kBN>
__device__ __forceinline__ int num_key_blocks(int m0, int seqlen_q, int seqlen_k, bool causal) {
  const int n_all = (seqlen_k + kBN - 1) / kBN;
  if (!causal) return n_all;
  const int last_row = min(m0 + kBM, seqlen_q) - 1;
  const int last_key = last_row + (seqlen_k - seqlen_q);
  if (last_key < 0) return 0;
  return min(n_all, last_key / kBN + 1);
}

// Work units and their tiles. A CTA takes units blockIdx.x, blockIdx.x + gridDim.x, ... (one
// unit per CTA when the grid covers them all; persistent: one CTA per SM loops over them).
// Units run in (batch, head)-major order so that the CTAs running at once share K/V in L2.
//   full:   a unit is one 128-row Q tile, taken last tile first;
//   causal, up to kPairMaxTiles Q tiles per head: a unit is the pair (nx-1-i, i) (the heaviest
//           and the lightest remaining tile of a head; the middle tile alone when nx is odd):
//           every pair sees about nx+1 key blocks, so a static round robin over pairs is as
//           balanced as the hardware's dynamic scheduling;
//   causal, longer: a unit is one tile, heaviest first, one CTA per unit (not persistent): there
//           the quantisation of equal pairs over the SMs cost 1.0-2.8% at 16k (H200, 7207a2d),
//           more than the persistent loop saves, and single tiles taken by the hardware in
//           decreasing weight fill the last wave.
// Any CTA computes any tile with the same instructions, so the bits do not depend on the grid.
constexpr int kPairMaxTiles = 64;  // seqlen_q <= 8192

struct TileOrder {
  int nx;          // Q tiles per (batch, head)
  int per_head;    // units per (batch, head)
  int num_units;
  int heads_q;
  bool pair;       // causal pairs (nx-1-i, i)
  bool may_persist;
};

__host__ __device__ inline TileOrder make_tile_order(int seqlen_q, int heads_q, int batch, bool causal) {
  TileOrder o;
  o.nx = (seqlen_q + kBM - 1) / kBM;
  o.pair = causal && o.nx <= kPairMaxTiles;
  o.may_persist = !causal || o.pair;
  o.per_head = o.pair ? (o.nx + 1) / 2 : o.nx;
  o.num_units = o.per_head * heads_q * batch;
  o.heads_q = heads_q;
  return o;
}

// Tile `k` (0 or 1) of unit u: its Q tile index, query head and batch; false if the unit has no
// tile k (not paired: k = 1; paired: k = 1 of the middle tile).
__device__ __forceinline__ bool unit_tile(const TileOrder& o, int u, int k, int* m_block, int* hq, int* b) {
  const int i = u % o.per_head;
  const int hb = u / o.per_head;
  *hq = hb % o.heads_q;
  *b = hb / o.heads_q;
  if (k == 0) {
    *m_block = o.nx - 1 - i;
    return true;
  }
  *m_block = i;
  return o.pair && i != o.nx - 1 - i;
}

// Mask (when needed), row max, rescale factor, exponentials and partial row sums for one key
// block held in the S accumulator (m64n128 layout). On return s holds P (fp32, unnormalised).
// Row h (0: r, 1: r + 8) of this thread owns registers i with (i % 4) / 2 == h.
template <bool kMask, int kFmaEvery, int kAcc>
__device__ __forceinline__ void softmax_block(float (&s)[kAcc], int key0, const int (&key_lim)[2],
                                              float (&row_max)[2], float (&row_sum)[2], float (&corr)[2],
                                              float scale_log2, int quad) {
  constexpr int kBN = 2 * kAcc;  // keys in the block (m64nN accumulator: N / 2 registers)
  float mx[2] = {row_max[0], row_max[1]};
#pragma unroll
  for (int i = 0; i < kBN / 2; ++i) {
    const int h = (i % 4) / 2;
    if constexpr (kMask) {
      const int key = key0 + 8 * (i / 4) + 2 * quad + (i % 2);
      if (key > key_lim[h]) s[i] = -INFINITY;
    }
    mx[h] = fmaxf(mx[h], s[i]);
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
    mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
  }
  float base[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    // A row with no visible key so far keeps max -inf: its P is exp2(-inf) = 0 and O stays 0.
    base[h] = mx[h] == -INFINITY ? 0.f : mx[h] * scale_log2;
    corr[h] = row_max[h] == -INFINITY ? 0.f : ptx::ex2_approx_ftz(row_max[h] * scale_log2 - base[h]);
    row_max[h] = mx[h];
    row_sum[h] *= corr[h];
  }
#pragma unroll
  for (int i = 0; i < kBN / 2; ++i) {
    const int h = (i % 4) / 2;
    s[i] = ptx::ex2_mixed<kFmaEvery>(i, fmaf(s[i], scale_log2, -base[h]));
    row_sum[h] += s[i];
  }
}

template <typename T, int D, bool kCausal, bool kPingPong, int kBN>
__global__ void __launch_bounds__(kThreads, 1)
    attn_fwd_sm90_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                         const __grid_constant__ CUtensorMap tm_v, const FwdKernelParams p) {
  constexpr int kStages = fwd_stages(kPingPong, kBN);
  using L = Sm90FwdSmem<D, kStages, kBN>;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  constexpr bool kSplitKV = fwd_split_kv_release(kBN, D, kCausal);
  constexpr bool kQR = fwd_q_regs(D, kCausal, kBN);  // Q in registers (never for the 176-key draft)
  __shared__ __align__(8) uint64_t bars[2 + (kSplitKV ? 4 : 3) * kStages];
  uint64_t* q_full = &bars[0];
  uint64_t* k_full = &bars[1];
  uint64_t* v_full = &bars[1 + kStages];
  uint64_t* kv_empty = &bars[1 + 2 * kStages];  // kSplitKV: V only
  uint64_t* q_empty = &bars[1 + 3 * kStages];
  uint64_t* k_empty = &bars[2 + 3 * kStages];   // kSplitKV only

  uint8_t* smem = sm90::align_swizzle_atom(smem_raw);
  uint8_t* sQ = smem + L::kQOff;
  uint8_t* sK = smem + L::kKOff;
  uint8_t* sV = smem + L::kVOff;

  const TileOrder order = make_tile_order(p.seqlen_q, p.heads_q, p.batch, kCausal);
  if (threadIdx.x == 0) {
    ptx::prefetch_tensormap(&tm_q);
    ptx::prefetch_tensormap(&tm_k);
    ptx::prefetch_tensormap(&tm_v);
    cuda::ptx::mbarrier_init(q_full, 1);
    for (int s = 0; s < kStages; ++s) {
      cuda::ptx::mbarrier_init(&k_full[s], 1);
      cuda::ptx::mbarrier_init(&v_full[s], 1);
      cuda::ptx::mbarrier_init(&kv_empty[s], kConsumerWarps);
      if constexpr (kSplitKV) cuda::ptx::mbarrier_init(&k_empty[s], kConsumerWarps);
    }
    cuda::ptx::mbarrier_init(q_empty, kConsumerWarps);
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  }
  __syncthreads();

  // broadcast from lane 0: the compiler then knows it is warp-uniform (uniform-register descriptors)
  const int wg = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 128), 0);
  if (wg == 0) {
    // ---------------------------------------------------------------- producer warpgroup
    ptx::setmaxnreg_dec<kProducerRegs>();
    if (threadIdx.x == 0) {
      uint32_t kv_count = 0;  // K/V ring uses so far (all tiles of this CTA)
      uint32_t q_count = 0;   // Q loads so far
#pragma unroll 1
      for (int u = blockIdx.x; u < order.num_units; u += gridDim.x) {
#pragma unroll 1
        for (int k = 0; k < 2; ++k) {
          int m_block, hq, b;
          if (!unit_tile(order, u, k, &m_block, &hq, &b)) break;
          const int m0 = m_block * kBM;
          const int n_blocks = num_key_blocks<kBN>(m0, p.seqlen_q, p.seqlen_k, kCausal);
          if (n_blocks == 0) continue;
          const int hk = hq / (p.heads_q / p.heads_kv);
          // Q is refilled once both consumer warpgroups' last S GEMM of the previous tile is done.
          wait_stage(q_empty, (q_count & 1) ^ 1, kWaitQEmpty, 0);
          ++q_count;
          sm90::mbar_arrive_expect_tx(q_full, L::kQBytes);
#pragma unroll
          for (int c = 0; c < D / 64; ++c)
            sm90::tma_load_4d(sQ + c * sm90::subtile_bytes(kBM), &tm_q, 64 * c, m0, hq, b, q_full);
#pragma unroll 1
          for (int it = 0; it < n_blocks; ++it, ++kv_count) {
            const int s = kv_count % kStages;
            const uint32_t use_parity = (kv_count / kStages) & 1;
            const int j = n_blocks - 1 - it;
            wait_stage(kSplitKV ? &k_empty[s] : &kv_empty[s], use_parity ^ 1, kWaitEmpty, s);
            uint8_t* k_dst = sK + s * L::kKVBytes;
            uint8_t* v_dst = sV + s * L::kKVBytes;
            sm90::mbar_arrive_expect_tx(&k_full[s], L::kKVBytes);
#pragma unroll
            for (int c = 0; c < D / 64; ++c)
              sm90::tma_load_4d(k_dst + c * sm90::subtile_bytes(kBN), &tm_k, 64 * c, j * kBN, hk, b, &k_full[s]);
            if constexpr (kSplitKV) wait_stage(&kv_empty[s], use_parity ^ 1, kWaitEmpty, s);
            sm90::mbar_arrive_expect_tx(&v_full[s], L::kKVBytes);
#pragma unroll
            for (int c = 0; c < D / 64; ++c)
              sm90::tma_load_4d(v_dst + c * sm90::subtile_bytes(kBN), &tm_v, 64 * c, j * kBN, hk, b, &v_full[s]);
          }
        }
      }
    }
    return;
  }

  // ------------------------------------------------------------------ consumer warpgroups
  ptx::setmaxnreg_inc<kConsumerRegs>();
  const int cw = wg - 1;                    // 0 or 1: rows 64*cw .. 64*cw+63 of the tile
  const int t = threadIdx.x % 128;          // thread in the warpgroup
  const int warp = t / 32, lane = t % 32, quad = lane % 4;
  const int diag = p.seqlen_k - p.seqlen_q;
  // Descriptors: Q rows of this warpgroup (A, K-major), K (B, K-major), V (B, MN-major).
  const uint64_t desc_q = sm90::make_kmajor_desc(sQ + 64 * cw * sm90::kSwizzleBytes);
  const uint64_t desc_k0 = sm90::make_kmajor_desc(sK);
  const uint64_t desc_v0 = sm90::make_mnmajor_desc(sV, sm90::subtile_bytes(kBN));
  uint32_t kv_count = 0;  // same counts as the producer's
  uint32_t q_count = 0;

#pragma unroll 1
  for (int u = blockIdx.x; u < order.num_units; u += gridDim.x) {
#pragma unroll 1
    for (int k = 0; k < 2; ++k) {
      int m_block, hq, b;
      if (!unit_tile(order, u, k, &m_block, &hq, &b)) break;
      const int m0 = m_block * kBM;
      const int n_blocks = num_key_blocks<kBN>(m0, p.seqlen_q, p.seqlen_k, kCausal);
      const int r0 = m0 + 64 * cw + 16 * warp + lane / 4;  // this thread's rows: r0 and r0 + 8

      // Last visible key per row, and the smallest over the warpgroup (blocks past it need no mask).
      int key_lim[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) key_lim[h] = kCausal ? min(p.seqlen_k - 1, r0 + 8 * h + diag) : p.seqlen_k - 1;
      const int wg_key_lim = kCausal ? min(p.seqlen_k - 1, m0 + 64 * cw + diag) : p.seqlen_k - 1;

      float o[D / 2];
#pragma unroll
      for (int i = 0; i < D / 2; ++i) o[i] = 0.f;
      float row_max[2] = {-INFINITY, -INFINITY};
      float row_sum[2] = {0.f, 0.f};

      if (n_blocks > 0) {
        // k16 step kk of the hdim: sub-tile kk / 4, 32 B per step inside it.
        auto qk_step = [](int kk, uint32_t subtile) -> uint32_t {
          return (kk / 4) * subtile + (kk % 4) * sm90::kKMajorStepBytes;
        };

        float s[kBN / 2];
        uint32_t pf[kBN / 16][4];
        uint32_t qf[kQR ? D / 16 : 1][4];  // kQR: this warpgroup's 64 Q rows as A fragments

        auto issue_qk = [&](int stage) {
          const uint64_t desc_k = sm90::advance_smem_desc(desc_k0, stage * L::kKVBytes);
          ptx::warpgroup_fence_operand(s);
          if constexpr (kQR) {
#pragma unroll
            for (int kk = 0; kk < D / 16; ++kk) ptx::warpgroup_fence_operand(qf[kk]);
          }
          ptx::wgmma_fence();
#pragma unroll
          for (int kk = 0; kk < D / 16; ++kk) {
            const uint64_t dk = sm90::advance_smem_desc(desc_k, qk_step(kk, sm90::subtile_bytes(kBN)));
            if constexpr (kQR)
              ptx::wgmma_rs<kBN, 0, T>(s, qf[kk], dk, kk > 0 ? 1 : 0);
            else
              ptx::wgmma_ss<kBN, 0, 0, T>(s, sm90::advance_smem_desc(desc_q, qk_step(kk, sm90::subtile_bytes(kBM))),
                                          dk, kk > 0 ? 1 : 0);
          }
          ptx::wgmma_commit_group();
        };
        auto issue_pv = [&](int stage) {
          const uint64_t desc_v = sm90::advance_smem_desc(desc_v0, stage * L::kKVBytes);
          ptx::warpgroup_fence_operand(o);
#pragma unroll
          for (int kb = 0; kb < kBN / 16; ++kb) ptx::warpgroup_fence_operand(pf[kb]);
          ptx::wgmma_fence();
#pragma unroll
          for (int kb = 0; kb < kBN / 16; ++kb)
            ptx::wgmma_rs<D, 1, T>(o, pf[kb], sm90::advance_smem_desc(desc_v, kb * sm90::kMNMajorStepBytes), 1);
          ptx::wgmma_commit_group();
        };
        auto softmax = [&](int j, float (&corr)[2]) {
          const int key0 = j * kBN;
          if (key0 + kBN - 1 > wg_key_lim)
            softmax_block<true, ptx::fwd_exp2_fma_every(D)>(s, key0, key_lim, row_max, row_sum, corr, p.scale_log2, quad);
          else
            softmax_block<false, ptx::fwd_exp2_fma_every(D)>(s, key0, key_lim, row_max, row_sum, corr, p.scale_log2, quad);
        };
        auto to_pfrag = [&]() {
#pragma unroll
          for (int kb = 0; kb < kBN / 16; ++kb) sm90::acc_to_a_frag<T>(s, kb, pf[kb]);
        };
        // This warp's last read of Q in this tile is done: the producer may load the next tile's.
        auto release_q = [&]() {
          if (lane == 0) cuda::ptx::mbarrier_arrive(q_empty);
        };
        auto stage_of = [&](int it) { return static_cast<int>((kv_count + it) % kStages); };
        auto parity_of = [&](int it) { return static_cast<uint32_t>(((kv_count + it) / kStages) & 1); };

        // Ping-pong turns (kPingPong only): wait for this warpgroup's turn to issue GEMMs, and hand
        // the turn to the other one right after issuing. Both WGs take n_blocks + 1 turns per tile
        // (prologue, n_blocks - 1 loop steps, tail); WG2 gives WG1 the first turn and skips its last
        // hand-off, so each barrier completes exactly n_blocks + 1 phases per tile and none is left
        // half-arrived when the next tile starts (WG2 reaches it only after WG1's last turn).
        auto take_turn = [&]() {
          if constexpr (kPingPong) ptx::named_bar_sync(cw == 0 ? kBarTurnWG1 : kBarTurnWG2, kTurnThreads);
        };
        auto pass_turn = [&]() {
          if constexpr (kPingPong) ptx::named_bar_arrive(cw == 0 ? kBarTurnWG2 : kBarTurnWG1, kTurnThreads);
        };
        if constexpr (kPingPong) {
          if (cw == 1) ptx::named_bar_arrive(kBarTurnWG1, kTurnThreads);  // WG1 goes first
        }

        wait_stage(q_full, q_count & 1, kWaitQ, 0);
        ++q_count;
        if constexpr (kQR) {
          // A fragments of rows 64 cw + 16 warp + [0, 16): ldmatrix.x4 matrix m = lane / 8 is rows
          // +8 (m % 2), k columns +8 (m / 2) of the k16 step, i.e. registers a0..a3 of wgmma's A.
          const int m = lane / 8, r = lane % 8;
          const uint32_t q_base = ptx::smem_u32(sQ);
#pragma unroll
          for (int kk = 0; kk < D / 16; ++kk)
            ptx::ldmatrix_x4(qf[kk], q_base + (kk / 4) * sm90::subtile_bytes(kBM) +
                                         sm90::swizzle128_offset(64 * cw + 16 * warp + r + 8 * (m % 2),
                                                                 (kk % 4) * 16 + 8 * (m / 2)));
          release_q();  // the fragments are loaded (ldmatrix is ordered before the arrive's release)
        }

        // Where Q is released (docs/perf.md v12, H200 A/B against one CTA per tile):
        //   hdim 128: a second copy of the step that computes the tile's last S (it = n_blocks - 2)
        //     releases it, right after that S. Predicated inside the loop instead, the forward at
        //     full 8k-16k was 1.0-1.9% slower; at the tail, up to 7% slower at 512-2k, where the
        //     next tile's Q load then shows.
        //   hdim 64: the tail (before the last P V) releases it: with the second copy the causal
        //     forward at 4k-16k was 3.6-5.7% slower than this.
        constexpr bool kPeelLastS = D == 128 && !kQR;

        // Prologue: S_0 and its softmax (O is still zero, no rescale).
        {
          float corr[2];
          const int st0 = stage_of(0);
          wait_stage(&k_full[st0], parity_of(0), kWaitK, st0);
          take_turn();
          issue_qk(st0);
          pass_turn();
          ptx::wgmma_wait_group<0>();
          ptx::warpgroup_fence_operand(s);
          if constexpr (kSplitKV) {
            if (lane == 0) cuda::ptx::mbarrier_arrive(&k_empty[st0]);  // S_0 has read K_0
          }
          if (kPeelLastS && n_blocks == 1) release_q();  // (kQR: released after the ldmatrix)
          softmax(n_blocks - 1, corr);
          to_pfrag();
        }

        // Steady state, peeled so that the body has no "is there a next block" branches: with them
        // ptxas could not prove the S reads after wait_group 1 safe and serialised every wgmma (C7514).
        auto step = [&](int it, bool last_s) {  // S_{it+1} = Q K_{it+1}^T overlaps P_it V_it
          const int st = stage_of(it);
          const uint32_t ph = parity_of(it);
          const int st1 = stage_of(it + 1);
          wait_stage(&k_full[st1], parity_of(it + 1), kWaitK, st1);
          if constexpr (kPingPong) {
            // Both operands' tiles are resident before taking the turn, so the turn is held only
            // for the wgmma issue itself.
            wait_stage(&v_full[st], ph, kWaitV, st);
            take_turn();
            issue_qk(st1);
            issue_pv(st);
            pass_turn();
          } else {
            issue_qk(st1);
            wait_stage(&v_full[st], ph, kWaitV, st);
            issue_pv(st);
          }
          float corr[2];
          ptx::wgmma_wait_group<1>();  // S_{it+1} done (groups retire in order); P_it V_it may still run
          ptx::warpgroup_fence_operand(s);
          if constexpr (kSplitKV) {
            if (lane == 0) cuda::ptx::mbarrier_arrive(&k_empty[st1]);  // S_{it+1} has read K_{it+1}
          }
          if (!kQR && last_s) release_q();  // that was the tile's last S GEMM
          softmax(n_blocks - 2 - it, corr);
          ptx::wgmma_wait_group<0>();  // P_it V_it done: O, the P fragments and stage st are free
          ptx::warpgroup_fence_operand(o);
#pragma unroll
          for (int kb = 0; kb < kBN / 16; ++kb) ptx::warpgroup_fence_operand(pf[kb]);
          if (lane == 0) cuda::ptx::mbarrier_arrive(&kv_empty[st]);
#pragma unroll
          for (int i = 0; i < D / 2; ++i) o[i] *= corr[(i % 4) / 2];
          to_pfrag();
        };
        if constexpr (kPeelLastS) {
#pragma unroll 1
          for (int it = 0; it + 2 < n_blocks; ++it) step(it, false);
          if (n_blocks >= 2) step(n_blocks - 2, true);
        } else {
#pragma unroll 1
          for (int it = 0; it + 1 < n_blocks; ++it) step(it, false);
        }
        {  // last block: P V only
          if constexpr (!kPeelLastS && !kQR) release_q();  // the tile's last S GEMM is done
          const int it = n_blocks - 1;
          const int st = stage_of(it);
          wait_stage(&v_full[st], parity_of(it), kWaitV, st);
          take_turn();
          issue_pv(st);
          if (cw == 0) pass_turn();  // WG2's last hand-off would have no taker
          ptx::wgmma_wait_group<0>();
          ptx::warpgroup_fence_operand(o);
#pragma unroll
          for (int kb = 0; kb < kBN / 16; ++kb) ptx::warpgroup_fence_operand(pf[kb]);
          if (lane == 0) cuda::ptx::mbarrier_arrive(&kv_empty[st]);
        }
        kv_count += n_blocks;
      }

      // Epilogue: normalise, store O (T, rows < seqlen_q) and LSE (natural log; -inf for rows
      // that see no key, whose O is 0). Straight from registers: the next tile's loads, already
      // in flight, do not wait for it.
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        row_sum[h] += __shfl_xor_sync(0xffffffffu, row_sum[h], 1);
        row_sum[h] += __shfl_xor_sync(0xffffffffu, row_sum[h], 2);
      }
      using V2 = typename Vec2<T>::type;
      T* o_base = static_cast<T*>(p.o.ptr) + (int64_t)b * p.o.sb + (int64_t)hq * p.o.sh;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = r0 + 8 * h;
        if (row >= p.seqlen_q) continue;
        const float inv = row_sum[h] > 0.f ? 1.f / row_sum[h] : 0.f;
        T* orow = o_base + (int64_t)row * p.o.ss;
#pragma unroll
        for (int n = 0; n < D / 8; ++n)
          *reinterpret_cast<V2*>(orow + 8 * n + 2 * quad) =
              Vec2<T>::make(o[4 * n + 2 * h] * inv, o[4 * n + 2 * h + 1] * inv);
        if (quad == 0) {
          const float lse = row_sum[h] > 0.f ? row_max[h] * p.scale + logf(row_sum[h]) : -INFINITY;
          p.lse[((int64_t)b * p.heads_q + hq) * p.seqlen_q + row] = lse;
        }
      }
    }
  }
}

template <typename T, int D, bool kCausal, bool kPingPong, int kBN>
cudaError_t launch(const FwdKernelParams& p, cudaStream_t stream) {
  using L = Sm90FwdSmem<D, fwd_stages(kPingPong, kBN), kBN>;
  CUtensorMap tm_q, tm_k, tm_v;
  const Strides3 sq{p.q.sb, p.q.ss, p.q.sh}, sk{p.k.sb, p.k.ss, p.k.sh}, sv{p.v.sb, p.v.ss, p.v.sh};
  // A stride the TMA cannot express (e.g. 0, unaligned) is "not supported": the caller falls back.
  constexpr DType kDtype = std::is_same_v<T, __half> ? DType::kFP16 : DType::kBF16;
  if (!make_tma_desc_4d(&tm_q, kDtype, p.q.ptr, p.batch, p.seqlen_q, p.heads_q, D, sq, kBM).ok() ||
      !make_tma_desc_4d(&tm_k, kDtype, p.k.ptr, p.batch, p.seqlen_k, p.heads_kv, D, sk, kBN).ok() ||
      !make_tma_desc_4d(&tm_v, kDtype, p.v.ptr, p.batch, p.seqlen_k, p.heads_kv, D, sv, kBN).ok())
    return cudaErrorNotSupported;
  auto kernel = attn_fwd_sm90_kernel<T, D, kCausal, kPingPong, kBN>;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(L::kDynamicBytes));
  if (err != cudaSuccess) return err;
  const TileOrder order = make_tile_order(p.seqlen_q, p.heads_q, p.batch, kCausal);
  int grid = order.num_units;  // one CTA per unit
  if (order.may_persist && fwd_persistent_enabled()) {
    // One CTA per SM (227 KiB of shared memory each at hdim 128, __launch_bounds__(384, 1)).
    int dev = 0, sms = 0;
    err = cudaGetDevice(&dev);
    if (err == cudaSuccess) err = cached_sm_count(dev, &sms);
    if (err != cudaSuccess) return err;
    const int cap = fwd_persistent_cta_cap();
    grid = std::min(grid, cap > 0 ? cap : sms);
  }
  if (grid <= 0) return cudaSuccess;  // seqlen_q, heads or batch 0: nothing to compute
  kernel<<<grid, kThreads, L::kDynamicBytes, stream>>>(tm_q, tm_k, tm_v, p);
  return cudaGetLastError();
}

template <typename T, int D, bool kCausal>
cudaError_t launch_variant(const FwdKernelParams& p, bool pingpong, cudaStream_t stream) {
  if constexpr (D == 128 && !kCausal) {
    if (fwd_bn176_enabled())
      return pingpong ? launch<T, D, false, true, kBN176>(p, stream) : launch<T, D, false, false, kBN176>(p, stream);
  }
  return pingpong ? launch<T, D, kCausal, true, kBNBase>(p, stream) : launch<T, D, kCausal, false, kBNBase>(p, stream);
}

}  // namespace

// Returns cudaErrorNotSupported (having launched nothing) for cases this kernel does not cover:
// a dtype other than bf16/fp16, head_dim other than 64/128, a device
// that is not sm_90, or strides TMA cannot encode.
cudaError_t launch_fwd_sm90(const FwdKernelParams& p, int head_dim, DType dtype, bool causal,
                            cudaStream_t stream) {
  const bool fp16 = dtype == DType::kFP16;
  if ((dtype != DType::kBF16 && !fp16) || (head_dim != 64 && head_dim != 128)) return cudaErrorNotSupported;
  // Work units are counted in int (one 1-D grid of them when not persistent).
  if ((int64_t)((p.seqlen_q + kBM - 1) / kBM) * p.heads_q * p.batch > INT32_MAX) return cudaErrorNotSupported;
  if (!current_device_is_sm90()) return cudaErrorNotSupported;  // sm_90a code only
  // The ping-pong variant unless DASH_FWD_PINGPONG=0. Read on every call, like DASH_FWD_SM90, so
  // that a test can switch it with setenv.
  const bool pp = fwd_pingpong_enabled();
  if (fp16) {
    if (head_dim == 64)
      return causal ? launch_variant<__half, 64, true>(p, pp, stream) : launch_variant<__half, 64, false>(p, pp, stream);
    return causal ? launch_variant<__half, 128, true>(p, pp, stream) : launch_variant<__half, 128, false>(p, pp, stream);
  }
  using BF16 = __nv_bfloat16;
  if (head_dim == 64)
    return causal ? launch_variant<BF16, 64, true>(p, pp, stream) : launch_variant<BF16, 64, false>(p, pp, stream);
  return causal ? launch_variant<BF16, 128, true>(p, pp, stream) : launch_variant<BF16, 128, false>(p, pp, stream);
}

}  // namespace dash::kernels
