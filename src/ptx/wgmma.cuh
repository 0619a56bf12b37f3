// Warpgroup MMA (sm_90a): fences, commit/wait, and m64nNk16 f32 += T * T (T = bf16 or f16), SS
// and RS.
// PTX ISA 9.7.15 (Asynchronous Warpgroup Level Matrix Multiply-Accumulate):
//   9.7.15.5.2 wgmma.mma_async, 9.7.15.7.1 wgmma.fence, 9.7.15.7.2 wgmma.commit_group,
//   9.7.15.7.3 wgmma.wait_group. Descriptors: kernels/sm90/smem_desc.cuh.
// All of these are .sync.aligned: every thread of the warpgroup executes them convergently.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace dash::ptx {

// 9.7.15.7.1: orders earlier register accesses (accumulators, RS A fragments) before the
// wgmma.mma_async that follow.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

// 9.7.15.7.2: closes the group of all wgmma.mma_async issued since the previous commit.
__device__ __forceinline__ void wgmma_commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// 9.7.15.7.3: waits until at most kPending committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void wgmma_wait_group() {
  static_assert(kPending >= 0 && kPending <= 7, "wgmma.wait_group N in [0, 7]");
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// NOTES: an empty asm that claims to read and write each register, so the compiler cannot move
// its own accesses to them across the asynchronous MMA (which it cannot see).
template <int N>
__device__ __forceinline__ void warpgroup_fence_operand(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
template <int N>
__device__ __forceinline__ void warpgroup_fence_operand(uint32_t (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(r[i])::"memory");
}

// 9.7.15.5.2, .m64nNk16.f32.{bf16,f16}.{bf16,f16}: A and B of element type T (__nv_bfloat16 or
// __half; both operands the same type), fp32 accumulation either way. d holds N/2 fp32 per thread
// (accumulator layout in kernels/sm90/fragment.cuh). scale_d == 0 ignores the incoming d
// (D = A*B, zero-init). kTransA/kTransB: 0 = K-major operand, 1 = MN-major (smem descriptors
// only; RS has no trans-a). The RS A registers hold T pairs (fragment.cuh, acc_to_a_frag<T>).
template <int N, typename T>
struct Wgmma;
template <int N>
using WgmmaBf16 = Wgmma<N, __nv_bfloat16>;
template <int N>
using WgmmaF16 = Wgmma<N, __half>;

#define DASH_ACC8(i)                                                                          \
  "+f"(d[i + 0]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]),            \
      "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])

