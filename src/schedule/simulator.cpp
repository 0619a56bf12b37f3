#include "schedule/simulator.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>
#include <sstream>

#include "schedule/program.h"

namespace dash {

double SimResult::idle_share() const {
  if (makespan <= 0) return 0.0;
  double idle = 0.0;
  for (double v : sm_idle) idle += v;
  return idle / (num_sms * makespan);
}

namespace {

// Per-SM accumulators and the event log's reservation, common to both reduce models; returns the
// number of steps of the whole problem.
double init_result(const ScheduleModel& sm, const Program& prog, int P, bool record_events, int record_sms,
                   SimResult* res) {
  res->sm_busy.assign(P, 0.0);
  res->sm_stall.assign(P, 0.0);
  res->stall_by_kv_tile.assign(sm.n, 0.0);
  long long steps_per_head = 0;
  for (int slot = 0; slot < sm.tasks_per_head; ++slot)
    steps_per_head += static_cast<long long>(prog.slot_steps[slot].size());
  const double total_steps = static_cast<double>(steps_per_head) * sm.p.num_heads();
  if (record_events) {
    const double share = record_sms > 0 && record_sms < P ? static_cast<double>(record_sms) / P : 1.0;
    res->events.reserve(static_cast<size_t>(total_steps * share * 1.1));
  }
  return total_steps;
}

struct Waiter {
  int rank, sm;
};

SimResult simulate_async(const ScheduleModel& sm, const CostModel& cost, int P, Dispatch dispatch,
                         bool record_events, int record_sms);

}  // namespace

double postprocess_end(const CostModel& cost, int block_m, int P, double main_end, const std::vector<double>& sm_exit,
                       const std::vector<double>& ready, bool poll) {
  if (!(cost.post_gbytes_per_s > 0.0) || cost.head_dim <= 0 || P <= 0 || ready.empty()) return main_end;
  const int slots = std::max(1, cost.post_blocks_per_sm);
  // One tile: block_m x head_dim fp32 read, the same in 16 bits written; at the SM's share of
  // the rate, shared by the SM's slots.
  const double bytes = static_cast<double>(block_m) * cost.head_dim * (4.0 + 2.0);
  const double block_us = bytes / (cost.post_gbytes_per_s * 1e3 / P) * slots;
  using Slot = std::pair<double, int>;  // (free from, SM): the earliest first, ties by SM index
  std::vector<Slot> heap;
  heap.reserve(static_cast<size_t>(P) * slots);
  for (int s = 0; s < P; ++s)
    for (int k = 0; k < slots; ++k) heap.push_back({poll ? sm_exit[s] : main_end, s});
  std::priority_queue<Slot, std::vector<Slot>, std::greater<Slot>> slot_q(std::greater<Slot>{}, std::move(heap));
  double end = main_end;
  for (double r : ready) {
    const auto [from, s] = slot_q.top();
    slot_q.pop();
    const double done = std::max(from, poll ? r : main_end) + block_us;
    end = std::max(end, done);
    slot_q.push({done, s});
  }
  return end;
}

namespace {
// The makespan from the SMs' exit times (exit_of(s): when SM s's main CTA has exited), then the
// postprocess on top (postprocess_end; polling for the deterministic schedules where the cost
// model says so). res.num_sms is P.
template <typename ExitOf>
void add_postprocess(SimResult& res, const CostModel& cost, const ScheduleModel& sm, const std::vector<double>& ready,
                     ExitOf exit_of) {
  const int P = res.num_sms;
  std::vector<double> exit(P);
  for (int s = 0; s < P; ++s) {
    exit[s] = exit_of(s);
    res.makespan = std::max(res.makespan, exit[s]);
  }
  res.main_makespan = res.makespan;
  if (res.ok)
    res.makespan = postprocess_end(cost, sm.p.block_m, P, res.main_makespan, exit, ready,
                                   cost.post_poll && sm.deterministic());
}
}  // namespace

SimResult simulate(const ScheduleModel& sm, const CostModel& model, int P, Dispatch dispatch,
                   bool record_events, int record_sms) {
  // The visit-order penalty of shift-type schedules is folded into c here (for_schedule).
  const CostModel cost = model.for_schedule(sm, P);
  if (cost.async_reduce && P > 0) return simulate_async(sm, cost, P, dispatch, record_events, record_sms);
  SimResult res;
  res.num_sms = P;
  if (P <= 0) {
    res.ok = false;
    res.error = "simulate: the number of SMs must be positive";
    return res;
  }
  const Program prog(sm);
  const int per_head = prog.dq_per_head();
  const int num_tasks = sm.num_units();  // tasks, and the pieces of the last-wave split
  const size_t num_dq = static_cast<size_t>(sm.p.num_heads()) * per_head;
  std::vector<int> next_rank(num_dq, 0);        // contributions of each dQ tile reduced so far
  std::vector<double> last_end(num_dq, 0.0);    // when the latest of them finished
  std::vector<std::vector<Waiter>> waiting(num_dq);

  struct Cta {
    int task = -1, step = 0, taken = 0;  // task: the unit (a task, or a piece of one)
    int step_begin = 0, step_end = 0;     // its steps in prog.slot_steps[prog.unit_slot(task)]
    double time = 0.0;         // when the CTA can do its next thing
    double compute_end = 0.0;  // of the step it is blocked on
    double end = 0.0;          // when it ran out of tasks
  };
  std::vector<Cta> ctas(P);
  const double total_steps = init_result(sm, prog, P, record_events, record_sms, &res);
  int next_task = 0, finished_tasks = 0;

  using Item = std::pair<double, int>;  // (time, sm): smallest time first, ties by SM index
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> ready;
  for (int s = 0; s < P; ++s) ready.push({0.0, s});

  // Finishes the reduce of CTA s's current step starting no earlier than `pred_end`, then
  // wakes the chain successor if it is already waiting (which may cascade).
  auto reduce = [&](int s0, double pred_end) {
    int s = s0;
    double pe = pred_end;
    while (s >= 0) {
      Cta& cta = ctas[s];
      const StepRef& st = prog.slot_steps[prog.unit_slot(cta.task)][cta.step];
      const int head = sm.task_head(sm.unit_task(cta.task));
      const double r = prog.rank_of(st.i, st.j) < 0 && cost.r_atomic >= 0.0 ? cost.r_atomic : cost.r;
      const double rs = std::max(cta.compute_end, pe);
      const double re = rs + r;
      res.sm_busy[s] += cost.c + r;
      res.sm_stall[s] += rs - cta.compute_end;
      res.stall_by_kv_tile[st.j] += rs - cta.compute_end;
      if (record_events && (record_sms <= 0 || s < record_sms))
        res.events.push_back(StepEvent{s, cta.task, head, st.j, st.i, st.g, cta.compute_end - cost.c,
                                       cta.compute_end, rs, re});
      cta.time = re;
      ++cta.step;
      ready.push({re, s});
      s = -1;
      if (prog.rank_of(st.i, st.j) < 0) break;  // atomic: no chain
      const size_t dq = static_cast<size_t>(head) * per_head + prog.dq_index(st.g, st.i);
      ++next_rank[dq];
      last_end[dq] = re;
      auto& w = waiting[dq];
      for (size_t k = 0; k < w.size(); ++k)
        if (w[k].rank == next_rank[dq]) {
          s = w[k].sm;
          pe = re;
          w.erase(w.begin() + static_cast<long>(k));
          break;
        }
    }
  };

  while (!ready.empty()) {
    const auto [time, s] = ready.top();
    ready.pop();
    Cta& cta = ctas[s];
    cta.time = time;
    // A finished task frees the CTA at once; it takes the next one at the same time.
    while (cta.task >= 0 && cta.step == cta.step_end) {
      cta.task = -1;
      ++finished_tasks;
    }
    if (cta.task < 0) {
      int t = -1;
      if (dispatch == Dispatch::kDynamic) {
        if (next_task < num_tasks) t = next_task++;
      } else {
        const long long k = s + static_cast<long long>(cta.taken) * P;
        if (k < num_tasks) { t = static_cast<int>(k); ++cta.taken; }
      }
      if (t < 0) { cta.end = time; continue; }
      cta.task = t;
      prog.unit_range(t, &cta.step_begin, &cta.step_end);
      cta.step = cta.step_begin;
      if (cta.step == cta.step_end) { ready.push({time, s}); continue; }
    }
    const StepRef& st = prog.slot_steps[prog.unit_slot(cta.task)][cta.step];
    // The fixed cost of a side (CostModel::task_us) runs before its first compute.
    const double task_cost = (st.t == 0 && st.g == 0) || cta.step == cta.step_begin ? cost.task_us : 0.0;  // (a piece pays it too)
    res.sm_busy[s] += task_cost;
    cta.compute_end = time + task_cost + cost.c;
    const int rank = prog.rank_of(st.i, st.j);
    if (rank < 0) { reduce(s, 0.0); continue; }
    const size_t dq = static_cast<size_t>(sm.task_head(sm.unit_task(cta.task))) * per_head + prog.dq_index(st.g, st.i);
    if (next_rank[dq] == rank) reduce(s, last_end[dq]);
    else waiting[dq].push_back(Waiter{rank, s});
  }

  if (finished_tasks < num_tasks) {
    res.ok = false;
    std::ostringstream os;
    os << schedule_name(sm.schedule) << ": deadlock on " << P << " SMs (" << dispatch_name(dispatch)
       << "): " << finished_tasks << "/" << num_tasks << " tasks finished;";
    int shown = 0;
    for (int s = 0; s < P && shown < 4; ++s) {
      if (ctas[s].task < 0) continue;
      const StepRef& st = prog.slot_steps[prog.unit_slot(ctas[s].task)][ctas[s].step];
      os << " SM " << s << " task " << ctas[s].task << " (KV " << st.j << " -> dQ " << st.i
         << ", g " << st.g << ") waits for rank " << prog.rank_of(st.i, st.j) << ";";
      ++shown;
    }
    res.error = os.str();
  }
  add_postprocess(res, cost, sm, last_end, [&](int s) { return std::max(ctas[s].end, ctas[s].time); });
  for (int s = 0; s < P; ++s) res.total_stall += res.sm_stall[s];
  // From the problem, not the SMs, so that a deadlocked run still reports the true bound.
  res.total_work = total_steps * (cost.c + cost.r) + prog.sides_total() * cost.task_us;
  res.lower_bound = res.total_work / P;
  res.sm_idle.resize(P);
  // Clamped: the three terms are sums of many doubles and may undershoot zero by rounding.
  for (int s = 0; s < P; ++s) res.sm_idle[s] = std::max(0.0, res.makespan - res.sm_busy[s] - res.sm_stall[s]);
  return res;
}

namespace {

// 1 + jitter * z for the `n`-th compute of SM `s`, z ~ N(0, 1) from a counter-based generator
// (splitmix64 of (seed, s, n), Box-Muller), clamped to [0.25, 4].
double jitter_factor(const CostModel& cost, int s, long long n) {
  auto mix = [](unsigned long long x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  };
  const unsigned long long a = mix(cost.jitter_seed ^ mix(static_cast<unsigned long long>(s) * 0x100000001ull ^
                                                          mix(static_cast<unsigned long long>(n))));
  const unsigned long long b = mix(a);
  const double u1 = (static_cast<double>(a >> 11) + 0.5) / 9007199254740992.0;
  const double u2 = static_cast<double>(b >> 11) / 9007199254740992.0;
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  return std::min(4.0, std::max(0.25, 1.0 + cost.jitter * z));
}

// The dQ writer-warp model (CostModel::async_reduce). Every CTA has two sides: the MMA warps,
// driven by the `ready` queue in time order (so dynamic dispatch sees the same order as on the
// GPU), and the writer, which reduces the handed-off partials strictly in hand-off order as
// soon as their chain predecessor is done. Every time the writer finishes a reduce is later
// than the event being processed (it ends after a compute that ends after it), so the queue
// stays monotone.
SimResult simulate_async(const ScheduleModel& sm, const CostModel& cost, int P, Dispatch dispatch,
                         bool record_events, int record_sms) {
  SimResult res;
  res.num_sms = P;
  res.async_reduce = true;
  const int K = std::max(1, cost.stage_buffers);
  const Program prog(sm);
  const int per_head = prog.dq_per_head();
  const int num_tasks = sm.num_units();  // tasks, and the pieces of the last-wave split
  const size_t num_dq = static_cast<size_t>(sm.p.num_heads()) * per_head;
  std::vector<int> next_rank(num_dq, 0);
  std::vector<double> last_end(num_dq, 0.0);
  std::vector<std::vector<Waiter>> waiting(num_dq);

  struct Item {  // a partial handed to the writer
    int task, step;
    double start, compute_end;
  };
  struct Cta {
    int task = -1, step = 0, taken = 0;  // task: the unit (a task, or a piece of one)
    int last_task = -1;                   // the last unit taken (the group take)
    int step_begin = 0, step_end = 0;     // its steps in prog.slot_steps[prog.unit_slot(task)]
    long long handed = 0, reduced = 0;  // partials handed to / reduced by the writer
    std::deque<Item> queue;             // handed, not yet reduced (at most K)
    std::vector<double> ring;           // reduce end of partial q at ring[q % K]
    double writer_end = 0.0;
    double mma_end = 0.0;               // end of the last compute
    bool blocked = false;               // the MMA side waits for a stage buffer
    double blocked_since = 0.0;
    bool writer_waiting = false;        // the writer's head partial waits for its chain
    bool draining = false;              // waits for its writer before taking the next task
  };
  std::vector<Cta> ctas(P);
  for (Cta& c : ctas) c.ring.assign(K, 0.0);
  const double total_steps = init_result(sm, prog, P, record_events, record_sms, &res);
  int next_task = 0, finished_tasks = 0;
  using QItem = std::pair<double, int>;
  std::priority_queue<QItem, std::vector<QItem>, std::greater<QItem>> ready;
  for (int s = 0; s < P; ++s) ready.push({0.0, s});

  auto step_of = [&](int task, int step) -> const StepRef& {
    return prog.slot_steps[prog.unit_slot(task)][step];
  };
  auto dq_of = [&](int task, const StepRef& st) {
    return static_cast<size_t>(sm.task_head(sm.unit_task(task))) * per_head + prog.dq_index(st.g, st.i);
  };
  std::vector<int> work;  // CTAs whose writer may be able to proceed

  // Compute of CTA s's next step, the MMA side free since `free_at`, buffer free at `buf`.
  auto compute = [&](int s, double free_at, double buf) {
    Cta& cta = ctas[s];
    const double start = std::max(free_at, buf);
    const StepRef& st = step_of(cta.task, cta.step);
    res.sm_stall[s] += start - free_at;
    res.stall_by_kv_tile[st.j] += start - free_at;
    const double c = cost.jitter > 0.0 ? cost.c * jitter_factor(cost, s, cta.handed) : cost.c;
    res.sm_busy[s] += c;
    cta.mma_end = start + c;
    cta.queue.push_back(Item{cta.task, cta.step, start, cta.mma_end});
    ++cta.handed;
    ++cta.step;
    ready.push({cta.mma_end, s});
    work.push_back(s);
  };

  // Runs the writers in `work` as far as their chains allow (cascading through wake-ups).
  auto drain = [&]() {
    while (!work.empty()) {
      const int s = work.back();
      work.pop_back();
      Cta& cta = ctas[s];
      while (!cta.queue.empty()) {
        const Item it = cta.queue.front();
        const StepRef& st = step_of(it.task, it.step);
        const int rank = prog.rank_of(st.i, st.j);
        const size_t dq = dq_of(it.task, st);
        if (rank >= 0 && next_rank[dq] != rank) {
          if (!cta.writer_waiting) {
            waiting[dq].push_back(Waiter{rank, s});
            cta.writer_waiting = true;
          }
          break;
        }
        cta.writer_waiting = false;
        const double rs = std::max({it.compute_end, cta.writer_end, rank >= 0 ? last_end[dq] : 0.0});
        double re = rs + (rank < 0 && cost.r_atomic >= 0.0 ? cost.r_atomic : cost.r);
        if (cost.last_link_extra_us > 0.0 && rank >= 0 && rank + 1 == sm.chain_length(st.i)) re += cost.last_link_extra_us;
        cta.writer_end = re;
        cta.queue.pop_front();
        cta.ring[cta.reduced % K] = re;
        ++cta.reduced;
        if (record_events && (record_sms <= 0 || s < record_sms))
          res.events.push_back(StepEvent{s, it.task, sm.task_head(sm.unit_task(it.task)), st.j, st.i, st.g, it.start,
                                         it.compute_end, rs, re});
        if (rank >= 0) {
          ++next_rank[dq];
          last_end[dq] = re;
          auto& w = waiting[dq];
          for (size_t k = 0; k < w.size(); ++k)
            if (w[k].rank == next_rank[dq]) {
              work.push_back(w[k].sm);
              w.erase(w.begin() + static_cast<long>(k));
              break;
            }
        }
        if (cta.draining && cta.queue.empty()) {
          cta.draining = false;
          ready.push({cta.writer_end, s});
        }
        // A stage buffer came free: the MMA side may go on.
        if (cta.blocked && cta.reduced > cta.handed - K) {
          cta.blocked = false;
          compute(s, cta.blocked_since, cta.ring[(cta.handed - K) % K]);
        }
      }
    }
  };

  while (!ready.empty()) {
    const auto [time, s] = ready.top();
    ready.pop();
    Cta& cta = ctas[s];
    while (cta.task >= 0 && cta.step == cta.step_end) {
      cta.task = -1;
      ++finished_tasks;
    }
    if (cta.task < 0) {
      // As the kernel does: with dynamic dispatch and co-resident groups, a CTA takes its next
      // task only after its writer has reduced every partial of the previous one (otherwise a
      // task of the same group could queue behind a reduce that waits for it).
      // With the group take (cost.group_take) not once the counter has passed the last task's group.
      const bool group_taken = cost.group_take && cta.last_task >= 0 && next_task >= sm.group_end_task(cta.last_task);
      if (dispatch == Dispatch::kDynamic && sm.min_coresident() > 1 && !group_taken) {
        if (!cta.queue.empty()) { cta.draining = true; continue; }
        if (cta.writer_end > time) { ready.push({cta.writer_end, s}); continue; }
      }
      int t = -1;
      if (dispatch == Dispatch::kDynamic) {
        if (next_task < num_tasks) t = next_task++;
      } else {
        const long long k = s + static_cast<long long>(cta.taken) * P;
        if (k < num_tasks) { t = static_cast<int>(k); ++cta.taken; }
      }
      if (t < 0) continue;
      cta.task = t;
      cta.last_task = t;
      prog.unit_range(t, &cta.step_begin, &cta.step_end);
      cta.step = cta.step_begin;
      if (cta.step == cta.step_end) { ready.push({time, s}); continue; }
    }
    // Partial q = handed needs the buffer of partial q - K reduced.
    // The fixed cost of a side (CostModel::task_us) runs before its first compute, on the SM.
    double free_at = time;
    const StepRef& first = step_of(cta.task, cta.step);
    if (cost.task_us > 0.0 && ((first.t == 0 && first.g == 0) || cta.step == cta.step_begin)) {  // a side's (a piece's) first step
      free_at += cost.task_us;
      res.sm_busy[s] += cost.task_us;
    }
    if (cta.handed >= K && cta.reduced <= cta.handed - K) {
      cta.blocked = true;
      cta.blocked_since = free_at;
      continue;
    }
    compute(s, free_at, cta.handed >= K ? cta.ring[(cta.handed - K) % K] : 0.0);
    drain();
  }

  bool writers_done = true;
  for (const Cta& c : ctas) writers_done = writers_done && c.queue.empty() && !c.blocked && !c.draining;
  if (finished_tasks < num_tasks || !writers_done) {
    res.ok = false;
    std::ostringstream os;
    os << schedule_name(sm.schedule) << ": deadlock on " << P << " SMs (" << dispatch_name(dispatch)
       << ", async reduce): " << finished_tasks << "/" << num_tasks << " tasks computed;";
    int shown = 0;
    for (int s = 0; s < P && shown < 4; ++s) {
      if (ctas[s].queue.empty()) continue;
      const Item& it = ctas[s].queue.front();
      const StepRef& st = step_of(it.task, it.step);
      os << " SM " << s << " writer, task " << it.task << " (KV " << st.j << " -> dQ " << st.i << ", g " << st.g
         << ") waits for rank " << prog.rank_of(st.i, st.j) << (ctas[s].blocked ? ", MMA warps blocked" : "")
         << ";";
      ++shown;
    }
    res.error = os.str();
  }
  // A main CTA exits once it found no task and its writer has drained.
  add_postprocess(res, cost, sm, last_end, [&](int s) { return std::max(ctas[s].mma_end, ctas[s].writer_end); });
  for (int s = 0; s < P; ++s) res.total_stall += res.sm_stall[s];
  res.total_work = total_steps * cost.c + prog.sides_total() * cost.task_us;
  res.lower_bound = res.total_work / P;
  res.sm_idle.resize(P);
  for (int s = 0; s < P; ++s) res.sm_idle[s] = std::max(0.0, res.makespan - res.sm_busy[s] - res.sm_stall[s]);
  return res;
}

}  // namespace

}  // namespace dash
