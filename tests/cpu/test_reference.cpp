// Tests of the float64 CPU attention reference (src/reference): the fast forward against a naive
// softmax(QK^T)V, the LSE against a direct log-sum-exp, the backward against central finite
// differences, GQA against explicitly replicated KV heads, and rows that see no key.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/attention_ref.h"

namespace {

using dash::ref::RefShape;

std::vector<double> random_tensor(size_t n, uint64_t seed, double amplitude = 1.0) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-amplitude, amplitude);
  std::vector<double> x(n);
  for (auto& e : x) {
    do e = dist(gen);
    while (e == 0.0);
  }
  return x;
}

size_t q_size(const RefShape& s) {
  return static_cast<size_t>(s.batch) * s.seqlen_q * s.heads_q * s.head_dim;
}
size_t kv_size(const RefShape& s) {
  return static_cast<size_t>(s.batch) * s.seqlen_k * s.heads_kv * s.head_dim;
}
size_t lse_size(const RefShape& s) {
  return static_cast<size_t>(s.batch) * s.heads_q * s.seqlen_q;
}

// (b, s, h, d) in a dense (batch, seqlen, heads, head_dim) tensor.
size_t at(int b, int t, int h, int d, int seqlen, int heads, int head_dim) {
  return ((static_cast<size_t>(b) * seqlen + t) * heads + h) * head_dim + d;
}

std::string describe(const RefShape& s) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "b%d sq%d sk%d hq%d hkv%d d%d %s scale%g", s.batch, s.seqlen_q,
                s.seqlen_k, s.heads_q, s.heads_kv, s.head_dim, s.causal ? "causal" : "full",
                s.softmax_scale);
  return buf;
}

struct Inputs {
  std::vector<double> q, k, v;
};

Inputs make_inputs(const RefShape& s, uint64_t seed, double amplitude = 1.0) {
  return {random_tensor(q_size(s), seed * 3 + 1, amplitude),
          random_tensor(kv_size(s), seed * 3 + 2, amplitude),
          random_tensor(kv_size(s), seed * 3 + 3, 1.0)};
}

std::vector<RefShape> forward_shapes() {
  std::vector<RefShape> shapes;
  const int seqlens[][2] = {{1, 1}, {17, 17}, {113, 113}, {17, 113}, {113, 17},
                            {1, 17}, {17, 1},  {64, 65},   {65, 64}};
  const int heads[][2] = {{4, 4}, {4, 1}, {8, 2}};  // MHA, MQA, GQA 4:1
  for (auto [sq, sk] : seqlens)
    for (auto [hq, hkv] : heads)
      for (int d : {8, 64})
        for (bool causal : {false, true})
          shapes.push_back({/*batch=*/2, sq, sk, hq, hkv, d, causal, /*softmax_scale=*/0.0});
  return shapes;
}

TEST(Reference, ForwardMatchesNaive) {
  uint64_t seed = 1;
  for (const RefShape& s : forward_shapes()) {
    for (double amplitude : {1.0, 4.0}) {  // 4.0: large logits exercise the max shift
      SCOPED_TRACE(describe(s) + " amplitude " + std::to_string(amplitude));
      Inputs in = make_inputs(s, seed++, amplitude);
      std::vector<double> o(q_size(s), -7.0), o_naive(q_size(s), -7.0), lse(lse_size(s));
      dash::ref::attention_forward(s, in.q.data(), in.k.data(), in.v.data(), o.data(), lse.data());
      dash::ref::attention_forward_naive(s, in.q.data(), in.k.data(), in.v.data(),
                                         o_naive.data());
      double max_diff = 0.0;
      for (size_t i = 0; i < o.size(); ++i) max_diff = std::max(max_diff, std::abs(o[i] - o_naive[i]));
      EXPECT_LT(max_diff, 1e-12);
    }
  }
}

