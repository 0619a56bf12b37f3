// One attention problem on the device: inputs, outputs, workspace, and the float64 reference.
#pragma once

#include "gpu_test_util.h"

namespace dash::test {

struct ProblemSpec {
  int batch = 1, seqlen_q = 128, seqlen_k = 128, heads_q = 2, heads_kv = 2, head_dim = 64;
  bool causal = false;
  DType dtype = DType::kBF16;
  uint64_t seed = 1;
  std::string str() const {
    char buf[160];
    std::snprintf(buf, sizeof(buf), "b%d sq%d sk%d h%d/%d d%d %s %s", batch, seqlen_q, seqlen_k, heads_q, heads_kv,
                  head_dim, causal ? "causal" : "full", dtype == DType::kBF16 ? "bf16" : "fp16");
    return buf;
  }
};

struct Problem {
  ProblemSpec spec;
  AttnShape shape;
  Tensor q, k, v, o, dout, dq, dk, dv;
  DeviceBuffer lse, workspace;

  explicit Problem(const ProblemSpec& s) : spec(s) {
    shape.batch = s.batch; shape.seqlen_q = s.seqlen_q; shape.seqlen_k = s.seqlen_k;
    shape.heads_q = s.heads_q; shape.heads_kv = s.heads_kv; shape.head_dim = s.head_dim;
    shape.dtype = s.dtype; shape.causal = s.causal;
    std::mt19937_64 rng(s.seed);
    // Padded head strides on some tensors exercise stride handling.
    q.alloc(s.batch, s.seqlen_q, s.heads_q, s.head_dim, s.dtype, 1);
    k.alloc(s.batch, s.seqlen_k, s.heads_kv, s.head_dim, s.dtype, 0);
    v.alloc(s.batch, s.seqlen_k, s.heads_kv, s.head_dim, s.dtype, 2);
    o.alloc(s.batch, s.seqlen_q, s.heads_q, s.head_dim, s.dtype, 0);
    dout.alloc(s.batch, s.seqlen_q, s.heads_q, s.head_dim, s.dtype, 1);
    dq.alloc(s.batch, s.seqlen_q, s.heads_q, s.head_dim, s.dtype, 0);
    dk.alloc(s.batch, s.seqlen_k, s.heads_kv, s.head_dim, s.dtype, 1);
    dv.alloc(s.batch, s.seqlen_k, s.heads_kv, s.head_dim, s.dtype, 0);
    q.fill_random(rng, s.dtype);
    k.fill_random(rng, s.dtype);
    v.fill_random(rng, s.dtype);
    dout.fill_random(rng, s.dtype);
    q.upload(); k.upload(); v.upload(); dout.upload();
    lse.reset((size_t)s.batch * s.heads_q * s.seqlen_q * sizeof(float));
    workspace.reset(attn_bwd_workspace_size(shape));
  }

  Status forward(cudaStream_t stream = nullptr) {
    AttnFwdParams p;
    p.shape = shape;
    p.q = q.dev.ptr; p.q_stride = q.st;
    p.k = k.dev.ptr; p.k_stride = k.st;
    p.v = v.dev.ptr; p.v_stride = v.st;
    p.o = o.dev.ptr; p.o_stride = o.st;
    p.lse = lse.as<float>();
    return attn_fwd(p, stream);
  }

  AttnBwdParams bwd_params(Schedule sched) const {
    AttnBwdParams p;
    p.shape = shape;
    p.q = q.dev.ptr; p.q_stride = q.st;
    p.k = k.dev.ptr; p.k_stride = k.st;
    p.v = v.dev.ptr; p.v_stride = v.st;
    p.o = o.dev.ptr; p.o_stride = o.st;
    p.dout = dout.dev.ptr; p.dout_stride = dout.st;
    p.lse = lse.as<float>();
    p.dq = dq.dev.ptr; p.dq_stride = dq.st;
    p.dk = dk.dev.ptr; p.dk_stride = dk.st;
    p.dv = dv.dev.ptr; p.dv_stride = dv.st;
    p.schedule = sched;
    return p;
  }

  Status backward(const AttnBwdParams& p, cudaStream_t stream = nullptr, BwdLaunchInfo* info = nullptr) {
    return attn_bwd(p, workspace.ptr, workspace.bytes, stream, info);
  }

  void poison_grads() { dq.poison(spec.dtype); dk.poison(spec.dtype); dv.poison(spec.dtype); }

  uint64_t grad_hash() { return fnv1a_combine(dq.hash(), dk.hash(), dv.hash()); }
  static uint64_t fnv1a_combine(uint64_t a, uint64_t b, uint64_t c) {
    const uint64_t v[3] = {a, b, c};
    return fnv1a(v, sizeof(v));
  }

  ref::RefShape ref_shape() const {
    ref::RefShape r;
    r.batch = spec.batch; r.seqlen_q = spec.seqlen_q; r.seqlen_k = spec.seqlen_k;
    r.heads_q = spec.heads_q; r.heads_kv = spec.heads_kv; r.head_dim = spec.head_dim; r.causal = spec.causal;
    return r;
  }
};

}  // namespace dash::test
