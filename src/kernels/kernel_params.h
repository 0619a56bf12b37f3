// Internal parameter blocks shared by the launchers (src/api) and the kernels (src/kernels).
// Strides are in elements; every tensor's head_dim stride is 1.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <unistd.h>  // environ

#include <cuda.h>
#include <cuda_runtime.h>

#include "dash_attn/attention.h"
#include "dash_attn/schedule.h"

namespace dash::kernels {

struct TensorRef {
  const void* ptr;
  int64_t sb, ss, sh;  // batch, seq, head strides
};
struct MutTensorRef {
  void* ptr;
  int64_t sb, ss, sh;
};

struct FwdKernelParams {
  TensorRef q, k, v;
  MutTensorRef o;
  float* lse;  // (batch, heads_q, seqlen_q)
  int batch, seqlen_q, seqlen_k, heads_q, heads_kv;
  float scale, scale_log2;
};

struct BwdKernelParams {
  TensorRef q, k, v, o, dout;
  MutTensorRef dq, dk, dv;
  const float* lse;
  // workspace
  float* lse_log2;   // (batch, heads_q, seqlen_q_pad), LSE * log2(e); 0 for empty rows
  float* dsum;       // (batch, heads_q, seqlen_q_pad), rowsum(dO * O)
  float* dq_accum;   // (batch, heads_q, seqlen_q_pad, head_dim) fp32
  int* dq_sem;       // (batch, heads_q, m_tiles): contributions landed so far
  int* task_counter; // dynamic dispatch
  int* dq_mailbox;   // per CTA: metadata of the two staged dQ tiles (MMA warps -> dQ writer)
  // The completion queue (with post_poll; nullptr: off; DASH_BWD_POST_QUEUE): the dQ writer that lands
  // a tile's last contribution (rank + 1 == chain length) appends the tile's semaphore index + 1 to
  // it, and each polling postprocess block converts the tile in the next slot, so that the blocks
  // convert tiles in the order they complete instead of waiting in tile order for the late ones.
  // Words: [kDqQueuePop] the blocks' slot counter, [kDqQueuePush] the writers' one, slots from
  // [kDqQueueSlots] (batch x heads_q x m_tiles of them); zeroed with the semaphores.
  int* dq_queue;
  // DRAFT (DASH_BWD_QUEUE_LATE_APPEND=1, with dq_queue): the writer appends a completed tile after it
  // has handed its staging buffer back (mbarrier dq_empty), not before. The same bits.
  int queue_late_append;
  // Diagnostic only (DASH_BWD_QUEUE_DIAG=1, with dq_queue): the writers append as with the queue, but
  // the polling postprocess ignores it (each block waits on its grid position's tile, as without
  // the queue): separates the append's cost on the writer from the blocks' order. The same bits.
  int queue_diag;
  // The last-wave split (sm90 backward; model.split(), ScheduleModel::with_last_wave_split):
  // split_partials holds one dK / dV partial per piece (model.split_tasks x split_pieces slots of
  // 256 MMA threads x head_dim floats, in the threads' fragment order), split_count one counter
  // per split task (zeroed with the semaphores: the piece that brings it to split_pieces sums).
  float* split_partials;
  int* split_count;
  int seqlen_q_pad;
  ScheduleModel model;  // tiles, schedule, task decomposition
  Dispatch dispatch;
  float scale, scale_log2;
  // Diagnostic only (DASH_DEBUG_UNORDERED=1, sm90 backward): the deterministic schedule's visit
  // order and task decomposition, but the dQ writer neither waits for its rank nor releases:
  // separates the cost of the ordered chain from that of the visit order. Not deterministic.
  int debug_unordered;
  // Diagnostic only (DASH_DEBUG_NO_REDUCE=1, sm90 backward): the dQ writer skips the bulk
  // reduce-add itself (dQ is WRONG): with debug_unordered, separates the cost of the dQ
  // reduce traffic from that of the Q/dO loads of a visit order.
  int debug_no_reduce;
  // The first contribution of each dQ tile (rank 0 of its ordered chain) is stored (a bulk copy),
  // not added, so that dq_accum needs no zeroing before the backward (DASH_BWD_DQ_FIRST_STORE,
  // default on; sm90 backward, ordered schedules only: attn_bwd sets it and then zeroes the
  // semaphores alone). The postprocess writes dQ = 0 for a tile no KV tile contributed to (its
  // semaphore still 0: causal rows that see no key). The same bits as the zeroed accumulator and
  // an add, except that a first partial of -0.0 stays -0.0 there (0 + -0.0 = +0.0).
  int dq_first_store;
  // DRAFT (DASH_BWD_WRITER_OVERLAP=1, sm90 backward): the dQ writer overlaps the completion wait
  // of one tile with the issue of the next (dq_writer_overlap). Same adds in the same order.
  int writer_overlap;
  // DRAFT (DASH_BWD_EARLY_RELEASE=1, sm90 backward, default writer): the staging buffer goes
  // back to the MMA warps (dq_empty) once the bulk reduce has READ it (wait_group.read), not once
  // its adds have landed; the semaphore still moves only after completion, and the unordered
  // (atomic) mode waits for completion only before the writer exits. Same adds in the same
  // order: the same bits. Motivation: ncu at bea1336, the MMA warps wait on dq_empty (v6).
  // Measured, not the default: within noise with two writers (docs/perf.md v7) and on every tile
  // kernel including the two-buffer 80-row one (v25 item 3: the wait is the reduce itself).
  int writer_early_release;
  // Two dQ writers (warps 9 and 11), one per staging buffer, so the semaphore wait, reduce and
  // release of tile q + 1 overlap those of tile q (different dQ tiles: independent chains). Same
  // adds in the same order per dQ tile: the same bits. Default on since the H200 measurement of
  // docs/perf.md v7 (descending and spt +3..+52%; best deterministic / atomic 0.90-1.04);
  // DASH_BWD_DUAL_WRITER=0 restores the single writer. Every dispatch and take-ahead since v9
  // (the exit-post fix 6a30c76 passed the hang stress on the H200; attention_api.cu). Never
  // set together with writer_overlap (that draft is one writer; the launcher resolves it).
  int dual_writer;
  // With late taking (sm90 backward): take the next task when the current side has this many
  // steps left (kv_near_end), so that the next task's atomicAdd and K/V load overlap its last
  // steps; 0: when it is done. Default kDefaultTakeAhead; DASH_BWD_TAKE_AHEAD=N overrides.
  // Default 1 since v9: with two dQ writers, +2..+9% for the ordered schedules at hdim 64 up to
  // 4k, +1..+2% at hdim 128 up to 4k, neutral from 8k, atomic unchanged (docs/perf.md v9); the
  // whole GPU suite and memcheck/racecheck/synccheck passed with N = 1 exported, synccheck with N = 2.
  // (The "Missing wait" synccheck report of v5/v6 came from kv_near_end phases counted per side,
  // fixed in the fifth session: one phase per task.)
  int take_ahead;
  // DRAFT (DASH_BWD_REPACK=1, sm90 backward only; docs/bwd-sm90.md, "Repack draft"): when non-null,
  // the preprocess also copies Q and dO into these workspace buffers in [batch, heads_q,
  // seqlen_q_pad, head_dim] order (each head's rows contiguous) and the main kernel's TMA maps
  // read them instead of the user's tensors. Same values, so the same bits.
  void* q_pack;
  void* do_pack;
  // Late task taking (sm90 backward, default; DASH_BWD_TAKE_LATE=0 turns it off; docs/bwd-sm90.md
  // "Late task taking"): with dynamic dispatch and a schedule of group width 1 (ascending, spt,
  // descending, and atomic unless DASH_BWD_ATOMIC_TAKE_LATE=0), take the next task only once the MMA
  // warps have finished the previous one, as the sm80 kernel does, instead of up to two tasks ahead.
  // The host sets it per launch (0 for atomic with the switch off). Does not change any bit.
  int take_late;
  // Group take (sm90 backward, default; DASH_BWD_GROUP_TAKE=0 off; docs/bwd-sm90.md "The drain"): with dynamic
  // dispatch and co-resident groups (shift, symmetric shift) the taker skips the drain when the
  // task counter has passed the end of the group of the last task it took
  // (ScheduleModel::group_end_task): the next task is then in a higher group or another head, which
  // the owed reduces never wait for; it takes late (with take-ahead) as the group-width-1
  // schedules do. Task order only: the same bits.
  int group_take;
  // Early dV (sm90 backward, not with the lagged-dQ draft): each step issues dV += P^T dO right
  // after P^T is computed, before waiting for dP^T, so that the tensor cores run it under the dS
  // math (attn_bwd_sm90.cu, early_dv). The same GEMMs on the same operands in the same order: the
  // same bits (tests BwdSm90EarlyDv.*). Default on at head_dim 64, off at 128 (the launcher;
  // DASH_BWD_EARLY_DV=0/1 forces it; measured: docs/perf.md v10).
  int early_dv;
  // Programmatic dependent launch (DASH_BWD_PDL, sm90 backward; docs/bwd-sm90.md "Programmatic
  // dependent launch"): the main kernel and the postprocess are launched as programmatic dependents
  // of the kernel before them (cudaLaunchAttributeProgrammaticStreamSerialization), so their launch
  // and prologue overlap that kernel's tail; each waits for it (cudaGridDependencySynchronize)
  // before reading what it wrote. With it, the workspace range the memset zeroed is zeroed by the
  // preprocess instead (zero_words ints from zero_ptr; 0: the memset ran).
  int pdl;
  // With pdl, ordered schedules (DASH_BWD_POST_POLL): the postprocess does not wait for the whole
  // main kernel; each block waits until its dQ tile's semaphore reaches the tile's chain length
  // (every contribution landed) and converts it, so the conversion runs on the SMs the main
  // kernel's tail leaves idle.
  int post_poll;
  int* zero_ptr;
  int64_t zero_words;
  // The preprocess with 16-byte loads (attn_bwd_preprocess_vec; default, DASH_BWD_PRE_VEC=0 off;
  // attn_bwd accepts only 16-byte aligned O and dO, pointers and strides). Another
  // summation order of D = rowsum(dO * O) than the scalar kernel's, so other (equally
  // reproducible) bits.
  int pre_vec;
  // The sm90 backward stores dK / dV 16 bytes per lane (a transpose across each quad first; the API
  // requires 16-byte aligned rows) unless DASH_BWD_DKV_VEC=0 (4-byte stores of the same words, for
  // A/Bs). The same values either way.
  int dkv_vec16;
};

inline constexpr int kDefaultTakeAhead = 1;
inline constexpr int kDqQueuePop = 0, kDqQueuePush = 32, kDqQueueSlots = 64;  // (separate 128-byte lines)

// SMs the sm90 backward's main kernel leaves to the polling postprocess when DASH_BWD_POST_SMS is
// unset. Without the completion queue (docs/perf.md v32 item 1): 2 up to 2048 keys, where the
// postprocess's tail is a few percent of the backward; 0 above, where k = 2 measured level
// (0.983-1.029 at 4k-16k, next83: the blocks waited in tile order on the latest tiles). With the
// queue (v34, next92, H100): at every length, 4 for the grouped schedules (shift, symmetric shift:
// with 132 SMs the CTAs past the last whole group stall anyway; +0.3-3.7% at 2k-16k, 0.992-1.014 at
// 1k, against no queue and no post SMs) and 2 for the others (causal descending +0.8-2.1% at 2k-16k).
inline constexpr int kPostSmsMaxKeys = 2048;
inline int post_sms_default(int64_t seqlen_k, bool queue = false, bool grouped = false) {
  if (queue) return grouped ? 4 : 2;
  return seqlen_k <= kPostSmsMaxKeys ? 2 : 0;
}
// Whether the completion queue is on by default (DASH_BWD_POST_QUEUE unset): where a head's last
// contributions to its dQ tiles are spread over its tasks and the queue measured ahead (docs/perf.md
// v34, H100): full-mask shift, symmetric shift, causal descending at head_dim 128. Off where one task
// makes them all (full-mask ascending / descending: KV tile n - 1; spt: KV tile 0): its writer appends
// every tile, and the queue lost (hdim 128 full ascending / descending 0.81-0.89 at 4k-8k, causal spt
// 0.975-1.008; next92): the appends slow that task, and the next head block's dQ chains then wait on
// the CTAs it made late (v35: DASH_BWD_QUEUE_DIAG=1, the appends alone, loses as much). Off for causal
// shift too (0.974-0.987 at hdim 128 2k-16k, next93, one round).
inline bool post_queue_default(Schedule s, bool causal, int head_dim) {
  if (s == Schedule::kShift) return !causal;
  return s == Schedule::kSymmetricShift || (causal && s == Schedule::kDescending && head_dim == 128);
}

// Workspace carve-up (256-byte aligned sections), shared by the size query and the launcher.
struct BwdWorkspace {
  size_t lse_log2, dsum, dq_accum, dq_sem, dq_queue, task_counter, split_count, dq_mailbox, total;
  size_t split_partials, split_bytes;  // the last-wave split's dK / dV partials (not zeroed; 0 bytes: none)
  size_t zero_begin, zero_bytes;  // the part zeroed before every backward (dQ accum + semaphores)
  size_t q_pack, do_pack, pack_bytes;  // DASH_BWD_REPACK=1 only (pack_bytes 0 otherwise), not zeroed
};

// The environment's DASH_* switches as one call sees them. A backward reads some 40 of them on
// its host path (each std::getenv a scan of the whole environment); inside an EnvScope (attn_fwd,
// attn_bwd, the workspace size query: one per call) the environment is scanned once, at the
// scope's start, and env_get looks the name up among its DASH_* entries. Outside a scope env_get is
// std::getenv. Per call, not per process: a process can still set a switch between calls.
struct EnvSnapshot {
  static constexpr int kMax = 64;
  int n = 0;
  bool overflow = false;  // more DASH_* variables than kMax: env_get falls back to std::getenv
  const char* entry[kMax];  // "NAME=value" strings of the environment
  void scan();
  const char* find(const char* var) const {
    const size_t len = std::strlen(var);
    for (int i = 0; i < n; ++i)
      if (std::strncmp(entry[i], var, len) == 0 && entry[i][len] == '=') return entry[i] + len + 1;
    return nullptr;
  }
};
inline void EnvSnapshot::scan() {
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, "DASH_", 5) != 0) continue;
    if (n == kMax) {
      overflow = true;
      return;
    }
    entry[n++] = *e;
  }
}
inline thread_local const EnvSnapshot* t_env_snapshot = nullptr;
// Reentrant: a nested scope (attn_bwd's recursion into an explicit schedule) keeps the outer one's.
class EnvScope {
 public:
  EnvScope() {
    if (t_env_snapshot != nullptr) return;
    snap_.scan();
    if (snap_.overflow) return;
    t_env_snapshot = &snap_;
    owner_ = true;
  }
  ~EnvScope() {
    if (owner_) t_env_snapshot = nullptr;
  }
  EnvScope(const EnvScope&) = delete;
  EnvScope& operator=(const EnvScope&) = delete;

