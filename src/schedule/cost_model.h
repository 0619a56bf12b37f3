// dash-attn: the cost model of the DAG planner. Maps a tile shape to the two node weights of
// the spec's DAG: c, the compute of one (Q tile, KV tile) pair (five GEMMs plus softmax), and
// r, the serialised dQ reduce of that pair (bulk add of the dQ partial into L2 plus the
// semaphore hand-off). Units are microseconds (the unit model uses abstract units).
#pragma once

#include <string>

namespace dash {

// Rates behind CostModel::for_shape. The defaults (CostParams{}) are the sm80 kernel's set
// (src/kernels/attn_bwd_sm80.cu, tiles 64x64, used for hdim 64 and fp16), calibrated on an H200
// (132 SMs, our sm80 backward v2 at commit 5704589, bf16; the 24-point sweep
// docs/data/bench-h200-5704589.json, table in docs/schedules.md): per_sm_tflops and
// compute_overhead_us fit the atomic schedule at hdim 64 and 128 (c = 3.44 / 4.63 us, the median
// over the 12 shapes of each head dim), the reduce (r = 1.26 / 1.51 us, unchanged from the
// 8-shape fit) is a best grid point by the number of points where `auto` is within 3% of the
// measured best (21/24), then by the pairs in order. The grid search is
// Calibration.DISABLED_FitCostParams in tests/cpu/test_async_reduce.cpp. The sm90 kernel (tiles
// 64x128) has its own set, kSm90Params below; CostParams::for_tiles picks the set by the tiles,
// and the planner's callers (the `auto` resolution, `dash-attn plan`, `dash-attn bench`) use it.
// Every field is overridable.
struct CostParams {
  double per_sm_tflops = 2.2;          // achieved dense bf16 rate of one SM in the backward
  double compute_overhead_us = 2.25;   // per 64x64 tile pair (scales with bm*bn, not with d):
                                       // softmax, exp, dS, pipeline bubbles, masking
  double reduce_gbytes_per_s = 64.0;   // one SM's fp32 reduce-add bandwidth into L2 (GB/s)
  double reduce_latency_us = 1.0;      // semaphore acquire/release + bulk-add completion
  bool async_reduce = true;            // the dQ writer warp model (see CostModel::async_reduce)
  int stage_buffers = 2;               // smem dQ stage depth between MMA warps and writer (a
                                       // fitted, effective value: see kSm90Params)

  // The calibrated set for the backward kernel with these tiles: 64x128 is the sm90 kernel
  // (src/kernels/attn_bwd_sm90.cu, see kSm90Params below); every other tile shape gets the sm80
  // set above (CostParams{}), unchanged.
  static CostParams for_tiles(int block_m, int block_n);
};

// The set of the sm90 backward (src/kernels/attn_bwd_sm90.cu, tiles 64x128), calibrated on an
// H200 (132 SMs, commit e06bd5f, bf16 hdim 128; the 12-point sweep
// docs/data/bench-h200-sm90-e06bd5f.json, table in docs/schedules.md) by
// Calibration.DISABLED_FitSm90CostParams. One head dim identifies only c and r, not their
// parts: the overhead is folded into the rate (0) and r keeps the sm80 writer's 64 GB/s + 1.0 us
// (1.51 us: the same bulk reduce-add of a 32 KiB dQ tile). The stage buffers are an effective
// value, not the kernel's 2: with 1 (the MMA warps wait for the previous reduce; on this sweep
// exactly the predictions of the spec's sync model) `auto` is within 3% of the measured best at
// 11/12 points, with 2 or 3 at 9/12 (compute refitted each time); per_sm_tflops = 4.3 then fits
// atomic (c = 2.44 us, c + r = 3.95 us per 64x128 tile pair, mean error 15%).
inline constexpr CostParams kSm90Params{.per_sm_tflops = 4.3,
                                        .compute_overhead_us = 0.0,
                                        .reduce_gbytes_per_s = 64.0,
                                        .reduce_latency_us = 1.0,
                                        .async_reduce = true,
                                        .stage_buffers = 1};

struct CostModel {
  double c = 1.0;  // compute node C(i, j)
  double r = 0.25; // reduce node R(i, j)
  std::string name = "unit";
  // Reduce model.
  //   false (sync, the spec's model): the reduce runs on the SM after its compute and holds it,
  //     including the wait for the chain predecessor. The closed forms are for this model.
  //   true (async, the sm80 backward since the dQ writer warp): the MMA warps hand each dQ
  //     partial to a writer warp through `stage_buffers` smem buffers. Per CTA, over its steps
  //     s in program order (across tasks): C(s) starts at max(end of C(s-1), end of
  //     R(s - stage_buffers)) and R(s) starts at max(end of C(s), end of R(s-1) (one writer, in
  //     order), end of the chain predecessor). The reduce is not SM work; a CTA takes its next
  //     task when its last compute ends, its writer drains the old reduces meanwhile.
  bool async_reduce = false;
  int stage_buffers = 2;
  // Experiments only (async model): each compute takes c * (1 + jitter * z), z a seeded
  // pseudo-random standard normal per (SM, step), clamped to [0.25 c, 4 c]. 0 = deterministic
  // costs (every planner decision uses 0). Models the step-to-step variation of a real GPU.
  double jitter = 0.0;
  unsigned long long jitter_seed = 1;

  // Default model for the kernel's tiles: head_dim and the tile sizes in rows/keys, with the
  // rates of CostParams::for_tiles(block_m, block_n), or the given ones.
  static CostModel for_shape(int head_dim, int block_m, int block_n);
  static CostModel for_shape(int head_dim, int block_m, int block_n, const CostParams& params);
  // The abstract model of the spec's closed forms.
  static CostModel unit(double c = 1.0, double r = 0.25);
  // "sync" or "async (N stage buffers)", for reports.
  std::string reduce_model() const;
};

}  // namespace dash
