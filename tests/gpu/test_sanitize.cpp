// Small shapes for compute-sanitizer (memcheck, racecheck, synccheck): forward and backward of
// every schedule, odd seqlens, GQA, both masks, both head dims, bf16 (and fp16 on one shape). Also a correctness smoke check.
#include "attention_harness.h"

namespace dash::test {
namespace {

TEST(Sanitize, EveryScheduleOnSmallShapes) {
  REQUIRE_GPU();
  int idx = 0;
  for (DType dt : {DType::kBF16, DType::kFP16})
  for (int d : {64, 128})
    for (bool causal : {false, true})
      for (auto [sq, sk] : {std::pair{113, 113}, std::pair{70, 150}}) {
        if (dt == DType::kFP16 && sq != sk) continue;  // fp16: one shape per (head_dim, mask)
        ProblemSpec s;
        s.dtype = dt;
        s.batch = 1; s.seqlen_q = sq; s.seqlen_k = sk; s.heads_q = 2; s.heads_kv = 1; s.head_dim = d;
        s.causal = causal; s.seed = 300 + idx++;
        Problem pr(s);
        ASSERT_TRUE(pr.forward().ok());
        for (Schedule sc : {Schedule::kAscending, Schedule::kSpt, Schedule::kDescending, Schedule::kShift,
                            Schedule::kSymmetricShift, Schedule::kAtomic}) {
          pr.poison_grads();
          const Status st = pr.backward(pr.bwd_params(sc));
          ASSERT_TRUE(st.ok()) << st.message;
          CUDA_OK(cudaDeviceSynchronize());
          std::vector<double> dq;
          EXPECT_TRUE(pr.dq.download(s.dtype, &dq)) << s.str() << " " << schedule_name(sc);
        }
      }
}

}  // namespace
}  // namespace dash::test
