// dash-attn: event simulation of a persistent grid of P SMs (one CTA per SM) over every head
// and batch of a problem.
//
// A CTA takes a task (static: CTA p takes p, p+P, ...; dynamic: a CTA that becomes free takes
// the next task at that time, ties broken by CTA index) and runs its steps in program order.
// A step runs C (cost c), then waits until its chain predecessor's R has finished (a stall,
// the SM is held), then runs R (cost r). Atomic reduces never wait.
#pragma once

#include <string>
#include <vector>

#include "dash_attn/schedule.h"
#include "schedule/cost_model.h"

namespace dash {

struct StepEvent {
  int sm, task, head, j, i, g;
  double start, compute_end, reduce_start, reduce_end;
};

struct SimResult {
  bool ok = true;        // false: the grid deadlocked (error says where)
  std::string error;
  int num_sms = 0;
  double makespan = 0.0;
  double total_work = 0.0;    // sum of c + r over every step
  double lower_bound = 0.0;   // total_work / num_sms
  double total_stall = 0.0;   // time SMs spent waiting for a chain predecessor
  std::vector<double> sm_busy;   // compute + reduce time per SM
  std::vector<double> sm_stall;  // waiting time per SM
  std::vector<double> sm_idle;   // makespan - busy - stall (no task left, or tail)
  std::vector<double> stall_by_kv_tile;  // where the stalls are: per KV tile j, all heads
  std::vector<StepEvent> events;         // filled when requested, in simulation order

  double efficiency() const { return makespan > 0 ? lower_bound / makespan : 1.0; }
  double stall_share() const { return makespan > 0 ? total_stall / (num_sms * makespan) : 0.0; }
  double idle_share() const;
};

// record_events fills SimResult::events; record_sms > 0 keeps only the events of SMs below it
// (what a Gantt chart shows), which bounds memory on large problems.
SimResult simulate(const ScheduleModel& sm, const CostModel& cost, int num_sms, Dispatch dispatch,
                   bool record_events = false, int record_sms = 0);

}  // namespace dash
