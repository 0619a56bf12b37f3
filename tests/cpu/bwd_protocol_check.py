#!/usr/bin/env python3
"""Explicit-state model check of the WHOLE intra-CTA protocol of the sm90 backward (one CTA).

Model of attn_bwd_sm90_main in src/kernels/attn_bwd_sm90.cu, default variant (kLag = false):
  taker   task_taker (warp 10 lane 0): drain wait on s_reduced (dynamic, group width > 1), late
          wait on kv_empty parity (sides_published - 1) & 1 or, take-ahead, on kv_near_end parity
          (tasks_published - 1) & 1; task_empty wait; s_task store; task_full arrive; END -> stop.
  loader  producer (warp 8 lane 0): read_published_task; per side kv_empty wait, arrive_expect_tx
          on kv_full + TMA; per step qdo_empty wait, arrive_expect_tx on qdo_full + TMA.
  mma     the 256 MMA threads, 2 warpgroups of T modelled threads each: read_published_task; per
          side kv_full wait, kv_near_end arrival (thread 0, take-ahead, last side of the task);
          per step qdo_full wait, dS^T store, named barrier kBarDs, the head_dim 128 order
          (dQ GEMM, stage_dq, qdo_empty) or the head_dim 64 order (qdo_empty; warpgroup step % 2
          dQ GEMM + stage_dq, the other one dq_full arrival only); kv_empty after the side; after
          END the exit meeting (kBarDs) and the exit posts (one, or two with two writers).
  writer  dq_writer lane 0 (warp 9 and, with p.dual_writer, warp 11): dq_full wait, mailbox read,
          (semaphore wait: other CTAs, left out), bulk reduce of the
          staged tile, completion, s_reduced increment, dq_empty arrive.  --lanes L > 1 models the
          pre-e10b1b6 writer (L lanes wait on dq_full, lane 0 alone arrives, then __syncwarp).
          --early-release: p.writer_early_release (early = kDqBufs == 1 || writer_early_release):
          bulk reduce, wait_group.read (the reduce stops reading the staging buffer: an explicit
          step), dq_empty arrive, (completion, semaphore release: no shared state here) s_reduced
          increment; at the exit the writer waits for completion (no shared state) and leaves.
          --dq-buffers 1: the 80-row Q tile of head_dim 128 (Sm90BwdSmem<128, kBM80>, kDqBufs = 1):
          ONE staging buffer, buffer/mailbox slot/dq_full/dq_empty 0 for every tile; MMA tile use u
          waits dq_empty[0] parity (u & 1) ^ 1 (phase u - 1; the first use falls through), stages,
          writes mailbox slot 0 (thread 0), arrives on dq_full[0]; one writer (warp 9, stride 1)
          waits dq_full[0] parity q & 1 for tile q and always releases early; ONE exit post at
          use = step_use after the exit meeting.  Implies --writers 1 --early-release and the
          head_dim 128 order; --writers 2, --writer overlap, --hdim 64, --lanes > 1,
          --no-exit-barrier and --near-end-per-side are rejected (the kernel never runs them).
          --defect arrive-before-read (the early-release writer arrives on dq_empty before its
          wait_group.read) and --defect no-dq-empty-wait (the MMA threads stage without waiting
          dq_empty; head_dim 128 order) are seeded bugs the self-test must find.  --writer overlap:
          dq_writer_overlap (p.writer_overlap; one writer owing tile q - 1 while it takes tile q:
          the dq_full probe, the semaphore probe taken both ways, atomicExch on s_reduced).
--split-rank: the kSplit variants (shift / symmetric shift; take_rank_part): every staging MMA
          thread adds its part of the dQ rank to s_rank[buf] after its dq_empty wait (with one staging
          buffer, --dq-buffers 1: after its stores, as the 24 / 240 80-row kernel does) and before its
          dq_full arrival; the writer takes s_rank[buf] right after its dq_full wait (it must hold the
          parts of exactly that tile, every staging thread's) and clears it before its dq_empty
          arrival.  --defect rank-add-before-wait: the parts are added before the dq_empty wait
          (seeded bug).  Not modelled with --writer overlap (the kernel has it; same take point).
--dq2: the two-staging-buffer 80-row kernels of head_dim 128 (Sm90BwdSmem<128, kBM80, true>, kDq2;
          full-mask shift's default since the twenty-third session): two dQ buffers and writers as
          the 64-row kernels, Q (+ LSE / D) alone on the qdo ring, dO in ONE stage on do_full /
          do_empty (the loader waits do_empty for phase u - 1 after its Q issue, then loads dO of
          step u), dS in ONE buffer: the MMA threads wait do_full for step u before dP^T (acquire),
          ds_empty for phase u - 1 before the dS store, and after the wait_group that retires dV and
          dQ^T arrive on do_empty (release) and ds_empty, then stage dQ and free the Q stage.
          --dq2-early-dv: kDq2EarlyDv (draft): dV retired and do_empty arrived BEFORE the dS barrier
          (the dQ^T GEMM reads dS after it), ds_empty as above.  --defect dq2-no-ds-wait (the dS store
          without the ds_empty wait) and dq2-early-do-release (do_empty arrived right after the
          do_full wait, before dV reads dO) are seeded bugs the self-test must find.
A TMA load is the loader's arrive_expect_tx (one arrival, the phase does not complete yet) plus a
separate "TMA lands" event at any later point (it completes the phase and makes the data valid).
The G query heads of a GQA group are folded into the steps: a side of n steps here is n * G step
uses in the kernel (the near-end step is computed on n * G there, on n here: the same thing).

mbarriers are modelled exactly: (completed phases, pending arrivals, tx pending); a phase
completes when the pending count reaches 0 with no tx outstanding; try_wait.parity(P) passes iff
(completed & 1) != P.  Named barrier kBarDs: passes when every MMA thread is at a kBarDs (and
they must all be at the same occurrence, or the hardware would pair different call sites).

Checks, over every interleaving (BFS, shortest trace on failure):
  1. no deadlock: a non-final state where nobody can move;
  2. every read sees the value written for it: the task ring slot (task of that iteration), the
     K/V buffer at a side (loaded for that side, landed; no K/V TMA issued while an MMA thread
     still reads the previous side), the Q/dO stage at a step (that step's data, landed; no
     reload while read), the dS^T buffer read by the dQ GEMM (both halves of that step), the
     staged dQ tile and the mailbox slot read by the writer (staged for that tile; no staging
     store while the writer's reduce reads the buffer);
  3. no aliasing: each wait carries the phase index the kernel intends (parity = index & 1); when
     it passes, completed phases must be > that index (and not > index + 1: a skipped phase);
     each arrival carries its intended phase and must land in it (the current phase = that index);
     and no phase completes while no waiter has yet seen the previous phase complete (a phase
     nobody waited on: what synccheck's "Missing wait" on kv_near_end pointed at, 8fb5075);
  4. at the end: every actor finished, no TMA in flight, no barrier left with a partial phase.
Known aliasing (documented in the kernel, task_taker NOTES: "The kv_empty wait keeps that
aliasing for such tasks"): the late-take kv_empty wait with a task of two sides passes while the
first side's phase is pending (it takes the next task early). Reported and tolerated unless
--strict.

Run without arguments (CTest BwdProtocol.NoDeadlockNoStaleData): a matrix of variants that must
pass (two buffers: both head_dims, one or two writers, the overlap writer; one buffer: every
dispatch, one- and two-sided tasks, T = 1 and 2), of known and seeded defects that must be found,
and of --dq-buffers 1 combinations that must be rejected. With arguments: one variant.
"""
import argparse
import sys
import time
from collections import deque

