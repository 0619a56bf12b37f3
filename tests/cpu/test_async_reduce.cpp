// The async-reduce model (dQ writer warp): closed forms where there are some, the event log,
// the DAG, deadlock detection, and the calibration of CostParams against H200 measurements.
//
// The calibration tables below are the input data (the 24-point v2 sweep of our own sm80 backward
// on an H200, median of 5, docs/data/bench-h200-5704589.json: 132 SMs, 1 CTA/SM, tiles 64x64,
// bf16, 16384 tokens, hidden 2048, MHA, dynamic dispatch; and five 24-point sweeps of the sm90
// backward, tiles 64x128, late task taking: the current kernel (take-ahead 1 by default, 9dd59e9:
// kMeasuredSm90Ahead1, scored; a refit on it by scripts/fit_planner.py returns the same set), the
// dual-dQ-writer kernel (250529d, the sm90 set is fitted on it by scripts/fit_planner.py
// --data 250529d: kMeasuredSm90Dual),
// docs/data/bench-h200-sm90-a77d6b6.json (the single-writer kernel of the e58bc06 fit), and the
// older kernel's docs/data/bench-h200-15a0f38-hdim{128,64}.json with the default task order and
// docs/data/bench-h200-sm90-late-combined.json head-major). Every
// prediction is recomputed by the simulator from CostParams{} (sm80) and
// CostParams::for_tiles(64, 128) (sm90).
//   DASH_CALIBRATION_TABLE=1 ./dash_cpu_tests --gtest_filter='Calibration.*'   prints the table;
//   --gtest_also_run_disabled_tests --gtest_filter='Calibration.DISABLED_Fit*'   refits.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "sweep.h"
#include "schedule/dag.h"
#include "schedule/planner.h"
#include "schedule/simulator.h"

