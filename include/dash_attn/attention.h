// dash-attn public C++ API: framework-free attention forward and deterministic backward.
//
// Tensors are (batch, seqlen, heads, head_dim) with any element strides on the first three
// dimensions and a contiguous last dimension (FlashAttention's layout). All pointers are device
// pointers. Every entry point validates its arguments and returns a Status whose message names
// the offending argument; nothing is launched when validation fails. (pointers_verified, off by
// default, lets a caller that knows its pointers skip the per-pointer CUDA queries.)
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "dash_attn/schedule.h"

namespace dash {

enum class DType : int { kBF16 = 0, kFP16 = 1 };

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,   // bad pointer, shape, stride, alignment, head counts, ...
  kUnsupported = 2,       // valid but not implemented (e.g. head_dim 96)
  kCudaError = 3,         // a CUDA call failed
  kInsufficientResources = 4,  // e.g. too few co-resident CTAs for a schedule, no fallback
};

struct Status {
  StatusCode code = StatusCode::kOk;
  char message[320] = {0};
  bool ok() const { return code == StatusCode::kOk; }
};

// Strides in elements for (batch, seqlen, head); the head_dim stride is 1.
struct Strides3 {
  int64_t batch = 0, seq = 0, head = 0;
};

struct AttnShape {
  int batch = 0;
  int seqlen_q = 0;
  int seqlen_k = 0;
  int heads_q = 0;
  int heads_kv = 0;   // heads_q must be a multiple of heads_kv (GQA/MQA)
  int head_dim = 0;   // 64 or 128
  DType dtype = DType::kBF16;
  bool causal = false;          // bottom-right aligned when seqlen_q != seqlen_k
  float softmax_scale = 0.0f;   // 0 selects 1/sqrt(head_dim)
};

struct AttnFwdParams {
  AttnShape shape;
  const void* q = nullptr;  Strides3 q_stride;
  const void* k = nullptr;  Strides3 k_stride;
  const void* v = nullptr;  Strides3 v_stride;
  void* o = nullptr;        Strides3 o_stride;
  float* lse = nullptr;     // (batch, heads_q, seqlen_q) contiguous fp32, natural log
  // Opt-in, for callers that already know where their tensors live (the PyTorch binding):
  // the caller guarantees every pointer is device memory of the current device; skips
  // cudaPointerGetAttributes per pointer. Null, alignment, stride and shape checks still run.
  // Default false: every pointer is checked.
  bool pointers_verified = false;
};

struct AttnBwdParams {
  AttnShape shape;
  const void* q = nullptr;     Strides3 q_stride;
  const void* k = nullptr;     Strides3 k_stride;
  const void* v = nullptr;     Strides3 v_stride;
  const void* o = nullptr;     Strides3 o_stride;
  const void* dout = nullptr;  Strides3 dout_stride;
  const float* lse = nullptr;  // as written by attn_fwd
  void* dq = nullptr;          Strides3 dq_stride;
  void* dk = nullptr;          Strides3 dk_stride;
  void* dv = nullptr;          Strides3 dv_stride;

  Schedule schedule = Schedule::kAuto;   // kAtomic is the non-deterministic mode
  Dispatch dispatch = Dispatch::kDynamic;
  int num_ctas = 0;  // persistent grid size; 0 = sized from the device (SMs x occupancy)
  // When the schedule needs more co-resident CTAs than the grid has: fall back to
  // `descending` (true) or refuse with kInsufficientResources (false).
  bool allow_fallback = true;
  // As AttnFwdParams::pointers_verified: the caller guarantees every pointer (q, k, v, o, dout,
  // lse, dq, dk, dv) is device memory of the current device; skips cudaPointerGetAttributes per
  // pointer. Null, alignment, stride, shape and workspace checks still run. Default false.
  bool pointers_verified = false;
};