TEST(Reference, ExplicitSoftmaxScale) {
  RefShape s{2, 33, 47, 4, 2, 16, true, 0.37};
  Inputs in = make_inputs(s, 99);
  std::vector<double> o(q_size(s)), o_naive(q_size(s)), lse(lse_size(s));
  dash::ref::attention_forward(s, in.q.data(), in.k.data(), in.v.data(), o.data(), lse.data());
  dash::ref::attention_forward_naive(s, in.q.data(), in.k.data(), in.v.data(), o_naive.data());
  for (size_t i = 0; i < o.size(); ++i) ASSERT_NEAR(o[i], o_naive[i], 1e-12) << i;
  // A different scale must change the result (the explicit scale is actually used).
  RefShape s_default = s;
  s_default.softmax_scale = 0.0;
  std::vector<double> o_default(q_size(s));
  dash::ref::attention_forward_naive(s_default, in.q.data(), in.k.data(), in.v.data(),
                                     o_default.data());
  double max_diff = 0.0;
  for (size_t i = 0; i < o.size(); ++i) max_diff = std::max(max_diff, std::abs(o[i] - o_default[i]));
  EXPECT_GT(max_diff, 1e-3);
}

TEST(Reference, LseMatchesDirectLogSumExp) {
  uint64_t seed = 500;
  for (const RefShape& s : forward_shapes()) {
    SCOPED_TRACE(describe(s));
    Inputs in = make_inputs(s, seed++);
    std::vector<double> o(q_size(s)), lse(lse_size(s));
    dash::ref::attention_forward(s, in.q.data(), in.k.data(), in.v.data(), o.data(), lse.data());
    const double scale = 1.0 / std::sqrt(static_cast<double>(s.head_dim));
    const int group = s.heads_q / s.heads_kv;
    double max_diff = 0.0;
    int no_key_rows = 0;
    for (int b = 0; b < s.batch; ++b)
      for (int h = 0; h < s.heads_q; ++h)
        for (int r = 0; r < s.seqlen_q; ++r) {
          // Logits are O(1) here, so the unshifted sum of exponentials is exact enough.
          double sum = 0.0;
          for (int c = 0; c < s.seqlen_k; ++c) {
            if (s.causal && c > r + (s.seqlen_k - s.seqlen_q)) continue;
            double dot = 0.0;
            for (int d = 0; d < s.head_dim; ++d)
              dot += in.q[at(b, r, h, d, s.seqlen_q, s.heads_q, s.head_dim)] *
                     in.k[at(b, c, h / group, d, s.seqlen_k, s.heads_kv, s.head_dim)];
            sum += std::exp(scale * dot);
          }
          const double got = lse[(static_cast<size_t>(b) * s.heads_q + h) * s.seqlen_q + r];
          if (sum == 0.0) {
            ++no_key_rows;
            EXPECT_TRUE(std::isinf(got) && got < 0) << "b" << b << " h" << h << " r" << r;
          } else {
            max_diff = std::max(max_diff, std::abs(got - std::log(sum)));
          }
        }
    EXPECT_LT(max_diff, 1e-12);
    const int expected_no_key = s.causal ? std::max(0, s.seqlen_q - s.seqlen_k) : 0;
    EXPECT_EQ(no_key_rows, s.batch * s.heads_q * expected_no_key);
  }
}

// L = sum(O * G) for the given inputs.
double loss(const RefShape& s, const Inputs& in, const std::vector<double>& g) {
  std::vector<double> o(q_size(s)), lse(lse_size(s));
  dash::ref::attention_forward(s, in.q.data(), in.k.data(), in.v.data(), o.data(), lse.data());
  double l = 0.0;
  for (size_t i = 0; i < o.size(); ++i) l += o[i] * g[i];
  return l;
}

