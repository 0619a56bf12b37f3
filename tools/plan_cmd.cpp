#include "plan_cmd.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "dash_attn/schedule.h"
#include "schedule/cost_model.h"
#include "schedule/gantt.h"
#include "schedule/planner.h"
#include "schedule/simulator.h"

namespace {

using dash::CostModel;
using dash::Dispatch;
using dash::Schedule;
using dash::TileProblem;
namespace plan = dash::plan;

struct Options {
  int batch = 2, heads = 32, kv_heads = 8, seqlen = 8192, seqlen_k = -1, hdim = 128, sms = 132;
  int block_m = 64, block_n = 128, q_tiles = 16, kv_tiles = 16;  // the sm90 backward's tiles
  int causal = -1;  // -1: the cost model's default (causal for default, full for unit)
  int async_reduce = -1;  // -1: the cost model's default (async for default, sync for unit)
  int stage_buffers = -1;  // -1: the cost model's (CostParams::for_tiles: 2 for 64x64, 1 for 64x128)
  int head_block = 0;      // --head-block: 0, the default task order (ScheduleModel::default_head_block)
  bool head_blocks = false;  // --head-blocks: the time per head block of each schedule
  bool l2 = false;           // --l2: the fitted L2 working-set term (kSm90L2Term)
  bool unit = false, json = false, schedule_given = false;
  bool batch_given = false, heads_given = false, kv_heads_given = false, sms_given = false;
  bool tiles_given = false;
  double c = -1, r = -1;
  Dispatch dispatch = Dispatch::kDynamic;
  Schedule schedule = Schedule::kAuto;
  std::string gantt;
  std::vector<std::pair<std::string, double>> params;  // --param NAME=VALUE, in order
};

struct UsageError {
  std::string msg;
};

int parse_int(const std::string& flag, const char* v, int lo) {
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(v, &end, 10);
  if (errno != 0 || end == v || *end != '\0' || x < lo || x > (1L << 30))
    throw UsageError{flag + " expects an integer >= " + std::to_string(lo) + ", got '" + v + "'"};
  return static_cast<int>(x);
}

double parse_double(const std::string& flag, const char* v) {
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(v, &end);
  if (errno != 0 || end == v || *end != '\0' || !(x >= 0) || !std::isfinite(x))
    throw UsageError{flag + " expects a non-negative number, got '" + v + "'"};
  return x;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int k = 0; k < argc; ++k) {
    std::string flag = argv[k];
    const char* inline_value = nullptr;
    std::string inline_store;
    if (const auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_store = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      inline_value = inline_store.c_str();
    }
    auto value = [&]() -> const char* {
      if (inline_value != nullptr) return inline_value;
      if (k + 1 >= argc) throw UsageError{flag + " needs a value"};
      return argv[++k];
    };
    auto boolean = [&]() {
      if (inline_value != nullptr) throw UsageError{flag + " takes no value"};
    };
    if (flag == "--batch") { o.batch = parse_int(flag, value(), 1); o.batch_given = true; }
    else if (flag == "--heads") { o.heads = parse_int(flag, value(), 1); o.heads_given = true; }
    else if (flag == "--kv-heads") { o.kv_heads = parse_int(flag, value(), 1); o.kv_heads_given = true; }
    else if (flag == "--seqlen") o.seqlen = parse_int(flag, value(), 1);
    else if (flag == "--seqlen-k") o.seqlen_k = parse_int(flag, value(), 1);
    else if (flag == "--hdim") o.hdim = parse_int(flag, value(), 1);
    else if (flag == "--sms") { o.sms = parse_int(flag, value(), 1); o.sms_given = true; }
    else if (flag == "--block-m") o.block_m = parse_int(flag, value(), 1);
    else if (flag == "--block-n") o.block_n = parse_int(flag, value(), 1);
    else if (flag == "--q-tiles") { o.q_tiles = parse_int(flag, value(), 1); o.tiles_given = true; }
    else if (flag == "--kv-tiles") { o.kv_tiles = parse_int(flag, value(), 1); o.tiles_given = true; }
    else if (flag == "--c") o.c = parse_double(flag, value());
    else if (flag == "--r") o.r = parse_double(flag, value());
    else if (flag == "--causal") { boolean(); o.causal = 1; }
    else if (flag == "--full" || flag == "--no-causal") { boolean(); o.causal = 0; }
    else if (flag == "--json") { boolean(); o.json = true; }
    else if (flag == "--stage-buffers") o.stage_buffers = parse_int(flag, value(), 1);
    else if (flag == "--head-block") o.head_block = parse_int(flag, value(), 1);
    else if (flag == "--head-blocks") { boolean(); o.head_blocks = true; }
    else if (flag == "--l2") { boolean(); o.l2 = true; }
    else if (flag == "--reduce") {
      const std::string v = value();
      if (v == "async") o.async_reduce = 1;
      else if (v == "sync") o.async_reduce = 0;
      else throw UsageError{"--reduce expects async or sync, got '" + v + "'"};
    }
    else if (flag == "--gantt") o.gantt = value();
    else if (flag == "--param") {
      const std::string v = value();
      const auto eq = v.find('=');
      if (eq == std::string::npos || eq == 0)
        throw UsageError{"--param expects NAME=VALUE (a CostParams field), got '" + v + "'"};
      const std::string name = v.substr(0, eq);
      o.params.emplace_back(name, parse_double("--param " + name, v.c_str() + eq + 1));
    }
    else if (flag == "--dispatch") {
      const char* v = value();
      if (!dash::parse_dispatch(v, &o.dispatch))
        throw UsageError{std::string("--dispatch expects static or dynamic, got '") + v + "'"};
    } else if (flag == "--schedule") {
      const char* v = value();
      if (!dash::parse_schedule(v, &o.schedule))
        throw UsageError{std::string("--schedule expects ascending, spt, descending, shift, "
                                     "symmetric_shift, atomic or auto, got '") + v + "'"};
      o.schedule_given = o.schedule != Schedule::kAuto;
    } else if (flag == "--cost-model") {
      const std::string v = value();
      if (v == "unit") o.unit = true;
      else if (v == "default") o.unit = false;
      else throw UsageError{"--cost-model expects default or unit, got '" + v + "'"};
    } else {
      throw UsageError{"unknown flag '" + std::string(argv[k]) + "'"};
    }
  }
  if (o.tiles_given && !o.unit) throw UsageError{"--q-tiles/--kv-tiles need --cost-model unit"};
  if ((!o.params.empty() || o.l2) && o.unit) throw UsageError{"--param and --l2 need --cost-model default"};
  if (o.heads % o.kv_heads != 0)
    throw UsageError{"--heads (" + std::to_string(o.heads) + ") must be a multiple of --kv-heads (" +
                     std::to_string(o.kv_heads) + ")"};
  return o;
}

