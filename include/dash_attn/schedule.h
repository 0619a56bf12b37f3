// dash-attn: the schedule model shared by the GPU kernels (device) and the planner (host).
//
// One definition of every execution order and accumulation order of the attention backward.
// Everything here is a pure function of the problem shape, the tile sizes and the schedule:
// never of timing, SM count or grid size. No allocation; callable from device code.
//
// Vocabulary (see docs/schedules.md):
//   head      one (batch, kv head) pair; heads are independent of each other.
//   KV tile j kBlockN keys of one head; Q tile i: kBlockM query rows of one query head.
//   task      the unit a persistent CTA takes: one KV tile (or a pair of KV tiles for
//             symmetric shift) of one head, processed for every query head of its GQA group.
//             Tasks are numbered head-major; a CTA takes them in increasing order.
//   side      a task's KV tiles in program order (side 0; side 1 only for symmetric shift).
//   step      the position of a Q tile in one side's visit sequence for one query head.
//   group     a contiguous range of `group_width` tasks of one head that must be co-resident.
//   rank      the position of KV tile j's contribution in dQ tile i's accumulation chain.
//
// Program order of a task: for side, for step t, for query head g of the group (all query
// heads of a Q tile back to back, so tasks of unequal length stay aligned step by step).
// Accumulation order of dQ tile (g, i): contributions sorted by the key
//   (group of the task, side, step, task slot).
// Every edge of the resulting wait graph increases the potential (group, side, step, g, slot)
// lexicographically, so the graph is acyclic; a task waits only on its own group or on lower
// groups, so `group_width` co-resident CTAs taking tasks in increasing order cannot deadlock
// (proof in docs/schedules.md, checked exhaustively by src/schedule/checker.cpp).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define DASH_HD __host__ __device__ __forceinline__
#else
#define DASH_HD inline
#endif

namespace dash {

enum class Schedule : int {
  kAscending = 0,      // FA3 baseline: ascending Q tiles, dQ accumulated in ascending j
  kSpt = 1,            // current FA3 causal: high KV tiles first, dQ in descending j
  kDescending = 2,     // DASH: descending Q tiles, dQ in ascending j (same bits as ascending)
  kShift = 3,          // DASH: cyclic shift of the Q tiles per KV tile, arrival-order dQ
  kSymmetricShift = 4, // DASH causal: pair KV tile p with n-1-p, shift over the shared Q tiles
  kAtomic = 5,         // non-deterministic: same kernel, unordered dQ adds
  kAuto = 6,           // resolved by the planner to one of the above
};
constexpr int kNumConcreteSchedules = 6;

enum class Dispatch : int {
  kDynamic = 0, // CTAs take the next task from an atomic counter (launch order)
  kStatic = 1,  // CTA p takes tasks p, p+P, p+2P, ...
};

// Largest co-resident group a schedule may require. A fixed constant (not the device's SM
// count) so that the bits of a shape are the same on every GPU.
constexpr int kMaxGroupWidth = 128;

// A problem in tiles. Causal masks are aligned bottom-right: query row r sees key c iff
// c <= r + (seqlen_k - seqlen_q) (FlashAttention's convention for seqlen_q != seqlen_k).
struct TileProblem {
  int batch = 1;
  int heads_q = 1;
  int heads_kv = 1;
  int seqlen_q = 1;
  int seqlen_k = 1;
  int block_m = 64;  // kBlockM: query rows per Q tile
  int block_n = 64;  // kBlockN: keys per KV tile
  bool causal = false;

  DASH_HD int m_tiles() const { return (seqlen_q + block_m - 1) / block_m; }
  DASH_HD int n_tiles() const { return (seqlen_k + block_n - 1) / block_n; }
  DASH_HD int q_per_kv() const { return heads_q / heads_kv; }
  DASH_HD int num_heads() const { return batch * heads_kv; }  // independent (b, kv head)