// Max over elements of |fd - analytic| / max(|analytic|, 1e-3 * max|analytic|).
double fd_relative_error(const RefShape& s, Inputs& in, std::vector<double> Inputs::*which,
                         const std::vector<double>& g, const std::vector<double>& analytic) {
  // NOTES: fourth-order central stencil: truncation O(h^4) ~ 1e-12 and rounding
  // O(eps * |L| / h) ~ 1e-13 at h = 1e-3, far below the 1e-6 tolerance.
  const double h = 1e-3;
  double max_abs = 0.0;
  for (double a : analytic) max_abs = std::max(max_abs, std::abs(a));
  double worst = 0.0;
  std::vector<double>& x = in.*which;
  for (size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i];
    auto loss_at = [&](double delta) {
      x[i] = saved + delta;
      return loss(s, in, g);
    };
    const double fd =
        (8.0 * (loss_at(h) - loss_at(-h)) - (loss_at(2 * h) - loss_at(-2 * h))) / (12.0 * h);
    x[i] = saved;
    const double denom = std::max(std::abs(analytic[i]), 1e-3 * max_abs);
    worst = std::max(worst, std::abs(fd - analytic[i]) / denom);
  }
  return worst;
}

TEST(Reference, BackwardMatchesFiniteDifferences) {
  const std::vector<RefShape> shapes = {
      {1, 5, 5, 2, 2, 8, false, 0.0},   // MHA, full
      {1, 5, 5, 2, 2, 8, true, 0.0},    // MHA, causal
      {1, 5, 7, 4, 1, 8, true, 0.0},    // MQA, seqlen_q < seqlen_k
      {2, 7, 4, 4, 1, 8, true, 0.0},    // MQA, seqlen_q > seqlen_k: rows with no key
      {1, 6, 3, 8, 2, 8, false, 0.0},   // GQA 4:1, full, seqlen_q > seqlen_k
      {1, 3, 6, 8, 2, 8, true, 0.0},    // GQA 4:1, causal, seqlen_q < seqlen_k
      {1, 1, 1, 2, 1, 8, true, 0.0},    // single query, single key
      {1, 4, 9, 2, 2, 12, true, 0.45},  // explicit scale, odd-ish head_dim
  };
  uint64_t seed = 1000;
  for (const RefShape& s : shapes) {
    SCOPED_TRACE(describe(s));
    Inputs in = make_inputs(s, seed++, 1.5);
    const std::vector<double> g = random_tensor(q_size(s), seed++);
    std::vector<double> o(q_size(s)), lse(lse_size(s));
    dash::ref::attention_forward(s, in.q.data(), in.k.data(), in.v.data(), o.data(), lse.data());
    std::vector<double> dq(q_size(s), 5.0), dk(kv_size(s), 5.0), dv(kv_size(s), 5.0);
    dash::ref::attention_backward(s, in.q.data(), in.k.data(), in.v.data(), o.data(), lse.data(),
                                  g.data(), dq.data(), dk.data(), dv.data());
    EXPECT_LT(fd_relative_error(s, in, &Inputs::q, g, dq), 1e-6) << "dq";
    EXPECT_LT(fd_relative_error(s, in, &Inputs::k, g, dk), 1e-6) << "dk";
    EXPECT_LT(fd_relative_error(s, in, &Inputs::v, g, dv), 1e-6) << "dv";
  }
}

