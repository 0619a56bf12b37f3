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

// The persistent forward with 2 CTAs, each looping over several tiles (the K/V ring, the Q
// barrier and the ping-pong turns then run across tiles): for the sanitizer tools, plus the bits
// against one CTA per work unit.
TEST(Sanitize, ForwardPersistentTwoCtas) {
  REQUIRE_GPU();
  int idx = 0;
  for (int d : {64, 128})
    for (bool causal : {false, true}) {
      ProblemSpec s;
      s.batch = 1; s.seqlen_q = 300; s.seqlen_k = 300; s.heads_q = 2; s.heads_kv = 1; s.head_dim = d;
      s.causal = causal; s.seed = 400 + idx++;
      Problem pr(s);
      uint64_t hash[2] = {0, 0};
      for (int persistent = 0; persistent < 2; ++persistent) {
        ScopedEnv pers("DASH_FWD_PERSISTENT", persistent ? "1" : "0");
        ScopedEnv ctas("DASH_FWD_PERSISTENT_CTAS", "2");
        pr.o.poison(s.dtype);
        ASSERT_TRUE(pr.forward().ok());
        CUDA_OK(cudaDeviceSynchronize());
        std::vector<double> o;
        EXPECT_TRUE(pr.o.download(s.dtype, &o)) << s.str() << " left O unwritten";
        hash[persistent] = pr.o.hash();
      }
      EXPECT_EQ(hash[0], hash[1]) << s.str() << ": 2 persistent CTAs give other O bits than one CTA per unit";
    }
}

}  // namespace
}  // namespace dash::test
