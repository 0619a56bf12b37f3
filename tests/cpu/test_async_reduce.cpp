// The async-reduce model (dQ writer warp): closed forms where there are some, the event log,
// the DAG, deadlock detection, and the calibration of CostParams against H200 measurements.
//
// The calibration table below is the input data (median of 3 runs of our own sm80 backward on
// an H200, 132 SMs, 1 CTA/SM, tiles 64x64, bf16, 16384 tokens, hidden 2048, MHA, dynamic
// dispatch). Every prediction is recomputed from CostParams{} by the simulator.
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
}

// ---- calibration against the H200 ------------------------------------------------------------

constexpr double kNone = -1.0;
struct Measured {
  int hdim, seqlen;
  bool causal;
  double ms[kNumConcreteSchedules];  // ascending, spt, descending, shift, symmetric_shift, atomic
  bool ascending_approx;             // ascending was only noted as "~7.0?"
};
// clang-format off
const Measured kMeasured[] = {
  {64, 2048, false, {7.0, kNone, kNone, 7.126, 7.109, 6.462}, true},
  {64, 8192, false, {25.918, 26.031, 25.856, 31.897, 31.885, 24.167}, false},
  {64, 2048, true, {23.672, 4.050, 8.815, 4.192, 4.176, 3.888}, false},
  {64, 8192, true, {36.482, 14.686, 14.674, 18.221, 20.087, 14.231}, false},
  {128, 2048, false, {5.174, 5.266, 5.168, 4.892, 4.890, 4.858}, false},
  {128, 8192, false, {19.345, 19.731, 19.302, 18.745, 18.695, 18.121}, false},
  {128, 2048, true, {16.452, 3.008, 5.616, 2.861, 2.799, 2.726}, false},
  {128, 8192, true, {25.304, 10.842, 10.187, 10.706, 11.373, 9.536}, false},
};
// clang-format on

TileProblem measured_problem(const Measured& m) {
  TileProblem p;
  p.batch = 16384 / m.seqlen;
  p.heads_q = p.heads_kv = 2048 / m.hdim;
  p.seqlen_q = p.seqlen_k = m.seqlen;
  p.block_m = p.block_n = 64;
  p.causal = m.causal;
  return p;
}

// Predicted ms of every schedule (symmetric_shift on a full mask is shift).
std::vector<double> predict(const Measured& m, const CostModel& cost) {
  std::vector<double> out(kNumConcreteSchedules);
  const TileProblem p = measured_problem(m);
  for (int k = 0; k < kNumConcreteSchedules; ++k) {
    const Schedule s = static_cast<Schedule>(k);
    if (s == Schedule::kSymmetricShift && !m.causal) { out[k] = out[static_cast<int>(Schedule::kShift)]; continue; }
    out[k] = plan::predict_us(p, s, cost, 132, Dispatch::kDynamic) / 1000.0;
  }
  return out;
}

// Deterministic schedules compared per shape: symmetric_shift only on causal masks (on a full
// mask it is shift, the same kernel path), ascending only where it was measured properly.
std::vector<int> compared(const Measured& m) {
  std::vector<int> ks;
  for (int k = 0; k < kNumConcreteSchedules; ++k) {
    const Schedule s = static_cast<Schedule>(k);
    if (s == Schedule::kAtomic || m.ms[k] == kNone) continue;
    if (s == Schedule::kSymmetricShift && !m.causal) continue;
    if (s == Schedule::kAscending && m.ascending_approx) continue;
    ks.push_back(k);
  }
  return ks;
}

struct Score {
  int shapes = 0, best_exact = 0, best_top2 = 0;
  int pairs = 0, pairs_ok = 0;          // every pair of compared schedules
  int pairs_sig = 0, pairs_sig_ok = 0;  // pairs whose measured times differ by more than 3%
  double atomic_err = 0;                // mean |pred/meas - 1| of atomic
  double ratio_err = 0;                 // rms of log((pred/pred_atomic) / (meas/meas_atomic))
  int ratio_n = 0;
};

