// Hopper wgmma/TMA forward (src/kernels/attn_fwd_sm90.cu) against the sm80 forward and, for small
// shapes, the float64 reference. The sm90 path is attn_fwd's default (DASH_FWD_SM90=0 forces the
// sm80 kernel); a direct launch_fwd_sm90 call must reproduce it bit for bit, which proves the
// result came from the sm90 kernel and not from the sm80 fallback. Outputs are poisoned (NaN) before every
// run, so an unwritten element fails. Bounds: |O - O_other| <= 2e-2, |LSE - LSE_other| <= 1e-3
// (both -inf for rows that see no key).
// fp16 (FwdSm90Fp16; a draft behind DASH_SM90_DRAFT=1 until it passed on an H200, now the
// default): the same checks plus O against the float64 reference with expect_within_lowp_bound
// and bitwise reruns.
// Ping-pong (FwdSm90PingPong; the default variant since it passed on an H200, DASH_FWD_PINGPONG=0
// selects the base one): the bf16 cases of FwdSm90 must give O and LSE bit for bit equal to the
// base variant's (same per-row math), and bitwise identical reruns.
// Persistent grid (FwdSm90Persistent; DASH_FWD_PERSISTENT, DASH_FWD_PERSISTENT_CTAS): O and LSE
// bit for bit equal for one CTA per work unit, one CTA per SM, 3 CTAs and 1 CTA, in both variants.
#include <cstdlib>
#include <functional>
#include <string>

#include "attention_harness.h"
#include "kernels/kernel_params.h"