void print_json(const std::vector<plan::PlanRow>& rows, Schedule rec, const CostModel& cost) {
  auto number = [](double v) {
    if (!std::isfinite(v)) return std::string("null");
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.10g", v);
    return std::string(buf);
  };
  std::printf("[\n");
  for (size_t k = 0; k < rows.size(); ++k) {
    const plan::PlanRow& r = rows[k];
    std::printf(
        "  {\"schedule\": \"%s\", \"resolved\": \"%s\", \"dispatch\": \"%s\", \"makespan\": %s, "
        "\"lower_bound\": %s, \"efficiency\": %s, \"stall_share\": %s, \"idle_share\": %s, "
        "\"critical_path\": %s, \"min_coresident\": %d, \"num_tasks\": %d, \"feasible\": %s, "
        "\"deterministic\": %s, \"recommended\": %s, \"reduce_model\": \"%s\", \"c\": %s, \"r\": %s, \"head_block\": %d}%s\n",
        dash::schedule_name(r.schedule), dash::schedule_name(r.resolved), dash::dispatch_name(r.dispatch),
        number(r.makespan).c_str(), number(r.lower_bound).c_str(), number(r.efficiency).c_str(),
        number(r.stall_share).c_str(), number(r.idle_share).c_str(), number(r.critical_path).c_str(),
        r.min_coresident, r.num_tasks, r.feasible ? "true" : "false", r.deterministic ? "true" : "false",
        r.schedule == rec && r.deterministic ? "true" : "false", cost.async_reduce ? "async" : "sync",
        number(cost.c).c_str(), number(cost.r).c_str(), r.head_block, k + 1 < rows.size() ? "," : "");
  }
  std::printf("]\n");
}

