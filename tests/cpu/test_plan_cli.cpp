// The `dash-attn plan` command line, run as a user would (DASH_CLI_PATH is the built binary).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

namespace {

struct CliRun {
  int status = -1;
  std::string out;
};

CliRun run(const std::string& args) {
  const std::string cmd = std::string("'") + DASH_CLI_PATH + "' " + args + " 2>&1";
  CliRun r;
  FILE* f = popen(cmd.c_str(), "r");
  if (f == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) r.out.append(buf, n);
  const int st = pclose(f);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// The "makespan" of the JSON object whose "schedule" is `name`.
double makespan_of(const std::string& json, const std::string& name) {
  const std::regex re("\\{\"schedule\": \"" + name + "\"[^}]*\"makespan\": ([-0-9.eE+]+)");
  std::smatch m;
  if (!std::regex_search(json, m, re)) return -1.0;
  return std::stod(m[1].str());
}

TEST(PlanCli, UnitModelJson) {
  const CliRun r = run("plan --cost-model unit --c 1 --r 0.25 --q-tiles 16 --kv-tiles 16 --sms 16 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.front(), '[') << r.out;
  EXPECT_DOUBLE_EQ(makespan_of(r.out, "ascending"), 23.75) << r.out;
  EXPECT_DOUBLE_EQ(makespan_of(r.out, "shift"), 20.0) << r.out;
  for (const char* key : {"\"lower_bound\": 20", "\"efficiency\"", "\"stall_share\"", "\"critical_path\"",
                          "\"min_coresident\"", "\"feasible\"", "\"dispatch\": \"dynamic\""})
    EXPECT_NE(r.out.find(key), std::string::npos) << key << "\n" << r.out;
}

TEST(PlanCli, UnitModelCausal) {
  const CliRun r = run("plan --cost-model unit --q-tiles 16 --kv-tiles 16 --causal --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_DOUBLE_EQ(makespan_of(r.out, "ascending"), 23.75);   // n(c+r) + (n-1)r
  EXPECT_DOUBLE_EQ(makespan_of(r.out, "descending"), 20.0);   // KV tile 0 finishes last at n(c+r)
}

TEST(PlanCli, HumanTableShowsEveryScheduleAndARecommendation) {
  const CliRun r = run("plan --batch 1 --heads 8 --kv-heads 8 --seqlen 2048 --causal --dispatch static");
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* s : {"ascending", "spt", "descending", "shift", "symmetric_shift", "atomic*", "recommended:",
                        "efficiency", "stalls", "idle", "static dispatch"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
}

TEST(PlanCli, OneScheduleAndGantt) {
  const std::string svg = ::testing::TempDir() + "dash_plan_test.svg";
  const CliRun r = run("plan --cost-model unit --q-tiles 8 --kv-tiles 8 --schedule shift --gantt '" + svg + "'");
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream f(svg);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  EXPECT_EQ(text.rfind("<svg", 0), 0u);
  EXPECT_NE(text.find("shift: makespan 10"), std::string::npos);
  EXPECT_NE(text.find("</svg>"), std::string::npos);
}

TEST(PlanCli, ParamOverridesTheCalibratedRates) {
  // --param NAME=VALUE sets one CostParams field before CostModel::for_shape (scripts/fit_planner.py
  // scores candidate sets with it): c = 5 GEMMs x 2 x 64 x 128 x 128 FLOP / rate + overhead x 2.
  const std::string shape = "plan --batch 1 --heads 4 --kv-heads 4 --seqlen 1024 --hdim 128 --block-n 128 --json";
  const CliRun def = run(shape);
  ASSERT_EQ(def.status, 0) << def.out;
  const CliRun r = run(shape + " --param per_sm_tflops=10 --param=compute_overhead_us=0 --param reduce_latency_us=0");
  ASSERT_EQ(r.status, 0) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("\"c\": ([-0-9.eE+]+), \"r\": ([-0-9.eE+]+)"))) << r.out;
  EXPECT_NEAR(std::stod(m[1].str()), 10.0 * 64 * 128 * 128 / 10e12 * 1e6, 1e-6);
  EXPECT_NE(r.out, def.out);
  CliRun bad = run(shape + " --param no_such_field=1");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("no_such_field"), std::string::npos) << bad.out;
  bad = run(shape + " --param per_sm_tflops");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("NAME=VALUE"), std::string::npos) << bad.out;
  bad = run("plan --cost-model unit --param per_sm_tflops=3");
  EXPECT_EQ(bad.status, 2);
}

TEST(PlanCli, BadFlagsExitTwoAndNameTheFlag) {
  CliRun r = run("plan --bogus 3");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--bogus"), std::string::npos) << r.out;
  r = run("plan --seqlen abc");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--seqlen"), std::string::npos) << r.out;
  r = run("plan --schedule fastest");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--schedule"), std::string::npos) << r.out;
  r = run("plan --heads 6 --kv-heads 4");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--kv-heads"), std::string::npos) << r.out;
  r = run("plan --sms");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--sms needs a value"), std::string::npos) << r.out;
}

// `dash-attn bench` checks its flags before it looks for a GPU, so the errors show here too.
TEST(BenchCli, SustainFlagIsCheckedAndNamed) {
  for (const char* bad : {"0", "61", "abc", "2x", "-1"}) {
    const CliRun r = run(std::string("bench --sustain ") + bad);
    if (r.out.find("has no CUDA") != std::string::npos) GTEST_SKIP() << "this build has no bench (DASH_BUILD_CUDA=OFF)";
    EXPECT_EQ(r.status, 2) << bad << ": " << r.out;
    EXPECT_NE(r.out.find("--sustain must be a number of seconds in (0, 60], got " + std::string(bad)), std::string::npos)
        << r.out;
  }
  const CliRun r = run("bench --sustain");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("missing value for --sustain"), std::string::npos) << r.out;
  EXPECT_NE(run("bench --help").out.find("[--sustain SECONDS]"), std::string::npos);
}

