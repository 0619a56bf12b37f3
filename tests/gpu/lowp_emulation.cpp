// Same-precision (bf16/fp16) CPU emulation of eager PyTorch attention, the accuracy yardstick
// of the GPU tests: our error must stay within 2x of this computation's error against float64.
#include <algorithm>
#include <thread>

#include "gpu_test_util.h"

namespace dash::test {

void lowp_attention(const ref::RefShape& sh, DType dt, const std::vector<double>& q,
                    const std::vector<double>& k, const std::vector<double>& v,
                    const std::vector<double>& dout, std::vector<double>* o, std::vector<double>* dq,
                    std::vector<double>* dk, std::vector<double>* dv) {
  const int B = sh.batch, Sq = sh.seqlen_q, Sk = sh.seqlen_k, Hq = sh.heads_q, Hk = sh.heads_kv, D = sh.head_dim;
  const int G = Hq / Hk;
  const float scale = (float)ref::effective_scale(sh);
  o->assign((size_t)B * Sq * Hq * D, 0.0);
  dq->assign(o->size(), 0.0);
  dk->assign((size_t)B * Sk * Hk * D, 0.0);
  dv->assign(dk->size(), 0.0);
  // Per query head gradients of K/V, summed over the group afterwards (as autograd's expand).
  std::vector<float> dk_h((size_t)B * Hq * Sk * D), dv_h((size_t)B * Hq * Sk * D);
  auto qi = [&](int b, int s, int h, int d) { return (((size_t)b * Sq + s) * Hq + h) * D + d; };
  auto ki = [&](int b, int s, int h, int d) { return (((size_t)b * Sk + s) * Hk + h) * D + d; };
  auto r = [&](float x) { return round_to(x, dt); };

  auto work = [&](int bh) {
    const int b = bh / Hq, h = bh % Hq, hk = h / G;
    std::vector<float> P((size_t)Sq * Sk), dP((size_t)Sq * Sk);
    for (int i = 0; i < Sq; ++i) {
      const int vis = ref::visible_keys(sh, i);
      float mx = -INFINITY;
      for (int j = 0; j < Sk; ++j) {
        float acc = 0.f;
        for (int d = 0; d < D; ++d) acc += (float)q[qi(b, i, h, d)] * (float)k[ki(b, j, hk, d)];
        const float s2 = j < vis ? r(r(acc) * scale) : -INFINITY;
        P[(size_t)i * Sk + j] = s2;
        mx = std::max(mx, s2);
      }
      float sum = 0.f;
      for (int j = 0; j < Sk; ++j) {
        float& p = P[(size_t)i * Sk + j];
        p = vis > 0 ? std::exp(p - mx) : 0.f;
        sum += p;
      }
      for (int j = 0; j < Sk; ++j) P[(size_t)i * Sk + j] = sum > 0 ? r(P[(size_t)i * Sk + j] / sum) : 0.f;
      for (int d = 0; d < D; ++d) {
        float acc = 0.f;
        for (int j = 0; j < Sk; ++j) acc += P[(size_t)i * Sk + j] * (float)v[ki(b, j, hk, d)];
        (*o)[qi(b, i, h, d)] = r(acc);
      }
      // dP = dO V^T; softmax backward; dS scaled.
      float dot = 0.f;
      for (int j = 0; j < Sk; ++j) {
        float acc = 0.f;
        for (int d = 0; d < D; ++d) acc += (float)dout[qi(b, i, h, d)] * (float)v[ki(b, j, hk, d)];
        dP[(size_t)i * Sk + j] = r(acc);
        dot += dP[(size_t)i * Sk + j] * P[(size_t)i * Sk + j];
      }
      for (int j = 0; j < Sk; ++j) {
        const float ds = r(P[(size_t)i * Sk + j] * (dP[(size_t)i * Sk + j] - dot));
        dP[(size_t)i * Sk + j] = r(ds * scale);  // reuse dP as dS
      }
      for (int d = 0; d < D; ++d) {
        float acc = 0.f;
        for (int j = 0; j < Sk; ++j) acc += dP[(size_t)i * Sk + j] * (float)k[ki(b, j, hk, d)];
        (*dq)[qi(b, i, h, d)] = r(acc);
      }
    }
    for (int j = 0; j < Sk; ++j) {
      for (int d = 0; d < D; ++d) {
        float accv = 0.f, acck = 0.f;
        for (int i = 0; i < Sq; ++i) {
          accv += P[(size_t)i * Sk + j] * (float)dout[qi(b, i, h, d)];
          acck += dP[(size_t)i * Sk + j] * (float)q[qi(b, i, h, d)];
        }
        dv_h[(((size_t)b * Hq + h) * Sk + j) * D + d] = r(accv);
        dk_h[(((size_t)b * Hq + h) * Sk + j) * D + d] = r(acck);
      }
    }
  };
  const int n = B * Hq;
  const int nt = std::max(1, std::min<int>(n, (int)std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (int t = 0; t < nt; ++t)
    pool.emplace_back([&, t] { for (int bh = t; bh < n; bh += nt) work(bh); });
  for (auto& th : pool) th.join();
  for (int b = 0; b < B; ++b)
    for (int hk = 0; hk < Hk; ++hk)
      for (int j = 0; j < Sk; ++j)
        for (int d = 0; d < D; ++d) {
          float sk = 0.f, sv = 0.f;
          for (int g = 0; g < G; ++g) {
            const size_t idx = (((size_t)b * Hq + hk * G + g) * Sk + j) * D + d;
            sk = r(sk + dk_h[idx]);
            sv = r(sv + dv_h[idx]);
          }
          (*dk)[ki(b, j, hk, d)] = sk;
          (*dv)[ki(b, j, hk, d)] = sv;
        }
}

}  // namespace dash::test
