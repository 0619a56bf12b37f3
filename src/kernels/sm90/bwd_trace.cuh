// A per-side timeline of the sm90 backward's main kernel, for DASH_BWD_TRACE builds only (CMake
// option DASH_BWD_TRACE=ON; a diagnostic, never in the release build: the marks cost registers and
// stores in the MMA warps). MMA thread 0 of each CTA stamps %globaltimer (ns) at fixed points of
// every side it runs (kEvents words per side, slot (CTA, side_use)); the launcher clears the buffer
// before the launch and, when DASH_BWD_TRACE_FILE is set, waits for the kernel and writes the
// stamps as CSV (scripts/bwd_trace.py reads them). Marks of CTAs >= kCtas or sides >= kSides are
// dropped.
//   0 side top (its task read)        1 K / V landed (kv_full)        2 (unused: a mark inside the
//   step loop made the 80-row kernels spill 60-170 B)  3 last step done (loop exit)
//   4 dK / dV stored                  5 meta: KV tile j, steps, head
// and the dQ writers stamp each chain link (g_chain below).
#pragma once

#include <cstdint>
#include <cuda/ptx>

#ifdef DASH_BWD_TRACE
namespace dash::kernels::bwd_trace {
constexpr int kCtas = 264, kSides = 256, kEvents = 6;
__device__ unsigned long long g_buf[kCtas * kSides * kEvents];
__device__ __forceinline__ unsigned long long now() { return cuda::ptx::get_sreg_globaltimer(); }
__device__ __forceinline__ void put(int side_use, int e, unsigned long long v) {
  if (blockIdx.x < kCtas && side_use < kSides) g_buf[(blockIdx.x * kSides + side_use) * kEvents + e] = v;
}
// The dQ chains (thirty-fourth session): the dQ writer stamps, per (dQ tile, rank), when the MMA warps
// had staged the partial (its dq_full wait done), when the predecessor's release was acquired, and
// when its own release was issued; slot sem_index * kChainRanks + rank (tiles or ranks beyond the
// buffer dropped). From these, per link of a chain: the latency from the predecessor's release to
// this one's (acquire + bulk reduce + completion + release) and whether the writer waited on the
// chain or on its own MMA warps (scripts/bwd_chain.py).
constexpr int kChainRanks = 256, kChainEntries = 1 << 21, kChainEvents = 3;  // (48 MiB)
__device__ unsigned long long g_chain[kChainEntries * kChainEvents];
// (staged and acquired: the low 32 bits of %globaltimer, two registers fewer in the 24-register
// writer; the reader rebuilds them from released, which is at most ms later.)
__device__ __forceinline__ uint32_t now32() { return cuda::ptx::get_sreg_globaltimer_lo(); }
__device__ __forceinline__ void chain_put(int sem_index, int rank, uint32_t staged, uint32_t acquired,
                                          unsigned long long released) {
  const long long e = static_cast<long long>(sem_index) * kChainRanks + rank;
  if (rank < kChainRanks && e < kChainEntries) {
    g_chain[e * kChainEvents + 0] = staged;
    g_chain[e * kChainEvents + 1] = acquired;
    g_chain[e * kChainEvents + 2] = released;
  }
}
}  // namespace dash::kernels::bwd_trace
#define DASH_BWD_TRACE_MARK(cond, side_use, e)                                           \
  do {                                                                                   \
    if (cond) ::dash::kernels::bwd_trace::put(side_use, e, ::dash::kernels::bwd_trace::now()); \
  } while (0)
#define DASH_BWD_TRACE_META(cond, side_use, j, steps, head)                                                     \
  do {                                                                                                          \
    if (cond)                                                                                                   \
      ::dash::kernels::bwd_trace::put(side_use, 5,                                                              \
                                      (static_cast<unsigned long long>(static_cast<uint32_t>(head)) << 32) |    \
                                          (static_cast<unsigned long long>((j) & 0xffff) << 16) | ((steps) & 0xffff)); \
  } while (0)
#else
#define DASH_BWD_TRACE_MARK(cond, side_use, e) \
  do {                                         \
  } while (0)
#define DASH_BWD_TRACE_META(cond, side_use, j, steps, head) \
  do {                                                      \
  } while (0)
#endif