// Sets one field of the calibrated rates by name (--param): the fitting script
// (scripts/fit_planner.py) scores candidate sets through the CLI with it.
void set_param(dash::CostParams& cp, const std::string& name, double v) {
  auto integer = [&]() {
    if (v != std::floor(v)) throw UsageError{"--param " + name + " expects an integer"};
    return static_cast<int>(v);
  };
  if (name == "per_sm_tflops") {
    if (!(v > 0)) throw UsageError{"--param per_sm_tflops must be positive"};
    cp.per_sm_tflops = v;
  } else if (name == "compute_overhead_us") cp.compute_overhead_us = v;
  else if (name == "reduce_gbytes_per_s") {
    if (!(v > 0)) throw UsageError{"--param reduce_gbytes_per_s must be positive"};
    cp.reduce_gbytes_per_s = v;
  } else if (name == "reduce_latency_us") cp.reduce_latency_us = v;
  else if (name == "async_reduce") cp.async_reduce = integer() != 0;
  else if (name == "stage_buffers") cp.stage_buffers = std::max(1, integer());
  else if (name == "task_overhead_us") cp.task_overhead_us = v;
  else if (name == "order_penalty_base") cp.order_penalty_base = v;
  else if (name == "order_penalty_slope") cp.order_penalty_slope = v;
  else if (name == "order_penalty_knee") cp.order_penalty_knee = v;
  else if (name == "order_penalty_closed") cp.order_penalty_closed = v;
  else if (name == "order_penalty_closed_sym") cp.order_penalty_closed_sym = v;
  else if (name == "order_penalty_closed_hd64") cp.order_penalty_closed_hd64 = v;
  else if (name == "atomic_skips_latency") cp.atomic_skips_latency = integer() != 0;
  else if (name == "post_gbytes_per_s") {
    if (!(v >= 0)) throw UsageError{"--param post_gbytes_per_s must be >= 0 (0: no postprocess)"};
    cp.post_gbytes_per_s = v;
  } else if (name == "post_poll") cp.post_poll = integer() != 0;
  else if (name == "shift_full_tiles_hd128") {
    const int t = integer();
    if (t < 0) throw UsageError{"--param shift_full_tiles_hd128 must be >= 0 (0: no such rule)"};
    cp.shift_full_tiles_hd128 = t;
  }
  else if (name == "shift_full_tiles_hd64") {
    const int t = integer();
    if (t < 0) throw UsageError{"--param shift_full_tiles_hd64 must be >= 0 (0: no such rule)"};
    cp.shift_full_tiles_hd64 = t;
  }
  else if (name == "post_blocks_per_sm") cp.post_blocks_per_sm = std::max(1, integer());
  else if (name == "last_wave_split") cp.last_wave_split = integer() != 0;
  else if (name == "group_take") cp.group_take = integer() != 0;
  else if (name == "l2_mbytes") cp.l2_mbytes = v;
  else if (name == "l2_penalty") cp.l2_penalty = v;
  else if (name == "l2_knee") cp.l2_knee = v;
  else
    throw UsageError{"--param: unknown field '" + name +
                     "' (per_sm_tflops compute_overhead_us reduce_gbytes_per_s reduce_latency_us async_reduce "
                     "stage_buffers task_overhead_us order_penalty_base order_penalty_slope order_penalty_knee "
                     "order_penalty_closed order_penalty_closed_sym order_penalty_closed_hd64 atomic_skips_latency "
                     "post_gbytes_per_s post_poll post_blocks_per_sm shift_full_tiles_hd128 shift_full_tiles_hd64 "
                     "last_wave_split group_take l2_mbytes l2_penalty l2_knee)"};
}

