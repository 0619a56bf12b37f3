// Host launchers: argument validation, workspace layout, schedule resolution, dispatch.
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <tuple>

#include "dash_attn/attention.h"
#include "api/status.h"
#include "kernels/kernel_params.h"
#include "schedule/planner.h"

namespace dash {
namespace {

#define DASH_RETURN_IF_ERROR(expr)            \
  do {                                        \
    Status _st = (expr);                      \
    if (!_st.ok()) return _st;                \
  } while (0)

#define DASH_CUDA_RETURN(expr)                                                                   \
  do {                                                                                           \
    cudaError_t _e = (expr);                                                                     \
    if (_e != cudaSuccess)                                                                       \
      return make_status(StatusCode::kCudaError, "%s failed: %s", #expr, cudaGetErrorString(_e)); \
  } while (0)

Status check_shape(const AttnShape& s) {
  if (s.batch < 1) return make_status(StatusCode::kInvalidArgument, "batch must be >= 1 (got %d)", s.batch);
  if (s.seqlen_q < 1) return make_status(StatusCode::kInvalidArgument, "seqlen_q must be >= 1 (got %d)", s.seqlen_q);
  if (s.seqlen_k < 1) return make_status(StatusCode::kInvalidArgument, "seqlen_k must be >= 1 (got %d)", s.seqlen_k);
  if (s.heads_q < 1) return make_status(StatusCode::kInvalidArgument, "heads_q must be >= 1 (got %d)", s.heads_q);
  if (s.heads_kv < 1) return make_status(StatusCode::kInvalidArgument, "heads_kv must be >= 1 (got %d)", s.heads_kv);
  if (s.heads_q % s.heads_kv != 0)
    return make_status(StatusCode::kInvalidArgument,
                       "heads_q (%d) must be a multiple of heads_kv (%d)", s.heads_q, s.heads_kv);
  if (s.head_dim != 64 && s.head_dim != 128)
    return make_status(StatusCode::kUnsupported, "head_dim %d is not supported (supported: 64, 128)", s.head_dim);
  if (s.dtype != DType::kBF16 && s.dtype != DType::kFP16)
    return make_status(StatusCode::kInvalidArgument, "dtype must be bf16 or fp16");
  if (!std::isfinite(s.softmax_scale) || s.softmax_scale < 0.f)
    return make_status(StatusCode::kInvalidArgument, "softmax_scale must be finite and >= 0 (0 = default)");
  const long long rows = (long long)s.batch * s.heads_q * ((s.seqlen_q + 63) / 64) * 64;
  if (rows * s.head_dim >= (1ll << 40))
    return make_status(StatusCode::kInvalidArgument, "problem too large");
  return Status{};
}

// verified (Attn*Params::pointers_verified): the caller guarantees that p is device memory of
// the current device, so only the null and alignment checks run. The queries below are two
// CUDA runtime calls per pointer, nine pointers per backward, on every call.
Status check_device_ptr(const void* p, const char* name, bool needs_16b = true, bool verified = false) {
  if (p == nullptr) return make_status(StatusCode::kInvalidArgument, "%s is null", name);
  if (needs_16b && reinterpret_cast<uintptr_t>(p) % 16 != 0)
    return make_status(StatusCode::kInvalidArgument, "%s must be 16-byte aligned", name);
  if (!needs_16b && reinterpret_cast<uintptr_t>(p) % 4 != 0)
    return make_status(StatusCode::kInvalidArgument, "%s must be 4-byte aligned", name);
  if (verified) return Status{};
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();
    return make_status(StatusCode::kInvalidArgument, "%s is not a CUDA device pointer", name);
  }
  if (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged)
    return make_status(StatusCode::kInvalidArgument, "%s is not device memory", name);
  int dev = 0;
  cudaGetDevice(&dev);
  if (attr.type == cudaMemoryTypeDevice && attr.device != dev)
    return make_status(StatusCode::kInvalidArgument, "%s lives on device %d but the current device is %d",
                       name, attr.device, dev);
  return Status{};
}

// 16-byte vector loads/stores need every row start aligned: strides multiple of 8 elements.
Status check_strides(const Strides3& st, const char* name, int seqlen, int heads) {
  if (st.batch < 0 || st.seq < 0 || st.head < 0)
    return make_status(StatusCode::kInvalidArgument, "%s strides must be non-negative", name);
  if (st.batch % 8 || st.seq % 8 || st.head % 8)
    return make_status(StatusCode::kInvalidArgument,
                       "%s strides (%lld, %lld, %lld) must be multiples of 8 elements (16 bytes)", name,
                       (long long)st.batch, (long long)st.seq, (long long)st.head);
  if (seqlen > 1 && st.seq == 0)
    return make_status(StatusCode::kInvalidArgument, "%s seq stride must be > 0", name);
  if (heads > 1 && st.head == 0)
    return make_status(StatusCode::kInvalidArgument, "%s head stride must be > 0", name);
  return Status{};
}

struct TensorArg {
  const void* ptr;
  Strides3 stride;
  const char* name;
  int seqlen, heads;
};

// Cheap checks first (strides, null, alignment) for every tensor, then the device-pointer
// queries, so the first error reported is the most specific one. pointers_verified (the
// caller vouches for the pointers, see attention.h) skips the queries, nothing else.
Status check_tensors(std::initializer_list<TensorArg> args, bool pointers_verified) {
  for (const TensorArg& t : args) DASH_RETURN_IF_ERROR(check_strides(t.stride, t.name, t.seqlen, t.heads));
  for (const TensorArg& t : args) {
    if (t.ptr == nullptr) return make_status(StatusCode::kInvalidArgument, "%s is null", t.name);
    if (reinterpret_cast<uintptr_t>(t.ptr) % 16 != 0)
      return make_status(StatusCode::kInvalidArgument, "%s must be 16-byte aligned", t.name);
  }
  if (pointers_verified) return Status{};
  for (const TensorArg& t : args) DASH_RETURN_IF_ERROR(check_device_ptr(t.ptr, t.name));
  return Status{};
}

kernels::TensorRef tref(const void* p, const Strides3& s) { return {p, s.batch, s.seq, s.head}; }
kernels::MutTensorRef mref(void* p, const Strides3& s) { return {p, s.batch, s.seq, s.head}; }

float resolved_scale(const AttnShape& s) {
  return s.softmax_scale > 0.f ? s.softmax_scale : 1.0f / std::sqrt((float)s.head_dim);
}

size_t align256(size_t x) { return (x + 255) / 256 * 256; }

// block_n: kBwdBlockN for the sm80 backward, kBwdSm90BlockN for the sm90 one; block_m:
// kBwdBlockM, or kBwdSm90BlockM80 for the sm90 backward's 80-row tiles (bwd_sm90_block_m; 96 / 112
// at head_dim 64, DASH_BWD_SM90_D64_BM).
TileProblem tile_problem(const AttnShape& s, int block_n = kernels::kBwdBlockN, int block_m = kernels::kBwdBlockM) {
  TileProblem tp;
  tp.batch = s.batch;
  tp.heads_q = s.heads_q;
  tp.heads_kv = s.heads_kv;
  tp.seqlen_q = s.seqlen_q;
  tp.seqlen_k = s.seqlen_k;
  tp.block_m = block_m;
  tp.block_n = block_n;
  tp.causal = s.causal;
  return tp;
}

}  // namespace

namespace kernels {
BwdWorkspace bwd_workspace_layout(const AttnShape& s, int block_m) {
  const size_t pad = (size_t)((s.seqlen_q + block_m - 1) / block_m) * block_m;
  const size_t rows = (size_t)s.batch * s.heads_q * pad;
  const size_t m_tiles = pad / block_m;
  BwdWorkspace w{};
  size_t off = 0;
  w.lse_log2 = off; off += align256(rows * sizeof(float));
  w.dsum = off; off += align256(rows * sizeof(float));
  w.dq_accum = off; off += align256(rows * s.head_dim * sizeof(float));
  w.dq_sem = off; off += align256((size_t)s.batch * s.heads_q * m_tiles * sizeof(int));
  w.dq_queue = off; off += align256((kDqQueueSlots + (size_t)s.batch * s.heads_q * m_tiles) * sizeof(int));
  w.task_counter = off; off += 256;
  // The last-wave split (sm90; full masks): room for the largest plan at this tile height (atomic's
  // and the ordered schedules' plans differ where there are >= 132 tasks).
  size_t split_tasks = 0, split_slots = 0;
  if (!s.causal && bwd_split_last_enabled())
    for (Schedule sc : {Schedule::kDescending, Schedule::kAtomic}) {
      const ScheduleModel sm = ScheduleModel::make(tile_problem(s, kBwdSm90BlockN, block_m), sc).with_last_wave_split();
      split_tasks = std::max(split_tasks, (size_t)sm.split_tasks);
      split_slots = std::max(split_slots, (size_t)sm.split_tasks * sm.split_pieces);
    }
  w.split_count = off; off += align256(split_tasks * sizeof(int));
  w.dq_mailbox = off; off += align256((size_t)kMaxBwdCtas * kDqMailboxBytesPerCta);
  w.zero_begin = w.dq_accum;
  w.zero_bytes = off - w.dq_accum;
  w.split_bytes = split_slots * bwd_split_partial_floats(s.head_dim) * sizeof(float);
  w.split_partials = off; off += align256(w.split_bytes);
  // DASH_BWD_REPACK=1 (draft): head-major copies of Q and dO (2-byte elements), after the
  // zeroed range: the preprocess writes every row the main kernel reads.
  w.pack_bytes = 0;
  w.q_pack = w.do_pack = off;
  if (bwd_repack_enabled()) {
    w.pack_bytes = align256(rows * s.head_dim * 2);
    w.q_pack = off; off += w.pack_bytes;
    w.do_pack = off; off += w.pack_bytes;
  }
  w.total = off;
  return w;
}
// SMs of a device, cached per device (a process sees a fixed count): the attribute query was a
// CUDA runtime call on every backward. 0 = not known yet; a race stores the same value twice.
// Devices past the table are queried on every call.
cudaError_t cached_sm_count(int dev, int* num_sms) {
  static std::atomic<int> cache[64];  // static storage: zero-initialized
  const bool cacheable = dev >= 0 && dev < 64;
  if (cacheable) {
    const int n = cache[dev].load(std::memory_order_relaxed);
    if (n > 0) {
      *num_sms = n;
      return cudaSuccess;
    }
  }
  const cudaError_t err = cudaDeviceGetAttribute(num_sms, cudaDevAttrMultiProcessorCount, dev);
  if (err == cudaSuccess && cacheable) cache[dev].store(*num_sms, std::memory_order_relaxed);
  return err;
}
}  // namespace kernels

namespace {
// The Hopper (wgmma/TMA) kernels run by default wherever they cover the case; DASH_FWD_SM90=0 or
// DASH_BWD_SM90=0 forces the sm80 (mma.sync) kernels, for comparisons and bisecting.
bool hopper_path_enabled(const char* var) { return kernels::env_not_zero(var); }

// Whether attn_bwd will run the sm90 backward for this shape (dense TMA-expressible strides
// assumed; a stride the TMA cannot express still falls back to sm80 at launch): bf16 and fp16,
// head_dim 64 and 128 (kernels::bwd_sm90_covers).
bool bwd_uses_sm90(const AttnShape& s) {
  return hopper_path_enabled("DASH_BWD_SM90") && kernels::bwd_sm90_covers(s.dtype, s.head_dim) &&
         kernels::current_device_is_sm90();
}
}  // namespace

void bwd_tile_sizes(const AttnShape& shape, int* block_m, int* block_n, Schedule schedule) {
  const bool sm90 = bwd_uses_sm90(shape);
  *block_m = sm90 ? kernels::bwd_sm90_block_m(shape, schedule) : kernels::kBwdBlockM;
  *block_n = sm90 ? kernels::kBwdSm90BlockN : kernels::kBwdBlockN;
}

size_t attn_bwd_workspace_size(const AttnShape& shape) {
  const kernels::EnvScope env;  // the DASH_* switches, read once (kernels::env_get)
  if (!check_shape(shape).ok()) return 0;
  // Enough for either Q tile height (the sm90 80-row tiles pad seqlen_q to a multiple of 80, the
  // others to 64), so the size does not depend on which kernel attn_bwd picks.
  // At head_dim 64 the layouts of the 96- and 112-row tiles too (DASH_BWD_SM90_D64_BM and
  // DASH_BWD_SM90_BLOCK_M pick between them).
  size_t size = std::max(kernels::bwd_workspace_layout(shape, kernels::kBwdBlockM).total,
                         kernels::bwd_workspace_layout(shape, kernels::kBwdSm90BlockM80).total);
  if (shape.head_dim == 64)
    for (int bm : {kernels::kBwdSm90BlockM96, kernels::kBwdSm90BlockM112})
      size = std::max(size, kernels::bwd_workspace_layout(shape, bm).total);
  return size;
}

namespace {
// Whether the sm90 backward runs shift on this shape with the 80-row tiles and two dQ staging
// buffers (the kernel CostParams::shift_full_tiles_hd128's planner rule is about).
bool sm90_shift_runs_two_buffers(const AttnShape& s) {
  const int bm = kernels::bwd_sm90_block_m(s, Schedule::kShift);
  return bm == kernels::kBwdSm90BlockM80 &&
         kernels::bwd_sm90_dq_stage_bufs(bm, s.head_dim, s.dtype, s.causal, kernels::bwd_sm90_producer_regs(bm, s.head_dim),
                                         Schedule::kShift) == 2;
}

// The planner for the tile sizes of one backward path (block_n: see tile_problem).
Schedule resolve_auto_schedule_tiles(const AttnShape& shape, int num_sms, int block_n, int block_m) {
  // The two-buffer shift rule only where shift runs that kernel (not with its switches off).
  const bool shift_dq2 = block_n == kernels::kBwdSm90BlockN && sm90_shift_runs_two_buffers(shape);
  // The planner's simulation is cheap but not free: cache per shape.
  static std::mutex mu;
  static std::map<std::tuple<int, int, int, int, int, int, bool, int, int, int, bool, bool>, Schedule> cache;
  const auto key = std::make_tuple(shape.batch, shape.heads_q, shape.heads_kv, shape.seqlen_q, shape.seqlen_k,
                                   shape.head_dim, shape.causal, num_sms, block_n, block_m, shift_dq2,
                                   kernels::bwd_split_last_enabled());
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  const TileProblem tp = tile_problem(shape, block_n, block_m);
  // The rates of the kernel that runs these tiles (sm80 64x64, sm90 64x128).
  CostParams params = CostParams::for_tiles(tp.block_m, tp.block_n);
  if (!shift_dq2) params.shift_full_tiles_hd128 = 0;
  // The split the sm90 launcher plans (DASH_BWD_SPLIT_LAST=0: none; not on the sm80 tiles).
  if (block_n != kernels::kBwdSm90BlockN || !kernels::bwd_split_last_enabled()) params.last_wave_split = false;
  const CostModel cost = CostModel::for_shape(shape.head_dim, tp.block_m, tp.block_n, params);
  const Schedule s = plan::recommend(tp, cost, num_sms);
  cache.emplace(key, s);
  return s;
}

// CTAs per SM of the backward main kernel, per device and kernel instantiation. The occupancy
// query costs microseconds of host time on every call otherwise (a training step makes two
// dozen); the launch still sets the kernel's shared-memory attribute each time.
cudaError_t cached_bwd_occupancy(bool sm90, int block_m, const AttnShape& s, int dev, int* per_sm) {
  static std::mutex mu;
  static std::map<std::tuple<int, bool, int, int, bool, int>, int> cache;
  const auto key = std::make_tuple(dev, sm90, s.head_dim, static_cast<int>(s.dtype), s.causal, block_m);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) {
      *per_sm = it->second;
      return cudaSuccess;
    }
  }
  const cudaError_t err = sm90 ? kernels::bwd_main_sm90_occupancy(s.head_dim, s.dtype, s.causal, block_m, per_sm)
                               : kernels::bwd_main_occupancy(s.head_dim, s.dtype, s.causal, per_sm);
  if (err != cudaSuccess) return err;
  std::lock_guard<std::mutex> lock(mu);
  cache.emplace(key, *per_sm);
  return cudaSuccess;
}
// The current device's SMs, the backward main kernel's CTAs per SM and their product capped at
// kMaxBwdCtas (the persistent grid's capacity).
cudaError_t bwd_capacity(bool sm90, int block_m, const AttnShape& s, int* num_sms, int* per_sm, int* capacity) {
  int dev = 0;
  cudaError_t err = cudaGetDevice(&dev);
  if (err == cudaSuccess) err = kernels::cached_sm_count(dev, num_sms);
  if (err == cudaSuccess) err = cached_bwd_occupancy(sm90, block_m, s, dev, per_sm);
  *capacity = err == cudaSuccess ? std::min(*num_sms * *per_sm, kernels::kMaxBwdCtas) : 0;
  return err;
}

}  // namespace

