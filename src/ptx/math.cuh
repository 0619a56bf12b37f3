// Fast exp2 for the softmax, two ways.
// - ex2_approx_ftz (PTX ISA, floating-point instructions: ex2.approx.ftz.f32): one MUFU.EX2. Plain exp2f
//   (no fast-math) wraps MUFU.EX2 in a fix-up for results in the denormal range (FSETP + two FMUL
//   per call: 96 of the 179 instructions per warp and step of the sm90 backward's P phase, ncu
//   source page at d2dea79). Here denormal results flush to +0, and exp2(-inf) = +0; P values below
//   2^-126 are below bf16/fp16 resolution of anything they are added to.
// - ex2_fma: the same function on the FMA pipe (no MUFU), for a share of the softmax's elements:
//   the MUFU unit does 16 exp2 per clock per SM against 128 FMAs, so where the softmax is
//   MUFU-bound (the forward at head_dim 64: one exp2 per 256 FLOPs of its two GEMMs) moving a
//   quarter of the exp2s to the FMA pipe shortens it. The kernels choose the share at compile time
//   (fwd_exp2_fma_every / bwd_exp2_fma_every below).
#pragma once

// Every N-th softmax element (N > 0) takes ex2_fma, the others MUFU.EX2; 0: MUFU only. Per
// direction and head dim, the measured choice (docs/perf.md v11: A/B of N = 2, 4, 8 against MUFU
// only, 76df857): the forward at head_dim 64 (MUFU-bound: +1.3% geomean, up to +4.5% causal 16k)
// and the backward at head_dim 128 (+1.4%) take every 4th; the forward at 128 (-4.5% with every
// 4th: the extra instructions cost issue slots, its MUFU work hides under the other warpgroup's
// GEMMs) and the backward at 64 (-2.5%) keep MUFU only. CMake overrides them for experiments
// (-DDASH_FWD_EXP2_FMA_EVERY_HD64=N ...).
#ifndef DASH_FWD_EXP2_FMA_EVERY_HD64
#define DASH_FWD_EXP2_FMA_EVERY_HD64 4
#endif
#ifndef DASH_FWD_EXP2_FMA_EVERY_HD128
#define DASH_FWD_EXP2_FMA_EVERY_HD128 0
#endif
#ifndef DASH_BWD_EXP2_FMA_EVERY_HD64
#define DASH_BWD_EXP2_FMA_EVERY_HD64 0
#endif
#ifndef DASH_BWD_EXP2_FMA_EVERY_HD128
#define DASH_BWD_EXP2_FMA_EVERY_HD128 4
#endif

namespace dash::ptx {

__device__ __forceinline__ float ex2_approx_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// 2^x = 2^n * 2^f with n = floor(x), f = x - n in [0, 1): n comes from one round-down add of
// 1.5 * 2^23 (its low mantissa bits then hold n), 2^f from a cubic with p(0) = 1 exactly
// (max relative error 9.5e-5 in fp32 Horner form, against 2^-8 = 3.9e-3 for a bf16 ulp and
// 4.9e-4 for an fp16 ulp; coefficients fitted for minimax relative error on [0, 1)), and the
// result's exponent is n added into p's exponent field. x is clamped at -127: x <= -127 gives
// exactly +0 (p(0) = 1 makes the exponent field 0, mantissa 0), -inf included. For the softmax x
// is <= 0 up to rounding; a large positive x (only for entries masked afterwards) gives garbage
// bits but no trap. 7 FMA-pipe instructions + 1 integer shift-add, no MUFU.
__device__ __forceinline__ float ex2_fma(float x) {
  constexpr float kRound = 12582912.f;  // 1.5 * 2^23
  x = fmaxf(x, -127.f);
  const float j = __fadd_rd(x, kRound);  // kRound + floor(x)
  const float f = x - (j - kRound);      // [0, 1)
  const float p = fmaf(fmaf(fmaf(0.07714355736970901f, f, 0.22765065729618073f), f, 0.6950706243515015f), f, 1.f);
  return __uint_as_float(__float_as_uint(p) + (__float_as_uint(j) << 23));
}

// Element i of an unrolled softmax loop: ex2_fma for every kEvery-th element, else MUFU.
template <int kEvery>
__device__ __forceinline__ float ex2_mixed(int i, float x) {
  if constexpr (kEvery > 0) {
    if (i % kEvery == kEvery - 1) return ex2_fma(x);
  }
  return ex2_approx_ftz(x);
}

constexpr int fwd_exp2_fma_every(int head_dim) {
  return head_dim == 64 ? DASH_FWD_EXP2_FMA_EVERY_HD64 : DASH_FWD_EXP2_FMA_EVERY_HD128;
}
constexpr int bwd_exp2_fma_every(int head_dim) {
  return head_dim == 64 ? DASH_BWD_EXP2_FMA_EVERY_HD64 : DASH_BWD_EXP2_FMA_EVERY_HD128;
}

}  // namespace dash::ptx