# ---- barriers ------------------------------------------------------------------------------------
BAR_NAMES = ["task_full0", "task_full1", "task_empty0", "task_empty1", "kv_full", "kv_empty", "kv_near_end",
             "qdo_full0", "qdo_full1", "qdo_empty0", "qdo_empty1", "dq_full0", "dq_full1", "dq_empty0", "dq_empty1",
             "do_full", "do_empty", "ds_empty"]
B = {n: i for i, n in enumerate(BAR_NAMES)}
NB = len(BAR_NAMES)
TF, TE, KVF, KVE, NE, QF, QE, DF, DE = (B["task_full0"], B["task_empty0"], B["kv_full"], B["kv_empty"],
                                        B["kv_near_end"], B["qdo_full0"], B["qdo_empty0"], B["dq_full0"],
                                        B["dq_empty0"])
DOF, DOE, DSE = B["do_full"], B["do_empty"], B["ds_empty"]   # --dq2 only
EXIT = -1   # kMetaExit in the mailbox
END = -2    # the task >= num_tasks published after the list
NONE = -9   # no data yet


def parse_tasks(s):
    """'2;1' -> [[2], [1]] (two one-sided tasks); '1,2' -> [[1, 2]] (one task of two sides)."""
    out = []
    for t in s.replace(" ", ";").split(";"):
        if t:
            out.append([int(x) for x in t.split(",")])
    return out