Schedule resolve_auto_schedule(const AttnShape& shape, int num_sms) {
  int bm = 0, bn = 0;
  bwd_tile_sizes(shape, &bm, &bn);
  return resolve_auto_schedule_tiles(shape, num_sms, bn, bm);
}

Status attn_fwd(const AttnFwdParams& a, cudaStream_t stream) {
  const kernels::EnvScope env;  // the DASH_* switches, read once (kernels::env_get)
  const AttnShape& s = a.shape;
  DASH_RETURN_IF_ERROR(check_shape(s));
  if (a.lse == nullptr) return make_status(StatusCode::kInvalidArgument, "lse is null");
  DASH_RETURN_IF_ERROR(check_tensors({{a.q, a.q_stride, "q", s.seqlen_q, s.heads_q},
                                      {a.k, a.k_stride, "k", s.seqlen_k, s.heads_kv},
                                      {a.v, a.v_stride, "v", s.seqlen_k, s.heads_kv},
                                      {a.o, a.o_stride, "o", s.seqlen_q, s.heads_q}},
                                     a.pointers_verified));
  DASH_RETURN_IF_ERROR(check_device_ptr(a.lse, "lse", false, a.pointers_verified));
  kernels::FwdKernelParams p{};
  p.q = tref(a.q, a.q_stride);
  p.k = tref(a.k, a.k_stride);
  p.v = tref(a.v, a.v_stride);
  p.o = mref(a.o, a.o_stride);
  p.lse = a.lse;
  p.batch = s.batch;
  p.seqlen_q = s.seqlen_q;
  p.seqlen_k = s.seqlen_k;
  p.heads_q = s.heads_q;
  p.heads_kv = s.heads_kv;
  p.scale = resolved_scale(s);
  p.scale_log2 = p.scale * 1.4426950408889634f;
  // The Hopper wgmma/TMA forward runs by default (DASH_FWD_SM90=0 disables it); it declines the
  // cases it does not cover (cudaErrorNotSupported, nothing launched) and the sm80 kernel runs.
  cudaError_t fwd_err = cudaErrorNotSupported;
  if (hopper_path_enabled("DASH_FWD_SM90"))
    fwd_err = kernels::launch_fwd_sm90(p, s.head_dim, s.dtype, s.causal, stream);
  if (fwd_err == cudaErrorNotSupported) fwd_err = kernels::launch_fwd(p, s.head_dim, s.dtype, s.causal, stream);
  DASH_CUDA_RETURN(fwd_err);
  return Status{};
}

