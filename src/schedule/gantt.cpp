#include "schedule/gantt.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace dash {

namespace {

// Distinct, colour-blind friendly enough, and free of reds: red means "waiting".
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948",
                                    "#9c755f", "#499894", "#8cd17d", "#d4a6c8", "#86bcb6", "#79706e"};
constexpr int kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);

const char* head_color(int head) { return kPalette[head % kPaletteSize]; }

std::string darker(const char* hex) {
  unsigned v = 0;
  std::sscanf(hex + 1, "%x", &v);
  const unsigned r = ((v >> 16) & 255) * 6 / 10, g = ((v >> 8) & 255) * 6 / 10, b = (v & 255) * 6 / 10;
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", r, g, b);
  return buf;
}

std::string esc(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '<') o += "&lt;";
    else if (ch == '>') o += "&gt;";
    else if (ch == '&') o += "&amp;";
    else o += ch;
  }
  return o;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string fmt_time(double v) {
  char buf[32];
  if (v == std::floor(v) && std::fabs(v) < 1e9) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

double nice_step(double span, int target_ticks) {
  const double raw = span / std::max(1, target_ticks);
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * p) return m * p;
  return 10.0 * p;
}

constexpr int kLeft = 64;      // room for SM labels
constexpr int kRight = 24;
constexpr int kTitleH = 22;

}  // namespace

