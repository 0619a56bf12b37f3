// dash-attn: validity checker for the schedule model (used by the tests and `plan --check`).
//
// A schedule is valid when
//   1. coverage: every visible (Q tile, KV tile) pair of every query head is visited exactly
//      once, nothing invisible is visited, and the model's inverse functions (slot_of, side_of,
//      step_of) agree with its forward ones (kv_tile, visit);
//   2. ordering: for every dQ tile the ranks over its contributors are a permutation of
//      0..chain_length-1 (deterministic schedules only), and the host rank table, rank() and
//      rank_partial() agree;
//   3. deadlock freedom: a persistent grid of P CTAs, for every P from min_coresident() up to
//      num_tasks(), with static and dynamic dispatch, runs to completion when a reduce may only
//      proceed once its dQ tile's counter equals its rank.
#pragma once

#include <string>

#include "dash_attn/schedule.h"

namespace dash {

struct CheckResult {
  bool ok = true;
  std::string error;  // human readable; empty when ok
};

CheckResult check_coverage(const ScheduleModel& sm);
CheckResult check_ranks(const ScheduleModel& sm);

// How far one CTA may run per simulated round. kGreedy lets a CTA run until it blocks (lower
// CTA indices race ahead); kLockstep advances every CTA by at most one step per round, which is
// closer to a real grid. Both are interleavings the hardware can produce.
enum class Interleave { kGreedy, kLockstep };

// Simulates one persistent grid of `num_ctas` CTAs over the whole problem (all heads).
CheckResult check_grid(const ScheduleModel& sm, Dispatch dispatch, int num_ctas,
                       Interleave interleave = Interleave::kLockstep);

// check_grid for every P in [min_coresident(), max_ctas] (max_ctas <= 0: num_tasks()), both
// dispatch modes and both interleavings.
CheckResult check_deadlock_free(const ScheduleModel& sm, int max_ctas = 0);

// Everything above.
CheckResult check_schedule(const ScheduleModel& sm, int max_ctas = 0);

}  // namespace dash