  // First Q tile that sees any key of KV tile j (m_tiles() if none; never for valid j).
  DASH_HD int q_tile_begin(int j) const {
    if (!causal) return 0;
    // need min((i+1)*M, Sq) - 1 + (Sk - Sq) >= j*N  <=>  min((i+1)*M, Sq) >= x
    const long long x = (long long)j * block_n - (seqlen_k - seqlen_q) + 1;
    if (x <= 0) return 0;
    if (x > seqlen_q) return m_tiles();
    return (int)((x + block_m - 1) / block_m) - 1;
  }
  // One past the last KV tile visible from Q tile i (0 if the whole tile sees nothing).
  DASH_HD int kv_tile_end(int i) const {
    if (!causal) return n_tiles();
    const int last_row = (i + 1) * block_m < seqlen_q ? (i + 1) * block_m - 1 : seqlen_q - 1;
    const long long last_key = (long long)last_row + (seqlen_k - seqlen_q);
    if (last_key < 0) return 0;
    const long long e = last_key / block_n + 1;
    return e < n_tiles() ? (int)e : n_tiles();
  }
  DASH_HD bool visible(int i, int j) const { return j < kv_tile_end(i); }
  // Number of Q tiles KV tile j visits per query head.
  DASH_HD int q_tile_count(int j) const { return m_tiles() - q_tile_begin(j); }
};

// The ordering key of one contribution (KV tile j -> dQ tile i). Smaller keys add first.
struct ChainKey {
  int group, side, step, slot;
  DASH_HD bool operator<(const ChainKey& o) const {
    if (group != o.group) return group < o.group;
    if (side != o.side) return side < o.side;
    if (step != o.step) return step < o.step;
    return slot < o.slot;
  }
};

// The SM count the last-wave split (ScheduleModel::with_last_wave_split) plans for: a fixed
// constant (the H100's and H200's 132), never the device's, so that the split, and with it the
// bits of dK / dV, is a function of the shape alone.
constexpr int kLastWaveSms = 132;
// At most this many pieces per split task, and the fixed cost of a piece (its K / V load, the write
// of its dK / dV partial and, for the last piece, the read of the others) in steps of its task.
constexpr int kMaxSplitPieces = 8;
constexpr double kSplitPieceOverheadSteps = 2.0;

// Heads interleaved per block in the default task order of ascending / descending / atomic.
inline constexpr int kDefaultHeadBlock = 16;
// The narrower block of the long ordered runs (ScheduleModel::default_head_block: descending, and
// ascending on full masks, from kLongHeadBlockMinKvTiles KV tiles; thirty-fifth session, H100,
// docs/perf.md v36).
inline constexpr int kLongHeadBlock = 8;
inline constexpr int kLongHeadBlockMinKvTiles = 16;  // 2048 keys of 128-key tiles

// EXPERIMENT (DASH_HEAD_BLOCK=l2, docs/perf.md v8 "Full 16k"): the largest head block, up to
// max_block, whose interleaved heads' streamed Q and dO fit in `budget_bytes` (e.g. half the
// L2). bytes_per_head: what one task of a KV head streams, seqlen_q x head_dim x 2 bytes x
// 2 tensors x query heads per KV head. Hypothesis to measure: interleaving 16 heads at full 16k
// (hdim 128: 8 MiB per head, 128 MiB for 16) spills the H200's 50 MiB L2, which head-major spt
// does not; at 1k-4k all 16 fit and interleaving's measured gains stay.
inline constexpr int l2_head_block(long long bytes_per_head, long long budget_bytes, int max_block = kDefaultHeadBlock) {
  if (bytes_per_head <= 0) return max_block;
  const long long b = budget_bytes / bytes_per_head;
  return b < 1 ? 1 : (b > max_block ? max_block : static_cast<int>(b));
}

struct ScheduleModel {
  TileProblem p;
  Schedule schedule = Schedule::kAscending;  // concrete (never kAuto)
  int n = 1;                // KV tiles per head
  int m = 1;                // Q tiles per query head
  int tasks_per_head = 1;   // n, or ceil(n/2) for symmetric shift
  int group_width = 1;      // tasks that must run together (min co-resident CTAs)
  int rect_begin = 0;       // symmetric shift: first Q tile of the rectangle all long sides share
  int start_stride = 1;     // shift / symmetric shift: distance between consecutive start Q tiles
  int head_block = 1;       // task order: heads interleaved in blocks of this many (see task_head)
  int split_tasks = 0;      // last-wave split: the last split_tasks tasks of the numbering ...
  int split_pieces = 1;     // ... are cut into this many pieces each (see with_last_wave_split)

