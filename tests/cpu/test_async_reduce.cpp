// The async-reduce model (dQ writer warp): closed forms where there are some, the event log,
// the DAG, deadlock detection, and the calibration of CostParams against H200 measurements.
//
// The calibration tables below are the input data (the 24-point v2 sweep of our own sm80 backward
// on an H200, median of 5, docs/data/bench-h200-5704589.json: 132 SMs, 1 CTA/SM, tiles 64x64,
// bf16, 16384 tokens, hidden 2048, MHA, dynamic dispatch; and the 12-point hdim 128 sweep of the
// sm90 backward, docs/data/bench-h200-sm90-e06bd5f.json, tiles 64x128). Every prediction is
// recomputed by the simulator from CostParams{} (sm80) and CostParams::for_tiles(64, 128) (sm90).
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
         a.atomic_skips_latency == b.atomic_skips_latency;
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
  for (int buffers : {1, 2, 3})
    for (bool causal : {false, true})
      for (int n : {1, 5, 12})
        for (int k = 0; k < kNumConcreteSchedules; ++k) {
          TileProblem p = unit_problem(n, causal);
          p.seqlen_q = n + 3;
          p.heads_q = 2;
          const ScheduleModel sm = ScheduleModel::make(p, static_cast<Schedule>(k));
          const CostModel cost = async_unit(1.0, 0.7, buffers);
          const CriticalPath cp = critical_path(build_dag(sm, cost));
          ASSERT_TRUE(cp.acyclic) << schedule_name(sm.schedule);
          const SimResult res = simulate(sm, cost, sm.num_tasks(), Dispatch::kStatic);
          ASSERT_TRUE(res.ok) << res.error;
          EXPECT_NEAR(res.makespan, cp.length, 1e-9)
              << schedule_name(sm.schedule) << " n=" << n << " buffers=" << buffers << " causal=" << causal;
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

// The sm90 sweep (src/kernels/attn_bwd_sm90.cu at commit 82481fb, tiles 64x128, bf16, hdim 128
// and 64, median of 7, dynamic dispatch), bwd_ms of every schedule copied from
// docs/data/bench-h200-82481fb-hdim128.json and -hdim64.json: full/causal x seqlen 512..16384,
// batch x seqlen = 16384, heads = 2048 / hdim, MHA, 132 SMs, 1 CTA/SM. As above,
// symmetric_shift on a full mask ran shift. (The e06bd5f hdim-128 table this replaced is in
// docs/data/bench-h200-sm90-e06bd5f.json.)
// clang-format off
const Measured kMeasuredSm90[] = {
  {128, 512, false, {0.768, 0.7718, 0.773, 0.7508, 0.7517, 0.6613}},
  {128, 1024, false, {1.3188, 1.4355, 1.3026, 1.1825, 1.1805, 1.0354}},
  {128, 2048, false, {2.4179, 2.4271, 2.4147, 2.066, 2.0645, 1.8061}},
  {128, 4096, false, {4.5333, 4.5944, 4.4866, 3.7668, 3.7698, 3.2938}},
  {128, 8192, false, {9.1077, 8.8033, 8.7699, 8.1747, 8.1795, 6.2956}},
  {128, 16384, false, {16.2117, 16.1289, 15.6445, 18.9904, 18.9451, 12.3016}},
  {128, 512, true, {0.8766, 0.7465, 0.6678, 0.5884, 0.5758, 0.5361}},
  {128, 1024, true, {2.0123, 1.928, 1.4166, 0.8327, 0.8116, 0.7673}},
  {128, 2048, true, {4.7008, 4.8201, 3.0124, 1.3174, 1.2885, 1.2096}},
  {128, 4096, true, {7.5872, 9.6471, 5.2721, 2.2802, 2.2477, 2.1271}},
  {128, 8192, true, {12.6316, 16.9583, 9.3715, 4.5233, 4.3739, 3.8956}},
  {128, 16384, true, {18.807, 30.4419, 16.8606, 9.85, 9.8027, 7.321}},
  {64, 512, false, {0.9996, 0.9183, 0.9125, 1.1201, 1.1208, 0.8245}},
  {64, 1024, false, {1.8337, 1.8414, 1.8202, 1.9142, 1.9158, 1.3734}},
  {64, 2048, false, {3.4219, 3.4615, 3.4244, 3.4941, 3.5102, 2.4651}},
  {64, 4096, false, {5.8387, 6.1437, 6.1902, 6.6008, 6.5796, 4.616}},
  {64, 8192, false, {12.2371, 12.0007, 11.2266, 14.0482, 14.0706, 8.946}},
  {64, 16384, false, {24.5695, 24.4964, 24.7171, 33.7302, 33.7625, 17.565}},
  {64, 512, true, {1.3247, 1.2912, 0.9846, 0.8802, 0.8506, 0.6834}},
  {64, 1024, true, {4.7392, 4.9147, 2.8994, 1.3066, 1.253, 1.0034}},
  {64, 2048, true, {10.7352, 12.3936, 6.3709, 2.1669, 2.0906, 1.6363}},
  {64, 4096, true, {17.7127, 21.275, 11.3398, 3.9084, 3.7678, 2.8704}},
  {64, 8192, true, {23.3102, 35.7972, 17.7862, 7.8183, 7.4358, 5.406}},
  {64, 16384, true, {34.9449, 60.8868, 29.4669, 17.5957, 17.1024, 10.3047}},
};
// clang-format on

// One measured sweep and the tiles of the kernel that ran it.
struct Sweep {
  const Measured* begin;
  const Measured* end;
  int block_m, block_n;
};
const Sweep kSm80Sweep{std::begin(kMeasured), std::end(kMeasured), 64, 64};
const Sweep kSm90Sweep{std::begin(kMeasuredSm90), std::end(kMeasuredSm90), 64, 128};

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
    const plan::PlanRow row = plan::plan_one(p, s, cost, 132, Dispatch::kDynamic);
    out.ms[k] = row.makespan / 1000.0;
    rows.push_back(row);
  }
  out.pick = static_cast<int>(plan::recommend_from(rows));
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

