// Probe (built as build/dq_reduce_bw so that CI compiles it; not a test): how fast can every SM
// push dQ partials into L2 with the bulk reduce-add, and does a CTA pair that first sums its
// partials through DSMEM (each CTA then reduces half a tile) push them faster? Written in the tenth
// session (docs/perf.md "What limits the kernel": the dq_empty wait, 14% of the backward's MMA loop
// at hdim 128, sits behind ~1.8 TB/s of fp32 reduce-adds into L2). Ran on the H200 at 12e4c7f
// (docs/bwd-sm90.md, the cluster-pair section): solo 1.17 us per step (3.7 TB/s), pair 1.47
// (slower): the reduce traffic is not the bound.
//   nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O3 -Itools -o /tmp/dq_reduce_bw bench/probes/dq_reduce_bw.cu
//   /tmp/dq_reduce_bw [STEPS (2000)] [ENERGY_SECONDS (2; 0: off)] [PACE_NS (2500; 0: no paced table)]
// Energy (thirty-ninth session, docs/perf.md v40 item 6: skipping the backward's dQ reduce made it 6.4-7.4%
// faster at the H100's power cap, so the question for the pair design became energy, not time): each
// variant once more as one launch of about ENERGY_SECONDS, NVML's energy counter (tools/nvml_probe.h)
// around it, and the GPU's power with nothing running (1 s) before; printed per CTA-step: the energy,
// the energy above the idle power, and that per byte of L2 traffic (reduce solo: 32 KiB, pair: 16 KiB
// per CTA-step). Pairs pay off at the power cap only if their step costs less energy than solo's. Also
// the load side of a step (`load solo` / `load pair, multicast`, load_kernel below: 32 KiB of Q + dO per
// CTA-step from L2, or 16 KiB with the pair's multicast).
// Ran in the fortieth session (H100, docs/perf.md v41): unpaced, the pair's step costs more above idle than
// solo's (reduce 1.575 against 1.283 uJ, loads 0.538 against 0.287), but it is also slower per step, and
// energy above idle is mostly active power times time. So a third table runs every variant at one step
// per PACE_NS (the same wall time for all) and subtracts a paced empty loop: the steps' own energy.
// Every variant runs one CTA per SM (132 on the H200), 128 threads, for `iters` steps; a step is
// what the backward's writer does per staged dQ tile:
//   solo   each CTA: one 32 KiB bulk reduce-add of its staged partial, at most 2 in flight with
//          completion waits (the kernel's two writers), tiles private to the CTA (L2-resident)
//          or shared by all CTAs (`shared`: the same 16 tiles for everyone, the concurrent adds
//          into one dQ tile that the atomic mode and FA3's orders make);
//   pair   clusters of 2: each CTA sends the half of its partial that the other one owns into
//          the peer's smem (DSMEM stores), cluster barrier, adds the received half into its own
//          half, one 16 KiB bulk reduce-add; the same in-flight rule. Half the L2 reduce bytes,
//          plus 16 KiB of DSMEM traffic and one cluster barrier per CTA per step.
// Printed: us per step (the whole grid's time / iters) and the L2 byte rate. The backward at
// hdim 128 full 8k spends ~2.4 us per step; if `solo` already needs ~that per step, the reduce
// traffic is the bound, and `pair`'s time per step says what the pre-sum would leave.
#include <cooperative_groups.h>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda/ptx>
#include <cuda_runtime.h>
#include <thread>

#include "nvml_probe.h"

namespace cg = cooperative_groups;

#define CHECK(x)                                                                                    \
  do {                                                                                              \
    cudaError_t e_ = (x);                                                                           \
    if (e_ != cudaSuccess) {                                                                        \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));      \
      std::exit(1);                                                                                 \
    }                                                                                               \
  } while (0)

constexpr int kThreads = 128;
constexpr int kTileFloats = 64 * 128;  // one dQ tile of the hdim 128 backward: 64 rows x 128, fp32
constexpr int kTileBytes = kTileFloats * 4;
constexpr int kHalfFloats = kTileFloats / 2;
constexpr int kTilesPerCta = 4;  // private footprint: 132 x 4 x 32 KiB = 16.5 MiB, inside L2

