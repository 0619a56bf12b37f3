#include "schedule/cost_model.h"

namespace dash {

CostParams CostParams::for_tiles(int block_m, int block_n) {
  if (block_m == 64 && block_n == 128) return kSm90Params;
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