  // Symmetric shift only makes sense with a causal mask; on a full mask it is shift.
  // strided_starts: shift / symmetric shift start their walks `start_stride` Q tiles apart when
  // Q tiles outnumber KV tiles (see shift_stride). Off by default until measured on a GPU
  // (attn_bwd turns it on with DASH_STRIDED_SHIFT=1); it changes those schedules' bits.
  DASH_HD static ScheduleModel make(const TileProblem& prob, Schedule s, bool strided_starts = false) {
    ScheduleModel sm;
    sm.p = prob;
    sm.n = prob.n_tiles();
    sm.m = prob.m_tiles();
    if (s == Schedule::kSymmetricShift && !prob.causal) s = Schedule::kShift;
    sm.schedule = s;
    sm.tasks_per_head = s == Schedule::kSymmetricShift ? (sm.n + 1) / 2 : sm.n;
    const bool grouped = s == Schedule::kShift || s == Schedule::kSymmetricShift;
    if (grouped) {
      // Split a head's tasks into ceil(T / kMax) groups of near-equal width.
      const int T = sm.tasks_per_head;
      const int ngroups = (T + kMaxGroupWidth - 1) / kMaxGroupWidth;
      sm.group_width = (T + ngroups - 1) / ngroups;
    } else {
      sm.group_width = 1;
    }
    sm.rect_begin = s == Schedule::kSymmetricShift ? prob.q_tile_begin(sm.tasks_per_head - 1) : 0;
    sm = sm.with_head_block(default_head_block(prob, s));
    // Strided starts (see shift_stride / rect_stride), computed once here: the kernels read it.
    if (!strided_starts) {
      sm.start_stride = 1;
    } else if (s == Schedule::kShift) {
      sm.start_stride = sm.m >= 2 * sm.n ? sm.m / sm.n : 1;
    } else if (s == Schedule::kSymmetricShift) {
      const int r = sm.m - sm.rect_begin;
      sm.start_stride = r >= 2 * sm.tasks_per_head ? r / sm.tasks_per_head : 1;
    }
    return sm;
  }

  // The default task order (task_head). On the sm90 kernel's tiles (64 x 128, the rule
  // CostParams::for_tiles uses to pick its calibrated set) ascending, descending and atomic
  // interleave the heads in blocks of kDefaultHeadBlock. Measured on an H200
  // (docs/data/headblock-h200-4668c00, docs/perf.md v5): fewer CTAs meet on one head's dQ
  // chains at a time (descending at hdim 128 full 1k-4k: 0.95-0.97 -> 0.99-1.01 of atomic) and,
  // on causal masks, long and short tasks of different heads mix (descending causal 2k-4k
  // +27-48%). spt keeps the head-major order: interleaved, its shortest-first order leaves every
  // head's longest tasks to the end (causal 16k -14%). Grouped schedules keep it too (their
  // co-residency argument), and so do the sm80 kernel's tiles (not measured interleaved).
  // The sm90 kernel's 80-row tiles (80 x 128) interleave ascending and descending too: measured
  // (H200, sixteenth session, docs/perf.md v17 item 10) descending on 80-row tiles 1.15-1.18x at
  // hdim 64 full 1k-4k and 1.07x at 8k, 1.06-1.11x at hdim 128 full 2k-4k, against head-major; atomic
  // there 0.97-0.99x at hdim 128 and 1.00-1.02x at hdim 64, so it stays head-major. The 96- and
  // 112-row tiles at head_dim 64 (twentieth session) follow the 80-row rule (run head-major,
  // descending on them took 0.39-0.66x of its interleaved 80-row speed at causal 1k-8k; perf.md v21).
  // From 2048 keys (kLongHeadBlockMinKvTiles) blocks of kLongHeadBlock (8) heads: for descending
  // and full-mask ascending on 64-row tiles, and for full masks on 96-row tiles (thirty-fifth
  // session, H100, DASH_HEAD_BLOCK A/B, 3 interleaved rounds, docs/perf.md v36): 8 over 16 at
  // hdim 128 full ascending / descending +1.2-1.7% at 2k-8k and +6.8-7.9% at 16k, causal
  // descending +1.2-2.0%; hdim 64 (96 rows) full -0.5..+4.1%. Not where it lost: causal ascending
  // (0.68-0.97), hdim 64 causal descending (0.955-0.992). The dQ chain trace (next98) shows the
  // links at about one step (2.3 us at hdim 128, 1.9 at hdim 64), so the chains are in lockstep;
  // fewer heads at a time keep more of their Q / dO and dQ tiles in L2 (a hypothesis: the link
  // latency grew to 3-5 us where the queue's appends spread the waves, v35).
  // Atomic on causal masks takes blocks of 8 from 2048 keys too, on 64-row tiles (hdim 128) and on 96-row
  // tiles (hdim 64, head-major before): with late taking (forty-fourth session, H100, docs/perf.md v45)
  // 8 over 16 at hdim 128 causal 2k-16k +1.2-1.4%, 8 over head-major at hdim 64 causal 2k-8k +1.9-2.1%
  // (16k level); not on full masks (hdim 128's 80-row atomic 0.96-0.99 with 8).
  DASH_HD static int default_head_block(const TileProblem& prob, Schedule s) {
    if (prob.block_n != 128) return 1;
    const bool ordered = s == Schedule::kAscending || s == Schedule::kDescending;
    const bool long_run = prob.n_tiles() >= kLongHeadBlockMinKvTiles;
    const bool causal_atomic = s == Schedule::kAtomic && prob.causal;
    if (prob.block_m == 64) {
      if (long_run && (s == Schedule::kDescending || (s == Schedule::kAscending && !prob.causal) || causal_atomic))
        return kLongHeadBlock;
      return ordered || s == Schedule::kAtomic ? kDefaultHeadBlock : 1;
    }
    if (prob.block_m == 96 && long_run && ((ordered && !prob.causal) || causal_atomic)) return kLongHeadBlock;
    return ordered ? kDefaultHeadBlock : 1;  // 80, 96 and 112 rows
  }