TEST(Reference, RowsWithNoVisibleKey) {
  // Causal, seqlen_q > seqlen_k: row r sees keys c <= r - 5, so rows 0..4 see none.
  const RefShape s{2, 9, 4, 4, 2, 8, true, 0.0};
  const int blind_rows = s.seqlen_q - s.seqlen_k;
  Inputs in = make_inputs(s, 77);
  const std::vector<double> g = random_tensor(q_size(s), 78);
  std::vector<double> o(q_size(s), 3.0), o_naive(q_size(s), 3.0), lse(lse_size(s), 3.0);
  dash::ref::attention_forward(s, in.q.data(), in.k.data(), in.v.data(), o.data(), lse.data());
  dash::ref::attention_forward_naive(s, in.q.data(), in.k.data(), in.v.data(), o_naive.data());
  std::vector<double> dq(q_size(s), 3.0), dk(kv_size(s), 3.0), dv(kv_size(s), 3.0);
  dash::ref::attention_backward(s, in.q.data(), in.k.data(), in.v.data(), o.data(), lse.data(),
                                g.data(), dq.data(), dk.data(), dv.data());
  for (int b = 0; b < s.batch; ++b)
    for (int h = 0; h < s.heads_q; ++h)
      for (int r = 0; r < s.seqlen_q; ++r) {
        const double l = lse[(static_cast<size_t>(b) * s.heads_q + h) * s.seqlen_q + r];
        const bool blind = r < blind_rows;
        EXPECT_EQ(blind, std::isinf(l) && l < 0) << "b" << b << " h" << h << " r" << r;
        EXPECT_EQ(dash::ref::visible_keys(s, r), blind ? 0 : r - blind_rows + 1);
        bool any_nonzero_o = false, any_nonzero_dq = false;
        for (int d = 0; d < s.head_dim; ++d) {
          const size_t i = at(b, r, h, d, s.seqlen_q, s.heads_q, s.head_dim);
          any_nonzero_o |= o[i] != 0.0;
          any_nonzero_dq |= dq[i] != 0.0;
          if (blind) {
            EXPECT_EQ(o[i], 0.0);
            EXPECT_EQ(o_naive[i], 0.0);
            EXPECT_EQ(dq[i], 0.0);
          }
        }
        // A row with exactly one visible key has P = 1 whatever q is, so its dq is 0 too.
        if (!blind) {
          EXPECT_TRUE(any_nonzero_o);
        }
        if (dash::ref::visible_keys(s, r) >= 2) {
          EXPECT_TRUE(any_nonzero_dq);
        }
      }
  for (double x : dk) EXPECT_TRUE(std::isfinite(x));
  for (double x : dv) EXPECT_TRUE(std::isfinite(x));

  // seqlen_k = 0: every row is blind.
  const RefShape empty{1, 3, 0, 2, 1, 8, false, 0.0};
  Inputs in_empty = make_inputs(empty, 79);
  std::vector<double> o_e(q_size(empty), 3.0), lse_e(lse_size(empty), 3.0);
  dash::ref::attention_forward(empty, in_empty.q.data(), nullptr, nullptr, o_e.data(),
                               lse_e.data());
  for (double x : o_e) EXPECT_EQ(x, 0.0);
  for (double x : lse_e) EXPECT_TRUE(std::isinf(x) && x < 0);
}

// GQA must equal MHA with each kv head replicated over its query heads; the GQA dK/dV are the
// sums of the replicated heads' gradients.
TEST(Reference, GqaEqualsReplicatedMha) {
  for (bool causal : {false, true}) {
    const RefShape gqa{2, 19, 23, 8, 2, 16, causal, 0.0};
    RefShape mha = gqa;
    mha.heads_kv = gqa.heads_q;
    const int group = gqa.heads_q / gqa.heads_kv;
    SCOPED_TRACE(describe(gqa));
    Inputs in = make_inputs(gqa, causal ? 11 : 12);
    const std::vector<double> g = random_tensor(q_size(gqa), 13);
    Inputs rep{in.q, std::vector<double>(kv_size(mha)), std::vector<double>(kv_size(mha))};
    for (int b = 0; b < gqa.batch; ++b)
      for (int c = 0; c < gqa.seqlen_k; ++c)
        for (int h = 0; h < mha.heads_kv; ++h)
          for (int d = 0; d < gqa.head_dim; ++d) {
            const size_t dst = at(b, c, h, d, mha.seqlen_k, mha.heads_kv, mha.head_dim);
            const size_t src = at(b, c, h / group, d, gqa.seqlen_k, gqa.heads_kv, gqa.head_dim);
            rep.k[dst] = in.k[src];
            rep.v[dst] = in.v[src];
          }
    auto run = [&](const RefShape& s, const Inputs& x, std::vector<double>& o,
                   std::vector<double>& dq, std::vector<double>& dk, std::vector<double>& dv) {
      std::vector<double> lse(lse_size(s));
      o.assign(q_size(s), 0.0);
      dq.assign(q_size(s), 0.0);
      dk.assign(kv_size(s), 0.0);
      dv.assign(kv_size(s), 0.0);
      dash::ref::attention_forward(s, x.q.data(), x.k.data(), x.v.data(), o.data(), lse.data());
      dash::ref::attention_backward(s, x.q.data(), x.k.data(), x.v.data(), o.data(), lse.data(),
                                    g.data(), dq.data(), dk.data(), dv.data());
    };
    std::vector<double> o1, dq1, dk1, dv1, o2, dq2, dk2, dv2;
    run(gqa, in, o1, dq1, dk1, dv1);
    run(mha, rep, o2, dq2, dk2, dv2);
    for (size_t i = 0; i < o1.size(); ++i) {
      ASSERT_NEAR(o1[i], o2[i], 1e-13);
      ASSERT_NEAR(dq1[i], dq2[i], 1e-13);
    }
    for (int b = 0; b < gqa.batch; ++b)
      for (int c = 0; c < gqa.seqlen_k; ++c)
        for (int hk = 0; hk < gqa.heads_kv; ++hk)
          for (int d = 0; d < gqa.head_dim; ++d) {
            double sk = 0.0, sv = 0.0;
            for (int h = hk * group; h < (hk + 1) * group; ++h) {
              sk += dk2[at(b, c, h, d, mha.seqlen_k, mha.heads_kv, mha.head_dim)];
              sv += dv2[at(b, c, h, d, mha.seqlen_k, mha.heads_kv, mha.head_dim)];
            }
            const size_t i = at(b, c, hk, d, gqa.seqlen_k, gqa.heads_kv, gqa.head_dim);
            ASSERT_NEAR(dk1[i], sk, 1e-13);
            ASSERT_NEAR(dv1[i], sv, 1e-13);
          }
  }
}