// NOTES: the two specialisations per element type differ only in the PTX type string, so one
// macro writes them; the bf16 instruction strings are byte for byte the ones the tested
// kernels were built with.
#define DASH_DEFINE_WGMMA(CTYPE, PTX_T)                                                          \
  template <>                                                                                    \
  struct Wgmma<64, CTYPE> {                                                                      \
    static constexpr int kAccRegs = 32;                                                          \
                                                                                                 \
    template <int kTransA, int kTransB>                                                          \
    __device__ __forceinline__ static void ss(float (&d)[32], uint64_t desc_a, uint64_t desc_b,  \
                                              int scale_d) {                                     \
      static_assert((kTransA | kTransB | 1) == 1, "transpose immediates are 0 or 1");            \
      asm volatile(                                                                              \
          "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                           \
          "wgmma.mma_async.sync.aligned.m64n64k16.f32." PTX_T "." PTX_T " "                      \
          "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "              \
          "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "    \
          "%32, %33, p, 1, 1, %35, %36;\n}\n"                                                    \
          : DASH_ACC8(0), DASH_ACC8(8), DASH_ACC8(16), DASH_ACC8(24)                             \
          : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB)                   \
          : "memory");                                                                           \
    }                                                                                            \
                                                                                                 \
    template <int kTransB>                                                                       \
    __device__ __forceinline__ static void rs(float (&d)[32], const uint32_t (&a)[4],            \
                                              uint64_t desc_b, int scale_d) {                    \
      static_assert((kTransB | 1) == 1, "transpose immediate is 0 or 1");                        \
      asm volatile(                                                                              \
          "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"                                           \
          "wgmma.mma_async.sync.aligned.m64n64k16.f32." PTX_T "." PTX_T " "                      \
          "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "              \
          "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "    \
          "{%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"                                        \
          : DASH_ACC8(0), DASH_ACC8(8), DASH_ACC8(16), DASH_ACC8(24)                             \
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d),               \
            "n"(kTransB)                                                                         \
          : "memory");                                                                           \
    }                                                                                            \
  };                                                                                             \
                                                                                                 \
  template <>                                                                                    \
  struct Wgmma<128, CTYPE> {                                                                     \
    static constexpr int kAccRegs = 64;                                                          \
                                                                                                 \
    template <int kTransA, int kTransB>                                                          \
    __device__ __forceinline__ static void ss(float (&d)[64], uint64_t desc_a, uint64_t desc_b,  \
                                              int scale_d) {                                     \
      static_assert((kTransA | kTransB | 1) == 1, "transpose immediates are 0 or 1");            \
      asm volatile(                                                                              \
          "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                           \
          "wgmma.mma_async.sync.aligned.m64n128k16.f32." PTX_T "." PTX_T " "                     \
          "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "              \
          "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "     \
          "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "     \
          "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "    \
          "%64, %65, p, 1, 1, %67, %68;\n}\n"                                                    \
          : DASH_ACC8(0), DASH_ACC8(8), DASH_ACC8(16), DASH_ACC8(24), DASH_ACC8(32),             \
            DASH_ACC8(40), DASH_ACC8(48), DASH_ACC8(56)                                          \
          : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB)                   \
          : "memory");                                                                           \
    }                                                                                            \
                                                                                                 \
    template <int kTransB>                                                                       \
    __device__ __forceinline__ static void rs(float (&d)[64], const uint32_t (&a)[4],            \
                                              uint64_t desc_b, int scale_d) {                    \
      static_assert((kTransB | 1) == 1, "transpose immediate is 0 or 1");                        \
      asm volatile(                                                                              \
          "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"                                           \
          "wgmma.mma_async.sync.aligned.m64n128k16.f32." PTX_T "." PTX_T " "                     \
          "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "              \
          "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "     \
          "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "     \
          "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "    \
          "{%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"                                        \
          : DASH_ACC8(0), DASH_ACC8(8), DASH_ACC8(16), DASH_ACC8(24), DASH_ACC8(32),             \
            DASH_ACC8(40), DASH_ACC8(48), DASH_ACC8(56)                                          \
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d),               \
            "n"(kTransB)                                                                         \
          : "memory");                                                                           \
    }                                                                                            \
  };

DASH_DEFINE_WGMMA(__nv_bfloat16, "bf16")
DASH_DEFINE_WGMMA(__half, "f16")

// m64n80k16 (40 accumulator registers): the planned 80-row Q tile of the hdim 128 backward
// (docs/bwd-sm90.md, last section). Written in the twelfth session; its primitive tests
// (Sm90Primitives.Wgmma*N80) had not run on a GPU when it landed.
#define DASH_DEFINE_WGMMA_N80(CTYPE, PTX_T)                                                      \
  template <>                                                                                    \
  struct Wgmma<80, CTYPE> {                                                                      \
    static constexpr int kAccRegs = 40;                                                          \
                                                                                                 \
    template <int kTransA, int kTransB>                                                          \
    __device__ __forceinline__ static void ss(float (&d)[40], uint64_t desc_a, uint64_t desc_b,  \
                                              int scale_d) {                                     \
      static_assert((kTransA | kTransB | 1) == 1, "transpose immediates are 0 or 1");            \
      asm volatile(                                                                              \
          "{\n.reg .pred p;\nsetp.ne.b32 p, %42, 0;\n"                                           \
          "wgmma.mma_async.sync.aligned.m64n80k16.f32." PTX_T "." PTX_T " "                      \
          "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "              \
          "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "     \
          "%32, %33, %34, %35, %36, %37, %38, %39}, "                                            \
          "%40, %41, p, 1, 1, %43, %44;\n}\n"                                                    \
          : DASH_ACC8(0), DASH_ACC8(8), DASH_ACC8(16), DASH_ACC8(24), DASH_ACC8(32)              \
          : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB)                   \
          : "memory");                                                                           \
    }                                                                                            \
                                                                                                 \
    template <int kTransB>                                                                       \
    __device__ __forceinline__ static void rs(float (&d)[40], const uint32_t (&a)[4],            \
                                              uint64_t desc_b, int scale_d) {                    \
      static_assert((kTransB | 1) == 1, "transpose immediate is 0 or 1");                        \
      asm volatile(                                                                              \
          "{\n.reg .pred p;\nsetp.ne.b32 p, %45, 0;\n"                                           \
          "wgmma.mma_async.sync.aligned.m64n80k16.f32." PTX_T "." PTX_T " "                      \
          "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "              \
          "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "     \
          "%32, %33, %34, %35, %36, %37, %38, %39}, "                                            \
          "{%40, %41, %42, %43}, %44, p, 1, 1, %46;\n}\n"                                        \
          : DASH_ACC8(0), DASH_ACC8(8), DASH_ACC8(16), DASH_ACC8(24), DASH_ACC8(32)              \
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d),               \
            "n"(kTransB)                                                                         \
          : "memory");                                                                           \
    }                                                                                            \
  };

