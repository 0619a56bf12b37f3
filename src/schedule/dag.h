// dash-attn: the DAG of the spec (docs/schedules.md) for one head, and its critical path.
//
// Nodes, per visible (query head g, Q tile i, KV tile j): C(i, j) of cost c and R(i, j) of
// cost r. Edges:
//   C(i, j) -> R(i, j);
//   program order of the task: R of step k -> C of step k+1 (the reduce occupies its SM, so
//     the next compute starts after it; this is the model behind the spec's closed forms);
//   accumulation order: R(i, s_i(k)) -> R(i, s_i(k+1)) for the rank order s_i of dQ tile i.
// With CostModel::async_reduce the program-order edge R(s) -> C(s+1) is replaced by the writer
// warp's edges, per task: C(s-1) -> C(s) (MMA warps), R(s-1) -> R(s) (one writer, in order),
// R(s-K) -> C(s) (K = stage_buffers: the partial needs a free stage buffer); a side's fixed cost
// (CostModel::task_us) is a node between C(s-1) and the side's first C(s). One task per CTA
// (the DAG has unlimited SMs), so it is the async simulator with one SM per task.
// Heads are independent and run the same program, so one head's DAG has the critical path of
// the whole problem.
#pragma once

#include <vector>

#include "dash_attn/schedule.h"
#include "schedule/cost_model.h"

namespace dash {

struct DagNode {
  bool reduce;  // R node (else C)
  int slot, side, g, j, i;
  double cost;
};

struct Dag {
  std::vector<DagNode> nodes;
  std::vector<std::vector<int>> succ;
  long long num_edges = 0;
};

Dag build_dag(const ScheduleModel& sm, const CostModel& cost);

struct CriticalPath {
  bool acyclic = true;
  double length = 0.0;      // longest node-weighted path
  std::vector<int> nodes;   // one longest path, source to sink
};

CriticalPath critical_path(const Dag& dag);
// Convenience: build_dag + critical_path, length only.
double critical_path_length(const ScheduleModel& sm, const CostModel& cost);

}  // namespace dash