__device__ __forceinline__ float* dst_tile(float* dst, int shared_tiles, int cta, int it) {
  const int tile = shared_tiles > 0 ? it % shared_tiles : cta * kTilesPerCta + it % kTilesPerCta;
  return dst + static_cast<size_t>(tile) * kTileFloats;
}

// Paced runs (PACE_NS > 0): step `it` starts no earlier than t0 + it * pace_ns of %globaltimer (due times
// are cumulative, so the timer's granularity only jitters a step, never the mean period). Every variant
// then takes the same wall time per step (if it can keep up), so the energy above the paced empty loop
// (`pace only`) is the steps' own energy, not the GPU's active power times a longer or shorter run.
__device__ __forceinline__ void pace(uint64_t t0, int it, int pace_ns) {
  if (pace_ns <= 0) return;
  const uint64_t due = t0 + static_cast<uint64_t>(it) * static_cast<uint64_t>(pace_ns);
  while (cuda::ptx::get_sreg_globaltimer() < due) __nanosleep(64);
}

// The pacing alone: the baseline of the paced table.
__global__ void __launch_bounds__(kThreads, 1) pace_kernel(int iters, int pace_ns) {
  if (threadIdx.x != 0) return;
  const uint64_t t0 = cuda::ptx::get_sreg_globaltimer();
  for (int it = 0; it < iters; ++it) pace(t0, it, pace_ns);
}

// Two staged buffers, like the kernel's; step `it` reduces buffer it % 2, at most two in flight.
__global__ void __launch_bounds__(kThreads, 1) solo_kernel(float* dst, int iters, int shared_tiles, int pace_ns) {
  extern __shared__ __align__(128) float smem[];
  for (int i = threadIdx.x; i < 2 * kTileFloats; i += kThreads) smem[i] = 0.25f * static_cast<float>(i % 7 - 3);
  cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
  __syncthreads();
  if (threadIdx.x != 0) return;
  const uint64_t t0 = cuda::ptx::get_sreg_globaltimer();
  for (int it = 0; it < iters; ++it) {
    pace(t0, it, pace_ns);
    cuda::ptx::cp_reduce_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, cuda::ptx::op_add,
                                    dst_tile(dst, shared_tiles, blockIdx.x, it), smem + (it & 1) * kTileFloats,
                                    static_cast<uint32_t>(kTileBytes));
    cuda::ptx::cp_async_bulk_commit_group();
    cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<1>{});  // completion of the previous step's
  }
  cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<0>{});
}

// smem: P[2] (32 KiB each, the staged partials) then R[2] (16 KiB each, the halves received).
// CTA rank r owns rows [32 r, 32 r + 32) of the tile (floats [r * kHalfFloats, +kHalfFloats)).
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(kThreads, 1)
    pair_kernel(float* dst, int iters, int shared_tiles, int pace_ns) {
  extern __shared__ __align__(128) float smem[];
  cg::cluster_group cluster = cg::this_cluster();
  const int r = static_cast<int>(cluster.block_rank());
  float* P = smem;
  float* R = smem + 2 * kTileFloats;
  float* peer_R = cluster.map_shared_rank(R, r ^ 1);
  for (int i = threadIdx.x; i < 2 * kTileFloats; i += kThreads) P[i] = 0.25f * static_cast<float>(i % 7 - 3);
  cluster.sync();  // the peer is running before its smem is written
  const int pair = blockIdx.x / 2;
  const uint64_t t0 = cuda::ptx::get_sreg_globaltimer();
  for (int it = 0; it < iters; ++it) {
    pace(t0, it, pace_ns);
    float* p = P + (it & 1) * kTileFloats;
    const float4* give = reinterpret_cast<const float4*>(p + (r ^ 1) * kHalfFloats);
    float4* to = reinterpret_cast<float4*>(peer_R + (it & 1) * kHalfFloats);
    for (int i = threadIdx.x; i < kHalfFloats / 4; i += kThreads) to[i] = give[i];  // DSMEM stores
    cluster.sync();  // release/acquire: the peer's half has landed; R[it & 1] of 2 steps ago is consumed
    float4* mine = reinterpret_cast<float4*>(p + r * kHalfFloats);
    const float4* got = reinterpret_cast<const float4*>(R + (it & 1) * kHalfFloats);
    for (int i = threadIdx.x; i < kHalfFloats / 4; i += kThreads) {
      // a fixed order, rank 0's partial first: the pair's sum is the same bits whichever CTA adds
      const float4 a = r == 0 ? mine[i] : got[i], b = r == 0 ? got[i] : mine[i];
      mine[i] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
    }
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    __syncthreads();
    if (threadIdx.x == 0) {
      float* d = dst_tile(dst, shared_tiles, pair, it) + r * kHalfFloats;
      cuda::ptx::cp_reduce_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, cuda::ptx::op_add, d,
                                      p + r * kHalfFloats, static_cast<uint32_t>(kHalfFloats * 4));
      cuda::ptx::cp_async_bulk_commit_group();
      cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<1>{});
    }
  }
  if (threadIdx.x == 0) cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<0>{});
  cluster.sync();  // no CTA leaves while its peer may still store into its smem
}

