// dash-attn: the planner. Simulates every schedule on a persistent grid and picks the fastest
// deterministic one. Used by `dash-attn plan` and by the GPU launcher for Schedule::kAuto.
#pragma once

#include <vector>

#include "dash_attn/schedule.h"
#include "schedule/cost_model.h"
#include "schedule/simulator.h"

namespace dash::plan {

struct PlanRow {
  Schedule schedule = Schedule::kAscending;  // as requested (symmetric_shift on a full mask
  Schedule resolved = Schedule::kAscending;  //   resolves to shift, see ScheduleModel::make)
  Dispatch dispatch = Dispatch::kDynamic;
  double makespan = 0.0;       // simulated time; +inf when infeasible
  double lower_bound = 0.0;    // total work / SMs
  double efficiency = 0.0;     // lower_bound / makespan
  double stall_share = 0.0;    // stall time / (SMs * makespan)
  double idle_share = 0.0;     // time with no task / (SMs * makespan)
  double critical_path = 0.0;  // longest path of one head's DAG (the bound with unlimited SMs)
  int min_coresident = 1;
  int num_tasks = 0;
  bool feasible = true;        // min_coresident <= SMs (and the simulated grid completed)
  bool deterministic = true;
  int head_block = 1;          // the task order's head block (ScheduleModel::head_block)
  double l2_factor = 1.0;      // the L2 working-set term's factor on c and r (CostModel::l2_factor)
};

// Schedules within this relative distance of the fastest count as tied in recommend(). Only
// numerical ties: on the 24-point H200 sweep (docs/schedules.md) every tolerance of 0.2% or more
// made `auto` worse (a 1% tolerance: 18/24 points within 3% of the measured best instead of
// 21/24), because the model's margins are small where the GPU's are not (shift vs descending on
// full masks, symmetric shift vs spt on causal ones at hdim 128). Exact ties (ascending, spt
// and descending on a full mask) still go to descending.
constexpr double kTieTolerance = 1e-6;

// head_block > 0: the tasks taken in blocks of that many heads (ScheduleModel::with_head_block, what
// DASH_HEAD_BLOCK does to the kernels; grouped schedules stay head-major); 0: the default order
// (ScheduleModel::default_head_block).
// The task model the planner simulates for schedule s: ScheduleModel::make, the head block (as above),
// and the last-wave split where the cost model has it (the sm90 kernels' default).
ScheduleModel planned_model(const TileProblem& prob, Schedule s, const CostModel& cost, int head_block = 0);
PlanRow plan_one(const TileProblem& prob, Schedule s, const CostModel& cost, int num_sms,
                 Dispatch dispatch, int head_block = 0);
// Every concrete schedule, atomic included, in enum order.
std::vector<PlanRow> plan_all(const TileProblem& prob, const CostModel& cost, int num_sms,
                              Dispatch dispatch, int head_block = 0);
// Best feasible deterministic schedule (smallest makespan); ties (kTieTolerance) prefer
// descending, then the simpler schedule (ascending, spt, shift, symmetric_shift).
Schedule recommend(const TileProblem& prob, const CostModel& cost, int num_sms,
                   Dispatch dispatch = Dispatch::kDynamic);
// Same choice from rows plan_all already computed (rows of other schedules are ignored): the
// model's pick alone.
Schedule recommend_from(const std::vector<PlanRow>& rows);
// The model's pick with the measured rules below; what recommend() returns (head_dim: the
// CostModel's, 0 if not known; it selects the long-full-mask rule's schedule; post_poll: the
// CostModel's, whether the kernel's postprocess polls, which sets the short-causal rule's reach).
// shift_full_tiles_hd128: the CostModel's (CostParams::shift_full_tiles_hd128; 0: no such rule).
// num_sms: the grid the rows were simulated on (0: not known; the short-causal rule then applies
// whatever the number of KV tasks).
// split: the CostModel's last_wave_split (the rows simulated the split; the few-task shift rule below).
// shift_full_tiles_hd64: the CostModel's (CostParams::shift_full_tiles_hd64): the head_dim 64
// long-full-mask rule's reach in KV tiles.
Schedule recommend_from(const std::vector<PlanRow>& rows, const TileProblem& prob, int head_dim = 0,
                        bool post_poll = false, int shift_full_tiles_hd128 = 0, int num_sms = 0, bool split = false,
                        int shift_full_tiles_hd64 = 64);
// The same with every rule parameter read from the CostModel the rows were simulated with (its
// head_dim, post_poll, shift_full_tiles_hd128, last_wave_split and shift_full_tiles_hd64): what
// recommend() and `dash-attn plan` use.
Schedule recommend_from(const std::vector<PlanRow>& rows, const TileProblem& prob, const CostModel& cost, int num_sms);
// The schedule a measured rule below puts in place of the model's pick when the model has it
// within the rule's tolerance (kAuto: no rule for this problem).
Schedule measured_rule_schedule(const TileProblem& prob, int head_dim, bool post_poll = false,
                                int shift_full_tiles_hd128 = 0, int num_sms = 0, int shift_full_tiles_hd64 = 64);

// A measured rule on top of the model (docs/schedules.md, "Long full masks"): on a full mask with
// at least kSptLongFullTiles KV tiles per head, in tiles of >= 128 keys (the sm90 kernel's), spt
// replaces the model's pick when the model puts spt within kSptLongFullModelGap of it. On the
// H200 at full 16384, spt ran 0.9-13% faster than descending at 7 of the 10 points of the five
// sm90 sweeps (two head dims each) and in every later run (2.3-11%), and 0.9-2.1% slower at the
// other 3; the simulator has both chains pipelining alike there (spt 0.05-1.5% behind), so no rate
// of the model moves it. At 8192 (64 tiles) descending or ascending is the measured best, and spt
// is up to 7% slower.
constexpr int kSptLongFullTiles = 128;
constexpr double kSptLongFullModelGap = 0.03;
// The same on short causal masks (docs/schedules.md, "Short causal masks"): at most
// kSptShortCausalTiles KV tiles per head of >= 128 keys, spt replaces the model's pick when the
// model puts it within kSptShortCausalModelGap. On the H200 at causal 512 and 1024, spt ran
// in 0.2-2.4% less time than descending at every point of the ff7314a and 106791e sweeps (hdim 128
// and 64; peers and `dash-attn bench` combined) and in 4.9% less at hdim 64 1024 once both ran
// 80-row tiles (0.696 / 0.732 ms; 6546a58's peers: `auto`, descending, ran at 0.948 of spt's speed
// there); the model has spt 0.7-2.5% behind.
// At 2048 descending is as often ahead (hdim 128: 1.0%).
constexpr int kSptShortCausalTiles = 8;
constexpr double kSptShortCausalModelGap = 0.03;
// The rule's reach where the postprocess polls (CostModel::post_poll: PDL and the polling
// postprocess, the kernel's defaults since the twenty-first session; docs/schedules.md "The
// postprocess in the model"): up to kSptShortCausalTilesPoll KV tiles (seqlen_k <= 4096 with 128-key
// tiles). On the e29ccbd sweep (peers + `dash-attn bench` combined) spt ran in less time than
// descending at every causal point up to 4096 at both head dims but hdim 64 512 (a tie): at 2048 /
// 4096 descending took 4.2% / 3.1% longer at hdim 128 and 3.3% / 2.5% at hdim 64, where on the
// ef0214e sweep, without polling, spt took 1.8% / 2.9% longer at hdim 128. The model with the
// postprocess term has the two within 0.5% there (spt ahead by 0.1-0.4% with the fitted rate,
// descending ahead by 1.0% at hdim 128 4096 with 2200 GB/s), so the rule, not those margins,
// decides; at 8192 (64 tiles) the GPU had descending ahead at hdim 128 (1.6%) and spt by 0.5% at hdim 64.
constexpr int kSptShortCausalTilesPoll = 32;
// Neither short-causal reach applies where the KV tasks (batch x kv heads x KV tiles) are fewer than
// the grid's CTAs (num_sms given): every point above had 1056-2048 tasks on 132 SMs; with GQA at
// causal 1000 (batch 2, 8 KV heads: 128 tasks, each over 4 query heads) descending ran in 7.1% less
// time than spt at hdim 128 and 4.5% less at hdim 64 (min of 2 rounds; twenty-sixth session, docs/data/s26-h200/
// next57-auto-sweep), where the model has the two tied.
// The short-causal rule's reach: KV tiles per head up to which it applies.
constexpr int spt_short_causal_tiles(bool post_poll) {
  return post_poll ? kSptShortCausalTilesPoll : kSptShortCausalTiles;
}
// The long-full-mask rule at head_dim 64 (docs/schedules.md, "Long full masks"): shift instead of
// spt. Since the closed-form rank in the dQ writer (ff7314a) full-mask shift ran in 1.9-3.8% less
// time than spt at hdim 64 full 16384 in all four runs (ff7314a and 106791e `dash-attn bench`,
// 106791e and 68d0908 peers, min over calls) and spt was the best at hdim 128 in each; the model
// (order_penalty_closed_hd64 0.01) has shift 1.3% behind descending there. On the sweeps of the
// kernels that computed the rank in the MMA warps the model has shift 35% behind, and the spt rule
// applies there as before.
constexpr int kShiftLongFullHeadDim = 64;
// Its tolerance: 5% (3% until the thirty-second session, as spt's rules). `auto` simulates head_dim 64
// on 64-row tiles (kernels::bwd_sm90_block_m(shape, kAuto)), where the schedules run 96-row ones, and
// that model has shift 2.2% / 3.1% / 2.3% / 1.6% behind descending at the sweep's full 2k / 4k / 8k /
// 16k: at 4096 just outside 3%, so `auto` ran descending there (next87, H100: 2.784 / 2.794 / 2.776 ms
// against shift's 2.677 / 2.680 / 2.659, 4.0-4.4% longer) although descending took 1.8-5.5% longer than
// shift in all five runs with the group take (descending / shift 1.018 peers next69-p2, 1.055 `dash-attn
// bench` next83, 1.047 peers next84, 1.039 / 1.036 / 1.049 bench next87's three rounds, 1.020 peers next87).
constexpr double kShiftLongFullModelGap = 0.05;
// Its reach at head_dim 64 (twenty-eighth session): from this many KV tiles per head (8192 keys),
// not kSptLongFullTiles. At hdim 64 full 8192 shift ran in 0.2-4.9% less time than descending (the
// model's pick there) in the last four peers runs (H200 s25 / s26 / s28, H100 s27: descending /
// shift time 1.002, 1.008, 1.051, 1.039; docs/perf.md v29 item 4), where the model has shift 2.7%
// behind; at 4096 the runs split both ways (0.969-1.017), so the rule stops at 8192.
constexpr int kShiftLongFullTilesHd64 = 64;
// Its reach with the group take (thirty-first session; CostParams::shift_full_tiles_hd64 in the sm90
// set): from 16 KV tiles (2048 keys). The group take made shift 3-6% faster at hdim 64 full 2-4k
// (docs/perf.md v31 item 1), and on the H100 since then shift ran in less time than descending (the
// model's pick there) in all three runs at 2048 and 4096 (descending / shift time 1.025 / 1.055
// `dash-attn bench` next83, 1.030 / 1.047 and 1.016 / 1.018 peers next84 and next69-p2), where the
// model (64-row tiles, what `auto` simulates) has shift 2.2% / 3.1% behind (kShiftLongFullModelGap);
// at 1024 shift led by 1.0-1.6% (no rule: within 3% either way).
constexpr int kShiftLongFullTilesHd64GroupTake = 16;
static_assert(CostParams{}.shift_full_tiles_hd64 == kShiftLongFullTilesHd64 &&
                  kSm90Params.shift_full_tiles_hd64 == kShiftLongFullTilesHd64GroupTake,
              "the head_dim 64 rule's reach: the drain kernels' and the group take's");
static_assert(kSptLongFullModelGap == kSptShortCausalModelGap,
              "recommend_from applies one tolerance to the two spt rules");
// The long-full-mask rule at head_dim 128 (docs/schedules.md "Long full masks at head_dim 128: the
// two-buffer shift"; the twenty-third session's kernels, CostParams::shift_full_tiles_hd128 = 64):
// full-mask shift there runs the 80-row tile with two dQ staging buffers, which the model does not
// have (`auto` is simulated on 64-row tiles, where shift pays its visit-order penalty and is 5-7%
// behind descending at 8k-16k). On the H200 (`dash-attn bench`, min of 2 rounds, docs/data/
// dq2-h200-d3ccd21) it ran in 5.6% less time than the best other schedule at full 8192 and 16384,
// 1.0% less at 4096 and 0.7% / 4% more at 2048 / 1024. So from shift_full_tiles_hd128 KV tiles
// shift replaces the model's pick where the model has it within kShiftLongFull128ModelGap of it
// (and feasible: its co-resident group fits the grid); else the other rules apply.
constexpr double kShiftLongFull128ModelGap = 0.10;

// A measured rule for the last-wave split (ScheduleModel::with_last_wave_split): on a full mask with
// fewer KV tasks than kLastWaveSms, where ascending / descending / spt run in pieces and shift does
// not, shift replaces the model's pick when the model has it within kShiftFewTasksModelGap. Measured
// (H100, twenty-seventh session, docs/data/s27-h100/next63-small, min of 2): at six shapes of 32-64
// tasks (hdim 128 and 64, 1k-4k) shift took 0.89-0.97x the best split ordered schedule's time where
// the model put it 10-19% behind (the model overrates the pieces); with GQA 32 / 4 at 1k (32 tasks of
// 8 query heads) the split spt took 0.51x shift's time, the model 2.8x apart. Tolerance 0.25: between.
constexpr double kShiftFewTasksModelGap = 0.25;
// Where that rule applies: the split simulated (CostModel::last_wave_split), a full mask, the sm90
// tiles and fewer KV tasks than kLastWaveSms.
inline bool few_tasks_shift_rule_applies(const TileProblem& prob, bool split) {
  return split && !prob.causal && prob.block_n >= 128 && (long long)prob.num_heads() * prob.n_tiles() < kLastWaveSms;
}
// Full masks at head_dim 128 with kAscendingFullTilesHd128 to kAscendingFullTilesHd128End - 1 KV
// tiles of >= 128 keys (seqlen_k 4096-8191; twenty-sixth session, docs/schedules.md "`auto` away from
// the standard sweep"): ascending replaces the model's pick where the model has it within
// kSptLongFullModelGap (3%; the model has ascending and descending tied there, and ties went to
// descending). In the five peers runs of the current kernels' lineage (e29ccbd, b016d55, a72dbe9,
// 9685406, 3eca68b) descending took 1.049 / 1.002 / 1.051 / 1.006 / 1.048x ascending's time at hdim 128
// full 4096, never less; `dash-attn bench` has them tied there (0.989-1.002). At 2048 the peers ratio
// is 0.996-1.019 and at 8192 0.983-1.028, so the rule stops at both.
constexpr int kAscendingFullTilesHd128 = 32;
constexpr int kAscendingFullTilesHd128End = 64;
// Predicted backward time (the cost model's unit, microseconds for for_shape); kAuto is
// resolved with recommend(). +inf when the schedule cannot run on num_sms.
double predict_us(const TileProblem& prob, Schedule s, const CostModel& cost, int num_sms,
                  Dispatch dispatch);

}  // namespace dash::plan
