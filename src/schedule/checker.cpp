#include "schedule/checker.h"

#include <sstream>
#include <vector>

#include "schedule/program.h"

namespace dash {

namespace {

CheckResult fail(const std::string& msg) { return CheckResult{false, msg}; }

std::string describe(const ScheduleModel& sm) {
  std::ostringstream os;
  const TileProblem& p = sm.p;
  os << schedule_name(sm.schedule) << " [b=" << p.batch << " hq=" << p.heads_q
     << " hkv=" << p.heads_kv << " sq=" << p.seqlen_q << " sk=" << p.seqlen_k
     << " bm=" << p.block_m << " bn=" << p.block_n << (p.causal ? " causal" : " full")
     << " m=" << sm.m << " n=" << sm.n << " tasks/head=" << sm.tasks_per_head
     << " group=" << sm.group_width;
  if (sm.split()) os << " split=" << sm.split_tasks << "x" << sm.split_pieces;
  os << "]";
  return os.str();
}

}  // namespace

CheckResult check_coverage(const ScheduleModel& sm) {
  const TileProblem& p = sm.p;
  const int m = sm.m, n = sm.n, G = p.q_per_kv();
  if (p.heads_kv <= 0 || p.heads_q % p.heads_kv != 0) return fail(describe(sm) + ": heads_q % heads_kv != 0");
  // Every KV tile belongs to exactly one (slot, side), and slot_of/side_of invert kv_tile.
  std::vector<int> owner(n, 0);
  for (int slot = 0; slot < sm.tasks_per_head; ++slot) {
    for (int side = 0; side < sm.num_sides(slot); ++side) {
      const int j = sm.kv_tile(slot, side);
      std::ostringstream os;
      os << describe(sm) << ": slot " << slot << " side " << side << " -> KV tile " << j;
      if (j < 0 || j >= n) return fail(os.str() + " out of range");
      if (owner[j]++ != 0) return fail(os.str() + " owned twice");
      if (sm.slot_of(j) != slot || sm.side_of(j) != side)
        return fail(os.str() + " but slot_of/side_of give " + std::to_string(sm.slot_of(j)) +
                    "/" + std::to_string(sm.side_of(j)));
      if (sm.group_of_slot(slot) != slot / sm.group_width) return fail(os.str() + ": bad group");
    }
  }
  for (int j = 0; j < n; ++j)
    if (owner[j] != 1) return fail(describe(sm) + ": KV tile " + std::to_string(j) + " owned by no task");

  // Visits over every task of every head and every query head of its group.
  const int H = p.num_heads();
  std::vector<unsigned char> seen(static_cast<size_t>(H) * G * m * n, 0);
  for (int task = 0; task < sm.num_tasks(); ++task) {
    const int head = sm.task_head(task), slot = sm.task_slot(task);
    int steps_total = 0;
    for (int side = 0; side < sm.num_sides(slot); ++side) {
      const int j = sm.kv_tile(slot, side);
      const int offset = side == 1 ? sm.num_steps(slot, 0) : 0;
      for (int g = 0; g < G; ++g) {
        for (int t = 0; t < sm.num_steps(slot, side); ++t) {
          const int i = sm.visit(slot, side, t);
          ++steps_total;
          std::ostringstream os;
          os << describe(sm) << ": task " << task << " side " << side << " g " << g << " step "
             << t << " (KV tile " << j << ") visits Q tile " << i;
          if (i < 0 || i >= m) return fail(os.str() + ": out of range");
          if (!p.visible(i, j)) return fail(os.str() + ": pair is masked");
          if (sm.step_of(j, i) != offset + t)
            return fail(os.str() + ": step_of gives " + std::to_string(sm.step_of(j, i)));
          unsigned char& s = seen[((static_cast<size_t>(head) * G + g) * m + i) * n + j];
          if (s++ != 0) return fail(os.str() + ": visited twice");
        }
      }
    }
    if (steps_total != sm.task_steps(slot))
      return fail(describe(sm) + ": task_steps(" + std::to_string(slot) + ") disagrees with the visit count");
  }
  // The last-wave split: the units cover every step of every task once, whole tasks before the
  // pieces, each piece a step range of side 0 of a splittable schedule's one-sided task.
  if (sm.split()) {
    if (!sm.splittable()) return fail(describe(sm) + ": split but not splittable");
    if (sm.split_tasks > sm.num_tasks()) return fail(describe(sm) + ": more split tasks than tasks");
    std::vector<int> covered(static_cast<size_t>(sm.num_tasks()) * m, 0);
    for (int u = 0; u < sm.num_units(); ++u) {
      const int task = sm.unit_task(u), piece = sm.unit_piece(u);
      std::ostringstream os;
      os << describe(sm) << ": unit " << u << " (task " << task << " piece " << piece << ")";
      if (task < 0 || task >= sm.num_tasks()) return fail(os.str() + ": task out of range");
      if ((piece >= 0) != (task >= sm.first_split_task())) return fail(os.str() + ": piece and task disagree");
      if (piece >= 0 && sm.num_sides(sm.task_slot(task)) != 1) return fail(os.str() + ": a piece of a two-sided task");
      if (piece >= 0 && sm.unit_part(u) != (task - sm.first_split_task()) * sm.split_pieces + piece)
        return fail(os.str() + ": unit_part");
      int t0 = 0, t1 = 0;
      sm.unit_steps(u, &t0, &t1);
      if (t0 >= t1) return fail(os.str() + ": an empty piece");
      for (int t = t0; t < t1; ++t)
        if (covered[static_cast<size_t>(task) * m + t]++ != 0) return fail(os.str() + ": step " + std::to_string(t) + " twice");
    }
    for (int task = 0; task < sm.num_tasks(); ++task)
      for (int t = 0; t < sm.num_steps(sm.task_slot(task), 0); ++t)
        if (covered[static_cast<size_t>(task) * m + t] != 1)
          return fail(describe(sm) + ": task " + std::to_string(task) + " step " + std::to_string(t) + " in no unit");
  }
  for (int head = 0; head < H; ++head)
    for (int g = 0; g < G; ++g)
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          const bool v = seen[((static_cast<size_t>(head) * G + g) * m + i) * n + j] != 0;
          if (v != p.visible(i, j)) {
            std::ostringstream os;
            os << describe(sm) << ": head " << head << " g " << g << " pair (Q " << i << ", KV " << j
               << ") is visible but never visited";
            return fail(os.str());
          }
        }
  return {};
}

