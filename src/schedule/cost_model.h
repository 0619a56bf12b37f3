// dash-attn: the cost model of the DAG planner. Maps a tile shape to the two node weights of
// the spec's DAG: c, the compute of one (Q tile, KV tile) pair (five GEMMs plus softmax), and
// r, the serialised dQ reduce of that pair (bulk add of the dQ partial into L2 plus the
// semaphore hand-off). Units are microseconds (the unit model uses abstract units).
#pragma once

#include <string>

namespace dash {

// Rates behind CostModel::for_shape. The defaults are first guesses for one SM of an
// H100/H200-class GPU (see cost_model.cpp); later issues calibrate them from GPU
// measurements, so every field is overridable.
struct CostParams {
  double per_sm_tflops = 3.0;          // achieved dense bf16 rate of one SM in the backward
  double reduce_gbytes_per_s = 64.0;   // one SM's fp32 reduce-add bandwidth into L2 (GB/s)
  double reduce_latency_us = 1.0;      // semaphore acquire/release + bulk-add completion
};

struct CostModel {
  double c = 1.0;  // compute node C(i, j)
  double r = 0.25; // reduce node R(i, j)
  std::string name = "unit";

  // Default model for the kernel's tiles: head_dim and the tile sizes in rows/keys.
  static CostModel for_shape(int head_dim, int block_m, int block_n,
                             const CostParams& params = CostParams{});
  // The abstract model of the spec's closed forms.
  static CostModel unit(double c = 1.0, double r = 0.25);
};

}  // namespace dash
