// dash-attn: host-side tables derived from a ScheduleModel, shared by the checker, the DAG and
// the simulator. Every head of a problem runs the same program (heads differ only in which
// tensors they touch), so the tables describe one (batch, kv head) and are reused for all.
#pragma once

#include <algorithm>
#include <vector>

#include "dash_attn/schedule.h"

namespace dash {

// One step of a task in program order: side, query head within the GQA group, step index
// within (side, g), the KV tile it processes and the Q tile it visits.
struct StepRef {
  int side, g, t, j, i;
};

struct Program {
  ScheduleModel sm;
  std::vector<std::vector<StepRef>> slot_steps;  // [slot] -> steps in program order
  std::vector<int> rank;                         // [i * n + j] -> rank, -1 if none

  explicit Program(const ScheduleModel& model) : sm(model) {
    const int G = sm.p.q_per_kv();
    slot_steps.resize(sm.tasks_per_head);
    for (int slot = 0; slot < sm.tasks_per_head; ++slot) {
      auto& steps = slot_steps[slot];
      steps.reserve(sm.task_steps(slot));
      for (int side = 0; side < sm.num_sides(slot); ++side)
        for (int t = 0; t < sm.num_steps(slot, side); ++t)
          for (int g = 0; g < G; ++g)
            steps.push_back(StepRef{side, g, t, sm.kv_tile(slot, side), sm.visit(slot, side, t)});
    }
    // Ranks by sorting the chain keys once per dQ tile: ScheduleModel::rank is O(n) per call,
    // which is right for a warp on the device but quadratic for a whole problem on the host.
    rank.assign(static_cast<size_t>(sm.m) * sm.n, -1);
    if (!sm.deterministic()) return;
    std::vector<int> order;
    for (int i = 0; i < sm.m; ++i) {
      const int len = sm.chain_length(i);
      order.resize(len);
      for (int j = 0; j < len; ++j) order[j] = j;
      switch (sm.schedule) {
        case Schedule::kAscending:
        case Schedule::kDescending:
          break;
        case Schedule::kSpt:
          std::reverse(order.begin(), order.end());
          break;
        default:
          std::sort(order.begin(), order.end(),
                    [&](int a, int b) { return sm.key(a, i) < sm.key(b, i); });
      }
      for (int k = 0; k < len; ++k) rank[static_cast<size_t>(i) * sm.n + order[k]] = k;
    }
  }

  // Sides with at least one step over the whole problem (every head): how many times the
  // per-side fixed cost (CostModel::task_us: K/V load, pipeline fill, dK/dV epilogue) is paid.
  double sides_total() const {
    long long per_head = 0;
    for (int slot = 0; slot < sm.tasks_per_head; ++slot)
      for (int side = 0; side < sm.num_sides(slot); ++side) per_head += sm.num_steps(slot, side) > 0;
    return static_cast<double>(per_head) * sm.p.num_heads();
  }

  // The steps of unit u (a task, or a piece of one under the last-wave split: ScheduleModel::unit_steps)
  // as [*begin, *end) of slot_steps[unit_slot(u)]: a piece's steps t0 .. t1 - 1 of side 0, every query
  // head of each.
  int unit_slot(int u) const { return sm.task_slot(sm.unit_task(u)); }
  void unit_range(int u, int* begin, int* end) const {
    const int n_steps = static_cast<int>(slot_steps[unit_slot(u)].size());
    if (sm.unit_piece(u) < 0) {
      *begin = 0;
      *end = n_steps;
      return;
    }
    int t0 = 0, t1 = 0;
    sm.unit_steps(u, &t0, &t1);
    *begin = t0 * sm.p.q_per_kv();
    *end = t1 * sm.p.q_per_kv();
  }

  int rank_of(int i, int j) const { return rank[static_cast<size_t>(i) * sm.n + j]; }
  // Index of dQ tile (query head g of the group, Q tile i) within one head's counters.
  int dq_index(int g, int i) const { return g * sm.m + i; }
  int dq_per_head() const { return sm.p.q_per_kv() * sm.m; }
};

}  // namespace dash