TEST(Reference, InvalidShapeThrows) {
  Inputs in = make_inputs(RefShape{1, 2, 2, 3, 3, 8, false, 0.0}, 5);
  std::vector<double> o(in.q.size()), lse(6);
  const RefShape bad_heads{1, 2, 2, 3, 2, 8, false, 0.0};  // 3 % 2 != 0
  EXPECT_THROW(dash::ref::attention_forward(bad_heads, in.q.data(), in.k.data(), in.v.data(),
                                            o.data(), lse.data()),
               std::invalid_argument);
  const RefShape bad_dim{1, 2, 2, 3, 3, 0, false, 0.0};
  EXPECT_THROW(dash::ref::attention_forward_naive(bad_dim, in.q.data(), in.k.data(), in.v.data(),
                                                  o.data()),
               std::invalid_argument);
}

// A GPU-test-sized problem: finishes quickly and the backward is bitwise reproducible.
TEST(Reference, MediumShapeIsFastAndDeterministic) {
  const RefShape s{1, 1024, 1024, 4, 2, 128, true, 0.0};
  Inputs in = make_inputs(s, 4242);
  const std::vector<double> g = random_tensor(q_size(s), 4343);
  std::vector<double> o(q_size(s)), lse(lse_size(s));
  const auto t0 = std::chrono::steady_clock::now();
  dash::ref::attention_forward(s, in.q.data(), in.k.data(), in.v.data(), o.data(), lse.data());
  const auto t1 = std::chrono::steady_clock::now();
  std::vector<double> dq(q_size(s)), dk(kv_size(s)), dv(kv_size(s));
  dash::ref::attention_backward(s, in.q.data(), in.k.data(), in.v.data(), o.data(), lse.data(),
                                g.data(), dq.data(), dk.data(), dv.data());
  const auto t2 = std::chrono::steady_clock::now();
  std::printf("[reference] %s: forward %.3f s, backward %.3f s\n", describe(s).c_str(),
              std::chrono::duration<double>(t1 - t0).count(),
              std::chrono::duration<double>(t2 - t1).count());
  std::vector<double> dq2(q_size(s)), dk2(kv_size(s)), dv2(kv_size(s));
  dash::ref::attention_backward(s, in.q.data(), in.k.data(), in.v.data(), o.data(), lse.data(),
                                g.data(), dq2.data(), dk2.data(), dv2.data());
  EXPECT_EQ(dq, dq2);
  EXPECT_EQ(dk, dk2);
  EXPECT_EQ(dv, dv2);
  for (double x : dk) ASSERT_TRUE(std::isfinite(x));
}

}  // namespace
