// dash-attn: the cost model of the DAG planner. Maps a tile shape to the two node weights of
// the spec's DAG: c, the compute of one (Q tile, KV tile) pair (five GEMMs plus softmax), and
// r, the serialised dQ reduce of that pair (bulk add of the dQ partial into L2 plus the
// semaphore hand-off). Units are microseconds (the unit model uses abstract units).
#pragma once

#include <string>

#include "dash_attn/schedule.h"

namespace dash {

// Rates behind CostModel::for_shape. The defaults (CostParams{}) are the sm80 kernel's set
// (src/kernels/attn_bwd_sm80.cu, tiles 64x64, used for hdim 64 and fp16), calibrated on an H200
// (132 SMs, our sm80 backward v2 at commit 5704589, bf16; the 24-point sweep
// docs/data/bench-h200-5704589.json, table in docs/schedules.md): per_sm_tflops and
// compute_overhead_us fit the atomic schedule at hdim 64 and 128 (c = 3.44 / 4.63 us, the median
// over the 12 shapes of each head dim), the reduce (r = 1.26 / 1.51 us, unchanged from the
// 8-shape fit) is a best grid point by the number of points where `auto` is within 3% of the
// measured best (21/24), then by the pairs in order. The grid search is
// Calibration.DISABLED_FitCostParams in tests/cpu/test_async_reduce.cpp. The sm90 kernel (tiles
// 64x128) has its own set, kSm90Params below; CostParams::for_tiles picks the set by the tiles,
// and the planner's callers (the `auto` resolution, `dash-attn plan`, `dash-attn bench`) use it.
// Every field is overridable.
struct CostParams {
  double per_sm_tflops = 2.2;          // achieved dense bf16 rate of one SM in the backward
  double compute_overhead_us = 2.25;   // per 64x64 tile pair (scales with bm*bn, not with d):
                                       // softmax, exp, dS, pipeline bubbles, masking
  double reduce_gbytes_per_s = 64.0;   // one SM's fp32 reduce-add bandwidth into L2 (GB/s)
  double reduce_latency_us = 1.0;      // semaphore acquire/release + bulk-add completion
  bool async_reduce = true;            // the dQ writer warp model (see CostModel::async_reduce)
  int stage_buffers = 2;               // smem dQ stage depth between MMA warps and writer (a
                                       // fitted, effective value: see kSm90Params)
  bool group_take = false;             // CostModel::group_take (the sm90 kernel's default since
                                       // the thirtieth session; its sweeps before had the drain)
  // Per-side cost (0 in the sm80 set): a fixed time before the first step of every side of a
  // task, i.e. of every KV tile a task processes (the K/V tile load, the pipeline fill and the
  // dK/dV epilogue all happen once per side: a symmetric-shift task has two sides and pays it
  // twice), in microseconds for a KV tile of 128 keys at head_dim 128; scales with
  // block_n * head_dim (the bytes it moves).
  double task_overhead_us = 0.0;
  // Empirical visit-order penalty of shift and symmetric shift (0 in the sm80 set): their
  // compute cost is multiplied by
  //   1 + order_penalty_base + order_penalty_slope * max(0, w - order_penalty_knee),
  // w = min(the mean number of a group's tasks in flight, SMs), see CostModel::order_width.
  // A memory-system effect of many distinct Q/dO and dQ tiles in flight that the DAG does not
  // have; measured on an H200 (see kSm90Params).
  double order_penalty_base = 0.0;
  double order_penalty_slope = 0.0;
  double order_penalty_knee = 0.0;
  // Full-mask shift with the closed-form rank (ScheduleModel::shift_rank_closed: the sm90 kernel's
  // writer-rank variants, whose MMA warps compute no rank): its factor is 1 + order_penalty_closed
  // instead of the formula above, whose base and slope were fitted while the rank was a loop in
  // the MMA warps. < 0 (the default): the formula for every shift.
  double order_penalty_closed = -1.0;
  // The same for causal symmetric shift with the closed-form rank (ScheduleModel::
  // symshift_rank_closed: the kWRankSym kernels, the default from the eighteenth session). < 0:
  // the formula (the sweeps of kernels that computed its rank in the MMA warps).
  double order_penalty_closed_sym = -1.0;
  // order_penalty_closed at head_dim 64 (< 0: order_penalty_closed there too). Unused where
  // order_penalty_closed < 0 (the sweeps of kernels without the closed-form rank).
  double order_penalty_closed_hd64 = -1.0;
  // Atomic reduces skip the semaphore protocol: they take r - reduce_latency_us on the writer
  // (false in the sm80 set, where atomic pays the whole r).
  bool atomic_skips_latency = false;
  // The postprocess (dQ = scale * dq_accum: one fp32 read and one 16-bit write per dQ element,
  // one block per dQ tile) after the main kernel, at this rate of the whole GPU (GB/s of those
  // bytes). 0 (the sm80 set): not modelled, the makespan is the main kernel's.
  double post_gbytes_per_s = 0.0;
  // How the deterministic schedules' postprocess runs (atomic's never polls):
  //   false: after the main kernel (the same time for every schedule of a shape);
  //   true: polling (the sm90 kernel with programmatic dependent launch and
  //     DASH_BWD_POST_POLL, the defaults since the twenty-first session): its blocks, in grid
  //     order (head, query head, Q tile), land on the SMs whose main CTA has exited, and each
  //     converts its dQ tile once the tile's chain is complete. The conversion fills the main
  //     kernel's tail (SimResult::main_makespan .. makespan).
  bool post_poll = false;
  // Postprocess blocks resident per SM (256 threads: 8 per SM); each runs at 1/post_blocks_per_sm
  // of the SM's share of the rate.
  int post_blocks_per_sm = 8;
  // Full-mask shift at head_dim 128 runs the 80-row kernel with two dQ staging buffers (the sm90
  // kernels from the twenty-third session; DASH_BWD_SM90_DQ2): from this many KV tiles per head the
  // planner's measured rule picks it (plan::measured_rule_schedule; docs/schedules.md "Long full
  // masks at head_dim 128: the two-buffer shift"). 0: no such rule (the older sweeps' kernels).
  int shift_full_tiles_hd128 = 0;
  // Full-mask shift at head_dim 64 (the 64-row kernels and taller, block_n 128): from this many KV
  // tiles per head the planner's measured rule picks it (plan::measured_rule_schedule; docs/
  // schedules.md "Long full masks at head_dim 64: shift"). 64 (8192 keys) for the kernels with the
  // taker's drain (plan::kShiftLongFullTilesHd64); 16 (2048 keys) in the sm90 set since the group
  // take (plan::kShiftLongFullTilesHd64GroupTake).
  int shift_full_tiles_hd64 = 64;
  // The sm90 backward's last-wave split (ScheduleModel::with_last_wave_split, DASH_BWD_SPLIT_LAST):
  // the planner simulates the split model, each piece paying task_overhead_us as a task does.
  bool last_wave_split = false;
  // The L2 working set of the heads in flight (0 in both sets: off; docs/schedules.md "Head blocks
  // and the L2"; fitted values: kSm90L2Term). Every step reads a Q and a dO tile (16-bit) and adds
  // into a dQ accumulator tile (fp32) of its head, block_m x head_dim x 8 bytes, which the head's
  // next task reads again about one task length later. The working set is
  //   ws = heads in flight x (a task's steps, the mean over the head's tasks) x those bytes,
  // heads in flight = min(heads, max(head block, SMs / tasks per head)) (CostModel::l2_heads): the
  // bytes the grid touches between two tasks of one head visiting a tile. With x = ws / l2_mbytes
  // (MB of 1e6 bytes), every compute and reduce takes
  //   1 + l2_penalty * max(0, x - l2_knee)^2
  // times as long. What it models: the head block (ScheduleModel::head_block) sets how many heads
  // share the grid, so it moves ws; the other terms do not depend on it.
  double l2_mbytes = 0.0;   // 0: no term
  double l2_penalty = 0.0;
  double l2_knee = 0.0;