 private:
  EnvSnapshot snap_;
  bool owner_ = false;
};
inline const char* env_get(const char* var) {
  const EnvSnapshot* s = t_env_snapshot;
  return s != nullptr ? s->find(var) : std::getenv(var);
}

// Environment switches: an experiment / draft that is off unless VAR=1, and a default that is
// on unless VAR=0. Read where they apply (on every call), so a process can compare variants.
inline bool env_set_to_one(const char* var) {
  const char* e = env_get(var);
  return e != nullptr && std::strcmp(e, "1") == 0;
}
inline bool env_not_zero(const char* var) {
  const char* e = env_get(var);
  return e == nullptr || std::strcmp(e, "0") != 0;
}

// DASH_BWD_REPACK=1 (DRAFT; measured at 6ed5f35, no gain: docs/perf.md v5): the sm90 backward reads Q and dO from a
// head-major copy in the workspace (see BwdKernelParams::q_pack). Read on every call, by the
// workspace size query too: set it before attn_bwd_workspace_size and keep it for the process.
// DASH_BWD_LAGGED_DQ=1 (DRAFT; measured, not the default: docs/perf.md v5, v8): the sm90 backward at head_dim 128 issues
// each step's dQ GEMM one step later and drops the per-step named barrier between its MMA
// warpgroups (attn_bwd_sm90.cu, kLag). Same bits. Read on every launch.
inline bool bwd_lagged_dq_enabled() { return env_set_to_one("DASH_BWD_LAGGED_DQ"); }
// DASH_BWD_SM90_PRODUCER24: the sm90 backward's register split. The kLean kernels
// (attn_bwd_sm90.cu) run the producer warpgroup in 24 registers and the MMA warps in 240 (instead
// of 40 / 232); the loader keeps its loop state in shared memory, and the 80-row tile overlaps S^T
// with dP^T again. Same GEMMs in the same order: the same bits with either split. Measured on the
// H200 (fifteenth session, docs/perf.md v16): with 64-row tiles 24 / 240 is 1-3% slower (hdim 128
// bwd geomean 0.974, hdim 64 0.989); with 80-row tiles atomic 3.5-5.5% faster at 2k-16k, shift
// 0-4% faster, descending 1-3% slower. So the 80-row tiles at head_dim 128 run the lean split and
// the 64-row tiles the 40 / 232 one.
// The producer warpgroup's registers of the sm90 backward launched now with `block_m`-row Q tiles
// at `head_dim`: 24 for 80-row tiles at head_dim 128, 40 otherwise (the head_dim 64 80-row tile
// has no lean kernel: its MMA code needs no more than 232), unless DASH_BWD_SM90_PRODUCER24 is set
// (=1: 24, other values: 40); 40 with the lagged-dQ draft (no kLean instantiation). Read on every
// launch; the launcher and BwdLaunchInfo::producer_regs use this.
inline int bwd_sm90_producer_regs(int block_m, int head_dim = 128) {
  if (bwd_lagged_dq_enabled()) return 40;
  const char* e = env_get("DASH_BWD_SM90_PRODUCER24");
  if (e != nullptr && *e != '\0') return std::strcmp(e, "1") == 0 ? 24 : 40;
  return block_m == 80 && head_dim == 128 ? 24 : 40;
}