class Model:
    def __init__(self, a):
        self.a = a
        self.T = a.threads
        self.NM = 2 * self.T
        self.W = a.writers
        self.L = a.lanes
        self.tasks = parse_tasks(a.tasks)
        self.late = a.dispatch in ("late", "ahead")
        self.ahead = a.dispatch == "ahead"
        self.drain = a.dispatch == "drain"
        self.U = sum(sum(t) for t in self.tasks)          # dQ tiles staged in total
        self.NBUF = a.dq_buffers                          # dQ staging buffers (L::kDqBufs)
        self.early = a.dq_buffers == 1 or a.early_release  # early = kDqBufs == 1 || p.writer_early_release
        self.counts = [1] * NB
        for n in ("task_empty0", "task_empty1"):
            self.counts[B[n]] = self.NM + 1               # kMmaArrivals + the loader
        for n in ("kv_empty", "qdo_empty0", "qdo_empty1", "dq_full0", "dq_full1", "do_empty", "ds_empty"):
            self.counts[B[n]] = self.NM                   # kMmaArrivals
        self.build()

    # ---- programs (straight-line: the task list is fixed) -----------------------------------------
    def taker_prog(self):
        ops = []
        tiles = sides = ntasks = 0
        for it, task in enumerate(self.tasks + [None]):
            if self.drain and tiles > 0:
                ops.append(("drain", tiles))                                   # s_reduced >= tiles_published
            if self.late and ntasks > 0:
                if self.ahead and self.a.near_end_per_side:                    # before 8fb5075
                    ops.append(("wait", NE, sides - 1, "late_ne", None))       # parity (sides_published-1)&1
                elif self.ahead:
                    ops.append(("wait", NE, ntasks - 1, "late_ne", None))      # parity (tasks_published-1)&1
                else:
                    ops.append(("wait", KVE, sides - 1, "late_kv", None))      # parity (sides_published-1)&1
            ops.append(("wait", TE + (it & 1), (it >> 1) - 1, None, None))      # parity ((it>>1)&1)^1
            ops.append(("publish", it & 1, END if task is None else it))
            ops.append(("arrive", TF + (it & 1), it >> 1, None))
            if task is None:
                break
            tiles += sum(task)
            sides += len(task)
            ntasks += 1
        return ops

    def dq_buf(self, use):
        """L::dq_buf: the staging buffer (and mailbox slot, dq_full / dq_empty) of staged tile `use`."""
        return use & 1 if self.NBUF == 2 else 0

    def dq_k(self, use):
        """The phase index of dq_full[dq_buf(use)] that tile `use` completes (L::dq_phase = its parity);
        the staging waits dq_empty for phase dq_k(use) - 1 (parity dq_phase ^ 1, the first use falls through)."""
        return use >> 1 if self.NBUF == 2 else use

    def read_task(self, ops, it, task):
        ops.append(("wait", TF + (it & 1), it >> 1, None, None))
        ops.append(("read_task", it & 1, END if task is None else it))
        ops.append(("arrive", TE + (it & 1), it >> 1, None))

    def loader_prog(self):
        ops = []
        side_use = step_use = 0
        for it, task in enumerate(self.tasks + [None]):
            self.read_task(ops, it, task)
            if task is None:
                break
            for n in task:
                ops.append(("wait", KVE, side_use - 1, None, None))           # parity (side_use&1)^1
                ops.append(("tma", KVF, side_use, side_use))
                for _ in range(n):
                    u = step_use
                    ops.append(("wait", QE + (u & 1), (u >> 1) - 1, None, None))
                    ops.append(("tma", QF + (u & 1), u >> 1, u))
                    if self.a.dq2:   # load_do: dO of step u into its one stage once dV of u - 1 retired
                        ops.append(("wait", DOE, u - 1, None, None))                # parity (u & 1) ^ 1
                        ops.append(("tma", DOF, u, u))
                    step_use += 1
                side_use += 1
        return ops

    def mma_prog(self, tid):
        a, T = self.a, self.T
        wg = tid // T
        ops = []
        side_use = step_use = bar = 0
        ne_phase = 0    # kv_near_end arrivals so far (one per task; one per side before 8fb5075)
        for it, task in enumerate(self.tasks + [None]):
            self.read_task(ops, it, task)
            if task is None:
                break
            for side, n in enumerate(task):
                ops.append(("wait", KVF, side_use, None, ("kv_acq", side_use)))
                last = side == len(task) - 1 or a.near_end_per_side
                near = -1 if not (self.ahead and last) else (n - a.take_ahead if n > a.take_ahead else 0)
                if near >= 0:
                    ne_phase += 1
                if tid == 0 and near >= 0 and n == 0:
                    ops.append(("arrive", NE, ne_phase - 1, None))
                for l in range(n):
                    u = step_use
                    st = u & 1
                    if tid == 0 and l == near:
                        ops.append(("arrive", NE, ne_phase - 1, None))
                    ops.append(("wait", QF + st, u >> 1, None, ("q_acq", st, u)))
                    if a.dq2:   # the two-buffer kernel's step up to its dQ staging (shared below)
                        ops.append(("wait", DOF, u, None, ("do_acq", u)))         # before dP^T
                        if a.defect == "dq2-early-do-release":
                            ops.append(("arrive", DOE, u, ("do_rel",)))
                        if a.defect != "dq2-no-ds-wait":
                            ops.append(("wait", DSE, u - 1, None, None))         # before the dS store
                        ops.append(("dsw", 0, u))                               # one dS buffer
                        ops.append(("dor", u))                                  # dV reads dO (issued; early dV: before the store)
                        if a.dq2_early_dv and a.defect != "dq2-early-do-release":
                            ops.append(("arrive", DOE, u, ("do_rel",)))          # dV retired before the barrier
                        ops.append(("bar", bar))
                        ops.append(("dsr", 0, u))                               # dQ^T reads dS (both halves), K
                        if not a.dq2_early_dv and a.defect != "dq2-early-do-release":
                            ops.append(("arrive", DOE, u, ("do_rel",)))          # wait_group 1: dV and dQ^T retired
                        ops.append(("arrive", DSE, u, None))
                    else:
                        ops.append(("dsw", st, u))                              # dS^T half -> smem
                        if a.hdim == 128:
                            ops.append(("bar", bar))
                            ops.append(("dsr", st, u))                          # dQ GEMM reads dS (both halves), K
                    if a.hdim == 128:
                        db, dk = self.dq_buf(u), self.dq_k(u)
                        if a.split_rank and a.defect == "rank-add-before-wait":
                            ops.append(("radd", db, u))
                        if a.defect != "no-dq-empty-wait":
                            ops.append(("wait", DE + db, dk - 1, None, None))   # stage_dq
                        if a.split_rank and a.defect != "rank-add-before-wait" and self.NBUF == 2:
                            ops.append(("radd", db, u))                         # after the dq_empty wait
                        ops.append(("stage", db, u, tid == 0))
                        if a.split_rank and a.defect != "rank-add-before-wait" and self.NBUF == 1:
                            ops.append(("radd", db, u))                         # after the stores (late part)
                        ops.append(("arrive", DF + db, dk, None))
                        ops.append(("arrive", QE + st, u >> 1, ("q_rel", st)))
                    else:
                        ops.append(("bar", bar))
                        ops.append(("arrive", QE + st, u >> 1, ("q_rel", st)))
                        if wg == st:
                            ops.append(("dsr", st, u))
                            if a.split_rank and a.defect == "rank-add-before-wait":
                                ops.append(("radd", st, u))
                            ops.append(("wait", DE + st, (u >> 1) - 1, None, None))
                            if a.split_rank and a.defect != "rank-add-before-wait":
                                ops.append(("radd", st, u))
                            ops.append(("stage", st, u, tid == wg * T))
                            ops.append(("arrive", DF + st, u >> 1, None))
                        else:
                            ops.append(("arrive", DF + st, u >> 1, None))
                    bar += 1
                    step_use += 1
                ops.append(("arrive", KVE, side_use, ("kv_rel",)))
                side_use += 1
        if not a.no_exit_barrier:
            ops.append(("bar", bar))
        for use in range(step_use, step_use + (2 if self.W == 2 and a.writer == "default" else 1)):
            db, dk = self.dq_buf(use), self.dq_k(use)
            ops.append(("wait", DE + db, dk - 1, None, None))
            if tid == 0:
                ops.append(("mail", db, EXIT))
            ops.append(("arrive", DF + db, dk, None))
        return ops

    def writer_prog(self, w, lane):
        ops = []
        q = w
        while True:
            buf = self.dq_buf(q)
            assert buf == (q & 1 if self.W == 1 else w) or self.NBUF == 1
            ops.append(("wait", DF + buf, self.dq_k(q), None, None))
            last = q >= self.U
            ops.append(("read_mail", buf, EXIT if last else q))
            if last:
                break   # (early: wait_group 0 for the outstanding adds first; no shared state)
            if lane == 0:
                if self.a.split_rank:   # take_rank_part: every staging thread's part of tile q
                    ops.append(("rtake", buf, q, self.NM if self.a.hdim == 128 else self.T))
                ops.append(("reduce", buf, q, self.portions(buf)))
                if self.early:   # wait_group.read, arrive dq_empty, then completion, (semaphore), s_reduced
                    rd = ("read_done", buf)          # the bulk copy has read the buffer (it may be overwritten)
                    arr = ("arrive", DE + buf, self.dq_k(q), None)
                    ops.extend([arr, rd] if self.a.defect == "arrive-before-read" else [rd, arr])
                    ops.append(("sred",))
                else:
                    ops.append(("sred",))
                    ops.append(("arrive", DE + buf, q >> 1, ("w_rel", buf)))
            if self.L > 1:
                ops.append(("wsync", w, q))
            q += self.W
        return ops

    def build(self):
        self.names = ["taker", "loader"] + [f"mma{t}" for t in range(self.NM)]
        self.progs = [self.taker_prog(), self.loader_prog()] + [self.mma_prog(t) for t in range(self.NM)]
        self.writer_actors = []
        if self.a.writer == "overlap":
            self.names.append("writer(overlap)")
            self.progs.append(None)
        for w in range(self.W if self.a.writer == "default" else 0):
            for l in range(self.L):
                self.writer_actors.append(len(self.progs))
                self.names.append(f"writer{w}" + (f".lane{l}" if self.L > 1 else ""))
                self.progs.append(self.writer_prog(w, l))
        self.mma_actors = list(range(2, 2 + self.NM))
        self.NA = len(self.progs)
        # state layout (one flat tuple)
        o = self.NA
        self.O_BAR = o; o += 3 * NB                      # (done, pending, tx) per barrier
        self.O_TASK = o; o += 2                          # s_task[2]
        self.O_KV = o; o += 3                            # K/V buffer: side, landed, readers mask
        self.O_Q = o; o += 6                             # per stage: step, landed, readers mask
        self.O_DS = o; o += 2 * self.NM                  # dS^T buffers: step per thread's portion
        self.O_STG = o; o += 2 * self.NM                 # dQ staging buffers: tile per thread's portion
        self.O_WR = o; o += 2                            # writer's reduce reads staging buffer b
        self.O_MAIL = o; o += 2                          # mailbox slots
        self.O_SRED = o; o += 1                          # s_reduced
        self.O_RANK = o; o += 4                          # s_rank[2] (split rank): (tile of the parts, parts)
        self.O_OBS = o; o += NB                          # per barrier: the latest phase a waiter saw complete
        self.O_DO = o; o += 3                            # --dq2: the dO stage: step, landed, readers mask
        self.SIZE = o

    def init(self):
        s = [0] * self.SIZE
        for b in range(NB):
            s[self.O_BAR + 3 * b + 1] = self.counts[b]
        for i in range(self.O_TASK, self.SIZE):
            s[i] = NONE
        s[self.O_KV + 1] = s[self.O_KV + 2] = 0
        for st in range(2):
            s[self.O_Q + 3 * st + 1] = s[self.O_Q + 3 * st + 2] = 0
        s[self.O_WR] = s[self.O_WR + 1] = 0
        s[self.O_DO + 1] = s[self.O_DO + 2] = 0
        s[self.O_SRED] = 0
        s[self.O_RANK + 1] = s[self.O_RANK + 3] = 0      # no parts (the kernel zeroes s_rank at the start)
        for b in range(NB):
            s[self.O_OBS + b] = -1
        for x in range(self.NA):
            if self.progs[x] is None:
                s[x] = (0, self.OV_PROBE, 0, 0)
        return tuple(s)

    # ---- transitions ------------------------------------------------------------------------------
    def arrive(self, s, b, k, who, tx=False):
        """Arrival on barrier b intended for phase k. Returns an error string or None."""
        i = self.O_BAR + 3 * b
        done, pend = s[i], s[i + 1]
        if done != k:
            return f"WRONG PHASE: {who} arrives on {BAR_NAMES[b]} for phase {k} but the barrier is in phase {done}"
        if tx:
            s[i + 2] = 1
        pend -= 1
        s[i + 1] = pend
        if pend == 0 and not s[i + 2]:
            return self.complete(s, b)
        return None

    def complete(self, s, b):
        """Phase s[done] of barrier b completes. Its previous phase must have been seen by a waiter."""
        i = self.O_BAR + 3 * b
        done = s[i]
        if done >= 1 and s[self.O_OBS + b] < done - 1:
            return (f"UNWAITED PHASE: {BAR_NAMES[b]} completes phase {done} while no waiter has seen phase "
                    f"{done - 1} complete")
        s[i], s[i + 1] = done + 1, self.counts[b]
        return None

    def wait_pass(self, st, s, b, k, tag, who):
        """mbar_wait(b, k & 1) for intended phase k: (passes now, error, known aliasing)."""
        done = st[self.O_BAR + 3 * b]
        if (done & 1) == (k & 1):          # try_wait.parity(k & 1) is false
            return False, None, 0
        kn = 0
        if done <= k:
            if tag == "late_kv" and not self.a.strict and done == k - 1:
                kn = 1
            else:
                return True, (f"ALIASING: {who} passes its wait on {BAR_NAMES[b]} for phase {k} "
                              f"(parity {k & 1}) with only {done} phase(s) completed"), 0
        elif done > k + 1:
            return True, (f"SKIPPED PHASE: {who} passes its wait on {BAR_NAMES[b]} for phase {k} "
                          f"with {done} phases completed"), 0
        ob = self.O_OBS + b
        if s[ob] < done - 1:
            s[ob] = done - 1
        return True, None, kn

    # dq_writer_overlap (p.writer_overlap, draft): one writer, tiles q = 0, 1, ...; it owes the
    # completion + release of tile q - 1 while it waits for / issues tile q. Actor state
    # (q, stage, owed, ret): finish_owed is FA (s_reduced = q, atomicExch) then FB (dq_empty
    # arrival of tile q - 1), then stage `ret` (NEXT: tile q + 1, owing q).
    OV_PROBE, OV_WAIT, OV_READ, OV_SEM, OV_ISSUE, OV_POST, OV_FA, OV_FB, OV_DONE = range(9)
    OV_NEXT = -1

    def overlap_moves(self, st, x, out):
        q, stage, owed, ret = st[x]
        who = self.names[x]
        buf = q & 1
        s = list(st)
        if stage == self.OV_DONE:
            return None, 0
        if stage == self.OV_PROBE:   # test_wait on dq_full of tile q; not complete -> finish the owed tile first
            done = st[self.O_BAR + 3 * (DF + buf)]
            ready = (done & 1) != ((q >> 1) & 1)
            s[x] = (q, self.OV_FA, 1, self.OV_WAIT) if owed and not ready else (q, self.OV_WAIT, owed, 0)
            out.append((tuple(s), x))
        elif stage == self.OV_WAIT:
            passes, err, kn = self.wait_pass(st, s, DF + buf, q >> 1, None, who)
            if err:
                return err, kn
            if passes:
                s[x] = (q, self.OV_READ, owed, 0)
                out.append((tuple(s), x))
        elif stage == self.OV_READ:
            v = st[self.O_MAIL + buf]
            want = EXIT if q >= self.U else q
            if v != want:
                return f"STALE MAILBOX: {who} reads mailbox slot {buf} = {v}, expected {want}", 0
            if v == EXIT:
                s[x] = (q, self.OV_FA, 1, self.OV_DONE) if owed else (q, self.OV_DONE, 0, 0)
            else:
                s[x] = (q, self.OV_SEM, owed, 0)
            out.append((tuple(s), x))
        elif stage == self.OV_SEM:   # ordered: the semaphore probe may fail (then finish the owed tile) or pass
            s[x] = (q, self.OV_ISSUE, owed, 0)
            out.append((tuple(s), x))
            if owed:
                s2 = list(st)
                s2[x] = (q, self.OV_FA, 1, self.OV_ISSUE)
                out.append((tuple(s2), x))
        elif stage == self.OV_ISSUE:  # the bulk reduce of tile q reads staging buffer q & 1
            vals = [st[self.O_STG + buf * self.NM + p] for p in self.portions(buf)]
            if any(v != q for v in vals):
                return f"STALE dQ: {who} reduces buffer {buf} for tile {q}, staged {vals}", 0
            s[self.O_WR + buf] = 1
            s[x] = (q, self.OV_FA, 1, self.OV_NEXT) if owed else (q + 1, self.OV_PROBE, 1, 0)
            out.append((tuple(s), x))
        elif stage == self.OV_FA:    # wait_group (tile q - 1 complete), release, atomicExch(s_reduced, q)
            s[self.O_SRED] = q
            s[x] = (q, self.OV_FB, 1, ret)
            out.append((tuple(s), x))
        elif stage == self.OV_FB:    # mbarrier_arrive(dq_empty[(q - 1) & 1])
            err = self.arrive(s, DE + ((q - 1) & 1), (q - 1) >> 1, who)
            if err:
                return err, 0
            s[self.O_WR + ((q - 1) & 1)] = 0
            s[x] = (q + 1, self.OV_PROBE, 1, 0) if ret == self.OV_NEXT else (q, ret, 0, 0)
            out.append((tuple(s), x))
        return None, 0

    def portions(self, buf):
        return tuple(range(self.NM)) if self.a.hdim == 128 else tuple(range(buf * self.T, buf * self.T + self.T))

    def moves(self, st):
        """(list of (next state, actor label), error, known aliasing count)."""
        out = []
        known = 0
        progs = self.progs
        at_bar = []
        for x in range(self.NA):
            pc = st[x]
            prog = progs[x]
            if prog is None:
                err, kn = self.overlap_moves(st, x, out)
                if err:
                    return None, err, known
                continue
            if pc >= len(prog):
                continue
            op = prog[pc]
            kind = op[0]
            who = self.names[x]
            if kind == "bar":
                at_bar.append((x, op[1]))
                continue
            if kind == "wsync":
                continue   # handled below with the lanes of the same writer
            s = list(st)
            s[x] = pc + 1
            if kind == "wait":
                _, b, k, tag, act = op
                passes, err, kn = self.wait_pass(st, s, b, k, tag, who)
                known += kn
                if err:
                    return None, err, known
                if not passes:
                    continue
                if act is not None:
                    err = self.acquire(s, x, act, who)
                    if err:
                        return None, err, known
                out.append((tuple(s), x))
            elif kind == "arrive":
                _, b, k, act = op
                err = self.arrive(s, b, k, who)
                if err:
                    return None, err, known
                if act is not None:
                    self.release(s, x, act)
                out.append((tuple(s), x))
            elif kind == "tma":
                _, b, k, what = op
                err = self.arrive(s, b, k, who, tx=True)
                if err:
                    return None, err, known
                if b == KVF:
                    if s[self.O_KV + 2]:
                        return None, (f"K/V OVERWRITE: the loader issues side {what}'s K/V while MMA thread(s) "
                                      f"{self.mask(s[self.O_KV + 2])} still read side {s[self.O_KV]}"), known
                    s[self.O_KV], s[self.O_KV + 1] = what, 0
                elif b == DOF:
                    if s[self.O_DO + 2]:
                        return None, (f"dO OVERWRITE: the loader issues step {what}'s dO while MMA thread(s) "
                                      f"{self.mask(s[self.O_DO + 2])} still read step {s[self.O_DO]}"), known
                    s[self.O_DO], s[self.O_DO + 1] = what, 0
                else:
                    q = self.O_Q + 3 * (b - QF)
                    if s[q + 2]:
                        return None, (f"Q/dO OVERWRITE: the loader issues step {what} into stage {b - QF} while "
                                      f"MMA thread(s) {self.mask(s[q + 2])} still read step {s[q]}"), known
                    s[q], s[q + 1] = what, 0
                out.append((tuple(s), x))
            elif kind in ("publish", "mail"):  # write a task slot / a mailbox slot
                s[(self.O_TASK if kind == "publish" else self.O_MAIL) + op[1]] = op[2]
                out.append((tuple(s), x))
            elif kind in ("read_task", "read_mail"):  # read one, which must hold what the reader expects
                what = "TASK: {} reads task slot" if kind == "read_task" else "MAILBOX: {} reads mailbox slot"
                v = st[(self.O_TASK if kind == "read_task" else self.O_MAIL) + op[1]]
                if v != op[2]:
                    return None, f"STALE {what.format(who)} {op[1]} = {v}, expected {op[2]}", known
                out.append((tuple(s), x))
            elif kind == "drain":
                if st[self.O_SRED] >= op[1]:
                    out.append((tuple(s), x))
            elif kind == "dsw":
                s[self.O_DS + op[1] * self.NM + (x - 2)] = op[2]
                out.append((tuple(s), x))
            elif kind == "dor":   # --dq2: dV reads the dO stage, which must hold this step's dO
                if (st[self.O_DO], st[self.O_DO + 1]) != (op[1], 1):
                    return None, (f"STALE dO: {who}'s dV of step {op[1]} reads the dO stage holding step "
                                  f"{st[self.O_DO]}{'' if st[self.O_DO + 1] else ' (TMA not landed)'}"), known
                out.append((tuple(s), x))
            elif kind == "dsr":
                vals = st[self.O_DS + op[1] * self.NM:self.O_DS + (op[1] + 1) * self.NM]
                if any(v != op[2] for v in vals):
                    return None, f"STALE dS: {who}'s dQ GEMM of step {op[2]} reads dS^T buffer {op[1]} = {vals}", known
                out.append((tuple(s), x))
            elif kind == "stage":
                _, buf, u, meta = op
                if st[self.O_WR + buf]:
                    return None, f"STAGING OVERWRITE: {who} stages tile {u} into buffer {buf} during the writer's reduce", known
                s[self.O_STG + buf * self.NM + (x - 2)] = u
                if meta:
                    s[self.O_MAIL + buf] = u
                out.append((tuple(s), x))
            elif kind == "reduce":
                _, buf, q, portions = op
                vals = [st[self.O_STG + buf * self.NM + p] for p in portions]
                if any(v != q for v in vals):
                    return None, f"STALE dQ: {who} reduces buffer {buf} for tile {q}, staged {vals}", known
                s[self.O_WR + buf] = 1
                out.append((tuple(s), x))
            elif kind == "sred":
                s[self.O_SRED] += 1
                out.append((tuple(s), x))
            elif kind == "radd":     # atomicAdd(&s_rank[buf], part)
                _, buf, u = op
                i = self.O_RANK + 2 * buf
                if st[i + 1] > 0 and st[i] != u:
                    return None, (f"RANK MIX: {who} adds tile {u}'s part to s_rank[{buf}], which holds "
                                  f"{st[i + 1]} part(s) of tile {st[i]}"), known
                s[i] = u
                s[i + 1] = st[i + 1] + 1
                out.append((tuple(s), x))
            elif kind == "rtake":    # take_rank_part: read, clear
                _, buf, q, want = op
                i = self.O_RANK + 2 * buf
                if st[i + 1] != want or (want > 0 and st[i] != q):
                    return None, (f"STALE RANK: {who} takes s_rank[{buf}] for tile {q}: {st[i + 1]} part(s) of tile "
                                  f"{st[i]}, expected {want}"), known
                s[i] = NONE
                s[i + 1] = 0
                out.append((tuple(s), x))
            elif kind == "read_done":   # cp.async.bulk.wait_group.read 0 returned: the reduce no longer reads
                s[self.O_WR + op[1]] = 0
                out.append((tuple(s), x))
            else:
                raise AssertionError(op)
        # named barrier kBarDs: everyone there -> all pass together
        if at_bar and len(at_bar) == self.NM:
            idx = {b for _, b in at_bar}
            if len(idx) > 1:
                return None, f"BARRIER MISMATCH: MMA threads at different kBarDs occurrences {sorted(idx)}", known
            s = list(st)
            for x, _ in at_bar:
                s[x] += 1
            out.append((tuple(s), "bar"))
        # writer lanes' __syncwarp
        if self.L > 1:
            for w in range(self.W):
                lanes = self.writer_actors[w * self.L:(w + 1) * self.L]
                ops = [self.progs[x][st[x]] if st[x] < len(self.progs[x]) else None for x in lanes]
                if ops[0] is not None and ops[0][0] == "wsync" and all(o == ops[0] for o in ops):
                    s = list(st)
                    for x in lanes:
                        s[x] += 1
                    out.append((tuple(s), f"writer{w} syncwarp"))
        # TMA landings
        for b in (KVF, QF, QF + 1) + ((DOF,) if self.a.dq2 else ()):
            i = self.O_BAR + 3 * b
            if st[i + 2]:
                s = list(st)
                s[i + 2] = 0
                if s[i + 1] == 0:
                    err = self.complete(s, b)
                    if err:
                        return None, err, known
                if b == KVF:
                    s[self.O_KV + 1] = 1
                elif b == DOF:
                    s[self.O_DO + 1] = 1
                else:
                    s[self.O_Q + 3 * (b - QF) + 1] = 1
                out.append((tuple(s), f"TMA lands on {BAR_NAMES[b]}"))
        return out, None, known

    def mask(self, m):
        return [f"mma{t}" for t in range(self.NM) if m >> t & 1]

    def acquire(self, s, x, act, who):
        t = x - 2
        if act[0] == "kv_acq":
            if (s[self.O_KV], s[self.O_KV + 1]) != (act[1], 1):
                return (f"STALE K/V: {who} passes kv_full for side {act[1]}; the buffer holds side {s[self.O_KV]}"
                        f"{'' if s[self.O_KV + 1] else ' (TMA not landed)'}")
            s[self.O_KV + 2] |= 1 << t
        elif act[0] == "do_acq":
            if (s[self.O_DO], s[self.O_DO + 1]) != (act[1], 1):
                return (f"STALE dO: {who} passes do_full for step {act[1]}; the stage holds step {s[self.O_DO]}"
                        f"{'' if s[self.O_DO + 1] else ' (TMA not landed)'}")
            s[self.O_DO + 2] |= 1 << t
        else:
            _, stg, u = act
            q = self.O_Q + 3 * stg
            if (s[q], s[q + 1]) != (u, 1):
                return (f"STALE Q/dO: {who} passes qdo_full for step {u}; stage {stg} holds step {s[q]}"
                        f"{'' if s[q + 1] else ' (TMA not landed)'}")
            s[q + 2] |= 1 << t
        return None

    def release(self, s, x, act):
        t = x - 2
        if act[0] == "kv_rel":
            s[self.O_KV + 2] &= ~(1 << t)
        elif act[0] == "do_rel":
            s[self.O_DO + 2] &= ~(1 << t)
        elif act[0] == "q_rel":
            s[self.O_Q + 3 * act[1] + 2] &= ~(1 << t)
        elif act[0] == "w_rel":
            s[self.O_WR + act[1]] = 0

    def final_error(self, st):
        for x in range(self.NA):
            if self.progs[x] is None:
                if st[x][1] != self.OV_DONE:
                    return "not final"
            elif st[x] < len(self.progs[x]):
                return "not final"
        for b in range(NB):
            i = self.O_BAR + 3 * b
            if st[i + 2]:
                return f"TMA in flight on {BAR_NAMES[b]} at exit"
            if st[i + 1] != self.counts[b]:
                return f"DANGLING: {BAR_NAMES[b]} has {self.counts[b] - st[i + 1]} arrival(s) of an incomplete phase at exit"
        return None

    def describe(self, prev, label):
        if isinstance(label, int) and self.progs[label] is None:
            q, stage, owed, ret = prev[label]
            names = ["probe dq_full", "wait dq_full", "read_mail", "sem probe", "issue reduce", "post-issue",
                     "finish: s_reduced", "finish: arrive dq_empty", "done"]
            return f"{self.names[label]}: tile{q} {names[stage]}" + (f" (owes tile{q - 1})" if owed else "")
        if isinstance(label, int):
            op = self.progs[label][prev[label]]
            k = op[0]
            if k in ("wait", "arrive", "tma"):
                txt = f"{k} {BAR_NAMES[op[1]]} ph{op[2]}"
            elif k in ("publish", "read_task"):
                txt = f"{k} slot{op[1]}={'END' if op[2] == END else op[2]}"
            elif k in ("stage",):
                txt = f"stage tile{op[2]} buf{op[1]}" + (" +mail" if op[3] else "")
            elif k == "mail":
                txt = f"mail[{op[1]}]=EXIT"
            elif k == "read_mail":
                txt = f"read_mail[{op[1]}] (want {'EXIT' if op[2] == EXIT else op[2]})"
            elif k == "reduce":
                txt = f"reduce tile{op[2]}"
            elif k == "read_done":
                txt = f"wait_group.read (buf{op[1]} read)"
            else:
                txt = " ".join(str(v) for v in op)
            return f"{self.names[label]}: {txt}"
        if label == "bar":
            return "MMA: kBarDs"
        return label

    def state_summary(self, st):
        pcs = []
        for x in range(self.NA):
            pc = st[x]
            if self.progs[x] is None:
                pcs.append(self.describe(st, x))
            elif pc >= len(self.progs[x]):
                pcs.append(f"{self.names[x]}=done")
            else:
                pcs.append(f"{self.names[x]}@{self.describe(st, x).split(': ', 1)[1]}")
        bars = [f"{BAR_NAMES[b]}=({st[self.O_BAR + 3 * b]},{st[self.O_BAR + 3 * b + 1]}{',tx' if st[self.O_BAR + 3 * b + 2] else ''})"
                for b in range(NB)]
        return "  actors: " + "; ".join(pcs) + "\n  barriers (done, pending): " + " ".join(bars) + \
            f"\n  mailbox {st[self.O_MAIL:self.O_MAIL + 2]} s_reduced {st[self.O_SRED]}"


