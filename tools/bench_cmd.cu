// dash-attn bench: forward and backward TFLOP/s of every schedule on the standard sweep
// (docs/peers.md) or on one shape from flags, with the planner's prediction beside each time.
// FLOPs follow FlashAttention: fwd = 4*b*h*sq*sk*d (halved for causal), bwd = 2.5 x fwd.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "bench_cmd.h"
#include "nvml_probe.h"
#include "dash_attn/attention.h"
#include "schedule/planner.h"

namespace {
using dash::tools::Nvml;

#define BENCH_CUDA(expr)                                                                 \
  do {                                                                                   \
    cudaError_t _e = (expr);                                                             \
    if (_e != cudaSuccess) {                                                             \
      std::fprintf(stderr, "dash-attn bench: %s failed: %s\n", #expr, cudaGetErrorString(_e)); \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

// Fill with pseudo-random values in [-1, 1) (never zeros: zeros run faster than real data).
// Uniform in [-1, 1), or (normal) standard normal through Box-Muller, like torch.randn: the
// peers benchmark's data. The distribution moves the tensor cores' power and so the clocks at
// long shapes (docs/perf.md v14: the 80-row tile's 16k result differed between the two).
__global__ void fill_random(uint16_t* p, size_t n, uint64_t seed, bool bf16, bool normal) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    x ^= x >> 31; x *= 0xBF58476D1CE4E5B9ull; x ^= x >> 29;
    float f = (float)(x >> 40) / (float)(1ull << 24) * 2.f - 1.f;
    if (normal) {
      const float u1 = ((float)(x >> 40) + 1.f) / (float)(1ull << 24);          // (0, 1]
      const float u2 = (float)((x >> 16) & 0xFFFFFFu) / (float)(1ull << 24);     // [0, 1)
      f = sqrtf(-2.f * logf(u1)) * cospif(2.f * u2);
    }
    if (bf16) { __nv_bfloat16 h = __float2bfloat16(f); p[i] = *reinterpret_cast<uint16_t*>(&h); }
    else { __half h = __float2half(f); p[i] = *reinterpret_cast<uint16_t*>(&h); }
  }
}

struct Shape {
  int batch, seqlen, heads, kv_heads, hdim;
  bool causal;
};

struct Options {
  std::vector<int> hdims = {64, 128};
  std::vector<int> causals = {0, 1};
  std::vector<int> seqlens = {512, 1024, 2048, 4096, 8192, 16384};
  int tokens = 16384, hidden = 2048;
  int batch = 0, heads = 0, kv_heads = 0;  // 0 = from tokens/hidden
  int reps = 7;
  dash::DType dtype = dash::DType::kBF16;
  std::vector<dash::Schedule> schedules = {dash::Schedule::kAscending, dash::Schedule::kSpt,
                                           dash::Schedule::kDescending, dash::Schedule::kShift,
                                           dash::Schedule::kSymmetricShift, dash::Schedule::kAtomic,
                                           dash::Schedule::kAuto};
  std::string json;
  // Memory layout of Q, K, V, O, dO and the gradients: "bshd" (batch, seq, head, dim; the
  // flash_attn_func layout, the default) or "bhsd" (SDPA's: each head's rows contiguous).
  bool bhsd = false;
  dash::Dispatch dispatch = dash::Dispatch::kDynamic;  // --dispatch dynamic|static
  bool normal = false;  // --dist uniform (default) | normal (standard normal, like torch.randn)
  // --sustain S: after each backward row's median, the same call back to back for S seconds, with
  // NVML's energy counter and SM clock (docs/perf.md v39: at the power cap the speed is the work
  // per joule); 0 = off. The medians of the rows after a window run on a GPU that has just been at its
  // power cap: compare `bwd_ms` only between runs without --sustain.
  float sustain_s = 0.f;
};

std::vector<int> parse_list(const char* s) {
  std::vector<int> v;
  for (const char* p = s; *p;) {
    char* end;
    long x = std::strtol(p, &end, 10);
    if (end == p) break;
    if (*end == 'k' || *end == 'K') { x *= 1024; ++end; }
    v.push_back((int)x);
    p = *end == ',' ? end + 1 : end;
  }
  return v;
}

[[noreturn]] void usage_error(const char* msg, const char* arg) {
  std::fprintf(stderr, "dash-attn bench: %s%s%s\n", msg, arg ? " " : "", arg ? arg : "");
  std::fprintf(stderr,
               "usage: dash-attn bench [--hdim 64,128] [--causal 0,1] [--seqlen 512,...,16k] [--tokens N]\n"
               "         [--hidden N] [--batch N --heads N --kv-heads N] [--dtype bf16|fp16]\n"
               "         [--schedules a,b,...] [--reps N] [--layout bshd|bhsd] [--dispatch dynamic|static]\n"
               "         [--dist uniform|normal] [--sustain SECONDS] [--json FILE]\n");
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> const char* {
      if (i + 1 >= argc) usage_error("missing value for", argv[i]);
      return argv[++i];
    };
    if (a == "--hdim") o.hdims = parse_list(val());
    else if (a == "--causal") o.causals = parse_list(val());
    else if (a == "--seqlen") o.seqlens = parse_list(val());
    else if (a == "--tokens") o.tokens = std::atoi(val());
    else if (a == "--hidden") o.hidden = std::atoi(val());
    else if (a == "--batch") o.batch = std::atoi(val());
    else if (a == "--heads") o.heads = std::atoi(val());
    else if (a == "--kv-heads") o.kv_heads = std::atoi(val());
    else if (a == "--reps") o.reps = std::max(1, std::atoi(val()));
    else if (a == "--json") o.json = val();
    else if (a == "--sustain") {
      const char* v = val();
      char* end = nullptr;
      o.sustain_s = std::strtof(v, &end);
      if (end == v || *end != '\0' || !(o.sustain_s > 0.f && o.sustain_s <= 60.f))
        usage_error("--sustain must be a number of seconds in (0, 60], got", v);
    }
    else if (a == "--dispatch") {
      const std::string d = val();
      if (!dash::parse_dispatch(d.c_str(), &o.dispatch)) usage_error("--dispatch must be dynamic or static, got", d.c_str());
    }
    else if (a == "--dist") {
      const std::string d = val();
      if (d == "normal") o.normal = true;
      else if (d != "uniform") usage_error("--dist must be uniform or normal, got", d.c_str());
    } else if (a == "--layout") {
      const std::string l = val();
      if (l == "bhsd") o.bhsd = true;
      else if (l != "bshd") usage_error("--layout must be bshd or bhsd, got", l.c_str());
    }
    else if (a == "--dtype") {
      const std::string d = val();
      if (d == "bf16") o.dtype = dash::DType::kBF16;
      else if (d == "fp16") o.dtype = dash::DType::kFP16;
      else usage_error("--dtype must be bf16 or fp16, got", d.c_str());
    } else if (a == "--schedules") {
      o.schedules.clear();
      std::string s = val();
      size_t pos = 0;
      while (pos <= s.size()) {
        const size_t c = s.find(',', pos);
        const std::string name = s.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
        dash::Schedule sc;
        if (!dash::parse_schedule(name.c_str(), &sc)) usage_error("--schedules: unknown schedule", name.c_str());
        o.schedules.push_back(sc);
        if (c == std::string::npos) break;
        pos = c + 1;
      }
    } else if (a == "--help" || a == "-h") usage_error("", nullptr);
    else usage_error("unknown flag", argv[i]);
  }
  return o;
}

struct Buffers {
  std::vector<void*> ptrs;
  void* alloc(size_t bytes) {
    void* p;
    BENCH_CUDA(cudaMalloc(&p, bytes));
    ptrs.push_back(p);
    return p;
  }
  ~Buffers() { for (void* p : ptrs) cudaFree(p); }
};

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// FNV-1a (64-bit) over the bytes of device buffers: the gradients' fingerprint in the JSON
// ("grad_hash"), to compare the bits of two builds (e.g. a kernel change that must keep them).
uint64_t hash_device(std::initializer_list<std::pair<const void*, size_t>> bufs) {
  uint64_t h = 1469598103934665603ull;
  std::vector<unsigned char> host;
  for (auto [p, bytes] : bufs) {
    host.resize(bytes);
    BENCH_CUDA(cudaMemcpy(host.data(), p, bytes, cudaMemcpyDeviceToHost));
    for (unsigned char c : host) h = (h ^ c) * 1099511628211ull;
  }
  return h;
}

// The median of `reps` timed calls of f (events around each call, synchronized after it), in ms;
// host_us (if given): the median host time of the call itself, in us. Each call starts on an idle
// GPU, so the host time before its first launch is part of the measured time: at backwards of
// 50-100 us the host path shows in bwd_ms (docs/perf.md v29).
template <typename F>
float time_ms(F&& f, int reps, float* host_us = nullptr) {
  cudaEvent_t a, b;
  BENCH_CUDA(cudaEventCreate(&a));
  BENCH_CUDA(cudaEventCreate(&b));
  f();  // warm-up
  BENCH_CUDA(cudaDeviceSynchronize());
  std::vector<float> ts, hs;
  for (int r = 0; r < reps; ++r) {
    BENCH_CUDA(cudaEventRecord(a));
    const auto h0 = std::chrono::steady_clock::now();
    f();
    hs.push_back(std::chrono::duration<float, std::micro>(std::chrono::steady_clock::now() - h0).count());
    BENCH_CUDA(cudaEventRecord(b));
    BENCH_CUDA(cudaEventSynchronize(b));
    float ms;
    BENCH_CUDA(cudaEventElapsedTime(&ms, a, b));
    ts.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  if (host_us != nullptr) *host_us = median(hs);
  return median(ts);
}

// One --sustain window: f called back to back (no host sync inside) for about `seconds`, the count
// fixed beforehand from the median time of one call. ms: GPU time per call (events around the
// window); watts: the energy counter's difference over the wall time between its two reads (which
// bracket the window: synchronized before and after); mhz: the median SM clock sampled every 20 ms
// in the window's second half. watts / mhz < 0 where NVML is not available.
struct Sustained {
  int calls = 0;
  double ms = 0, watts = -1, mhz = -1;
};
template <typename F>
Sustained sustain(F&& f, float seconds, float call_ms, const Nvml& nvml) {
  Sustained r;
  r.calls = std::max(3, static_cast<int>(seconds * 1e3f / std::max(call_ms, 1e-3f)));
  cudaEvent_t a, b;
  BENCH_CUDA(cudaEventCreate(&a));
  BENCH_CUDA(cudaEventCreate(&b));
  std::atomic<bool> stop{false};
  std::vector<std::pair<double, unsigned>> samples;  // (seconds since the window's start, MHz)
  BENCH_CUDA(cudaDeviceSynchronize());
  dash::tools::EnergyWindow window(nvml);
  std::thread sampler;
  if (nvml.ok()) {
    sampler = std::thread([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        unsigned m;
        if (nvml.sm_mhz(&m)) samples.emplace_back(window.seconds_since_start(), m);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
  }
  BENCH_CUDA(cudaEventRecord(a));
  for (int i = 0; i < r.calls; ++i) f();
  BENCH_CUDA(cudaEventRecord(b));
  BENCH_CUDA(cudaEventSynchronize(b));
  window.stop();
  stop = true;
  if (sampler.joinable()) sampler.join();
  float ms = 0;
  BENCH_CUDA(cudaEventElapsedTime(&ms, a, b));
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  r.ms = ms / r.calls;
  r.watts = window.watts();
  std::vector<float> late;
  for (const auto& smp : samples)
    if (smp.first >= window.wall_s() / 2) late.push_back(static_cast<float>(smp.second));
  if (!late.empty()) r.mhz = median(late);
  return r;
}

}  // namespace

bool dash_has_cuda_device() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return n > 0;
}

int bench_main(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  if (!dash_has_cuda_device()) {
    std::fprintf(stderr, "dash-attn bench: no CUDA device found\n");
    return 2;
  }
  cudaDeviceProp prop{};
  BENCH_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("dash-attn bench on %s (%d SMs), %s, layout %s, data %s, %d reps (median)\n", prop.name,
              prop.multiProcessorCount, opt.dtype == dash::DType::kBF16 ? "bf16" : "fp16", opt.bhsd ? "bhsd" : "bshd",
              opt.normal ? "normal" : "uniform", opt.reps);
  int cuda_device = 0;
  BENCH_CUDA(cudaGetDevice(&cuda_device));
  const Nvml nvml(opt.sustain_s > 0 ? cuda_device : -1);  // (-1: not opened; --sustain off)
  if (opt.sustain_s > 0)
    std::printf("--sustain %.1f s per backward row: %s\n", opt.sustain_s,
                nvml.ok() ? "NVML energy counter and SM clock" : "NVML not available (speed only)");

  std::vector<Shape> shapes;
  for (int d : opt.hdims)
    for (int c : opt.causals)
      for (int s : opt.seqlens) {
        Shape sh;
        sh.hdim = d; sh.causal = c != 0; sh.seqlen = s;
        sh.batch = opt.batch > 0 ? opt.batch : std::max(1, opt.tokens / s);
        sh.heads = opt.heads > 0 ? opt.heads : opt.hidden / d;
        sh.kv_heads = opt.kv_heads > 0 ? opt.kv_heads : sh.heads;
        shapes.push_back(sh);
      }

  std::string json = "[\n";
  bool first_json = true;
  std::printf("\n%-5s %-6s %-6s %-6s %-16s %9s %8s %9s %8s %s\n", "hdim", "mask", "seqlen", "batch", "schedule",
              "bwd ms", "TFLOP/s", "pred ms", "vs atom", "note");
  for (const Shape& sh : shapes) {
    dash::AttnShape s;
    s.batch = sh.batch; s.seqlen_q = s.seqlen_k = sh.seqlen; s.heads_q = sh.heads; s.heads_kv = sh.kv_heads;
    s.head_dim = sh.hdim; s.dtype = opt.dtype; s.causal = sh.causal;
    const size_t nq = (size_t)s.batch * s.seqlen_q * s.heads_q * s.head_dim;
    const size_t nk = (size_t)s.batch * s.seqlen_k * s.heads_kv * s.head_dim;
    Buffers buf;
    auto* q = (uint16_t*)buf.alloc(nq * 2); auto* k = (uint16_t*)buf.alloc(nk * 2);
    auto* v = (uint16_t*)buf.alloc(nk * 2); auto* o = (uint16_t*)buf.alloc(nq * 2);
    auto* dout = (uint16_t*)buf.alloc(nq * 2); auto* dq = (uint16_t*)buf.alloc(nq * 2);
    auto* dk = (uint16_t*)buf.alloc(nk * 2); auto* dv = (uint16_t*)buf.alloc(nk * 2);
    auto* lse = (float*)buf.alloc((size_t)s.batch * s.heads_q * s.seqlen_q * 4);
    const size_t ws_bytes = dash::attn_bwd_workspace_size(s);
    void* ws = buf.alloc(ws_bytes);
    const bool bf = opt.dtype == dash::DType::kBF16;
    fill_random<<<1024, 256>>>(q, nq, 1, bf, opt.normal);
    fill_random<<<1024, 256>>>(k, nk, 2, bf, opt.normal);
    fill_random<<<1024, 256>>>(v, nk, 3, bf, opt.normal);
    fill_random<<<1024, 256>>>(dout, nq, 4, bf, opt.normal);
    BENCH_CUDA(cudaGetLastError());
    // Strides3 {batch, seq, head} in elements.
    const dash::Strides3 sq = opt.bhsd
        ? dash::Strides3{(int64_t)s.heads_q * s.seqlen_q * s.head_dim, s.head_dim, (int64_t)s.seqlen_q * s.head_dim}
        : dash::Strides3{(int64_t)s.seqlen_q * s.heads_q * s.head_dim, (int64_t)s.heads_q * s.head_dim, s.head_dim};
    const dash::Strides3 sk = opt.bhsd
        ? dash::Strides3{(int64_t)s.heads_kv * s.seqlen_k * s.head_dim, s.head_dim, (int64_t)s.seqlen_k * s.head_dim}
        : dash::Strides3{(int64_t)s.seqlen_k * s.heads_kv * s.head_dim, (int64_t)s.heads_kv * s.head_dim, s.head_dim};

    dash::AttnFwdParams fp;
    fp.shape = s;
    fp.q = q; fp.q_stride = sq; fp.k = k; fp.k_stride = sk; fp.v = v; fp.v_stride = sk;
    fp.o = o; fp.o_stride = sq; fp.lse = lse;
    dash::Status st;
    const double fwd_flops = 4.0 * s.batch * s.heads_q * (double)s.seqlen_q * s.seqlen_k * s.head_dim / (s.causal ? 2 : 1);
    const double bwd_flops = 2.5 * fwd_flops;
    const float fwd_ms = time_ms([&] { st = dash::attn_fwd(fp, nullptr); }, opt.reps);
    if (!st.ok()) { std::fprintf(stderr, "attn_fwd: %s\n", st.message); return 1; }
    // O and LSE of the last timed forward ("fwd_hash"): a forward change that must keep its bits.
    const uint64_t fwd_hash = hash_device({{o, nq * 2}, {lse, (size_t)s.batch * s.heads_q * s.seqlen_q * sizeof(float)}});
    const char* mask = s.causal ? "causal" : "full";
    std::printf("%-5d %-6s %-6d %-6d %-16s %9.3f %8.1f %9s %8s\n", sh.hdim, mask, sh.seqlen, sh.batch, "forward",
                fwd_ms, fwd_flops / fwd_ms * 1e-9, "", "");

    // The planner's prediction for each row models the tiles that row's kernel ran (BwdLaunchInfo:
    // 80-row Q tiles for atomic and shift at full masks, head_dim 128, bf16, >= 1k).
    dash::TileProblem tp;
    tp.batch = s.batch; tp.heads_q = s.heads_q; tp.heads_kv = s.heads_kv; tp.seqlen_q = s.seqlen_q;
    tp.seqlen_k = s.seqlen_k; tp.causal = s.causal;

    struct Row {
      dash::Schedule sched, ran; float ms, host_us; double pred_ms; std::string note; int head_block, dq_writers;
      int block_m, producer_regs, dq_stage_bufs;  // the kernel that ran (BwdLaunchInfo)
      int split_tasks, split_pieces;              // the last-wave split (0 tasks: none)
      bool split_rank, writer_rank, pdl, post_poll, post_queue, pre_vec, atomic_shift;
      uint64_t grad_hash;  // of dq, dk, dv after the last timed run (stable for the deterministic schedules)
      Sustained sus;       // --sustain (calls 0: not run)
    };
    std::vector<Row> rows;
    float atomic_ms = 0;
    for (dash::Schedule sc : opt.schedules) {
      dash::AttnBwdParams bp;
      bp.shape = s;
      bp.q = q; bp.q_stride = sq; bp.k = k; bp.k_stride = sk; bp.v = v; bp.v_stride = sk;
      bp.o = o; bp.o_stride = sq; bp.dout = dout; bp.dout_stride = sq; bp.lse = lse;
      bp.dq = dq; bp.dq_stride = sq; bp.dk = dk; bp.dk_stride = sk; bp.dv = dv; bp.dv_stride = sk;
      bp.schedule = sc;
      bp.dispatch = opt.dispatch;
      dash::BwdLaunchInfo info;
      float host_us = 0;
      const float ms = time_ms([&] { st = dash::attn_bwd(bp, ws, ws_bytes, nullptr, &info); }, opt.reps, &host_us);
      if (!st.ok()) { std::fprintf(stderr, "attn_bwd(%s): %s\n", dash::schedule_name(sc), st.message); return 1; }
      tp.block_m = info.block_m;
      tp.block_n = info.block_n;
      const dash::CostModel cm = dash::CostModel::for_shape(s.head_dim, tp.block_m, tp.block_n,
                                                            dash::CostParams::for_tiles(tp.block_m, tp.block_n));
      const double pred = dash::plan::predict_us(tp, info.schedule, cm, info.num_ctas, opt.dispatch) * 1e-3;
      std::string note = info.note;
      if (sc == dash::Schedule::kAuto) note = std::string("-> ") + dash::schedule_name(info.schedule) + (note.empty() ? "" : "; " + note);
      const uint64_t gh = hash_device({{dq, nq * 2}, {dk, nk * 2}, {dv, nk * 2}});
      Sustained sus;
      if (opt.sustain_s > 0) {
        sus = sustain([&] { st = dash::attn_bwd(bp, ws, ws_bytes, nullptr, nullptr); }, opt.sustain_s, ms, nvml);
        if (!st.ok()) { std::fprintf(stderr, "attn_bwd(%s) sustained: %s\n", dash::schedule_name(sc), st.message); return 1; }
      }
      rows.push_back({sc, info.schedule, ms, host_us, pred, note, info.head_block, info.dq_writers, info.block_m,
                      info.producer_regs, info.dq_stage_bufs, info.split_tasks, info.split_pieces, info.split_rank, info.writer_rank, info.pdl, info.post_poll, info.post_queue, info.pre_vec, info.atomic_shift, gh, sus});
      if (sc == dash::Schedule::kAtomic) atomic_ms = ms;
    }
    for (const Row& r : rows) {
      char ratio[32] = "";
      if (atomic_ms > 0 && r.sched != dash::Schedule::kAtomic) std::snprintf(ratio, sizeof(ratio), "%.3f", atomic_ms / r.ms);
      std::printf("%-5d %-6s %-6d %-6d %-16s %9.3f %8.1f %9.3f %8s %s\n", sh.hdim, mask, sh.seqlen, sh.batch,
                  dash::schedule_name(r.sched), r.ms, bwd_flops / r.ms * 1e-9, r.pred_ms, ratio, r.note.c_str());
      // --sustain: "sustain_*" fields (null where not run or NVML was not available)
      std::string sus_json = ", \"sustain_calls\": " + std::to_string(r.sus.calls);
      auto num = [](double x, const char* fmt) {
        if (!(x >= 0)) return std::string("null");
        char b[64];
        std::snprintf(b, sizeof b, fmt, x);
        return std::string(b);
      };
      if (r.sus.calls > 0) {
        const double tf = bwd_flops / r.sus.ms * 1e-9;
        const double tf_per_j = r.sus.watts > 0 ? tf / r.sus.watts : -1;
        std::printf("%-5s %-6s %-6s %-6s %-16s %9.3f %8.1f  sustained %d calls: %s W, %s MHz, %s TFLOP/J\n", "", "", "", "",
                    "", r.sus.ms, tf, r.sus.calls, num(r.sus.watts, "%.0f").c_str(), num(r.sus.mhz, "%.0f").c_str(),
                    num(tf_per_j, "%.4f").c_str());
        sus_json += ", \"sustain_ms\": " + num(r.sus.ms, "%.4f") + ", \"sustain_tflops\": " + num(tf, "%.2f") +
                    ", \"sustain_watts\": " + num(r.sus.watts, "%.1f") + ", \"sustain_mhz\": " + num(r.sus.mhz, "%.0f") +
                    ", \"sustain_tflop_per_j\": " + num(tf_per_j, "%.5f");
      }
      char line[2048];
      std::snprintf(line, sizeof(line),
                    "%s  {\"hdim\": %d, \"causal\": %s, \"seqlen\": %d, \"batch\": %d, \"heads\": %d, \"kv_heads\": %d, "
                    "\"schedule\": \"%s\", \"ran\": \"%s\", \"bwd_ms\": %.4f, \"host_us\": %.2f, \"bwd_tflops\": %.2f, \"pred_ms\": %.4f, "
                    "\"fwd_ms\": %.4f, \"fwd_tflops\": %.2f, \"det_over_atomic\": %.4f, \"layout\": \"%s\", "
                    "\"head_block\": %d, \"dq_writers\": %d, \"block_m\": %d, \"producer_regs\": %d, \"dq_stage_bufs\": %d, "
                    "\"split_tasks\": %d, \"split_pieces\": %d, "
                    "\"split_rank\": %s, \"writer_rank\": %s, \"pdl\": %s, \"post_poll\": %s, \"post_queue\": %s, \"pre_vec\": %s, \"atomic_shift\": %s, \"grad_hash\": \"%016llx\", "
                    "\"fwd_hash\": \"%016llx\"%s}",
                    first_json ? "" : ",\n", sh.hdim, s.causal ? "true" : "false", sh.seqlen, sh.batch, sh.heads,
                    sh.kv_heads, dash::schedule_name(r.sched), dash::schedule_name(r.ran), r.ms, r.host_us,
                    bwd_flops / r.ms * 1e-9, r.pred_ms, fwd_ms, fwd_flops / fwd_ms * 1e-9,
                    atomic_ms > 0 ? atomic_ms / r.ms : 0.0, opt.bhsd ? "bhsd" : "bshd", r.head_block, r.dq_writers,
                    r.block_m, r.producer_regs, r.dq_stage_bufs, r.split_tasks, r.split_pieces, r.split_rank ? "true" : "false", r.writer_rank ? "true" : "false", r.pdl ? "true" : "false",
                    r.post_poll ? "true" : "false", r.post_queue ? "true" : "false", r.pre_vec ? "true" : "false", r.atomic_shift ? "true" : "false", static_cast<unsigned long long>(r.grad_hash),
                    static_cast<unsigned long long>(fwd_hash), sus_json.c_str());
      json += line;
      first_json = false;
    }
  }
  json += "\n]\n";
  if (!opt.json.empty()) {
    FILE* f = std::fopen(opt.json.c_str(), "w");
    if (!f) { std::fprintf(stderr, "dash-attn bench: cannot write %s\n", opt.json.c_str()); return 1; }
    std::fputs(json.c_str(), f);
    std::fclose(f);
    std::printf("\nwrote %s\n", opt.json.c_str());
  }
  return 0;
}