DASH_DEFINE_WGMMA_N80(__nv_bfloat16, "bf16")
DASH_DEFINE_WGMMA_N80(__half, "f16")

#undef DASH_DEFINE_WGMMA_N80

// m64n96k16 (48 accumulator registers): the 96-row Q tile draft of the head_dim 64 backward
// (DASH_BWD_SM90_D64_BM=96, docs/bwd-sm90.md "96- and 112-row tiles at head_dim 64").
#define DASH_DEFINE_WGMMA_N96(CTYPE, PTX_T)                                                      \
  template <>                                                                                    \
  struct Wgmma<96, CTYPE> {                                                                      \
    static constexpr int kAccRegs = 48;                                                          \
                                                                                                 \
    template <int kTransA, int kTransB>                                                          \
    __device__ __forceinline__ static void ss(float (&d)[48], uint64_t desc_a, uint64_t desc_b,  \
                                              int scale_d) {                                     \
      static_assert((kTransA | kTransB | 1) == 1, "transpose immediates are 0 or 1");            \
      asm volatile(                                                                              \
          "{\n.reg .pred p;\nsetp.ne.b32 p, %50, 0;\n"                                           \
          "wgmma.mma_async.sync.aligned.m64n96k16.f32." PTX_T "." PTX_T " "                      \
          "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "              \
          "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "     \
          "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47}, "    \
          "%48, %49, p, 1, 1, %51, %52;\n}\n"                                                    \
          : DASH_ACC8(0), DASH_ACC8(8), DASH_ACC8(16), DASH_ACC8(24), DASH_ACC8(32), DASH_ACC8(40) \
          : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB)                   \
          : "memory");                                                                           \
    }                                                                                            \
                                                                                                 \
    template <int kTransB>                                                                       \
    __device__ __forceinline__ static void rs(float (&d)[48], const uint32_t (&a)[4],            \
                                              uint64_t desc_b, int scale_d) {                    \
      static_assert((kTransB | 1) == 1, "transpose immediate is 0 or 1");                        \
      asm volatile(                                                                              \
          "{\n.reg .pred p;\nsetp.ne.b32 p, %53, 0;\n"                                           \
          "wgmma.mma_async.sync.aligned.m64n96k16.f32." PTX_T "." PTX_T " "                      \
          "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "              \
          "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "     \
          "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47}, "    \
          "{%48, %49, %50, %51}, %52, p, 1, 1, %54;\n}\n"                                        \
          : DASH_ACC8(0), DASH_ACC8(8), DASH_ACC8(16), DASH_ACC8(24), DASH_ACC8(32), DASH_ACC8(40) \
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d),               \
            "n"(kTransB)                                                                         \
          : "memory");                                                                           \
    }                                                                                            \
  };

DASH_DEFINE_WGMMA_N96(__nv_bfloat16, "bf16")
DASH_DEFINE_WGMMA_N96(__half, "f16")

#undef DASH_DEFINE_WGMMA_N96