TEST(Calibration, Sm90CostParamsAgainstTheH200) {
  // The set the planner uses for the sm90 kernel's tiles, scored on the 24-point sm90 sweep
  // (problem tiles 64x128, hdim 128 and 64). DASH_CALIBRATION_TABLE=1 also prints what `auto`
  // picks at each point and the model's margin there (how much slower it predicts the fastest
  // schedule that is more than 3% off the measured best than the fastest one that is not).
  const CostParams p = CostParams::for_tiles(64, 128);
  EXPECT_TRUE(same_params(p, kSm90Params));
  const Score s = score(p, kSm90Sweep, print_table());
  print_score("sm90 set (64x128 tiles), both head dims", s);
  if (print_table())
    std::printf("| shape | auto | measured best | auto vs best | model margin |\n|---|---|---|---:|---:|\n%s",
                s.picks.c_str());
  const Measured* mid = std::find_if(std::begin(kMeasuredSm90), std::end(kMeasuredSm90),
                                     [](const Measured& m) { return m.hdim == 64; });
  const Sweep h128{std::begin(kMeasuredSm90), mid, 64, 128};
  const Sweep h64{mid, std::end(kMeasuredSm90), 64, 128};
  const Score s128 = score(p, h128, false), s64 = score(p, h64, false);
  print_score("  hdim 128", s128);
  print_score("  hdim 64", s64);
  // The previous set (e06bd5f fit: 4.3 TFLOP/s, no overhead, 1 stage buffer, no task cost, no
  // visit-order penalty) on the new data: 16/24 (11/12 and 5/12).
  CostParams before;
  before.per_sm_tflops = 4.3;
  before.compute_overhead_us = 0.0;
  before.stage_buffers = 1;
  const Score b = score(before, kSm90Sweep, false);
  print_score("previous sm90 set (before)", b);
  ASSERT_EQ(s128.points, 12);
  ASSERT_EQ(s64.points, 12);
  // Atomic is the compute fit (c + per-task cost): within 7% on average at each head dim.
  EXPECT_LT(s128.atomic_err, 0.07);
  EXPECT_LT(s64.atomic_err, 0.07);
  // `auto` within 3% of the measured best deterministic schedule: 12/12 at hdim 128; 10/12 at
  // hdim 64. The hdim-64 misses: full 1024 (shift picked, descending 5.2% faster) and full 4096
  // (shift picked, ascending 13.1% faster; descending, the model's tie-break among the three
  // chained orders it predicts equal, would also be 6.0% off).
  EXPECT_GE(s128.auto_ok, 12) << s128.misses;
  EXPECT_GE(s64.auto_ok, 10) << s64.misses;
  EXPECT_GT(s.auto_ok, b.auto_ok);
  // Pairs the GPU separates by more than 3%, in the same order: 55/75 at hdim 128 and 49/79 at
  // hdim 64 (104/154, 68%: below the 80% goal; the model ties ascending/spt/descending on full
  // masks and predicts causal spt far too fast, docs/schedules.md).
  EXPECT_GE(s128.pairs_ok, 55) << "of " << s128.pairs;
  EXPECT_GE(s64.pairs_ok, 49) << "of " << s64.pairs;
}

TEST(Calibration, DISABLED_FitSm90CostParams) {
  // The sm90 set. Compute: per_sm_tflops, compute_overhead_us and task_overhead_us from atomic
  // (per tile pair c + task / m, m Q tiles per task: 3.03 + 18.4 / m us at hdim 128 and
  // 2.17 + 9.2 / m at hdim 64, linear in d; atomic reduces skip the semaphore, so with 2 stage
  // buffers atomic runs at c). Then the reduce latency and the visit-order penalty on a grid,
  // by the number of points where `auto` is within 3% of the measured best, then the pairs in
  // order, then the rms log ratio error. The penalty's shape is also checked against the
  // unordered diagnostic (shift / atomic 1.08-1.14 up to 32 tasks in flight, 1.28 at 64, 1.52 at
  // 128). Slow (about 1 s per candidate); prints every candidate and the best few.
  struct Cand { Score s; CostParams p; };
  std::vector<Cand> cands;
  for (double lat : {1.0, 2.5, 3.5})
    for (double base : {0.0, 0.10, 0.20})
      for (double slope : {0.0, 0.004})
        for (double knee : {0.0, 32.0}) {
          if (slope == 0.0 && knee > 0.0) continue;
          CostParams p = kSm90Params;
          p.reduce_latency_us = lat;
          p.order_penalty_base = base;
          p.order_penalty_slope = slope;
          p.order_penalty_knee = knee;
          const Score s = score(p, kSm90Sweep, false);
          char what[128];
          std::snprintf(what, sizeof what, "lat %.1f penalty 1 + %.2f + %.3f * max(0, w - %.0f)", lat, base, slope, knee);
          print_score(what, s);
          cands.push_back({s, p});
        }
  std::sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) { return better_fit(a.s, b.s); });
  for (size_t k = 0; k < std::min<size_t>(5, cands.size()); ++k)
    std::printf("best %zu: auto %d pairs %d ratio err %.3f lat %.1f base %.2f slope %.3f knee %.0f\n", k,
                cands[k].s.auto_ok, cands[k].s.pairs_ok, cands[k].s.ratio_err, cands[k].p.reduce_latency_us,
                cands[k].p.order_penalty_base, cands[k].p.order_penalty_slope, cands[k].p.order_penalty_knee);
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
