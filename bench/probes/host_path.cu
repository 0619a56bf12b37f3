// Probe (not part of the build): the host cost of each CUDA call on attn_bwd's host path, in ns per
// call (median of 9 batches of 2000 calls). Written in the twenty-eighth session: a backward of
// 40-90 us (few-task shapes) spent 14-15 us on the host in `dash-attn bench` (bench JSON host_us,
// docs/perf.md v29), and every call starts on an idle GPU there, so the host path is in its time.
//   nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O3 -o /tmp/host_path bench/probes/host_path.cu -lcuda && /tmp/host_path
#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled_v12000

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                             \
  do {                                                                                       \
    cudaError_t e_ = (x);                                                                    \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

__global__ void empty_kernel(int* p) {
  if (p != nullptr && threadIdx.x == 1024) *p = 1;
}
__global__ void big_smem_kernel(int* p) {
  extern __shared__ int s[];
  if (p != nullptr && threadIdx.x == 1024) *p = s[0];
}

template <typename F>
double ns_per_call(F&& f) {
  constexpr int kBatch = 2000;
  std::vector<double> v;
  for (int r = 0; r < 9; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kBatch; ++i) f();
    v.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / kBatch);
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  CHECK(cudaFree(nullptr));
  int dev = 0, n = 0;
  CHECK(cudaGetDevice(&dev));
  void* buf = nullptr;
  CHECK(cudaMalloc(&buf, 64 << 20));
  cudaStream_t st;
  CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q;
  CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q));
  auto encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  CUtensorMap map;
  const cuuint64_t dims[4] = {128, 16, 1024, 1};  // head_dim, heads, seqlen, batch
  const cuuint64_t strides[3] = {128 * 2, 128 * 16 * 2, 128 * 16 * 1024 * 2};
  const cuuint32_t box[4] = {64, 1, 80, 1}, es[4] = {1, 1, 1, 1};
  const int smem = 200 * 1024;
  CHECK(cudaFuncSetAttribute(big_smem_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(132);
  cfg.blockDim = dim3(384);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = st;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  int* null_arg = nullptr;
  struct Row { const char* name; double ns; };
  std::vector<Row> rows;
  rows.push_back({"getenv(DASH_X) (unset)", ns_per_call([] { volatile const char* e = std::getenv("DASH_BWD_SOMETHING"); (void)e; })});
  rows.push_back({"cudaGetDevice", ns_per_call([&] { CHECK(cudaGetDevice(&dev)); })});
  rows.push_back({"cudaDeviceGetAttribute(SM count)", ns_per_call([&] { CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev)); })});
  rows.push_back({"cudaPointerGetAttributes", ns_per_call([&] {
                    cudaPointerAttributes a;
                    CHECK(cudaPointerGetAttributes(&a, static_cast<char*>(buf) + 4096));
                  })});
  rows.push_back({"cuTensorMapEncodeTiled (bf16 4-d, 128B swizzle)", ns_per_call([&] {
                    CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, buf, dims, strides, box, es,
                                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
                    if (r != CUDA_SUCCESS) std::exit(2);
                  })});
  rows.push_back({"cudaFuncSetAttribute(max dynamic smem)", ns_per_call([&] {
                    CHECK(cudaFuncSetAttribute(big_smem_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
                  })});
  rows.push_back({"cudaStreamIsCapturing", ns_per_call([&] {
                    cudaStreamCaptureStatus cs;
                    CHECK(cudaStreamIsCapturing(st, &cs));
                  })});
  rows.push_back({"cudaGetLastError", ns_per_call([&] { (void)cudaGetLastError(); })});
  // Launches: the GPU runs them at its pace; the queue stays short enough (a sync per batch) not to block.
  rows.push_back({"cudaLaunchKernelEx (PDL attr, 132 x 384, 200 KiB smem)", ns_per_call([&] {
                    CHECK(cudaLaunchKernelEx(&cfg, big_smem_kernel, null_arg));
                  })});
  CHECK(cudaStreamSynchronize(st));
  rows.push_back({"empty_kernel<<<132, 384, 0, st>>>", ns_per_call([&] { empty_kernel<<<132, 384, 0, st>>>(null_arg); })});
  CHECK(cudaStreamSynchronize(st));
  CHECK(cudaGetLastError());
  for (const Row& r : rows) std::printf("%-60s %8.1f ns\n", r.name, r.ns);
  CHECK(cudaFree(buf));
  return 0;
}