// m64n112k16 (56 accumulator registers): the 112-row Q tile draft of the head_dim 64 backward
// (DASH_BWD_SM90_D64_BM=112).
#define DASH_DEFINE_WGMMA_N112(CTYPE, PTX_T)                                                      \
  template <>                                                                                    \
  struct Wgmma<112, CTYPE> {                                                                      \
    static constexpr int kAccRegs = 56;                                                          \
                                                                                                 \
    template <int kTransA, int kTransB>                                                          \
    __device__ __forceinline__ static void ss(float (&d)[56], uint64_t desc_a, uint64_t desc_b,  \
                                              int scale_d) {                                     \
      static_assert((kTransA | kTransB | 1) == 1, "transpose immediates are 0 or 1");            \
      asm volatile(                                                                              \
          "{\n.reg .pred p;\nsetp.ne.b32 p, %58, 0;\n"                                           \
          "wgmma.mma_async.sync.aligned.m64n112k16.f32." PTX_T "." PTX_T " "                      \
          "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "              \
          "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "     \
          "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "     \
          "%48, %49, %50, %51, %52, %53, %54, %55}, "                                            \
          "%56, %57, p, 1, 1, %59, %60;\n}\n"                                                    \
          : DASH_ACC8(0), DASH_ACC8(8), DASH_ACC8(16), DASH_ACC8(24), DASH_ACC8(32), DASH_ACC8(40),    \
            DASH_ACC8(48)                                                                        \
          : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB)                   \
          : "memory");                                                                           \
    }                                                                                            \
                                                                                                 \
    template <int kTransB>                                                                       \
    __device__ __forceinline__ static void rs(float (&d)[56], const uint32_t (&a)[4],            \
                                              uint64_t desc_b, int scale_d) {                    \
      static_assert((kTransB | 1) == 1, "transpose immediate is 0 or 1");                        \
      asm volatile(                                                                              \
          "{\n.reg .pred p;\nsetp.ne.b32 p, %61, 0;\n"                                           \
          "wgmma.mma_async.sync.aligned.m64n112k16.f32." PTX_T "." PTX_T " "                      \
          "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "              \
          "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "     \
          "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "     \
          "%48, %49, %50, %51, %52, %53, %54, %55}, "                                            \
          "{%56, %57, %58, %59}, %60, p, 1, 1, %62;\n}\n"                                        \
          : DASH_ACC8(0), DASH_ACC8(8), DASH_ACC8(16), DASH_ACC8(24), DASH_ACC8(32), DASH_ACC8(40),    \
            DASH_ACC8(48)                                                                        \
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d),               \
            "n"(kTransB)                                                                         \
          : "memory");                                                                           \
    }                                                                                            \
  };

DASH_DEFINE_WGMMA_N112(__nv_bfloat16, "bf16")
DASH_DEFINE_WGMMA_N112(__half, "f16")

#undef DASH_DEFINE_WGMMA_N112

// m64n176k16, SS only (88 accumulator registers): the S = Q K^T GEMM of the forward's 176-key
// tiles at head_dim 128 on full masks (docs/fwd-sm90.md "176-key tiles"; FlashAttention-3 uses
// 128 x 176 there too). Its primitive is exercised by the forward's tests.
#define DASH_DEFINE_WGMMA_N176(CTYPE, PTX_T)                                                     \
  template <>                                                                                    \
  struct Wgmma<176, CTYPE> {                                                                     \
    static constexpr int kAccRegs = 88;                                                          \
                                                                                                 \
    template <int kTransA, int kTransB>                                                          \
    __device__ __forceinline__ static void ss(float (&d)[88], uint64_t desc_a, uint64_t desc_b,  \
                                              int scale_d) {                                     \
      static_assert((kTransA | kTransB | 1) == 1, "transpose immediates are 0 or 1");            \
      asm volatile(                                                                              \
          "{\n.reg .pred p;\nsetp.ne.b32 p, %90, 0;\n"                                           \
          "wgmma.mma_async.sync.aligned.m64n176k16.f32." PTX_T "." PTX_T " "                     \
          "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "              \
          "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "     \
          "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "     \
          "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "     \
          "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "     \
          "%80, %81, %82, %83, %84, %85, %86, %87}, "                                            \
          "%88, %89, p, 1, 1, %91, %92;\n}\n"                                                    \
          : DASH_ACC8(0), DASH_ACC8(8), DASH_ACC8(16), DASH_ACC8(24), DASH_ACC8(32),             \
            DASH_ACC8(40), DASH_ACC8(48), DASH_ACC8(56), DASH_ACC8(64), DASH_ACC8(72),           \
            DASH_ACC8(80)                                                                        \
          : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB)                   \
          : "memory");                                                                           \
    }                                                                                            \
  };

DASH_DEFINE_WGMMA_N176(__nv_bfloat16, "bf16")
DASH_DEFINE_WGMMA_N176(__half, "f16")

#undef DASH_DEFINE_WGMMA_N176
#undef DASH_DEFINE_WGMMA
#undef DASH_ACC8

// Shorthands: wgmma_ss<N, kTransA, kTransB[, T]>(d, da, db, scale_d),
// wgmma_rs<N, kTransB[, T]>(...); T defaults to bf16.
template <int N, int kTransA, int kTransB, typename T = __nv_bfloat16>
__device__ __forceinline__ void wgmma_ss(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b,
                                         int scale_d) {
  Wgmma<N, T>::template ss<kTransA, kTransB>(d, desc_a, desc_b, scale_d);
}
template <int N, int kTransB, typename T = __nv_bfloat16>
__device__ __forceinline__ void wgmma_rs(float (&d)[N / 2], const uint32_t (&a)[4],
                                         uint64_t desc_b, int scale_d) {
  Wgmma<N, T>::template rs<kTransB>(d, a, desc_b, scale_d);
}

}  // namespace dash::ptx