// The load side of a step (the pair design's other half, docs/bwd-sm90.md "2-CTA pairs"): the Q and dO
// tiles of a 64-row step at hdim 128, 32 KiB of bf16, into a 2-stage smem ring with a 1-D bulk copy that
// completes on an mbarrier, from kSrcTiles tiles that every CTA reads in turn (L2-resident, like a head's
// Q / dO tiles that all of its KV tasks read). kPair (launched as clusters of 2): each CTA copies half of
// the tile with .multicast::cluster into both CTAs' stage (each CTA's barrier expects the whole tile), and
// a cluster barrier per step keeps either CTA from refilling a stage its peer still waits on; half the
// L2 reads per CTA-step.
constexpr int kLoadBytes = 32768;
constexpr int kSrcTiles = 16;
template <bool kPair>
__global__ void __launch_bounds__(kThreads, 1) load_kernel(const uint8_t* src, int iters, int pace_ns) {
  extern __shared__ __align__(128) uint8_t stage[];
  __shared__ __align__(8) uint64_t bar[2];
  const int r = kPair ? static_cast<int>(cg::this_cluster().block_rank()) : 0;
  const int unit = kPair ? static_cast<int>(blockIdx.x) / 2 : static_cast<int>(blockIdx.x);
  if (threadIdx.x == 0) {
    cuda::ptx::mbarrier_init(&bar[0], 1);
    cuda::ptx::mbarrier_init(&bar[1], 1);
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  }
  if constexpr (kPair) cg::this_cluster().sync(); else __syncthreads();
  const uint64_t t0 = cuda::ptx::get_sreg_globaltimer();
  for (int it = 0; it < iters; ++it) {
    const int st = it & 1;
    if (threadIdx.x == 0) {
      pace(t0, it, pace_ns);
      cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                           &bar[st], static_cast<uint32_t>(kLoadBytes));
      const uint8_t* tile = src + static_cast<size_t>((unit + it) % kSrcTiles) * kLoadBytes;
      if constexpr (kPair) {
        const uint32_t half = kLoadBytes / 2;
        cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_global, stage + st * kLoadBytes + r * half,
                                 tile + r * half, half, &bar[st], static_cast<uint16_t>(0x3));
      } else {
        const uint32_t bytes = kLoadBytes;
        cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_global, stage + st * kLoadBytes, tile,
                                 bytes, &bar[st]);
      }
      while (!cuda::ptx::mbarrier_try_wait_parity(&bar[st], static_cast<uint32_t>((it >> 1) & 1))) {
      }
    }
    if constexpr (kPair) cg::this_cluster().sync();  // both CTAs saw stage st land before either refills it
  }
  if constexpr (kPair) cg::this_cluster().sync();
}

// One variant of the table: its name, the L2 bytes per CTA-step (reduce-add or read), its launch and
// the launch's arguments (buf: the dQ tiles reduced into, or the Q + dO tiles loaded).
struct Variant {
  const char* name;
  double l2_bytes;
  cudaError_t (*launch)(int grid, size_t smem, void* buf, int steps, int shared_tiles, int pace_ns);
  size_t smem;
  int shared_tiles;
  void* buf;
};