CheckResult check_ranks(const ScheduleModel& sm) {
  if (!sm.deterministic()) {
    for (int i = 0; i < sm.m; ++i)
      for (int j = 0; j < sm.chain_length(i); ++j)
        if (sm.rank(i, j) != -1) return fail(describe(sm) + ": atomic schedule has a rank");
    return {};
  }
  const Program prog(sm);
  for (int i = 0; i < sm.m; ++i) {
    const int len = sm.chain_length(i);
    std::vector<int> hits(len, 0);
    for (int j = 0; j < len; ++j) {
      const int r = sm.rank(i, j);
      std::ostringstream os;
      os << describe(sm) << ": dQ tile " << i << " KV tile " << j << " rank " << r;
      if (r < 0 || r >= len) return fail(os.str() + " outside 0.." + std::to_string(len - 1));
      if (hits[r]++ != 0) return fail(os.str() + " repeated: ranks are not a permutation");
      if (prog.rank_of(i, j) != r)
        return fail(os.str() + " but the sorted-key table gives " + std::to_string(prog.rank_of(i, j)));
      if (sm.rank_needs_loop()) {
        int split = 0;
        for (int lane = 0; lane < 4; ++lane) split += sm.rank_partial(i, j, lane, 4);
        if (split != r) return fail(os.str() + " but rank_partial sums to " + std::to_string(split));
      }
    }
  }
  return {};
}