namespace dash::test {
namespace {

struct FwdOut {
  std::vector<double> o;
  std::vector<float> lse;
  uint64_t o_hash = 0;  // of O's bits on the device
};

void poison_outputs(Problem& pr) {
  pr.o.poison(pr.spec.dtype);
  ASSERT_EQ(cudaMemset(pr.lse.ptr, 0xff, pr.lse.bytes), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

void read_outputs(Problem& pr, FwdOut* out) {
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_TRUE(pr.o.download(pr.spec.dtype, &out->o)) << "forward left elements of O unwritten";
  out->o_hash = pr.o.hash();
  out->lse.resize(pr.lse.bytes / sizeof(float));
  ASSERT_EQ(cudaMemcpy(out->lse.data(), pr.lse.ptr, pr.lse.bytes, cudaMemcpyDeviceToHost), cudaSuccess);
}

void run_attn_fwd(Problem& pr, const char* sm90_env, FwdOut* out) {
  poison_outputs(pr);
  {
    ScopedEnv env("DASH_FWD_SM90", sm90_env);
    const Status st = pr.forward();
    ASSERT_TRUE(st.ok()) << st.message;
  }
  read_outputs(pr, out);
}

kernels::FwdKernelParams kernel_params(Problem& pr) {
  kernels::FwdKernelParams p{};
  auto tr = [](const Tensor& t) { return kernels::TensorRef{t.dev.ptr, t.st.batch, t.st.seq, t.st.head}; };
  p.q = tr(pr.q);
  p.k = tr(pr.k);
  p.v = tr(pr.v);
  p.o = kernels::MutTensorRef{pr.o.dev.ptr, pr.o.st.batch, pr.o.st.seq, pr.o.st.head};
  p.lse = pr.lse.as<float>();
  p.batch = pr.spec.batch;
  p.seqlen_q = pr.spec.seqlen_q;
  p.seqlen_k = pr.spec.seqlen_k;
  p.heads_q = pr.spec.heads_q;
  p.heads_kv = pr.spec.heads_kv;
  p.scale = 1.0f / std::sqrt((float)pr.spec.head_dim);  // attn_fwd's default scale
  p.scale_log2 = p.scale * 1.4426950408889634f;
  return p;
}

// A direct launch_fwd_sm90 of the same problem must take the case (not decline it) and give
// `via_api`'s O and LSE bit for bit: proof that attn_fwd ran the sm90 kernel.
void expect_direct_launch_reproduces(Problem& pr, const FwdOut& via_api, const char* what) {
  const ProblemSpec& spec = pr.spec;
  FwdOut direct;
  ASSERT_NO_FATAL_FAILURE(poison_outputs(pr));
  const kernels::FwdKernelParams kp = kernel_params(pr);
  const cudaError_t e = kernels::launch_fwd_sm90(kp, spec.head_dim, spec.dtype, spec.causal, nullptr);
  ASSERT_EQ(e, cudaSuccess) << "launch_fwd_sm90 (" << what << "): " << cudaGetErrorString(e);
  ASSERT_NO_FATAL_FAILURE(read_outputs(pr, &direct));
  ASSERT_EQ(max_abs_diff(direct.o, via_api.o), 0.0) << "attn_fwd (" << what << ") did not run the sm90 kernel";
  ASSERT_EQ(std::memcmp(direct.lse.data(), via_api.lse.data(), via_api.lse.size() * sizeof(float)), 0);
}

// `reruns` more attn_fwd calls give `first`'s bits (O through the device copy's hash, LSE by memcmp).
void expect_bitwise_reruns(Problem& pr, const FwdOut& first, int reruns) {
  for (int r = 1; r <= reruns; ++r) {
    FwdOut again;
    ASSERT_NO_FATAL_FAILURE(run_attn_fwd(pr, "1", &again));
    ASSERT_EQ(again.o_hash, first.o_hash) << "rerun " << r;
    ASSERT_EQ(std::memcmp(again.lse.data(), first.lse.data(), first.lse.size() * sizeof(float)), 0) << "rerun " << r;
  }
}

void expect_close(const char* what, const ProblemSpec& spec, const FwdOut& a, const std::vector<double>& o_b,
                  const std::vector<double>& lse_b, double o_tol, double lse_tol) {
  const double e_o = max_abs_diff(a.o, o_b);
  EXPECT_LE(e_o, o_tol) << "O vs " << what << " " << spec.str();
  double e_lse = 0;
  size_t bad = 0, first_bad = 0;
  for (size_t i = 0; i < lse_b.size(); ++i) {
    const double x = a.lse[i], y = lse_b[i];
    if (std::isinf(y) && y < 0) {
      if (!(std::isinf(x) && x < 0)) { if (!bad++) first_bad = i; }
      continue;
    }
    const double d = std::fabs(x - y);
    if (!(d <= lse_tol)) { if (!bad++) first_bad = i; }
    if (!std::isnan(d)) e_lse = std::max(e_lse, d);
  }
  EXPECT_EQ(bad, 0u) << "LSE vs " << what << " " << spec.str() << ": " << bad << " rows off, first row " << first_bad
                     << " (" << a.lse[first_bad] << " vs " << lse_b[first_bad] << "), max finite diff " << e_lse;
}

// attn_fwd on the sm90 path against the sm80 kernel and, for the smaller shapes, the float64
// reference (plus, with lowp_bound, O within the low-precision bound of it); a direct
// launch_fwd_sm90 reproduces it bit for bit; `reruns` more calls give the same bits.
// `prep`, when given, rewrites the inputs after the random fill (and must upload them).
void check_sm90_forward(const ProblemSpec& spec, int reruns, bool lowp_bound,
                        const std::function<void(Problem&)>& prep = {}) {
  Problem pr(spec);
  if (prep) prep(pr);
  FwdOut sm80, sm90;
  ASSERT_NO_FATAL_FAILURE(run_attn_fwd(pr, "0", &sm80));
  ASSERT_NO_FATAL_FAILURE(run_attn_fwd(pr, "1", &sm90));
  ASSERT_NO_FATAL_FAILURE(expect_direct_launch_reproduces(pr, sm90, spec.str().c_str()));
  ASSERT_NO_FATAL_FAILURE(expect_bitwise_reruns(pr, sm90, reruns));

  std::vector<double> lse80(sm80.lse.begin(), sm80.lse.end());
  expect_close("sm80", spec, sm90, sm80.o, lse80, 2e-2, 1e-3);

  // float64 reference for the smaller shapes.
  const double work = (double)spec.batch * spec.heads_q * spec.seqlen_q * spec.seqlen_k;
  if (work <= 8.5e6) {
    const ref::RefShape rs = pr.ref_shape();
    std::vector<double> o_ref(pr.q.host.size()), lse_ref((size_t)rs.batch * rs.heads_q * rs.seqlen_q);
    ref::attention_forward(rs, pr.q.host.data(), pr.k.host.data(), pr.v.host.data(), o_ref.data(), lse_ref.data());
    if (lowp_bound) {
      std::vector<double> o_lp, dq_lp, dk_lp, dv_lp;
      lowp_attention(rs, spec.dtype, pr.q.host, pr.k.host, pr.v.host, pr.dout.host, &o_lp, &dq_lp, &dk_lp, &dv_lp);
      expect_within_lowp_bound("O " + spec.str(), sm90.o, o_lp, o_ref);
    }
    expect_close("float64 reference", spec, sm90, o_ref, lse_ref, 2e-2, 1e-3);
  }
}

class FwdSm90 : public testing::TestWithParam<ProblemSpec> {};

TEST_P(FwdSm90, MatchesSm80AndFloat64Reference) {
  REQUIRE_GPU();
  ASSERT_NO_FATAL_FAILURE(check_sm90_forward(GetParam(), /*reruns=*/0, /*lowp_bound=*/false));
}

std::vector<ProblemSpec> cases() {
  std::vector<ProblemSpec> v;
  auto add = [&](int b, int sq, int sk, int hq, int hkv, int d, bool causal, DType dt = DType::kBF16) {
    ProblemSpec s;
    s.batch = b; s.seqlen_q = sq; s.seqlen_k = sk; s.heads_q = hq; s.heads_kv = hkv; s.head_dim = d;
    s.causal = causal; s.dtype = dt; s.seed = 9000 + v.size();
    v.push_back(s);
  };
  for (bool causal : {false, true}) {
    add(2, 128, 128, 4, 4, 128, causal);
    add(2, 113, 113, 4, 1, 128, causal);     // one partial tile, GQA 4:1
    add(1, 1000, 1000, 8, 2, 128, causal);   // GQA 4:1, key tail
    add(1, 2048, 2048, 4, 1, 128, causal);   // GQA 4:1, 16 Q tiles x 16 key blocks
    add(2, 113, 1000, 8, 2, 128, causal);    // seqlen_q < seqlen_k: bottom-right diagonal
    add(2, 1000, 113, 8, 2, 128, causal);    // seqlen_q > seqlen_k: causal rows with no key
    add(2, 17, 300, 4, 4, 128, causal);
    add(1, 1000, 1000, 8, 2, 64, causal);    // hdim 64
    add(2, 113, 113, 4, 1, 64, causal);
  }
  add(1, 300, 300, 4, 2, 128, true, DType::kFP16);
  add(1, 8300, 8300, 2, 1, 128, true);       // causal past kPairMaxTiles Q tiles: single tiles, not persistent
  add(1, 8300, 8300, 2, 1, 64, false);       // 65 Q tiles per head, full: persistent
  return v;
}

std::string case_name(const testing::TestParamInfo<ProblemSpec>& info) {
  const ProblemSpec& s = info.param;
  char buf[160];
  std::snprintf(buf, sizeof(buf), "%s_d%d_%s_b%d_sq%d_sk%d_h%d_%d", s.dtype == DType::kBF16 ? "bf16" : "fp16",
                s.head_dim, s.causal ? "causal" : "full", s.batch, s.seqlen_q, s.seqlen_k, s.heads_q, s.heads_kv);
  return buf;
}

INSTANTIATE_TEST_SUITE_P(Shapes, FwdSm90, testing::ValuesIn(cases()), case_name);

// ---- ping-pong variant (DASH_FWD_PINGPONG=1) ---------------------------------------------------
// launch_fwd_sm90 reads DASH_FWD_PINGPONG on every call, so ScopedEnv switches the variant.
class FwdSm90PingPong : public testing::TestWithParam<ProblemSpec> {};

TEST_P(FwdSm90PingPong, BitwiseEqualToDefaultVariant) {
  REQUIRE_GPU();
  const ProblemSpec& spec = GetParam();
  Problem pr(spec);

  FwdOut base, pp;
  {
    ScopedEnv off("DASH_FWD_PINGPONG", "0");
    ASSERT_NO_FATAL_FAILURE(run_attn_fwd(pr, "1", &base));
  }
  ScopedEnv on("DASH_FWD_PINGPONG", "1");
  ASSERT_NO_FATAL_FAILURE(run_attn_fwd(pr, "1", &pp));

  ASSERT_NO_FATAL_FAILURE(expect_direct_launch_reproduces(pr, pp, "DASH_FWD_PINGPONG=1"));

  // Same per-row math as the default variant: the same bits.
  EXPECT_EQ(max_abs_diff(pp.o, base.o), 0.0) << "O differs from the default variant " << spec.str();
  EXPECT_EQ(std::memcmp(pp.lse.data(), base.lse.data(), base.lse.size() * sizeof(float)), 0)
      << "LSE differs from the default variant " << spec.str();
  ASSERT_NO_FATAL_FAILURE(expect_bitwise_reruns(pr, pp, 2));
}

INSTANTIATE_TEST_SUITE_P(Shapes, FwdSm90PingPong, testing::ValuesIn(cases()), case_name);

// ---- persistent grid (DASH_FWD_PERSISTENT, DASH_FWD_PERSISTENT_CTAS) ---------------------------
// Every CTA computes any tile with the same instructions, so O and LSE must be bit for bit the
// same whatever the grid: one CTA per work unit, one per SM, or a few CTAs that each loop over
// many tiles (the K/V ring, the Q barrier and the ping-pong turns then run across tiles).
class FwdSm90Persistent : public testing::TestWithParam<ProblemSpec> {};

TEST_P(FwdSm90Persistent, BitwiseEqualForEveryGridSize) {
  REQUIRE_GPU();
  const ProblemSpec& spec = GetParam();
  Problem pr(spec);

  FwdOut ref;
  {
    ScopedEnv off("DASH_FWD_PERSISTENT", "0");
    ASSERT_NO_FATAL_FAILURE(run_attn_fwd(pr, "1", &ref));
  }
  struct Grid {
    const char* persistent;
    const char* ctas;  // nullptr: unset (one CTA per SM)
    const char* pingpong;
  };
  const Grid grids[] = {{"1", nullptr, "1"}, {"1", "3", "1"}, {"1", "1", "1"}, {"1", "3", "0"}, {"0", nullptr, "0"}};
  for (const Grid& g : grids) {
    ScopedEnv pers("DASH_FWD_PERSISTENT", g.persistent);
    ScopedEnv ctas("DASH_FWD_PERSISTENT_CTAS", g.ctas);
    ScopedEnv pp("DASH_FWD_PINGPONG", g.pingpong);
    const std::string what = std::string("DASH_FWD_PERSISTENT=") + g.persistent + " CTAS=" + (g.ctas ? g.ctas : "unset") +
                             " PINGPONG=" + g.pingpong + " " + spec.str();
    FwdOut out;
    ASSERT_NO_FATAL_FAILURE(run_attn_fwd(pr, "1", &out));
    EXPECT_EQ(out.o_hash, ref.o_hash) << "O bits differ from one CTA per unit: " << what;
    EXPECT_EQ(max_abs_diff(out.o, ref.o), 0.0) << what;
    EXPECT_EQ(std::memcmp(out.lse.data(), ref.lse.data(), ref.lse.size() * sizeof(float)), 0)
        << "LSE differs from one CTA per unit: " << what;
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, FwdSm90Persistent, testing::ValuesIn(cases()), case_name);

// ---- fp16 -------------------------------------------------------------------------------------
class FwdSm90Fp16 : public testing::TestWithParam<ProblemSpec> {};

TEST_P(FwdSm90Fp16, MatchesFloat64ReferenceAndRerunsBitwise) {
  REQUIRE_GPU();
  ASSERT_NO_FATAL_FAILURE(check_sm90_forward(GetParam(), /*reruns=*/4, /*lowp_bound=*/true));
}

std::vector<ProblemSpec> fp16_cases() {
  std::vector<ProblemSpec> v;
  auto add = [&](int b, int sq, int sk, int hq, int hkv, int d, bool causal) {
    ProblemSpec s;
    s.batch = b; s.seqlen_q = sq; s.seqlen_k = sk; s.heads_q = hq; s.heads_kv = hkv; s.head_dim = d;
    s.causal = causal; s.dtype = DType::kFP16; s.seed = 9500 + v.size();
    v.push_back(s);
  };
  for (int d : {128, 64})
    for (bool causal : {false, true}) {
      add(2, 128, 128, 4, 4, d, causal);
      add(2, 113, 113, 4, 1, d, causal);     // one partial tile, GQA 4:1
      add(1, 1000, 1000, 8, 2, d, causal);   // GQA 4:1, key tail
      add(2, 113, 1000, 8, 2, d, causal);    // seqlen_q < seqlen_k: bottom-right diagonal
      add(2, 1000, 113, 8, 2, d, causal);    // seqlen_q > seqlen_k: causal rows with no key
      add(2, 17, 300, 4, 4, d, causal);
      if (d == 128) add(1, 2048, 2048, 4, 1, d, causal);  // 16 x 16 blocks; vs sm80 only
    }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Shapes, FwdSm90Fp16, testing::ValuesIn(fp16_cases()), case_name);

// ---- 176-key tiles (DASH_FWD_BN176=1, head_dim 128, full masks; docs/fwd-sm90.md) ----------------
// Another block partition of the keys, so other bits than the 128-key tiles; each is checked on
// its own: against the sm80 kernel and the float64 reference (and the low-precision bound), a
// direct launch, reruns, and every grid (persistent or not, both variants) giving the same bits.
class FwdSm90Bn176 : public testing::TestWithParam<ProblemSpec> {};

TEST_P(FwdSm90Bn176, AccurateAndBitwiseEqualForEveryGrid) {
  REQUIRE_GPU();
  const ProblemSpec& spec = GetParam();
  FwdOut bn128;
  {
    Problem pr(spec);
    ScopedEnv off("DASH_FWD_BN176", nullptr);
    ASSERT_NO_FATAL_FAILURE(run_attn_fwd(pr, "1", &bn128));
  }
  ScopedEnv on("DASH_FWD_BN176", "1");
  ASSERT_NO_FATAL_FAILURE(check_sm90_forward(spec, /*reruns=*/2, /*lowp_bound=*/true));
  Problem pr(spec);  // the same seed: the same inputs as above
  FwdOut ref;
  {
    ScopedEnv off("DASH_FWD_PERSISTENT", "0");
    ASSERT_NO_FATAL_FAILURE(run_attn_fwd(pr, "1", &ref));
  }
  // More than one block of keys in either partition: the switch must have changed the kernel.
  if (spec.seqlen_k > 176) EXPECT_NE(ref.o_hash, bn128.o_hash) << "DASH_FWD_BN176=1 ran the 128-key kernel " << spec.str();
  struct Grid {
    const char* persistent;
    const char* ctas;
    const char* pingpong;
  };
  const Grid grids[] = {{"1", nullptr, "1"}, {"1", "3", "1"}, {"1", "1", "0"}, {"0", nullptr, "0"}};
  for (const Grid& g : grids) {
    ScopedEnv pers("DASH_FWD_PERSISTENT", g.persistent);
    ScopedEnv ctas("DASH_FWD_PERSISTENT_CTAS", g.ctas);
    ScopedEnv pp("DASH_FWD_PINGPONG", g.pingpong);
    const std::string what = std::string("DASH_FWD_BN176=1 PERSISTENT=") + g.persistent + " CTAS=" +
                             (g.ctas ? g.ctas : "unset") + " PINGPONG=" + g.pingpong + " " + spec.str();
    FwdOut out;
    ASSERT_NO_FATAL_FAILURE(run_attn_fwd(pr, "1", &out));
    EXPECT_EQ(out.o_hash, ref.o_hash) << "O bits differ from one CTA per unit: " << what;
    EXPECT_EQ(std::memcmp(out.lse.data(), ref.lse.data(), ref.lse.size() * sizeof(float)), 0)
        << "LSE differs from one CTA per unit: " << what;
  }
}

std::vector<ProblemSpec> bn176_cases() {
  std::vector<ProblemSpec> v;
  auto add = [&](int b, int sq, int sk, int hq, int hkv, DType dt) {
    ProblemSpec s;
    s.batch = b; s.seqlen_q = sq; s.seqlen_k = sk; s.heads_q = hq; s.heads_kv = hkv; s.head_dim = 128;
    s.causal = false; s.dtype = dt; s.seed = 9700 + v.size();
    v.push_back(s);
  };
  for (DType dt : {DType::kBF16, DType::kFP16}) {
    add(2, 128, 128, 4, 4, dt);       // one partial 176-key block
    add(2, 113, 1000, 8, 2, dt);      // 6 blocks, the first one processed (the last) partial
    add(1, 1000, 1000, 8, 2, dt);     // GQA 4:1, key tail of 120
    add(2, 17, 300, 4, 4, dt);
    add(2, 1000, 113, 8, 2, dt);
  }
  add(1, 528, 528, 4, 1, DType::kBF16);    // exactly 3 blocks: no partial block
  add(1, 2048, 2048, 4, 1, DType::kBF16);  // 16 Q tiles x 12 blocks (last 112 keys)
  add(1, 8300, 8300, 2, 1, DType::kBF16);  // 65 Q tiles per head: persistent loops over tiles
  return v;
}

INSTANTIATE_TEST_SUITE_P(Shapes, FwdSm90Bn176, testing::ValuesIn(bn176_cases()), case_name);

// ---- large logits whose row maxima grow from key block to key block ---------------------------
// The forward visits key blocks from the last to the first and rescales O by how much each row's
// running maximum grew (a conditional rescale that keeps stale maxima was tried and measured slower,
// docs/fwd-sm90.md). Random N(0, 1) inputs give logits of a few units whose maxima settle after a
// block or two, so large rescale factors are not stressed by the other tests. Here
// coordinate 0 carries a ramp: k[j][0] grows as j falls (about 3 log2 units of logit per 128-key
// block, the first block visited being the lowest) with a jump of about 20 log2 units every fifth
// block and smaller steps inside blocks, and q[i][0] = +1 for most rows (their maxima grow at
// almost every block, by less and by more than 2^8) and -1 for every fourth row (their maxima never
// grow), in the same warps. O and LSE against the float64 reference and the sm80 kernel, reruns
// bitwise, every dtype / head dim / mask.
void ramp_inputs(Problem& pr) {
  const ProblemSpec& sp = pr.spec;
  const DType dt = sp.dtype;
  const double step = 3.0 / (1.4426950408889634 / std::sqrt((double)sp.head_dim));  // q.k per 3 log2 units
  auto set = [&](Tensor& t, int bi, int si, int hi, int di, double x) {
    const float r = round_to((float)x, dt);
    t.host[t.dense(bi, si, hi, di)] = r;
    t.dev_bits[t.strided(bi, si, hi, di)] = to_bits(r, dt);
  };
  const int nb = (sp.seqlen_k + 127) / 128;
  for (int bi = 0; bi < sp.batch; ++bi)
    for (int hi = 0; hi < sp.heads_kv; ++hi)
      for (int j = 0; j < sp.seqlen_k; ++j) {
        const int blk = j / 128;
        double g = step * (nb - 1 - blk) + (blk % 5 == 2 ? 7.0 * step : 0.0) + 0.02 * step * (127 - j % 128);
        if (dt == DType::kFP16) g = std::min(g, 6.0e4);
        set(pr.k, bi, j, hi, 0, g);
      }
  for (int bi = 0; bi < sp.batch; ++bi)
    for (int hi = 0; hi < sp.heads_q; ++hi)
      for (int i = 0; i < sp.seqlen_q; ++i) set(pr.q, bi, i, hi, 0, i % 4 == 3 ? -1.0 : 1.0);
  pr.q.upload();
  pr.k.upload();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

class FwdSm90GrowingMaxima : public testing::TestWithParam<ProblemSpec> {};

TEST_P(FwdSm90GrowingMaxima, MatchesFloat64Reference) {
  REQUIRE_GPU();
  ASSERT_NO_FATAL_FAILURE(check_sm90_forward(GetParam(), /*reruns=*/2, /*lowp_bound=*/false, ramp_inputs));
}

std::vector<ProblemSpec> growing_cases() {
  std::vector<ProblemSpec> v;
  for (DType dt : {DType::kBF16, DType::kFP16})
    for (int d : {128, 64})
      for (bool causal : {false, true}) {
        ProblemSpec s;
        s.batch = 1; s.seqlen_q = 1000; s.seqlen_k = 2000; s.heads_q = 4; s.heads_kv = 2; s.head_dim = d;
        s.causal = causal; s.dtype = dt; s.seed = 9900 + v.size();
        v.push_back(s);
      }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Shapes, FwdSm90GrowingMaxima, testing::ValuesIn(growing_cases()), case_name);

}  // namespace
}  // namespace dash::test
