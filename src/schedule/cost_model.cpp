#include "schedule/cost_model.h"

#include <algorithm>

namespace dash {

CostParams CostParams::for_tiles(int block_m, int block_n) {
  // The sm90 kernel's rates, and its 80-row tiles' (kSm90Params80).
  if (block_m == 64 && block_n == 128) return kSm90Params;
  if (block_m == 80 && block_n == 128) return kSm90Params80;
  // The 96 / 112-row tiles at head_dim 64 (96 the default there since the twentieth session;
  // DASH_BWD_SM90_D64_BM): not fitted; the 80-row rates stand in. Checked on the 96-row atomic rows
  // of the 8d47f07 peers run (hdim 64, 1k-16k; `dash-attn plan --block-m 96 --schedule atomic
  // --param per_sm_tflops=...`): 6.5 is the best of 6.0 / 6.5 / 7.0 / 7.5 (rms log ratio error
  // 0.031 at full masks, 0.036 with causal; measured / predicted 0.96-1.08). With the e29ccbd set
  // (twenty-second session) 6.5 and the 80-row set's 6.8 tie at full masks (0.044), 0.043 / 0.049
  // with causal (6.8: measured / predicted 0.95-1.10).
  if ((block_m == 96 || block_m == 112) && block_n == 128) return kSm90Params80;
  return CostParams{};
}

CostModel CostModel::for_shape(int head_dim, int block_m, int block_n) {
  return for_shape(head_dim, block_m, block_n, CostParams::for_tiles(block_m, block_n));
}

CostModel CostModel::for_shape(int head_dim, int block_m, int block_n, const CostParams& params) {
  // The backward of one tile pair runs five GEMMs of bm x bn x d: S = Q K^T, dP = dO V^T,
  // dV += P^T dO, dK += dS^T Q, dQ = dS K, plus the softmax/dS elementwise work on the bm x bn
  // tile, which does not scale with d (compute_overhead_us).
  const double flops = 5.0 * 2.0 * block_m * block_n * static_cast<double>(head_dim);
  const double c_us = flops / (params.per_sm_tflops * 1e12) * 1e6 +
                      params.compute_overhead_us * (static_cast<double>(block_m) * block_n / (64.0 * 64.0));
  // The reduce adds a bm x d fp32 dQ partial into L2; it cannot start before the chain
  // predecessor released the semaphore, so the hand-off latency is paid on every link.
  const double bytes = static_cast<double>(block_m) * head_dim * 4.0;
  const double r_us = bytes / (params.reduce_gbytes_per_s * 1e9) * 1e6 + params.reduce_latency_us;
  CostModel m;
  m.c = c_us;
  m.r = r_us;
  m.name = "default";
  m.async_reduce = params.async_reduce;
  m.stage_buffers = params.stage_buffers;
  m.group_take = params.group_take;
  if (params.atomic_skips_latency) m.r_atomic = r_us - params.reduce_latency_us;
  m.task_us = params.task_overhead_us * (static_cast<double>(block_n) * head_dim / (128.0 * 128.0));
  m.order_penalty_base = params.order_penalty_base;
  m.order_penalty_slope = params.order_penalty_slope;
  m.order_penalty_knee = params.order_penalty_knee;
  m.order_penalty_closed = params.order_penalty_closed;
  if (head_dim == 64 && params.order_penalty_closed >= 0.0 && params.order_penalty_closed_hd64 >= 0.0)
    m.order_penalty_closed = params.order_penalty_closed_hd64;
  m.order_penalty_closed_sym = params.order_penalty_closed_sym;
  m.post_gbytes_per_s = params.post_gbytes_per_s;
  m.post_poll = params.post_poll;
  m.shift_full_tiles_hd128 = params.shift_full_tiles_hd128;
  m.shift_full_tiles_hd64 = params.shift_full_tiles_hd64;
  m.last_wave_split = params.last_wave_split;
  m.post_blocks_per_sm = std::max(1, params.post_blocks_per_sm);
  m.head_dim = head_dim;
  m.l2_mbytes = params.l2_mbytes;
  m.l2_penalty = params.l2_penalty;
  m.l2_knee = params.l2_knee;
  return m;
}

double CostModel::order_width(const ScheduleModel& sm, int num_sms) {
  if (sm.schedule != Schedule::kShift && sm.schedule != Schedule::kSymmetricShift) return 1.0;
  const int w = std::min(sm.group_width, sm.tasks_per_head);
  long long total = 0, longest = 0;
  for (int slot = 0; slot < w; ++slot) {
    const long long s = sm.task_steps(slot);
    total += s;
    longest = std::max(longest, s);
  }
  double width = longest > 0 ? static_cast<double>(total) / static_cast<double>(longest) : 1.0;
  if (num_sms > 0) width = std::min(width, static_cast<double>(num_sms));
  return width;
}

double CostModel::order_factor(const ScheduleModel& sm, int num_sms) const {
  if (sm.schedule != Schedule::kShift && sm.schedule != Schedule::kSymmetricShift) return 1.0;
  if (order_penalty_closed >= 0.0 && sm.shift_rank_closed()) return 1.0 + order_penalty_closed;
  if (order_penalty_closed_sym >= 0.0 && sm.symshift_rank_closed()) return 1.0 + order_penalty_closed_sym;
  if (order_penalty_base == 0.0 && order_penalty_slope == 0.0) return 1.0;
  const double w = order_width(sm, num_sms);
  return 1.0 + order_penalty_base + order_penalty_slope * std::max(0.0, w - order_penalty_knee);
}

double CostModel::l2_heads(const ScheduleModel& sm, int num_sms) {
  const double heads = sm.p.num_heads();
  const double block = std::min<double>(std::max(1, sm.head_block), heads);
  const double by_grid = num_sms > 0 ? static_cast<double>(num_sms) / std::max(1, sm.tasks_per_head) : 1.0;
  return std::min(heads, std::max(block, by_grid));
}

double CostModel::l2_working_set(const ScheduleModel& sm, int num_sms) const {
  if (head_dim <= 0) return 0.0;
  long long steps = 0;  // a head's steps (every query head of its group), over its tasks
  for (int slot = 0; slot < sm.tasks_per_head; ++slot) steps += sm.task_steps(slot);
  const double task_steps = static_cast<double>(steps) / std::max(1, sm.tasks_per_head);
  const double tile_bytes = static_cast<double>(sm.p.block_m) * head_dim * 8.0;  // Q, dO 16-bit; dQ fp32
  return l2_heads(sm, num_sms) * task_steps * tile_bytes;
}

double CostModel::l2_factor(const ScheduleModel& sm, int num_sms) const {
  if (!l2_term()) return 1.0;
  const double x = std::max(0.0, l2_working_set(sm, num_sms) / (l2_mbytes * 1e6) - l2_knee);
  return 1.0 + l2_penalty * x * x;
}

CostModel CostModel::for_schedule(const ScheduleModel& sm, int num_sms) const {
  CostModel m = *this;
  const double l2 = l2_factor(sm, num_sms);
  m.c = c * order_factor(sm, num_sms) * l2;
  m.r = r * l2;
  if (m.r_atomic >= 0.0) m.r_atomic = r_atomic * l2;
  m.l2_mbytes = m.l2_penalty = m.l2_knee = 0.0;
  m.order_penalty_base = m.order_penalty_slope = m.order_penalty_knee = 0.0;
  m.order_penalty_closed = m.order_penalty_closed_sym = -1.0;
  return m;
}

CostModel CostModel::unit(double c, double r) {
  CostModel m;
  m.c = c;
  m.r = r;
  m.name = "unit";
  return m;
}

std::string CostModel::reduce_model() const {
  if (!async_reduce) return "sync (the reduce holds its SM)";
  return "async (dQ writer warp, " + std::to_string(stage_buffers) + (stage_buffers == 1 ? " stage buffer)" : " stage buffers)");
}

}  // namespace dash