// The split dQ rank of the sm90 backward (attn_bwd_sm90.cu, take_rank_part): for shift and
// symmetric shift, whose rank (the semaphore value a dQ contribution waits for) is a loop over the
// chain, every staging warp counts part of the chain and the writer sums the parts; otherwise one
// warp runs the whole loop and its warpgroup reaches the dS barrier late. A kernel variant (kSplit),
// so the other schedules run the kernels as before. Measured on the H200 (sixteenth session,
// docs/perf.md v17, split / one-warp rank, shift and symmetric shift):
//  - 64-row tiles (hdim 128 causal) 1.00-1.04x at 512-4k, 1.15x at 8k, 1.35-1.40x at 16k;
//  - head_dim 64 (80-row full, 64-row causal) 1.00-1.04x at 512-4k, 1.15-1.23x at 8k, 1.42-1.59x at 16k;
//  - the 80-row tiles at head_dim 128 (24 / 240 registers; the split counted after the dQ^T
//    stores, where it does not spill) 0.93-0.95x at 1k-4k, 1.00x at 8k, 1.19-1.24x at 16k.
// So on at every length, except the head_dim 128 80-row tiles: from kBwdSplitRankMinKvTiles80 KV
// tiles; and not where the writer-rank variant runs (bwd_sm90_writer_rank: full-mask shift, causal symmetric shift).
// DASH_BWD_SPLIT_RANK=1 / 0 forces it on / off (on: also where the writer rank would run). Only
// where the variants exist (bwd_sm90_rank_variants_exist). The ranks are the same numbers either
// way: the same bits. Read on every launch (launcher and BwdLaunchInfo::split_rank).
constexpr int kBwdSplitRankMinKvTiles80 = 64;
// Whether the writer-rank variant could run (DASH_BWD_SPLIT_RANK aside): full-mask shift with the
// closed-form rank (ScheduleModel::shift_rank_closed), whose dQ writer computes the rank in O(1)
// from the mailbox's (i, j) while the MMA warps compute none (seventeenth session: unordered
// shift, which still computed the split rank, ran at 0.75-0.79 of atomic at hdim 64 full, and ncu
// put the extra time after the rank's instructions). Variants: the tiles' default register splits
// (80 rows: 24 / 240 at head_dim 128, 40 / 232 at 64; 64 rows: 40 / 232), not the lagged draft.
// DASH_BWD_WRITER_RANK=0 turns it off (the one-warp or split rank as before).
// Causal symmetric shift with the closed-form rank (ScheduleModel::symshift_rank_closed) has
// writer-rank variants too (kWRankSym, 64-row tiles): on by default since the eighteenth session,
// where they ran at 1.08-1.17x the split rank at hdim 128 causal and 1.16-1.31x at hdim 64 causal,
// 1k-16k, the same bits (docs/perf.md v19).
// The rank variants (kSplit, kWRank) exist for the tile's default register split only, not for
// the lagged draft.
// Nor for the causal 80-row tiles (head_dim 64, and the head_dim 128 draft: bwd_sm90_has_bm80).
inline bool bwd_sm90_rank_variants_exist(const ScheduleModel& m, int head_dim) {
  if (m.p.causal && m.p.block_m != 64) return false;
  const bool lean80 = m.p.block_m == 80 && head_dim == 128;
  return !bwd_lagged_dq_enabled() && bwd_sm90_producer_regs(m.p.block_m, head_dim) == (lean80 ? 24 : 40);
}
inline bool bwd_sm90_writer_rank_possible(const ScheduleModel& m, int head_dim) {
  const bool closed = m.shift_rank_closed() || m.symshift_rank_closed();
  return m.deterministic() && closed && bwd_sm90_rank_variants_exist(m, head_dim) &&
         env_not_zero("DASH_BWD_WRITER_RANK");
}
inline bool bwd_sm90_split_rank(const ScheduleModel& m, int head_dim) {
  const bool shifted = m.schedule == Schedule::kShift || m.schedule == Schedule::kSymmetricShift;
  if (!m.deterministic() || !shifted || !bwd_sm90_rank_variants_exist(m, head_dim)) return false;
  const char* e = env_get("DASH_BWD_SPLIT_RANK");
  if (e != nullptr && *e != '\0') return std::strcmp(e, "0") != 0;
  if (bwd_sm90_writer_rank_possible(m, head_dim)) return false;
  const bool lean80 = m.p.block_m == 80 && head_dim == 128;
  return !lean80 || m.n >= kBwdSplitRankMinKvTiles80;
}
// The writer-rank variant runs (see bwd_sm90_writer_rank_possible); BwdLaunchInfo::writer_rank.
inline bool bwd_sm90_writer_rank(const ScheduleModel& m, int head_dim) {
  return bwd_sm90_writer_rank_possible(m, head_dim) && !bwd_sm90_split_rank(m, head_dim);
}