  DASH_HD bool deterministic() const { return schedule != Schedule::kAtomic; }
  DASH_HD int num_tasks() const { return p.num_heads() * tasks_per_head; }
  DASH_HD int min_coresident() const { return group_width; }
  // Task numbering (the order of the dynamic counter and of the static stride). head_block 1:
  // head-major, task = head * tasks_per_head + slot. head_block B > 1 (group-width-1 schedules
  // only, set by with_head_block): heads are taken in blocks of B and interleaved inside a block,
  // task = block_base + slot * B' + (head - first head of the block), B' = the block's size
  // (the last block may be smaller), so that consecutive tasks belong to different heads and
  // fewer CTAs meet on one head's dQ chains at once. Either way a contribution's chain
  // predecessor (slot - 1 of the same head, for ascending / descending / spt) has a lower task
  // number, which is what deadlock freedom under dynamic dispatch needs (dash-spec 5); the ranks
  // do not depend on the numbering, so neither do the bits.
  DASH_HD int head_block_size(int hb) const {
    const int rest = p.num_heads() - hb * head_block;
    return rest < head_block ? rest : head_block;
  }
  DASH_HD int task_head(int task) const {  // b * heads_kv + h_kv
    if (head_block <= 1) return task / tasks_per_head;
    const int per = head_block * tasks_per_head, hb = task / per, r = task - hb * per;
    return hb * head_block + r % head_block_size(hb);
  }
  DASH_HD int task_slot(int task) const {
    if (head_block <= 1) return task % tasks_per_head;
    const int per = head_block * tasks_per_head, hb = task / per, r = task - hb * per;
    return r / head_block_size(hb);
  }
  // Inverse of (task_head, task_slot).
  DASH_HD int task_of(int head, int slot) const {
    if (head_block <= 1) return head * tasks_per_head + slot;
    const int hb = head / head_block;
    return hb * head_block * tasks_per_head + slot * head_block_size(hb) + (head - hb * head_block);
  }
  // This model with heads interleaved in blocks of `b` (clamped to [1, heads]); grouped
  // schedules (shift, symmetric shift) keep the head-major order their co-residency argument uses.
  DASH_HD ScheduleModel with_head_block(int b) const {
    ScheduleModel r = *this;
    const int H = p.num_heads();
    r.head_block = group_width > 1 || b < 1 ? 1 : (b > H ? H : b);
    return r;
  }
  DASH_HD int group_of_slot(int slot) const { return slot / group_width; }
  // One past the last task of `task`'s co-resident group in the task numbering (head-major for
  // grouped schedules; task + 1 for group width 1). Once the dynamic counter has reached it,
  // every member of the group has been taken, so a CTA may take its next task while its writer
  // still owes reduces of `task` (the kernel's group take, docs/schedules.md "Why no schedule can
  // deadlock"): the next task is in a higher group or another head, never a member the owed
  // reduces could wait for.
  DASH_HD int group_end_task(int task) const {
    if (group_width <= 1) return task + 1;
    const int slot = task % tasks_per_head, end = (slot / group_width + 1) * group_width;
    return task - slot + (end < tasks_per_head ? end : tasks_per_head);
  }