// What a backward launch actually did (optional output).
struct BwdLaunchInfo {
  Schedule schedule = Schedule::kAuto;  // concrete schedule that ran
  Dispatch dispatch = Dispatch::kDynamic;
  int num_ctas = 0;
  int block_m = 0, block_n = 0;
  int num_tasks = 0;
  int split_tasks = 0;   // sm90, full masks: the last split_tasks tasks ran as split_pieces pieces each
  int split_pieces = 1;  // (the last-wave split, docs/bwd-sm90.md "The last wave"; DASH_BWD_SPLIT_LAST=0 off)
  int min_coresident = 0;
  int head_block = 1;   // heads whose tasks are interleaved in the task order (schedule.h)
  int dq_writers = 1;   // dQ writer warps (sm90: two, one per staging buffer; one with
                        // DASH_BWD_DUAL_WRITER=0 or where one buffer is staged; docs/bwd-sm90.md)
  int dq_stage_bufs = 0;  // sm90: dQ staging buffers in shared memory (2; 1 with the 80-row tiles at
                          // head_dim 128 but for full-mask shift's two-buffer kernel, DASH_BWD_SM90_DQ2
                          // =1 / =0 for every 80-row launch / none); 0: sm80
  int producer_regs = 0;  // sm90: the producer warpgroup's setmaxnreg (40, the MMA warps 232; 24 with
                          // 80-row tiles at head_dim 128 or DASH_BWD_SM90_PRODUCER24=1, the MMA warps
                          // then 240); 0: sm80
  bool split_rank = false;  // sm90: the split dQ rank variant ran (shift / symmetric shift; with the
                            // head_dim 128 80-row tiles from 64 KV tiles; DASH_BWD_SPLIT_RANK=1/0
                            // forces; same bits either way)
  bool writer_rank = false;  // sm90: the dQ writer computed the closed-form rank (full-mask shift,
                             // causal symmetric shift; DASH_BWD_WRITER_RANK=0 turns it off; same
                             // bits)
  bool pdl = false;        // sm90: the main kernel and the postprocess ran as programmatic dependents
                           // (DASH_BWD_PDL=0 turns it off; not under CUDA graph capture; same bits)
  bool post_poll = false;  // sm90, ordered schedules: the postprocess converted each dQ tile once its
                           // chain completed, under the main kernel (DASH_BWD_POST_POLL; same bits)
  bool post_queue = false; // with post_poll: its blocks took the tiles in the order their chains
                           // completed (the completion queue, DASH_BWD_POST_QUEUE; same bits)
  bool pre_vec = false;    // the preprocess read O / dO with 16-byte loads (the default where they are
                           // 16-byte aligned; DASH_BWD_PRE_VEC=0 turns it off: other bits of
                           // D = rowsum(dO * O), so other gradient bits, reproducible either way)
  bool atomic_shift = false;  // sm90, atomic at a full mask: it ran shift's task order and visits without the
                              // chain (DASH_BWD_ATOMIC_SHIFT=1)
  bool fell_back = false;
  char note[256] = {0};
};

// Forward: O and LSE.
Status attn_fwd(const AttnFwdParams& params, cudaStream_t stream);

// Bytes of device workspace attn_bwd needs (linear in seqlen: fp32 dQ accumulator, LSE/D
// vectors, one semaphore per dQ tile, a task counter). 256-byte aligned pointer required.
size_t attn_bwd_workspace_size(const AttnShape& shape);

// Backward: dQ, dK, dV. Deterministic for every schedule but kAtomic: bitwise identical
// results for the same inputs, independent of num_ctas, dispatch and the GPU's SM count.
Status attn_bwd(const AttnBwdParams& params, void* workspace, size_t workspace_bytes,
                cudaStream_t stream, BwdLaunchInfo* info = nullptr);

// Tile sizes the backward kernel uses for a shape and schedule (the planner models the same tiles).
// On the sm90 kernel, full masks (bf16 and fp16, head_dim 64 and 128) run 80-row Q tiles for
// atomic, shift and symmetric shift from 1024 rows and keys, at head_dim 64 also spt and
// descending; kAuto is resolved with the 64-row tiles (docs/perf.md v16, v17).
void bwd_tile_sizes(const AttnShape& shape, int* block_m, int* block_n, Schedule schedule = Schedule::kAuto);

// The schedule `auto` resolves to for a shape on the current device.
Schedule resolve_auto_schedule(const AttnShape& shape, int num_sms);

}  // namespace dash