namespace dash {
namespace {

TileProblem unit_problem(int n, bool causal, int heads = 1) {
  TileProblem p;
  p.heads_q = p.heads_kv = heads;
  p.seqlen_q = p.seqlen_k = n;
  p.block_m = p.block_n = 1;
  p.causal = causal;
  return p;
}

CostModel async_unit(double c, double r, int buffers = 2) {
  CostModel m = CostModel::unit(c, r);
  m.async_reduce = true;
  m.stage_buffers = buffers;
  return m;
}

bool same_params(const CostParams& a, const CostParams& b) {
  return a.per_sm_tflops == b.per_sm_tflops && a.compute_overhead_us == b.compute_overhead_us &&
         a.reduce_gbytes_per_s == b.reduce_gbytes_per_s && a.reduce_latency_us == b.reduce_latency_us &&
         a.async_reduce == b.async_reduce && a.stage_buffers == b.stage_buffers &&
         a.task_overhead_us == b.task_overhead_us && a.order_penalty_base == b.order_penalty_base &&
         a.order_penalty_slope == b.order_penalty_slope && a.order_penalty_knee == b.order_penalty_knee &&
         a.order_penalty_closed == b.order_penalty_closed && a.order_penalty_closed_sym == b.order_penalty_closed_sym &&
         a.order_penalty_closed_hd64 == b.order_penalty_closed_hd64 &&
         a.atomic_skips_latency == b.atomic_skips_latency && a.post_gbytes_per_s == b.post_gbytes_per_s &&
         a.post_poll == b.post_poll && a.post_blocks_per_sm == b.post_blocks_per_sm &&
         a.shift_full_tiles_hd128 == b.shift_full_tiles_hd128 && a.shift_full_tiles_hd64 == b.shift_full_tiles_hd64 &&
         a.group_take == b.group_take;
}

// ---- the model itself -------------------------------------------------------------------------

TEST(AsyncReduce, DefaultsAndUnitModel) {
  EXPECT_FALSE(CostModel::unit().async_reduce);   // the spec's closed forms stay as they are
  EXPECT_FALSE(CostModel{}.async_reduce);
  const CostModel d = CostModel::for_shape(128, 64, 64);
  EXPECT_TRUE(d.async_reduce);
  EXPECT_EQ(d.stage_buffers, 2);
  CostParams sync;
  sync.async_reduce = false;
  EXPECT_FALSE(CostModel::for_shape(128, 64, 64, sync).async_reduce);
  EXPECT_NE(d.reduce_model().find("async"), std::string::npos);
  // The set follows the tiles: 64x128 is the sm90 kernel's, everything else the sm80 defaults.
  EXPECT_TRUE(same_params(CostParams::for_tiles(64, 64), CostParams{}));
  EXPECT_TRUE(same_params(CostParams::for_tiles(128, 128), CostParams{}));
  EXPECT_TRUE(same_params(CostParams::for_tiles(64, 128), kSm90Params));
  const CostModel d_explicit = CostModel::for_shape(128, 64, 64, CostParams{});
  EXPECT_EQ(d.c, d_explicit.c);
  EXPECT_EQ(d.r, d_explicit.r);
  const CostModel h = CostModel::for_shape(128, 64, 128);
  const CostModel h_explicit = CostModel::for_shape(128, 64, 128, kSm90Params);
  EXPECT_EQ(h.c, h_explicit.c);
  EXPECT_EQ(h.r, h_explicit.r);
  EXPECT_EQ(h.stage_buffers, kSm90Params.stage_buffers);
  EXPECT_NE(CostModel::unit().reduce_model().find("sync"), std::string::npos);
}

TEST(AsyncReduce, AtomicAndShiftOnTheUnitModel) {
  // One head of n x n tiles on n SMs, full mask. Atomic never waits for a chain: the MMA side
  // runs n computes back to back unless the writer (one reduce per step) is slower, so the
  // time is max(n c + r, c + n r) for two or more stage buffers. Shift is stall-free: at every
  // step the tiles touch distinct dQ tiles whose predecessor reduced one step earlier, so it
  // matches atomic exactly.
  for (const auto& [c, r] : std::vector<std::pair<double, double>>{{1, 0.25}, {1, 1}, {2, 0.5}, {1, 0}, {0.5, 3}})
    for (int n : {1, 2, 3, 7, 16}) {
      const double expect = std::max(n * c + r, c + n * r);
      for (Schedule s : {Schedule::kAtomic, Schedule::kShift}) {
        const ScheduleModel sm = ScheduleModel::make(unit_problem(n, false), s);
        const SimResult res = simulate(sm, async_unit(c, r), n, Dispatch::kDynamic);
        ASSERT_TRUE(res.ok) << res.error;
        EXPECT_TRUE(res.async_reduce);
        EXPECT_NEAR(res.makespan, expect, 1e-9) << schedule_name(s) << " n=" << n << " c=" << c << " r=" << r;
        EXPECT_NEAR(res.lower_bound, n * c, 1e-9);  // compute only: the reduce is not SM work
      }
    }
}

TEST(AsyncReduce, NeverSlowerThanSyncOnOneHead) {
  // One head, one SM per task: the async DAG only removes the R(s) -> C(s+1) edge's weight
  // from the MMA path, so no step can finish later than in the sync model.
  for (bool causal : {false, true})
    for (int k = 0; k < kNumConcreteSchedules; ++k)
      for (int n : {4, 9, 16}) {
        const ScheduleModel sm = ScheduleModel::make(unit_problem(n, causal), static_cast<Schedule>(k));
        const SimResult a = simulate(sm, async_unit(1.0, 0.6), sm.num_tasks(), Dispatch::kStatic);
        const SimResult s = simulate(sm, CostModel::unit(1.0, 0.6), sm.num_tasks(), Dispatch::kStatic);
        ASSERT_TRUE(a.ok && s.ok);
        EXPECT_LE(a.makespan, s.makespan + 1e-9) << schedule_name(sm.schedule) << " n=" << n;
      }
}

TEST(AsyncReduce, DagEqualsAnUnboundedGrid) {
  // Also with a per-side fixed cost (CostModel::task_us): the DAG puts it on the first compute
  // of every side, the simulator before it; both must agree.
  for (double task_us : {0.0, 2.5})
  for (int buffers : {1, 2, 3})
    for (bool causal : {false, true})
      for (int n : {1, 5, 12})
        for (int k = 0; k < kNumConcreteSchedules; ++k) {
          TileProblem p = unit_problem(n, causal);
          p.seqlen_q = n + 3;
          p.heads_q = 2;
          const ScheduleModel sm = ScheduleModel::make(p, static_cast<Schedule>(k));
          CostModel cost = async_unit(1.0, 0.7, buffers);
          cost.task_us = task_us;
          const CriticalPath cp = critical_path(build_dag(sm, cost));
          ASSERT_TRUE(cp.acyclic) << schedule_name(sm.schedule);
          const SimResult res = simulate(sm, cost, sm.num_tasks(), Dispatch::kStatic);
          ASSERT_TRUE(res.ok) << res.error;
          EXPECT_NEAR(res.makespan, cp.length, 1e-9)
              << schedule_name(sm.schedule) << " n=" << n << " buffers=" << buffers << " causal=" << causal;
        }
}

TEST(AsyncReduce, FixedCostIsPaidPerSide) {
  // CostModel::task_us is the K/V load + pipeline fill + dK/dV epilogue of one KV tile: a
  // symmetric-shift task (two KV tiles) pays it twice, every other task once. The lower bound
  // (total SM work / P) counts it per side, in both reduce models, and a single SM running one
  // task alone shows it in the makespan.
  for (bool async : {false, true})
    for (int k = 0; k < kNumConcreteSchedules; ++k) {
      const ScheduleModel sm = ScheduleModel::make(unit_problem(8, true), static_cast<Schedule>(k));
      CostModel cost = async ? async_unit(1.0, 0.0) : CostModel::unit(1.0, 0.0);
      cost.task_us = 3.0;
      const int P = sm.num_tasks();
      const SimResult res = simulate(sm, cost, P, Dispatch::kStatic);
      ASSERT_TRUE(res.ok) << res.error;
      long long steps = 0, sides = 0;
      for (int slot = 0; slot < sm.tasks_per_head; ++slot) {
        steps += sm.task_steps(slot);
        sides += sm.num_sides(slot);
      }
      EXPECT_EQ(sides, 8) << schedule_name(sm.schedule);  // one per KV tile
      EXPECT_EQ(sm.num_tasks(), sm.schedule == Schedule::kSymmetricShift ? 4 : 8);
      EXPECT_NEAR(res.lower_bound * P, steps * 1.0 + sides * 3.0, 1e-9) << schedule_name(sm.schedule);
      // No task can end before its own work: steps + sides x task_us of its longest task.
      double longest = 0;
      for (int slot = 0; slot < sm.tasks_per_head; ++slot)
        longest = std::max(longest, sm.task_steps(slot) * 1.0 + sm.num_sides(slot) * 3.0);
      EXPECT_GE(res.makespan, longest - 1e-9) << schedule_name(sm.schedule);
    }
}

TEST(AsyncReduce, EventLogFollowsTheWriterModel) {
  // Per SM: computes in order, never overlapping, each starting at max(previous compute end,
  // end of the reduce `buffers` partials back); reduces in hand-off order, each starting at
  // max(its compute end, the previous reduce on the writer, its chain predecessor).
  TileProblem p;
  p.batch = 2;
  p.heads_q = 4;
  p.heads_kv = 2;
  p.seqlen_q = 640;
  p.seqlen_k = 576;
  p.causal = true;
  for (int buffers : {1, 2, 3}) {
    CostModel cost = CostModel::for_shape(128, 64, 64);
    cost.stage_buffers = buffers;
    cost.r = 1.7 * cost.c;  // make the writer matter
    for (int k = 0; k < kNumConcreteSchedules; ++k)
      for (Dispatch d : {Dispatch::kDynamic, Dispatch::kStatic}) {
        const ScheduleModel sm = ScheduleModel::make(p, static_cast<Schedule>(k));
        const SimResult res = simulate(sm, cost, 13, d, true);
        ASSERT_TRUE(res.ok) << res.error;
        std::map<int, std::vector<const StepEvent*>> per_sm;  // in hand-off order
        std::map<std::tuple<int, int, int>, std::map<int, double>> chains;
        for (const StepEvent& e : res.events) {
          per_sm[e.sm].push_back(&e);
          if (sm.deterministic()) chains[{e.head, e.g, e.i}][sm.rank(e.i, e.j)] = e.reduce_end;
        }
        double stall = 0;
        for (const auto& [s, ev] : per_sm)
          for (size_t q = 0; q < ev.size(); ++q) {
            const StepEvent& e = *ev[q];
            const double prev_c = q > 0 ? ev[q - 1]->compute_end : 0.0;
            const double buf = q >= static_cast<size_t>(buffers) ? ev[q - buffers]->reduce_end : 0.0;
            EXPECT_NEAR(e.compute_end - e.start, cost.c, 1e-9);
            EXPECT_NEAR(e.reduce_end - e.reduce_start, cost.r, 1e-9);
            // A CTA takes a new task at its last compute end, except with dynamic dispatch and
            // co-resident groups, where it first waits for its writer to drain (idle, not stall).
            const bool drains = d == Dispatch::kDynamic && sm.min_coresident() > 1 && q > 0 && ev[q - 1]->task != e.task;
            const double free_at = drains ? std::max(prev_c, ev[q - 1]->reduce_end) : prev_c;
            EXPECT_NEAR(e.start, std::max(free_at, buf), 1e-9) << schedule_name(sm.schedule) << " sm " << s;
            stall += e.start - free_at;
            double pred = 0.0;
            if (sm.deterministic()) {
              const int rk = sm.rank(e.i, e.j);
              if (rk > 0) pred = chains[{e.head, e.g, e.i}].at(rk - 1);
            }
            const double prev_r = q > 0 ? ev[q - 1]->reduce_end : 0.0;
            EXPECT_NEAR(e.reduce_start, std::max({e.compute_end, prev_r, pred}), 1e-9);
          }
        EXPECT_NEAR(stall, res.total_stall, 1e-6);
      }
  }
}

TEST(AsyncReduce, DeadlockIsStillDetected) {
  // Shift needs its whole group resident: 16 tasks of 16 steps on 8 SMs cannot finish, with or
  // without the writer warp (the MMA side runs ahead at most `buffers` steps).
  const ScheduleModel sm = ScheduleModel::make(unit_problem(16, false), Schedule::kShift);
  for (int buffers : {1, 2, 4}) {
    const SimResult res = simulate(sm, async_unit(1.0, 0.25, buffers), 8, Dispatch::kDynamic);
    EXPECT_FALSE(res.ok);
    EXPECT_NE(res.error.find("deadlock"), std::string::npos) << res.error;
    EXPECT_NE(res.error.find("waits for rank"), std::string::npos) << res.error;
  }
  EXPECT_TRUE(simulate(sm, async_unit(1.0, 0.25), 16, Dispatch::kDynamic).ok);
}

// ---- the plan CLI says which reduce model it uses ------------------------------------------

std::string run_cli(const std::string& args) {
  const std::string cmd = std::string("'") + DASH_CLI_PATH + "' " + args + " 2>&1";
  std::string out;
  FILE* f = popen(cmd.c_str(), "r");
  if (f == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  pclose(f);
  return out;
}

TEST(AsyncReduce, PlanCliPrintsTheReduceModel) {
  const std::string def = run_cli("plan --batch 1 --heads 4 --kv-heads 4 --seqlen 512");
  EXPECT_NE(def.find("reduce model: async"), std::string::npos) << def;
  const std::string sync = run_cli("plan --batch 1 --heads 4 --kv-heads 4 --seqlen 512 --reduce sync");
  EXPECT_NE(sync.find("reduce model: sync"), std::string::npos) << sync;
  const std::string unit = run_cli("plan --cost-model unit");
  EXPECT_NE(unit.find("reduce model: sync"), std::string::npos) << unit;
  const std::string json = run_cli("plan --cost-model unit --reduce async --json");
  EXPECT_NE(json.find("\"reduce_model\": \"async\""), std::string::npos) << json;
  // The tiles pick the calibrated set: 64x64 the sm80 one, 64x128 the sm90 one (both 2 stage
  // buffers since the 82481fb refit; the sm90 set is recognised by its c).
  EXPECT_NE(def.find("2 stage buffers)"), std::string::npos) << def;
  const std::string sm90 = run_cli("plan --batch 1 --heads 4 --kv-heads 4 --seqlen 512 --block-n 128");
  EXPECT_NE(sm90.find("2 stage buffers)"), std::string::npos) << sm90;
  char c_line[64];
  std::snprintf(c_line, sizeof c_line, "c = %.4g us", CostModel::for_shape(128, 64, 128).c);
  EXPECT_NE(sm90.find(c_line), std::string::npos) << sm90;
  const std::string k3 = run_cli("plan --batch 1 --heads 4 --kv-heads 4 --seqlen 512 --block-n 128 --stage-buffers 3");
  EXPECT_NE(k3.find("3 stage buffers)"), std::string::npos) << k3;
}

// ---- calibration against the H200 ------------------------------------------------------------

// The v2 sweep of docs/perf.md (commit 5704589, median of 5, bwd_ms of every schedule), copied
// from docs/data/bench-h200-5704589.json: hdim 64/128 x full/causal x seqlen 512..16384, batch x
// seqlen = 16384, heads = 2048 / hdim, MHA, tiles 64x64, dynamic dispatch. On a full mask the
// symmetric_shift row ran shift (the same kernel path); it is not compared there. The kernel
// measured here predates the writer drain between grouped tasks that the simulator models.
struct Measured {
  int hdim, seqlen;
  bool causal;
  double ms[kNumConcreteSchedules];  // ascending, spt, descending, shift, symmetric_shift, atomic
};
// clang-format off
const Measured kMeasured[] = {
  {64, 512, false, {2.1425, 2.1568, 2.1577, 2.0072, 2.0119, 1.9231}},
  {64, 1024, false, {3.8923, 3.9556, 3.945, 3.6849, 3.6754, 3.4261}},
  {64, 2048, false, {7.2224, 7.2854, 7.255, 6.9869, 6.9721, 6.3729}},
  {64, 4096, false, {13.0437, 13.211, 13.0958, 13.7294, 13.7297, 12.2373}},
  {64, 8192, false, {25.4752, 26.001, 25.5959, 32.2847, 32.267, 23.9514}},
  {64, 16384, false, {50.0968, 51.529, 50.4521, 91.6647, 91.6246, 47.2194}},
  {64, 512, true, {3.3149, 1.3444, 1.5781, 1.41, 1.4164, 1.3473}},
  {64, 1024, true, {24.7954, 2.2208, 3.0853, 2.3119, 2.3492, 2.1764}},
  {64, 2048, true, {32.7115, 3.9854, 8.5051, 4.1292, 4.2181, 3.8474}},
  {64, 4096, true, {35.8372, 7.4844, 9.2654, 7.9601, 8.4732, 7.1118}},
  {64, 8192, true, {37.3046, 14.4723, 14.5549, 18.6312, 20.6859, 14.107}},
  {64, 16384, true, {44.6039, 28.4788, 28.5487, 49.6721, 56.6324, 27.4278}},
  {128, 512, false, {1.5639, 1.5883, 1.5671, 1.4273, 1.4243, 1.4305}},
  {128, 1024, false, {2.823, 2.882, 2.8367, 2.5555, 2.562, 2.5385}},
  {128, 2048, false, {5.2208, 5.3335, 5.2295, 4.8155, 4.8214, 4.7633}},
  {128, 4096, false, {9.6816, 10.0259, 9.75, 9.3697, 9.3401, 9.1627}},
  {128, 8192, false, {18.9793, 19.7147, 19.1807, 18.8626, 18.8626, 18.0047}},
  {128, 16384, false, {37.4587, 39.1252, 37.8183, 50.4773, 50.2847, 35.9787}},
  {128, 512, true, {2.4468, 1.0189, 1.109, 0.9855, 0.9811, 0.9754}},
  {128, 1024, true, {15.7338, 1.6594, 2.2496, 1.5997, 1.5717, 1.5406}},
  {128, 2048, true, {21.3263, 2.9486, 5.4949, 2.8114, 2.7584, 2.6673}},
  {128, 4096, true, {24.003, 5.501, 6.2058, 5.2218, 5.1791, 4.8604}},
  {128, 8192, true, {25.2647, 10.5477, 10.0619, 10.6762, 11.6059, 9.2448}},
  {128, 16384, true, {30.9327, 20.5965, 19.5693, 27.148, 30.5514, 18.0513}},
};
// clang-format on

// The sm90 sweeps (src/kernels/attn_bwd_sm90.cu, tiles 64x128, bf16, hdim 128 and 64, median of
// 7, dynamic dispatch, H200 132 SMs, 1 CTA/SM): full/causal x seqlen 512..16384, batch x seqlen =
// 16384, heads = 2048 / hdim, MHA. Both have late task taking (the default since 83059c9). As
// above, symmetric_shift on a full mask ran shift.
//
// kMeasuredSm90: commit 15a0f38, the current defaults (late taking, and ascending / descending /
// atomic take the heads interleaved in blocks of 16, ScheduleModel::default_head_block, since
// 341ed6b), every schedule in one run: docs/data/bench-h200-15a0f38-hdim{128,64}.json. Simulated
// with the default task order.
// clang-format off
const Measured kMeasuredSm90[] = {
  {128, 512, false, {0.6718, 0.6879, 0.6729, 0.7629, 0.7623, 0.6604}},
  {128, 1024, false, {1.0535, 1.111, 1.0571, 1.1857, 1.1899, 1.0432}},
  {128, 2048, false, {1.81, 1.9181, 1.8242, 2.0677, 2.0707, 1.8135}},
  {128, 4096, false, {3.354, 3.4934, 3.3657, 3.8, 3.8035, 3.3456}},
  {128, 8192, false, {6.6072, 6.6381, 6.4281, 8.2707, 8.1838, 6.3523}},
  {128, 16384, false, {13.633, 12.8496, 12.9605, 19.0591, 18.9392, 12.4267}},
  {128, 512, true, {0.6561, 0.5431, 0.5339, 0.6074, 0.5918, 0.5502}},
  {128, 1024, true, {1.07, 0.7548, 0.7429, 0.8577, 0.845, 0.775}},
  {128, 2048, true, {1.437, 1.2047, 1.1477, 1.3585, 1.322, 1.2198}},
  {128, 4096, true, {2.1616, 2.0299, 1.9032, 2.3165, 2.3116, 1.9885}},
  {128, 8192, true, {3.7208, 3.6833, 3.3871, 4.5006, 4.4012, 3.4887}},
  {128, 16384, true, {6.8785, 6.9795, 6.5277, 9.9276, 9.9553, 6.4829}},
  {64, 512, false, {0.9009, 0.9186, 0.9079, 1.1516, 1.1611, 0.8389}},
  {64, 1024, false, {1.4856, 1.5597, 1.4849, 1.9484, 1.9418, 1.3908}},
  {64, 2048, false, {2.6015, 2.7349, 2.6197, 3.5425, 3.5501, 2.4904}},
  {64, 4096, false, {4.8778, 5.049, 4.8416, 6.7095, 6.67, 4.6553}},
  {64, 8192, false, {9.2481, 9.4896, 9.2718, 14.1961, 14.1909, 8.9432}},
  {64, 16384, false, {18.2304, 18.5981, 18.218, 33.9632, 34.1637, 17.4847}},
  {64, 512, true, {0.8698, 0.7226, 0.7251, 0.883, 0.8504, 0.6837}},
  {64, 1024, true, {1.5094, 1.0482, 1.037, 1.3506, 1.2958, 1.0151}},
  {64, 2048, true, {2.0494, 1.6698, 1.6378, 2.2128, 2.1421, 1.6023}},
  {64, 4096, true, {3.213, 2.9346, 2.806, 3.9376, 3.8196, 2.7762}},
  {64, 8192, true, {5.5704, 5.3701, 5.1534, 7.9125, 7.5963, 5.0251}},
  {64, 16384, true, {10.1921, 10.1909, 9.8424, 17.6612, 17.3498, 9.5657}},
};
// clang-format on

// kMeasuredSm90HeadMajor: commit 6ed5f35, every schedule head-major (before the head blocks),
// combined from the experiment run docs/data/exp-h200-6ed5f35 (the rows used, with their source
// file: docs/data/bench-h200-sm90-late-combined.json): ascending, spt, descending and atomic from
// bench-late.json (DASH_BWD_TAKE_LATE=1, the default since 83059c9); shift and symmetric_shift
// from bench-default.json (hdim 128) and bench-hdim64.json (run-ahead taking, which the
// shift-type schedules do not use; atomic there agrees with bench-late within 2%). Simulated
// head-major (Sweep::head_block = 1). (The run-ahead sweeps of the previous fits:
// docs/data/bench-h200-82481fb-hdim{128,64}.json and docs/data/bench-h200-sm90-e06bd5f.json.)
// clang-format off
const Measured kMeasuredSm90HeadMajor[] = {
  {128, 512, false, {0.6716, 0.6711, 0.6651, 0.7617, 0.7558, 0.6542}},
  {128, 1024, false, {1.088, 1.0906, 1.0818, 1.1808, 1.1818, 1.0303}},
  {128, 2048, false, {1.9127, 1.9238, 1.8938, 2.0476, 2.0508, 1.7913}},
  {128, 4096, false, {3.4714, 3.4801, 3.4394, 3.7629, 3.7592, 3.2926}},
  {128, 8192, false, {6.7633, 6.6298, 6.4889, 8.1629, 8.1689, 6.3461}},
  {128, 16384, false, {13.1638, 12.836, 12.5948, 18.9777, 18.9615, 12.4004}},
  {128, 512, true, {0.6804, 0.5259, 0.5275, 0.5943, 0.5831, 0.5395}},
  {128, 1024, true, {1.6387, 0.7292, 0.7767, 0.8397, 0.8179, 0.7651}},
  {128, 2048, true, {7.5407, 1.1542, 1.4478, 1.3258, 1.3025, 1.2097}},
  {128, 4096, true, {11.9155, 1.9623, 2.7876, 2.2728, 2.2691, 2.0714}},
  {128, 8192, true, {14.2925, 3.5722, 3.6488, 4.493, 4.3815, 3.9005}},
  {128, 16384, true, {15.4271, 6.7516, 6.5814, 9.8356, 9.8609, 7.4476}},
  {64, 512, false, {0.9058, 0.9181, 0.9137, 1.1284, 1.1291, 0.8387}},
  {64, 1024, false, {1.5393, 1.5493, 1.5506, 1.9297, 1.9276, 1.3972}},
  {64, 2048, false, {2.695, 2.719, 2.7007, 3.5109, 3.5063, 2.4722}},
  {64, 4096, false, {4.9512, 4.9784, 4.9591, 6.6514, 6.6461, 4.6519}},
  {64, 8192, false, {9.3982, 9.4397, 9.3964, 14.1503, 14.1457, 9.0004}},
  {64, 16384, false, {18.6194, 18.6552, 18.4852, 33.8309, 33.8501, 17.7567}},
  {64, 512, true, {0.9594, 0.727, 0.7273, 0.8718, 0.8389, 0.691}},
  {64, 1024, true, {2.3084, 1.0482, 1.1261, 1.3147, 1.2613, 1.007}},
  {64, 2048, true, {11.8828, 1.6765, 2.1333, 2.1718, 2.105, 1.6486}},
  {64, 4096, true, {17.4719, 2.9186, 4.4203, 3.9051, 3.7689, 2.8664}},
  {64, 8192, true, {22.3121, 5.3585, 5.4461, 7.7626, 7.4434, 5.3274}},
  {64, 16384, true, {23.9376, 10.2878, 10.0331, 17.6484, 17.1615, 10.3094}},
};
// clang-format on

// kMeasuredSm90A77: commit a77d6b6 (faster softmax exp and stmatrix, 99e56b6; dQ staged under the
// dK GEMM at hdim 128, bea1336 / a77d6b6), the default task order, every schedule in one process:
// bench/peers.py through PyTorch, docs/data/peers-h200-a77d6b6.json, converted to
// docs/data/bench-h200-sm90-a77d6b6.json. bwd = median(fwd+bwd) of the schedule - the forward
// (the same kernel for every schedule, so the smallest of the 7 dash rows' median fwd_ms at the
// point; peers' own bwd_ms subtracts each row's own fwd median, which is noisy at 512: e.g. hdim
// 128 causal 512, fwd 0.138-0.296 ms across identical forwards). descending is the mean of the
// dash:descending and dash:auto rows (auto ran descending at all 24 points; the two differ by
// -3.2..+1.7%, the noise of this sweep). Peers runs a few % below `dash-attn bench`; the ratios
// between schedules are what the fit uses.
// clang-format off
const Measured kMeasuredSm90A77[] = {
  {128, 512, false, {0.5789, 0.6190, 0.5792, 0.6724, 0.6719, 0.5679}},
  {128, 1024, false, {0.9278, 1.0143, 0.9272, 1.0814, 1.0811, 0.9156}},
  {128, 2048, false, {1.5857, 1.7254, 1.5969, 1.8786, 1.8587, 1.5670}},
  {128, 4096, false, {2.9173, 3.2220, 2.9432, 3.4784, 3.4775, 2.9660}},
  {128, 8192, false, {5.9869, 5.9512, 5.9913, 7.3514, 7.3813, 5.9907}},
  {128, 16384, false, {11.9510, 11.5951, 11.9731, 17.0856, 17.0590, 11.8686}},
  {128, 512, true, {0.6018, 0.4882, 0.4866, 0.5595, 0.5428, 0.4917}},
  {128, 1024, true, {0.9666, 0.6598, 0.6532, 0.7744, 0.7424, 0.6776}},
  {128, 2048, true, {1.2393, 1.0097, 0.9832, 1.2045, 1.1537, 1.0354}},
  {128, 4096, true, {1.8595, 1.6956, 1.6290, 2.0920, 1.9737, 1.6953}},
  {128, 8192, true, {3.3351, 3.2138, 2.9514, 4.0191, 3.8461, 3.1043}},
  {128, 16384, true, {6.3552, 6.2492, 6.0068, 9.0134, 8.8350, 6.1970}},
  {64, 512, false, {0.8190, 0.9122, 0.8208, 0.9929, 0.9965, 0.7248}},
  {64, 1024, false, {1.2865, 1.4969, 1.3057, 1.6249, 1.6260, 1.1694}},
  {64, 2048, false, {2.2577, 2.6188, 2.2662, 2.8972, 2.9000, 2.0600}},
  {64, 4096, false, {4.5479, 4.7135, 4.5510, 5.3218, 5.3370, 3.7904}},
  {64, 8192, false, {9.1893, 8.3480, 9.2269, 12.1864, 12.1041, 7.5461}},
  {64, 16384, false, {18.0521, 16.0024, 18.1209, 30.5616, 30.5506, 15.0890}},
  {64, 512, true, {0.8126, 0.6411, 0.6579, 0.7730, 0.7464, 0.5876}},
  {64, 1024, true, {1.3947, 0.8904, 0.9296, 1.1032, 1.0739, 0.8187}},
  {64, 2048, true, {1.7783, 1.3826, 1.4288, 1.7590, 1.7339, 1.2870}},
  {64, 4096, true, {2.7487, 2.3470, 2.4515, 3.0990, 3.0744, 2.2013}},
  {64, 8192, true, {4.9556, 4.3043, 4.6492, 6.3305, 6.2812, 3.9202}},
  {64, 16384, true, {9.4388, 8.2270, 9.0878, 15.1354, 15.0240, 7.7099}},
};
// clang-format on

// kMeasuredSm90Dual: the dual-dQ-writer kernel (two writer warps, one per staging buffer; the
// default since 250529d), the default task order, printed by scripts/fit_planner.py --cpp-table
// (which documents the combination): per point and schedule, the geometric mean of bench/peers.py
// (docs/data/peers-h200-250529d/bench-python.txt at 250529d; hdim 64 full from
// docs/data/peers-h200-3505b4f-hdim64full/peers.json; descending = the mean of the
// dash:descending and dash:auto rows, auto ran descending everywhere; `bwd` measured directly)
// and `dash-attn bench` (docs/data/writer-h200-b254d6c/next-dual-hdim{128,64}.json: descending,
// spt, shift, atomic), the bench times scaled by the point's median peers / bench ratio; peers
// rows more than 10% off bench are dropped (hdim 64 causal 512 atomic, 1024 dash:descending:
// a disturbed run). ascending and symmetric_shift: peers only. On a full mask symmetric_shift
// repeats shift's time (it runs shift; not compared).
// clang-format off
const Measured kMeasuredSm90Dual[] = {
  {128, 512, false, {0.5680, 0.5979, 0.5690, 0.6722, 0.6722, 0.5732}},
  {128, 1024, false, {0.8530, 0.9302, 0.8560, 1.0044, 1.0044, 0.8561}},
  {128, 2048, false, {1.4370, 1.5922, 1.4426, 1.7222, 1.7222, 1.4467}},
  {128, 4096, false, {2.7560, 2.9707, 2.7123, 3.1954, 3.1954, 2.7363}},
  {128, 8192, false, {5.3490, 5.3932, 5.3189, 6.8670, 6.8670, 5.2695}},
  {128, 16384, false, {10.8410, 10.4936, 11.0590, 16.0217, 16.0217, 10.3253}},
  {128, 512, true, {0.5580, 0.4618, 0.4635, 0.5292, 0.5200, 0.4650}},
  {128, 1024, true, {0.9040, 0.6160, 0.6126, 0.7099, 0.6940, 0.6170}},
  {128, 2048, true, {1.1190, 0.9198, 0.9037, 1.0884, 1.0570, 0.9395}},
  {128, 4096, true, {1.6690, 1.5421, 1.4844, 1.8537, 1.7900, 1.5313}},
  {128, 8192, true, {2.9130, 2.8171, 2.6764, 3.6508, 3.4880, 2.7244}},
  {128, 16384, true, {5.5940, 5.6500, 5.2120, 8.3755, 8.2040, 5.3354}},
  {64, 512, false, {0.7253, 0.7786, 0.7256, 0.9109, 0.9109, 0.6504}},
  {64, 1024, false, {1.0695, 1.2206, 1.0704, 1.4464, 1.4464, 1.0099}},
  {64, 2048, false, {1.7808, 2.0696, 1.7819, 2.5369, 2.5369, 1.7391}},
  {64, 4096, false, {3.2107, 3.6242, 3.2203, 4.7148, 4.7148, 3.1975}},
  {64, 8192, false, {6.2243, 6.3653, 6.2141, 10.4321, 10.4321, 6.0492}},
  {64, 16384, false, {12.5163, 11.7656, 12.9241, 25.8750, 25.8750, 12.1097}},
  {64, 512, true, {0.6910, 0.5844, 0.5901, 0.7106, 0.6840, 0.5254}},
  {64, 1024, true, {1.1310, 0.8421, 0.8026, 1.0234, 0.9640, 0.7348}},
  {64, 2048, true, {1.3990, 1.1271, 1.1361, 1.5586, 1.5390, 1.0892}},
  {64, 4096, true, {2.0680, 1.8442, 1.8684, 2.6670, 2.6840, 1.8127}},
  {64, 8192, true, {3.4760, 3.2677, 3.3091, 5.4645, 5.4070, 3.1772}},
  {64, 16384, true, {6.3610, 6.2022, 6.2379, 13.0948, 12.8380, 6.0801}},
};
// clang-format on

// kMeasuredSm90Ahead1: the current kernel, take-ahead 1 by default with two dQ writers (9dd59e9;
// +3..+9% for the ordered schedules at hdim 64 512-2k, +1..+2% at hdim 128 up to 4k, atomic
// unchanged), the default task order, printed by scripts/fit_planner.py --cpp-table (its default
// data, --data 9dd59e9, which documents the combination): per point and schedule, the geometric
// mean of bench/peers.py (docs/data/peers-h200-9dd59e9/peers/peers.json: ascending, spt,
// descending = the mean of the dash:descending and dash:auto rows, atomic) and `dash-attn bench`
// (docs/data/peers-h200-9dd59e9/bench-hdim{128,64}.json: all six schedules, descending = the mean
// of its descending and auto rows), bench scaled by the point's median peers / bench ratio; one
// peers row more than 10% off bench is dropped (hdim 128 causal 16k dash:auto, 4.788 ms against
// 5.344 for dash:descending). shift and symmetric_shift: bench only. On a full mask
// symmetric_shift repeats shift's time (it runs shift; not compared).
// clang-format off
const Measured kMeasuredSm90Ahead1[] = {
  {128, 512, false, {0.5619, 0.5898, 0.5637, 0.6668, 0.6668, 0.5751}},
  {128, 1024, false, {0.8501, 0.9276, 0.8516, 1.0070, 1.0070, 0.8551}},
  {128, 2048, false, {1.4375, 1.5918, 1.4299, 1.7079, 1.7079, 1.4366}},
  {128, 4096, false, {2.6063, 2.8704, 2.6513, 3.1390, 3.1390, 2.6981}},
  {128, 8192, false, {5.0620, 5.4158, 5.1997, 7.1032, 7.1032, 5.2284}},
  {128, 16384, false, {10.8658, 10.4085, 10.5317, 17.0753, 17.0753, 10.3799}},
  {128, 512, true, {0.5581, 0.4531, 0.4549, 0.5245, 0.5137, 0.4621}},
  {128, 1024, true, {0.9028, 0.6104, 0.6055, 0.7152, 0.6940, 0.6259}},
  {128, 2048, true, {1.1118, 0.9136, 0.8915, 1.0848, 1.0507, 0.9352}},
  {128, 4096, true, {1.6492, 1.5107, 1.4540, 1.8066, 1.7605, 1.5089}},
  {128, 8192, true, {2.8412, 2.8454, 2.6711, 3.6968, 3.6203, 2.7739}},
  {128, 16384, true, {5.5488, 5.5660, 5.3370, 8.8206, 8.8470, 5.3849}},
  {64, 512, false, {0.6642, 0.7242, 0.6641, 0.9046, 0.9046, 0.6443}},
  {64, 1024, false, {1.0092, 1.1709, 1.0061, 1.4370, 1.4370, 1.0008}},
  {64, 2048, false, {1.7049, 2.0024, 1.7062, 2.5201, 2.5201, 1.7250}},
  {64, 4096, false, {3.1401, 3.5577, 3.1455, 4.6606, 4.6606, 3.1765}},
  {64, 8192, false, {5.9818, 6.2861, 6.0822, 10.5309, 10.5309, 6.0781}},
  {64, 16384, false, {12.3853, 11.8701, 12.2372, 26.3228, 26.3228, 12.3734}},
  {64, 512, true, {0.6703, 0.5296, 0.5420, 0.7139, 0.6848, 0.5247}},
  {64, 1024, true, {1.1018, 0.7128, 0.7308, 0.9938, 0.9688, 0.7096}},
  {64, 2048, true, {1.3594, 1.0731, 1.0887, 1.5452, 1.5513, 1.0813}},
  {64, 4096, true, {2.0046, 1.7881, 1.7897, 2.6346, 2.6714, 1.8081}},
  {64, 8192, true, {3.4004, 3.2024, 3.2094, 5.4251, 5.3196, 3.1701}},
  {64, 16384, true, {6.2397, 6.0861, 6.1089, 13.2481, 13.1867, 6.0245}},
};
// clang-format on

// One measured sweep, the tiles of the kernel that ran it and its task order (head_block: 0 = the
// default of ScheduleModel::make, else the heads interleaved in blocks of this many, 1 =
// head-major).
// atomic_head_block: atomic's order in the model of a default-order sweep (head_block 0). Every sweep
// here ran before the forty-fourth session, when atomic on these tiles took blocks of kDefaultHeadBlock
// heads at every length (since then causal atomic takes kLongHeadBlock from 2048 keys; docs/perf.md v45).
struct Sweep {
  const Measured* begin;
  const Measured* end;
  int block_m, block_n;
  int head_block = 0;
  int atomic_head_block = kDefaultHeadBlock;
};
const Sweep kSm80Sweep{std::begin(kMeasured), std::end(kMeasured), 64, 64};
const Sweep kSm90Sweep{std::begin(kMeasuredSm90), std::end(kMeasuredSm90), 64, 128};
const Sweep kSm90HeadMajorSweep{std::begin(kMeasuredSm90HeadMajor), std::end(kMeasuredSm90HeadMajor), 64, 128, 1};
const Sweep kSm90A77Sweep{std::begin(kMeasuredSm90A77), std::end(kMeasuredSm90A77), 64, 128};
const Sweep kSm90DualSweep{std::begin(kMeasuredSm90Dual), std::end(kMeasuredSm90Dual), 64, 128};
const Sweep kSm90Ahead1Sweep{std::begin(kMeasuredSm90Ahead1), std::end(kMeasuredSm90Ahead1), 64, 128};

// The seventeenth session's kernel (ff7314a): full-mask shift's rank in closed form, computed by
// the dQ writer (kWRank); 80-row tiles for atomic / shift / symmetric shift at full masks from 1k
// (and every schedule but ascending at hdim 64), as the defaults run them. bench/peers.py
// (docs/data/final-h200-ff7314a/peers.json, one process, 3 rounds) combined with `dash-attn bench`
// of the same device call (bench-hdim{128,64}.json) by scripts/fit_planner.py --data ff7314a
// --cpp-table. Order: ascending, spt, descending, shift, symmetric_shift, atomic.
// clang-format off
const Measured kMeasuredSm90WriterRank[] = {
  {128, 512, false, {0.5531, 0.5863, 0.5511, 0.6178, 0.6178, 0.5599}},
  {128, 1024, false, {0.8185, 0.8982, 0.8159, 0.9141, 0.9141, 0.8150}},
  {128, 2048, false, {1.3947, 1.5624, 1.4007, 1.5153, 1.5153, 1.3759}},
  {128, 4096, false, {2.6457, 2.9041, 2.6368, 2.8349, 2.8349, 2.5718}},
  {128, 8192, false, {5.3175, 5.2993, 5.1497, 5.4144, 5.4144, 4.9250}},
  {128, 16384, false, {10.5116, 10.1279, 10.3738, 10.3065, 10.3065, 9.2841}},
  {128, 512, true, {0.5519, 0.4481, 0.4517, 0.5250, 0.5142, 0.4582}},
  {128, 1024, true, {0.8729, 0.5883, 0.5951, 0.7014, 0.6817, 0.6125}},
  {128, 2048, true, {1.0646, 0.8741, 0.8665, 1.0609, 1.0253, 0.9004}},
  {128, 4096, true, {1.5821, 1.4428, 1.4066, 1.7833, 1.7208, 1.4654}},
  {128, 8192, true, {2.7861, 2.7125, 2.6183, 3.3655, 3.2332, 2.6966}},
  {128, 16384, true, {5.2072, 5.2743, 5.0391, 6.4693, 6.1838, 5.1577}},
  {64, 512, false, {0.6854, 0.7484, 0.6872, 0.7805, 0.7805, 0.6662}},
  {64, 1024, false, {1.0363, 1.1204, 0.9620, 1.0615, 1.0615, 0.9473}},
  {64, 2048, false, {1.7694, 1.9424, 1.6371, 1.7262, 1.7262, 1.6263}},
  {64, 4096, false, {3.2838, 3.5080, 3.0419, 3.0850, 3.0850, 3.0439}},
  {64, 8192, false, {6.5079, 6.3365, 5.9588, 5.9098, 5.9098, 5.9469}},
  {64, 16384, false, {13.1038, 11.7009, 12.1816, 11.3564, 11.3564, 11.5002}},
  {64, 512, true, {0.6886, 0.5467, 0.5544, 0.7142, 0.6904, 0.5421}},
  {64, 1024, true, {1.1232, 0.7349, 0.7514, 0.9956, 0.9687, 0.7383}},
  {64, 2048, true, {1.4048, 1.1150, 1.1283, 1.5719, 1.5528, 1.1403}},
  {64, 4096, true, {2.0835, 1.8517, 1.8545, 2.6847, 2.6668, 1.9005}},
  {64, 8192, true, {3.5687, 3.3908, 3.3808, 4.9216, 4.7740, 3.4293}},
  {64, 16384, true, {6.6813, 6.5518, 6.5079, 9.5496, 9.2230, 6.6062}},
};
// clang-format on
const Sweep kSm90WriterRankSweep{std::begin(kMeasuredSm90WriterRank), std::end(kMeasuredSm90WriterRank), 64, 128};

// The eighteenth session's kernel (106791e): as ff7314a, and causal symmetric shift's rank in
// closed form computed by the dQ writer (kWRankSym, 64-row tiles), the default. bench/peers.py
// (docs/data/final-h200-106791e/peers.json) combined with `dash-attn bench` of the same device
// call (bench-hdim{128,64}.json) by scripts/fit_planner.py --data 106791e --cpp-table. Order:
// ascending, spt, descending, shift, symmetric_shift, atomic.
// clang-format off
const Measured kMeasuredSm90SymWriterRank[] = {
  {128, 512, false, {0.5516, 0.5842, 0.5508, 0.6169, 0.6169, 0.5626}},
  {128, 1024, false, {0.8279, 0.9060, 0.8279, 0.9169, 0.9169, 0.8230}},
  {128, 2048, false, {1.4189, 1.5543, 1.4292, 1.5112, 1.5112, 1.3909}},
  {128, 4096, false, {2.6378, 2.9032, 2.6645, 2.8323, 2.8323, 2.5887}},
  {128, 8192, false, {5.2577, 5.3807, 5.3389, 5.4532, 5.4532, 5.0154}},
  {128, 16384, false, {10.7423, 10.1497, 10.4509, 10.5365, 10.5365, 9.2345}},
  {128, 512, true, {0.5481, 0.4471, 0.4507, 0.5248, 0.4961, 0.4580}},
  {128, 1024, true, {0.8737, 0.5910, 0.5924, 0.7024, 0.6344, 0.6068}},
  {128, 2048, true, {1.0629, 0.8832, 0.8744, 1.0573, 0.9173, 0.9165}},
  {128, 4096, true, {1.5925, 1.4666, 1.4290, 1.7786, 1.5030, 1.4904}},
  {128, 8192, true, {2.7623, 2.7451, 2.6506, 3.3479, 2.7651, 2.7189}},
  {128, 16384, true, {5.5509, 5.3562, 5.1967, 6.5999, 5.3822, 5.2649}},
  {64, 512, false, {0.6854, 0.7427, 0.6876, 0.7835, 0.7835, 0.6690}},
  {64, 1024, false, {1.0417, 1.1178, 0.9648, 1.0605, 1.0605, 0.9506}},
  {64, 2048, false, {1.7669, 1.9457, 1.6410, 1.7265, 1.7265, 1.6388}},
  {64, 4096, false, {3.2813, 3.5157, 3.0586, 3.1165, 3.1165, 3.0326}},
  {64, 8192, false, {6.6166, 6.3812, 6.0575, 6.0417, 6.0417, 6.0529}},
  {64, 16384, false, {13.3494, 11.9775, 12.1834, 11.6612, 11.6612, 11.7844}},
  {64, 512, true, {0.6894, 0.5444, 0.5558, 0.7146, 0.6222, 0.5425}},
  {64, 1024, true, {1.1304, 0.7344, 0.7522, 0.9996, 0.8191, 0.7398}},
  {64, 2048, true, {1.4072, 1.1167, 1.1273, 1.5660, 1.2317, 1.1409}},
  {64, 4096, true, {2.0931, 1.8642, 1.8633, 2.6895, 2.0419, 1.9070}},
  {64, 8192, true, {3.5735, 3.3909, 3.3951, 4.9267, 3.6929, 3.4449}},
  {64, 16384, true, {6.7448, 6.5994, 6.5642, 9.6076, 7.0997, 6.6588}},
};
// clang-format on
const Sweep kSm90SymWriterRankSweep{std::begin(kMeasuredSm90SymWriterRank), std::end(kMeasuredSm90SymWriterRank), 64,
                                    128};

// The nineteenth session's peers run (68d0908): the kernel of 106791e with causal 80-row tiles at
// hdim 64 for atomic / spt / descending (their rows are what they ran; the planner models 64-row
// tiles for `auto`). bench/peers.py alone (docs/data/final-h200-68d0908/peers.json, one process,
// 3 rounds) by scripts/fit_planner.py --data 68d0908 --cpp-table. Order as above.
// clang-format off
const Measured kMeasuredSm90Peers68d0908[] = {
  {128, 512, false, {0.5512, 0.5815, 0.5496, 0.6153, 0.6153, 0.5593}},
  {128, 1024, false, {0.8259, 0.9029, 0.8239, 0.9094, 0.9094, 0.8200}},
  {128, 2048, false, {1.4007, 1.5671, 1.4142, 1.5200, 1.5200, 1.3849}},
  {128, 4096, false, {2.6191, 2.9322, 2.6117, 2.8052, 2.8052, 2.5872}},
  {128, 8192, false, {5.2224, 5.4344, 5.2091, 5.3985, 5.3985, 5.0091}},
  {128, 16384, false, {10.4575, 10.1820, 10.2501, 10.3035, 10.3035, 10.7068}},
  {128, 512, true, {0.5515, 0.4445, 0.4491, 0.5225, 0.4933, 0.4547}},
  {128, 1024, true, {0.8722, 0.5841, 0.5897, 0.6978, 0.6314, 0.6037}},
  {128, 2048, true, {1.0612, 0.8750, 0.8651, 1.0561, 0.9124, 0.9109}},
  {128, 4096, true, {1.5815, 1.4477, 1.4135, 1.8214, 1.5100, 1.4900}},
  {128, 8192, true, {2.7112, 2.6641, 2.5997, 3.4135, 2.7826, 2.7309}},
  {128, 16384, true, {5.3150, 5.4064, 5.0874, 6.4624, 5.3911, 5.1497}},
  {64, 512, false, {0.6816, 0.7383, 0.6805, 0.7763, 0.7763, 0.6646}},
  {64, 1024, false, {1.0375, 1.1199, 0.9623, 1.0605, 1.0605, 0.9512}},
  {64, 2048, false, {1.7753, 1.9471, 1.6425, 1.7306, 1.7306, 1.6321}},
  {64, 4096, false, {3.2778, 3.5326, 3.0583, 3.1028, 3.1028, 3.0804}},
  {64, 8192, false, {6.3858, 6.2640, 6.0260, 6.0220, 6.0220, 5.9614}},
  {64, 16384, false, {12.8966, 11.7605, 12.3363, 11.4092, 11.4092, 11.5893}},
  {64, 512, true, {0.6802, 0.5426, 0.5494, 0.7090, 0.6177, 0.5383}},
  {64, 1024, true, {1.1314, 0.6943, 0.7306, 0.9938, 0.8172, 0.6989}},
  {64, 2048, true, {1.4097, 1.0386, 1.0586, 1.5699, 1.2308, 1.0611}},
  {64, 4096, true, {2.0892, 1.7159, 1.7302, 2.6999, 2.0408, 1.7720}},
  {64, 8192, true, {3.5701, 3.0579, 3.0594, 4.9641, 3.6903, 3.2555}},
  {64, 16384, true, {6.6802, 5.9262, 5.8721, 9.4670, 6.9567, 6.1876}},
};
// clang-format on
const Sweep kSm90Peers68d0908Sweep{std::begin(kMeasuredSm90Peers68d0908), std::end(kMeasuredSm90Peers68d0908), 64, 128};

// The twentieth session's peers run (8d47f07): the kernel of 68d0908 with 96-row tiles at hdim 64
// from 1k for atomic / shift / symmetric shift / spt / descending, and for ascending at full masks
// (causal ascending, shift and symmetric shift keep 64 rows; their rows are what they ran; the
// planner models 64-row tiles for `auto`). bench/peers.py alone (docs/data/final-h200-8d47f07/
// peers.json, one process, 3 rounds) by scripts/fit_planner.py --data 8d47f07 --cpp-table. Order as
// above.
// clang-format off
const Measured kMeasuredSm90Peers8d47f07[] = {
  {128, 512, false, {0.5491, 0.5815, 0.5486, 0.6111, 0.6111, 0.5572}},
  {128, 1024, false, {0.8275, 0.9046, 0.8245, 0.9098, 0.9098, 0.8207}},
  {128, 2048, false, {1.4031, 1.5536, 1.4195, 1.5194, 1.5194, 1.4137}},
  {128, 4096, false, {2.6662, 2.9465, 2.6821, 2.8805, 2.8805, 2.6535}},
  {128, 8192, false, {5.4480, 5.4919, 5.4242, 5.5873, 5.5873, 5.1045}},
  {128, 16384, false, {10.6243, 10.4014, 10.5206, 10.5608, 10.5608, 10.8548}},
  {128, 512, true, {0.5427, 0.4433, 0.4476, 0.5206, 0.4922, 0.4548}},
  {128, 1024, true, {0.8704, 0.5832, 0.5871, 0.6962, 0.6296, 0.6043}},
  {128, 2048, true, {1.0634, 0.8778, 0.8676, 1.0610, 0.9174, 0.9137}},
  {128, 4096, true, {1.5763, 1.4500, 1.4356, 1.8555, 1.5462, 1.4925}},
  {128, 8192, true, {2.6864, 2.7906, 2.6501, 3.4593, 2.8911, 2.7166}},
  {128, 16384, true, {5.0140, 5.5104, 5.2276, 6.7338, 5.4799, 5.2718}},
  {64, 512, false, {0.6779, 0.7383, 0.6804, 0.7735, 0.7735, 0.6608}},
  {64, 1024, false, {0.9244, 1.0699, 0.9237, 1.0253, 1.0253, 0.9280}},
  {64, 2048, false, {1.5624, 1.8625, 1.5718, 1.6585, 1.6585, 1.5941}},
  {64, 4096, false, {2.8494, 3.3158, 2.9164, 2.9325, 2.9325, 2.9752}},
  {64, 8192, false, {5.7027, 6.0446, 5.8087, 5.7942, 5.7942, 5.9203}},
  {64, 16384, false, {11.5737, 11.2329, 11.6952, 11.1217, 11.1217, 11.1836}},
  {64, 512, true, {0.6808, 0.5406, 0.5485, 0.7074, 0.6139, 0.5359}},
  {64, 1024, true, {1.1280, 0.6933, 0.7198, 0.9906, 0.8153, 0.6924}},
  {64, 2048, true, {1.4020, 1.0410, 1.0590, 1.5654, 1.2249, 1.0428}},
  {64, 4096, true, {2.1023, 1.6849, 1.6887, 2.7394, 2.0640, 1.7112}},
  {64, 8192, true, {3.5959, 3.0939, 3.0347, 4.9557, 3.6983, 3.1862}},
  {64, 16384, true, {6.8048, 5.9413, 5.9829, 9.6074, 7.0938, 5.9775}},
};
// clang-format on
const Sweep kSm90Peers8d47f07Sweep{std::begin(kMeasuredSm90Peers8d47f07), std::end(kMeasuredSm90Peers8d47f07), 64, 128};

// The gpu-next32.sh run (ef0214e): the kernel of 8d47f07 with dQ's first contribution per ordered
// chain stored instead of reduce-added (dq_accum no longer zeroed; +1-7% at 512-2k for the ordered
// schedules), and causal ascending on 96-row tiles at hdim 64 from 1k (582a38f); the other tiles as
// at 8d47f07 (the rows are what they ran; the planner models 64-row tiles for `auto`).
// bench/peers.py (docs/data/next32-h200-ef0214e/peers/peers.json, one process, 3 rounds) combined
// with `dash-attn bench` of every schedule, same kernel build (docs/data/next32-h200-ef0214e/suite/
// bench-hdim{128,64}.json), by scripts/fit_planner.py --data ef0214e --cpp-table (one peers row
// dropped: hdim 128 full 16384 atomic, 10.936 ms against bench's 8.578 x 1.086). Order as above.
// clang-format off
const Measured kMeasuredSm90PeersEf0214e[] = {
  {128, 512, false, {0.5199, 0.5448, 0.5152, 0.5773, 0.5773, 0.5603}},
  {128, 1024, false, {0.7962, 0.8639, 0.7856, 0.8694, 0.8694, 0.8227}},
  {128, 2048, false, {1.3600, 1.5020, 1.3681, 1.4794, 1.4794, 1.3847}},
  {128, 4096, false, {2.5495, 2.8233, 2.5740, 2.7744, 2.7744, 2.5400}},
  {128, 8192, false, {5.0906, 5.2429, 5.1694, 5.3580, 5.3580, 4.9869}},
  {128, 16384, false, {10.5467, 10.1155, 10.0513, 10.5292, 10.5292, 9.3188}},
  {128, 512, true, {0.5154, 0.4153, 0.4210, 0.4869, 0.4578, 0.4555}},
  {128, 1024, true, {0.8290, 0.5569, 0.5486, 0.6626, 0.5979, 0.6043}},
  {128, 2048, true, {1.0208, 0.8374, 0.8229, 1.0099, 0.8837, 0.8958}},
  {128, 4096, true, {1.5397, 1.4112, 1.3720, 1.7453, 1.4747, 1.4635}},
  {128, 8192, true, {2.7033, 2.6855, 2.5605, 3.3006, 2.7409, 2.6743}},
  {128, 16384, true, {5.2316, 5.2934, 5.0585, 6.3949, 5.3373, 5.1175}},
  {64, 512, false, {0.6419, 0.6933, 0.6413, 0.7331, 0.7331, 0.6605}},
  {64, 1024, false, {0.9049, 1.0309, 0.9056, 0.9930, 0.9930, 0.9335}},
  {64, 2048, false, {1.5419, 1.7976, 1.5428, 1.6219, 1.6219, 1.5780}},
  {64, 4096, false, {2.7936, 3.2358, 2.8303, 2.8794, 2.8794, 2.8960}},
  {64, 8192, false, {5.6202, 5.9015, 5.6391, 5.5510, 5.5510, 5.6917}},
  {64, 16384, false, {11.5251, 11.0860, 11.0813, 10.6436, 10.6436, 11.1559}},
  {64, 512, true, {0.6410, 0.5124, 0.5119, 0.6737, 0.5852, 0.5391}},
  {64, 1024, true, {1.0230, 0.6775, 0.6879, 0.9606, 0.7824, 0.6962}},
  {64, 2048, true, {1.2654, 1.0257, 1.0327, 1.5317, 1.1843, 1.0480}},
  {64, 4096, true, {1.8495, 1.6578, 1.6571, 2.6724, 1.9988, 1.6945}},
  {64, 8192, true, {3.1725, 3.0634, 3.0378, 4.9468, 3.6783, 3.1293}},
  {64, 16384, true, {5.8860, 5.8611, 5.7567, 9.6616, 7.0634, 5.9424}},
};
// clang-format on
const Sweep kSm90PeersEf0214eSweep{std::begin(kMeasuredSm90PeersEf0214e), std::end(kMeasuredSm90PeersEf0214e), 64, 128};

// The gpu-next35.sh run (e29ccbd): the kernels of ef0214e with programmatic dependent launch and the
// polling postprocess on by default (its blocks convert each dQ tile once the tile's chain is done,
// on the SMs whose main CTA has exited; ordered schedules, not at head_dim 64's 64-row tiles; atomic
// converts after the main kernel). Tiles as at ef0214e (the rows are what they ran; the planner
// models 64-row tiles for `auto`). bench/peers.py (docs/data/next35-h200-e29ccbd/peers/peers.json,
// one process, 3 rounds) combined with `dash-attn bench` of every schedule, same kernel build
// (docs/data/next35-h200-e29ccbd/suite/bench-hdim{128,64}.json), by scripts/fit_planner.py --data
// e29ccbd --cpp-table (one peers row dropped: hdim 128 full 16384 atomic, 10.778 ms against bench's
// 8.743 x 1.097). The sweep kSm90Params is fitted on since the twenty-second session. Order as above.
// clang-format off
const Measured kMeasuredSm90PeersE29ccbd[] = {
  {128, 512, false, {0.5074, 0.5254, 0.5004, 0.5598, 0.5598, 0.5554}},
  {128, 1024, false, {0.7609, 0.8239, 0.7571, 0.8437, 0.8437, 0.8116}},
  {128, 2048, false, {1.3188, 1.4577, 1.3265, 1.4724, 1.4724, 1.3871}},
  {128, 4096, false, {2.5301, 2.7920, 2.5525, 2.8057, 2.8057, 2.5688}},
  {128, 8192, false, {5.1366, 5.2153, 5.0683, 5.3511, 5.3511, 4.9640}},
  {128, 16384, false, {10.2386, 10.0340, 10.2877, 10.5213, 10.5213, 9.5909}},
  {128, 512, true, {0.4867, 0.3976, 0.4033, 0.4645, 0.4441, 0.4493}},
  {128, 1024, true, {0.7878, 0.5254, 0.5386, 0.6304, 0.5759, 0.5951}},
  {128, 2048, true, {1.0069, 0.7779, 0.8106, 0.9535, 0.8647, 0.8935}},
  {128, 4096, true, {1.5275, 1.3300, 1.3709, 1.6836, 1.4782, 1.4839}},
  {128, 8192, true, {2.7531, 2.5989, 2.5587, 3.2039, 2.7617, 2.7010}},
  {128, 16384, true, {5.3734, 5.2826, 5.0843, 6.3622, 5.3423, 5.2425}},
  {64, 512, false, {0.6369, 0.6908, 0.6391, 0.7311, 0.7311, 0.6566}},
  {64, 1024, false, {0.8779, 1.0016, 0.8770, 0.9718, 0.9718, 0.9127}},
  {64, 2048, false, {1.5075, 1.7615, 1.5073, 1.6171, 1.6171, 1.5706}},
  {64, 4096, false, {2.7914, 3.2348, 2.7957, 2.9116, 2.9116, 2.9108}},
  {64, 8192, false, {5.5118, 5.8693, 5.5934, 5.5755, 5.5755, 5.6654}},
  {64, 16384, false, {11.5794, 10.7737, 11.4790, 10.5883, 10.5883, 11.1485}},
  {64, 512, true, {0.6415, 0.5136, 0.5136, 0.6775, 0.5885, 0.5362}},
  {64, 1024, true, {1.0009, 0.6523, 0.6711, 0.9657, 0.7849, 0.6921}},
  {64, 2048, true, {1.2482, 0.9795, 1.0122, 1.5336, 1.1837, 1.0387}},
  {64, 4096, true, {1.8325, 1.6078, 1.6473, 2.6928, 2.0034, 1.7033}},
  {64, 8192, true, {3.1212, 2.9772, 2.9934, 4.9421, 3.6660, 3.0998}},
  {64, 16384, true, {5.9594, 5.8471, 5.7993, 9.7532, 7.1250, 5.9814}},
};
// clang-format on
const Sweep kSm90PeersE29ccbdSweep{std::begin(kMeasuredSm90PeersE29ccbd), std::end(kMeasuredSm90PeersE29ccbd), 64, 128};

// The gpu-next36.sh run (b016d55): the kernels of e29ccbd with the 16-byte-load preprocess as the
// default (PDL and the polling postprocess on, tiles as at e29ccbd). bench/peers.py
// (docs/data/next36-h200-b016d55/peers/peers.json) combined with `dash-attn bench` of every schedule,
// same kernel build (docs/data/next36-h200-b016d55/suite/bench-hdim{128,64}.json), by
// scripts/fit_planner.py --data b016d55 --cpp-table, the same rule as e29ccbd (three peers rows
// dropped: hdim 128 full 16384 ascending 10.390 ms and atomic 10.802 ms against bench's 10.482 /
// 8.564 x 1.106, hdim 128 causal 16384 ascending 4.885 ms against 5.009 x 1.136). Not fitted on: a
// check of the e29ccbd refit. Order as above.
// clang-format off
const Measured kMeasuredSm90PeersB016d55[] = {
  {128, 512, false, {0.5081, 0.5223, 0.4973, 0.5583, 0.5583, 0.5542}},
  {128, 1024, false, {0.7583, 0.8187, 0.7562, 0.8420, 0.8420, 0.8208}},
  {128, 2048, false, {1.3281, 1.4762, 1.3463, 1.4884, 1.4884, 1.3971}},
  {128, 4096, false, {2.5939, 2.8414, 2.5705, 2.8089, 2.8089, 2.6320}},
  {128, 8192, false, {5.2151, 5.3458, 5.1763, 5.4472, 5.4472, 5.0651}},
  {128, 16384, false, {11.5975, 10.2246, 10.2269, 10.5288, 10.5288, 9.4749}},
  {128, 512, true, {0.4796, 0.3916, 0.3997, 0.4603, 0.4374, 0.4456}},
  {128, 1024, true, {0.7874, 0.5204, 0.5356, 0.6233, 0.5719, 0.5974}},
  {128, 2048, true, {1.0018, 0.7792, 0.8012, 0.9411, 0.8562, 0.8993}},
  {128, 4096, true, {1.5469, 1.3491, 1.3922, 1.6961, 1.4983, 1.5093}},
  {128, 8192, true, {2.7965, 2.6396, 2.6052, 3.2566, 2.7812, 2.7438}},
  {128, 16384, true, {5.6891, 5.3173, 5.1193, 6.4219, 5.3716, 5.2557}},
  {64, 512, false, {0.5889, 0.6475, 0.5940, 0.6892, 0.6892, 0.6215}},
  {64, 1024, false, {0.8312, 0.9541, 0.8329, 0.9226, 0.9226, 0.8806}},
  {64, 2048, false, {1.4584, 1.7058, 1.4650, 1.5675, 1.5675, 1.5365}},
  {64, 4096, false, {2.7348, 3.1552, 2.7542, 2.8376, 2.8376, 2.8583}},
  {64, 8192, false, {5.6592, 5.8572, 5.5408, 5.5656, 5.5656, 5.6507}},
  {64, 16384, false, {11.6153, 10.8762, 11.1635, 10.8490, 10.8490, 10.8773}},
  {64, 512, true, {0.5947, 0.4665, 0.4673, 0.6271, 0.5400, 0.4974}},
  {64, 1024, true, {0.9539, 0.6083, 0.6244, 0.9186, 0.7396, 0.6578}},
  {64, 2048, true, {1.1914, 0.9317, 0.9631, 1.4854, 1.1402, 1.0057}},
  {64, 4096, true, {1.7930, 1.5522, 1.5938, 2.6390, 1.9538, 1.6563}},
  {64, 8192, true, {3.1051, 2.9502, 2.9728, 4.9331, 3.6445, 3.0889}},
  {64, 16384, true, {5.8990, 5.7503, 5.6809, 9.6005, 7.0131, 5.9294}},
};
// clang-format on
const Sweep kSm90PeersB016d55Sweep{std::begin(kMeasuredSm90PeersB016d55), std::end(kMeasuredSm90PeersB016d55), 64, 128};

// The gpu-next39.sh run (a72dbe9; peers at 1038b06, the same kernels): full-mask shift at hdim 128
// on the 80-row tile with two dQ staging buffers by default. bench/peers.py
// (docs/data/next39-h200-a72dbe9/peers/peers.json) combined with `dash-attn bench` of every schedule
// (docs/data/next39-h200-a72dbe9/bench-hdim{128,64}.json) by scripts/fit_planner.py --data a72dbe9
// --cpp-table, the same rule as e29ccbd. Not fitted on. Order as above.
// clang-format off
const Measured kMeasuredSm90PeersA72dbe9[] = {
  {128, 512, false, {0.4974, 0.5219, 0.4984, 0.5559, 0.5559, 0.5478}},
  {128, 1024, false, {0.7543, 0.8177, 0.7561, 0.7904, 0.7904, 0.8098}},
  {128, 2048, false, {1.2887, 1.4189, 1.2885, 1.3122, 1.3122, 1.3494}},
  {128, 4096, false, {2.4257, 2.7304, 2.4920, 2.4951, 2.4951, 2.5513}},
  {128, 8192, false, {4.9323, 5.0764, 4.9374, 4.8299, 4.8299, 4.8439}},
  {128, 16384, false, {10.2600, 10.0473, 10.2772, 9.3864, 9.3864, 9.2336}},
  {128, 512, true, {0.4837, 0.3968, 0.4090, 0.4617, 0.4412, 0.4470}},
  {128, 1024, true, {0.7789, 0.5224, 0.5349, 0.6253, 0.5687, 0.5890}},
  {128, 2048, true, {0.9973, 0.7759, 0.8041, 0.9440, 0.8589, 0.8819}},
  {128, 4096, true, {1.5188, 1.3252, 1.3461, 1.6722, 1.4566, 1.4631}},
  {128, 8192, true, {2.6752, 2.5465, 2.5127, 3.1441, 2.6824, 2.6193}},
  {128, 16384, true, {4.9671, 5.0372, 4.8865, 6.2004, 5.1370, 5.0293}},
  {64, 512, false, {0.5897, 0.6438, 0.5907, 0.6859, 0.6859, 0.6178}},
  {64, 1024, false, {0.8368, 0.9519, 0.8383, 0.9222, 0.9222, 0.8871}},
  {64, 2048, false, {1.4510, 1.7042, 1.4510, 1.5622, 1.5622, 1.5406}},
  {64, 4096, false, {2.7161, 3.1184, 2.7076, 2.7954, 2.7954, 2.8065}},
  {64, 8192, false, {5.4528, 5.7242, 5.4281, 5.4024, 5.4024, 5.5050}},
  {64, 16384, false, {11.4552, 10.8335, 10.7681, 10.6794, 10.6794, 11.0764}},
  {64, 512, true, {0.5963, 0.4646, 0.4645, 0.6246, 0.5363, 0.4993}},
  {64, 1024, true, {0.9531, 0.6032, 0.6199, 0.9101, 0.7378, 0.6657}},
  {64, 2048, true, {1.2006, 0.9405, 0.9651, 1.4797, 1.1447, 1.0139}},
  {64, 4096, true, {1.7784, 1.5425, 1.5779, 2.6019, 1.9482, 1.6558}},
  {64, 8192, true, {3.0803, 2.8935, 2.9042, 4.8030, 3.6020, 3.0716}},
  {64, 16384, true, {5.7911, 5.6643, 5.6287, 9.4946, 6.9379, 5.8516}},
};
// clang-format on
const Sweep kSm90PeersA72dbe9Sweep{std::begin(kMeasuredSm90PeersA72dbe9), std::end(kMeasuredSm90PeersA72dbe9), 64, 128};

// The hdim-128 and hdim-64 halves of a sweep (the tables list hdim 128 first).
std::pair<Sweep, Sweep> split_by_hdim(const Sweep& sw) {
  const Measured* mid = std::find_if(sw.begin, sw.end, [](const Measured& m) { return m.hdim == 64; });
  Sweep a = sw, b = sw;
  a.end = mid;
  b.begin = mid;
  return {a, b};
}

TileProblem measured_problem(const Measured& m, const Sweep& sw) {
  return sweep_problem(m.hdim, m.seqlen, m.causal, sw.block_m, sw.block_n);
}

// Deterministic schedules compared per shape (what recommend() chooses from): symmetric_shift
// only on causal masks.
std::vector<int> compared(const Measured& m) {
  std::vector<int> ks;
  for (int k = 0; k < kNumConcreteSchedules; ++k) {
    const Schedule s = static_cast<Schedule>(k);
    if (s == Schedule::kAtomic || (s == Schedule::kSymmetricShift && !m.causal)) continue;
    ks.push_back(k);
  }
  return ks;
}

struct Prediction {
  std::vector<double> ms;  // per schedule (symmetric_shift on a full mask: shift's)
  int pick = -1;           // recommend()'s choice, from the same rows
};

Prediction predict(const Measured& m, const Sweep& sw, const CostModel& cost) {
  Prediction out;
  out.ms.assign(kNumConcreteSchedules, 0.0);
  const TileProblem p = measured_problem(m, sw);
  std::vector<plan::PlanRow> rows;
  for (int k = 0; k < kNumConcreteSchedules; ++k) {
    const Schedule s = static_cast<Schedule>(k);
    if (s == Schedule::kSymmetricShift && !m.causal) { out.ms[k] = out.ms[static_cast<int>(Schedule::kShift)]; continue; }
    plan::PlanRow row;
    if (sw.head_block > 0) {  // the measured task order, not the default: simulate it directly
      const ScheduleModel sm = ScheduleModel::make(p, s).with_head_block(sw.head_block);
      const SimResult sim = simulate(sm, cost, 132, Dispatch::kDynamic);
      row.schedule = row.resolved = s;
      row.deterministic = sm.deterministic();
      row.feasible = sim.ok && sm.min_coresident() <= 132;
      row.makespan = row.feasible ? sim.makespan : std::numeric_limits<double>::infinity();
    } else {
      // atomic's order of the sweep's day: on the sm90 model's 64 x 128 tiles sw.atomic_head_block; on the
      // sm80 tiles the default (head-major, unchanged).
      const bool pin = s == Schedule::kAtomic && sw.block_m == 64 && sw.block_n == 128;
      row = plan::plan_one(p, s, cost, 132, Dispatch::kDynamic, pin ? sw.atomic_head_block : 0);
    }
    out.ms[k] = row.makespan / 1000.0;
    rows.push_back(row);
  }
  out.pick = static_cast<int>(plan::recommend_from(rows, p, cost.head_dim, cost.post_poll, cost.shift_full_tiles_hd128, 0,
                                                   false, cost.shift_full_tiles_hd64));
  return out;
}

struct Score {
  int points = 0;
  int auto_ok = 0;                      // measured time of recommend()'s pick within 3% of the best
  int best_top1 = 0;                    // no schedule predicted strictly faster than the measured best
  int pairs = 0, pairs_ok = 0;          // pairs > 3% apart on the GPU, ordered the same (model ties fail)
  int pairs_ok_or_tied = 0;             // the same, a model tie counted as agreement
  double atomic_err = 0;                // mean |pred/meas - 1| of atomic
  double ratio_err = 0;                 // rms of log((pred/pred_atomic) / (meas/meas_atomic))
  int ratio_n = 0;
  std::string misses;
  std::string picks;                    // per point: the pick against the measured best (markdown rows)
};

// The order of the calibration fits: more `auto` picks within 3%, then more pairs in order, then
// the smaller rms log ratio error.
bool better_fit(const Score& a, const Score& b) {
  if (a.auto_ok != b.auto_ok) return a.auto_ok > b.auto_ok;
  if (a.pairs_ok != b.pairs_ok) return a.pairs_ok > b.pairs_ok;
  return a.ratio_err < b.ratio_err;
}

Score score(const CostParams& params, const Sweep& sw, bool print) {
  Score sc;
  if (print)
    std::printf("| shape | schedule | measured ms | predicted ms | measured / atomic | predicted / atomic |\n"
                "|---|---|---:|---:|---:|---:|\n");
  for (const Measured* mp = sw.begin; mp != sw.end; ++mp) {
    const Measured& m = *mp;
    const Prediction pr = predict(m, sw, CostModel::for_shape(m.hdim, sw.block_m, sw.block_n, params));
    const int A = static_cast<int>(Schedule::kAtomic);
    sc.atomic_err += std::abs(pr.ms[A] / m.ms[A] - 1.0);
    const std::vector<int> ks = compared(m);
    for (int k : ks) {
      const double e = std::log((pr.ms[k] / pr.ms[A]) / (m.ms[k] / m.ms[A]));
      sc.ratio_err += e * e;
      ++sc.ratio_n;
    }
    int best = ks.front();
    for (int k : ks) if (m.ms[k] < m.ms[best]) best = k;
    ++sc.points;
    const bool auto_ok = m.ms[pr.pick] <= 1.03 * m.ms[best];
    sc.auto_ok += auto_ok;
    bool top1 = true;
    for (int k : ks) top1 = top1 && !(pr.ms[k] < pr.ms[best] * (1 - 1e-9));
    sc.best_top1 += top1;
    char shape[64];
    std::snprintf(shape, sizeof shape, "hdim %d %s %d", m.hdim, m.causal ? "causal" : "full", m.seqlen);
    {
      // The model's margin: how much slower it predicts the fastest schedule that is more than
      // 3% off the measured best than the fastest one that is not (negative: auto misses).
      double good = std::numeric_limits<double>::infinity(), bad = good;
      for (int k : ks) {
        double& slot = m.ms[k] <= 1.03 * m.ms[best] ? good : bad;
        slot = std::min(slot, pr.ms[k]);
      }
      char buf[256], margin[32] = "-";
      if (std::isfinite(bad)) std::snprintf(margin, sizeof margin, "%+.2f%%", 100 * (bad / good - 1));
      std::snprintf(buf, sizeof buf, "| %s | %s | %s | %+.1f%% | %s |\n", shape,
                    schedule_name(static_cast<Schedule>(pr.pick)), schedule_name(static_cast<Schedule>(best)),
                    100 * (m.ms[pr.pick] / m.ms[best] - 1), margin);
      sc.picks += buf;
    }
    if (!auto_ok) {
      char buf[160];
      std::snprintf(buf, sizeof buf, " [%s: %s picked, %s %.1f%% faster]", shape,
                    schedule_name(static_cast<Schedule>(pr.pick)), schedule_name(static_cast<Schedule>(best)),
                    100 * (m.ms[pr.pick] / m.ms[best] - 1));
      sc.misses += buf;
    }
    for (size_t a = 0; a < ks.size(); ++a)
      for (size_t b = a + 1; b < ks.size(); ++b) {
        const double ma = m.ms[ks[a]], mb = m.ms[ks[b]], pa = pr.ms[ks[a]], pb = pr.ms[ks[b]];
        if (std::abs(ma - mb) <= 0.03 * std::min(ma, mb)) continue;
        const bool tie = std::abs(pa - pb) <= 1e-9 * std::max(pa, pb);
        ++sc.pairs;
        sc.pairs_ok += !tie && (ma < mb) == (pa < pb);
        sc.pairs_ok_or_tied += tie || (ma < mb) == (pa < pb);
      }
    if (print)
      for (int k = 0; k < kNumConcreteSchedules; ++k) {
        const Schedule s = static_cast<Schedule>(k);
        if (s == Schedule::kSymmetricShift && !m.causal) continue;
        std::printf("| %s | %s%s%s | %.3f | %.3f | %.3f | %.3f |\n", k == 0 ? shape : "", schedule_name(s),
                    k == best ? " (best)" : "", k == pr.pick ? " (auto)" : "", m.ms[k], pr.ms[k], m.ms[k] / m.ms[A],
                    pr.ms[k] / pr.ms[A]);
      }
  }
  sc.atomic_err /= sc.points;
  sc.ratio_err = std::sqrt(sc.ratio_err / std::max(1, sc.ratio_n));
  return sc;
}

void print_score(const char* what, const Score& s) {
  std::printf("%s: auto within 3%% of the measured best %d/%d; measured best ranked first %d/%d; pairs > 3%% "
              "apart in order %d/%d (%d counting model ties); atomic mean error %.1f%%; rms log ratio error "
              "%.3f;%s\n",
              what, s.auto_ok, s.points, s.best_top1, s.points, s.pairs_ok, s.pairs, s.pairs_ok_or_tied,
              100 * s.atomic_err, s.ratio_err, s.misses.c_str());
}

bool print_table() { return std::getenv("DASH_CALIBRATION_TABLE") != nullptr; }

TEST(Calibration, DefaultCostParamsAgainstTheH200) {
  EXPECT_TRUE(same_params(CostParams::for_tiles(64, 64), CostParams{}));
  const Score s = score(CostParams{}, kSm80Sweep, print_table());
  print_score("calibrated defaults (async)", s);
  // Before: the calibration fitted on 8 shapes of an earlier kernel version (scored with the
  // current tie tolerance; docs/schedules.md has its numbers with the old 1% tolerance).
  CostParams before;
  before.per_sm_tflops = 1.6;
  before.compute_overhead_us = 1.5;
  before.reduce_gbytes_per_s = 64.0;
  before.reduce_latency_us = 1.0;
  print_score("previous rates (8-shape fit)", score(before, kSm80Sweep, false));
  ASSERT_EQ(s.points, 24);
  // Atomic is the compute fit: within 10% on average over the 24 shapes.
  EXPECT_LT(s.atomic_err, 0.10);
  // `auto` within 3% of the measured best deterministic schedule at 21 of 24 points (the misses:
  // hdim 128 full 4096, where the model ties descending and shift within 0.5%, and hdim 128
  // causal 512/1024, where it has spt ahead of symmetric shift).
  EXPECT_GE(s.auto_ok, 21);
  // The model orders at least 80% of the schedule pairs that the GPU separates by more than 3%
  // (128 of 147 when calibrated, a model tie counted as a miss).
  EXPECT_GE(s.pairs_ok, 0.8 * s.pairs) << "of " << s.pairs;
  EXPECT_GE(s.best_top1, 18);
}

TEST(Calibration, DISABLED_FitCostParams) {
  // Grid search. Compute: per_sm_tflops and compute_overhead_us by the mean atomic error.
  // Reduce: (bandwidth, latency, stage buffers) by the number of points where `auto` is within
  // 3% of the measured best, then the pairs in order, then the rms log ratio error. Slow (about
  // 3 s per candidate); prints every candidate and the best few.
  CostParams best = CostParams{};
  double best_err = std::numeric_limits<double>::infinity();
  for (double tf : {1.6, 1.8, 2.0, 2.2, 2.4})
    for (double ov : {1.5, 2.0, 2.25, 2.5}) {
      CostParams p;
      p.per_sm_tflops = tf;
      p.compute_overhead_us = ov;
      const Score s = score(p, kSm80Sweep, false);
      std::printf("tflops %.2f overhead %.2f: atomic error %.1f%%\n", tf, ov, 100 * s.atomic_err);
      if (s.atomic_err < best_err) { best_err = s.atomic_err; best = p; }
    }
  std::printf("compute fit: per_sm_tflops %.2f, compute_overhead_us %.2f (atomic error %.1f%%)\n",
              best.per_sm_tflops, best.compute_overhead_us, 100 * best_err);
  struct Cand { Score s; CostParams p; };
  std::vector<Cand> cands;
  for (int buffers : {2, 3})
    for (double bw : {32.0, 48.0, 64.0, 80.0, 128.0})
      for (double lat : {0.6, 0.8, 1.0, 1.1, 1.2, 1.4}) {
        CostParams p = best;
        p.reduce_gbytes_per_s = bw;
        p.reduce_latency_us = lat;
        p.stage_buffers = buffers;
        const Score s = score(p, kSm80Sweep, false);
        char what[96];
        std::snprintf(what, sizeof what, "buffers %d bw %g lat %.1f (r64 %.2f r128 %.2f)", buffers, bw, lat,
                      CostModel::for_shape(64, 64, 64, p).r, CostModel::for_shape(128, 64, 64, p).r);
        print_score(what, s);
        cands.push_back({s, p});
      }
  std::sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) { return better_fit(a.s, b.s); });
  for (size_t k = 0; k < std::min<size_t>(5, cands.size()); ++k)
    std::printf("best %zu: auto %d pairs %d ratio err %.3f bw %g lat %g buffers %d\n", k, cands[k].s.auto_ok,
                cands[k].s.pairs_ok, cands[k].s.ratio_err, cands[k].p.reduce_gbytes_per_s,
                cands[k].p.reduce_latency_us, cands[k].p.stage_buffers);
}

// ---- calibration of the sm90 kernel's set (tiles 64x128) -------------------------------------

// Counts of two scores added (the atomic error and the rms log ratio error averaged over both).
Score merged(const Score& a, const Score& b) {
  Score s = a;
  s.points += b.points;
  s.auto_ok += b.auto_ok;
  s.best_top1 += b.best_top1;
  s.pairs += b.pairs;
  s.pairs_ok += b.pairs_ok;
  s.pairs_ok_or_tied += b.pairs_ok_or_tied;
  s.atomic_err = (a.atomic_err * a.points + b.atomic_err * b.points) / std::max(1, s.points);
  s.ratio_n += b.ratio_n;
  s.ratio_err = std::sqrt((a.ratio_err * a.ratio_err * a.ratio_n + b.ratio_err * b.ratio_err * b.ratio_n) /
                          std::max(1, s.ratio_n));
  s.misses += b.misses;
  s.picks += b.picks;
  return s;
}

// kSm90Params without the two-buffer shift rule (CostParams::shift_full_tiles_hd128 = 0): the start
// of every older set below, whose kernels staged full-mask shift's dQ in one buffer at 80 rows.
// Every recorded sweep in this file ran shift / symmetric shift with the taker's drain (before the
// group take): scored without it, and with the head_dim 64 shift rule of those kernels (from 8192 keys).
void as_drain_kernels(CostParams& p) {
  p.group_take = false;
  p.shift_full_tiles_hd64 = plan::kShiftLongFullTilesHd64;
}
CostParams sm90_set_one_buffer() {
  CostParams p = kSm90Params;
  p.shift_full_tiles_hd128 = 0;
  as_drain_kernels(p);
  return p;
}

// The set of the 1f1af5c refit (late taking, fitted on kMeasuredSm90 + kMeasuredSm90HeadMajor, the
// kernel before 99e56b6 / bea1336 / a77d6b6): the set the two older sweeps were fitted with.
CostParams sm90_set_1f1af5c() {
  CostParams p = sm90_set_one_buffer();
  p.order_penalty_closed = p.order_penalty_closed_sym = -1.0;  // (every set before ff7314a: the rank a loop in the MMA warps)
  p.post_gbytes_per_s = 0.0;  // (every set before the e29ccbd refit: no postprocess term)
  p.post_poll = false;
  p.per_sm_tflops = 6.1;
  p.compute_overhead_us = 0.655;
  p.task_overhead_us = 18.4;
  p.reduce_gbytes_per_s = 32.0;
  p.reduce_latency_us = 1.0;
  p.order_penalty_base = 0.15;
  p.order_penalty_slope = 0.008;
  p.order_penalty_knee = 32.0;
  return p;
}

// The set before the 1f1af5c refit (82481fb fit, run-ahead taking): 64 GB/s + 3.5 us, the
// penalty 1 + 0.10 + 0.004 * max(0, w - 32). (The simulator has charged task_overhead_us per side
// since 1f1af5c; before it, per task: docs/schedules.md has the scores of both.)
CostParams sm90_set_82481fb() {
  CostParams p = sm90_set_1f1af5c();
  p.reduce_gbytes_per_s = 64.0;
  p.reduce_latency_us = 3.5;
  p.order_penalty_base = 0.10;
  p.order_penalty_slope = 0.004;
  return p;
}

// The set of the e58bc06 refit (fitted on kMeasuredSm90A77, the single-writer kernel of a77d6b6),
// which the dual-writer refit replaced.
CostParams sm90_set_e58bc06() {
  CostParams p = sm90_set_one_buffer();
  p.order_penalty_closed = p.order_penalty_closed_sym = -1.0;
  p.post_gbytes_per_s = 0.0;
  p.post_poll = false;
  p.per_sm_tflops = 5.2;
  p.compute_overhead_us = 0.40;
  p.task_overhead_us = 16.0;
  p.reduce_gbytes_per_s = 32.0;
  p.reduce_latency_us = 1.5;
  p.order_penalty_base = 0.25;
  p.order_penalty_slope = 0.008;
  p.order_penalty_knee = 32.0;
  return p;
}

// The set before the e29ccbd refit (twenty-second session): the dual-writer fit (250529d) with the
// closed-form terms of the seventeenth to nineteenth sessions and no postprocess term; kSm90Params
// from e8a6c5a to the refit. Without post_poll the planner's short-causal rule keeps its 8 tiles, so
// this is that planner's `auto` as well.
CostParams sm90_set_250529d() {
  CostParams p = sm90_set_one_buffer();
  p.per_sm_tflops = 5.5;
  p.compute_overhead_us = 0.25;
  p.task_overhead_us = 17.0;
  p.reduce_gbytes_per_s = 16.0;
  p.reduce_latency_us = 0.25;
  p.order_penalty_base = 0.35;
  p.order_penalty_slope = 0.008;
  p.order_penalty_knee = 32.0;
  p.post_gbytes_per_s = 0.0;
  p.post_poll = false;
  return p;
}

// The current sm90 set on one sweep: the whole sweep (with DASH_CALIBRATION_TABLE=1 the
// per-schedule table and `auto`'s picks with the model's margin: how much slower it predicts the
// fastest schedule that is more than 3% off the measured best than the fastest one that is not),
// each head dim, and the e58bc06 set on the same sweep for comparison.
struct SweepScores {
  Score all, e58bc06, h128, h64;
};
// Which closed-form ranks the sweep's kernel computed in the dQ writer: none (every sweep before
// ff7314a: the rank in the MMA warps), full-mask shift's (ff7314a: kWRankShift), or also causal
// symmetric shift's (from 106791e: kWRankSym). The set is scored without the closed-form terms
// (order_penalty_closed, order_penalty_closed_sym) its kernel did not have.
enum class Closed { kNone, kShift, kShiftAndSym };
// How the sweep's kernel ran the postprocess (CostParams::post_poll): after the main kernel (every
// sweep before e29ccbd) or polling, its blocks filling the main kernel's tail (PDL and
// DASH_BWD_POST_POLL, the defaults from the twenty-first session: the e29ccbd sweep on). The set's
// postprocess rate applies to both: the older kernels ran the same conversion, after the main kernel.
enum class Post { kAfter, kPoll };
// Whether the sweep's kernel ran full-mask shift at hdim 128 on the 80-row tile with one dQ staging
// buffer (every sweep before a72dbe9: scored without the two-buffer shift rule,
// CostParams::shift_full_tiles_hd128 = 0) or two (a72dbe9 on: the set's rule).
enum class Shift128 { kOneBuffer, kTwoBuffers };
CostParams sm90_params_for(Closed closed, Post post = Post::kAfter, Shift128 shift128 = Shift128::kOneBuffer) {
  CostParams p = CostParams::for_tiles(64, 128);
  if (closed == Closed::kNone) p.order_penalty_closed = -1.0;
  if (closed != Closed::kShiftAndSym) p.order_penalty_closed_sym = -1.0;
  p.post_poll = post == Post::kPoll;
  if (shift128 == Shift128::kOneBuffer) p.shift_full_tiles_hd128 = 0;
  p.last_wave_split = false;  // (every recorded sweep ran kernels without the last-wave split)
  as_drain_kernels(p);
  return p;
}
SweepScores score_sm90_set(const Sweep& sweep, const char* title, const char* per_hdim, Closed closed = Closed::kNone,
                           Post post = Post::kAfter, Shift128 shift128 = Shift128::kOneBuffer) {
  EXPECT_TRUE(same_params(CostParams::for_tiles(64, 128), kSm90Params));
  const CostParams p = sm90_params_for(closed, post, shift128);
  SweepScores r;
  r.all = score(p, sweep, print_table());
  std::printf("%s\n", title);
  print_score("  both head dims", r.all);
  if (print_table())
    std::printf("| shape | auto | measured best | auto vs best | model margin |\n|---|---|---|---:|---:|\n%s",
                r.all.picks.c_str());
  r.e58bc06 = score(sm90_set_e58bc06(), sweep, false);
  print_score("  e58bc06 set", r.e58bc06);
  const auto [d128, d64] = split_by_hdim(sweep);
  r.h128 = score(p, d128, false);
  r.h64 = score(p, d64, false);
  print_score((std::string(per_hdim) + " hdim 128").c_str(), r.h128);
  print_score((std::string(per_hdim) + " hdim 64").c_str(), r.h64);
  EXPECT_EQ(r.h128.points, 12);
  EXPECT_EQ(r.h64.points, 12);
  return r;
}

// The checks both sm90 sweeps share: `auto` within 3% at every point of each head dim, atomic
// within 4% on average at each head dim, at least `pairs128` / `pairs64` of the pairs the GPU
// separates by more than 3% in the same order, the measured best ranked first at >= `top1`
// points, and better than the e58bc06 set on the fit's criterion and in absolute time.
// auto64: `auto`'s count at hdim 64 (12 unless the sweep has a known artefact, see the caller).
// atomic_bar: the bound on the mean atomic error at each head dim (0.04 when the set was fitted on
// these sweeps; 0.05 since the e29ccbd refit, see the callers).
void expect_sm90_scores(const SweepScores& r, int pairs128, int pairs64, int top1, int auto64 = 12,
                        double atomic_bar = 0.04) {
  EXPECT_GE(r.h128.auto_ok, 12) << r.h128.misses;
  EXPECT_GE(r.h64.auto_ok, auto64) << r.h64.misses;
  EXPECT_LT(r.h128.atomic_err, atomic_bar);
  EXPECT_LT(r.h64.atomic_err, atomic_bar);
  EXPECT_GE(r.h128.pairs_ok, pairs128) << "of " << r.h128.pairs;
  EXPECT_GE(r.h64.pairs_ok, pairs64) << "of " << r.h64.pairs;
  EXPECT_GE(r.all.best_top1, top1);
  EXPECT_TRUE(better_fit(r.all, r.e58bc06));
  EXPECT_LT(r.all.atomic_err, r.e58bc06.atomic_err);
}

TEST(Calibration, Sm90CostParamsAgainstTheH200) {
  // The set the planner uses for the sm90 kernel's tiles (64x128, hdim 128 and 64), scored on the
  // sweep it was fitted on until the e29ccbd refit (twenty-second session: Calibration.
  // Sm90CostParamsOnTheE29ccbdPeers; the records below are the dual-writer fit's, the lines "since
  // the e29ccbd refit" the current set's), kMeasuredSm90Dual (the dual-dQ-writer kernel, 250529d,
  // the default task order; scripts/fit_planner.py --data 250529d scores it through `dash-attn plan`
  // with the same rules), against the set the dual-writer fit replaced (e58bc06). Scored without the
  // closed-form term, as every sweep before ff7314a (score_sm90_set with Closed::kNone), and with the
  // postprocess after the main kernel (Post::kAfter), as every sweep before e29ccbd.
  CostParams p = sm90_params_for(Closed::kNone);
  const SweepScores r = score_sm90_set(
      kSm90DualSweep, "sm90 set on the dual-writer kernel (250529d: peers + dash-attn bench), default task order:",
      "dual writer");
  // `auto` within 3% of the measured best at 12/12 and 11/12: descending everywhere except full
  // 16384, where the measured rule (plan::kSptLongFullTiles, docs/schedules.md "Long full masks")
  // picks spt. Without the rule (the model alone, as when the set was fitted) 11/12 and 11/12: spt
  // is 5.4% and 9.8% faster than descending there, and no parameter of this model structure puts
  // it ahead (the model has them within 1.5%, descending first). The hdim 64 miss is hdim 64 causal
  // 1024, where the short-causal rule (plan::kSptShortCausalTiles, eighteenth session) picks spt and
  // this table has descending 4.9% faster: an artefact of its combination (that point's descending
  // peers row was dropped as disturbed, the table then scales bench by 1.042 for descending but
  // keeps spt's slower peers rows): both sources alone have spt faster there (bench 1.7%, peers 6.2%).
  // Atomic is the compute fit (c + per-side cost): 2.0% and 2.5% when fitted (the e58bc06 set:
  // 11.4% and 17.0%, the kernel got faster). Pairs the GPU separates by more than 3%, in the same
  // order: 74/79 and 73/76 (147/155, 95%) when fitted; the goal is 80%. Better than the set it
  // replaced on the criterion of the fit (same `auto` count, 147 pairs instead of 145, rms log
  // ratio error 0.089 instead of 0.094) and in absolute time.
  // Since the e29ccbd refit (twenty-second session: kSm90Params fitted on kMeasuredSm90PeersE29ccbd,
  // with the postprocess term, scored here with the postprocess after the main kernel): the same
  // `auto` picks and pairs (74/79, 73/76), rms 0.073 / 0.104; atomic 4.9% / 4.7% (measured /
  // predicted 0.99-1.13, the longer the more: the set's steps are those of the faster e29ccbd
  // kernel), so the atomic bound is 5% here.
  expect_sm90_scores(r, 74, 73, 16, /*auto64=*/11, /*atomic_bar=*/0.05);
  EXPECT_LT(r.all.ratio_err, r.e58bc06.ratio_err);

  // The single-writer kernel's sweep (a77d6b6): the e58bc06 set, fitted on it, keeps its scores
  // there (asserted, so that the fit's record stays reproducible); the current set's are printed.
  {
    const CostParams e = sm90_set_e58bc06();
    std::printf("single-writer sweep a77d6b6 (peers):\n");
    print_score("  current set", score(p, kSm90A77Sweep, false));
    const Score ea = score(e, kSm90A77Sweep, false);
    print_score("  e58bc06 set", ea);
    const Score older = score(sm90_set_1f1af5c(), kSm90A77Sweep, false);
    print_score("  1f1af5c set", older);
    const auto [a128, a64] = split_by_hdim(kSm90A77Sweep);
    const Score e128 = score(e, a128, false), e64 = score(e, a64, false);
    ASSERT_EQ(e128.points, 12);
    ASSERT_EQ(e64.points, 12);
    // `auto` (descending at every point) within 3% of the measured best at 11/12 and 5/12 (the
    // misses: spt, head-major, beating descending, head blocks of 16: hdim 128 full 16k, hdim 64
    // full 8k/16k and causal 1k-16k); atomic within 6% (3.7%, 3.2%); pairs 78/82 and 72/82.
    EXPECT_GE(e128.auto_ok, 11) << e128.misses;
    EXPECT_GE(e64.auto_ok, 5) << e64.misses;
    EXPECT_LT(e128.atomic_err, 0.06);
    EXPECT_LT(e64.atomic_err, 0.06);
    EXPECT_GE(e128.pairs_ok, 78) << "of " << e128.pairs;
    EXPECT_GE(e64.pairs_ok, 72) << "of " << e64.pairs;
    EXPECT_GE(ea.best_top1, 14);
    EXPECT_TRUE(better_fit(ea, older));
    EXPECT_LT(ea.ratio_err, older.ratio_err);
  }

  // The two older sweeps (15a0f38 default order, 6ed5f35 head-major) measured the kernel before
  // 99e56b6 / bea1336 / a77d6b6 (5-30% slower); they are no longer fitted. The 1f1af5c set, fitted
  // on them, keeps its scores there (asserted, so that the fit's record stays reproducible); the
  // current set's scores on them are printed only.
  struct Part { const char* name; Sweep sweep; int pairs128, pairs64, top1; };
  for (const Part& part : {Part{"15a0f38, default task order", kSm90Sweep, 73, 75, 22},
                           Part{"6ed5f35 combined, head-major", kSm90HeadMajorSweep, 67, 72, 24}}) {
    std::printf("older sweep %s:\n", part.name);
    print_score("  current set", score(p, part.sweep, false));
    print_score("  82481fb set", score(sm90_set_82481fb(), part.sweep, false));
    const auto [h128, h64] = split_by_hdim(part.sweep);
    const Score o128 = score(sm90_set_1f1af5c(), h128, false), o64 = score(sm90_set_1f1af5c(), h64, false);
    print_score("  1f1af5c set, hdim 128", o128);
    print_score("  1f1af5c set, hdim 64", o64);
    EXPECT_EQ(o128.auto_ok, 12) << o128.misses;
    EXPECT_EQ(o64.auto_ok, 12) << o64.misses;
    EXPECT_GE(o128.pairs_ok, part.pairs128);
    EXPECT_GE(o64.pairs_ok, part.pairs64);
    EXPECT_GE(o128.best_top1 + o64.best_top1, part.top1);
    EXPECT_LT(o128.atomic_err, 0.07);
    EXPECT_LT(o64.atomic_err, 0.07);
    EXPECT_TRUE(better_fit(merged(o128, o64), score(sm90_set_82481fb(), part.sweep, false)));
  }
}

// The 80-row tiles' set (kSm90Params80) against the H200: atomic at full masks 1k-16k, hdim 128 and
// 64 (`dash-attn bench` at 19c11e2, docs/data/final-h200-19c11e2/bench-hdim{128,64}.json; the
// standard sweep, 16k tokens, MHA). Atomic is the compute fit, as for the 64-row set: every point
// within 5% (fitted: 0.966-1.012), rms log ratio error below 0.03 (kSm90Params: 0.114, 8-15% slow).
TEST(Calibration, Sm90EightyRowSetAgainstTheH200) {
  struct Point { int hdim, seqlen, batch, heads; double ms; };
  const Point pts[] = {
      {128, 1024, 16, 16, 0.8297},
      {128, 2048, 8, 16, 1.3480},
      {128, 4096, 4, 16, 2.3884},
      {128, 8192, 2, 16, 4.4686},
      {128, 16384, 1, 16, 8.7178},
      {64, 1024, 16, 32, 0.9528},
      {64, 2048, 8, 32, 1.6525},
      {64, 4096, 4, 32, 3.0264},
      {64, 8192, 2, 32, 5.7213},
      {64, 16384, 1, 32, 11.0718},
  };
  EXPECT_EQ(CostParams::for_tiles(80, 128).per_sm_tflops, kSm90Params80.per_sm_tflops);
  EXPECT_EQ(CostParams::for_tiles(64, 128).per_sm_tflops, kSm90Params.per_sm_tflops);
  double sq80 = 0, sq64 = 0;
  // (The points ran kernels without the last-wave split: both sets scored without it.)
  CostParams set80 = kSm90Params80, set64 = kSm90Params;
  set80.last_wave_split = set64.last_wave_split = false;
  for (const Point& p : pts) {
    TileProblem tp;
    tp.batch = p.batch; tp.heads_q = tp.heads_kv = p.heads; tp.seqlen_q = tp.seqlen_k = p.seqlen;
    tp.block_m = 80; tp.block_n = 128; tp.causal = false;
    const double pred = plan::predict_us(tp, Schedule::kAtomic, CostModel::for_shape(p.hdim, 80, 128, set80), 132,
                                         Dispatch::kDynamic) * 1e-3;
    const double old = plan::predict_us(tp, Schedule::kAtomic, CostModel::for_shape(p.hdim, 80, 128, set64),
                                        132, Dispatch::kDynamic) * 1e-3;
    EXPECT_NEAR(p.ms / pred, 1.0, 0.05) << "hdim " << p.hdim << " seqlen " << p.seqlen;
    sq80 += std::pow(std::log(p.ms / pred), 2);
    sq64 += std::pow(std::log(p.ms / old), 2);
  }
  const double n = static_cast<double>(sizeof(pts) / sizeof(pts[0]));
  std::printf("80-row atomic, rms log ratio error: kSm90Params80 %.3f, kSm90Params %.3f\n", std::sqrt(sq80 / n),
              std::sqrt(sq64 / n));
  EXPECT_LT(std::sqrt(sq80 / n), 0.03);
  EXPECT_LT(std::sqrt(sq80 / n), std::sqrt(sq64 / n));
}

TEST(Calibration, Sm90CostParamsOnTakeAhead1) {
  // The current kernel (take-ahead 1 by default, 9dd59e9), kMeasuredSm90Ahead1. The set was not
  // refit on it: `scripts/fit_planner.py --fit` on this data (the same grids as the dual-writer
  // fit) returns kSm90Params itself (compute fit 5.5 / 0.25 / 17.0, atomic error 2.4%; then
  // 16 GB/s + 0.25 us, penalty 0.35 / 0.008 first by better_fit; every one of the 216 candidates
  // has `auto` at 23/24). DASH_CALIBRATION_TABLE=1 prints the per-schedule table and the picks.
  const SweepScores r = score_sm90_set(
      kSm90Ahead1Sweep, "sm90 set on the take-ahead-1 kernel (9dd59e9: peers + dash-attn bench), default task order:",
      "take-ahead 1");
  // `auto` within 3% of the measured best at 12/12 and 12/12 (descending, spt at full 16384 and at
  // causal 512 / 1024 by the measured rules). The model alone: 12/12 and 11/12, the miss hdim 64 full 16384, spt 3.1% faster
  // (peers 4.6%, bench 1.6%, each against its mean of the descending and auto rows); the model
  // ties them within 0.05%, as on the dual-writer sweep. Atomic 2.4% and 2.4%. Pairs the GPU
  // separates by more than 3%, in the same order: 75/80 and 74/76 (149/156, 96%); the goal is 80%.
  // Since the e29ccbd refit (kSm90Params fitted on kMeasuredSm90PeersE29ccbd, scored here with the
  // postprocess after the main kernel): `auto` 12/12 and 12/12, pairs 75/80 and 74/76, rms 0.083;
  // atomic 4.9% / 4.2% (measured / predicted 0.98-1.14, the longer the more: the set's steps are
  // those of the faster e29ccbd kernel), hence the atomic bound of 5%.
  expect_sm90_scores(r, 75, 74, 15, /*auto64=*/12, /*atomic_bar=*/0.05);
  // rms log ratio error 0.084 (0.076, 0.091); the e58bc06 set: 0.101, atomic 14.5%.
  EXPECT_LT(r.all.ratio_err, 0.085);
}

TEST(Calibration, Sm90CostParamsOnWriterRank) {
  // The seventeenth session's kernel (ff7314a), kMeasuredSm90WriterRank, scored with the
  // shift closed-form term (not the symmetric-shift one: its kernel computed that rank in the MMA
  // warps) (order_penalty_closed 0.05: full-mask shift at 0.99-1.13 of atomic there,
  // against the formula's 1.35+ fitted while the rank was a loop in the MMA warps).
  // DASH_CALIBRATION_TABLE=1 prints the per-schedule table and the picks.
  const SweepScores r = score_sm90_set(
      kSm90WriterRankSweep, "sm90 set on the writer-rank kernel (ff7314a: peers + dash-attn bench), default task order:",
      "writer rank", Closed::kShift);
  // `auto` within 3% at 12/12 and 11/12: the miss is hdim 64 full 16384, where shift (80-row tiles,
  // writer rank) measured 3.0% faster than the spt the measured long-full rule picks; the model
  // cannot put shift ahead of descending / spt at full masks (it has them at atomic's time, the
  // lower bound, and shift there at 1.05x). Pairs > 3% apart in order 66/72 and 64/78 (130/150,
  // 87%; without the term 127/150); rms log ratio error 0.075 (without: 0.141).
  EXPECT_GE(r.h128.auto_ok, 12) << r.h128.misses;
  EXPECT_GE(r.h64.auto_ok, 11) << r.h64.misses;
  EXPECT_GE(r.h128.pairs_ok, 66) << "of " << r.h128.pairs;
  EXPECT_GE(r.h64.pairs_ok, 64) << "of " << r.h64.pairs;
  EXPECT_LT(r.all.ratio_err, 0.08);
  const Score without = score(sm90_params_for(Closed::kNone), kSm90WriterRankSweep, false);
  print_score("  without the closed-form term", without);
  EXPECT_LT(r.all.ratio_err, without.ratio_err) << "the term must describe this kernel better";
  EXPECT_GE(r.all.pairs_ok, without.pairs_ok);
}

TEST(Calibration, Sm90CostParamsOnSymWriterRank) {
  // The eighteenth session's kernel (106791e), kMeasuredSm90SymWriterRank: causal symmetric shift's
  // closed-form rank in the writer as well, scored with both closed-form terms
  // (order_penalty_closed_sym 0.05: causal symmetric shift at 0.91-1.00 of atomic there, against
  // the formula's 1.35+). DASH_CALIBRATION_TABLE=1 prints the per-schedule table and the picks.
  const SweepScores r = score_sm90_set(
      kSm90SymWriterRankSweep,
      "sm90 set on the symmetric-shift writer-rank kernel (106791e: peers + dash-attn bench), default task order:",
      "sym writer rank", Closed::kShiftAndSym);
  // `auto` within 3% at 12/12 and 12/12 (descending; spt at full 16384 and at causal 512 / 1024 by
  // the measured rules). Pairs > 3% apart in order 65/70 and 67/80 (132/150, 88%; without the symmetric-shift term
  // 127/150); rms log ratio error 0.066 (without: 0.108).
  EXPECT_GE(r.h128.auto_ok, 12) << r.h128.misses;
  EXPECT_GE(r.h64.auto_ok, 12) << r.h64.misses;
  EXPECT_GE(r.h128.pairs_ok, 65) << "of " << r.h128.pairs;
  EXPECT_GE(r.h64.pairs_ok, 67) << "of " << r.h64.pairs;
  EXPECT_GE(r.all.pairs_ok, 120) << "80% of " << r.all.pairs;
  EXPECT_LT(r.all.ratio_err, 0.07);
  const Score without = score(sm90_params_for(Closed::kShift), kSm90SymWriterRankSweep, false);
  print_score("  without the symmetric-shift closed-form term", without);
  EXPECT_LT(r.all.ratio_err, without.ratio_err) << "the term must describe this kernel better";
  EXPECT_GT(r.all.pairs_ok, without.pairs_ok);
}

TEST(Calibration, Sm90CostParamsOnThe68d0908Peers) {
  // The nineteenth session's peers run (kMeasuredSm90Peers68d0908), scored with both closed-form
  // terms and order_penalty_closed_hd64 0.01: full-mask shift with the closed-form rank runs at
  // 0.99-1.01 of descending at hdim 64 full 4k-8k in this run (0.94 of it at hdim 128), so the
  // hdim 64 term is the smaller one. It is what lets the head_dim 64 long-full-mask rule
  // (plan::kShiftLongFullHeadDim) pick shift at full 16384, where shift ran in 3.0% less time than
  // spt here (11.41 / 11.76 ms, the peers medians; 2.9% by the minimum): with 0.05 at both head
  // dims the model has shift 5.4% behind descending, spt stays, and `auto` is 11/12 at hdim 64.
  const SweepScores r = score_sm90_set(kSm90Peers68d0908Sweep, "sm90 set on the 68d0908 peers run:", "68d0908",
                                       Closed::kShiftAndSym);
  // `auto` 12/12 and 12/12; pairs > 3% apart in order 70/72 and 69/84 (139/156, 89%).
  EXPECT_GE(r.h128.auto_ok, 12) << r.h128.misses;
  EXPECT_GE(r.h64.auto_ok, 12) << r.h64.misses;
  EXPECT_GE(r.h128.pairs_ok, 70) << "of " << r.h128.pairs;
  EXPECT_GE(r.h64.pairs_ok, 69) << "of " << r.h64.pairs;
  EXPECT_GE(r.all.pairs_ok, r.all.pairs * 8 / 10);
  CostParams same = sm90_params_for(Closed::kShiftAndSym);
  same.order_penalty_closed_hd64 = same.order_penalty_closed;
  const auto [d128, d64] = split_by_hdim(kSm90Peers68d0908Sweep);
  const Score same64 = score(same, d64, false);
  print_score("  hdim 64 with the hdim 128 closed-form term (0.05)", same64);
  EXPECT_EQ(same64.auto_ok, 11) << same64.misses;
  EXPECT_LE(same64.pairs_ok, r.h64.pairs_ok);
}

TEST(Calibration, Sm90CostParamsOnThe8d47f07Peers) {
  // The twentieth session's peers run (kMeasuredSm90Peers8d47f07): 96-row tiles at hdim 64 from 1k
  // for every schedule but causal ascending / shift / symmetric shift. The set is unchanged and still
  // models 64-row tiles there (kAuto is resolved with them), scored with both closed-form terms as
  // on 68d0908.
  const SweepScores r = score_sm90_set(kSm90Peers8d47f07Sweep, "sm90 set on the 8d47f07 peers run:", "8d47f07",
                                       Closed::kShiftAndSym);
  // `auto` 11/12 and 12/12; pairs > 3% apart in order 65/70 and 72/78 (137/148, 93%; the bar is
  // 80%); rms log ratio error 0.067. The hdim 128 miss is causal 16384: descending picked, ascending
  // 4.3% faster (5.014 / 5.228 ms). The hdim 128 kernel is the one of 68d0908, in whose run ascending
  // was 4.4% slower (5.315 / 5.089): ascending's three rounds read 4.80 / 5.77 / 5.01 ms in this
  // run (5.13 / 5.63 / 5.28 at 68d0908), so the order of the medians flips between runs of one
  // kernel. (By the fastest call ascending was ahead in the 106791e, 68d0908 and 8d47f07 peers runs
  // alike: 4.77-4.83 ms against the dash:descending rows' 4.97-4.99.)
  EXPECT_GE(r.h128.auto_ok, 11) << r.h128.misses;
  EXPECT_NE(r.h128.misses.find("hdim 128 causal 16384"), std::string::npos) << r.h128.misses;
  EXPECT_GE(r.h64.auto_ok, 12) << r.h64.misses;
  EXPECT_GE(r.h128.pairs_ok, 65) << "of " << r.h128.pairs;
  EXPECT_GE(r.h64.pairs_ok, 72) << "of " << r.h64.pairs;
  EXPECT_GE(r.all.pairs_ok, r.all.pairs * 8 / 10);
  EXPECT_LT(r.all.ratio_err, 0.07);
  // Ascending takes the 96-row tiles at full masks now, as descending does: they ran within 2.3% of
  // each other at hdim 64 full 1k-16k (at 68d0908, 64 / 80 rows, ascending 4.5-8.1% slower), so the
  // model's ascending / descending ties there are no longer pairs the GPU separates by 3%, and no
  // model tie counts at hdim 64 (68d0908: 69 in order, 74 counting ties).
  EXPECT_EQ(r.h64.pairs_ok_or_tied, r.h64.pairs_ok);
  // Atomic: 3.3% / 5.1% mean error at hdim 128 / 64; at hdim 64 the model's 64-row atomic against
  // the 96 rows that ran from 1k (measured / predicted: full 0.91-0.95, causal 0.97-1.02).
  // Since the e29ccbd refit (its steps are the faster e29ccbd kernel's): 4.9% / 3.6%, hdim 128
  // measured / predicted 0.95-1.16 (full 16384: the peers row 10.855 ms against 9.381), hence 5%.
  EXPECT_LT(r.h128.atomic_err, 0.05);
  EXPECT_LT(r.h64.atomic_err, 0.06);
}

TEST(Calibration, Sm90CostParamsOnTheEf0214ePeers) {
  // The gpu-next32.sh run (kMeasuredSm90PeersEf0214e, peers + `dash-attn bench`): dQ's first
  // contribution per ordered chain stored instead of reduce-added, causal ascending on 96-row tiles
  // at hdim 64 from 1k; the set is unchanged and still models 64-row tiles everywhere (kAuto is
  // resolved with them), scored with both closed-form terms as on 68d0908 / 8d47f07.
  const SweepScores r = score_sm90_set(kSm90PeersEf0214eSweep, "sm90 set on the ef0214e peers run:", "ef0214e",
                                       Closed::kShiftAndSym);
  // `auto` 12/12 and 12/12, no misses (closest: hdim 128 full 8192 and hdim 64 full 8192, descending
  // picked, ascending / shift 1.5% / 1.6% faster; hdim 128 causal 1024, spt by the short-causal rule,
  // descending 1.5% faster). The 8d47f07 miss, hdim 128 causal 16384, is none here: ascending 3.4%
  // slower than descending (5.232 / 5.059 ms; bench 4.666 / 4.547, peers medians 5.248 / 5.038, its
  // rounds 5.20 / 5.84 / 5.25), though ascending's fastest call again leads (4.73 against 4.86).
  // Pairs > 3% apart in order 68/72 and 71/79 (139/151, 92%; the bar is 80%); rms log ratio error
  // 0.072 (0.087 / 0.053).
  EXPECT_GE(r.h128.auto_ok, 12) << r.h128.misses;
  EXPECT_GE(r.h64.auto_ok, 12) << r.h64.misses;
  EXPECT_GE(r.h128.pairs_ok, 68) << "of " << r.h128.pairs;
  EXPECT_GE(r.h64.pairs_ok, 71) << "of " << r.h64.pairs;
  EXPECT_GE(r.all.pairs_ok, r.all.pairs * 8 / 10);
  EXPECT_LT(r.all.ratio_err, 0.075);
  // Not asserted, unlike at 8d47f07: that no model tie counts among those pairs (69 and 72 counting
  // ties): at full 16384 ascending ran 4.9% (hdim 128) and 4.0% (hdim 64) slower than descending,
  // which the model ties. The pairs out of order: hdim 64 causal 4096 / 8192, symmetric shift 8.1% / 15.9%
  // slower than ascending (96 rows since 582a38f; the model's 64-row ascending is behind it);
  // hdim 64 full 16384, ascending / spt / descending 8.3% / 4.2% / 4.1% slower than shift (the model
  // has shift 1.3% behind descending; the long-full rule picks it) and ascending 4.0% slower than spt;
  // hdim 64 full 8192 spt 6.3% slower than shift; hdim 128 full 16384 ascending 4.3% slower than spt;
  // hdim 128 full 512 shift 6.0% slower than spt; hdim 128 causal 512 ascending 5.9% slower than shift.
  // Atomic: 4.3% / 6.2% mean error at hdim 128 / 64, the model's 64-row atomic against the 80 rows
  // (hdim 128) and 96 rows (hdim 64) that ran at full masks from 1k (measured / predicted 0.92-0.96
  // and 0.89-0.92; causal 0.97-1.00 and, hdim 64, 0.96-1.09). hdim 128 full 16384 is bench's time
  // scaled (9.319 / 10.131 predicted): its peers row, 10.936 ms, 17% off, is dropped (8d47f07 kept
  // peers' 10.855 there, 7% above the model).
  // Since the e29ccbd refit (this sweep scored with the postprocess after the main kernel): `auto`
  // 12/12 and 12/12, pairs 69/72 and 71/79 (140/151), rms 0.069, atomic 2.9% / 3.9%.
  EXPECT_LT(r.h128.atomic_err, 0.045);
  EXPECT_LT(r.h64.atomic_err, 0.065);
}

TEST(Calibration, Sm90CostParamsOnTheE29ccbdPeers) {
  // The gpu-next35.sh run (kMeasuredSm90PeersE29ccbd, peers + `dash-attn bench`): PDL and the
  // polling postprocess on by default. The sweep the set is fitted on (twenty-second session:
  // scripts/fit_planner.py --data e29ccbd --fit, docs/schedules.md "The postprocess in the model"),
  // scored with both closed-form terms and the polling postprocess (Post::kPoll), against the set
  // before the refit (sm90_set_250529d: no postprocess term, the 8-tile short-causal rule).
  // DASH_CALIBRATION_TABLE=1 prints the per-schedule table and the picks.
  const SweepScores r = score_sm90_set(kSm90PeersE29ccbdSweep, "sm90 set on the e29ccbd peers run:", "e29ccbd",
                                       Closed::kShiftAndSym, Post::kPoll);
  const Score before = score(sm90_set_250529d(), kSm90PeersE29ccbdSweep, false);
  print_score("  the set before the e29ccbd refit", before);
  // `auto` 12/12 and 12/12, no misses. Closest: hdim 64 full 8192, descending picked, ascending 1.5%
  // faster (model margin +0.05%); hdim 128 full 4096, ascending 0.9% faster. spt at causal 512-4096
  // at both head dims (the measured best at each), at 2048 / 4096 by the model alone, which has spt
  // 0.1-0.4% ahead of descending there, backed by the short-causal rule's polling reach
  // (plan::kSptShortCausalTilesPoll); spt as well at hdim 64 causal 8192 (the best by 0.5%);
  // descending at causal 8192 / 16384 (hdim 128) and 16384 (hdim 64); spt / shift at full 16384 by
  // the long-full rule. (peers' own `auto / best` column has hdim 128 full 16384 and hdim 64 full
  // 16384 at 0.957 / 0.967: `auto` ran spt / shift there, the best schedule, and its dash:auto row read
  // 10.544 / 11.085 ms against the dash:spt / dash:shift rows' 10.087 / 10.723, the rounds of one
  // kernel in one process (10.61 / 10.07 / 10.59); the table keeps dash:auto rows only where auto
  // ran descending.)
  // The set before: 21/24, missing hdim 128 causal 2048 / 4096 (spt 4.2% / 3.1% faster) and hdim 64
  // causal 2048 (3.3%), descending picked: without the postprocess term the model has spt 4.2% / 5.4%
  // behind descending at hdim 128 causal 2048 / 4096. Pairs > 3% apart in order 71/73 and 72/80 (143/153,
  // 93%; before 68/73 and 72/80, 140); rms log ratio error 0.076 (0.086 / 0.065; before 0.087);
  // atomic 3.7% / 4.0% (before 4.5% / 6.2%).
  EXPECT_GE(r.h128.auto_ok, 12) << r.h128.misses;
  EXPECT_GE(r.h64.auto_ok, 12) << r.h64.misses;
  EXPECT_GE(r.h128.pairs_ok, 71) << "of " << r.h128.pairs;
  EXPECT_GE(r.h64.pairs_ok, 72) << "of " << r.h64.pairs;
  EXPECT_GE(r.all.pairs_ok, r.all.pairs * 8 / 10);
  EXPECT_EQ(r.all.pairs_ok_or_tied, r.all.pairs_ok);  // no model tie among those pairs
  EXPECT_LT(r.all.ratio_err, 0.08);
  // The pairs out of order: hdim 128 causal 512 / 2048, ascending 4.8% / 5.6% slower than shift (the
  // model has ascending 10.2% / 4.7% ahead); hdim 64 full 512, shift 5.8% slower than spt (model:
  // 0.7% ahead); hdim 64 full 8192, spt 5.3% slower than shift (model 2.7% ahead); hdim 64 full
  // 16384, ascending / descending 7.5% / 6.5% slower than spt (the model ties them within 0.05%)
  // and 9.4% / 8.4% slower than shift (model 1.9% ahead; the long-full rule picks shift); hdim 64
  // causal 4096 / 8192, symmetric shift 9.3% / 17.5% slower than ascending (96-row ascending; the
  // model's 64-row ascending is 5.3% / 0.8% behind it).
  // Atomic: the model's 64-row atomic against the 80-row (hdim 128) and 96-row (hdim 64) atomic that
  // ran at full masks from 1k: measured / predicted 0.94-1.03 and 0.92-0.98 there, hdim 128 causal
  // 0.95-1.11 (the longer the more), hdim 64 causal 1.01-1.06.
  EXPECT_LT(r.h128.atomic_err, 0.04);
  EXPECT_LT(r.h64.atomic_err, 0.045);
  EXPECT_EQ(before.auto_ok, 21) << before.misses;
  EXPECT_TRUE(better_fit(r.all, before));
  EXPECT_LT(r.all.ratio_err, before.ratio_err);
  EXPECT_LT(r.all.atomic_err, before.atomic_err);
  // Without polling (the same set with the postprocess after the main kernel, as the older sweeps
  // are scored) the ragged tail of spt is not filled and `auto` loses the causal 2048-4096 points.
  const Score no_poll = score(sm90_params_for(Closed::kShiftAndSym, Post::kAfter), kSm90PeersE29ccbdSweep, false);
  print_score("  without polling", no_poll);
  EXPECT_LT(no_poll.auto_ok, r.all.auto_ok);
}

TEST(Calibration, Sm90CostParamsOnTheB016d55Peers) {
  // The gpu-next36.sh run at b016d55 (kMeasuredSm90PeersB016d55, peers + `dash-attn bench`): the
  // kernels of e29ccbd with the 16-byte-load preprocess as the default (PDL and the polling
  // postprocess on). The set was not fitted on it: a check of the e29ccbd refit on a later sweep,
  // scored as the e29ccbd sweep is, with both closed-form terms and the polling postprocess
  // (Post::kPoll). DASH_CALIBRATION_TABLE=1 prints the per-schedule table and the picks.
  const SweepScores r = score_sm90_set(kSm90PeersB016d55Sweep, "sm90 set on the b016d55 peers run:", "b016d55",
                                       Closed::kShiftAndSym, Post::kPoll);
  // `auto` 12/12 and 12/12, no misses (scripts/fit_planner.py --data b016d55 gives the same). Closest:
  // hdim 128 full 2048, descending picked, ascending 1.4% faster; hdim 64 full 512-4096, descending
  // picked, ascending 0.2-0.9% faster (the model ties them: 64-row tiles). Thin model margins: hdim
  // 128 full 16384 spt (-0.02%, the long-full rule), hdim 64 full 8192 descending (+0.05%), hdim 128
  // causal 4096 spt (+0.14%), hdim 64 causal 2048 spt (+0.4%). Pairs > 3% apart in order 70/76 and
  // 73/80 (143/156, 92%; 144 counting the one model tie); rms log ratio error 0.082 (0.095 / 0.067);
  // atomic 4.2% / 4.4%. (The e58bc06 set, printed above: 22/24, 134/156.)
  EXPECT_GE(r.h128.auto_ok, 12) << r.h128.misses;
  EXPECT_GE(r.h64.auto_ok, 12) << r.h64.misses;
  EXPECT_GE(r.h128.pairs_ok, 70) << "of " << r.h128.pairs;
  EXPECT_GE(r.h64.pairs_ok, 73) << "of " << r.h64.pairs;
  EXPECT_GE(r.all.pairs_ok, r.all.pairs * 8 / 10);
  // One model tie, see below; two since the head block 8 rule of the long ordered runs (v36: the
  // sweep ran blocks of 16, the model now simulates 8 from 2048 keys).
  EXPECT_LE(r.all.pairs_ok_or_tied, r.all.pairs_ok + 2);
  EXPECT_LT(r.all.ratio_err, 0.085);
  // The pairs out of order: hdim 128 full 16384, ascending 13.4% / 13.4% / 10.2% slower than spt /
  // descending / shift (bench's ascending scaled, its peers row dropped; the model has ascending
  // 0.7% / 0.02% / 5.2% ahead); hdim 128 causal 512 / 2048, ascending 4.2% / 6.5% slower than shift
  // (model: 10.3% / 4.8% ahead); hdim 128 causal 16384, ascending 5.9% slower than symmetric shift
  // (model 2.5% ahead); hdim 64 full 512, shift 6.4% slower than spt (model 0.7% ahead); hdim 64
  // full 8192, spt 5.2% slower than shift (model 2.7% ahead); hdim 64 full 16384, ascending 6.8% /
  // 7.1% slower than spt / shift (model 0.03% / 1.9% ahead) and 4.0% slower than descending (the
  // model's tie); hdim 64 causal 4096 / 8192, symmetric shift 9.0% / 17.4% slower than ascending
  // (96-row ascending; the model's 64-row ascending is 5.3% / 0.8% behind it), as on e29ccbd.
  // Atomic: measured / predicted 0.95-1.05 at hdim 128 full, 0.95-1.11 causal (the longer the
  // more); 0.89-0.97 at hdim 64 full (the 96-row atomic against the model's 64 rows), 0.98-1.03
  // causal.
  EXPECT_LT(r.h128.atomic_err, 0.045);
  EXPECT_LT(r.h64.atomic_err, 0.05);
}

TEST(Calibration, Sm90CostParamsOnTheA72dbe9Peers) {
  // The gpu-next39.sh run at a72dbe9 (kMeasuredSm90PeersA72dbe9, peers + `dash-attn bench`): the
  // two-buffer shift at hdim 128 full, so scored with the set's two-buffer shift rule
  // (Shift128::kTwoBuffers), both closed-form terms and the polling postprocess. Not fitted on.
  // DASH_CALIBRATION_TABLE=1 prints the per-schedule table and the picks.
  const SweepScores r = score_sm90_set(kSm90PeersA72dbe9Sweep, "sm90 set on the a72dbe9 peers run:", "a72dbe9",
                                       Closed::kShiftAndSym, Post::kPoll, Shift128::kTwoBuffers);
  // `auto` 12/12 and 12/12 (scripts/fit_planner.py --data a72dbe9 gives the same): at hdim 128 full
  // 8192 / 16384 the rule picks the two-buffer shift, the measured best (4.830 / 9.386 ms against
  // the model's pick, descending, 4.937 / 10.277). Pairs > 3% apart in order 63/73 and 70/77 (133/150,
  // 89%); rms log ratio error 0.077; atomic 3.2% / 4.2%.
  EXPECT_GE(r.h128.auto_ok, 12) << r.h128.misses;
  EXPECT_GE(r.h64.auto_ok, 12) << r.h64.misses;
  EXPECT_GE(r.all.pairs_ok, r.all.pairs * 8 / 10);
  EXPECT_LT(r.all.ratio_err, 0.085);
  EXPECT_LT(r.h128.atomic_err, 0.045);
  EXPECT_LT(r.h64.atomic_err, 0.05);
  // Without the rule (the one-buffer kernels' planner) `auto` misses hdim 128 full 16384 (spt picked,
  // shift 7.0% faster); at 8192 its pick, descending, is 2.2% behind the two-buffer shift.
  const SweepScores off = score_sm90_set(kSm90PeersA72dbe9Sweep, "the same without the two-buffer shift rule:",
                                         "a72dbe9 (no rule)", Closed::kShiftAndSym, Post::kPoll, Shift128::kOneBuffer);
  EXPECT_LE(off.h128.auto_ok, 11) << off.h128.misses;
}

TEST(Calibration, DISABLED_FitSm90CostParams) {
  // The e58bc06 fit, kept so that its record stays reproducible: the sm90 set fitted on the
  // a77d6b6 sweep (kMeasuredSm90A77, the single-writer kernel; result: sm90_set_e58bc06()). The
  // current set (kMeasuredSm90PeersE29ccbd since the twenty-second session; the dual-writer sweep
  // kMeasuredSm90Dual before) is fitted by `scripts/fit_planner.py --fit`, the same two stages
  // through `dash-attn plan --param`. Compute first: per_sm_tflops,
  // compute_overhead_us and task_overhead_us by the mean atomic error (atomic per tile pair is
  // c + task / m, m = Q tiles per task, one side: 2.82 + 16.0 / m us at hdim 128, 1.81 + 8.0 / m at
  // hdim 64, linear in d; atomic reduces skip the semaphore, so with 2 stage buffers atomic runs at
  // c). A coarse 4x4x4 grid (4.5-6.1 TFLOP/s, 0.3-0.655 us, 10-22 us) had its best at 5.5 / 0.40 /
  // 18.4 (3.9%); this is the 3x3x3 grid around it. Then the reduce (bandwidth, latency; the
  // kernel's 2 stage buffers) and the visit-order penalty (base, slope; the knee at 32) on two
  // grids, by better_fit: the points where `auto` is within 3% of the measured best, then the pairs
  // in order, then the rms log ratio error. About 2 s per candidate, 8-9 minutes; prints every
  // candidate and the best few.
  CostParams best = sm90_set_e58bc06();
  double best_err = std::numeric_limits<double>::infinity();
  for (double tf : {5.2, 5.5, 5.8})
    for (double ov : {0.35, 0.40, 0.45})
      for (double task : {16.0, 18.4, 20.0}) {
        CostParams p = sm90_set_e58bc06();
        p.per_sm_tflops = tf;
        p.compute_overhead_us = ov;
        p.task_overhead_us = task;
        const Score s = score(p, kSm90A77Sweep, false);
        std::printf("tflops %.2f overhead %.3f task %.1f: atomic error %.2f%%\n", tf, ov, task, 100 * s.atomic_err);
        if (s.atomic_err < best_err) { best_err = s.atomic_err; best = p; }
      }
  std::printf("compute fit: per_sm_tflops %.2f, compute_overhead_us %.3f, task_overhead_us %.1f (atomic error %.2f%%)\n",
              best.per_sm_tflops, best.compute_overhead_us, best.task_overhead_us, 100 * best_err);
  struct Cand { Score s; CostParams p; };
  std::vector<Cand> cands;
  auto run = [&](double bw, double lat, double base, double slope) {
    CostParams p = best;
    p.reduce_gbytes_per_s = bw;
    p.reduce_latency_us = lat;
    p.order_penalty_base = base;
    p.order_penalty_slope = slope;
    p.order_penalty_knee = 32.0;
    const Score s = score(p, kSm90A77Sweep, false);
    char what[160];
    std::snprintf(what, sizeof what, "bw %g lat %.2f penalty 1 + %.2f + %.3f * max(0, w - 32) (r128 %.2f r64 %.2f)", bw,
                  lat, base, slope, CostModel::for_shape(128, 64, 128, p).r, CostModel::for_shape(64, 64, 128, p).r);
    print_score(what, s);
    cands.push_back({s, p});
  };
  // The wide grid, then a refinement around its best (32 GB/s, 1.5 us, base 0.25 at its edge).
  for (double bw : {16.0, 32.0, 64.0})
    for (double lat : {1.0, 1.5, 2.0, 2.5, 3.0})
      for (double base : {0.10, 0.15, 0.20, 0.25})
        for (double slope : {0.004, 0.008, 0.012}) run(bw, lat, base, slope);
  for (double lat : {1.25, 1.75})
    for (double base : {0.20, 0.25, 0.30, 0.35})
      for (double slope : {0.004, 0.008}) run(32.0, lat, base, slope);
  for (double base : {0.30, 0.35})
    for (double slope : {0.004, 0.008}) run(32.0, 1.5, base, slope);
  std::sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) { return better_fit(a.s, b.s); });
  for (size_t k = 0; k < std::min<size_t>(5, cands.size()); ++k)
    std::printf("best %zu: auto %d pairs %d ratio err %.3f bw %g lat %.2f base %.2f slope %.3f\n", k,
                cands[k].s.auto_ok, cands[k].s.pairs_ok, cands[k].s.ratio_err, cands[k].p.reduce_gbytes_per_s,
                cands[k].p.reduce_latency_us, cands[k].p.order_penalty_base, cands[k].p.order_penalty_slope);
}

}  // namespace
}  // namespace dash