  // ---- the last-wave split (docs/bwd-sm90.md "The last wave") ------------------------------
  // Tasks that do not fill a wave of kLastWaveSms SMs (all of them when fewer, else the
  // num_tasks % kLastWaveSms of a partial last wave; which ones with_last_wave_split plans) run on
  // part of the GPU. The split cuts those last L tasks of the numbering into k pieces each
  // by ranges of their steps (the Q tiles of side 0's visit order): piece p of a task visits steps
  // [piece_begin(p), piece_begin(p + 1)) of every query head of its group. Units are what a CTA
  // takes: unit u < W = num_tasks - L is task u; the L * k units after it are the pieces,
  // piece-major (unit W + p * L + s is piece p of task W + s). Each piece adds its dK / dV partial
  // sums to a workspace slot of its own; the piece that completes a task (a counter) sums the k
  // partials in piece order and stores dK / dV: the same bits whichever piece comes last, on every
  // grid, and the split is a function of the shape (kLastWaveSms fixed), not of the device.
  // dQ is unchanged: a contribution (i, j) is the same GEMM whichever piece computes it, and its
  // rank the same. Deadlock freedom (dash-spec 5): on full masks every KV tile of ascending,
  // descending, spt and atomic visits the Q tiles in one order, so a contribution's chain
  // predecessor (slot - 1 of its head, a lower task) is in a whole task or in the piece with the
  // same p of a lower task, a lower unit either way (checked by check_deadlock_free).
  // Only full masks (causal tasks of unequal length fill the last wave longest-first already) and
  // ascending, descending, spt and atomic (shift's pieces would need co-residency groups).
  DASH_HD bool splittable() const {
    return !p.causal && schedule != Schedule::kShift && schedule != Schedule::kSymmetricShift;
  }
  DASH_HD bool split() const { return split_tasks > 0 && split_pieces > 1; }
  DASH_HD int num_units() const { return num_tasks() + split_tasks * (split_pieces - 1); }
  DASH_HD int first_split_task() const { return num_tasks() - split_tasks; }
  DASH_HD int unit_task(int u) const {
    const int w = first_split_task();
    return u < w || !split() ? u : w + (u - w) % split_tasks;
  }
  // The piece of unit u (-1: a whole task).
  DASH_HD int unit_piece(int u) const {
    const int w = first_split_task();
    return u < w || !split() ? -1 : (u - w) / split_tasks;
  }
  // The workspace slot of unit u's dK / dV partial, (task - W) * k + piece (-1: a whole task).
  DASH_HD int unit_part(int u) const {
    const int w = first_split_task();
    if (u < w || !split()) return -1;
    return ((u - w) % split_tasks) * split_pieces + (u - w) / split_tasks;
  }
  // First step of piece `piece` (0 .. k; piece k: one past the last) of a side of `steps` steps.
  DASH_HD int piece_begin(int piece, int steps) const {
    return piece * steps / split_pieces;  // (32-bit: piece <= kMaxSplitPieces; a 64-bit division spilled on the GPU)
  }
  // Steps [*t0, *t1) of side 0 that unit u visits (per query head); a whole task: [0, num_steps).
  DASH_HD void unit_steps(int u, int* t0, int* t1) const {
    const int task = unit_task(u), piece = unit_piece(u);
    const int steps = num_steps(task_slot(task), 0);
    *t0 = piece < 0 ? 0 : piece_begin(piece, steps);
    *t1 = piece < 0 ? steps : piece_begin(piece + 1, steps);
  }
  // This model with the last wave split for `sms` SMs (kLastWaveSms in the kernels): the L tasks that
  // do not fill a whole wave (L = T when there are fewer tasks than SMs, else T % sms) in k =
  // min(kMaxSplitPieces, m, sms / L) pieces each, so that the pieces fit one wave; no split unless
  // k >= 2 and a piece's share plus its fixed cost, 1 / k + kSplitPieceOverheadSteps / m of a task,
  // is below 0.95. At most sms pieces, so the workspace holds at most sms partials. Where measured
  // on the H200 / H100 (docs/perf.md v28 item 1):
  //  - fewer tasks than SMs, every schedule: the ordered schedules' chains then run k shorter
  //    pipelines side by side (1 x 2 heads at hdim 128 full 4k, 64 tasks: 1.32x; GQA 32 / 4 at 1k:
  //    2.05x);
  //  - atomic (no dQ chain) with T >= sms: hdim 64 full 2k-16k (4 tasks in 8 pieces) +2-3.5%;
  //  - not an ordered schedule with T >= sms: its last tasks are the tails of their heads' dQ chains,
  //    each a step behind its predecessor in the wave before, so cutting them does not shorten the
  //    tail (measured with the split: 0.96-0.98 at hdim 128 full 1k-4k, level at 8k-16k).
  // Not splittable(): unchanged.
  inline ScheduleModel with_last_wave_split(int sms = kLastWaveSms) const {
    ScheduleModel r = *this;
    r.split_tasks = 0;
    r.split_pieces = 1;
    const int T = num_tasks();
    const int steps = m;  // full masks: every task visits every Q tile
    if (!splittable() || sms <= 0 || T <= 0 || steps < 2) return r;
    if (T >= sms && deterministic()) return r;
    const int L = T < sms ? T : T % sms;
    if (L == 0) return r;
    int k = sms / L;
    if (k > kMaxSplitPieces) k = kMaxSplitPieces;
    if (k > steps) k = steps;
    if (k < 2 || 1.0 / k + kSplitPieceOverheadSteps / steps >= 0.95) return r;
    r.split_tasks = L;
    r.split_pieces = k;
    return r;
  }