  // The calibrated set for the backward kernel with these tiles: 64x128 is the sm90 kernel
  // (src/kernels/attn_bwd_sm90.cu, see kSm90Params below); every other tile shape gets the sm80
  // set above (CostParams{}), unchanged.
  static CostParams for_tiles(int block_m, int block_n);
};

// The set of the sm90 backward (src/kernels/attn_bwd_sm90.cu, tiles 64x128, head_dim 64 and 128).
// Since the twenty-second session it is fitted on the e29ccbd sweep (PDL and the polling
// postprocess on by default: bench/peers.py docs/data/next35-h200-e29ccbd/peers/peers.json.gz combined
// with `dash-attn bench` suite/bench-hdim{128,64}.json; table kMeasuredSm90PeersE29ccbd,
// Calibration.Sm90CostParamsOnTheE29ccbdPeers; docs/schedules.md "The postprocess in the model"),
// with the postprocess in the model: post_gbytes_per_s 1800 (the conversion alone, 16k tokens x
// hidden 2048: ~115 us; ncu timed the polling kernel alone at 90-105 us) and post_poll (the ordered
// schedules' conversion fills the main kernel's tail, atomic's follows it). What polling changed:
// spt, whose head-major order ends on a ragged tail, hides most of the conversion, descending,
// interleaved and balanced, little of it; spt went from 1.8% / 2.9% behind descending at hdim 128
// causal 2k / 4k (ef0214e) to 4.2% / 3.1% ahead (descending's time / spt's). Refit by scripts/fit_planner.py --data e29ccbd
// --fit (compute at 2000 GB/s, then reduce, penalty base and rate): per_sm_tflops 6.1, overhead
// 0.25 us, task_overhead_us 11.0 (c = 2.22 / 1.36 us at hdim 128 / 64: the per-call cost the old
// compute fit had spread over the steps is now the postprocess's), r = 32 GB/s + 0.5 us (1.52 /
// 1.01 us; the fit's first by better_fit, 1.0 us + 64 GB/s, ties it on `auto` and pairs and orders
// one pair fewer at hdim 64 on each older sweep since ff7314a), penalty unchanged. On e29ccbd: `auto` within 3% at 24/24 (the set before: 21/24),
// pairs > 3% apart in order 143/153 (140), atomic error 3.8% (5.3%), rms log ratio 0.076 (0.087).
// The older sweeps are scored with post_poll off (their postprocess ran after the main kernel: the
// same time for every schedule of a shape). Before the refit (e8a6c5a to the twenty-second session):
// calibrated on an H200 (132 SMs, bf16, late task taking, the default task order) on the 24-point
// sweep of the dual-dQ-writer kernel (two writer warps, one per staging buffer, the default since
// 250529d): bench/peers.py at 250529d (docs/data/peers-h200-250529d/bench-python.txt; hdim 64 full
// from docs/data/peers-h200-3505b4f-hdim64full/peers.json) combined with `dash-attn bench`
// (docs/data/writer-h200-b254d6c/next-dual-hdim{128,64}.json), by scripts/fit_planner.py
// --data 250529d --fit (table kMeasuredSm90Dual in tests/cpu/test_async_reduce.cpp,
// docs/schedules.md). Checked on the current kernel (take-ahead 1 by default, 9dd59e9:
// scripts/fit_planner.py, table kMeasuredSm90Ahead1, Calibration.Sm90CostParamsOnTakeAhead1):
// `auto` within 3% at 23/24 (miss: hdim 64 full 16384, spt 3.1% faster), pairs 149/156, atomic
// 2.4%, rms log ratio 0.084; a refit on it (--fit) returns this set unchanged. The head dim
// enters through the formulas of CostModel::for_shape (one set for both head dims):
//   compute: atomic per tile pair is c + task/m (m = Q tiles per task): 2.41 us + 17.0 us / m at
//     hdim 128, 1.45 us + 8.5 us / m at hdim 64; linear in d: per_sm_tflops 5.5, overhead 0.25 us
//     per 64x64 (0.50 us per 64x128 pair), task_overhead_us 17.0 per side (K/V load, pipeline
//     fill, dK/dV epilogue, ~d; a symmetric-shift task pays it for both of its KV tiles).
//   reduce: 2 stage buffers (the kernel's), r = 16 GB/s + 0.25 us semaphore protocol (2.30 us at
//     hdim 128, 1.27 us at hdim 64; below c at both: measured descending / atomic is 0.96-1.12,
//     above 1.05 only at hdim 64 512-1k and at full 16k); atomic reduces skip the protocol. The
//     simulator keeps one in-order writer per CTA: the second writer is folded into these
//     effective values.
//   visit order: an empirical H200 penalty on shift / symmetric shift compute,
//     1 + 0.35 + 0.008 * max(0, w - 32), w = tasks of a group in flight (CostModel::order_width);
//     the knee from the unordered diagnostic of 6ed5f35. The GPU's penalty is larger at hdim 64
//     than at hdim 128; one set sits between them.
// The previous set (e58bc06, fitted on the single-writer kernel of a77d6b6: 5.2 TFLOP/s, 0.40 us,
// 16.0 us, 32 GB/s + 1.5 us, penalty 0.25 / 0.008) has the same picks here but predicts atomic 14%
// slower than measured.
// Scores on the dual-writer sweep (scripts/fit_planner.py, Calibration.Sm90CostParamsAgainstTheH200):
// `auto` within 3% of the measured best at 22/24 points (the e58bc06 set: 22/24, the same picks,
// descending everywhere; misses: full 16384 at both head dims, spt 5.4% / 9.8% faster), pairs > 3%
// apart in order 147/155 (145), atomic mean error 2.2% (14.2%), rms log ratio error 0.089 (0.094).
// order_penalty_closed 0.05 (seventeenth session): full-mask shift with the closed-form rank in the
// dQ writer (the kWRank kernels) measured 0.99-1.13 of atomic at 1k-16k (docs/data/final-h200-ff7314a),
// where the formula above still says 1.35+; scored on that sweep (scripts/fit_planner.py --data
// ff7314a, Calibration.Sm90CostParamsOnWriterRank): rms log ratio error 0.075 instead of 0.141, pairs
// in order 130/150 instead of 127/150, `auto` unchanged (23/24). 0 and 0.10 score 129 and 128 pairs.
// The older sweeps are scored without it (their kernels computed the rank in the MMA warps).
// order_penalty_closed_sym 0.05 (eighteenth session): causal symmetric shift with the closed-form
// rank in the dQ writer (kWRankSym) measured 0.91-1.00 of atomic at 1k-16k (docs/data/final-h200-
// 106791e); scored on that sweep (scripts/fit_planner.py --data 106791e, Calibration.
// Sm90CostParamsOnSymWriterRank): rms log ratio error 0.066 instead of 0.108 with the formula,
// pairs in order 132/150 instead of 127/150, `auto` 24/24 either way; 0.10 and 0.15: 130 and 128
// pairs, rms 0.069 and 0.075.
// order_penalty_closed_hd64 0.01 (nineteenth session): at head_dim 64 closed-form shift runs at
// 0.99-1.01 of descending at full 4k-8k (68d0908 peers), at hdim 128 0.94. Scored at hdim 64 on the
// ff7314a / 106791e / 68d0908 sweeps: `auto` 12/12 on each (with 0.05: 11 / 12 / 11, with the
// head_dim 64 long-full-mask rule, plan::kShiftLongFullHeadDim), pairs unchanged (0.0: one fewer
// on each). docs/schedules.md "Long full masks at head_dim 64: shift".
inline constexpr CostParams kSm90Params{.per_sm_tflops = 6.1,
                                        .compute_overhead_us = 0.25,
                                        .reduce_gbytes_per_s = 32.0,
                                        .reduce_latency_us = 0.5,
                                        .async_reduce = true,
                                        .stage_buffers = 2,
                                        .group_take = true,
                                        .task_overhead_us = 11.0,
                                        .order_penalty_base = 0.35,
                                        .order_penalty_slope = 0.008,
                                        .order_penalty_knee = 32.0,
                                        .order_penalty_closed = 0.05,
                                        .order_penalty_closed_sym = 0.05,
                                        .order_penalty_closed_hd64 = 0.01,
                                        .atomic_skips_latency = true,
                                        .post_gbytes_per_s = 1800.0,
                                        .post_poll = true,
                                        .shift_full_tiles_hd128 = 64,
                                        .shift_full_tiles_hd64 = 16,
                                        .last_wave_split = true};
// The sm90 kernel's 80-row tiles (80 x 128; full masks, bwd_sm90_block_m): kSm90Params with a
// higher per-SM rate, the only field refit (the per-step fixed costs are shared by 25% more rows,
// so the tile's time grows less than its flops). Fitted on the H200 (sixteenth session, commit
// 19c11e2, `dash-attn bench`, atomic at full 1k-16k, hdim 128 and 64: docs/data/final-h200-19c11e2)
// by a grid over per_sm_tflops 5.5-7.5 x compute_overhead_us 0-0.5 through `dash-attn plan
// --block-m 80`: 6.5 / 0.25, rms log ratio error 0.020 (kSm90Params: 0.114, every point 8-15%
// pessimistic). With the e29ccbd refit of kSm90Params (its postprocess term; atomic converts after
// the main kernel) the rate was refit on the same points (6.5-7.7 at the set's overhead 0.25): 6.8,
// rms 0.023, every point within 3.3% (6.5: 0.034, up to 5.2% pessimistic). Test:
// Calibration.Sm90EightyRowSetAgainstTheH200. The shift orders are not fitted: the visit-order
// penalty predates the split rank (docs/perf.md v17 item 9).
inline constexpr CostParams kSm90Params80 = [] {
  CostParams p = kSm90Params;
  p.per_sm_tflops = 6.8;
  return p;
}();
// The L2 working-set term fitted on the head-block A/B (H100, thirty-fifth session, docs/data/
// s35-h100/next99 and next100: DASH_HEAD_BLOCK 4 / 8 / 16 / 32, ascending and descending, hdim 128
// on 64-row tiles and hdim 64 on 96-row tiles, full and causal, 2k-16k) by scripts/fit_head_block.py
// --fit (docs/schedules.md "Head blocks and the L2"). Not in kSm90Params / kSm90Params80: it moves
// every interleaved schedule's time at long lengths (atomic's too), which the calibration sweeps
// (all at the default head blocks) were fitted without; `dash-attn plan --l2` and
// with_l2_term add it.
struct L2Term {
  double mbytes, penalty, knee;
};
inline constexpr L2Term kSm90L2Term{50.0, 0.004, 0.0};
inline constexpr CostParams with_l2_term(CostParams p, const L2Term& t = kSm90L2Term) {
  p.l2_mbytes = t.mbytes;
  p.l2_penalty = t.penalty;
  p.l2_knee = t.knee;
  return p;
}

struct CostModel {
  double c = 1.0;  // compute node C(i, j)
  double r = 0.25; // reduce node R(i, j)
  std::string name = "unit";
  // Reduce model.
  //   false (sync, the spec's model): the reduce runs on the SM after its compute and holds it,
  //     including the wait for the chain predecessor. The closed forms are for this model.
  //   true (async, the sm80 backward since the dQ writer warp): the MMA warps hand each dQ
  //     partial to a writer warp through `stage_buffers` smem buffers. Per CTA, over its steps
  //     s in program order (across tasks): C(s) starts at max(end of C(s-1), end of
  //     R(s - stage_buffers)) and R(s) starts at max(end of C(s), end of R(s-1) (one writer, in
  //     order), end of the chain predecessor). The reduce is not SM work; a CTA takes its next
  //     task when its last compute ends, its writer drains the old reduces meanwhile.
  bool async_reduce = false;
  int stage_buffers = 2;
  // Async model, dynamic dispatch, grouped schedules: the kernel's group take (DASH_BWD_GROUP_TAKE,
  // BwdKernelParams::group_take): a CTA skips the drain before its next task when the task counter
  // has reached ScheduleModel::group_end_task of its last task.
  bool group_take = false;
  // Fixed cost of every side of a task (every KV tile it processes) before the side's first
  // compute (CostParams::task_overhead_us scaled to the tiles and head dim). Busy time of the
  // SM. 0 = none (the spec's model).
  double task_us = 0.0;
  // Writer time of an atomic (unchained) reduce; < 0: r (the spec's model).
  double r_atomic = -1.0;
  // Visit-order penalty (CostParams::order_penalty_*), applied by for_schedule.
  double order_penalty_base = 0.0;
  double order_penalty_slope = 0.0;
  double order_penalty_knee = 0.0;
  double order_penalty_closed = -1.0;
  double order_penalty_closed_sym = -1.0;
  // The postprocess (CostParams::post_*): the whole GPU's rate in GB/s (0: not modelled), polling
  // for the deterministic schedules, blocks per SM. The simulator prices a dQ tile from the
  // tiles' block_m and head_dim below.
  double post_gbytes_per_s = 0.0;
  bool post_poll = false;
  int post_blocks_per_sm = 8;
  int shift_full_tiles_hd128 = 0;  // CostParams::shift_full_tiles_hd128 (a measured planner rule)
  int shift_full_tiles_hd64 = 64;  // CostParams::shift_full_tiles_hd64 (a measured planner rule)
  bool last_wave_split = false;    // CostParams::last_wave_split (the simulated model is split)
  // The L2 working-set term (CostParams::l2_*), applied by for_schedule; the tile's bytes come from
  // the tiles' block_m and head_dim below.
  double l2_mbytes = 0.0;
  double l2_penalty = 0.0;
  double l2_knee = 0.0;
  bool l2_term() const { return l2_mbytes > 0.0 && l2_penalty > 0.0 && head_dim > 0; }
  // The head dimension for_shape was given (0: the unit model, or not known). The planner's
  // measured long-full-mask rule depends on it (plan::recommend_from).
  int head_dim = 0;
  // Experiments only (async model): each compute takes c * (1 + jitter * z), z a seeded
  // pseudo-random standard normal per (SM, step), clamped to [0.25 c, 4 c]. 0 = deterministic
  // costs (every planner decision uses 0). Models the step-to-step variation of a real GPU.
  double jitter = 0.0;
  unsigned long long jitter_seed = 1;
  // Experiments only (async model): extra writer time of a chain's last link (rank + 1 ==
  // chain_length), what the completion queue's append adds to it (docs/perf.md v36). 0 = none.
  double last_link_extra_us = 0.0;