Score score(const CostModel& cost_h64, const CostModel& cost_h128, bool print) {
  Score sc;
  if (print)
    std::printf("%-22s %-16s %9s %9s %9s %9s\n", "shape", "schedule", "meas ms", "pred ms", "meas/atom",
                "pred/atom");
  for (const Measured& m : kMeasured) {
    const CostModel& cost = m.hdim == 64 ? cost_h64 : cost_h128;
    const std::vector<double> pr = predict(m, cost);
    const int A = static_cast<int>(Schedule::kAtomic);
    sc.atomic_err += std::abs(pr[A] / m.ms[A] - 1.0);
    const std::vector<int> ks = compared(m);
    for (int k : ks) {
      const double e = std::log((pr[k] / pr[A]) / (m.ms[k] / m.ms[A]));
      sc.ratio_err += e * e;
      ++sc.ratio_n;
    }
    // Best measured deterministic schedule: where does the model rank it?
    int best = ks.front();
    for (int k : ks) if (m.ms[k] < m.ms[best]) best = k;
    int rank = 0;
    for (int k : ks) if (pr[k] < pr[best] * (1 - 1e-9)) ++rank;
    if (ks.size() >= 2) {  // hdim 64 full 2048 has only shift measured properly: not a ranking
      ++sc.shapes;
      sc.best_exact += rank == 0;
      sc.best_top2 += rank <= 1;
    }
    for (size_t a = 0; a < ks.size(); ++a)
      for (size_t b = a + 1; b < ks.size(); ++b) {
        const double dm = m.ms[ks[a]] - m.ms[ks[b]], dp = pr[ks[a]] - pr[ks[b]];
        const bool ok = (dm < 0) == (dp < 0) || dp == 0;  // a model tie does not contradict
        ++sc.pairs;
        sc.pairs_ok += ok;
        if (std::abs(dm) > 0.03 * std::min(m.ms[ks[a]], m.ms[ks[b]])) {
          ++sc.pairs_sig;
          sc.pairs_sig_ok += ok;
        }
      }
    if (print) {
      char shape[64];
      std::snprintf(shape, sizeof shape, "hdim %d %s %d", m.hdim, m.causal ? "causal" : "full", m.seqlen);
      for (int k = 0; k < kNumConcreteSchedules; ++k) {
        if (m.ms[k] == kNone) continue;
        std::printf("%-22s %-16s %9.3f %9.3f %9.3f %9.3f%s\n", k == 0 ? shape : "",
                    schedule_name(static_cast<Schedule>(k)), m.ms[k], pr[k], m.ms[k] / m.ms[A], pr[k] / pr[A],
                    k == best ? "  <- measured best" : "");
      }
      std::printf("%-22s model rank of the measured best: %d of %zu\n", "", rank + 1, ks.size());
    }
  }
  sc.atomic_err /= static_cast<double>(sizeof kMeasured / sizeof kMeasured[0]);
  sc.ratio_err = std::sqrt(sc.ratio_err / std::max(1, sc.ratio_n));
  return sc;
}

void print_score(const char* what, const Score& s) {
  std::printf("%s: best measured schedule ranked first %d/%d, in the top 2 %d/%d; pairwise order %d/%d "
              "(pairs > 3%% apart: %d/%d); atomic mean error %.1f%%; rms log ratio error %.3f\n",
              what, s.best_exact, s.shapes, s.best_top2, s.shapes, s.pairs_ok, s.pairs, s.pairs_sig_ok, s.pairs_sig,
              100 * s.atomic_err, s.ratio_err);
}

bool print_table() { return std::getenv("DASH_CALIBRATION_TABLE") != nullptr; }