std::string shape_line(const Options& o, const TileProblem& p) {
  char buf[400];
  if (o.unit)
    std::snprintf(buf, sizeof buf, "unit model: %d Q tiles x %d KV tiles, %d head(s), %s mask, %d SMs",
                  p.m_tiles(), p.n_tiles(), p.batch * p.heads_q, p.causal ? "causal" : "full", o.sms);
  else
    std::snprintf(buf, sizeof buf,
                  "batch %d, heads %d (kv %d), seqlen %d x %d, hdim %d, %s, tiles %dx%d "
                  "(%d Q x %d KV per head), %d SMs",
                  p.batch, p.heads_q, p.heads_kv, p.seqlen_q, p.seqlen_k, o.hdim,
                  p.causal ? "causal" : "full", p.block_m, p.block_n, p.m_tiles(), p.n_tiles(), o.sms);
  return buf;
}

void print_table(const Options& o, const TileProblem& p, const CostModel& cost,
                 const std::vector<plan::PlanRow>& rows, Schedule rec) {
  const char* unit = o.unit ? "" : " us";
  std::printf("dash-attn plan: %s, %s dispatch\n", shape_line(o, p).c_str(), dash::dispatch_name(o.dispatch));
  std::printf("cost model %s: c = %.4g%s per tile pair (compute), r = %.4g%s per ordered dQ reduce\n",
              cost.name.c_str(), cost.c, unit, cost.r, unit);
  std::printf("reduce model: %s\n", cost.reduce_model().c_str());
  if (cost.post_gbytes_per_s > 0.0 && cost.head_dim > 0)
    std::printf("postprocess: %g GB/s, in the times; %s\n", cost.post_gbytes_per_s,
                cost.post_poll ? "polling for the deterministic schedules (it fills the main kernel's tail), "
                                 "after the main kernel for atomic"
                               : "after the main kernel");
  std::printf("\n");
  double asc = 0.0;
  for (const auto& r : rows)
    if (r.schedule == Schedule::kAscending) asc = r.makespan;
  std::printf("%-16s %13s %10s %11s %7s %7s %13s %8s %6s\n", "schedule", o.unit ? "time" : "time (us)",
              "vs ascend", "efficiency", "stalls", "idle", "crit. path", "min CTAs", "tasks");
  for (const auto& r : rows) {
    std::string name = dash::schedule_name(r.schedule);
    if (!r.deterministic) name += "*";
    if (r.resolved != r.schedule) name += "=";
    if (!r.feasible) {
      std::printf("%-16s %13s %10s %11s %7s %7s %13.6g %8d %6d  needs %d co-resident CTAs\n", name.c_str(),
                  "infeasible", "-", "-", "-", "-", r.critical_path, r.min_coresident, r.num_tasks,
                  r.min_coresident);
      continue;
    }
    std::printf("%-16s %13.6g %9.3fx %10.1f%% %6.1f%% %6.1f%% %13.6g %8d %6d%s\n", name.c_str(), r.makespan,
                asc / r.makespan, 100.0 * r.efficiency, 100.0 * r.stall_share, 100.0 * r.idle_share,
                r.critical_path, r.min_coresident, r.num_tasks, r.schedule == rec ? "  <- recommended" : "");
  }
  if (cost.async_reduce)
    std::printf("\nefficiency = lower bound (compute / SMs; the reduces run on the writer warp) / time;\n"
                "stalls = MMA time spent waiting for a dQ stage buffer (the writer waits for the semaphore);\n"
                "idle = SM time with no compute left. * non-deterministic (the speed ceiling).\n");
  else
    std::printf("\nefficiency = lower bound (work / SMs) / time; stalls = SM time spent waiting for the dQ\n"
                "semaphore; idle = SM time with no task left. * non-deterministic (the speed ceiling).\n");
  for (const auto& r : rows)
    if (r.resolved != r.schedule) {
      std::printf("= %s resolves to %s on a full mask.\n", dash::schedule_name(r.schedule),
                  dash::schedule_name(r.resolved));
      break;
    }
  if (o.dispatch == Dispatch::kStatic && p.causal)
    std::printf("static dispatch: CTA p runs tasks p, p+P, ...; with a causal mask the short KV tiles leave\n"
                "their SMs idle while the long ones finish (see the idle column).\n");

  const plan::PlanRow* best = nullptr;
  const plan::PlanRow* fastest_other = nullptr;
  for (const auto& r : rows) {
    if (r.schedule == rec) best = &r;
  }
  for (const auto& r : rows)
    if (r.deterministic && r.feasible && r.schedule != rec &&
        (fastest_other == nullptr || r.makespan < fastest_other->makespan))
      fastest_other = &r;
  if (best == nullptr) return;
  std::printf("\nrecommended: %s", dash::schedule_name(rec));
  const Schedule model_pick = plan::recommend_from(rows);
  const plan::PlanRow* model_row = nullptr;
  for (const auto& r : rows)
    if (r.schedule == model_pick) model_row = &r;
  const bool shift128 = !p.causal && rec == Schedule::kShift && cost.head_dim == 128;
  const bool few_tasks = rec == Schedule::kShift && plan::few_tasks_shift_rule_applies(p, cost.last_wave_split);
  if (!o.schedule_given && rec != model_pick && model_row != nullptr && few_tasks)
    std::printf(" (measured rule: with fewer KV tasks than %d SMs ascending, descending and spt run in\n"
                "pieces (the last-wave split) and shift does not; the model overrates the pieces and has shift\n"
                "%.1f%% behind %s; docs/schedules.md \"Fewer tasks than SMs: the split\")",
                dash::kLastWaveSms, 100.0 * (best->makespan / model_row->makespan - 1.0), dash::schedule_name(model_pick));
  else if (!o.schedule_given && rec != model_pick && model_row != nullptr && shift128)
    std::printf(" (measured rule: on full masks of >= %d KV tiles at head_dim 128 shift runs the 80-row\n"
                "kernel with two dQ staging buffers, which the model's 64-row tiles do not have; it has shift\n"
                "%.1f%% behind %s; docs/schedules.md \"Long full masks at head_dim 128: the two-buffer shift\")",
                cost.shift_full_tiles_hd128, 100.0 * (best->makespan / model_row->makespan - 1.0),
                dash::schedule_name(model_pick));
  else if (!o.schedule_given && rec != model_pick && model_row != nullptr)
    std::printf(" (measured rule: on %s masks of %s %d KV tiles of >= 128 keys%s %s runs faster on Hopper\n"
                "than the model says; the model has it %.1f%% behind %s; docs/schedules.md \"%s\")",
                p.causal ? "causal" : "full", p.causal ? "<=" : ">=",
                p.causal ? plan::spt_short_causal_tiles(cost.post_poll)
                         : rec == Schedule::kShift ? cost.shift_full_tiles_hd64 : plan::kSptLongFullTiles,
                rec == Schedule::kShift ? " at head_dim 64" : "", dash::schedule_name(rec),
                100.0 * (best->makespan / model_row->makespan - 1.0), dash::schedule_name(model_pick),
                p.causal ? "Short causal masks" : "Long full masks");
  else if (fastest_other != nullptr && fastest_other->makespan < best->makespan)
    std::printf(" (within %.0f%% of %s, and simpler: ties go to the schedule with less state)",
                100.0 * plan::kTieTolerance, dash::schedule_name(fastest_other->schedule));
  else
    std::printf(" (fastest deterministic schedule: %.3fx ascending, %.1f%% of the lower bound%s)",
                asc / best->makespan, 100.0 * best->efficiency,
                fastest_other != nullptr && fastest_other->makespan <= best->makespan * (1 + plan::kTieTolerance)
                    ? "; ties go to the simpler schedule"
                    : "");
  std::printf("\n");
}