def variant_name(a):
    d = a.dispatch + (f" {a.take_ahead}" if a.dispatch == "ahead" else "")
    extra = "".join([" no-exit-barrier" if a.no_exit_barrier else "", f" lanes {a.lanes}" if a.lanes > 1 else "",
                     " early-release" if a.early_release else "", " strict" if a.strict else "",
                     " near-end-per-side" if a.near_end_per_side else "",
                     " overlap writer" if a.writer == "overlap" else "",
                     " split rank" if a.split_rank else "",
                     " dq2 early-dV" if a.dq2_early_dv else " dq2" if a.dq2 else "",
                     f" DEFECT {a.defect}" if a.defect else ""])
    bufs = f", {a.dq_buffers} dQ buffer{'s' if a.dq_buffers > 1 else ''}"
    return f"hdim {a.hdim}{bufs}, {a.writers} writer(s), {d}, tasks [{a.tasks}], T={a.threads}{extra}"


def check(argv, max_trace=40):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hdim", type=int, default=128, choices=(64, 128))
    ap.add_argument("--writers", type=int, default=None, choices=(1, 2), help="dQ writers (default 2; 1 with --dq-buffers 1)")
    ap.add_argument("--dq-buffers", type=int, default=2, choices=(1, 2),
                    help="dQ staging buffers (L::kDqBufs): 1 is the 80-row Q tile of head_dim 128 (one writer, "
                         "stride 1, always the early release)")
    ap.add_argument("--threads", type=int, default=1, help="modelled threads per MMA warpgroup (T)")
    ap.add_argument("--tasks", default="2;1", help="steps per side, sides by ',', tasks by ';' (e.g. '2;1', '1,2')")
    ap.add_argument("--dispatch", default="late", choices=("static", "late", "ahead", "drain"),
                    help="static: no wait before taking; late: dynamic take_late (kv_empty wait); ahead: "
                         "take-ahead (kv_near_end wait); drain: dynamic with group width > 1 (s_reduced wait)")
    ap.add_argument("--take-ahead", type=int, default=1)
    ap.add_argument("--writer", default="default", choices=("default", "overlap"),
                    help="dq_writer, or dq_writer_overlap (p.writer_overlap, draft; one writer)")
    ap.add_argument("--lanes", type=int, default=1, help="writer lanes waiting on dq_full (lane 0 works)")
    ap.add_argument("--early-release", action="store_true", help="p.writer_early_release (draft)")
    ap.add_argument("--no-exit-barrier", action="store_true",
                    help="the MMA threads go to the exit posts without meeting first (before 6a30c76)")
    ap.add_argument("--near-end-per-side", action="store_true",
                    help="take-ahead: kv_near_end arrived in every side and the taker counts sides (before 8fb5075)")
    ap.add_argument("--strict", action="store_true", help="the documented late-take kv_empty aliasing is a violation too")
    ap.add_argument("--split-rank", action="store_true",
                    help="the kSplit variants: staging threads add rank parts to s_rank, the writer takes them")
    ap.add_argument("--dq2", action="store_true",
                    help="the two-staging-buffer 80-row kernel (head_dim 128): one dO stage, one dS buffer")
    ap.add_argument("--dq2-early-dv", action="store_true", help="--dq2 with early dV (kDq2EarlyDv, draft)")
    ap.add_argument("--defect", default=None, choices=("arrive-before-read", "no-dq-empty-wait", "rank-add-before-wait",
                                                       "dq2-no-ds-wait", "dq2-early-do-release"),
                    help="a seeded bug that must be found (self-test): the early-release writer arrives on "
                         "dq_empty before its wait_group.read, or the MMA threads (head_dim 128 order) stage "
                         "without waiting dq_empty")
    a = ap.parse_args(argv)
    if a.dq2_early_dv:
        a.dq2 = True
    if a.dq2:
        # Sm90BwdSmem<128, kBM80, true>: two buffers and writers (or DASH_BWD_DUAL_WRITER=0: one), the
        # head_dim 128 order; never the overlap writer (64-row tiles only) nor the pre-e10b1b6 lanes.
        bad = [f for f, on in (("--dq-buffers 1", a.dq_buffers == 1), ("--writer overlap", a.writer == "overlap"),
                               ("--hdim 64", a.hdim == 64), ("--lanes > 1", a.lanes > 1),
                               ("--no-exit-barrier", a.no_exit_barrier),
                               ("--near-end-per-side", a.near_end_per_side)) if on]
        if bad:
            ap.error(f"--dq2 (the 80-row two-buffer tile, head_dim 128) never runs with {', '.join(bad)}")
    if a.defect in ("dq2-no-ds-wait", "dq2-early-do-release") and not a.dq2:
        ap.error(f"--defect {a.defect} needs --dq2")
    if a.dq_buffers == 1:
        # Sm90BwdSmem<128, kBM80>: one writer (warp 9, stride 1), early release, the head_dim 128 order.
        bad = [f for f, on in (("--writers 2", a.writers == 2), ("--writer overlap", a.writer == "overlap"),
                               ("--hdim 64", a.hdim == 64), ("--lanes > 1", a.lanes > 1),
                               ("--no-exit-barrier", a.no_exit_barrier),
                               ("--near-end-per-side", a.near_end_per_side)) if on]
        if bad:
            ap.error(f"--dq-buffers 1 (the 80-row tile, head_dim 128) never runs with {', '.join(bad)}")
        a.writers, a.early_release = 1, True
    if a.writers is None:
        a.writers = 2
    if a.writer == "overlap":
        a.writers, a.lanes = 1, 1
    if a.defect == "arrive-before-read" and not (a.early_release and a.writer == "default"):
        ap.error("--defect arrive-before-read needs the early release (--dq-buffers 1 or --early-release)")
    if a.split_rank and a.writer == "overlap":
        ap.error("--split-rank is not modelled with --writer overlap")
    if a.defect == "rank-add-before-wait" and not a.split_rank:
        ap.error("--defect rank-add-before-wait needs --split-rank")
    if a.defect == "no-dq-empty-wait" and a.hdim != 128:
        ap.error("--defect no-dq-empty-wait is modelled in the head_dim 128 order only")
    m = Model(a)
    t0 = time.time()
    start = m.init()
    seen = {start: None}
    queue = deque([start])
    known = 0
    err = None
    bad = None
    while queue:
        s = queue.popleft()
        out, e, k = m.moves(s)
        known += k
        if e:
            err, bad = e, s
            break
        if not out:
            fe = m.final_error(s)
            if fe is None:
                continue
            err = ("DEADLOCK: no actor can move" if fe == "not final" else fe)
            bad = s
            break
        for ns, lab in out:
            if ns not in seen:
                seen[ns] = (s, lab)
                queue.append(ns)
    dt = time.time() - t0
    name = variant_name(a)
    if err:
        print(f"VIOLATION ({name}; {len(seen)} states, {dt:.1f}s): {err}")
        trace = []
        s = bad
        while seen[s] is not None:
            prev, lab = seen[s]
            trace.append(m.describe(prev, lab))
            s = prev
        trace.reverse()
        shown = trace[-max_trace:]
        print(f"  trace ({len(trace)} moves{', last ' + str(len(shown)) if len(shown) < len(trace) else ''}): "
              + " | ".join(shown))
        print(m.state_summary(bad))
        return 1, len(seen), dt
    note = f"; known late-take kv_empty aliasing passed {known} time(s) (tolerated)" if known else ""
    print(f"OK ({name}): {len(seen)} states, {dt:.1f}s, no deadlock, no stale data, no aliasing{note}")
    return 0, len(seen), dt


