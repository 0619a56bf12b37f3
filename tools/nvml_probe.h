// NVML's energy counter and SM clock for the benchmarks (`dash-attn bench --sustain`,
// bench/probes/dq_reduce_bw.cu), header-only.
#pragma once
#include <dlfcn.h>

#include <cuda_runtime.h>

namespace dash::tools {

// NVML through dlopen (libnvidia-ml.so.1 comes with the driver; no link dependency, no nvml.h): the
// energy counter (mJ since the driver loaded) and the SM clock of the CUDA device, matched by PCI
// bus id. ok() is false where the library or a symbol is missing (the callers then report speed only).
class Nvml {
 public:
  explicit Nvml(int cuda_device) {
    if (cuda_device < 0) return;
    lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib_ == nullptr) return;
    auto init = reinterpret_cast<int (*)()>(dlsym(lib_, "nvmlInit_v2"));
    auto by_pci = reinterpret_cast<int (*)(const char*, void**)>(dlsym(lib_, "nvmlDeviceGetHandleByPciBusId_v2"));
    energy_ = reinterpret_cast<int (*)(void*, unsigned long long*)>(dlsym(lib_, "nvmlDeviceGetTotalEnergyConsumption"));
    clock_ = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(lib_, "nvmlDeviceGetClockInfo"));
    char bus[64] = "";
    if (init == nullptr || by_pci == nullptr || energy_ == nullptr || clock_ == nullptr || init() != 0 ||
        cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_device) != cudaSuccess)
      return;
    ok_ = by_pci(bus, &dev_) == 0;
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;
  bool ok() const { return ok_; }
  bool energy_mj(unsigned long long* e) const { return ok_ && energy_(dev_, e) == 0; }
  bool sm_mhz(unsigned* m) const { return ok_ && clock_(dev_, /*NVML_CLOCK_SM*/ 1, m) == 0; }

 private:
  void* lib_ = nullptr;
  void* dev_ = nullptr;
  bool ok_ = false;
  int (*energy_)(void*, unsigned long long*) = nullptr;
  int (*clock_)(void*, int, unsigned*) = nullptr;
};

}  // namespace dash::tools
