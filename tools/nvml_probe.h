// NVML's energy counter and SM clock for the benchmarks (`dash-attn bench --sustain`,
// bench/probes/dq_reduce_bw.cu), header-only.
#pragma once
#include <dlfcn.h>

#include <chrono>

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
    shutdown_ = reinterpret_cast<int (*)()>(dlsym(lib_, "nvmlShutdown"));
    auto by_pci = reinterpret_cast<int (*)(const char*, void**)>(dlsym(lib_, "nvmlDeviceGetHandleByPciBusId_v2"));
    energy_ = reinterpret_cast<int (*)(void*, unsigned long long*)>(dlsym(lib_, "nvmlDeviceGetTotalEnergyConsumption"));
    clock_ = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(lib_, "nvmlDeviceGetClockInfo"));
    char bus[64] = "";
    if (init == nullptr || shutdown_ == nullptr || by_pci == nullptr || energy_ == nullptr || clock_ == nullptr ||
        init() != 0)
      return;
    initialized_ = true;
    ok_ = cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_device) == cudaSuccess && by_pci(bus, &dev_) == 0;
  }
  ~Nvml() {
    if (initialized_) shutdown_();
    if (lib_ != nullptr) dlclose(lib_);
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;
  bool ok() const { return ok_; }
  bool energy_mj(unsigned long long* e) const { return ok_ && energy_(dev_, e) == 0; }
  bool sm_mhz(unsigned* m) const { return ok_ && clock_(dev_, /*NVML_CLOCK_SM*/ 1, m) == 0; }

 private:
  void* lib_ = nullptr;
  void* dev_ = nullptr;
  bool initialized_ = false, ok_ = false;
  int (*shutdown_)() = nullptr;
  int (*energy_)(void*, unsigned long long*) = nullptr;
  int (*clock_)(void*, int, unsigned*) = nullptr;
};

// The energy counter and the wall clock around one window of GPU work: construct it after a device
// synchronize, call stop() after the window's closing synchronize. joules() < 0 where the counter
// could not be read (NVML not available).
class EnergyWindow {
 public:
  explicit EnergyWindow(const Nvml& nvml) : nvml_(nvml), have0_(nvml.energy_mj(&e0_)) {}
  void stop() {
    wall_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    have1_ = nvml_.energy_mj(&e1_);
  }
  double seconds_since_start() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }
  double wall_s() const { return wall_s_; }
  double joules() const { return have0_ && have1_ ? static_cast<double>(e1_ - e0_) * 1e-3 : -1.0; }
  double watts() const { return joules() >= 0 && wall_s_ > 0 ? joules() / wall_s_ : -1.0; }

 private:
  const Nvml& nvml_;
  unsigned long long e0_ = 0, e1_ = 0;
  bool have0_, have1_ = false;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  double wall_s_ = 0;
};

}  // namespace dash::tools