def selftest():
    ok = True
    t0 = time.time()
    must_pass = [
        [],                                                                   # hdim 128, 2 writers, late, [2;1]
        ["--hdim", "64"],
        ["--writers", "1"],
        ["--hdim", "64", "--writers", "1"],
        ["--dispatch", "static"],
        ["--dispatch", "static", "--hdim", "64"],
        ["--dispatch", "static", "--hdim", "64", "--tasks", "3"],
        ["--dispatch", "ahead", "--take-ahead", "1"],
        ["--dispatch", "ahead", "--take-ahead", "5", "--hdim", "64"],
        ["--dispatch", "ahead", "--take-ahead", "1", "--tasks", "0;2"],       # a task of no steps
        ["--dispatch", "ahead", "--take-ahead", "1", "--hdim", "64", "--tasks", "2;1;2"],  # the default since 9dd59e9
        ["--dispatch", "drain"],
        ["--dispatch", "drain", "--hdim", "64", "--writers", "1"],
        ["--tasks", "1,2", "--hdim", "64"],                                   # two sides (symmetric shift): known aliasing
        ["--tasks", "1,2", "--dispatch", "ahead", "--take-ahead", "1"],
        ["--tasks", "1,2", "--dispatch", "static", "--hdim", "64"],
        ["--tasks", "1,1", "--dispatch", "drain"],
        ["--early-release", "--hdim", "64"],
        ["--threads", "2", "--tasks", "2", "--hdim", "64"],
        ["--threads", "2", "--tasks", "1;1", "--dispatch", "ahead"],
        ["--threads", "2", "--tasks", "1,1", "--hdim", "64"],
        ["--writer", "overlap", "--dispatch", "drain"],
        ["--writer", "overlap", "--hdim", "64", "--tasks", "1,2;1", "--dispatch", "ahead"],
        # one dQ staging buffer (the 80-row Q tile, head_dim 128): one writer, early release
        ["--dq-buffers", "1"],
        ["--dq-buffers", "1", "--dispatch", "static", "--tasks", "3"],
        ["--dq-buffers", "1", "--dispatch", "ahead", "--take-ahead", "1", "--tasks", "2;1;2"],
        ["--dq-buffers", "1", "--dispatch", "ahead", "--take-ahead", "1", "--tasks", "0;2"],
        ["--dq-buffers", "1", "--dispatch", "ahead", "--take-ahead", "5"],
        ["--dq-buffers", "1", "--dispatch", "drain"],
        ["--dq-buffers", "1", "--tasks", "1,2"],                               # known aliasing (tolerated)
        ["--dq-buffers", "1", "--tasks", "1,2", "--dispatch", "ahead", "--take-ahead", "1"],
        ["--dq-buffers", "1", "--tasks", "1,1", "--dispatch", "drain"],
        ["--dq-buffers", "1", "--threads", "2", "--tasks", "2"],
        ["--dq-buffers", "1", "--threads", "2", "--tasks", "1;1", "--dispatch", "ahead"],
        ["--dq-buffers", "1", "--threads", "2", "--tasks", "1,1"],
        # the split rank (kSplit): the parts of each tile, complete, in its staging buffer's slot
        ["--split-rank"],
        ["--split-rank", "--hdim", "64"],
        ["--split-rank", "--writers", "1", "--dispatch", "static", "--tasks", "3"],
        ["--split-rank", "--threads", "2", "--tasks", "2"],
        ["--split-rank", "--threads", "2", "--tasks", "2", "--hdim", "64"],
        ["--split-rank", "--tasks", "1,2", "--dispatch", "drain"],              # symmetric shift: grouped
        ["--split-rank", "--early-release", "--dispatch", "static", "--tasks", "3"],
        ["--split-rank", "--dq-buffers", "1", "--tasks", "3", "--dispatch", "static"],
        ["--split-rank", "--dq-buffers", "1", "--threads", "2", "--tasks", "2"],
        ["--split-rank", "--dq-buffers", "1", "--tasks", "1,2", "--dispatch", "drain"],
        # two staging buffers at 80 rows (one dO stage, one dS buffer; full-mask shift's default)
        ["--dq2"],
        ["--dq2", "--writers", "1"],
        ["--dq2", "--dispatch", "static", "--tasks", "3"],
        ["--dq2", "--dispatch", "ahead", "--take-ahead", "1", "--tasks", "2;1;2"],
        ["--dq2", "--dispatch", "ahead", "--take-ahead", "1", "--tasks", "0;2"],
        ["--dq2", "--dispatch", "drain"],
        ["--dq2", "--tasks", "1,2"],                                           # known aliasing (tolerated)
        ["--dq2", "--threads", "2", "--tasks", "2"],
        ["--dq2", "--split-rank", "--dispatch", "static", "--tasks", "3"],
        ["--dq2-early-dv"],
        ["--dq2-early-dv", "--dispatch", "static", "--tasks", "3"],
        ["--dq2-early-dv", "--dispatch", "ahead", "--take-ahead", "1", "--tasks", "2;1;2"],
        ["--dq2-early-dv", "--threads", "2", "--tasks", "2"],
    ]
    must_fail = [
        # (a) the exit posts without the MMA threads' meeting (head_dim 64, two writers)
        ["--no-exit-barrier", "--hdim", "64", "--dispatch", "static", "--tasks", "3"],
        # (b) the pre-e10b1b6 writer: 2 lanes wait on dq_full, lane 0 alone arrives, then __syncwarp
        ["--lanes", "2", "--dispatch", "static", "--tasks", "3"],
        ["--lanes", "2", "--hdim", "64", "--dispatch", "static", "--tasks", "3"],
        # the documented late-take aliasing (two-sided task) is detected when not tolerated
        ["--tasks", "1,2", "--strict"],
        # take-ahead with kv_near_end counted per side (before 8fb5075): a two-sided task
        ["--tasks", "1,2", "--dispatch", "ahead", "--take-ahead", "1", "--near-end-per-side"],
        # seeded defects of the early release / one staging buffer: the writer arrives on dq_empty
        # before its wait_group.read (the MMA threads overwrite the buffer the bulk copy reads), or
        # the MMA threads stage without waiting dq_empty
        ["--dq-buffers", "1", "--defect", "arrive-before-read"],
        ["--dq-buffers", "1", "--defect", "arrive-before-read", "--dispatch", "ahead", "--take-ahead", "1",
         "--tasks", "2;1;2"],
        ["--dq-buffers", "1", "--defect", "no-dq-empty-wait"],
        ["--early-release", "--defect", "arrive-before-read", "--dispatch", "static", "--tasks", "3"],
        # the split rank's parts added before the dq_empty wait: they land in the previous tile's
        # slot while the writer has not taken it
        ["--split-rank", "--defect", "rank-add-before-wait", "--dispatch", "static", "--tasks", "3"],
        ["--split-rank", "--defect", "rank-add-before-wait", "--dq-buffers", "1", "--dispatch", "static",
         "--tasks", "3"],
        ["--split-rank", "--defect", "rank-add-before-wait", "--hdim", "64", "--dispatch", "static", "--tasks", "3"],
        # the two-buffer kernel: dO released before dV has read it; with early dV (dO released before
        # the dS barrier) the dS store without its ds_empty wait overwrites what the other warpgroup's
        # dQ^T GEMM still reads
        ["--dq2", "--defect", "dq2-early-do-release", "--dispatch", "static", "--tasks", "3"],
        ["--dq2-early-dv", "--defect", "dq2-no-ds-wait", "--dispatch", "static", "--tasks", "3"],
    ]
    must_reject = [   # combinations the kernel never runs
        ["--dq-buffers", "1", "--writers", "2"],
        ["--dq-buffers", "1", "--writer", "overlap"],
        ["--dq-buffers", "1", "--hdim", "64"],
        ["--dq-buffers", "1", "--lanes", "2"],
        ["--split-rank", "--writer", "overlap"],
        ["--dq2", "--dq-buffers", "1"],
        ["--dq2", "--hdim", "64"],
        ["--defect", "dq2-no-ds-wait"],
    ]
    total = 0
    for args in must_pass:
        r, n, dt = check(args)
        total += n
        print(f"  expected pass: {' '.join(args) or '(default)'} -> {'pass' if r == 0 else 'FAIL'}")
        ok &= r == 0
    for args in must_fail:
        r, n, dt = check(args)
        total += n
        print(f"  expected a violation: {' '.join(args)} -> {'found' if r != 0 else 'NOT FOUND'}")
        ok &= r != 0
    for args in must_reject:
        try:
            check(args)
            rejected = False
        except SystemExit as e:
            rejected = e.code == 2
        print(f"  expected a usage error: {' '.join(args)} -> {'rejected' if rejected else 'NOT REJECTED'}")
        ok &= rejected
    print(f"bwd protocol check: {'OK' if ok else 'FAILED'} ({total} states in all, {time.time() - t0:.1f}s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(selftest() if len(sys.argv) == 1 else check(sys.argv[1:])[0])
