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
#pragma once

#include <cstdint>

#ifdef DASH_BWD_TRACE
namespace dash::kernels::bwd_trace {
constexpr int kCtas = 264, kSides = 256, kEvents = 6;
__device__ unsigned long long g_buf[kCtas * kSides * kEvents];
__device__ __forceinline__ unsigned long long now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
  return t;
}
__device__ __forceinline__ void put(int side_use, int e, unsigned long long v) {
  if (blockIdx.x < kCtas && side_use < kSides) g_buf[(blockIdx.x * kSides + side_use) * kEvents + e] = v;
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