TEST(Calibration, DefaultCostParamsAgainstTheH200) {
  const Score s = score(CostModel::for_shape(64, 64, 64), CostModel::for_shape(128, 64, 64), print_table());
  print_score("calibrated defaults (async)", s);
  // Before this calibration: the sync model with the first-guess rates.
  CostParams before;
  before.per_sm_tflops = 3.0;
  before.compute_overhead_us = 0.0;
  before.reduce_gbytes_per_s = 64.0;
  before.reduce_latency_us = 1.0;
  before.async_reduce = false;
  print_score("before (sync, first-guess rates)",
              score(CostModel::for_shape(64, 64, 64, before), CostModel::for_shape(128, 64, 64, before), false));
  before.async_reduce = true;
  print_score("async, first-guess rates",
              score(CostModel::for_shape(64, 64, 64, before), CostModel::for_shape(128, 64, 64, before), false));
  CostParams sync;
  sync.async_reduce = false;
  print_score("calibrated rates, sync reduce",
              score(CostModel::for_shape(64, 64, 64, sync), CostModel::for_shape(128, 64, 64, sync), false));
  // Atomic is the compute fit: within 10% on every shape on average.
  EXPECT_LT(s.atomic_err, 0.10);
  // The model puts the measured best deterministic schedule in its top 2 on most shapes (6 of
  // the 7 ranked shapes when calibrated; hdim 64 causal 8192 is the miss: descending, spt and
  // shift are within 0.2% in the model), and orders most pairs of schedules that the GPU
  // separates by more than 3% (39 of 44).
  EXPECT_GE(s.best_top2, s.shapes - 2) << "of " << s.shapes;
  EXPECT_GE(s.pairs_sig_ok, 0.8 * s.pairs_sig) << "of " << s.pairs_sig;
}

TEST(Calibration, DISABLED_FitCostParams) {
  // Grid search: compute rates from atomic, then the reduce (bandwidth, latency) from the
  // deterministic schedules' ratios to atomic. Slow (minutes); prints the best candidates.
  CostParams best = CostParams{};
  double best_err = std::numeric_limits<double>::infinity();
  for (double tf : {1.4, 1.6, 1.8, 2.0, 2.2, 2.6})
    for (double ov : {0.0, 0.5, 1.0, 1.5, 2.0}) {
      CostParams p;
      p.per_sm_tflops = tf;
      p.compute_overhead_us = ov;
      p.reduce_gbytes_per_s = 1e6;
      p.reduce_latency_us = 0.0;
      const Score s = score(CostModel::for_shape(64, 64, 64, p), CostModel::for_shape(128, 64, 64, p), false);
      if (s.atomic_err < best_err) { best_err = s.atomic_err; best = p; }
    }
  std::printf("compute fit: per_sm_tflops %.2f, compute_overhead_us %.2f (atomic error %.1f%%)\n",
              best.per_sm_tflops, best.compute_overhead_us, 100 * best_err);
  std::vector<std::pair<double, CostParams>> cands;
  for (int buffers : {2, 3})
    for (double bw : {8.0, 16.0, 32.0, 64.0, 1e6})
      for (double lat : {0.0, 1.0, 2.0, 3.0, 4.0, 6.0}) {
        CostParams p = best;
        p.reduce_gbytes_per_s = bw;
        p.reduce_latency_us = lat;
        p.stage_buffers = buffers;
        const Score s = score(CostModel::for_shape(64, 64, 64, p), CostModel::for_shape(128, 64, 64, p), false);
        std::printf("buffers %d bw %6g lat %4.1f: r64 %.2f r128 %.2f  ", buffers, bw, lat,
                    CostModel::for_shape(64, 64, 64, p).r, CostModel::for_shape(128, 64, 64, p).r);
        print_score("", s);
        cands.push_back({s.ratio_err, p});
      }
  std::sort(cands.begin(), cands.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t k = 0; k < std::min<size_t>(5, cands.size()); ++k)
    std::printf("best %zu: ratio err %.3f bw %g lat %g buffers %d\n", k, cands[k].first,
                cands[k].second.reduce_gbytes_per_s, cands[k].second.reduce_latency_us, cands[k].second.stage_buffers);
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
