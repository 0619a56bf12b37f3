// The one place where the run-time (dtype, head_dim, causal) of an attention call becomes the
// template parameters <T, D, kCausal> of a kernel launcher: dispatch<F>(...) runs
// F<T, D, kCausal>::run(args...) for bf16/fp16 x head_dim 64/128 x causal/full (callers check
// that head_dim is 64 or 128; any other value takes the 128 branch).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "dash_attn/attention.h"

namespace dash::kernels {

template <template <typename, int, bool> class F, typename... Args>
cudaError_t dispatch(DType dtype, int head_dim, bool causal, Args&&... args) {
  if (dtype == DType::kBF16) {
    if (head_dim == 64)
      return causal ? F<__nv_bfloat16, 64, true>::run(args...) : F<__nv_bfloat16, 64, false>::run(args...);
    return causal ? F<__nv_bfloat16, 128, true>::run(args...) : F<__nv_bfloat16, 128, false>::run(args...);
  }
  if (head_dim == 64) return causal ? F<__half, 64, true>::run(args...) : F<__half, 64, false>::run(args...);
  return causal ? F<__half, 128, true>::run(args...) : F<__half, 128, false>::run(args...);
}

}  // namespace dash::kernels
