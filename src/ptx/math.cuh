// Fast exp2 for the softmax (PTX ISA, floating-point instructions: ex2.approx.ftz.f32): one MUFU.EX2. Plain exp2f
// (no fast-math) wraps MUFU.EX2 in a fix-up for results in the denormal range (FSETP + two FMUL
// per call: 96 of the 179 instructions per warp and step of the sm90 backward's P phase, ncu
// source page at d2dea79). Here denormal results flush to +0, and exp2(-inf) = +0; P values below
// 2^-126 are below bf16/fp16 resolution of anything they are added to.
#pragma once

namespace dash::ptx {

__device__ __forceinline__ float ex2_approx_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace dash::ptx