Status attn_bwd(const AttnBwdParams& a, void* workspace, size_t workspace_bytes, cudaStream_t stream,
                BwdLaunchInfo* info) {
  // The DASH_* switches, read once for the call (kernels::env_get): some 40 std::getenv scans of the
  // environment otherwise (the recursion into an explicit schedule keeps this scope's).
  const kernels::EnvScope env;
  const AttnShape& s = a.shape;
  DASH_RETURN_IF_ERROR(check_shape(s));
  const int sched_i = static_cast<int>(a.schedule);
  if (sched_i < 0 || sched_i > static_cast<int>(Schedule::kAuto))
    return make_status(StatusCode::kInvalidArgument, "schedule: unknown value %d", sched_i);
  if (a.dispatch != Dispatch::kDynamic && a.dispatch != Dispatch::kStatic)
    return make_status(StatusCode::kInvalidArgument, "dispatch: unknown value %d", static_cast<int>(a.dispatch));
  if (a.num_ctas < 0) return make_status(StatusCode::kInvalidArgument, "num_ctas must be >= 0 (0 = auto)");
  if (a.lse == nullptr) return make_status(StatusCode::kInvalidArgument, "lse is null");
  DASH_RETURN_IF_ERROR(check_tensors({{a.q, a.q_stride, "q", s.seqlen_q, s.heads_q},
                                      {a.k, a.k_stride, "k", s.seqlen_k, s.heads_kv},
                                      {a.v, a.v_stride, "v", s.seqlen_k, s.heads_kv},
                                      {a.o, a.o_stride, "o", s.seqlen_q, s.heads_q},
                                      {a.dout, a.dout_stride, "dout", s.seqlen_q, s.heads_q},
                                      {a.dq, a.dq_stride, "dq", s.seqlen_q, s.heads_q},
                                      {a.dk, a.dk_stride, "dk", s.seqlen_k, s.heads_kv},
                                      {a.dv, a.dv_stride, "dv", s.seqlen_k, s.heads_kv}},
                                     a.pointers_verified));
  DASH_RETURN_IF_ERROR(check_device_ptr(a.lse, "lse", false, a.pointers_verified));

  // auto on the sm90 path, resolved before the tensor maps are encoded (the default since the
  // twenty-eighth session; DASH_BWD_AUTO_EARLY=0: the late resolution below only): where its choice
  // takes other tiles than auto's (kernels::bwd_sm90_block_m) it is launched as that explicit
  // schedule at once, its pointers verified above. The late path encodes four maps and checks them
  // all again before its own recursion: auto took 1.04-1.09x the explicit schedule's time at 45-75 us
  // backwards (docs/perf.md v28 item 5), 1.003-1.010x with this (H100, v29 item 1). The same choice
  // as below, on a device and strides the sm90 kernel takes; where bwd_sm90_prepare then refuses the
  // strides, the schedule runs on the sm80 kernel.
  if (a.schedule == Schedule::kAuto && kernels::env_not_zero("DASH_BWD_AUTO_EARLY") && bwd_uses_sm90(s)) {
    const int bm = kernels::bwd_sm90_block_m(s, Schedule::kAuto);
    int sms = 0, per_sm = 0, capacity = 0;
    DASH_CUDA_RETURN(bwd_capacity(true, bm, s, &sms, &per_sm, &capacity));
    if (capacity >= 1) {
      const Schedule sched = resolve_auto_schedule_tiles(s, capacity, kernels::kBwdSm90BlockN, bm);
      if (kernels::bwd_sm90_block_m(s, sched) != bm) {
        AttnBwdParams explicit_params = a;
        explicit_params.schedule = sched;
        explicit_params.pointers_verified = true;
        return attn_bwd(explicit_params, workspace, workspace_bytes, stream, info);
      }
    }
  }

  // The Q tile height of the sm90 path for this shape and schedule (64 rows; 80 for some schedules
  // at full masks from 1k (causal: head_dim 64 atomic / spt / descending), or where
  // DASH_BWD_SM90_BLOCK_M=80 selects it: kernels::bwd_sm90_block_m;
  // auto is resolved with that rule's tiles for kAuto); the workspace layout follows
  // it (re-laid out below if the sm80 kernel runs after all).
  const int sm90_bm = bwd_uses_sm90(s) ? kernels::bwd_sm90_block_m(s, a.schedule) : kernels::kBwdBlockM;
  kernels::BwdWorkspace ws = kernels::bwd_workspace_layout(s, sm90_bm);
  if (workspace == nullptr) return make_status(StatusCode::kInvalidArgument, "workspace is null");
  if (reinterpret_cast<uintptr_t>(workspace) % 256 != 0)
    return make_status(StatusCode::kInvalidArgument, "workspace must be 256-byte aligned");

  // The Hopper wgmma/TMA backward (attn_bwd_sm90.cu) runs by default where it covers the case
  // (bf16/fp16, head_dim 64/128, an sm_90 device, TMA-expressible strides); DASH_BWD_SM90=0
  // disables it.
  // 128-key KV tiles, so the schedule model is built with block_n = kBwdSm90BlockN. Anything it
  // does not cover runs on the sm80 kernel.
  kernels::BwdSm90Maps sm90_maps;
  bool use_sm90 = false;
  // DASH_BWD_REPACK=1 (draft): the sm90 kernel's Q / dO maps point at the head-major copies the
  // preprocess writes into the workspace ([batch, heads_q, seqlen_q_pad, head_dim]).
  const bool repack = ws.pack_bytes > 0;
  const int64_t pad_q = (int64_t)((s.seqlen_q + sm90_bm - 1) / sm90_bm) * sm90_bm;
  const Strides3 pack_stride{(int64_t)s.heads_q * pad_q * s.head_dim, s.head_dim, pad_q * s.head_dim};
  void* q_pack = static_cast<char*>(workspace) + ws.q_pack;
  void* do_pack = static_cast<char*>(workspace) + ws.do_pack;
  if (bwd_uses_sm90(s))
    use_sm90 = kernels::bwd_sm90_prepare(s, repack ? tref(q_pack, pack_stride) : tref(a.q, a.q_stride),
                                         tref(a.k, a.k_stride), tref(a.v, a.v_stride),
                                         repack ? tref(do_pack, pack_stride) : tref(a.dout, a.dout_stride),
                                         sm90_bm, &sm90_maps) == cudaSuccess;
  const int block_n = use_sm90 ? kernels::kBwdSm90BlockN : kernels::kBwdBlockN;
  const int block_m = use_sm90 ? sm90_bm : kernels::kBwdBlockM;
  if (block_m != sm90_bm) ws = kernels::bwd_workspace_layout(s, block_m);  // the sm80 kernel after all
  // The size check is against the layout of the kernel that runs (nothing has touched the
  // workspace yet: bwd_sm90_prepare only encodes tensor maps).
  if (workspace_bytes < ws.total)
    return make_status(StatusCode::kInvalidArgument, "workspace_bytes %zu < required %zu (attn_bwd_workspace_size)",
                       workspace_bytes, ws.total);

  int num_sms = 0, per_sm = 0, capacity = 0;
  DASH_CUDA_RETURN(bwd_capacity(use_sm90, block_m, s, &num_sms, &per_sm, &capacity));
  if (capacity < 1) return make_status(StatusCode::kInsufficientResources, "backward kernel cannot be resident");

  Schedule sched =
      a.schedule == Schedule::kAuto ? resolve_auto_schedule_tiles(s, capacity, block_n, block_m) : a.schedule;
  // auto runs its choice exactly as the explicit schedule would (same tiles, same bits): where
  // that schedule takes other tiles (kernels::bwd_sm90_block_m), launch it as explicit.
  if (a.schedule == Schedule::kAuto && use_sm90 && kernels::bwd_sm90_block_m(s, sched) != block_m) {
    AttnBwdParams explicit_params = a;
    explicit_params.schedule = sched;
    return attn_bwd(explicit_params, workspace, workspace_bytes, stream, info);
  }
  const TileProblem tp = tile_problem(s, block_n, block_m);
  // DASH_STRIDED_SHIFT=1: the strided starts of shift / symmetric shift (schedule.h), an
  // experiment not yet measured on a GPU; other bits (a pure function of shape and schedule).
  ScheduleModel model = ScheduleModel::make(tp, sched, kernels::env_set_to_one("DASH_STRIDED_SHIFT"));
  int grid = a.num_ctas > 0 ? a.num_ctas : capacity;
  if (grid > capacity)
    return make_status(StatusCode::kInvalidArgument,
                       "num_ctas %d exceeds the %d CTAs that can be co-resident (%d SMs x %d)", grid, capacity,
                       num_sms, per_sm);
  const int grid_requested = grid;
  grid = std::min(grid, model.num_tasks());
  BwdLaunchInfo li;
  if (model.min_coresident() > grid) {
    if (!a.allow_fallback)
      return make_status(StatusCode::kInsufficientResources,
                         "schedule %s needs %d co-resident CTAs for this shape but the grid has %d",
                         schedule_name(model.schedule), model.min_coresident(), grid);
    std::snprintf(li.note, sizeof(li.note), "%s needs %d co-resident CTAs, grid has %d: fell back to descending",
                  schedule_name(model.schedule), model.min_coresident(), grid);
    li.fell_back = true;
    model = ScheduleModel::make(tp, Schedule::kDescending);
  }
  // Atomic in shift's order (DASH_BWD_ATOMIC_SHIFT=1, opt-in until measured; sm90, full masks, where shift runs
  // atomic's tiles and its co-resident group fits the grid): the non-deterministic mode takes shift's task numbering,
  // groups and visits, and adds without the chain (the unordered writer). Unordered shift ran 1.009-1.015x atomic at
  // hdim 128 full and 1.028-1.054x at hdim 64 (docs/perf.md v47, next120); atomic with shift's visits alone lost.
  bool atomic_shift = false;
  if (use_sm90 && sched == Schedule::kAtomic && !s.causal && kernels::env_set_to_one("DASH_BWD_ATOMIC_SHIFT") &&
      kernels::bwd_sm90_block_m(s, Schedule::kShift) == block_m) {
    const ScheduleModel shifted = ScheduleModel::make(tp, Schedule::kShift);
    if (shifted.min_coresident() <= grid) {
      model = shifted;
      atomic_shift = true;
    }
  }
  // DASH_HEAD_BLOCK=B (experiment): interleave the tasks of B heads (group-width-1 schedules;
  // schedule.h, task_head). Same bits, another task order. DASH_HEAD_BLOCK=l2: as many heads as
  // stream their Q and dO within half the device's L2 (l2_head_block, an experiment to measure).
  // The sm80 kernel honours it too (not measured there). A value that is neither a positive
  // integer nor "l2" is ignored with a warning (once per process), not read as 0 (head-major).
  if (const char* hb = kernels::env_get("DASH_HEAD_BLOCK")) {
    char* end = nullptr;
    long b = std::strtol(hb, &end, 10);
    if (std::strcmp(hb, "l2") == 0) {
      int l2 = 0, dev = 0;
      DASH_CUDA_RETURN(cudaGetDevice(&dev));
      DASH_CUDA_RETURN(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
      const long long per_head = (long long)s.seqlen_q * s.head_dim * 2 * 2 * (s.heads_q / s.heads_kv);
      b = l2_head_block(per_head, l2 / 2);
    } else if (end == hb || *end != '\0' || b < 1) {
      static std::once_flag warned;
      std::call_once(warned, [hb] {
        std::fprintf(stderr, "dash-attn: DASH_HEAD_BLOCK=%s is not a positive integer or \"l2\"; ignored\n", hb);
      });
      b = 0;
    }
    if (b > 0) model = model.with_head_block(static_cast<int>(std::min<long>(b, 1L << 20)));
  }
  // The last-wave split (sm90 only; DASH_BWD_SPLIT_LAST=0 off): planned for kLastWaveSms, not for
  // this device, so that the bits do not depend on it. The workspace layout reserved its partials.
  if (use_sm90 && kernels::bwd_split_last_enabled() && kernels::bwd_sm90_kernel_splits(block_m, s.head_dim, model.schedule)) {
    model = model.with_last_wave_split();
    const size_t need = (size_t)model.split_tasks * model.split_pieces * kernels::bwd_split_partial_floats(s.head_dim) *
                        sizeof(float);
    if (need > ws.split_bytes)  // (a layout bug, not the caller's: the layout plans the same split)
      return make_status(StatusCode::kInvalidArgument, "last-wave split needs %zu workspace bytes, the layout has %zu", need,
                         ws.split_bytes);
    grid = std::min(grid_requested, model.num_units());  // (pieces are units a CTA takes)
  }

  kernels::BwdKernelParams p{};
  p.q = tref(a.q, a.q_stride);
  p.k = tref(a.k, a.k_stride);
  p.v = tref(a.v, a.v_stride);
  p.o = tref(a.o, a.o_stride);
  p.dout = tref(a.dout, a.dout_stride);
  p.dq = mref(a.dq, a.dq_stride);
  p.dk = mref(a.dk, a.dk_stride);
  p.dv = mref(a.dv, a.dv_stride);
  p.lse = a.lse;
  char* w = static_cast<char*>(workspace);
  p.lse_log2 = reinterpret_cast<float*>(w + ws.lse_log2);
  p.dsum = reinterpret_cast<float*>(w + ws.dsum);
  p.dq_accum = reinterpret_cast<float*>(w + ws.dq_accum);
  p.dq_sem = reinterpret_cast<int*>(w + ws.dq_sem);
  p.task_counter = reinterpret_cast<int*>(w + ws.task_counter);
  p.dq_mailbox = reinterpret_cast<int*>(w + ws.dq_mailbox);
  p.split_partials = reinterpret_cast<float*>(w + ws.split_partials);
  p.split_count = reinterpret_cast<int*>(w + ws.split_count);
  p.seqlen_q_pad = tp.m_tiles() * tp.block_m;
  p.model = model;
  p.dispatch = a.dispatch;
  p.scale = resolved_scale(s);
  p.scale_log2 = p.scale * 1.4426950408889634f;
  // Switches, see BwdKernelParams: diagnostics (dQ wrong with NO_REDUCE), drafts, and late
  // taking (default on since 6ed5f35's measurements; DASH_BWD_TAKE_LATE=0 restores the run-ahead
  // taker: same bits, slower chains). Take-ahead: default kDefaultTakeAhead (1: the next task is
  // taken when the current one has one step left; DASH_BWD_TAKE_AHEAD=0: once it is done).
  p.debug_unordered = atomic_shift || kernels::env_set_to_one("DASH_DEBUG_UNORDERED");
  p.debug_no_reduce = kernels::env_set_to_one("DASH_DEBUG_NO_REDUCE");
  // The sm90 writers run an ordered chain (semaphores): a first contribution to store and a
  // completion count to wait for.
  const bool ordered_sm90 = use_sm90 && model.deterministic() && !p.debug_unordered;
  p.dq_first_store = ordered_sm90 && kernels::env_not_zero("DASH_BWD_DQ_FIRST_STORE");
  // Programmatic dependent launch of the main kernel and the postprocess (sm90; default on since
  // the twenty-first session, docs/perf.md v22 items 3-5: +0-3% at 512-2k, the same bits;
  // DASH_BWD_PDL=0 off), and on ordered schedules the postprocess polling its tile's semaphore
  // (one block per dQ tile, converting while the main kernel's tail runs: +1-6% at 1k-4k; default
  // on except for head_dim 64's 64-row tiles, where it measured 0.98-0.99 at 512;
  // DASH_BWD_POST_POLL=0 / =1 forces it). Not while the stream is being captured into a CUDA graph:
  // programmatic edges in graphs have not been run on a GPU here yet.
  // DASH_BWD_ATOMIC_POLL=1 (opt-in until measured): the non-deterministic sm90 writers (atomic, the unordered
  // debug mode) count the adds that have landed on the tile's semaphore, so that the polling postprocess, its
  // completion queue (by default) and its post SMs run for them as for the ordered schedules. Not with the overlap-writer
  // draft (it does not count). The same adds: only the conversion's timing changes.
  p.writer_overlap = kernels::env_set_to_one("DASH_BWD_WRITER_OVERLAP");
  const bool counted_sm90 =
      use_sm90 && !ordered_sm90 && !p.writer_overlap && kernels::env_set_to_one("DASH_BWD_ATOMIC_POLL");
  bool capturing = false;
  if (use_sm90) {
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    DASH_CUDA_RETURN(cudaStreamIsCapturing(stream, &cs));
    capturing = cs != cudaStreamCaptureStatusNone;
  }
  p.pdl = use_sm90 && !capturing && kernels::env_not_zero("DASH_BWD_PDL");
  {
    const char* pp = kernels::env_get("DASH_BWD_POST_POLL");
    const bool small_tile = s.head_dim == 64 && tp.block_m == kernels::kBwdSm90BlockM;
    p.post_poll = p.pdl && (ordered_sm90 || counted_sm90) && (pp != nullptr ? std::atoi(pp) != 0 : !small_tile);
  }
  // The completion queue (BwdKernelParams::dq_queue; docs/bwd-sm90.md "The completion queue"): with
  // the polling postprocess, its blocks convert tiles in the order they complete. Default on where a
  // head's last contributions are spread over its tasks (kernels::post_queue_default: full-mask
  // shift, symmetric shift, causal descending at head_dim 128); DASH_BWD_POST_QUEUE=0 / =1 forces it. Not
  // with the overlap-writer draft (its writer does not append). The same bits.
  if (p.post_poll && !p.writer_overlap) {
    const char* pq = kernels::env_get("DASH_BWD_POST_QUEUE");
    if (pq != nullptr ? std::atoi(pq) != 0
                      : counted_sm90 || kernels::post_queue_default(model.schedule, s.causal, s.head_dim))
      p.dq_queue = reinterpret_cast<int*>(w + ws.dq_queue);
  }
  p.queue_late_append = p.dq_queue != nullptr && kernels::env_set_to_one("DASH_BWD_QUEUE_LATE_APPEND");
  p.queue_diag = p.dq_queue != nullptr && kernels::env_set_to_one("DASH_BWD_QUEUE_DIAG");
  // Post SMs (DASH_BWD_POST_SMS=k; kernels::post_sms_default): with the polling postprocess and no
  // grid chosen by the caller, launch the main kernel on k fewer CTAs than fit (when there are tasks
  // for all of them and the schedule's co-resident group still fits), so that k SMs run the
  // postprocess's blocks while the main kernel runs (it triggers their launch at its top): dQ tiles
  // are converted soon after their last add, from L2, instead of in the tail. Without the queue 2 up
  // to 2048 keys (the thirty-first session, docs/perf.md v32 item 1: +0.4-2.5% at 1-2k, level from
  // 4k, where the blocks waited in tile order); with it, at every length, 4 for the grouped schedules
  // (the CTAs past their last whole group stall anyway) and 2 otherwise (v34). The grid size never
  // changes the bits.
  if (p.post_poll && a.num_ctas == 0) {
    const char* ps = kernels::env_get("DASH_BWD_POST_SMS");
    const int k = ps != nullptr ? std::max(0, std::atoi(ps))
                                : kernels::post_sms_default(s.seqlen_k, p.dq_queue != nullptr, model.min_coresident() > 1);
    if (k > 0 && grid == grid_requested && grid - k >= std::max(1, model.min_coresident())) grid -= k;
  }
  p.writer_early_release = kernels::env_set_to_one("DASH_BWD_EARLY_RELEASE");
  // Late taking for the deterministic schedules of group width 1 and, since the forty-fourth session,
  // for atomic too (docs/perf.md v45: the run-ahead taker let a CTA hold up to two tasks behind a long
  // causal one, so atomic ran at 0.76-0.84x of descending's identical visits at causal 4k-16k);
  // DASH_BWD_ATOMIC_TAKE_LATE=0 restores atomic's run-ahead taker (an A/B switch; atomic has no
  // chains, so either order is deadlock-free).
  p.take_late = kernels::env_not_zero("DASH_BWD_TAKE_LATE") &&
                (model.deterministic() || kernels::env_not_zero("DASH_BWD_ATOMIC_TAKE_LATE"));
  // Group take (default since the thirtieth session, docs/perf.md v31: +4-12% for shift / symmetric
  // shift at 512-1k, +1-6% at 2-4k, level at 16k; the same bits); DASH_BWD_GROUP_TAKE=0: the drain.
  p.group_take = kernels::env_not_zero("DASH_BWD_GROUP_TAKE");
  // Early dV (docs/perf.md v10): on by default at head_dim 64 (+0.4..+1.1% geomean over the
  // ordered schedules, 2 interleaved rounds), off at 128 (-1.6..-2.1%: the P^T copy it needs
  // costs more than the overlap wins there). DASH_BWD_EARLY_DV=0 / =1 forces it off / on.
  p.early_dv = s.head_dim == 64 ? kernels::env_not_zero("DASH_BWD_EARLY_DV") : kernels::env_set_to_one("DASH_BWD_EARLY_DV");
  {
    const char* ta = kernels::env_get("DASH_BWD_TAKE_AHEAD");
    p.take_ahead = ta != nullptr ? std::max(0, std::atoi(ta)) : kernels::kDefaultTakeAhead;
  }
  // Two dQ writers by default (docs/perf.md v7), for every dispatch and take-ahead. Until v9 static
  // dispatch and take-ahead ran one writer: two writers + static dispatch hung on the H200 when
  // another process shared the GPU (docs/perf.md v8). The cause, found by the protocol model
  // tests/cpu/bwd_protocol_check.py, is fixed in the kernel (the MMA threads meet before the exit
  // posts, 6a30c76); on the H200 that fix passed scripts/hang-stress.sh with two writers forced on
  // the grid-size and take-ahead tests (3 processes x 3 repeats, 36/36 each) and the whole GPU suite
  // with the sanitizers (docs/perf.md v9), so the guard is gone. DASH_BWD_DUAL_WRITER=0: one writer.
  // The overlap-writer draft is one writer: p.dual_writer already says so, the kernel reads it alone.
  {
    const char* dw = kernels::env_get("DASH_BWD_DUAL_WRITER");
    const int v = dw != nullptr ? std::atoi(dw) : 1;
    p.dual_writer = !p.writer_overlap && v != 0;
  }
  p.q_pack = repack && use_sm90 ? q_pack : nullptr;  // the sm80 kernel reads the user's tensors
  p.do_pack = repack && use_sm90 ? do_pack : nullptr;
  // The 16-byte-load preprocess (DASH_BWD_PRE_VEC=0: the scalar one): O and dO are 16-byte aligned,
  // pointers and strides (check_tensors above); not with the repack draft, whose preprocess also
  // packs Q / dO.
  p.pre_vec = p.q_pack == nullptr && kernels::env_not_zero("DASH_BWD_PRE_VEC");
  // 16-byte dK / dV stores in the sm90 epilogue (DASH_BWD_DKV_VEC=0: the same words 4 bytes at a
  // time): every row start is 16-byte aligned, as check_tensors above requires of every tensor.
  p.dkv_vec16 = kernels::env_not_zero("DASH_BWD_DKV_VEC");

  {  // dq_accum needs no zeroing when each tile's first contribution is stored (p.dq_first_store);
     // with p.pdl the rest (semaphores, task counter, mailboxes) is zeroed by the preprocess.
    const size_t begin = p.dq_first_store ? ws.dq_sem : ws.zero_begin;
    const size_t bytes = ws.zero_begin + ws.zero_bytes - begin;
    p.zero_ptr = reinterpret_cast<int*>(w + begin);
    p.zero_words = p.pdl && p.dq_first_store ? static_cast<int64_t>(bytes / sizeof(int)) : 0;
    if (p.zero_words == 0) DASH_CUDA_RETURN(cudaMemsetAsync(w + begin, 0, bytes, stream));
  }
  DASH_CUDA_RETURN(kernels::launch_bwd_preprocess(p, s.head_dim, s.dtype, stream));
  if (use_sm90) {
    DASH_CUDA_RETURN(kernels::launch_bwd_main_sm90(p, sm90_maps, s.head_dim, s.dtype, s.causal, grid, stream));
    DASH_CUDA_RETURN(kernels::launch_bwd_postprocess_sm90(p, s.head_dim, s.dtype, stream));
  } else {
    DASH_CUDA_RETURN(kernels::launch_bwd_main(p, s.head_dim, s.dtype, s.causal, grid, stream));
    DASH_CUDA_RETURN(kernels::launch_bwd_postprocess(p, s.head_dim, s.dtype, stream));
  }

  if (info) {
    li.schedule = atomic_shift ? Schedule::kAtomic : model.schedule;
    li.atomic_shift = atomic_shift;
    li.dispatch = a.dispatch;
    li.num_ctas = grid;
    li.block_m = tp.block_m;
    li.block_n = tp.block_n;
    li.num_tasks = model.num_tasks();
    li.split_tasks = model.split() ? model.split_tasks : 0;
    li.split_pieces = model.split() ? model.split_pieces : 1;
    li.min_coresident = model.min_coresident();
    li.head_block = model.head_block;
    li.producer_regs = use_sm90 ? kernels::bwd_sm90_producer_regs(block_m, s.head_dim) : 0;
    li.dq_stage_bufs =
        use_sm90 ? kernels::bwd_sm90_dq_stage_bufs(block_m, s.head_dim, s.dtype, s.causal, li.producer_regs,
                                                   model.schedule)
                 : 0;
    li.dq_writers = use_sm90 && p.dual_writer && li.dq_stage_bufs == 2 ? 2 : 1;
    li.split_rank = use_sm90 && kernels::bwd_sm90_split_rank(model, s.head_dim);
    li.writer_rank = use_sm90 && kernels::bwd_sm90_writer_rank(model, s.head_dim);
    li.pdl = p.pdl != 0;
    li.post_poll = p.post_poll != 0;
    li.post_queue = p.dq_queue != nullptr;
    li.pre_vec = p.pre_vec != 0;
    *info = li;
  }
  return Status{};
}

}  // namespace dash
