#include "schedule/dag.h"

#include <algorithm>

#include "schedule/program.h"

namespace dash {

Dag build_dag(const ScheduleModel& sm, const CostModel& model) {
  // Unlimited SMs: the visit-order penalty at the full group width. The fixed cost of a side
  // (CostModel::task_us) precedes the side's first compute: in the sync model as part of that
  // C node; in the async model as a node of its own between C(s-1) and C(s), so that it overlaps
  // the wait for a stage buffer (R(s-K) -> C(s)), as in the simulator.
  const CostModel cost = model.for_schedule(sm, 0);
  const Program prog(sm);
  Dag dag;
  // Node of the R of each (g, i, j) contribution, to chain them in rank order afterwards.
  std::vector<int> r_node(static_cast<size_t>(prog.dq_per_head()) * sm.n, -1);
  const int K = std::max(1, cost.stage_buffers);
  for (int slot = 0; slot < sm.tasks_per_head; ++slot) {
    int prev_r = -1;
    std::vector<int> c_ids;  // C node of each step of this task (async edges)
    for (const StepRef& s : prog.slot_steps[slot]) {
      const bool side_first = s.t == 0 && s.g == 0;
      const bool setup_node = cost.async_reduce && side_first && cost.task_us > 0.0;
      const int setup = setup_node ? static_cast<int>(dag.nodes.size()) : -1;
      if (setup_node) {
        dag.nodes.push_back(DagNode{false, slot, s.side, s.g, s.j, s.i, cost.task_us});
        dag.succ.emplace_back();
      }
      const int c_id = static_cast<int>(dag.nodes.size());
      dag.nodes.push_back(
          DagNode{false, slot, s.side, s.g, s.j, s.i, cost.c + (side_first && !setup_node ? cost.task_us : 0.0)});
      dag.nodes.push_back(DagNode{true, slot, s.side, s.g, s.j, s.i,
                                  !sm.deterministic() && cost.r_atomic >= 0.0 ? cost.r_atomic : cost.r});
      dag.succ.emplace_back();
      dag.succ.emplace_back();
      dag.succ[c_id].push_back(c_id + 1);
      if (cost.async_reduce) {
        const int k = static_cast<int>(c_ids.size());
        if (setup >= 0) dag.succ[setup].push_back(c_id);  // the side's fixed cost, then C(s)
        if (k >= 1) {
          dag.succ[c_ids[k - 1]].push_back(setup >= 0 ? setup : c_id);  // C(s-1) -> C(s): the MMA warps
          dag.succ[c_ids[k - 1] + 1].push_back(c_id + 1);  // R(s-1) -> R(s): one writer, in order
        }
        if (k >= K) dag.succ[c_ids[k - K] + 1].push_back(c_id);  // R(s-K) -> C(s): stage buffer
        c_ids.push_back(c_id);
      } else if (prev_r >= 0) {
        dag.succ[prev_r].push_back(c_id);  // R(s-1) -> C(s): the reduce holds the SM
      }
      prev_r = c_id + 1;
      r_node[static_cast<size_t>(prog.dq_index(s.g, s.i)) * sm.n + s.j] = c_id + 1;
    }
  }
  if (sm.deterministic()) {
    std::vector<int> chain;
    for (int g = 0; g < sm.p.q_per_kv(); ++g)
      for (int i = 0; i < sm.m; ++i) {
        const int len = sm.chain_length(i);
        chain.assign(len, -1);
        for (int j = 0; j < len; ++j)
          chain[prog.rank_of(i, j)] = r_node[static_cast<size_t>(prog.dq_index(g, i)) * sm.n + j];
        for (int k = 0; k + 1 < len; ++k) dag.succ[chain[k]].push_back(chain[k + 1]);
      }
  }
  for (const auto& s : dag.succ) dag.num_edges += static_cast<long long>(s.size());
  return dag;
}

CriticalPath critical_path(const Dag& dag) {
  const int N = static_cast<int>(dag.nodes.size());
  std::vector<int> indeg(N, 0), pred(N, -1), queue;
  for (const auto& s : dag.succ)
    for (int v : s) ++indeg[v];
  // Longest path ending at (and including) each node; -1 until a predecessor reaches it.
  std::vector<double> finish(N, -1.0);
  queue.reserve(N);
  for (int v = 0; v < N; ++v)
    if (indeg[v] == 0) {
      queue.push_back(v);
      finish[v] = dag.nodes[v].cost;
    }
  // Kahn's order: finish[u] is final when u is dequeued.
  for (size_t h = 0; h < queue.size(); ++h) {
    const int u = queue[h];
    for (int v : dag.succ[u]) {
      const double f = finish[u] + dag.nodes[v].cost;
      if (f > finish[v]) {
        finish[v] = f;
        pred[v] = u;
      }
      if (--indeg[v] == 0) queue.push_back(v);
    }
  }
  CriticalPath cp;
  cp.acyclic = static_cast<int>(queue.size()) == N;
  if (!cp.acyclic || N == 0) return cp;
  const int end = static_cast<int>(std::max_element(finish.begin(), finish.end()) - finish.begin());
  cp.length = finish[end];
  for (int v = end; v >= 0; v = pred[v]) cp.nodes.push_back(v);
  std::reverse(cp.nodes.begin(), cp.nodes.end());
  return cp;
}

double critical_path_length(const ScheduleModel& sm, const CostModel& cost) {
  return critical_path(build_dag(sm, cost)).length;
}

}  // namespace dash
