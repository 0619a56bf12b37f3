#include "schedule/planner.h"

#include <limits>

#include "schedule/dag.h"

namespace dash::plan {

namespace {

// Lower is preferred on ties: descending first (robust, low register pressure), then by how
// much state the schedule needs.
int simplicity(Schedule s) {
  switch (s) {
    case Schedule::kDescending: return 0;
    case Schedule::kAscending: return 1;
    case Schedule::kSpt: return 2;
    case Schedule::kShift: return 3;
    case Schedule::kSymmetricShift: return 4;
    default: return 5;
  }
}

}  // namespace

ScheduleModel planned_model(const TileProblem& prob, Schedule s, const CostModel& cost, int head_block) {
  ScheduleModel sm = ScheduleModel::make(prob, s);
  if (head_block > 0) sm = sm.with_head_block(head_block);
  if (cost.last_wave_split) sm = sm.with_last_wave_split();  // (the sm90 kernels' default)
  return sm;
}

PlanRow plan_one(const TileProblem& prob, Schedule s, const CostModel& cost, int num_sms,
                 Dispatch dispatch, int head_block) {
  const ScheduleModel sm = planned_model(prob, s, cost, head_block);
  PlanRow row;
  row.schedule = s;
  row.resolved = sm.schedule;
  row.dispatch = dispatch;
  row.min_coresident = sm.min_coresident();
  row.num_tasks = sm.num_tasks();
  row.head_block = sm.head_block;
  row.l2_factor = cost.l2_factor(sm, num_sms);
  row.deterministic = sm.deterministic();
  row.critical_path = critical_path_length(sm, cost);
  row.feasible = sm.min_coresident() <= num_sms;
  const SimResult sim = simulate(sm, cost, num_sms, dispatch);
  row.lower_bound = sim.lower_bound;
  if (!row.feasible || !sim.ok) {
    row.feasible = false;
    row.makespan = std::numeric_limits<double>::infinity();
    return row;
  }
  row.makespan = sim.makespan;
  row.efficiency = sim.efficiency();
  row.stall_share = sim.stall_share();
  row.idle_share = sim.idle_share();
  return row;
}

std::vector<PlanRow> plan_all(const TileProblem& prob, const CostModel& cost, int num_sms,
                              Dispatch dispatch, int head_block) {
  std::vector<PlanRow> rows;
  for (int k = 0; k < kNumConcreteSchedules; ++k)
    rows.push_back(plan_one(prob, static_cast<Schedule>(k), cost, num_sms, dispatch, head_block));
  return rows;
}

Schedule recommend_from(const std::vector<PlanRow>& rows) {
  double best = std::numeric_limits<double>::infinity();
  for (const PlanRow& r : rows)
    if (r.feasible && r.deterministic && r.makespan < best) best = r.makespan;
  Schedule pick = Schedule::kDescending;
  int pick_rank = 1 << 30;
  for (const PlanRow& r : rows) {
    if (!r.feasible || !r.deterministic || r.makespan > best * (1.0 + kTieTolerance)) continue;
    if (simplicity(r.schedule) < pick_rank) {
      pick = r.schedule;
      pick_rank = simplicity(r.schedule);
    }
  }
  return pick;
}

Schedule measured_rule_schedule(const TileProblem& prob, int head_dim, bool post_poll, int shift_full_tiles_hd128,
                                int num_sms, int shift_full_tiles_hd64) {
  if (prob.block_n < 128) return Schedule::kAuto;
  if (prob.causal) {
    if (prob.n_tiles() > spt_short_causal_tiles(post_poll)) return Schedule::kAuto;
    // KV tasks that do not fill the grid (one wave or less: GQA or few heads at short lengths).
    if (num_sms > 0 && (long long)prob.num_heads() * prob.n_tiles() < num_sms) return Schedule::kAuto;
    return Schedule::kSpt;
  }
  if (head_dim == 128 && shift_full_tiles_hd128 > 0 && prob.n_tiles() >= shift_full_tiles_hd128) return Schedule::kShift;
  if (head_dim == 128 && prob.n_tiles() >= kAscendingFullTilesHd128 && prob.n_tiles() < kAscendingFullTilesHd128End)
    return Schedule::kAscending;
  if (head_dim == kShiftLongFullHeadDim && shift_full_tiles_hd64 > 0 && prob.n_tiles() >= shift_full_tiles_hd64)
    return Schedule::kShift;
  if (prob.n_tiles() < kSptLongFullTiles) return Schedule::kAuto;
  return Schedule::kSpt;
}

Schedule recommend_from(const std::vector<PlanRow>& rows, const TileProblem& prob, int head_dim, bool post_poll,
                        int shift_full_tiles_hd128, int num_sms, bool split, int shift_full_tiles_hd64) {
  const Schedule pick = recommend_from(rows);
  auto model_ms = [&rows](Schedule s) {
    for (const PlanRow& r : rows)
      if (r.feasible && r.deterministic && r.schedule == s) return r.makespan;
    return std::numeric_limits<double>::infinity();
  };
  // The few-task shift rule (kShiftFewTasksModelGap): the ordered schedules run split, shift whole.
  if (few_tasks_shift_rule_applies(prob, split) &&
      model_ms(Schedule::kShift) <= model_ms(pick) * (1.0 + kShiftFewTasksModelGap))
    return Schedule::kShift;
  // The measured rules' schedules in order, each with the tolerance within which the model must
  // have it: the head_dim 128 two-buffer shift rule first (where it applies: the rule with it
  // differs from the one without), then the older rule (the head_dim 64 shift rule with its own
  // tolerance, kShiftLongFullModelGap; spt's and ascending's share kSptLongFullModelGap ==
  // kSptShortCausalModelGap, asserted in planner.h) and spt (the head_dim 64 rule falls back to spt's
  // where the model has shift far behind: the kernels without the closed-form rank).
  struct Candidate {
    Schedule schedule;
    double gap;
  };
  std::vector<Candidate> candidates;
  const Schedule older = measured_rule_schedule(prob, head_dim, post_poll, 0, num_sms, shift_full_tiles_hd64);
  const Schedule rule =
      measured_rule_schedule(prob, head_dim, post_poll, shift_full_tiles_hd128, num_sms, shift_full_tiles_hd64);
  if (rule != older) candidates.push_back({rule, kShiftLongFull128ModelGap});
  if (older != Schedule::kAuto) {
    candidates.push_back({older, older == Schedule::kShift ? kShiftLongFullModelGap : kSptLongFullModelGap});
    // spt: the fallback of the head_dim 64 shift rule where the spt rule held before it (from
    // kSptLongFullTiles; below, as for the other rules, the alternative is the model's pick).
    if (older == Schedule::kShift && prob.n_tiles() >= kSptLongFullTiles)
      candidates.push_back({Schedule::kSpt, kSptLongFullModelGap});
  }
  for (const Candidate& c : candidates)
    if (c.schedule == pick || model_ms(c.schedule) <= model_ms(pick) * (1.0 + c.gap)) return c.schedule;
  return pick;
}

Schedule recommend_from(const std::vector<PlanRow>& rows, const TileProblem& prob, const CostModel& cost, int num_sms) {
  return recommend_from(rows, prob, cost.head_dim, cost.post_poll, cost.shift_full_tiles_hd128, num_sms,
                        cost.last_wave_split, cost.shift_full_tiles_hd64);
}

Schedule recommend(const TileProblem& prob, const CostModel& cost, int num_sms, Dispatch dispatch) {
  std::vector<PlanRow> rows;
  for (Schedule s : {Schedule::kAscending, Schedule::kSpt, Schedule::kDescending, Schedule::kShift,
                     Schedule::kSymmetricShift}) {
    // On a full mask symmetric shift is shift; simulating it twice would change nothing.
    if (s == Schedule::kSymmetricShift && !prob.causal) continue;
    rows.push_back(plan_one(prob, s, cost, num_sms, dispatch));
  }
  return recommend_from(rows, prob, cost, num_sms);
}

double predict_us(const TileProblem& prob, Schedule s, const CostModel& cost, int num_sms,
                  Dispatch dispatch) {
  if (s == Schedule::kAuto) s = recommend(prob, cost, num_sms, dispatch);
  return plan_one(prob, s, cost, num_sms, dispatch).makespan;
}

}  // namespace dash::plan
