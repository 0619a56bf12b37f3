// Bad input gives a clear error naming the argument, never a launch. The checks that need no
// device (shapes, strides, null/misaligned pointers, enums) run on CPU-only machines too.
#include <cstdlib>
#include <string>

#include "attention_harness.h"
#include "kernels/kernel_params.h"

namespace dash::test {
namespace {

void* fake(uintptr_t addr) { return reinterpret_cast<void*>(addr); }

AttnBwdParams valid_looking_bwd() {
  AttnBwdParams p;
  p.shape.batch = 1; p.shape.seqlen_q = 128; p.shape.seqlen_k = 128;
  p.shape.heads_q = 4; p.shape.heads_kv = 2; p.shape.head_dim = 64;
  const Strides3 sq{128 * 4 * 64, 4 * 64, 64}, sk{128 * 2 * 64, 2 * 64, 64};
  p.q = fake(0x100000); p.q_stride = sq;
  p.k = fake(0x200000); p.k_stride = sk;
  p.v = fake(0x300000); p.v_stride = sk;
  p.o = fake(0x400000); p.o_stride = sq;
  p.dout = fake(0x500000); p.dout_stride = sq;
  p.dq = fake(0x600000); p.dq_stride = sq;
  p.dk = fake(0x700000); p.dk_stride = sk;
  p.dv = fake(0x800000); p.dv_stride = sk;
  p.lse = static_cast<const float*>(fake(0x900000));
  return p;
}

void expect_error(const Status& st, StatusCode code, const std::string& needle) {
  EXPECT_EQ(st.code, code) << st.message;
  EXPECT_NE(std::string(st.message).find(needle), std::string::npos)
      << "message '" << st.message << "' should mention '" << needle << "'";
}

Status bwd(const AttnBwdParams& p) {
  alignas(256) static char ws[256];
  return attn_bwd(p, ws, sizeof(ws), nullptr);
}

// The DASH_* switches are read once per call (kernels::EnvScope at the top of attn_fwd / attn_bwd /
// attn_bwd_workspace_size): inside a scope the values at its start, after it the live environment.
TEST(EnvSwitches, ReadOncePerCallAndLiveBetweenCalls) {
  using kernels::env_get;
  ::setenv("DASH_TEST_ENV_SWITCH", "1", 1);
  ::setenv("DASH_TEST_ENV_SWITCH_LONGER", "7", 1);
  ::unsetenv("DASH_TEST_ENV_UNSET");
  {
    const kernels::EnvScope scope;
    ASSERT_NE(kernels::t_env_snapshot, nullptr);
    EXPECT_TRUE(kernels::env_set_to_one("DASH_TEST_ENV_SWITCH"));
    EXPECT_STREQ(env_get("DASH_TEST_ENV_SWITCH_LONGER"), "7");  // not confused with its prefix
    EXPECT_EQ(env_get("DASH_TEST_ENV_SWITC"), nullptr);
    EXPECT_EQ(env_get("DASH_TEST_ENV_UNSET"), nullptr);
    EXPECT_TRUE(kernels::env_not_zero("DASH_TEST_ENV_UNSET"));
    ::setenv("DASH_TEST_ENV_SWITCH", "0", 1);  // a change during the call: the call keeps its view
    EXPECT_TRUE(kernels::env_set_to_one("DASH_TEST_ENV_SWITCH"));
    {
      const kernels::EnvScope nested;  // (attn_bwd's recursion): the outer scope's view
      EXPECT_TRUE(kernels::env_set_to_one("DASH_TEST_ENV_SWITCH"));
    }
    EXPECT_NE(kernels::t_env_snapshot, nullptr);  // the nested scope did not end the outer one
  }
  EXPECT_EQ(kernels::t_env_snapshot, nullptr);
  EXPECT_FALSE(kernels::env_set_to_one("DASH_TEST_ENV_SWITCH"));  // the next call sees the change
  EXPECT_STREQ(env_get("DASH_TEST_ENV_SWITCH"), "0");
  ::unsetenv("DASH_TEST_ENV_SWITCH");
  ::unsetenv("DASH_TEST_ENV_SWITCH_LONGER");
  EXPECT_EQ(env_get("DASH_TEST_ENV_SWITCH"), nullptr);
}

// A switch set between calls takes effect in the next call through the API (here the workspace
// size query, which reads DASH_BWD_REPACK: the head-major copies make the workspace larger).
TEST(EnvSwitches, TheApiSeesASwitchSetBetweenCalls) {
  AttnShape s;
  s.batch = 2; s.seqlen_q = s.seqlen_k = 1000; s.heads_q = s.heads_kv = 4; s.head_dim = 128;
  ::unsetenv("DASH_BWD_REPACK");
  const size_t plain = attn_bwd_workspace_size(s);
  ::setenv("DASH_BWD_REPACK", "1", 1);
  const size_t repack = attn_bwd_workspace_size(s);
  ::unsetenv("DASH_BWD_REPACK");
  EXPECT_GT(repack, plain);
  EXPECT_EQ(attn_bwd_workspace_size(s), plain);
}

TEST(ApiValidation, ShapeErrorsNameTheArgument) {
  AttnBwdParams p = valid_looking_bwd();
  p.shape.seqlen_q = 0;
  expect_error(bwd(p), StatusCode::kInvalidArgument, "seqlen_q");
  p = valid_looking_bwd(); p.shape.seqlen_k = 0;
  expect_error(bwd(p), StatusCode::kInvalidArgument, "seqlen_k");
  p = valid_looking_bwd(); p.shape.batch = 0;
  expect_error(bwd(p), StatusCode::kInvalidArgument, "batch");
  p = valid_looking_bwd(); p.shape.head_dim = 96;
  expect_error(bwd(p), StatusCode::kUnsupported, "head_dim 96");
  p = valid_looking_bwd(); p.shape.heads_q = 6; p.shape.heads_kv = 4;
  expect_error(bwd(p), StatusCode::kInvalidArgument, "heads_q (6) must be a multiple of heads_kv (4)");
  p = valid_looking_bwd(); p.shape.dtype = static_cast<DType>(7);
  expect_error(bwd(p), StatusCode::kInvalidArgument, "dtype");
  p = valid_looking_bwd(); p.shape.softmax_scale = -1.f;
  expect_error(bwd(p), StatusCode::kInvalidArgument, "softmax_scale");
  p = valid_looking_bwd(); p.schedule = static_cast<Schedule>(42);
  expect_error(bwd(p), StatusCode::kInvalidArgument, "schedule");
  p = valid_looking_bwd(); p.dispatch = static_cast<Dispatch>(9);
  expect_error(bwd(p), StatusCode::kInvalidArgument, "dispatch");
  p = valid_looking_bwd(); p.num_ctas = -3;
  expect_error(bwd(p), StatusCode::kInvalidArgument, "num_ctas");
}

TEST(ApiValidation, StrideAndPointerErrorsNameTheTensor) {
  AttnBwdParams p = valid_looking_bwd();
  p.k_stride.seq = 130;  // not a multiple of 8 elements
  expect_error(bwd(p), StatusCode::kInvalidArgument, "k strides");
  p = valid_looking_bwd(); p.dv_stride.head = -64;
  expect_error(bwd(p), StatusCode::kInvalidArgument, "dv strides");
  p = valid_looking_bwd(); p.q = nullptr;
  expect_error(bwd(p), StatusCode::kInvalidArgument, "q is null");
  p = valid_looking_bwd(); p.dout = fake(0x500008);
  expect_error(bwd(p), StatusCode::kInvalidArgument, "dout must be 16-byte aligned");
  p = valid_looking_bwd(); p.lse = nullptr;
  expect_error(bwd(p), StatusCode::kInvalidArgument, "lse is null");

  AttnFwdParams f;
  f.shape = p.shape;
  f.q = p.q; f.q_stride = p.q_stride; f.k = p.k; f.k_stride = p.k_stride;
  f.v = p.v; f.v_stride = p.v_stride; f.o = nullptr; f.o_stride = p.o_stride;
  f.lse = static_cast<float*>(fake(0x900000));
  expect_error(attn_fwd(f, nullptr), StatusCode::kInvalidArgument, "o is null");
  f.o = fake(0x400000); f.shape.head_dim = 256;
  expect_error(attn_fwd(f, nullptr), StatusCode::kUnsupported, "head_dim 256");
}

// pointers_verified (set by the PyTorch binding) skips only the per-pointer CUDA queries: null,
// alignment and stride errors are the same, with the same messages; with it, fake pointers get
// past the pointer checks to the next one (the workspace size here, so nothing is launched).
TEST(ApiValidation, VerifiedPointersStillCheckNullAlignmentAndStrides) {
  const auto verified = [] {
    AttnBwdParams p = valid_looking_bwd();
    p.pointers_verified = true;
    return p;
  };
  AttnBwdParams p = verified();
  p.q = nullptr;
  expect_error(bwd(p), StatusCode::kInvalidArgument, "q is null");
  p = verified(); p.dout = fake(0x500008);
  expect_error(bwd(p), StatusCode::kInvalidArgument, "dout must be 16-byte aligned");
  p = verified(); p.dv = nullptr;
  expect_error(bwd(p), StatusCode::kInvalidArgument, "dv is null");
  p = verified(); p.k_stride.seq = 130;
  expect_error(bwd(p), StatusCode::kInvalidArgument, "k strides");
  p = verified(); p.lse = nullptr;
  expect_error(bwd(p), StatusCode::kInvalidArgument, "lse is null");
  p = verified(); p.lse = static_cast<const float*>(fake(0x900002));
  expect_error(bwd(p), StatusCode::kInvalidArgument, "lse must be 4-byte aligned");
  p = verified();
  expect_error(bwd(p), StatusCode::kInvalidArgument, "workspace_bytes");  // 256 bytes: too small

  AttnFwdParams f;
  f.pointers_verified = true;
  f.shape = p.shape;
  f.q = p.q; f.q_stride = p.q_stride; f.k = p.k; f.k_stride = p.k_stride;
  f.v = p.v; f.v_stride = p.v_stride; f.o = nullptr; f.o_stride = p.o_stride;
  f.lse = static_cast<float*>(fake(0x900000));
  expect_error(attn_fwd(f, nullptr), StatusCode::kInvalidArgument, "o is null");
  f.o = fake(0x400004);
  expect_error(attn_fwd(f, nullptr), StatusCode::kInvalidArgument, "o must be 16-byte aligned");
  f.o = fake(0x400000); f.lse = static_cast<float*>(fake(0x900001));
  expect_error(attn_fwd(f, nullptr), StatusCode::kInvalidArgument, "lse must be 4-byte aligned");
}

TEST(ApiValidation, UnverifiedPointersAreQueried) {
  // The default (pointers_verified false): the fake pointers fail the device-pointer check
  // before the workspace is looked at ("q is not a CUDA device pointer" without a usable GPU,
  // "q is not device memory" with one).
  const AttnBwdParams p = valid_looking_bwd();
  ASSERT_FALSE(p.pointers_verified);
  const Status st = bwd(p);
  EXPECT_EQ(st.code, StatusCode::kInvalidArgument) << st.message;
  EXPECT_EQ(std::string(st.message).rfind("q is not ", 0), 0u) << st.message;
}

TEST(ApiValidation, WorkspaceSizeIsLinearInSeqlen) {
  AttnShape s;
  s.batch = 1; s.heads_q = 8; s.heads_kv = 8; s.head_dim = 128;
  s.seqlen_q = s.seqlen_k = 4096;
  const size_t a = attn_bwd_workspace_size(s);
  s.seqlen_q = s.seqlen_k = 8192;
  const size_t b = attn_bwd_workspace_size(s);
  EXPECT_GT(a, 0u);
  EXPECT_LT(static_cast<double>(b) / a, 2.05);  // doubling seqlen at most doubles the workspace
  s.head_dim = 80;
  EXPECT_EQ(attn_bwd_workspace_size(s), 0u);  // invalid shape
}

TEST(ApiValidation, DeviceChecksNeedAGpu) {
  REQUIRE_GPU();
  ProblemSpec spec;
  Problem pr(spec);
  std::vector<uint16_t> host(1 << 20);
  AttnBwdParams p = pr.bwd_params(Schedule::kDescending);
  p.dq = host.data();
  EXPECT_EQ(pr.backward(p).code, StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(pr.backward(p).message).find("dq"), std::string::npos);
  p = pr.bwd_params(Schedule::kDescending);
  expect_error(attn_bwd(p, pr.workspace.ptr, 256, nullptr), StatusCode::kInvalidArgument, "workspace_bytes");
  p.num_ctas = 100000;
  expect_error(pr.backward(p), StatusCode::kInvalidArgument, "co-resident");
}

}  // namespace
}  // namespace dash::test
