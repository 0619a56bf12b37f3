// PyTorch binding of the dash-attn C++ API (include/dash_attn/attention.h).
//
// The only translation unit that sees torch headers. Plain pybind11 functions on at::Tensor;
// python/dash_attn/_ops.py registers them as torch.library custom ops (dash_attn::fwd,
// dash_attn::bwd) with fake implementations and the autograd formula.
//
// Errors: bad arguments raise ValueError (TypeError for a wrong dtype) naming the argument;
// a non-ok dash::Status raises ValueError (invalid argument / unsupported) or RuntimeError
// (CUDA error, insufficient resources) carrying status.message.
#include <torch/extension.h>

#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/EmptyTensor.h>
#include <c10/cuda/CUDAGuard.h>

#include <climits>
#include <cstdio>
#include <type_traits>
#include <cstdint>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "dash_attn/attention.h"
#include "dash_attn/schedule.h"

namespace py = pybind11;

namespace {

// No C++ exception is thrown here: a throw through pybind11 in this extension crashed the
// interpreter on the GPU machine (torch 2.11, docs/python.md). Every failure is recorded here
// and the entry point returns the error tuple ("__dash_error__", kind, message) instead of its
// result; dash_attn._ops.extension() wraps the module and raises kind(message) in Python.
struct BindError {
  const char* type = nullptr;  // "ValueError", "TypeError" or "RuntimeError"
  std::string message;
};
thread_local BindError g_error;

// Allocation of the outputs and the workspace without PyTorch's deterministic-mode fill
// (torch.utils.deterministic.fill_uninitialized_memory: at::empty writes NaN into every new
// tensor while deterministic algorithms are on). Every element of o, lse, dq, dk and dv is
// written by the kernels (the C++ tests poison the outputs and fail on any element left
// unwritten), and the C API zeroes the parts of the workspace it accumulates into, so the fill
// would only cost bandwidth: about 60 MB of writes per backward at the training example's shape.
at::Tensor empty_written_by_kernel(at::IntArrayRef sizes, const at::TensorOptions& options) {
  return at::Tensor(at::detail::empty_cuda(sizes, options));
}

// Messages are built without iostreams: on the GPU machine the first error message of a
// session crashed the interpreter inside the C++ call, both when it was thrown and when it was
// returned; the common step was c10::str (an ostringstream). Sizes, devices and dtypes are
// formatted here with plain string appends instead (docs/python.md).
void append(std::string& s, const char* x) { s += x; }
void append(std::string& s, const std::string& x) { s += x; }
void append(std::string& s, double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  s += buf;
}
template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
void append(std::string& s, T x) { s += std::to_string(x); }
void append(std::string& s, at::IntArrayRef x) {
  s += "[";
  for (size_t i = 0; i < x.size(); ++i) s += (i ? ", " : "") + std::to_string(x[i]);
  s += "]";
}
void append(std::string& s, const c10::Device& d) { s += d.str(); }
void append(std::string& s, c10::ScalarType t) { s += c10::toString(t); }

template <typename... Args>
std::string cat(const Args&... args) {
  std::string s;
  (append(s, args), ...);
  return s;
}

template <typename... Args>
bool value_error(const Args&... args) {
  g_error = {"ValueError", cat("dash_attn: ", args...)};
  return false;
}

template <typename... Args>
bool type_error(const Args&... args) {
  g_error = {"TypeError", cat("dash_attn: ", args...)};
  return false;
}

bool status_error(const dash::Status& st, const char* entry) {
  const bool user = st.code == dash::StatusCode::kInvalidArgument || st.code == dash::StatusCode::kUnsupported;
  g_error = {user ? "ValueError" : "RuntimeError", cat("dash_attn.", entry, ": ", st.message)};
  return false;
}

// The recorded error as the tuple the Python wrapper turns into an exception.
py::object raise_recorded() {
  py::object r = py::make_tuple("__dash_error__", g_error.type ? g_error.type : "RuntimeError", g_error.message);
  g_error = {};
  return r;
}

// Checks shared by every (batch, seqlen, heads, head_dim) tensor argument.
bool check_bshd(const at::Tensor& t, const char* name, const at::Tensor& ref) {
  if (!t.defined()) return value_error(name, " is undefined");
  if (!t.is_cuda()) return value_error(name, " must be a CUDA tensor (got device ", t.device(), ")");
  if (t.device() != ref.device())
    return value_error(name, " is on ", t.device(), " but q is on ", ref.device(), ": all tensors must be on one device");
  if (t.scalar_type() != at::kBFloat16 && t.scalar_type() != at::kHalf)
    return type_error(name, " must be bfloat16 or float16 (got ", t.scalar_type(), ")");
  if (t.scalar_type() != ref.scalar_type())
    return type_error(name, " has dtype ", t.scalar_type(), " but q has ", ref.scalar_type(), ": dtypes must match");
  if (t.dim() != 4) return value_error(name, " must be 4-D (batch, seqlen, heads, head_dim), got shape ", t.sizes());
  if (t.stride(3) != 1 && t.size(3) > 1)
    return value_error(name, " must have a contiguous last dimension (head_dim stride 1), got strides ", t.strides());
  for (int d = 0; d < 3; ++d) {
    if (t.size(d) > 1 && (t.stride(d) % 8 != 0 || t.stride(d) <= 0))
      return value_error(name, " strides on (batch, seqlen, heads) must be positive multiples of 8 elements, got strides ",
                  t.strides(), " (call .contiguous())");
  }
  if (reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 != 0)
    return value_error(name, " data pointer must be 16-byte aligned (storage_offset ", t.storage_offset(),
                " is not a multiple of 8 elements; call .contiguous())");
  return true;
}

// A size-1 dimension's stride is irrelevant (torch may report anything there): pass 0, which the
// C API accepts for a single batch / position / head.
dash::Strides3 strides_of(const at::Tensor& t) {
  dash::Strides3 s;
  s.batch = t.size(0) == 1 ? 0 : t.stride(0);
  s.seq = t.size(1) == 1 ? 0 : t.stride(1);
  s.head = t.size(2) == 1 ? 0 : t.stride(2);
  return s;
}

bool to_int(int64_t x, const char* what, int* out) {
  if (x < 1 || x > INT_MAX) return value_error(what, " must be in [1, ", INT_MAX, "], got ", x);
  *out = static_cast<int>(x);
  return true;
}

bool make_shape(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal, double softmax_scale,
                dash::AttnShape* out) {
  if (!check_bshd(q, "q", q) || !check_bshd(k, "k", q) || !check_bshd(v, "v", q)) return false;
  if (k.sizes() != v.sizes()) return value_error("k and v must have the same shape, got ", k.sizes(), " and ", v.sizes());
  if (k.size(0) != q.size(0)) return value_error("batch of k (", k.size(0), ") differs from batch of q (", q.size(0), ")");
  if (k.size(3) != q.size(3))
    return value_error("head_dim of k/v (", k.size(3), ") differs from head_dim of q (", q.size(3), ")");
  if (q.size(3) != 64 && q.size(3) != 128) return value_error("head_dim ", q.size(3), " is not supported (supported: 64, 128)");
  if (q.size(2) % k.size(2) != 0)
    return value_error("heads of q (", q.size(2), ") must be a multiple of heads of k/v (", k.size(2), ")");
  if (!(softmax_scale >= 0.0) || softmax_scale > 3.0e38)
    return value_error("softmax_scale must be finite and >= 0 (0 = 1/sqrt(head_dim)), got ", softmax_scale);
  dash::AttnShape s;
  if (!to_int(q.size(0), "batch", &s.batch) || !to_int(q.size(1), "seqlen_q", &s.seqlen_q) ||
      !to_int(k.size(1), "seqlen_k", &s.seqlen_k) || !to_int(q.size(2), "heads_q", &s.heads_q) ||
      !to_int(k.size(2), "heads_kv", &s.heads_kv))
    return false;
  s.head_dim = static_cast<int>(q.size(3));
  s.dtype = q.scalar_type() == at::kBFloat16 ? dash::DType::kBF16 : dash::DType::kFP16;
  s.causal = causal;
  s.softmax_scale = static_cast<float>(softmax_scale);
  *out = s;
  return true;
}

bool check_lse(const at::Tensor& lse, const dash::AttnShape& s, const at::Tensor& q) {
  if (!lse.defined()) return value_error("lse is undefined");
  if (!lse.is_cuda() || lse.device() != q.device())
    return value_error("lse must be on the device of q (", q.device(), "), got ", lse.device());
  if (lse.scalar_type() != at::kFloat) return type_error("lse must be float32, got ", lse.scalar_type());
  if (lse.dim() != 3 || lse.size(0) != s.batch || lse.size(1) != s.heads_q || lse.size(2) != s.seqlen_q)
    return value_error("lse must have shape (batch, heads_q, seqlen_q) = (", s.batch, ", ", s.heads_q, ", ", s.seqlen_q,
                "), got ", lse.sizes());
  if (!lse.is_contiguous()) return value_error("lse must be contiguous");
  return true;
}

std::mutex g_info_mu;
bool g_has_info = false;
dash::BwdLaunchInfo g_last_info;

// The fields AttnFwdParams and AttnBwdParams share: q, k, v, o and their strides.
template <typename Params>
void set_qkvo(Params& p, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& o) {
  p.q = q.data_ptr();
  p.q_stride = strides_of(q);
  p.k = k.data_ptr();
  p.k_stride = strides_of(k);
  p.v = v.data_ptr();
  p.v_stride = strides_of(v);
  p.o = o.data_ptr();
  p.o_stride = strides_of(o);
}

// Returns (o, lse), or the error tuple.
py::object fwd(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal, double softmax_scale) {
  dash::AttnShape shape;
  if (!make_shape(q, k, v, causal, softmax_scale, &shape)) return raise_recorded();
  const c10::cuda::CUDAGuard guard(q.device());
  at::Tensor o = empty_written_by_kernel(q.sizes(), q.options());  // contiguous (batch, seqlen_q, heads_q, head_dim)
  at::Tensor lse = empty_written_by_kernel({shape.batch, shape.heads_q, shape.seqlen_q}, q.options().dtype(at::kFloat));

  dash::AttnFwdParams p;
  p.shape = shape;
  set_qkvo(p, q, k, v, o);
  p.lse = lse.data_ptr<float>();
  // make_shape checked that q, k, v are CUDA tensors on q's device; o and lse were allocated
  // there, and the guard makes it the current device: the C API can skip its per-pointer
  // cudaPointerGetAttributes queries (null and alignment are still checked).
  p.pointers_verified = true;
  const dash::Status st = dash::attn_fwd(p, at::cuda::getCurrentCUDAStream().stream());
  if (!st.ok()) {
    status_error(st, "fwd");
    return raise_recorded();
  }
  return py::make_tuple(o, lse);
}

// Returns (dq, dk, dv), or the error tuple.
py::object bwd(const at::Tensor& dout, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
               const at::Tensor& o, const at::Tensor& lse, bool causal, double softmax_scale,
               const std::string& schedule, int64_t num_ctas) {
  dash::AttnShape shape;
  if (!make_shape(q, k, v, causal, softmax_scale, &shape) || !check_bshd(o, "o", q) || !check_bshd(dout, "dout", q))
    return raise_recorded();
  if (o.sizes() != q.sizes()) {
    value_error("o must have the shape of q ", q.sizes(), ", got ", o.sizes());
    return raise_recorded();
  }
  if (dout.sizes() != q.sizes()) {
    value_error("dout must have the shape of q ", q.sizes(), ", got ", dout.sizes());
    return raise_recorded();
  }
  if (!check_lse(lse, shape, q)) return raise_recorded();
  dash::Schedule sched;
  if (!dash::parse_schedule(schedule.c_str(), &sched)) {
    std::string names;
    for (int i = 0; i <= static_cast<int>(dash::Schedule::kAuto); ++i)
      names += cat(i ? ", " : "", dash::schedule_name(static_cast<dash::Schedule>(i)));
    value_error("schedule '", schedule, "' is unknown (expected one of: ", names, ")");
    return raise_recorded();
  }
  if (num_ctas < 0 || num_ctas > INT_MAX) {
    value_error("num_ctas must be >= 0 (0 = sized from the device), got ", num_ctas);
    return raise_recorded();
  }

  const c10::cuda::CUDAGuard guard(q.device());
  at::Tensor dq = empty_written_by_kernel(q.sizes(), q.options());
  at::Tensor dk = empty_written_by_kernel(k.sizes(), k.options());
  at::Tensor dv = empty_written_by_kernel(v.sizes(), v.options());

  // The C API needs a 256-byte aligned workspace. The caching allocator's blocks are 512-byte
  // aligned, but do not rely on it: over-allocate by 256 bytes and align the pointer.
  const size_t ws_bytes = dash::attn_bwd_workspace_size(shape);
  at::Tensor ws = empty_written_by_kernel({static_cast<int64_t>(ws_bytes) + 256}, q.options().dtype(at::kByte));
  const uintptr_t base = reinterpret_cast<uintptr_t>(ws.data_ptr());
  void* ws_ptr = reinterpret_cast<void*>((base + 255) & ~static_cast<uintptr_t>(255));

  dash::AttnBwdParams p;
  p.shape = shape;
  set_qkvo(p, q, k, v, o);
  p.dout = dout.data_ptr();
  p.dout_stride = strides_of(dout);
  p.lse = lse.data_ptr<float>();
  p.dq = dq.data_ptr();
  p.dq_stride = strides_of(dq);
  p.dk = dk.data_ptr();
  p.dk_stride = strides_of(dk);
  p.dv = dv.data_ptr();
  p.dv_stride = strides_of(dv);
  p.schedule = sched;
  p.dispatch = dash::Dispatch::kDynamic;
  p.num_ctas = static_cast<int>(num_ctas);
  p.allow_fallback = true;
  // make_shape, check_bshd and check_lse checked that q, k, v, o, dout and lse are CUDA tensors
  // on q's device; dq, dk, dv were allocated there, and the guard makes it the current device:
  // the C API can skip its per-pointer cudaPointerGetAttributes queries (null, alignment and
  // strides are still checked).
  p.pointers_verified = true;

  dash::BwdLaunchInfo info;
  // `ws` is released when this function returns; the caching allocator reuses it only in
  // stream order (the current stream, which the kernels were launched on).
  const dash::Status st = dash::attn_bwd(p, ws_ptr, ws_bytes, at::cuda::getCurrentCUDAStream().stream(), &info);
  if (!st.ok()) {
    status_error(st, "bwd");
    return raise_recorded();
  }
  {
    std::lock_guard<std::mutex> lock(g_info_mu);
    g_last_info = info;
    g_has_info = true;
  }
  return py::make_tuple(dq, dk, dv);
}

std::vector<std::string> schedule_names() {
  std::vector<std::string> names;
  for (int i = 0; i <= static_cast<int>(dash::Schedule::kAuto); ++i)
    names.emplace_back(dash::schedule_name(static_cast<dash::Schedule>(i)));
  return names;
}

py::object last_bwd_info() {
  dash::BwdLaunchInfo info;
  {
    std::lock_guard<std::mutex> lock(g_info_mu);
    if (!g_has_info) return py::none();
    info = g_last_info;
  }
  py::dict d;
  d["schedule"] = std::string(dash::schedule_name(info.schedule));
  d["dispatch"] = std::string(dash::dispatch_name(info.dispatch));
  d["num_ctas"] = info.num_ctas;
  d["block_m"] = info.block_m;
  d["block_n"] = info.block_n;
  d["num_tasks"] = info.num_tasks;
  d["split_tasks"] = info.split_tasks;    // the last-wave split: tasks cut into pieces (0: none)
  d["split_pieces"] = info.split_pieces;
  d["min_coresident"] = info.min_coresident;
  d["head_block"] = info.head_block;
  d["dq_writers"] = info.dq_writers;
  d["dq_stage_bufs"] = info.dq_stage_bufs;
  d["producer_regs"] = info.producer_regs;
  d["split_rank"] = info.split_rank;
  d["writer_rank"] = info.writer_rank;
  d["pdl"] = info.pdl;
  d["post_poll"] = info.post_poll;
  d["post_queue"] = info.post_queue;
  d["pre_vec"] = info.pre_vec;
  d["atomic_shift"] = info.atomic_shift;
  d["fell_back"] = info.fell_back;
  d["note"] = std::string(info.note);
  return d;
}

py::object bwd_workspace_size(int64_t batch, int64_t seqlen_q, int64_t seqlen_k, int64_t heads_q, int64_t heads_kv,
                              int64_t head_dim, bool causal) {
  dash::AttnShape s;
  if (!to_int(batch, "batch", &s.batch) || !to_int(seqlen_q, "seqlen_q", &s.seqlen_q) ||
      !to_int(seqlen_k, "seqlen_k", &s.seqlen_k) || !to_int(heads_q, "heads_q", &s.heads_q) ||
      !to_int(heads_kv, "heads_kv", &s.heads_kv) || !to_int(head_dim, "head_dim", &s.head_dim))
    return raise_recorded();
  s.causal = causal;
  return py::int_(static_cast<int64_t>(dash::attn_bwd_workspace_size(s)));
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "dash-attn kernels (C++ API binding); use dash_attn.attention, not these directly";
  m.def("fwd", &fwd, "Attention forward: (o, lse)", py::arg("q"), py::arg("k"), py::arg("v"), py::arg("causal"),
        py::arg("softmax_scale"));
  m.def("bwd", &bwd, "Attention backward: (dq, dk, dv)", py::arg("dout"), py::arg("q"), py::arg("k"), py::arg("v"),
        py::arg("o"), py::arg("lse"), py::arg("causal"), py::arg("softmax_scale"), py::arg("schedule"),
        py::arg("num_ctas"));
  m.def("schedule_names", &schedule_names, "Schedule names the backward accepts");
  m.def("last_bwd_info", &last_bwd_info,
        "What the last backward launch did (dict: schedule, num_ctas, fell_back, note, ...), None before any");
  m.def("bwd_workspace_size", &bwd_workspace_size, "Bytes of device workspace the backward allocates",
        py::arg("batch"), py::arg("seqlen_q"), py::arg("seqlen_k"), py::arg("heads_q"), py::arg("heads_kv"),
        py::arg("head_dim"), py::arg("causal"));
}
