// Bitwise determinism of dQ/dK/dV: repeated runs, runs under concurrent load, different grid
// sizes and dispatch modes. Hashes of the full gradient bytes must be identical; a tolerance is
// not a determinism test.
#include "attention_harness.h"

namespace dash::test {
cudaError_t launch_busy(float* sink, int blocks, long long cycles, cudaStream_t stream);

namespace {

struct DetCase {
  Schedule schedule;
  bool causal;
};

class Determinism : public testing::TestWithParam<DetCase> {
 protected:
  static ProblemSpec spec(bool causal) {
    ProblemSpec s;
    s.batch = 2; s.seqlen_q = 1000; s.seqlen_k = 1000; s.heads_q = 8; s.heads_kv = 2; s.head_dim = 128;
    s.causal = causal; s.seed = 77;
    return s;
  }
  // Run the backward once with poisoned outputs; return the gradient hash.
  static uint64_t run(Problem& pr, const AttnBwdParams& p, cudaStream_t stream = nullptr, Status* st_out = nullptr) {
    pr.poison_grads();
    Status st = pr.backward(p, stream);
    if (st_out) *st_out = st;
    EXPECT_TRUE(st.ok()) << st.message;
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    return pr.grad_hash();
  }
};

TEST_P(Determinism, HundredRerunsAreBitwiseIdentical) {
  REQUIRE_GPU();
  Problem pr(spec(GetParam().causal));
  ASSERT_TRUE(pr.forward().ok());
  const AttnBwdParams p = pr.bwd_params(GetParam().schedule);
  const uint64_t h0 = run(pr, p);
  for (int r = 1; r < 100; ++r) ASSERT_EQ(run(pr, p), h0) << "rerun " << r;
}

TEST_P(Determinism, IdenticalUnderConcurrentLoad) {
  REQUIRE_GPU();
  Problem pr(spec(GetParam().causal));
  ASSERT_TRUE(pr.forward().ok());
  const AttnBwdParams p = pr.bwd_params(GetParam().schedule);
  const uint64_t h0 = run(pr, p);
  cudaStream_t busy, work;
  CUDA_OK(cudaStreamCreateWithFlags(&busy, cudaStreamNonBlocking));
  CUDA_OK(cudaStreamCreateWithFlags(&work, cudaStreamNonBlocking));
  DeviceBuffer sink(4096);
  for (int r = 0; r < 20; ++r) {
    // Occupy a varying part of the GPU while the backward runs on another stream.
    CUDA_OK(launch_busy(sink.as<float>(), 64 + 37 * r, 200000 + 50000 * (r % 5), busy));
    ASSERT_EQ(run(pr, p, work), h0) << "run under load " << r;
  }
  CUDA_OK(cudaStreamSynchronize(busy));
  cudaStreamDestroy(busy);
  cudaStreamDestroy(work);
}

TEST_P(Determinism, IndependentOfGridSizeAndDispatch) {
  REQUIRE_GPU();
  Problem pr(spec(GetParam().causal));
  ASSERT_TRUE(pr.forward().ok());
  AttnBwdParams p = pr.bwd_params(GetParam().schedule);
  p.allow_fallback = false;
  BwdLaunchInfo info;
  ASSERT_TRUE(pr.backward(p, nullptr, &info).ok());
  CUDA_OK(cudaDeviceSynchronize());
  const uint64_t h0 = pr.grad_hash();
  int tested = 0;
  for (int grid : {132, 97, 64, 31, 7, 1}) {
    for (Dispatch d : {Dispatch::kDynamic, Dispatch::kStatic}) {
      p.num_ctas = grid;
      p.dispatch = d;
      pr.poison_grads();
      const Status st = pr.backward(p, nullptr, &info);
      if (grid < info.min_coresident || (!st.ok() && st.code == StatusCode::kInsufficientResources)) {
        // Below the schedule's co-residency minimum the launcher must refuse, never hang.
        EXPECT_EQ(st.code, StatusCode::kInsufficientResources) << "grid " << grid << ": " << st.message;
        continue;
      }
      ASSERT_TRUE(st.ok()) << "grid " << grid << ": " << st.message;
      CUDA_OK(cudaDeviceSynchronize());
      EXPECT_EQ(pr.grad_hash(), h0) << "grid " << grid << " dispatch " << dispatch_name(d);
      ++tested;
    }
  }
  EXPECT_GE(tested, 4);
}

std::string det_name(const testing::TestParamInfo<DetCase>& info) {
  return std::string(schedule_name(info.param.schedule)) + (info.param.causal ? "_causal" : "_full");
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, Determinism,
    testing::Values(DetCase{Schedule::kAscending, false}, DetCase{Schedule::kAscending, true},
                    DetCase{Schedule::kSpt, false}, DetCase{Schedule::kSpt, true},
                    DetCase{Schedule::kDescending, false}, DetCase{Schedule::kDescending, true},
                    DetCase{Schedule::kShift, false}, DetCase{Schedule::kShift, true},
                    DetCase{Schedule::kSymmetricShift, true}, DetCase{Schedule::kAuto, true}),
    det_name);

// Schedules that share the dQ accumulation order (ascending and descending: ascending j) give
// identical dQ bits. dK/dV are summed in registers in the order a KV tile visits its Q tiles,
// so they differ between the two visit orders (and are each deterministic).
TEST(DeterminismAcrossSchedules, AscendingAndDescendingShareDqBits) {
  REQUIRE_GPU();
  for (int d : {64, 128})  // bf16: the sm80 kernel at 64, the sm90 kernel at 128
  for (bool causal : {false, true}) {
    ProblemSpec s;
    s.batch = 2; s.seqlen_q = 777; s.seqlen_k = 1000; s.heads_q = 4; s.heads_kv = 1; s.head_dim = d;
    s.causal = causal; s.seed = 5;
    Problem pr(s);
    ASSERT_TRUE(pr.forward().ok());
    pr.poison_grads();
    ASSERT_TRUE(pr.backward(pr.bwd_params(Schedule::kAscending)).ok());
    CUDA_OK(cudaDeviceSynchronize());
    const uint64_t ha = pr.dq.hash();
    pr.poison_grads();
    ASSERT_TRUE(pr.backward(pr.bwd_params(Schedule::kDescending)).ok());
    CUDA_OK(cudaDeviceSynchronize());
    EXPECT_EQ(pr.dq.hash(), ha) << "hdim " << d << (causal ? " causal" : " full");
  }
}

// Fallback when the grid is too small for a schedule's co-resident group.
TEST(Launcher, FallsBackOrRefusesWhenGroupDoesNotFit) {
  REQUIRE_GPU();
  ProblemSpec s;
  s.batch = 1; s.seqlen_q = 1024; s.seqlen_k = 1024; s.heads_q = 2; s.heads_kv = 2; s.head_dim = 64;
  Problem pr(s);
  ASSERT_TRUE(pr.forward().ok());
  AttnBwdParams p = pr.bwd_params(Schedule::kShift);
  p.num_ctas = 4;  // shift needs the 16 KV tiles of a head co-resident
  BwdLaunchInfo info;
  Status st = pr.backward(p, nullptr, &info);
  ASSERT_TRUE(st.ok()) << st.message;
  EXPECT_TRUE(info.fell_back);
  EXPECT_EQ(info.schedule, Schedule::kDescending);
  EXPECT_NE(std::string(info.note).find("descending"), std::string::npos);
  p.allow_fallback = false;
  st = pr.backward(p, nullptr, &info);
  EXPECT_EQ(st.code, StatusCode::kInsufficientResources);
  EXPECT_NE(std::string(st.message).find("co-resident"), std::string::npos) << st.message;
  CUDA_OK(cudaDeviceSynchronize());
}

}  // namespace
}  // namespace dash::test
