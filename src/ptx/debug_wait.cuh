// Bounded waits for DASH_DEBUG_WAITS builds (CMake option DASH_DEBUG_WAITS=ON): a wait that has
// not completed after DASH_DEBUG_WAIT_NS nanoseconds of wall time (%globaltimer; default 4 s)
// prints what it waited for, gives the other stuck threads half a second to print theirs, and
// traps. Wall time, checked every 256 polls, instead of a poll count: the poll loop's timing
// stays close to the release build's (a counter-per-poll bound hid the two-writer + take-ahead
// hang of docs/perf.md v7), and the bound does not depend on how fast a poll is.
#pragma once

#include <cstdint>
#include <cuda/ptx>

#ifdef DASH_DEBUG_WAITS
#ifndef DASH_DEBUG_WAIT_NS
#define DASH_DEBUG_WAIT_NS 4000000000ull
#endif

namespace dash::ptx {

__device__ __forceinline__ uint64_t globaltimer_ns() { return cuda::ptx::get_sreg_globaltimer(); }

// One wait's watch: expired() after DASH_DEBUG_WAIT_NS since its first check.
struct WaitWatch {
  uint64_t t0 = 0;
  uint32_t polls = 0;
  __device__ __forceinline__ bool expired() {
    if ((++polls & 255u) != 0) return false;
    const uint64_t t = globaltimer_ns();
    if (t0 == 0) t0 = t;
    return t - t0 > DASH_DEBUG_WAIT_NS;
  }
};

// After a report: let the other stuck threads report too, then trap (the launch fails with
// cudaErrorIllegalInstruction / "unspecified launch failure" and the host sees an error).
__device__ __forceinline__ void trap_after_reports() {
  const uint64_t t = globaltimer_ns();
  while (globaltimer_ns() - t < 500000000ull) {
  }
  __trap();
}

}  // namespace dash::ptx
#endif  // DASH_DEBUG_WAITS