cudaError_t launch_pace(int grid, size_t, void*, int steps, int, int pace_ns) {
  pace_kernel<<<grid, kThreads>>>(steps, pace_ns);
  return cudaGetLastError();
}
cudaError_t launch_solo(int grid, size_t smem, void* buf, int steps, int shared_tiles, int pace_ns) {
  solo_kernel<<<grid, kThreads, smem>>>(static_cast<float*>(buf), steps, shared_tiles, pace_ns);
  return cudaGetLastError();
}
cudaError_t launch_pair(int grid, size_t smem, void* buf, int steps, int shared_tiles, int pace_ns) {
  pair_kernel<<<grid, kThreads, smem>>>(static_cast<float*>(buf), steps, shared_tiles, pace_ns);
  return cudaGetLastError();
}
template <bool kPair>
cudaError_t launch_load(int grid, size_t smem, void* buf, int steps, int, int pace_ns) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = 2;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = kPair ? 1 : 0;
  return cudaLaunchKernelEx(&cfg, load_kernel<kPair>, static_cast<const uint8_t*>(buf), steps, pace_ns);
}

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 2000;
  const double energy_s = argc > 2 ? std::atof(argv[2]) : 2.0;
  const int pace_ns = argc > 3 ? std::atoi(argv[3]) : 2500;
  if (iters < 1 || energy_s < 0 || energy_s > 60 || pace_ns < 0 || pace_ns > 1000000) {
    std::fprintf(stderr, "usage: dq_reduce_bw [STEPS >= 1] [ENERGY_SECONDS in 0..60] [PACE_NS in 0..1e6 (0: no paced table)]\n");
    return 2;
  }
  int dev = 0, sms = 0;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const int grid = sms & ~1;  // pairs need an even grid; solo uses the same grid
  const size_t solo_smem = 2 * kTileBytes, pair_smem = 2 * kTileBytes + kTileBytes, load_smem = 2 * kLoadBytes;
  CHECK(cudaFuncSetAttribute(solo_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(solo_smem)));
  CHECK(cudaFuncSetAttribute(pair_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(pair_smem)));
  CHECK(cudaFuncSetAttribute(load_kernel<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(load_smem)));
  CHECK(cudaFuncSetAttribute(load_kernel<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(load_smem)));
  const size_t dst_floats = static_cast<size_t>(grid) * kTilesPerCta * kTileFloats;
  float* dst = nullptr;
  CHECK(cudaMalloc(&dst, dst_floats * 4));
  CHECK(cudaMemset(dst, 0, dst_floats * 4));
  uint8_t* src = nullptr;
  CHECK(cudaMalloc(&src, static_cast<size_t>(kSrcTiles) * kLoadBytes));
  CHECK(cudaMemset(src, 0x3c, static_cast<size_t>(kSrcTiles) * kLoadBytes));
  const Variant variants[] = {
      {"reduce solo, private tiles", kTileBytes, launch_solo, solo_smem, 0, dst},
      {"reduce pair, private tiles", kTileBytes / 2, launch_pair, pair_smem, 0, dst},
      {"reduce solo, shared 16", kTileBytes, launch_solo, solo_smem, 16, dst},
      {"reduce pair, shared 16", kTileBytes / 2, launch_pair, pair_smem, 16, dst},
      {"load solo (Q + dO)", kLoadBytes, launch_load<false>, load_smem, 0, src},
      {"load pair, multicast", kLoadBytes / 2, launch_load<true>, load_smem, 0, src},
  };
  constexpr int kVariants = sizeof(variants) / sizeof(variants[0]);
  double us_per_step[kVariants] = {};
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  std::printf("grid %d CTAs, %d steps each; a step: one dQ tile (64 x 128 fp32) reduced, or one Q + dO tile "
              "(2 x 64 x 128 bf16) loaded\n", grid, iters);
  std::printf("%-28s %10s %16s\n", "variant", "us/step", "L2 bytes TB/s");
  for (int v = 0; v < kVariants; ++v) {
    const Variant& var = variants[v];
    float best = 1e30f;
    for (int rep = 0; rep < 3; ++rep) {
      CHECK(cudaEventRecord(e0));
      CHECK(var.launch(grid, var.smem, var.buf, iters, var.shared_tiles, 0));
      CHECK(cudaEventRecord(e1));
      CHECK(cudaEventSynchronize(e1));
      float ms = 0.f;
      CHECK(cudaEventElapsedTime(&ms, e0, e1));
      if (ms < best) best = ms;
    }
    us_per_step[v] = 1e3 * best / iters;
    std::printf("%-28s %10.3f %16.2f\n", var.name, us_per_step[v],
                static_cast<double>(grid) * iters * var.l2_bytes / (best * 1e-3) / 1e12);
  }
  const dash::tools::Nvml nvml(energy_s > 0 ? dev : -1);
  if (energy_s > 0 && !nvml.ok()) std::printf("energy: NVML not available\n");
  if (energy_s > 0 && nvml.ok()) {
    // The energy around a synchronized window (tools/nvml_probe.h): joules, *wall = seconds.
    auto window = [&](auto&& body, double* wall) {
      CHECK(cudaDeviceSynchronize());
      dash::tools::EnergyWindow w(nvml);
      body();
      CHECK(cudaDeviceSynchronize());
      w.stop();
      *wall = w.wall_s();
      return w.joules();
    };
    double idle_wall = 0;
    const double idle_j = window([] { std::this_thread::sleep_for(std::chrono::seconds(1)); }, &idle_wall);
    const double idle_w = idle_j / idle_wall;
    std::printf("energy: idle %.1f W; each variant one launch of about %.1f s\n", idle_w, energy_s);
    // One launch of n steps of a variant in a window: joules, seconds, and uJ per CTA-step above base_w watts.
    struct Energy {
      double j = 0, wall = 0, above_uj = 0;
    };
    auto measure = [&](const Variant& var, int n, int pace, double base_w) {
      Energy e;
      e.j = window([&] { CHECK(var.launch(grid, var.smem, var.buf, n, var.shared_tiles, pace)); }, &e.wall);
      e.above_uj = (e.j - base_w * e.wall) / (static_cast<double>(grid) * n) * 1e6;
      return e;
    };
    std::printf("%-28s %9s %8s %12s %15s %16s\n", "variant", "steps", "W", "uJ/CTA-step", "above idle uJ",
                "pJ per L2 byte");
    for (int v = 0; v < kVariants; ++v) {
      const Variant& var = variants[v];
      const int n = static_cast<int>(energy_s * 1e6 / us_per_step[v]);
      const Energy e = measure(var, n, 0, idle_w);
      std::printf("%-28s %9d %8.1f %12.3f %15.3f %16.2f\n", var.name, n, e.j / e.wall,
                  e.j / (static_cast<double>(grid) * n) * 1e6, e.above_uj, e.above_uj * 1e6 / var.l2_bytes);
    }
    if (pace_ns > 0) {
      // Every variant at one step per pace_ns (the backward's step at hdim 128 is 2.1-2.6 us), so all take
      // the same time: the energy above the paced empty loop is what the steps themselves cost.
      const int n = static_cast<int>(energy_s * 1e9 / pace_ns);
      const Energy base = measure(Variant{"pace only", 0, launch_pace, 0, 0, nullptr}, n, pace_ns, idle_w);
      const double base_w = base.j / base.wall;
      std::printf("paced: one step per %d ns, %d steps; pace only: %.3f us/step, %.1f W (%.3f uJ/CTA-step above idle)\n",
                  pace_ns, n, base.wall * 1e6 / n, base_w, base.above_uj);
      std::printf("%-28s %10s %8s %17s %16s\n", "variant", "us/step", "W", "above pace-only uJ", "pJ per L2 byte");
      for (const Variant& var : variants) {
        // above the pacing loop's power over this run's wall time (a variant that cannot keep the pace
        // runs longer: its us/step shows it, and the comparison then mixes in the active power)
        const Energy e = measure(var, n, pace_ns, base_w);
        std::printf("%-28s %10.3f %8.1f %17.3f %16.2f\n", var.name, e.wall * 1e6 / n, e.j / e.wall, e.above_uj,
                    e.above_uj * 1e6 / var.l2_bytes);
      }
    }
  }
  CHECK(cudaFree(src));
  CHECK(cudaFree(dst));
  return 0;
}