// --head-blocks: the predicted time of each schedule that takes its tasks in head blocks (group
// width 1) for several head blocks, as DASH_HEAD_BLOCK sets them, against its default block.
void print_head_blocks(const Options& o, const TileProblem& p, const CostModel& cost) {
  const int H = p.num_heads();
  std::vector<int> blocks;
  for (int b : {1, 2, 4, 8, 16, 32, 64})
    if (b <= H) blocks.push_back(b);
  if (blocks.back() != H && H < 64) blocks.push_back(H);
  std::printf("\npredicted time per head block (%s; heads taken in blocks of B, interleaved inside a block;\n"
              "ratio: the default block's time / B's, > 1 where B is faster)\n",
              cost.l2_term() ? "with the L2 working-set term; L2: its factor on c and r"
                  : "no L2 term in this cost model: the head block only moves the task order");
  std::printf("%-12s %8s", "schedule", "default");
  for (int b : blocks) std::printf(" %14s", ("B=" + std::to_string(b)).c_str());
  std::printf("\n");
  for (Schedule s : {Schedule::kAscending, Schedule::kDescending, Schedule::kSpt, Schedule::kAtomic}) {
    const plan::PlanRow def = plan::plan_one(p, s, cost, o.sms, o.dispatch, 0);
    std::vector<plan::PlanRow> rows;
    for (int b : blocks) rows.push_back(plan::plan_one(p, s, cost, o.sms, o.dispatch, b));
    std::printf("%-12s %8d", dash::schedule_name(s), def.head_block);
    for (const plan::PlanRow& r : rows) {
      char cell[40];
      if (!r.feasible) std::snprintf(cell, sizeof cell, "infeasible");
      else std::snprintf(cell, sizeof cell, "%.6g %.3f", r.makespan, def.makespan / r.makespan);
      std::printf(" %14s", cell);
    }
    std::printf("\n");
    if (cost.l2_term()) {
      std::printf("%-12s %8s", "  L2", "");
      for (const plan::PlanRow& r : rows) std::printf(" %14.4f", r.l2_factor);
      std::printf("\n");
    }
  }
}

}  // namespace

