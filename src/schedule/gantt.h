// dash-attn: SVG Gantt charts of simulated schedules (`dash-attn plan --gantt FILE.svg`).
//
// One panel per schedule, stacked, all on the same time axis so that panels compare at a
// glance: one row per SM, compute coloured by head, reduces darker and hatched, waits for the
// dQ semaphore in red, the lower bound as a dashed line.
#pragma once

#include <string>
#include <vector>

#include "schedule/simulator.h"

namespace dash {

struct GanttPanel {
  std::string title;           // e.g. "descending (dynamic): makespan ..., efficiency ..."
  const SimResult* sim = nullptr;  // simulated with record_events = true
};

struct GanttOptions {
  std::string title;           // headline above all panels
  std::string subtitle;        // second line (problem shape, cost model)
  std::string time_unit = "us";
  int max_rows = 64;           // SM rows drawn per panel; the rest are summarised in a note
  int plot_width = 1200;       // pixels of the time axis
  // Above this many events per panel, each pixel column shows the head that occupies it and
  // the share of it spent waiting, instead of one rectangle per step.
  int max_exact_events = 20000;
};

std::string gantt_svg(const std::vector<GanttPanel>& panels, const GanttOptions& opts);
// Writes gantt_svg to `path`; false (and errno set by the stream) when the file can't be written.
bool write_gantt_svg(const std::string& path, const std::vector<GanttPanel>& panels,
                     const GanttOptions& opts);

}  // namespace dash
