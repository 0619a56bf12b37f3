// dash-attn: event simulation of a persistent grid of P SMs (one CTA per SM) over every head
// and batch of a problem.
//
// A CTA takes a task (static: CTA p takes p, p+P, ...; dynamic: a CTA that becomes free takes
// the next task at that time, ties broken by CTA index) and runs its steps in program order.
// Sync reduce model (CostModel::async_reduce false, the spec's): a step runs C (cost c), then
// waits until its chain predecessor's R has finished (a stall, the SM is held), then runs R
// (cost r). Atomic reduces never wait.
// Async reduce model (the dQ writer warp): per CTA, C(s) starts at max(end of C(s-1), end of
// R(s - stage_buffers)) (waiting for a stage buffer is the stall), R(s) starts at max(end of
// C(s), end of R(s-1) on the same writer, end of the chain predecessor). The CTA takes its next
// task when its last compute ends; busy time is compute only and the lower bound is the total
// compute / P. Atomic reduces skip the chain but still occupy the writer and the buffers.
#pragma once

#include <string>
#include <vector>

#include "dash_attn/schedule.h"
#include "schedule/cost_model.h"

namespace dash {

struct StepEvent {
  int sm, task, head, j, i, g;
  double start, compute_end, reduce_start, reduce_end;  // async: the reduce runs on the writer
};

struct SimResult {
  bool ok = true;        // false: the grid deadlocked (error says where)
  std::string error;
  int num_sms = 0;
  double makespan = 0.0;      // the whole call: the main kernel and, where the cost model has
                              // one (CostModel::post_gbytes_per_s > 0), the postprocess
  double main_makespan = 0.0; // the main kernel alone (the last compute or reduce)
  bool async_reduce = false;  // which reduce model produced this (see above)
  double total_work = 0.0;    // sum of c + r over every step (async: c only, the SM's work)
  double lower_bound = 0.0;   // total_work / num_sms
  double total_stall = 0.0;   // time SMs spent waiting for a chain predecessor (async: for a
                              // stage buffer, i.e. for the writer that waits for one)
  std::vector<double> sm_busy;   // compute + reduce time per SM (async: compute)
  std::vector<double> sm_stall;  // waiting time per SM
  std::vector<double> sm_idle;   // makespan - busy - stall (no task left, or tail; the
                                 // postprocess too where it is modelled)
  std::vector<double> stall_by_kv_tile;  // where the stalls are: per KV tile j, all heads
                                         // (async: the KV tile of the delayed compute)
  std::vector<StepEvent> events;         // filled when requested, in simulation order

  double efficiency() const { return makespan > 0 ? lower_bound / makespan : 1.0; }
  double stall_share() const { return makespan > 0 ? total_stall / (num_sms * makespan) : 0.0; }
  double idle_share() const;
};

// The postprocess after the main kernel (CostModel::post_*; see CostParams::post_poll): the end
// of its last block. P SMs with cost.post_blocks_per_sm block slots each; the blocks, one per dQ
// tile in grid order (head, query head, Q tile: the index of `ready`), take the slot that is free
// first and hold it from then until max(then, the tile's ready time) + the tile's conversion.
// Polling: SM s's slots are free from sm_exit[s] (its main CTA has exited) and a tile is ready
// when its chain is complete (ready[tile]); otherwise every slot is free, and every tile ready, at
// main_end. Returns main_end when the postprocess is not modelled.
double postprocess_end(const CostModel& cost, int block_m, int P, double main_end, const std::vector<double>& sm_exit,
                       const std::vector<double>& ready, bool poll);

// record_events fills SimResult::events; record_sms > 0 keeps only the events of SMs below it
// (what a Gantt chart shows), which bounds memory on large problems.
SimResult simulate(const ScheduleModel& sm, const CostModel& cost, int num_sms, Dispatch dispatch,
                   bool record_events = false, int record_sms = 0);

}  // namespace dash