CheckResult check_grid(const ScheduleModel& sm, Dispatch dispatch, int P, Interleave interleave) {
  if (!sm.deterministic()) return {};  // nothing ever waits
  if (P <= 0) return fail("check_grid: P must be positive");
  const Program prog(sm);
  const int per_head = prog.dq_per_head();
  const int num_tasks = sm.num_units();  // tasks, and the pieces of the last-wave split
  std::vector<int> counter(static_cast<size_t>(sm.p.num_heads()) * per_head, 0);

  struct Cta {
    int task = -1;  // running unit (a task or a piece), -1 when free
    int step = 0;   // next step of the running unit (an index into its slot's steps)
    int end = 0;    // one past its last step
    int taken = 0;  // static dispatch: units taken so far
    bool done = false;
  };
  std::vector<Cta> ctas(P);
  int next_task = 0;      // dynamic dispatch counter
  int finished_tasks = 0;

  auto grab = [&](int c, Cta& cta) {
    int t = -1;
    if (dispatch == Dispatch::kDynamic) {
      if (next_task < num_tasks) t = next_task++;
    } else {
      const long long s = c + static_cast<long long>(cta.taken) * P;
      if (s < num_tasks) { t = static_cast<int>(s); ++cta.taken; }
    }
    if (t < 0) { cta.done = true; return false; }
    cta.task = t;
    prog.unit_range(t, &cta.step, &cta.end);
    return true;
  };

  const int limit = interleave == Interleave::kLockstep ? 1 : -1;
  while (finished_tasks < num_tasks) {
    bool progress = false;
    for (int c = 0; c < P; ++c) {
      Cta& cta = ctas[c];
      int budget = limit;
      while (!cta.done && budget != 0) {
        if (cta.task < 0) {
          if (!grab(c, cta)) break;
          progress = true;
        }
        const auto& steps = prog.slot_steps[prog.unit_slot(cta.task)];
        if (cta.step == cta.end) {
          cta.task = -1;
          ++finished_tasks;
          progress = true;
          continue;
        }
        const StepRef& s = steps[cta.step];
        int& cnt = counter[static_cast<size_t>(sm.task_head(sm.unit_task(cta.task))) * per_head + prog.dq_index(s.g, s.i)];
        if (cnt != prog.rank_of(s.i, s.j)) break;
        ++cnt;
        ++cta.step;
        progress = true;
        if (budget > 0) --budget;
      }
    }
    if (!progress) {
      // Report the first blocked CTA and who owns the contribution it waits for.
      std::ostringstream os;
      os << describe(sm) << ": deadlock with P=" << P << " " << dispatch_name(dispatch)
         << (interleave == Interleave::kGreedy ? " greedy" : " lockstep") << " dispatch, "
         << finished_tasks << "/" << num_tasks << " tasks finished";
      for (int c = 0; c < P; ++c) {
        const Cta& cta = ctas[c];
        if (cta.task < 0) continue;
        const StepRef& s = prog.slot_steps[prog.unit_slot(cta.task)][cta.step];
        const int head = sm.task_head(sm.unit_task(cta.task));
        const int have = counter[static_cast<size_t>(head) * per_head + prog.dq_index(s.g, s.i)];
        int owner_j = -1;
        for (int j = 0; j < sm.chain_length(s.i); ++j)
          if (prog.rank_of(s.i, j) == have) owner_j = j;
        const int owner_task = owner_j < 0 ? -1 : sm.task_of(head, sm.slot_of(owner_j));
        os << "; CTA " << c << " task " << cta.task << " step " << cta.step << " (side " << s.side
           << " g " << s.g << " t " << s.t << ": KV " << s.j << " -> dQ " << s.i << ") waits for rank "
           << prog.rank_of(s.i, s.j) << ", counter at " << have << ", owed by KV tile " << owner_j
           << " (task " << owner_task;
        int holder = -1;
        for (int c2 = 0; c2 < P; ++c2)
          if (ctas[c2].task >= 0 && sm.unit_task(ctas[c2].task) == owner_task) holder = c2;
        if (holder >= 0) os << ", held by CTA " << holder << " at step " << ctas[holder].step << ")";
        else os << ", not started)";
        return fail(os.str());
      }
      return fail(os.str());
    }
  }
  return {};
}

CheckResult check_deadlock_free(const ScheduleModel& sm, int max_ctas) {
  if (!sm.deterministic()) return {};
  const int hi = max_ctas > 0 ? std::min(max_ctas, sm.num_units()) : sm.num_units();
  for (int P = sm.min_coresident(); P <= hi; ++P)
    for (Dispatch d : {Dispatch::kDynamic, Dispatch::kStatic})
      for (Interleave il : {Interleave::kLockstep, Interleave::kGreedy}) {
        CheckResult r = check_grid(sm, d, P, il);
        if (!r.ok) return r;
      }
  return {};
}

CheckResult check_schedule(const ScheduleModel& sm, int max_ctas) {
  CheckResult r = check_coverage(sm);
  if (r.ok) r = check_ranks(sm);
  if (r.ok) r = check_deadlock_free(sm, max_ctas);
  return r;
}

}  // namespace dash