std::string gantt_svg(const std::vector<GanttPanel>& panels, const GanttOptions& opts) {
  double tmax = 0.0;
  int max_heads = 1;
  for (const GanttPanel& p : panels) {
    if (p.sim == nullptr) continue;
    tmax = std::max(tmax, p.sim->makespan);
    for (const StepEvent& e : p.sim->events) max_heads = std::max(max_heads, e.head + 1);
  }
  if (tmax <= 0) tmax = 1.0;
  const int W = opts.plot_width;
  const double xs = W / tmax;  // pixels per time unit
  auto X = [&](double t) { return kLeft + t * xs; };

  std::ostringstream body;
  int y = 8;
  // ---- headline and legend --------------------------------------------------------------
  body << "<text x='" << kLeft << "' y='" << (y + 16) << "' class='h1'>" << esc(opts.title) << "</text>\n";
  y += 24;
  if (!opts.subtitle.empty()) {
    body << "<text x='" << kLeft << "' y='" << (y + 12) << "' class='s'>" << esc(opts.subtitle) << "</text>\n";
    y += 22;
  }
  int lx = kLeft;
  const int shown_heads = std::min(max_heads, 8);
  for (int h = 0; h < shown_heads; ++h) {
    body << "<rect x='" << lx << "' y='" << y << "' width='14' height='12' fill='" << head_color(h) << "'/>"
         << "<text x='" << lx + 18 << "' y='" << y + 10 << "' class='s'>head " << h << "</text>\n";
    lx += 70;
  }
  if (max_heads > shown_heads) {
    body << "<text x='" << lx << "' y='" << y + 10 << "' class='s'>... " << max_heads
         << " heads (colours repeat every " << kPaletteSize << ")</text>\n";
    lx += 200;
  }
  y += 20;
  lx = kLeft;
  body << "<rect x='" << lx << "' y='" << y << "' width='14' height='12' fill='" << head_color(0) << "'/>"
       << "<text x='" << lx + 18 << "' y='" << y + 10 << "' class='s'>compute C(i,j) (label: Q tile i)</text>\n";
  lx += 230;
  body << "<rect x='" << lx << "' y='" << y << "' width='14' height='12' fill='" << darker(head_color(0))
       << "'/><rect x='" << lx << "' y='" << y << "' width='14' height='12' fill='url(#hatch)'/>"
       << "<text x='" << lx + 18 << "' y='" << y + 10 << "' class='s'>ordered dQ reduce R(i,j)</text>\n";
  lx += 190;
  body << "<rect x='" << lx << "' y='" << y << "' width='14' height='12' fill='url(#stall)'/>"
       << "<text x='" << lx + 18 << "' y='" << y + 10
       << "' class='s'>waiting for the dQ semaphore (stall)</text>\n";
  lx += 250;
  body << "<rect x='" << lx << "' y='" << y << "' width='14' height='12' class='idle'/>"
       << "<text x='" << lx + 18 << "' y='" << y + 10 << "' class='s'>idle (no task)</text>\n";
  lx += 120;
  body << "<line x1='" << lx << "' y1='" << y + 6 << "' x2='" << lx + 16 << "' y2='" << y + 6
       << "' class='lb'/><text x='" << lx + 20 << "' y='" << y + 10
       << "' class='s'>lower bound (work / SMs)</text>\n";
  y += 28;

  // ---- panels ----------------------------------------------------------------------------
  for (const GanttPanel& p : panels) {
    if (p.sim == nullptr) continue;
    const SimResult& sim = *p.sim;
    const int rows = std::min(sim.num_sms, opts.max_rows);
    const int row_h = std::clamp(420 / std::max(1, rows), 6, 24);
    body << "<text x='" << kLeft << "' y='" << y + 15 << "' class='h2'>" << esc(p.title) << "</text>\n";
    y += kTitleH + 4;
    const int top = y;
    const int height = rows * row_h;
    body << "<rect x='" << kLeft << "' y='" << top << "' width='" << num(sim.makespan * xs) << "' height='"
         << height << "' class='idle'/>\n";
    const int label_every = rows <= 24 ? 1 : (rows <= 48 ? 2 : 4);
    for (int s = 0; s < rows; s += label_every)
      body << "<text x='" << kLeft - 6 << "' y='" << top + s * row_h + row_h / 2 + 4
           << "' class='s' text-anchor='end'>SM " << s << "</text>\n";

    size_t shown_events = 0;
    for (const StepEvent& e : sim.events) shown_events += e.sm < rows ? 1 : 0;
    const bool exact = shown_events <= static_cast<size_t>(opts.max_exact_events);
    // Async reduce model: the writer warp's reduces overlap the next computes, so they get the
    // lower third of the row; the stall is the MMA warps' wait for a stage buffer.
    const bool async = sim.async_reduce;
    if (exact) {
      std::vector<int> last_task(rows, -1);
      std::vector<double> last_compute_end(rows, 0.0);
      for (const StepEvent& e : sim.events) {
        if (e.sm >= rows) continue;
        const double ry = top + e.sm * row_h + 1, rh = row_h - 2;
        const char* col = head_color(e.head);
        const double ch = async ? rh * 0.62 : rh;
        body << "<rect x='" << num(X(e.start)) << "' y='" << ry << "' width='"
             << num((e.compute_end - e.start) * xs) << "' height='" << ch << "' fill='" << col
             << "' class='c'/>";
        if (async) {
          if (e.start > last_compute_end[e.sm])
            body << "<rect x='" << num(X(last_compute_end[e.sm])) << "' y='" << ry << "' width='"
                 << num((e.start - last_compute_end[e.sm]) * xs) << "' height='" << ch << "' fill='url(#stall)'/>";
          last_compute_end[e.sm] = e.compute_end;
          const double wy = ry + rh * 0.66, wh = rh * 0.34;
          const std::string d = darker(col);
          body << "<rect x='" << num(X(e.reduce_start)) << "' y='" << num(wy) << "' width='"
               << num((e.reduce_end - e.reduce_start) * xs) << "' height='" << num(wh) << "' fill='" << d
               << "'/>";
        } else if (e.reduce_start > e.compute_end)
          body << "<rect x='" << num(X(e.compute_end)) << "' y='" << ry << "' width='"
               << num((e.reduce_start - e.compute_end) * xs) << "' height='" << rh
               << "' fill='url(#stall)'/>";
        if (!async && e.reduce_end > e.reduce_start) {
          const std::string d = darker(col);
          body << "<rect x='" << num(X(e.reduce_start)) << "' y='" << ry << "' width='"
               << num((e.reduce_end - e.reduce_start) * xs) << "' height='" << rh << "' fill='" << d
               << "'/><rect x='" << num(X(e.reduce_start)) << "' y='" << ry << "' width='"
               << num((e.reduce_end - e.reduce_start) * xs) << "' height='" << rh
               << "' fill='url(#hatch)'/>";
        }
        if ((e.compute_end - e.start) * xs >= 16 && row_h >= 12)
          body << "<text x='" << num(X((e.start + e.compute_end) / 2)) << "' y='" << ry + rh / 2 + 4
               << "' class='t'>" << e.i << "</text>";
        if (last_task[e.sm] != e.task && last_task[e.sm] >= 0)
          body << "<line x1='" << num(X(e.start)) << "' y1='" << top + e.sm * row_h << "' x2='"
               << num(X(e.start)) << "' y2='" << top + (e.sm + 1) * row_h << "' class='tb'/>";
        last_task[e.sm] = e.task;
        body << "\n";
      }
    } else {
      // One bin per pixel column: the head running at the bin's midpoint and the share of the
      // bin spent waiting. Runs of equal bins merge into one rectangle.
      const int bins = static_cast<int>(std::ceil(sim.makespan * xs)) + 1;
      std::vector<int> head(bins);
      std::vector<double> stall(bins);
      const double bw = 1.0 / xs;  // time per bin
      std::vector<std::vector<const StepEvent*>> per_sm(rows);
      for (const StepEvent& e : sim.events)
        if (e.sm < rows) per_sm[e.sm].push_back(&e);
      for (int s = 0; s < rows; ++s) {
        std::fill(head.begin(), head.end(), -1);
        std::fill(stall.begin(), stall.end(), 0.0);
        double prev_ce = 0.0;
        for (const StepEvent* ep : per_sm[s]) {
          const StepEvent& e = *ep;
          const int b0 = std::max(0, static_cast<int>(std::floor(e.start / bw - 0.5)));
          const double busy_end = async ? e.compute_end : e.reduce_end;
          for (int b = b0; b < bins && (b + 0.5) * bw < busy_end; ++b)
            if ((b + 0.5) * bw >= e.start) head[b] = e.head;
          // The SM's wait: for the chain (sync) or for a stage buffer (async).
          const double w0 = async ? prev_ce : e.compute_end, w1 = async ? e.start : e.reduce_start;
          prev_ce = e.compute_end;
          if (w1 > w0) {
            for (int b = static_cast<int>(w0 / bw); b < bins && b * bw < w1; ++b)
              stall[b] += std::max(0.0, std::min((b + 1) * bw, w1) - std::max(b * bw, w0));
          }
        }
        const double ry = top + s * row_h + 1, rh = row_h - 2;
        for (int b = 0; b < bins;) {
          int e = b;
          while (e < bins && head[e] == head[b]) ++e;
          if (head[b] >= 0)
            body << "<rect x='" << num(X(b * bw)) << "' y='" << ry << "' width='" << num((e - b) * bw * xs)
                 << "' height='" << rh << "' fill='" << head_color(head[b]) << "'/>";
          b = e;
        }
        // Waiting share quantised to tenths; drawn over the lower half of the row.
        auto level = [&](int b) { return std::min(10, static_cast<int>(std::ceil(stall[b] / bw * 10.0 - 1e-9))); };
        for (int b = 0; b < bins;) {
          const int lv = level(b);
          int e = b;
          while (e < bins && level(e) == lv) ++e;
          if (lv > 0)
            body << "<rect x='" << num(X(b * bw)) << "' y='" << num(ry + rh * 0.45) << "' width='"
                 << num((e - b) * bw * xs) << "' height='" << num(rh * 0.55) << "' fill='#d62728' fill-opacity='"
                 << std::min(1.0, 0.3 + 0.07 * lv) << "'/>";
          b = e;
        }
        body << "\n";
      }
    }
    // Lower bound and makespan markers.
    body << "<line x1='" << num(X(sim.lower_bound)) << "' y1='" << top - 4 << "' x2='" << num(X(sim.lower_bound))
         << "' y2='" << top + height + 4 << "' class='lb'/>\n";
    body << "<line x1='" << num(X(sim.makespan)) << "' y1='" << top - 4 << "' x2='" << num(X(sim.makespan))
         << "' y2='" << top + height + 4 << "' class='ms'/>\n";
    y = top + height;
    if (sim.num_sms > rows)
      body << "<text x='" << kLeft << "' y='" << y + 30 << "' class='s'>showing SMs 0-" << rows - 1 << " of "
           << sim.num_sms << "</text>\n";
    // Time axis.
    const double step = nice_step(tmax, 10);
    body << "<line x1='" << kLeft << "' y1='" << y + 2 << "' x2='" << kLeft + W << "' y2='" << y + 2
         << "' class='ax'/>\n";
    for (double t = 0; t <= tmax * 1.0001; t += step)
      body << "<line x1='" << num(X(t)) << "' y1='" << y + 2 << "' x2='" << num(X(t)) << "' y2='" << y + 7
           << "' class='ax'/><text x='" << num(X(t)) << "' y='" << y + 18 << "' class='s' text-anchor='middle'>"
           << fmt_time(t) << "</text>\n";
    body << "<text x='" << kLeft + W << "' y='" << y + 30 << "' class='s' text-anchor='end'>time ("
         << esc(opts.time_unit) << ")</text>\n";
    y += 48;
  }

  std::ostringstream svg;
  const int total_w = kLeft + W + kRight;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << total_w << "' height='" << y << "' viewBox='0 0 "
      << total_w << " " << y << "' font-family='Helvetica, Arial, sans-serif'>\n"
      << "<defs>\n"
      << "<pattern id='hatch' width='4' height='4' patternUnits='userSpaceOnUse' patternTransform='rotate(45)'>"
         "<line x1='0' y1='0' x2='0' y2='4' stroke='#000' stroke-opacity='0.35' stroke-width='1.5'/></pattern>\n"
      << "<pattern id='stall' width='5' height='5' patternUnits='userSpaceOnUse' patternTransform='rotate(-45)'>"
         "<rect width='5' height='5' fill='#fde0dd'/>"
         "<line x1='0' y1='0' x2='0' y2='5' stroke='#d62728' stroke-width='2'/></pattern>\n"
      << "</defs>\n<style>\n"
      << ".h1{font-size:16px;font-weight:bold} .h2{font-size:13px;font-weight:bold} .s{font-size:11px;fill:#333}\n"
      << ".t{font-size:9px;fill:#fff;text-anchor:middle} .c{stroke:#fff;stroke-width:0.5}\n"
      << ".idle{fill:#f1f1f1;stroke:#ccc;stroke-width:0.5} .ax{stroke:#333;stroke-width:1}\n"
      << ".lb{stroke:#222;stroke-width:1.5;stroke-dasharray:5,3} .ms{stroke:#d62728;stroke-width:1}\n"
      << ".tb{stroke:#000;stroke-width:1.5}\n"
      << "</style>\n<rect width='100%' height='100%' fill='#fff'/>\n"
      << body.str() << "</svg>\n";
  return svg.str();
}

bool write_gantt_svg(const std::string& path, const std::vector<GanttPanel>& panels,
                     const GanttOptions& opts) {
  std::ofstream f(path);
  if (!f) return false;
  f << gantt_svg(panels, opts);
  return static_cast<bool>(f);
}

}  // namespace dash