  // ---- execution order -------------------------------------------------------------------
  DASH_HD int num_sides(int slot) const {
    return schedule == Schedule::kSymmetricShift && n - 1 - slot > slot ? 2 : 1;
  }
  // KV tile processed by side `side` of task slot `slot`.
  DASH_HD int kv_tile(int slot, int side) const {
    if (schedule == Schedule::kSpt) return n - 1 - slot;
    if (schedule == Schedule::kSymmetricShift && side == 1) return n - 1 - slot;
    return slot;
  }
  // Inverse of kv_tile: which slot and side own KV tile j.
  DASH_HD int slot_of(int j) const {
    if (schedule == Schedule::kSpt) return n - 1 - j;
    if (schedule == Schedule::kSymmetricShift && j >= tasks_per_head) return n - 1 - j;
    return j;
  }
  DASH_HD int side_of(int j) const {
    return schedule == Schedule::kSymmetricShift && j >= tasks_per_head ? 1 : 0;
  }
  // Steps of one side for one query head (= Q tiles the KV tile sees).
  DASH_HD int num_steps(int slot, int side) const { return p.q_tile_count(kv_tile(slot, side)); }
  DASH_HD int task_steps(int slot) const {
    int s = num_steps(slot, 0);
    if (num_sides(slot) == 2) s += num_steps(slot, 1);
    return s * p.q_per_kv();
  }

  // shift: KV tile j starts its cyclic walk at Q tile (stride * j) mod m, stride = max(1, m / n).
  // With m >= 2n (e.g. 64-row Q tiles and 128-key KV tiles, the sm90 kernel) the n start tiles
  // are `stride` apart, so consecutive contributions to a dQ tile arrive `stride` steps apart:
  // every link of the chain gets `stride` steps of slack instead of one. With m < 2n (the sm80
  // kernel's square tiles) it is the paper's j mod m. Still a pure function of the shape.
  DASH_HD int shift_stride() const { return start_stride; }
  DASH_HD int shift_start(int j) const { return (shift_stride() * j) % m; }
  // symmetric shift: the long sides' starts in their shared rectangle of r = m - rect_begin Q
  // tiles are stride apart by the same rule (r >= 2 * tasks_per_head: stride r / tasks_per_head).
  DASH_HD int rect_stride() const { return start_stride; }

  // Q tile visited at step t by side `side` of slot `slot`.
  DASH_HD int visit(int slot, int side, int t) const {
    const int j = kv_tile(slot, side);
    const int a = p.q_tile_begin(j);
    switch (schedule) {
      case Schedule::kDescending:
      case Schedule::kAtomic:
        return m - 1 - t;
      case Schedule::kShift: {
        // Cyclic order starting at Q tile shift_start(j), restricted to the visible suffix [a, m).
        const int j0 = shift_start(j);
        if (j0 < a) return a + t;
        return t < m - j0 ? j0 + t : a + (t - (m - j0));
      }
      case Schedule::kSymmetricShift: {
        if (side == 1) return m - 1 - t;  // short side: descending
        const int r = m - rect_begin;     // rectangle shared by every long side
        if (t < r) return rect_begin + (rect_stride() * slot + t) % r;
        return a + (t - r);               // private triangle, ascending
      }
      default:  // ascending, spt
        return a + t;
    }
  }

