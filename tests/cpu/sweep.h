// The standard benchmark sweep of docs/perf.md as a tile problem: 16k tokens per batch, hidden
// 2048 (heads = 2048 / head_dim), MHA, seqlen_q = seqlen_k.
#pragma once

#include "dash_attn/schedule.h"

namespace dash {

inline TileProblem sweep_problem(int head_dim, int seqlen, bool causal, int block_m, int block_n) {
  TileProblem p;
  p.batch = 16384 / seqlen;
  p.heads_q = p.heads_kv = 2048 / head_dim;
  p.seqlen_q = p.seqlen_k = seqlen;
  p.block_m = block_m;
  p.block_n = block_n;
  p.causal = causal;
  return p;
}

}  // namespace dash