TEST(PlanCli, HelpAndSubcommands) {
  EXPECT_EQ(run("--help").status, 0);
  EXPECT_EQ(run("plan --help").status, 0);
  EXPECT_EQ(run("frobnicate").status, 2);
}

}  // namespace

// --head-block N: the tasks in blocks of N heads (DASH_HEAD_BLOCK); --l2: the fitted L2 working-set
// term (kSm90L2Term), with which blocks of 8 beat 16 at hdim 128 full 16k as on the H100 (docs/
// schedules.md "Head blocks and the L2"); --head-blocks: the table per head block.
TEST(PlanCli, HeadBlockAndTheL2Term) {
  const std::string shape = "plan --batch 1 --heads 16 --kv-heads 16 --seqlen 16384 --hdim 128 --full --schedule ascending";
  const CliRun b8 = run(shape + " --head-block 8 --l2 --json");
  const CliRun b16 = run(shape + " --head-block 16 --l2 --json");
  ASSERT_EQ(b8.status, 0) << b8.out;
  ASSERT_EQ(b16.status, 0) << b16.out;
  EXPECT_NE(b8.out.find("\"head_block\": 8"), std::string::npos) << b8.out;
  EXPECT_NE(b16.out.find("\"head_block\": 16"), std::string::npos) << b16.out;
  EXPECT_LT(makespan_of(b8.out, "ascending"), makespan_of(b16.out, "ascending"));
  // Without --l2 the default model has no L2 term: blocks of 8 and 16 are within 1%.
  const CliRun n8 = run(shape + " --head-block 8 --json");
  const CliRun n16 = run(shape + " --head-block 16 --json");
  EXPECT_NEAR(makespan_of(n8.out, "ascending") / makespan_of(n16.out, "ascending"), 1.0, 0.01);
  // The default order (no --head-block) is the rule's: blocks of 8 here.
  const CliRun def = run(shape + " --json");
  EXPECT_NE(def.out.find("\"head_block\": 8"), std::string::npos) << def.out;
  const CliRun table = run("plan --batch 2 --heads 16 --kv-heads 16 --seqlen 4096 --hdim 128 --full --l2 --head-blocks");
  ASSERT_EQ(table.status, 0) << table.out;
  EXPECT_NE(table.out.find("predicted time per head block"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("B=32"), std::string::npos) << table.out;
  EXPECT_EQ(run("plan --cost-model unit --l2").status, 2);
}
