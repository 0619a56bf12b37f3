#include "reference/attention_ref.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace dash::ref {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// Element offset of (b, s, h, 0) in a dense (batch, seqlen, heads, head_dim) tensor.
inline int64_t offset(int b, int s, int h, int seqlen, int heads, int head_dim) {
  return ((static_cast<int64_t>(b) * seqlen + s) * heads + h) * head_dim;
}

// NOTES: four independent accumulators so the loop is not bound by add latency (the compiler
// may not reassociate a double reduction on its own).
inline double dot(const double* a, const double* b, int n) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < n; ++i) s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

inline void axpy(double alpha, const double* x, double* y, int n) {
  for (int i = 0; i < n; ++i) y[i] += alpha * x[i];
}

// Runs fn(task) for task in [0, n_tasks) on up to hardware_concurrency threads.
template <class F>
void parallel_for(int n_tasks, F&& fn) {
  unsigned hw = std::thread::hardware_concurrency();
  int n_threads = std::min<int>(n_tasks, hw == 0 ? 1 : static_cast<int>(hw));
  if (n_threads <= 1) {
    for (int t = 0; t < n_tasks; ++t) fn(t);
    return;
  }
  std::atomic<int> next{0};
  auto worker = [&] {
    for (int t = next.fetch_add(1); t < n_tasks; t = next.fetch_add(1)) fn(t);
  };
  std::vector<std::thread> threads;
  threads.reserve(n_threads - 1);
  for (int i = 0; i < n_threads - 1; ++i) threads.emplace_back(worker);
  worker();
  for (auto& th : threads) th.join();
}

}  // namespace

void validate(const RefShape& s) {
  auto fail = [](const std::string& what) {
    throw std::invalid_argument("dash::ref::RefShape: " + what);
  };
  if (s.batch <= 0) fail("batch must be > 0");
  if (s.seqlen_q < 0 || s.seqlen_k < 0) fail("seqlens must be >= 0");
  if (s.heads_q <= 0 || s.heads_kv <= 0) fail("head counts must be > 0");
  if (s.heads_q % s.heads_kv != 0) fail("heads_q must be a multiple of heads_kv");
  if (s.head_dim <= 0) fail("head_dim must be > 0");
}

double effective_scale(const RefShape& s) {
  return s.softmax_scale > 0.0 ? s.softmax_scale : 1.0 / std::sqrt(static_cast<double>(s.head_dim));
}

int visible_keys(const RefShape& s, int row) {
  if (!s.causal) return s.seqlen_k;
  int64_t last = static_cast<int64_t>(row) + (s.seqlen_k - s.seqlen_q);  // last visible key
  return static_cast<int>(std::clamp<int64_t>(last + 1, 0, s.seqlen_k));
}

void attention_forward(const RefShape& s, const double* q, const double* k, const double* v,
                       double* o, double* lse) {
  validate(s);
  const int D = s.head_dim, Sq = s.seqlen_q, Sk = s.seqlen_k, Hq = s.heads_q, Hkv = s.heads_kv;
  const int group = Hq / Hkv;
  const double scale = effective_scale(s);

  parallel_for(s.batch * Hq, [&](int task) {
    const int b = task / Hq, h = task % Hq, hk = h / group;
    std::vector<double> scores(std::max(Sk, 1));
    for (int r = 0; r < Sq; ++r) {
      const double* q_r = q + offset(b, r, h, Sq, Hq, D);  // (D)
      double* o_r = o + offset(b, r, h, Sq, Hq, D);        // (D)
      double* lse_r = lse + (static_cast<int64_t>(b) * Hq + h) * Sq + r;
      std::fill(o_r, o_r + D, 0.0);
      const int n = visible_keys(s, r);
      if (n == 0) {
        *lse_r = kNegInf;
        continue;
      }
      double m = kNegInf;
      for (int c = 0; c < n; ++c) {
        scores[c] = scale * dot(q_r, k + offset(b, c, hk, Sk, Hkv, D), D);
        m = std::max(m, scores[c]);
      }
      double l = 0.0;
      for (int c = 0; c < n; ++c) {
        const double p = std::exp(scores[c] - m);
        l += p;
        axpy(p, v + offset(b, c, hk, Sk, Hkv, D), o_r, D);
      }
      const double inv_l = 1.0 / l;
      for (int d = 0; d < D; ++d) o_r[d] *= inv_l;
      *lse_r = m + std::log(l);
    }
  });
}