void plan_usage() {
  std::printf(
      "usage: dash-attn plan [flags]\n"
      "Simulates every backward schedule on a persistent grid and recommends the fastest\n"
      "deterministic one (the DAG model of docs/schedules.md).\n\n"
      "problem (defaults: a LLaMA-like 16k-token batch on an H100/H200):\n"
      "  --batch N           batch size (2)\n"
      "  --heads N           query heads (32)\n"
      "  --kv-heads N        key/value heads, GQA when < heads (8)\n"
      "  --seqlen N          query length (8192)\n"
      "  --seqlen-k N        key length (= seqlen)\n"
      "  --hdim N            head dimension (128)\n"
      "  --causal | --full   mask (causal; the unit model defaults to full)\n"
      "  --block-m N         query rows per Q tile (64)\n"
      "  --block-n N         keys per KV tile (128: the sm90 backward, the default on Hopper; 64: the\n"
      "                      mma.sync backward, DASH_BWD_SM90=0 or not sm_90)\n"
      "grid:\n"
      "  --sms N             persistent CTAs, one per SM (132; unit model: KV tiles)\n"
      "  --dispatch D        dynamic (atomic task counter) or static (CTA p takes p, p+P, ...) (dynamic)\n"
      "  --schedule S        only this schedule: ascending spt descending shift symmetric_shift atomic\n"
      "  --head-block N      take the tasks in blocks of N heads (what DASH_HEAD_BLOCK=N does to the\n"
      "                      kernels; shift and symmetric shift stay head-major) instead of the default\n"
      "                      order (ScheduleModel::default_head_block); the recommendation is unchanged by\n"
      "                      default\n"
      "  --head-blocks       also print each interleavable schedule's time for head blocks 1-64\n"
      "  --l2                add the fitted L2 working-set term (kSm90L2Term: the head block's effect,\n"
      "                      fitted on the H100 head-block A/B; off by default), before any --param\n"
      "cost model:\n"
      "  --cost-model M      default (c, r from hdim and tiles, in us; the rates calibrated for\n"
      "                      the kernel with these tiles: sm90 for 64x128 and 80x128, sm80 otherwise) or unit\n"
      "  --c C, --r R        override the compute / reduce cost of one tile pair (unit: 1, 0.25)\n"
      "  --reduce M          async (dQ writer warp, the default model) or sync (the reduce holds\n"
      "                      its SM: the spec's model, the unit model's default)\n"
      "  --param NAME=VALUE  override one field of the calibrated rates (CostParams in\n"
      "                      src/schedule/cost_model.h: per_sm_tflops, compute_overhead_us,\n"
      "                      reduce_gbytes_per_s, reduce_latency_us, task_overhead_us,\n"
      "                      order_penalty_base/slope/knee, stage_buffers, atomic_skips_latency,\n"
      "                      async_reduce, post_gbytes_per_s (0: no postprocess), post_poll,\n"
      "                      post_blocks_per_sm, shift_full_tiles_hd128, shift_full_tiles_hd64,\n"
      "                      last_wave_split, l2_mbytes / l2_penalty / l2_knee (the L2 working-set\n"
      "                      term that makes the head block matter; see --l2),\n"
      "                      group_take); repeatable. scripts/fit_planner.py uses it\n"
      "  --stage-buffers N   async: dQ stage buffers between the MMA warps and the writer (the\n"
      "                      calibrated value: 2 for the sm80 tiles and for 64x128; unit: 2)\n"
      "  --q-tiles N         unit model: Q tiles of the single head (16)\n"
      "  --kv-tiles N        unit model: KV tiles of the single head (16)\n"
      "output:\n"
      "  --json              JSON array, one object per schedule\n"
      "  --gantt FILE.svg    Gantt chart of the simulated grid, one panel per schedule\n");
}