// Whether the current device is compute capability 9.0 (the sm_90a kernels run nowhere else);
// false, with the error cleared, when the query fails.
inline bool current_device_is_sm90() {
  int dev = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return major == 9 && minor == 0;
}

inline bool bwd_repack_enabled() { return env_set_to_one("DASH_BWD_REPACK"); }
// The last-wave split of the sm90 backward (ScheduleModel::with_last_wave_split; docs/bwd-sm90.md
// "The last wave"): on by default where the model allows it (full masks; ascending, descending, spt,
// atomic); DASH_BWD_SPLIT_LAST=0 turns it off (other dK / dV bits for the split tasks: a sum of
// partials). Read on every call, by the workspace size query too.
inline bool bwd_split_last_enabled() { return env_not_zero("DASH_BWD_SPLIT_LAST"); }
// Floats of one piece's dK / dV partial: 256 MMA threads x (head_dim / 2 of dK + head_dim / 2 of dV).
inline size_t bwd_split_partial_floats(int head_dim) { return static_cast<size_t>(256) * head_dim; }
BwdWorkspace bwd_workspace_layout(const AttnShape& shape, int block_m);

// The sm90 forward's ping-pong variant (the two consumer warpgroups take turns issuing their
// GEMMs, 3-stage K/V ring; docs/fwd-sm90.md, "Ping-pong variant") is the default since it ran on
// an H200 (bitwise equal to the base variant, 1.4-1.5x faster at hdim 128, 4k-16k);
// DASH_FWD_PINGPONG=0 selects the base variant. Read by launch_fwd_sm90 on every call.
inline bool fwd_pingpong_enabled() { return env_not_zero("DASH_FWD_PINGPONG"); }
// 176-key K/V tiles for the sm90 forward at head_dim 128 on full masks (docs/fwd-sm90.md "176-key
// tiles"; DRAFT, DASH_FWD_BN176=1 turns it on). Read on every call, like DASH_FWD_PINGPONG.
inline bool fwd_bn176_enabled() { return env_set_to_one("DASH_FWD_BN176"); }
// The sm90 forward's persistent grid (one CTA per SM looping over the work units,
// docs/fwd-sm90.md, "Persistent grid"); DASH_FWD_PERSISTENT=0 launches one CTA per unit.
// DASH_FWD_PERSISTENT_CTAS=n caps the persistent grid at n CTAs (tests: many units per CTA).
// Read by launch_fwd_sm90 on every call.
inline bool fwd_persistent_enabled() { return env_not_zero("DASH_FWD_PERSISTENT"); }
inline int fwd_persistent_cta_cap() {
  const char* e = env_get("DASH_FWD_PERSISTENT_CTAS");
  const int n = e ? std::atoi(e) : 0;
  return n > 0 ? n : 0;
}
// SMs of device dev, cached per device (attention_api.cu).
cudaError_t cached_sm_count(int dev, int* num_sms);

