// The schedule model itself: construction rules and the facts the kernels rely on.
#include <cstdio>

#include <gtest/gtest.h>

#include "dash_attn/schedule.h"

namespace dash {
namespace {

TileProblem square(int tiles, bool causal, int heads = 1) {
  TileProblem p;
  p.heads_q = p.heads_kv = heads;
  p.seqlen_q = p.seqlen_k = tiles * 64;
  p.causal = causal;
  return p;
}

TEST(ScheduleModel, SymmetricShiftOnFullMaskIsShift) {
  EXPECT_EQ(ScheduleModel::make(square(8, false), Schedule::kSymmetricShift).schedule, Schedule::kShift);
  EXPECT_EQ(ScheduleModel::make(square(8, true), Schedule::kSymmetricShift).schedule, Schedule::kSymmetricShift);
}

TEST(ScheduleModel, GroupWidthIsAFunctionOfTheShapeOnly) {
  // Shift needs its whole group resident; groups never exceed kMaxGroupWidth and split evenly.
  EXPECT_EQ(ScheduleModel::make(square(7, false), Schedule::kShift).group_width, 7);
  EXPECT_EQ(ScheduleModel::make(square(128, false), Schedule::kShift).group_width, 128);
  EXPECT_EQ(ScheduleModel::make(square(200, false), Schedule::kShift).group_width, 100);
  EXPECT_EQ(ScheduleModel::make(square(7, true), Schedule::kSymmetricShift).group_width, 4);
  EXPECT_EQ(ScheduleModel::make(square(7, true), Schedule::kSymmetricShift).tasks_per_head, 4);
  for (Schedule s : {Schedule::kAscending, Schedule::kSpt, Schedule::kDescending, Schedule::kAtomic})
    EXPECT_EQ(ScheduleModel::make(square(200, true), s).min_coresident(), 1);
}

TEST(ScheduleModel, TileCountsAndBottomRightCausalMask) {
  TileProblem p;
  p.seqlen_q = 100;  // 2 Q tiles of 64
  p.seqlen_k = 300;  // 5 KV tiles; query row r sees keys <= r + 200
  p.causal = true;
  EXPECT_EQ(p.m_tiles(), 2);
  EXPECT_EQ(p.n_tiles(), 5);
  EXPECT_EQ(p.kv_tile_end(0), 5);  // row 63 sees keys up to 263 -> tile 4
  EXPECT_EQ(p.kv_tile_end(1), 5);
  EXPECT_EQ(p.q_tile_begin(0), 0);
  EXPECT_EQ(p.q_tile_begin(4), 0);  // key 256 is seen from row 56 on
  p.seqlen_q = 300;
  p.seqlen_k = 100;  // rows 0..199 see nothing
  EXPECT_EQ(p.kv_tile_end(0), 0);
  EXPECT_EQ(p.kv_tile_end(3), 1);  // rows 192..255 see keys 0..55
  EXPECT_EQ(p.kv_tile_end(4), 2);  // rows 256..299 see keys 0..99
  EXPECT_EQ(p.q_tile_begin(0), 3);
}

TEST(ScheduleModel, DescendingAccumulatesLikeAscending) {
  // Same accumulation order means the same bits: descending is a drop-in for ascending.
  const TileProblem p = square(9, true);
  const ScheduleModel a = ScheduleModel::make(p, Schedule::kAscending);
  const ScheduleModel d = ScheduleModel::make(p, Schedule::kDescending);
  for (int i = 0; i < a.m; ++i)
    for (int j = 0; j < a.chain_length(i); ++j) EXPECT_EQ(a.rank(i, j), d.rank(i, j));
}

TEST(ScheduleModel, ShiftVisitsDistinctQTilesAtEveryStep) {
  // Full mask, one group: at step t the concurrent KV tiles touch distinct dQ tiles.
  const ScheduleModel sm = ScheduleModel::make(square(11, false), Schedule::kShift);
  for (int t = 0; t < sm.m; ++t) {
    std::vector<int> seen(sm.m, 0);
    for (int slot = 0; slot < sm.tasks_per_head; ++slot) ++seen[sm.visit(slot, 0, t)];
    for (int i = 0; i < sm.m; ++i) EXPECT_EQ(seen[i], 1) << "step " << t;
  }
}

// shift_rank (the O(1) rank of full-mask shift the sm90 kernel's writer uses) equals the
// definition, rank()'s loop over the chain, on the shapes it claims, including two groups,
// 80-row tiles, seqlen_q > seqlen_k, partial last tiles; it is not claimed where starts wrap or
// stride, or on causal masks (those keep the loop).
TEST(ScheduleModel, ShiftClosedFormRank) {
  struct Shape { int sq, sk, bm, bn; };
  int claimed = 0, groups2 = 0;
  for (Shape sh : {Shape{64, 64, 64, 64}, Shape{640, 640, 64, 64}, Shape{1000, 1000, 64, 128}, Shape{2048, 2048, 80, 128},
                   Shape{4096, 1000, 80, 128}, Shape{113, 113, 64, 128}, Shape{8300, 8300, 64, 64},
                   Shape{20000, 20000, 80, 128}, Shape{16384, 16384, 64, 128}, Shape{3000, 2900, 64, 64}}) {
    TileProblem p;
    p.seqlen_q = sh.sq; p.seqlen_k = sh.sk; p.block_m = sh.bm; p.block_n = sh.bn;
    for (Schedule sc : {Schedule::kShift, Schedule::kSymmetricShift}) {
      const ScheduleModel sm = ScheduleModel::make(p, sc);
      ASSERT_TRUE(sm.shift_rank_closed()) << sh.sq << " " << sh.sk << " " << sh.bm << " " << sh.bn;
      ++claimed;
      if (sm.group_width < sm.n) ++groups2;
      for (int i = 0; i < sm.m; ++i)
        for (int j = 0; j < sm.chain_length(i); ++j)
          ASSERT_EQ(sm.shift_rank(i, j), sm.rank(i, j)) << sh.sq << " " << sh.sk << " " << sh.bm << " "
                                                                 << sh.bn << " q tile " << i << " kv tile " << j;
    }
  }
  EXPECT_EQ(claimed, 20);
  EXPECT_GE(groups2, 4) << "two-group shapes covered";
  TileProblem p;
  p.seqlen_q = 1000; p.seqlen_k = 4096; p.block_m = 64; p.block_n = 64;  // n 64 > m 16: starts wrap
  EXPECT_FALSE(ScheduleModel::make(p, Schedule::kShift).shift_rank_closed());
  p.seqlen_q = 4096; p.seqlen_k = 1000;
  EXPECT_FALSE(ScheduleModel::make(p, Schedule::kShift, /*strided_starts=*/true).shift_rank_closed());
  p.causal = true;
  EXPECT_FALSE(ScheduleModel::make(p, Schedule::kShift).shift_rank_closed());
  EXPECT_FALSE(ScheduleModel::make(p, Schedule::kSymmetricShift).shift_rank_closed());
}

// symshift_rank (symmetric shift's O(1) rank; CPU model only so far) equals rank()'s loop on the
// shapes it claims: square and rectangular causal masks (seqlen_q < / > seqlen_k), odd and even KV
// tile counts, 64 / 128-key tiles over 64-row Q tiles, one and two groups.
TEST(ScheduleModel, SymmetricShiftClosedFormRank) {
  struct Shape { int sq, sk, bm, bn; };
  int claimed = 0, groups2 = 0, checked = 0;
  for (Shape sh : {Shape{64, 64, 64, 64}, Shape{640, 640, 64, 64}, Shape{1000, 1000, 64, 128}, Shape{2048, 2048, 64, 128},
                   Shape{113, 113, 64, 128}, Shape{4096, 4096, 64, 128}, Shape{3000, 2900, 64, 64},
                   Shape{2900, 3000, 64, 64}, Shape{1000, 4096, 64, 128}, Shape{4096, 1000, 64, 128},
                   Shape{8300, 8300, 64, 128}, Shape{19200, 19200, 64, 64}, Shape{700, 700, 64, 64}, Shape{130, 1000, 64, 64}}) {
    TileProblem p;
    p.seqlen_q = sh.sq; p.seqlen_k = sh.sk; p.block_m = sh.bm; p.block_n = sh.bn; p.causal = true;
    const ScheduleModel sm = ScheduleModel::make(p, Schedule::kSymmetricShift);
    if (!sm.symshift_rank_closed()) continue;
    ++claimed;
    if (sm.group_width < sm.tasks_per_head) ++groups2;
    for (int i = 0; i < sm.m; ++i)
      for (int j = 0; j < sm.chain_length(i); ++j, ++checked)
        ASSERT_EQ(sm.symshift_rank(i, j), sm.rank(i, j)) << sh.sq << " " << sh.sk << " " << sh.bm << " " << sh.bn
                                                         << " q tile " << i << " kv tile " << j;
  }
  // and a sweep of odd shapes (seqlens 1..3000 from a fixed linear congruential sequence), both
  // closed forms against the loop wherever they are claimed
  unsigned x = 12345;
  auto next = [&x](int mod) { x = x * 1103515245u + 12345u; return static_cast<int>((x >> 8) % mod); };
  int odd = 0;
  for (int k = 0; k < 200; ++k) {
    TileProblem p;
    p.seqlen_q = 1 + next(3000); p.seqlen_k = 1 + next(3000); p.block_m = 64; p.block_n = next(2) ? 128 : 64;
    for (bool causal : {false, true}) {
      p.causal = causal;
      for (Schedule sc : {Schedule::kShift, Schedule::kSymmetricShift}) {
        const ScheduleModel sm = ScheduleModel::make(p, sc);
        const bool sym = sm.symshift_rank_closed(), sh = sm.shift_rank_closed();
        if (!sym && !sh) continue;
        ++odd;
        for (int i = 0; i < sm.m; ++i)
          for (int j = 0; j < sm.chain_length(i); ++j, ++checked)
            ASSERT_EQ(sym ? sm.symshift_rank(i, j) : sm.shift_rank(i, j), sm.rank(i, j))
                << p.seqlen_q << " " << p.seqlen_k << " " << p.block_n << " " << schedule_name(sc) << " causal " << causal
                << " q tile " << i << " kv tile " << j;
      }
    }
  }
  EXPECT_GE(odd, 300);
  std::printf("closed forms: %d named shapes (%d with two groups), %d odd shape / schedule pairs, %d ranks checked\n",
              claimed, groups2, odd, checked);
  EXPECT_GE(claimed, 12);
  EXPECT_GE(groups2, 1) << "a two-group shape covered";
  TileProblem p;
  p.seqlen_q = p.seqlen_k = 4096; p.block_m = 128; p.block_n = 64; p.causal = true;  // block_n < block_m
  EXPECT_FALSE(ScheduleModel::make(p, Schedule::kSymmetricShift).symshift_rank_closed());
  p.block_m = 64;
  p.seqlen_q = 1000;
  p.seqlen_k = 256;  // 4 KV tiles, 2 tasks, a rectangle of 4 Q tiles: starts 2 apart
  const ScheduleModel strided = ScheduleModel::make(p, Schedule::kSymmetricShift, /*strided_starts=*/true);
  ASSERT_GT(strided.start_stride, 1);
  EXPECT_FALSE(strided.symshift_rank_closed());
  p.seqlen_q = p.seqlen_k = 4096;
  p.causal = false;  // symmetric shift on a full mask is shift
  EXPECT_FALSE(ScheduleModel::make(p, Schedule::kSymmetricShift).symshift_rank_closed());
}

TEST(ScheduleModel, AtomicHasNoRanks) {
  const ScheduleModel sm = ScheduleModel::make(square(4, true), Schedule::kAtomic);
  EXPECT_FALSE(sm.deterministic());
  EXPECT_EQ(sm.rank(3, 1), -1);
}

TEST(ScheduleModel, Names) {
  for (int k = 0; k <= static_cast<int>(Schedule::kAuto); ++k) {
    Schedule s{};
    ASSERT_TRUE(parse_schedule(schedule_name(static_cast<Schedule>(k)), &s));
    EXPECT_EQ(static_cast<int>(s), k);
  }
  Schedule s{};
  EXPECT_FALSE(parse_schedule("fastest", &s));
  Dispatch d{};
  EXPECT_TRUE(parse_dispatch("static", &d));
  EXPECT_EQ(d, Dispatch::kStatic);
  EXPECT_FALSE(parse_dispatch("round-robin", &d));
}

// DASH_HEAD_BLOCK=l2 (experiment): the head block whose streamed Q / dO fit the budget.
TEST(ScheduleModel, L2HeadBlockFitsTheBudget) {
  const long long mib = 1 << 20, budget = 25 * mib;  // half of the H200's 50 MiB L2
  auto per_head = [](long long seqlen, long long hdim, long long g) { return seqlen * hdim * 2 * 2 * g; };
  EXPECT_EQ(l2_head_block(per_head(16384, 128, 1), budget), 3);   // 8 MiB per head
  EXPECT_EQ(l2_head_block(per_head(8192, 128, 1), budget), 6);    // 4 MiB
  EXPECT_EQ(l2_head_block(per_head(4096, 128, 1), budget), 12);   // 2 MiB
  EXPECT_EQ(l2_head_block(per_head(2048, 128, 1), budget), 16);   // capped at the default
  EXPECT_EQ(l2_head_block(per_head(16384, 64, 1), budget), 6);
  EXPECT_EQ(l2_head_block(per_head(65536, 128, 4), budget), 1);   // never below one head
  EXPECT_EQ(l2_head_block(0, budget), kDefaultHeadBlock);
}

}  // namespace
}  // namespace dash