int plan_main(int argc, char** argv) {
  for (int k = 0; k < argc; ++k)
    if (std::strcmp(argv[k], "--help") == 0 || std::strcmp(argv[k], "-h") == 0) {
      plan_usage();
      return 0;
    }
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "dash-attn plan: %s (see dash-attn plan --help)\n", e.msg.c_str());
    return 2;
  }

  TileProblem p;
  CostModel cost;
  if (o.unit) {
    // Block 1 so that the tile counts are the sequence lengths.
    p.batch = o.batch_given ? o.batch : 1;
    p.heads_q = o.heads_given ? o.heads : 1;
    p.heads_kv = o.kv_heads_given ? o.kv_heads : (o.heads_given ? o.heads : 1);
    if (p.heads_q % p.heads_kv != 0) {
      std::fprintf(stderr, "dash-attn plan: --heads must be a multiple of --kv-heads\n");
      return 2;
    }
    p.seqlen_q = o.q_tiles;
    p.seqlen_k = o.kv_tiles;
    p.block_m = p.block_n = 1;
    p.causal = o.causal == 1;
    if (!o.sms_given) o.sms = o.kv_tiles;
    cost = CostModel::unit(o.c >= 0 ? o.c : 1.0, o.r >= 0 ? o.r : 0.25);
    cost.async_reduce = o.async_reduce == 1;
  } else {
    p.batch = o.batch;
    p.heads_q = o.heads;
    p.heads_kv = o.kv_heads;
    p.seqlen_q = o.seqlen;
    p.seqlen_k = o.seqlen_k > 0 ? o.seqlen_k : o.seqlen;
    p.block_m = o.block_m;
    p.block_n = o.block_n;
    p.causal = o.causal != 0;
    // The calibrated rates of the kernel with these tiles (64x128: sm90, otherwise sm80), with
    // the --param overrides.
    dash::CostParams cp = dash::CostParams::for_tiles(o.block_m, o.block_n);
    if (o.l2) cp = dash::with_l2_term(cp);
    try {
      for (const auto& [name, v] : o.params) set_param(cp, name, v);
    } catch (const UsageError& e) {
      std::fprintf(stderr, "dash-attn plan: %s (see dash-attn plan --help)\n", e.msg.c_str());
      return 2;
    }
    cost = CostModel::for_shape(o.hdim, o.block_m, o.block_n, cp);
    if (o.l2) cost.name = "default + L2 term (--l2)";
    if (!o.params.empty()) cost.name = o.l2 ? "default + L2 term (--l2, --param)" : "default (--param)";
    if (o.c >= 0) cost.c = o.c;
    if (o.r >= 0) cost.r = o.r;
    if (o.c >= 0 || o.r >= 0) cost.name = "default (overridden)";
    if (o.async_reduce >= 0) cost.async_reduce = o.async_reduce == 1;
  }

  if (o.stage_buffers > 0) cost.stage_buffers = o.stage_buffers;
  std::vector<plan::PlanRow> rows;
  if (o.schedule_given) rows.push_back(plan::plan_one(p, o.schedule, cost, o.sms, o.dispatch, o.head_block));
  else rows = plan::plan_all(p, cost, o.sms, o.dispatch, o.head_block);
  const Schedule rec = o.schedule_given ? o.schedule : plan::recommend_from(rows, p, cost, o.sms);

  if (o.json) print_json(rows, rec, cost);
  else print_table(o, p, cost, rows, rec);
  if (o.head_blocks && !o.json) print_head_blocks(o, p, cost);

  if (!o.gantt.empty()) {
    dash::GanttOptions gopt;
    char costs[160];
    std::snprintf(costs, sizeof costs, "; cost model %s: c = %.4g, r = %.4g, %s reduce", cost.name.c_str(), cost.c,
                  cost.r, cost.async_reduce ? "async" : "sync");
    gopt.title = std::string("dash-attn plan: simulated backward schedules, ") + dash::dispatch_name(o.dispatch) +
                 " dispatch";
    gopt.subtitle = shape_line(o, p) + costs;
    gopt.time_unit = o.unit ? "cost units" : "us";
    std::vector<dash::SimResult> sims;
    sims.reserve(rows.size());
    std::vector<dash::GanttPanel> panels;
    for (const auto& r : rows) {
      if (!r.feasible || r.resolved != r.schedule) continue;
      const dash::ScheduleModel sm = plan::planned_model(p, r.schedule, cost, o.head_block);
      sims.push_back(dash::simulate(sm, cost, o.sms, o.dispatch, true,
                                    gopt.max_rows));
      char title[300];
      std::snprintf(title, sizeof title,
                    "%s%s: makespan %.5g, lower bound %.5g, efficiency %.1f%%, stalls %.1f%%, idle %.1f%%",
                    dash::schedule_name(r.schedule), r.deterministic ? "" : " (non-deterministic)", r.makespan,
                    r.lower_bound, 100.0 * r.efficiency, 100.0 * r.stall_share, 100.0 * r.idle_share);
      panels.push_back(dash::GanttPanel{title, &sims.back()});
    }
    if (!dash::write_gantt_svg(o.gantt, panels, gopt)) {
      std::fprintf(stderr, "dash-attn plan: cannot write %s: %s\n", o.gantt.c_str(), std::strerror(errno));
      return 1;
    }
    if (!o.json) std::printf("wrote %s (%zu panels)\n", o.gantt.c_str(), panels.size());
  }
  return 0;
}