cudaError_t launch_fwd(const FwdKernelParams& p, int head_dim, DType dtype, bool causal,
                       cudaStream_t stream);
// Hopper wgmma/TMA forward (attn_fwd_sm90.cu); cudaErrorNotSupported = nothing launched, use launch_fwd.
// bf16 and fp16, head_dim 64/128.
cudaError_t launch_fwd_sm90(const FwdKernelParams& p, int head_dim, DType dtype, bool causal, cudaStream_t stream);
cudaError_t launch_bwd_preprocess(const BwdKernelParams& p, int head_dim, DType dtype,
                                  cudaStream_t stream);
cudaError_t launch_bwd_main(const BwdKernelParams& p, int head_dim, DType dtype, bool causal,
                            int num_ctas, cudaStream_t stream);
cudaError_t launch_bwd_postprocess(const BwdKernelParams& p, int head_dim, DType dtype,
                                   cudaStream_t stream);
// Co-resident CTAs of the backward main kernel per SM (occupancy API).
cudaError_t bwd_main_occupancy(int head_dim, DType dtype, bool causal, int* ctas_per_sm);

constexpr int kMaxBwdCtas = 1024;             // persistent grid cap (mailbox size)
constexpr int kDqMailboxBytesPerCta = 64;
constexpr int kBwdBlockM = 64;
constexpr int kBwdBlockN = 64;
constexpr int kFwdBlockM = 64;
constexpr int kFwdBlockN = 64;

