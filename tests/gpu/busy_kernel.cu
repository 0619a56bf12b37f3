// A kernel that keeps SMs busy for a while, for determinism-under-load tests.
#include <cuda_runtime.h>

namespace dash::test {

__global__ void busy_kernel(float* sink, long long cycles) {
  const long long start = clock64();
  float x = threadIdx.x;
  while (clock64() - start < cycles) x = x * 0.999f + 1.0f;
  if (x == -1.0f) sink[threadIdx.x] = x;  // never true; keeps the loop alive
}

cudaError_t launch_busy(float* sink, int blocks, long long cycles, cudaStream_t stream) {
  busy_kernel<<<blocks, 128, 0, stream>>>(sink, cycles);
  return cudaGetLastError();
}

}  // namespace dash::test