  // Default model for the kernel's tiles: head_dim and the tile sizes in rows/keys, with the
  // rates of CostParams::for_tiles(block_m, block_n), or the given ones.
  static CostModel for_shape(int head_dim, int block_m, int block_n);
  static CostModel for_shape(int head_dim, int block_m, int block_n, const CostParams& params);
  // The abstract model of the spec's closed forms.
  static CostModel unit(double c = 1.0, double r = 0.25);
  // The mean number of tasks of one co-resident group in flight while its longest task runs:
  // the group's steps / the longest task's steps (full-mask shift: the group width; causal
  // shift, whose tasks shrink along the diagonal: about half of it; symmetric shift: the group
  // width, its paired tasks have equal length), capped at num_sms (<= 0: no cap). This is how
  // many distinct Q tiles of one head a shift-type schedule has in flight. 1 for the others.
  static double order_width(const ScheduleModel& sm, int num_sms);
  // Compute multiplier of the visit-order penalty for this schedule (1 unless shift or
  // symmetric shift and a penalty is set).
  double order_factor(const ScheduleModel& sm, int num_sms) const;
  // The L2 term (CostParams::l2_*): the heads whose tasks share the grid at a time, min(heads,
  // max(head block, num_sms / tasks per head)); the working set ws in bytes; the factor on c and r
  // (1 where the term is off).
  static double l2_heads(const ScheduleModel& sm, int num_sms);
  double l2_working_set(const ScheduleModel& sm, int num_sms) const;
  double l2_factor(const ScheduleModel& sm, int num_sms) const;
  // This model with the visit-order penalty folded into c and the L2 factor into c and r (and
  // their fields cleared, so that applying it twice changes nothing). The simulator and the DAG
  // call it.
  CostModel for_schedule(const ScheduleModel& sm, int num_sms) const;
  // "sync" or "async (N stage buffers)", for reports.
  std::string reduce_model() const;
};

}  // namespace dash
