// The validity checker over every schedule and a grid of shapes: coverage, rank permutations
// and deadlock freedom for every grid size from the schedule's minimum up to its task count.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "schedule/checker.h"

namespace dash {
namespace {

struct Shape {
  int batch, heads_q, heads_kv, seqlen_q, seqlen_k, block_m, block_n;
};

std::string label(const Shape& s, bool causal) {
  return "b" + std::to_string(s.batch) + " hq" + std::to_string(s.heads_q) + " hkv" + std::to_string(s.heads_kv) +
         " sq" + std::to_string(s.seqlen_q) + " sk" + std::to_string(s.seqlen_k) + " " + std::to_string(s.block_m) +
         "x" + std::to_string(s.block_n) + (causal ? " causal" : " full");
}

TileProblem problem(const Shape& s, bool causal) {
  TileProblem p;
  p.batch = s.batch;
  p.heads_q = s.heads_q;
  p.heads_kv = s.heads_kv;
  p.seqlen_q = s.seqlen_q;
  p.seqlen_k = s.seqlen_k;
  p.block_m = s.block_m;
  p.block_n = s.block_n;
  p.causal = causal;
  return p;
}

constexpr Schedule kAll[] = {Schedule::kAscending, Schedule::kSpt, Schedule::kDescending,
                             Schedule::kShift, Schedule::kSymmetricShift, Schedule::kAtomic};

const std::vector<Shape>& grid() {
  static const std::vector<Shape> shapes = {
      // one tile; odd and even tile counts; seqlen not a multiple of the tile
      {1, 1, 1, 64, 64, 64, 64},
      {1, 1, 1, 50, 50, 64, 64},
      {1, 1, 1, 128, 128, 64, 64},
      {1, 1, 1, 448, 448, 64, 64},   // 7 x 7
      {2, 2, 2, 320, 320, 64, 64},   // 5 x 5, several heads and batches
      {1, 1, 1, 1000, 1000, 64, 64}, // 16 x 16, last tile partial
      // seqlen_q != seqlen_k both ways
      {1, 1, 1, 192, 448, 64, 64},
      {1, 1, 1, 448, 192, 64, 64},
      {1, 1, 1, 100, 300, 64, 64},
      {1, 1, 1, 300, 100, 64, 64},
      {1, 1, 1, 64, 576, 64, 64},
      // GQA groups of 2 and 4
      {1, 2, 1, 320, 320, 64, 64},
      {2, 4, 1, 448, 320, 64, 64},
      {1, 8, 2, 320, 448, 64, 64},
      // kBlockM != kBlockN
      {1, 1, 1, 448, 448, 64, 128},
      {1, 1, 1, 448, 448, 128, 64},
      {1, 2, 1, 500, 700, 64, 128},
      {1, 2, 1, 700, 500, 128, 64},
      // m >= 2n: shift's strided starts (stride 2: the sm90 kernel's 64 x 128 tiles; stride 3)
      {1, 1, 1, 1024, 1024, 64, 128},
      {2, 4, 1, 1000, 1000, 64, 128},
      {1, 1, 1, 576, 192, 64, 64},
      // 80-row Q tiles on 128-key KV tiles (the planned full-mask tile of the hdim 128 backward,
      // docs/bwd-sm90.md last section): tile counts 13 x 8, 9 x 4 / 7 x 4 with GQA, 26 x 16
      {1, 1, 1, 1000, 1000, 80, 128},
      {1, 2, 1, 700, 500, 80, 128},
      {2, 2, 1, 2048, 2048, 80, 128},
      // 256-key KV tiles: the tasks of the 2-CTA pair design (docs/bwd-sm90.md "2-CTA pairs": two
      // CTAs' 128-key tiles as one task, ranks at pair granularity): 16 x 4, 26 x 8 with GQA
      {1, 1, 1, 1000, 1000, 64, 256},
      {2, 2, 1, 2048, 2048, 80, 256},
  };
  return shapes;
}

TEST(Checker, EveryScheduleOverTheShapeGrid) {
  int checked = 0;
  for (const Shape& s : grid())
    for (bool causal : {false, true})
      for (Schedule sched : kAll)
        for (bool strided : {false, true}) {
          const ScheduleModel sm = ScheduleModel::make(problem(s, causal), sched, strided);
          const CheckResult r = check_schedule(sm);
          EXPECT_TRUE(r.ok) << schedule_name(sched) << (strided ? " (strided starts) " : " ") << label(s, causal)
                            << ": " << r.error;
          ++checked;
        }
  EXPECT_EQ(checked, static_cast<int>(grid().size()) * 2 * 6 * 2);
}

// Heads interleaved in blocks (ScheduleModel::with_head_block, DASH_HEAD_BLOCK): the numbering
// is a bijection onto (head, slot), task_of inverts it, every chain predecessor of a
// group-width-1 schedule has a lower task number, grouped schedules keep head-major order, and
// the whole schedule still checks (coverage, ranks, no deadlock for every grid and dispatch).
TEST(Checker, HeadBlocksKeepPredecessorsLowerAndAreDeadlockFree) {
  const std::vector<Shape> shapes = {{2, 6, 2, 320, 320, 64, 64}, {3, 4, 1, 448, 320, 64, 128},
                                     {1, 5, 5, 1000, 1000, 64, 128}, {2, 2, 2, 100, 300, 64, 64},
                                     {2, 6, 3, 1000, 1000, 80, 128}};  // the sm90 80-row tiles
  int checked = 0;
  for (const Shape& s : shapes)
    for (bool causal : {false, true})
      for (Schedule sched : kAll)
        for (int hb : {2, 3, 4, 64}) {
          const ScheduleModel base = ScheduleModel::make(problem(s, causal), sched);
          const ScheduleModel sm = base.with_head_block(hb);
          const int H = sm.p.num_heads();
          const std::string what = std::string(schedule_name(sched)) + " head_block " + std::to_string(hb) + " " +
                                   label(s, causal);
          if (base.group_width > 1) {
            EXPECT_EQ(sm.head_block, 1) << what;
          } else {
            EXPECT_EQ(sm.head_block, std::min(hb, H)) << what;
          }
          std::vector<int> seen(static_cast<size_t>(sm.num_tasks()), 0);
          for (int t = 0; t < sm.num_tasks(); ++t) {
            const int h = sm.task_head(t), slot = sm.task_slot(t);
            ASSERT_TRUE(h >= 0 && h < H && slot >= 0 && slot < sm.tasks_per_head) << what << " task " << t;
            ASSERT_EQ(sm.task_of(h, slot), t) << what;
            ++seen[static_cast<size_t>(h) * sm.tasks_per_head + slot];
            // Chain predecessors: every KV tile of the same head whose contribution to a shared
            // dQ tile ranks lower must belong to a lower task.
            if (sm.group_width == 1 && sm.deterministic())
              for (int side = 0; side < sm.num_sides(slot); ++side) {
                const int j = sm.kv_tile(slot, side);
                for (int i = sm.p.q_tile_begin(j); i < sm.m; ++i)
                  for (int jj = 0; jj < sm.chain_length(i); ++jj)
                    if (sm.rank(i, jj) < sm.rank(i, j))
                      EXPECT_LT(sm.task_of(h, sm.slot_of(jj)), t) << what << " dQ " << i << " KV " << jj << "<" << j;
              }
          }
          for (int c : seen) ASSERT_EQ(c, 1) << what;
          const CheckResult r = check_schedule(sm, 40);
          EXPECT_TRUE(r.ok) << what << ": " << r.error;
          ++checked;
        }
  EXPECT_EQ(checked, 5 * 2 * 6 * 4);
}

// The default task order (ScheduleModel::default_head_block) on the sm90 kernel's tiles: blocks of
// kDefaultHeadBlock heads for ascending / descending / atomic with 64-row tiles and for ascending /
// descending with 80-row tiles (atomic there head-major, measured: docs/perf.md v17 item 10); head-major
// elsewhere. Every default model checks (coverage, ranks, no deadlock).
TEST(Checker, DefaultHeadBlocksOfTheSm90Tiles) {
  for (int bm : {64, 80})
    for (bool causal : {false, true})
      for (Schedule sched : kAll) {
        const ScheduleModel sm = ScheduleModel::make(problem({2, 16, 16, 1000, 1000, bm, 128}, causal), sched);
        const bool ordered = sched == Schedule::kAscending || sched == Schedule::kDescending;
        const bool blocks = ordered || (bm == 64 && sched == Schedule::kAtomic);
        EXPECT_EQ(sm.head_block, blocks ? kDefaultHeadBlock : 1) << schedule_name(sched) << " " << bm;
        const CheckResult r = check_schedule(sm, 40);
        EXPECT_TRUE(r.ok) << schedule_name(sched) << " " << bm << (causal ? " causal: " : " full: ") << r.error;
      }
  const ScheduleModel sm80 = ScheduleModel::make(problem({2, 16, 16, 1000, 1000, 80, 64}, false), Schedule::kDescending);
  EXPECT_EQ(sm80.head_block, 1) << "other tiles keep the head-major order";
}

// From 16 KV tiles (1921 keys) the long ordered runs take blocks of kLongHeadBlock heads:
// descending and full-mask ascending on 64-row tiles, ascending / descending on full masks with
// 96-row tiles, causal atomic on 64- and 96-row tiles; everything else as above. Every such default model checks too.
TEST(Checker, LongRunsTakeNarrowerHeadBlocks) {
  for (int bm : {64, 80, 96, 112})
    for (bool causal : {false, true})
      for (int seqlen : {1920, 1921, 2048, 3000})  // 15, 16, 16 and 24 KV tiles
        for (Schedule sched : kAll) {
          const ScheduleModel sm = ScheduleModel::make(problem({1, 12, 12, seqlen, seqlen, bm, 128}, causal), sched);
          const bool ordered = sched == Schedule::kAscending || sched == Schedule::kDescending;
          const bool long_run = (seqlen + 127) / 128 >= kLongHeadBlockMinKvTiles;
          int want = ordered || (bm == 64 && sched == Schedule::kAtomic) ? kDefaultHeadBlock : 1;
          const bool causal_atomic = sched == Schedule::kAtomic && causal;
          if (long_run && bm == 64 &&
              (sched == Schedule::kDescending || (sched == Schedule::kAscending && !causal) || causal_atomic))
            want = kLongHeadBlock;
          if (long_run && bm == 96 && ((ordered && !causal) || causal_atomic)) want = kLongHeadBlock;
          EXPECT_EQ(sm.head_block, std::min(want, 12)) << schedule_name(sched) << " " << bm << " " << seqlen << " " << causal;
          if (seqlen == 2048 && bm != 112) {
            const CheckResult r = check_schedule(sm, 40);
            EXPECT_TRUE(r.ok) << schedule_name(sched) << " " << bm << (causal ? " causal: " : " full: ") << r.error;
          }
        }
}

// shift with m = 2n (64-row Q tiles, 128-key KV tiles, full mask): KV tile j starts at Q tile 2j,
// so the contributions to every dQ tile arrive exactly two steps apart (two steps of slack per
// chain link), and every (Q tile, step) pair is visited at most once.
TEST(Checker, ShiftStartsAreStridedWhenQTilesOutnumberKvTiles) {
  TileProblem p = problem({1, 1, 1, 1024, 1024, 64, 128}, false);
  const ScheduleModel sm = ScheduleModel::make(p, Schedule::kShift, /*strided_starts=*/true);
  ASSERT_EQ(sm.m, 16);
  ASSERT_EQ(sm.n, 8);
  EXPECT_EQ(sm.shift_stride(), 2);
  for (int i = 0; i < sm.m; ++i) {
    std::vector<int> steps;
    for (int j = 0; j < sm.n; ++j) steps.push_back(sm.step_of(j, i));
    std::sort(steps.begin(), steps.end());
    for (size_t k = 1; k < steps.size(); ++k) EXPECT_EQ(steps[k] - steps[k - 1], 2) << "q tile " << i;
    // rank order = arrival order
    for (int j = 0; j < sm.n; ++j) {
      int earlier = 0;
      for (int jj = 0; jj < sm.n; ++jj) earlier += sm.step_of(jj, i) < sm.step_of(j, i);
      EXPECT_EQ(sm.rank(i, j), earlier) << "q tile " << i << " kv tile " << j;
    }
  }
  // Square tiles keep the paper's shift (start j mod m).
  const ScheduleModel sq =
      ScheduleModel::make(problem({1, 1, 1, 1024, 1024, 64, 64}, false), Schedule::kShift, /*strided_starts=*/true);
  EXPECT_EQ(sq.shift_stride(), 1);
  for (int j = 0; j < sq.n; ++j) EXPECT_EQ(sq.visit(j, 0, 0), j);
}

// symmetric shift on the sm90 tiles (causal, m = 2n): the long sides' starts in the shared
// rectangle are two Q tiles apart, so their contributions to a rectangle dQ tile arrive two steps
// apart. Square tiles keep stride 1.
TEST(Checker, SymmetricShiftRectangleStartsAreStrided) {
  const ScheduleModel sm =
      ScheduleModel::make(problem({1, 1, 1, 2048, 2048, 64, 128}, true), Schedule::kSymmetricShift, true);
  ASSERT_EQ(sm.m, 32);
  ASSERT_EQ(sm.n, 16);
  ASSERT_EQ(sm.tasks_per_head, 8);
  EXPECT_EQ(sm.rect_stride(), 2);
  for (int i = sm.rect_begin; i < sm.m; ++i) {
    std::vector<int> steps;
    for (int slot = 0; slot < sm.tasks_per_head; ++slot) steps.push_back(sm.step_of(sm.kv_tile(slot, 0), i));
    std::sort(steps.begin(), steps.end());
    for (size_t k = 1; k < steps.size(); ++k) EXPECT_GE(steps[k] - steps[k - 1], 2) << "q tile " << i;
  }
  const ScheduleModel sq =
      ScheduleModel::make(problem({1, 1, 1, 2048, 2048, 64, 64}, true), Schedule::kSymmetricShift, true);
  EXPECT_EQ(sq.rect_stride(), 1);
  // Off by default: the paper's starts.
  EXPECT_EQ(ScheduleModel::make(problem({1, 1, 1, 2048, 2048, 64, 128}, true), Schedule::kSymmetricShift).rect_stride(),
            1);
}

TEST(Checker, MoreTilesThanTheLargestGroup) {
  // 200 KV tiles: shift splits a head into two groups of 100, so a grid of 100 CTAs must finish
  // a head although it holds only half of it; symmetric shift has 100 pair tasks in one group.
  TileProblem p;
  p.seqlen_q = p.seqlen_k = 200 * 16;
  p.block_m = p.block_n = 16;
  for (bool causal : {false, true})
    for (Schedule sched : kAll) {
      const ScheduleModel sm = ScheduleModel::make(p, sched);
      CheckResult r = check_coverage(sm);
      if (r.ok) r = check_ranks(sm);
      ASSERT_TRUE(r.ok) << r.error;
      for (int P : {sm.min_coresident(), sm.min_coresident() + 1, 131, 132, sm.num_tasks()})
        for (Dispatch d : {Dispatch::kDynamic, Dispatch::kStatic}) {
          if (P < sm.min_coresident() || P > sm.num_tasks()) continue;
          r = check_grid(sm, d, P);
          EXPECT_TRUE(r.ok) << r.error;
        }
    }
}

TEST(Checker, ShiftNeedsItsWholeGroupResident) {
  // The minimum the model reports is tight: one CTA fewer deadlocks, and the report says who
  // waits on what.
  TileProblem p;
  p.seqlen_q = p.seqlen_k = 6 * 64;
  const ScheduleModel sm = ScheduleModel::make(p, Schedule::kShift);
  ASSERT_EQ(sm.min_coresident(), 6);
  const CheckResult r = check_grid(sm, Dispatch::kDynamic, 5);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("deadlock"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("not started"), std::string::npos) << r.error;
}

// The last-wave split (ScheduleModel::with_last_wave_split): planned for kLastWaveSms, only for
// splittable models (full masks; ascending, descending, spt, atomic): every task where there are
// fewer than 132, else (atomic only) the tasks % 132 of the last wave; the units cover every step once,
// and every grid from 1 CTA up is deadlock-free (a piece's chain predecessors are in whole tasks or in
// lower pieces with the same index), with and without head blocks, GQA, ragged lengths.
TEST(Checker, LastWaveSplitCoversEveryStepAndIsDeadlockFree) {
  const std::vector<Shape> shapes = {{1, 8, 2, 1000, 1000, 64, 128},  {2, 4, 1, 300, 700, 64, 128},
                                     {1, 4, 1, 1100, 1300, 96, 128},  {5, 7, 7, 512, 512, 64, 128},
                                     {1, 6, 3, 2048, 2048, 80, 128},  {3, 4, 4, 640, 640, 64, 128},
                                     {2, 40, 40, 256, 256, 64, 128}};
  int split = 0;
  for (const Shape& s : shapes)
    for (bool causal : {false, true})
      for (Schedule sched : kAll)
        for (int hb : {1, 4}) {
          const ScheduleModel sm = ScheduleModel::make(problem(s, causal), sched).with_head_block(hb).with_last_wave_split();
          const std::string what = std::string(schedule_name(sched)) + " head_block " + std::to_string(hb) + " " +
                                   label(s, causal);
          if (!sm.splittable()) {
            EXPECT_FALSE(sm.split()) << what;
            EXPECT_EQ(sm.num_units(), sm.num_tasks()) << what;
            continue;
          }
          const int T = sm.num_tasks();
          if (T >= kLastWaveSms && sm.deterministic()) EXPECT_FALSE(sm.split()) << what;
          if (!sm.split()) continue;
          ++split;
          EXPECT_EQ(sm.split_tasks, T < kLastWaveSms ? T : T % kLastWaveSms) << what;
          EXPECT_GE(sm.split_pieces, 2) << what;
          EXPECT_LE(sm.split_pieces, std::min(kMaxSplitPieces, sm.m)) << what;
          EXPECT_LE(sm.split_tasks * sm.split_pieces, kLastWaveSms) << what;  // the pieces fit one wave
          EXPECT_EQ(sm.num_units(), T + sm.split_tasks * (sm.split_pieces - 1)) << what;
          const CheckResult r = check_schedule(sm, 48);
          EXPECT_TRUE(r.ok) << what << ": " << r.error;
        }
  EXPECT_GT(split, 30);  // (most of the full-mask cases above split)
}

// The plan itself: the tasks that do not fill a wave (all of them below 132; atomic only above), in
// k = min(8, m, 132 / L) pieces, if 1 / k + 2 / m < 0.95. At the standard sweep: atomic at head_dim 64
// (4096 tasks: 4 left, 8 pieces), nothing at head_dim 128 (68 left: no 2 pieces each fit the wave),
// no ordered schedule. Nothing when the tasks fill whole waves, the mask is causal or the schedule
// is shift.
TEST(ScheduleModelSplit, PlanFollowsTheLastWave) {
  auto plan = [](int batch, int heads, int seqlen, bool causal, Schedule sc, int block_m = 64) {
    TileProblem p;
    p.batch = batch;
    p.heads_q = p.heads_kv = heads;
    p.seqlen_q = p.seqlen_k = seqlen;
    p.block_m = block_m;
    p.block_n = 128;
    p.causal = causal;
    return ScheduleModel::make(p, sc).with_last_wave_split();
  };
  for (int seqlen : {1024, 2048, 4096, 8192, 16384}) {
    ASSERT_EQ(plan(16384 / seqlen, 16, seqlen, false, Schedule::kAtomic).num_tasks(), 2048);
    EXPECT_FALSE(plan(16384 / seqlen, 16, seqlen, false, Schedule::kAtomic).split()) << seqlen;
    const ScheduleModel d64 = plan(16384 / seqlen, 32, seqlen, false, Schedule::kAtomic, 96);
    ASSERT_EQ(d64.num_tasks(), 4096);
    EXPECT_EQ(d64.split_tasks, 4) << seqlen;
    EXPECT_EQ(d64.split_pieces, 8) << seqlen;
    for (Schedule sc : {Schedule::kAscending, Schedule::kDescending, Schedule::kSpt}) {
      EXPECT_FALSE(plan(16384 / seqlen, 16, seqlen, false, sc).split()) << seqlen;
      EXPECT_FALSE(plan(16384 / seqlen, 32, seqlen, false, sc, 96).split()) << seqlen;
    }
  }
  EXPECT_EQ(plan(1, 132, 128, false, Schedule::kAtomic).split_tasks, 0);              // one whole wave
  EXPECT_EQ(plan(1, 264, 128, false, Schedule::kAtomic).split_tasks, 0);              // two
  EXPECT_FALSE(plan(1, 8, 4096, true, Schedule::kDescending).split());                // causal
  EXPECT_FALSE(plan(1, 8, 4096, false, Schedule::kShift).split());                    // shift
  EXPECT_FALSE(plan(1, 8, 4096, false, Schedule::kSymmetricShift).split());           // = shift on full
  for (Schedule sc : {Schedule::kSpt, Schedule::kDescending, Schedule::kAscending, Schedule::kAtomic}) {
    const ScheduleModel few = plan(1, 8, 1024, false, sc);  // 64 tasks: two pieces each
    EXPECT_EQ(few.split_tasks, 64);
    EXPECT_EQ(few.split_pieces, 2);
    const ScheduleModel tiny = plan(1, 2, 1024, false, sc);  // 16 tasks of 16 steps: 8 pieces each
    EXPECT_EQ(tiny.split_tasks, 16);
    EXPECT_EQ(tiny.split_pieces, 8);
    EXPECT_FALSE(plan(1, 40, 256, false, sc).split());  // 80 tasks: 132 / 80 < 2 pieces each
  }
  EXPECT_FALSE(plan(1, 80, 256, false, Schedule::kDescending).split());  // 160 tasks, ordered
  EXPECT_EQ(plan(1, 80, 256, false, Schedule::kAtomic).split_tasks, 28);  // 160 % 132, in 4 pieces of 1 step
  EXPECT_EQ(plan(1, 80, 256, false, Schedule::kAtomic).split_pieces, 4);
  // Pieces: piece-major units after the whole tasks, steps in order, the last piece ends at m.
  const ScheduleModel sm = plan(1, 80, 256 * 16, false, Schedule::kAtomic);  // 2560 tasks: 52 left, 2 pieces
  ASSERT_EQ(sm.split_tasks, 52);
  ASSERT_EQ(sm.split_pieces, 2);
  const int w = sm.first_split_task();
  EXPECT_EQ(sm.unit_task(w - 1), w - 1);
  EXPECT_EQ(sm.unit_piece(w - 1), -1);
  EXPECT_EQ(sm.unit_task(w), w);
  EXPECT_EQ(sm.unit_piece(w + sm.split_tasks), 1);
  EXPECT_EQ(sm.unit_task(w + sm.split_tasks + 3), w + 3);
  int t0 = 0, t1 = 0;
  sm.unit_steps(sm.num_units() - 1, &t0, &t1);
  EXPECT_EQ(t1, sm.m);
  EXPECT_EQ(t0, sm.piece_begin(sm.split_pieces - 1, sm.m));
}

TEST(Checker, DetectsABrokenModel) {
  // A model that drops a task leaves its KV tile unvisited; the checker must say so.
  TileProblem p;
  p.seqlen_q = p.seqlen_k = 8 * 64;
  p.causal = true;
  ScheduleModel sm = ScheduleModel::make(p, Schedule::kDescending);
  ASSERT_TRUE(check_coverage(sm).ok);
  sm.tasks_per_head -= 1;
  const CheckResult r = check_coverage(sm);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("KV tile 7"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace dash