// ---- Hopper backward (attn_bwd_sm90.cu), the default where it applies (DASH_BWD_SM90=0 disables). ----
// Same Q tile height as the sm80 kernel by default, 128-key KV tiles; 80-row Q tiles for full
// masks for the schedules and lengths bwd_sm90_block_m gives them to. The workspace layout follows
// the tile height (bwd_workspace_layout(shape, block_m)); attn_bwd_workspace_size covers both.
constexpr int kBwdSm90BlockM = 64;
constexpr int kBwdSm90BlockM80 = 80;
// Taller Q tiles at head_dim 64 (nineteenth session draft; the default since the twentieth, measured
// on the H200 with 96 rows against 80: docs/perf.md v21): the 80-row kernel's code with BM = 96 or 112
// (40 / 232 split, two dQ staging buffers; smem K/V 32 + 3 x 2 x BM x 256 B: 176 / 200 KiB; 128 rows
// do not fit). The schedules bwd_sm90_block_m gives 80 rows take, at head_dim 64, the height
// DASH_BWD_SM90_D64_BM names: 96 (the default), 80 or 112; DASH_BWD_SM90_BLOCK_M=80 / 96 / 112 forces
// one for every schedule.
constexpr int kBwdSm90BlockM96 = 96;
constexpr int kBwdSm90BlockM112 = 112;
// The tall tile height at head_dim 64: DASH_BWD_SM90_D64_BM=80 / 112, else (unset or any other
// value) 96.
inline int bwd_sm90_d64_block_m() {
  const char* e = env_get("DASH_BWD_SM90_D64_BM");
  if (e != nullptr && std::strcmp(e, "80") == 0) return kBwdSm90BlockM80;
  if (e != nullptr && std::strcmp(e, "112") == 0) return kBwdSm90BlockM112;
  return kBwdSm90BlockM96;
}
constexpr int kBwdSm90BlockN = 128;
static_assert(kBwdSm90BlockM == kBwdBlockM, "the 64-row sm90 tiles share the sm80 workspace layout");
// Whether the sm90 backward has the 80-row Q tile variant for this case: full mask (causal: head_dim
// 64 only, below), not the lagged-dQ draft, and
//  - head_dim 128: bf16 (both register splits), or fp16 while the 24 / 240 split is on (the fp16
//    tile spilled at 232 registers, compiles clean at 240);
//  - head_dim 64: bf16 or fp16 with the 40 / 232 split; two dQ staging buffers (153.25 KiB of smem).
// The fp16 and head_dim 64 tiles were drafts until they passed on an H200 (sixteenth session,
// docs/perf.md v17); DASH_BWD_SM90_FP16_BM80=0 / DASH_BWD_SM90_D64_BM80=0 switch them off.
// Causal masks at head_dim 64 (eighteenth session; DASH_BWD_SM90_D64_CAUSAL_BM80=0 switches it off):
// the same 80-row kernel with the causal mask, for atomic, spt and descending only (no rank
// variants: shift and symmetric shift keep 64-row tiles, bwd_sm90_block_m). Measured on the H200
// (80 / 64 rows, bf16, 1k-16k, 2 interleaved rounds, docs/perf.md v19): descending 1.017-1.124x,
// spt 1.047-1.118x, atomic 1.039-1.087x; the whole GPU suite passed with it (470 tests).
inline bool bwd_sm90_d64_causal_bm80_enabled() { return env_not_zero("DASH_BWD_SM90_D64_CAUSAL_BM80"); }
// Causal masks at head_dim 128 (DRAFT, eighteenth session; DASH_BWD_SM90_D128_CAUSAL_BM80=1 turns it
// on): the 24 / 240 80-row kernel with the causal mask (bf16 and fp16; 0 spills with q_lim opaque in
// the mask, compute_p's kOpaqueLim). With the draft on only atomic takes it by default;
// DASH_BWD_SM90_BLOCK_M=80 forces it for the others. Measured slower than the 64-row tiles on the
// H200 for every schedule (80 / 64 rows speed, 1k-16k, docs/perf.md v20 item 1): atomic
// 0.919-0.977, spt 0.915-0.942, descending 0.894-0.919; correct (its tests passed), not the default.
inline bool bwd_sm90_d128_causal_bm80_enabled() { return env_set_to_one("DASH_BWD_SM90_D128_CAUSAL_BM80"); }
inline bool bwd_sm90_has_bm80(const AttnShape& s) {
  if (bwd_lagged_dq_enabled()) return false;
  if (s.causal && s.head_dim == 128)
    return bwd_sm90_d128_causal_bm80_enabled() && bwd_sm90_producer_regs(80) == 24 &&
           (s.dtype == DType::kBF16 || s.dtype == DType::kFP16);
  if (s.causal && !(s.head_dim == 64 && bwd_sm90_d64_causal_bm80_enabled())) return false;
  if (s.head_dim == 64)
    return env_not_zero("DASH_BWD_SM90_D64_BM80") && bwd_sm90_producer_regs(80, 64) == 40 &&
           (s.dtype == DType::kBF16 || s.dtype == DType::kFP16);
  if (s.head_dim != 128) return false;
  if (s.dtype == DType::kBF16) return true;
  return s.dtype == DType::kFP16 && env_not_zero("DASH_BWD_SM90_FP16_BM80") && bwd_sm90_producer_regs(80) == 24;
}
// Two dQ staging buffers in the head_dim 128 80-row kernels (kDq2, twenty-third session; docs/bwd-sm90.md
// "Two dQ staging buffers at 80 rows"; bf16 and fp16, full masks, the 24 / 240 split), paid for by one
// dO stage and one dS buffer. Same GEMMs and adds in the same order: the same bits as the one-buffer
// kernel. By default for shift and symmetric shift (= shift on a full mask): measured on the H200
// (docs/perf.md v24) 1.07-1.12x the one-buffer shift at 1k-16k; atomic 0.96-0.98x (the single dO
// stage costs more than the second buffer gains without a chain) and descending / ascending / spt
// on 80 rows still behind their 64-row tiles at 1k-8k, so those keep their kernels.
// DASH_BWD_SM90_DQ2=1: every 80-row launch that has the kernel; =0: none. Read on every launch.
inline bool bwd_sm90_has_dq2(DType dtype, int head_dim, bool causal) {
  // (causal: the draft, bf16, only where the causal 80-row tiles run, bwd_sm90_has_bm80; its
  // kernel is the early-dV variant whatever DASH_BWD_SM90_DQ2_EARLY_DV says. Measured on an H100,
  // docs/perf.md v29 item 2: 0.98-1.01x the 64-row tiles for descending / ascending / spt at
  // 1k-16k, so not the default.)
  if (causal) return dtype == DType::kBF16 && head_dim == 128 && bwd_sm90_d128_causal_bm80_enabled();
  return (dtype == DType::kBF16 || dtype == DType::kFP16) && head_dim == 128;
}
inline bool bwd_sm90_dq2_for(Schedule schedule) {
  const char* e = env_get("DASH_BWD_SM90_DQ2");
  if (e != nullptr && *e != '\0') return std::strcmp(e, "0") != 0;
  return schedule == Schedule::kShift || schedule == Schedule::kSymmetricShift;
}
// DASH_BWD_SM90_DQ2_EARLY_DV=1 (opt-in; written in the twenty-third session, measured on the H200 in the
// twenty-fourth, docs/perf.md v25 item 1): where the two-buffer kernel runs (bf16; not the split-rank
// variant), its variant that issues dV under the dS math and releases dO before the dS barrier. Same
// GEMMs and adds in the same order: the same bits. +2-4% for descending / ascending / spt on forced
// 80-row tiles (which then match their 64-row kernels), nothing for the default two-buffer shift.
inline bool bwd_sm90_dq2_early_dv_enabled() { return env_set_to_one("DASH_BWD_SM90_DQ2_EARLY_DV"); }
// The dQ staging buffers in shared memory of an sm90 launch of `schedule` with `block_m`-row tiles
// and the producer warpgroup at `producer_regs` (BwdLaunchInfo::dq_stage_bufs): two, but one with
// the 80-row tile at head_dim 128 (no room for a second) unless the two-buffer kernel ran.
inline int bwd_sm90_dq_stage_bufs(int block_m, int head_dim, DType dtype, bool causal, int producer_regs,
                                  Schedule schedule) {
  if (block_m != kBwdSm90BlockM80 || head_dim != 128) return 2;
  return bwd_sm90_has_dq2(dtype, head_dim, causal) && producer_regs == 24 && bwd_sm90_dq2_for(schedule) ? 2 : 1;
}
// Whether the sm90 kernel that runs `schedule` with `block_m`-row tiles at `head_dim` has the split's
// code (attn_bwd_sm90.cu, kMaySplit): not the lagged-dQ draft, and at 80 rows and head_dim 128 only
// the 24 / 240 one-buffer kernel (not the two-buffer kernels: shift by default, every schedule with
// DASH_BWD_SM90_DQ2=1; not the 40 / 232 one, DASH_BWD_SM90_PRODUCER24=0). Where it has not, the
// launcher plans no split: those launches' dK / dV bits are the unsplit sums.
inline bool bwd_sm90_kernel_splits(int block_m, int head_dim, Schedule schedule) {
  if (head_dim == 128 && bwd_lagged_dq_enabled()) return false;
  if (block_m == 80 && head_dim == 128) return bwd_sm90_producer_regs(block_m, head_dim) == 24 && !bwd_sm90_dq2_for(schedule);
  return true;
}
// The 80-row tile is the default for the schedules bwd_sm90_block_m names from this many rows and keys
// (below it the padding of the last Q tile costs more than the per-step savings: 0.97-0.99x at 512).
constexpr int kBwdSm90Bm80MinSeqlen = 1024;
// The Q tile height of the sm90 backward for `s` under `schedule`, where bwd_sm90_has_bm80(s) (the
// tall tiles: 80 rows at head_dim 128, bwd_sm90_d64_block_m's height at head_dim 64):
//  - DASH_BWD_SM90_BLOCK_M=80 (either head dim), 96 or 112 (head_dim 64): that height for every
//    schedule; any other value: 64 rows;
//  - unset: the tall tile for atomic, shift and symmetric shift (= shift on a full mask; not causal),
//    and at head_dim 64 also spt, descending and ascending, when seqlen_q and seqlen_k are >=
//    kBwdSm90Bm80MinSeqlen; else 64 (auto; ascending, spt and descending at head_dim 128; at causal
//    head_dim 128 every schedule but atomic, which takes 80 rows only with the
//    DASH_BWD_SM90_D128_CAUSAL_BM80 draft).
// Measured on the H200 (80 against 64 rows, full masks, 1k-16k; docs/perf.md v16, v17):
//  - head_dim 128 bf16: atomic 1.02-1.10x, shift 1.06-1.17x, descending 0.86-0.98x (its ordered
//    dQ chain waits for the one staging buffer's writer: v14);
//  - head_dim 128 fp16: atomic 1.01-1.11x, shift 1.06-1.17x;
//  - head_dim 64 bf16: atomic 1.10-1.11x, shift 1.12-1.15x, spt 1.06-1.09x; descending 1.07-1.08x at
//    1k-8k since its 80-row tasks interleave heads (ScheduleModel::default_head_block; head-major it
//    was 0.92-0.95x at 1k-4k).
// And 96 against 80 rows at head_dim 64 (bf16, 1k-16k, 2 runs of 2 interleaved rounds, docs/perf.md
// v21): full atomic 1.02-1.07x, shift 1.03-1.10x, spt 1.04-1.09x, descending 1.04-1.08x (heads
// interleaved); causal atomic 1.00-1.07x, spt 0.99-1.03x, descending 1.00-1.04x; ascending (forced;
// it had kept 64 rows) 96 / 64 rows 1.11-1.21x at full masks, 1.06-1.13x causal.
// kAuto is resolved with 64-row tiles (attn_bwd then runs the resolved schedule with its own tiles).
// A function of shape and schedule only, so the bits do not depend on the device or grid.
// Read on every call: set DASH_BWD_SM90_BLOCK_M before attn_bwd_workspace_size.
inline int bwd_sm90_block_m(const AttnShape& s, Schedule schedule) {
  if (!bwd_sm90_has_bm80(s)) return kBwdSm90BlockM;
  const bool d64 = s.head_dim == 64;
  const char* e = env_get("DASH_BWD_SM90_BLOCK_M");
  if (e != nullptr && *e != '\0') {
    const int forced = std::atoi(e);
    if (forced == kBwdSm90BlockM80) return kBwdSm90BlockM80;
    return d64 && (forced == kBwdSm90BlockM96 || forced == kBwdSm90BlockM112) ? forced : kBwdSm90BlockM;
  }
  const bool shifted = schedule == Schedule::kShift || schedule == Schedule::kSymmetricShift;
  const bool tall = schedule == Schedule::kAtomic || (shifted && !s.causal) ||
                    (d64 && (schedule == Schedule::kSpt || schedule == Schedule::kDescending ||
                             schedule == Schedule::kAscending));
  if (!(tall && s.seqlen_q >= kBwdSm90Bm80MinSeqlen && s.seqlen_k >= kBwdSm90Bm80MinSeqlen)) return kBwdSm90BlockM;
  return d64 ? bwd_sm90_d64_block_m() : kBwdSm90BlockM80;
}
struct BwdSm90Maps {
  CUtensorMap q, k, v, dout;  // bf16 or fp16 [B, S, H, D], box {64, rows}, 128B swizzle
};
// Whether the sm90 backward covers (dtype, head_dim): bf16 and fp16 at head_dim 64 and 128 (the
// fp16 and head_dim 64 cases were the DASH_SM90_DRAFT drafts until they passed on an H200).
inline bool bwd_sm90_covers(DType dtype, int head_dim) {
  return (dtype == DType::kBF16 || dtype == DType::kFP16) && (head_dim == 64 || head_dim == 128);
}
// cudaErrorNotSupported (nothing encoded) unless: bwd_sm90_covers(dtype, head_dim), a compute
// capability 9.0 device, and strides a TMA map can express. Then `maps` holds the four tensor maps.
// block_m: the Q tile height of the launch (kBwdSm90BlockM, or kBwdSm90BlockM80 where
// bwd_sm90_has_bm80, or 96 / 112 at head_dim 64 there); it is the
// TMA box height of Q and dO.
cudaError_t bwd_sm90_prepare(const AttnShape& shape, const TensorRef& q, const TensorRef& k,
                             const TensorRef& v, const TensorRef& dout, int block_m, BwdSm90Maps* maps);
// p.model must be built with block_m = kBwdSm90BlockM (or kBwdSm90BlockM80 where bwd_sm90_has_bm80,
// or 96 / 112 at head_dim 64 there), block_n = kBwdSm90BlockN.
cudaError_t launch_bwd_main_sm90(const BwdKernelParams& p, const BwdSm90Maps& maps, int head_dim, DType dtype,
                                 bool causal, int num_ctas, cudaStream_t stream);
// dQ = scale * dq_accum for the sm90 staging order (the sm80 postprocess expects another order).
cudaError_t launch_bwd_postprocess_sm90(const BwdKernelParams& p, int head_dim, DType dtype, cudaStream_t stream);
cudaError_t bwd_main_sm90_occupancy(int head_dim, DType dtype, bool causal, int block_m, int* ctas_per_sm);

}  // namespace dash::kernels