void attention_backward(const RefShape& s, const double* q, const double* k, const double* v,
                        const double* o, const double* lse, const double* dout, double* dq,
                        double* dk, double* dv) {
  validate(s);
  const int D = s.head_dim, Sq = s.seqlen_q, Sk = s.seqlen_k, Hq = s.heads_q, Hkv = s.heads_kv;
  const int group = Hq / Hkv;
  const double scale = effective_scale(s);

  // With GQA/MQA several query heads add into one kv head: each (batch, query head) task
  // writes a private (Sk, D) slice, reduced afterwards in head order (deterministic). With
  // MHA each task owns its kv head and writes dk/dv in place.
  std::vector<double> dk_part, dv_part;
  if (group > 1) {
    const size_t n = static_cast<size_t>(s.batch) * Hq * Sk * D;
    dk_part.assign(n, 0.0);
    dv_part.assign(n, 0.0);
  } else {
    std::fill(dk, dk + static_cast<int64_t>(s.batch) * Sk * Hkv * D, 0.0);
    std::fill(dv, dv + static_cast<int64_t>(s.batch) * Sk * Hkv * D, 0.0);
  }

  parallel_for(s.batch * Hq, [&](int task) {
    const int b = task / Hq, h = task % Hq, hk = h / group;
    // Row c of this task's dk/dv: either the private slice (Sk, D) or the output (b, c, hk, :).
    auto dk_row = [&](int c) {
      return group > 1 ? dk_part.data() + (static_cast<int64_t>(task) * Sk + c) * D
                       : dk + offset(b, c, hk, Sk, Hkv, D);
    };
    auto dv_row = [&](int c) {
      return group > 1 ? dv_part.data() + (static_cast<int64_t>(task) * Sk + c) * D
                       : dv + offset(b, c, hk, Sk, Hkv, D);
    };
    std::vector<double> p(std::max(Sk, 1));
    for (int r = 0; r < Sq; ++r) {
      const int64_t row_off = offset(b, r, h, Sq, Hq, D);
      const double* q_r = q + row_off;
      const double* o_r = o + row_off;
      const double* do_r = dout + row_off;
      double* dq_r = dq + row_off;
      std::fill(dq_r, dq_r + D, 0.0);
      const double lse_r = lse[(static_cast<int64_t>(b) * Hq + h) * Sq + r];
      const int n = visible_keys(s, r);
      if (n == 0 || !std::isfinite(lse_r)) continue;  // row sees no key: zero gradient
      const double d_r = dot(do_r, o_r, D);           // D = rowsum(dO * O)
      for (int c = 0; c < n; ++c) {
        const double* k_c = k + offset(b, c, hk, Sk, Hkv, D);
        const double* v_c = v + offset(b, c, hk, Sk, Hkv, D);
        const double p_c = std::exp(scale * dot(q_r, k_c, D) - lse_r);
        const double dp_c = dot(do_r, v_c, D);
        const double ds_c = p_c * (dp_c - d_r);
        axpy(ds_c, k_c, dq_r, D);                 // dQ += dS K (scaled below)
        axpy(scale * ds_c, q_r, dk_row(c), D);    // dK += scale dS^T Q
        axpy(p_c, do_r, dv_row(c), D);            // dV += P^T dO
      }
      for (int d = 0; d < D; ++d) dq_r[d] *= scale;
    }
  });

  if (group > 1) {
    parallel_for(s.batch * Hkv, [&](int task) {
      const int b = task / Hkv, hk = task % Hkv;
      for (int c = 0; c < Sk; ++c) {
        double* dk_c = dk + offset(b, c, hk, Sk, Hkv, D);
        double* dv_c = dv + offset(b, c, hk, Sk, Hkv, D);
        std::fill(dk_c, dk_c + D, 0.0);
        std::fill(dv_c, dv_c + D, 0.0);
        for (int h = hk * group; h < (hk + 1) * group; ++h) {
          const int64_t part = ((static_cast<int64_t>(b) * Hq + h) * Sk + c) * D;
          axpy(1.0, dk_part.data() + part, dk_c, D);
          axpy(1.0, dv_part.data() + part, dv_c, D);
        }
      }
    });
  }
}

void attention_forward_naive(const RefShape& s, const double* q, const double* k, const double* v,
                             double* o) {
  validate(s);
  const int D = s.head_dim, Sq = s.seqlen_q, Sk = s.seqlen_k, Hq = s.heads_q, Hkv = s.heads_kv;
  const int group = Hq / Hkv;
  const double scale = effective_scale(s);
  std::vector<double> S(static_cast<size_t>(Sq) * Sk);  // (Sq, Sk) for one (batch, head)

  for (int b = 0; b < s.batch; ++b) {
    for (int h = 0; h < Hq; ++h) {
      const int hk = h / group;
      // S = scale * Q K^T, masked with -inf.
      for (int r = 0; r < Sq; ++r) {
        for (int c = 0; c < Sk; ++c) {
          double acc = 0.0;
          for (int d = 0; d < D; ++d)
            acc += q[offset(b, r, h, Sq, Hq, D) + d] * k[offset(b, c, hk, Sk, Hkv, D) + d];
          const bool masked = s.causal && c > r + (Sk - Sq);
          S[static_cast<size_t>(r) * Sk + c] = masked ? kNegInf : scale * acc;
        }
      }
      // P = softmax(S) in place; an all -inf row becomes P = 0.
      for (int r = 0; r < Sq; ++r) {
        double* row = S.data() + static_cast<size_t>(r) * Sk;
        double m = kNegInf;
        for (int c = 0; c < Sk; ++c) m = std::max(m, row[c]);
        if (m == kNegInf) {
          std::fill(row, row + Sk, 0.0);
          continue;
        }
        double sum = 0.0;
        for (int c = 0; c < Sk; ++c) {
          row[c] = std::exp(row[c] - m);
          sum += row[c];
        }
        for (int c = 0; c < Sk; ++c) row[c] /= sum;
      }
      // O = P V.
      for (int r = 0; r < Sq; ++r) {
        for (int d = 0; d < D; ++d) {
          double acc = 0.0;
          for (int c = 0; c < Sk; ++c)
            acc += S[static_cast<size_t>(r) * Sk + c] * v[offset(b, c, hk, Sk, Hkv, D) + d];
          o[offset(b, r, h, Sq, Hq, D) + d] = acc;
        }
      }
    }
  }
}

}  // namespace dash::ref