// A CTA of a co-resident-group schedule must not take a task of the same group while its
// writer owes reduces (the kernel drains first): the async grid completes for every grid size
// from the group width up, with heads that straddle waves.
TEST(AsyncReduce, DynamicDispatchDrainsBetweenGroupedTasks) {
  for (bool causal : {false, true}) {
    dash::TileProblem p;
    p.batch = 3; p.heads_q = 2; p.heads_kv = 1; p.seqlen_q = p.seqlen_k = 16 * 64;
    p.block_m = p.block_n = 64; p.causal = causal;
    for (dash::Schedule s : {dash::Schedule::kShift, dash::Schedule::kSymmetricShift}) {
      const dash::ScheduleModel sm = dash::ScheduleModel::make(p, s);
      dash::CostModel cost = dash::CostModel::for_shape(128, 64, 64);
      ASSERT_TRUE(cost.async_reduce);
      for (int P = sm.min_coresident(); P <= sm.num_tasks(); P += 3) {
        const dash::SimResult r = dash::simulate(sm, cost, P, dash::Dispatch::kDynamic);
        EXPECT_TRUE(r.ok) << dash::schedule_name(s) << (causal ? " causal" : " full") << " P=" << P << ": " << r.error;
      }
    }
  }
}

// The group take (CostModel::group_take, the kernel's DASH_BWD_GROUP_TAKE): no drain once the counter
// has passed the last task's group. Completes on every grid from the group width up (one group of
// 16 tasks per head and two groups of 10 with 20 KV tiles), and skips drains: not the drain's
// makespans at every size.
TEST(AsyncReduce, GroupTakeCompletesOnEveryGrid) {
  for (bool causal : {false, true})
    for (int tiles : {16, 20, 150}) {
      dash::TileProblem p;
      p.batch = 2; p.heads_q = 4; p.heads_kv = 2; p.seqlen_q = p.seqlen_k = tiles * 64;
      p.block_m = p.block_n = 64; p.causal = causal;
      for (dash::Schedule s : {dash::Schedule::kShift, dash::Schedule::kSymmetricShift}) {
        const dash::ScheduleModel sm = dash::ScheduleModel::make(p, s);
        ASSERT_GT(sm.min_coresident(), 1);
        dash::CostModel cost = dash::CostModel::for_shape(128, 64, 64);
        int differ = 0, runs = 0;
        for (int P = sm.min_coresident(); P <= sm.num_tasks(); P += tiles == 150 ? 37 : 3) {
          cost.group_take = false;
          const dash::SimResult d = dash::simulate(sm, cost, P, dash::Dispatch::kDynamic);
          cost.group_take = true;
          const dash::SimResult g = dash::simulate(sm, cost, P, dash::Dispatch::kDynamic);
          ASSERT_TRUE(d.ok) << d.error;
          EXPECT_TRUE(g.ok) << dash::schedule_name(s) << (causal ? " causal" : " full") << " tiles " << tiles << " P=" << P
                            << ": " << g.error;
          differ += g.makespan != d.makespan;
          ++runs;
        }
        EXPECT_GT(differ, 0) << dash::schedule_name(s) << (causal ? " causal" : " full") << " tiles " << tiles << ": " << runs
                             << " grids, the group take never changed the timeline";
      }
    }
}

// group_end_task: one past the group's last task, head-major, the last group of a head may be narrower.
TEST(AsyncReduce, GroupEndTask) {
  dash::TileProblem p;
  p.batch = 1; p.heads_q = p.heads_kv = 2; p.seqlen_q = p.seqlen_k = 200 * 64;
  p.block_m = p.block_n = 64;
  const dash::ScheduleModel sm = dash::ScheduleModel::make(p, dash::Schedule::kShift);
  ASSERT_EQ(sm.tasks_per_head, 200);
  ASSERT_EQ(sm.min_coresident(), 100);  // two groups of 100 per head
  EXPECT_EQ(sm.group_end_task(0), 100);
  EXPECT_EQ(sm.group_end_task(99), 100);
  EXPECT_EQ(sm.group_end_task(100), 200);
  EXPECT_EQ(sm.group_end_task(199), 200);
  EXPECT_EQ(sm.group_end_task(200), 300);
  EXPECT_EQ(sm.group_end_task(399), 400);
  const dash::ScheduleModel asc = dash::ScheduleModel::make(p, dash::Schedule::kAscending);
  EXPECT_EQ(asc.group_end_task(7), 8);
}
