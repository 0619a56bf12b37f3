// Warpgroup register reallocation. PTX ISA 9.7.19.5 (setmaxnreg, sm_90a). Executed by every
// thread of a warpgroup; takes effect only when the kernel has a register cap at entry
// (__launch_bounds__(threads, 1)); ptxas warns C7508 otherwise (the build treats that as an error).
#pragma once

namespace dash::ptx {

template <int kRegs>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(kRegs % 8 == 0 && kRegs >= 24 && kRegs <= 256, "setmaxnreg range");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

template <int kRegs>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(kRegs % 8 == 0 && kRegs >= 24 && kRegs <= 256, "setmaxnreg range");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

}  // namespace dash::ptx
