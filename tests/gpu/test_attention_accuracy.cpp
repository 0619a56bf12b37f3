// Accuracy of forward (O, LSE) and backward (dQ, dK, dV) against the float64 reference.
// Criterion (FlashAttention's): max|ours - ref64| <= 2 * max|lowp - ref64| + atol, where lowp is
// the same computation in PyTorch-style bf16/fp16 (gpu_test_util.h), atol = 1e-3 * max|ref64| +
// 1e-5 (covers cases where lowp happens to be exact: with seqlen_k 1, lowp's softmax backward
// gives dS = 0 exactly while D = rowsum(dO * O) from the rounded O leaves ~1e-6). Outputs are poisoned with NaN
// before each run and every element is checked (a NaN left behind fails).
#include "attention_harness.h"

namespace dash::test {
namespace {

struct AccCase {
  ProblemSpec spec;
  Schedule schedule;
};

std::string case_name(const testing::TestParamInfo<AccCase>& info) {
  const ProblemSpec& s = info.param.spec;
  char buf[200];
  std::snprintf(buf, sizeof(buf), "%s_d%d_%s_sq%d_sk%d_h%d_%d_%s", s.dtype == DType::kBF16 ? "bf16" : "fp16",
                s.head_dim, s.causal ? "causal" : "full", s.seqlen_q, s.seqlen_k, s.heads_q, s.heads_kv,
                schedule_name(info.param.schedule));
  return buf;
}

class Accuracy : public testing::TestWithParam<AccCase> {};

TEST_P(Accuracy, MatchesFloat64Reference) {
  REQUIRE_GPU();
  const AccCase& c = GetParam();
  Problem pr(c.spec);
  const ref::RefShape rs = pr.ref_shape();

  // float64 reference and the same-precision yardstick.
  std::vector<double> o_ref(pr.q.host.size()), lse_ref((size_t)rs.batch * rs.heads_q * rs.seqlen_q);
  ref::attention_forward(rs, pr.q.host.data(), pr.k.host.data(), pr.v.host.data(), o_ref.data(), lse_ref.data());

  // Forward on the device (poisoned first).
  pr.o.poison(c.spec.dtype);
  CUDA_OK(cudaMemset(pr.lse.ptr, 0xff, pr.lse.bytes));  // NaN pattern
  Status st = pr.forward();
  ASSERT_TRUE(st.ok()) << st.message;
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<double> o_gpu;
  ASSERT_TRUE(pr.o.download(c.spec.dtype, &o_gpu)) << "forward left elements of O unwritten";
  std::vector<float> lse_gpu(lse_ref.size());
  CUDA_OK(cudaMemcpy(lse_gpu.data(), pr.lse.ptr, pr.lse.bytes, cudaMemcpyDeviceToHost));

  // The backward consumes our O (what a training step would do) and the reference uses the
  // float64 O, so the comparison includes the forward's error as it would in training.
  std::vector<double> dq_ref(pr.q.host.size()), dk_ref(pr.k.host.size()), dv_ref(pr.v.host.size());
  ref::attention_backward(rs, pr.q.host.data(), pr.k.host.data(), pr.v.host.data(), o_ref.data(), lse_ref.data(),
                          pr.dout.host.data(), dq_ref.data(), dk_ref.data(), dv_ref.data());
  std::vector<double> o_lp, dq_lp, dk_lp, dv_lp;
  lowp_attention(rs, c.spec.dtype, pr.q.host, pr.k.host, pr.v.host, pr.dout.host, &o_lp, &dq_lp, &dk_lp, &dv_lp);

  auto check = [&](const char* what, const std::vector<double>& ours, const std::vector<double>& lp,
                   const std::vector<double>& ref) {
    expect_within_lowp_bound(std::string(what) + " " + c.spec.str(), ours, lp, ref);
  };
  check("O", o_gpu, o_lp, o_ref);
  for (size_t i = 0; i < lse_ref.size(); ++i) {
    if (std::isinf(lse_ref[i])) {
      ASSERT_TRUE(std::isinf(lse_gpu[i]) && lse_gpu[i] < 0) << "lse[" << i << "] should be -inf";
    } else {
      ASSERT_NEAR(lse_gpu[i], lse_ref[i], 1e-3 + 1e-5 * std::fabs(lse_ref[i])) << "lse[" << i << "]";
    }
  }

  pr.poison_grads();
  BwdLaunchInfo info;
  st = pr.backward(pr.bwd_params(c.schedule), nullptr, &info);
  ASSERT_TRUE(st.ok()) << st.message;
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<double> dq_gpu, dk_gpu, dv_gpu;
  ASSERT_TRUE(pr.dq.download(c.spec.dtype, &dq_gpu)) << "dQ has unwritten elements";
  ASSERT_TRUE(pr.dk.download(c.spec.dtype, &dk_gpu)) << "dK has unwritten elements";
  ASSERT_TRUE(pr.dv.download(c.spec.dtype, &dv_gpu)) << "dV has unwritten elements";
  check("dQ", dq_gpu, dq_lp, dq_ref);
  check("dK", dk_gpu, dk_lp, dk_ref);
  check("dV", dv_gpu, dv_lp, dv_ref);
}

std::vector<AccCase> grid() {
  std::vector<AccCase> cases;
  const std::pair<int, int> seqlens[] = {{1, 1},     {17, 17},   {113, 113}, {128, 128}, {1000, 1000},
                                         {2048, 2048}, {113, 1000}, {1000, 113}, {17, 128}};
  const std::pair<int, int> heads[] = {{4, 4}, {8, 2}, {4, 1}};  // MHA, GQA 4:1, MQA
  int idx = 0;
  for (DType dt : {DType::kBF16, DType::kFP16})
    for (int d : {64, 128})
      for (bool causal : {false, true})
        for (auto [sq, sk] : seqlens) {
          ProblemSpec s;
          s.dtype = dt; s.head_dim = d; s.causal = causal; s.seqlen_q = sq; s.seqlen_k = sk;
          const auto hh = heads[idx % 3];
          s.heads_q = hh.first; s.heads_kv = hh.second;
          s.batch = std::max(sq, sk) >= 1000 ? 1 : 2;
          if (std::max(sq, sk) >= 2048) { s.heads_q = hh.first / 2 > 0 ? hh.first / 2 : 1; s.heads_kv = std::max(1, hh.second / 2); }
          if (s.heads_q % s.heads_kv) s.heads_kv = 1;
          s.seed = 1000 + idx;
          cases.push_back({s, Schedule::kAuto});
          ++idx;
        }
  // Every schedule (atomic included) on odd shapes.
  int sidx = 0;
  for (Schedule sc : {Schedule::kAscending, Schedule::kSpt, Schedule::kDescending, Schedule::kShift,
                      Schedule::kSymmetricShift, Schedule::kAtomic})
    for (bool causal : {false, true})
      for (auto [sq, sk] : {std::pair{1000, 1000}, std::pair{300, 700}, std::pair{700, 300}}) {
        ProblemSpec s;
        s.dtype = DType::kBF16; s.head_dim = 128; s.causal = causal; s.seqlen_q = sq; s.seqlen_k = sk;
        s.batch = 2; s.heads_q = 4; s.heads_kv = 2; s.seed = 5000 + sidx++;
        cases.push_back({s, sc});
      }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Grid, Accuracy, testing::ValuesIn(grid()), case_name);

}  // namespace
}  // namespace dash::test