  // Inverse of visit: step at which KV tile j visits Q tile i (i must be visible from j).
  // For the short side of a symmetric pair the step counts from the start of the long side,
  // so that arrival order across pairs follows time.
  DASH_HD int step_of(int j, int i) const {
    const int a = p.q_tile_begin(j);
    switch (schedule) {
      case Schedule::kDescending:
      case Schedule::kAtomic:
        return m - 1 - i;
      case Schedule::kShift: {
        const int j0 = shift_start(j);
        if (j0 < a) return i - a;
        return i >= j0 ? i - j0 : (m - j0) + (i - a);
      }
      case Schedule::kSymmetricShift: {
        const int slot = slot_of(j);
        if (side_of(j) == 1) return num_steps(slot, 0) + (m - 1 - i);
        const int r = m - rect_begin;
        if (i >= rect_begin) return ((i - rect_begin - rect_stride() * slot) % r + r) % r;
        return r + (i - a);
      }
      default:
        return i - a;
    }
  }

  // ---- accumulation order ----------------------------------------------------------------
  DASH_HD ChainKey key(int j, int i) const {
    const int slot = slot_of(j);
    return ChainKey{group_of_slot(slot), side_of(j), step_of(j, i), slot};
  }
  // Contributions to dQ tile i (per query head): KV tiles 0 .. chain_length(i)-1.
  DASH_HD int chain_length(int i) const { return p.kv_tile_end(i); }
  // Position of KV tile j's contribution in dQ tile i's chain: the value the dQ semaphore
  // must hold before j adds. -1 for the atomic schedule (no order).
  DASH_HD int rank(int i, int j) const {
    switch (schedule) {
      case Schedule::kAtomic: return -1;
      case Schedule::kAscending:
      case Schedule::kDescending: return j;
      case Schedule::kSpt: return chain_length(i) - 1 - j;
      default: {
        const ChainKey k = key(j, i);
        int r = 0;
        const int len = chain_length(i);
        for (int jj = 0; jj < len; ++jj) r += (jj != j && key(jj, i) < k) ? 1 : 0;
        return r;
      }
    }
  }
  // Shift on a full mask with consecutive starts (start_stride 1) and no more KV tiles than Q
  // tiles: every KV tile sees every Q tile and starts its walk at Q tile j, so
  // step_of(jj, i) = (i - jj) mod m, and the rank (the loop above) has a closed form. Within j's
  // group [lo, hi) the steps of the other contributions to dQ tile i are t + (j - jj) mod m with
  // t = step_of(j, i); jj precedes j iff that is below t (no two are equal: jj != j, |j - jj| < m):
  //   jj > j precedes iff jj - j <= t                 (jj in (j, min(j + t, hi - 1)]),
  //   jj < j precedes iff (j - jj) + t >= m           (jj in [lo, j + t - m]);
  // every contribution of a lower group precedes (lo of them), none of a higher group does.
  // O(1) instead of the loop over the chain. rank() keeps the loop (the definition, and the code
  // the sm90 kernels' MMA warps compile); the sm90 kernel's writer-rank variants compute this in
  // the dQ writer instead (kernels::bwd_sm90_writer_rank, docs/perf.md v18). Tests:
  // ScheduleModel.ShiftClosedFormRank (against the loop), BwdSm90SplitRank (the GPU's bits).
  DASH_HD bool shift_rank_closed() const {
    return schedule == Schedule::kShift && !p.causal && start_stride == 1 && n <= m;
  }
  DASH_HD int shift_rank(int i, int j) const {
    const int t = i >= j ? i - j : m - j + i;
    const int lo = group_width >= n ? 0 : (j / group_width) * group_width;
    const int hi = lo + group_width < n ? lo + group_width : n;
    const int later = t < hi - 1 - j ? t : hi - 1 - j;
    const int wrapped = j + t - m - lo + 1;
    return lo + later + (wrapped > 0 ? wrapped : 0);
  }
  // Partial rank over KV tiles jj = first, first+stride, ... (a warp splits the loop).
  DASH_HD int rank_partial(int i, int j, int first, int stride) const {
    const ChainKey k = key(j, i);
    int r = 0;
    const int len = chain_length(i);
    for (int jj = first; jj < len; jj += stride) r += (jj != j && key(jj, i) < k) ? 1 : 0;
    return r;
  }
  // Symmetric shift (causal) with consecutive rectangle starts (start_stride 1), no more tasks per
  // head than rectangle Q tiles (T <= r, so the long sides' rectangle steps are distinct) and KV
  // tiles no narrower than Q tiles (block_n >= block_m: q_tile_begin strictly increases past its
  // zero region). Then rank() has a closed form too (symshift_rank), by the same counting as
  // shift_rank (ScheduleModel.SymmetricShiftClosedFormRank tests it against the loop). The sm90
  // kernel's kWRankSym variants compute it in the dQ writer (the default since docs/perf.md v19).
  DASH_HD bool symshift_rank_closed() const {
    return schedule == Schedule::kSymmetricShift && p.causal && start_stride == 1 &&
           tasks_per_head <= m - rect_begin && p.block_n >= p.block_m;
  }
  // The KV tiles sharing q_tile_begin with KV tile x form [first, last]: q_tile_begin is 0 up to
  // the last KV tile some row of Q tile 0 sees and strictly increasing after it (block_n >= block_m).
  DASH_HD void qtb_plateau(int x, int* first, int* last) const {
    if (p.q_tile_begin(x) != 0) {
      *first = *last = x;
      return;
    }
    // q_tile_begin(y) == 0  <=>  y * block_n - (seqlen_k - seqlen_q) + 1 <= block_m
    const long long lim = (long long)p.block_m + (p.seqlen_k - p.seqlen_q) - 1;
    const long long y = lim < 0 ? -1 : lim / p.block_n;
    *first = 0;
    *last = y < n - 1 ? (int)y : n - 1;
  }
  // rank(i, j) of symmetric shift in O(1) where symshift_rank_closed(): the contributions to dQ
  // tile i (KV tiles jj < len = chain_length(i)) that precede j's key (group, side, step, slot).
  //  - lower groups: their long sides jj = slot < len and their short sides jj = n - 1 - slot
  //    visible (slot >= n - len), slot < S1 = n - T (the slots that have a short side);
  //  - j a short side: every visible long side of its group precedes it;
  //  - same group and side: short sides step 2m - 1 - i - q_tile_begin(slot) (descending walks
  //    after the long side), long sides before the rectangle r + i - q_tile_begin(slot): both
  //    precede iff q_tile_begin(slot') > q_tile_begin(p), or equal with slot' < p: with the
  //    plateau [L, U] of p, the slots >= L except [p, U]; long sides in the rectangle
  //    (i >= rect_begin) step (c - slot') mod r, c = i - rect_begin: shift_rank's count.
  DASH_HD int symshift_rank(int i, int j) const {
    const int T = tasks_per_head, S1 = n - T, W = group_width;
    const int len = chain_length(i);
    const int side = side_of(j), pj = slot_of(j);
    const int g = group_of_slot(pj);
    const int glo = g * W, ghi = glo + W;
    auto span = [](int a, int b) { return b > a ? b - a : 0; };  // |[a, b)|
    auto mn = [](int a, int b) { return a < b ? a : b; };
    auto mx = [](int a, int b) { return a > b ? a : b; };
    // lower groups
    int r = mn(mn(glo, T), len) + span(mx(0, n - len), mn(glo, S1));
    // slots of j's group on j's side that are visible: [lo, hi)
    int lo, hi;
    if (side == 1) {
      r += span(glo, mn(mn(ghi, T), len));  // the group's visible long sides
      lo = mx(glo, n - len);
      hi = mn(ghi, S1);
    } else {
      lo = glo;
      hi = mn(mn(ghi, T), len);
    }
    const int rr = m - rect_begin;
    // (shift_rank's count, over the rectangle's rr tiles. Not shared through a helper: written so,
    // the writer-rank kernels that ran on the H200 compiled to other SASS (register assignment).)
    if (side == 0 && i >= rect_begin) {
      const int c = i - rect_begin;
      const int t = c >= pj ? c - pj : rr - pj + c;
      const int later = t < hi - 1 - pj ? t : hi - 1 - pj;
      const int wrapped = pj + t - rr - lo + 1;
      return r + later + (wrapped > 0 ? wrapped : 0);
    }
    int L, U;
    qtb_plateau(pj, &L, &U);
    return r + span(mx(lo, L), hi) - span(mx(lo, pj), mn(hi, U + 1));
  }
  DASH_HD bool rank_needs_loop() const {
    return schedule == Schedule::kShift || schedule == Schedule::kSymmetricShift;
  }
};

// Host-side names ("ascending", "spt", "descending", "shift", "symmetric_shift", "atomic",
// "auto"). Defined in src/schedule/names.cpp.
const char* schedule_name(Schedule s);
bool parse_schedule(const char* name, Schedule* out);
const char* dispatch_name(Dispatch d);
bool parse_dispatch(const char* name, Dispatch* out);

}  // namespace dash
