#!/usr/bin/env python3
"""Explicit-state model check of the sm90 backward's dQ staging protocol (one CTA).

Explores every interleaving of the MMA threads (2 warpgroups x T threads each) and the dQ
writer(s) over one task of U steps followed by the exit posts, with mbarrier parity semantics
modelled exactly: a barrier completes a phase when its pending count reaches zero, and
try_wait.parity(P) passes iff the current (incomplete) phase's parity differs from P.
Checks: no deadlock (some actor can always move until all are done) and every writer reads the
mailbox value staged for the tile it expects (a stale or overwritten slot would mean a wait
passed on the wrong phase). The writers' semaphore waits are left out: they depend on other
CTAs and, in any interleaving, eventually pass.

Run without arguments (CTest `DqProtocol.*`): the kernel's protocol in every variant must pass,
and the two defects fixed on 2026-11-30 must be found (writer lanes waiting with lane 0 alone
arriving; head_dim 64 exit posts without the MMA threads' meeting), so the checker is known to
catch them. With arguments: one variant.

Variants: --hdim 64 (warpgroup step % 2 stages the tile, the other only arrives) or 128 (both
stage), --writers 1 or 2, --lanes L (writer warp lanes that wait on dq_full; the pre-e10b1b6
writer had 32 with one arriving; L > 1 models that: lanes leave the wait separately).
"""
import argparse
import sys
from collections import deque


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--hdim", type=int, default=64, choices=(64, 128))
    ap.add_argument("--writers", type=int, default=2, choices=(1, 2))
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2, help="threads per MMA warpgroup")
    ap.add_argument("--lanes", type=int, default=1, help="writer lanes waiting on dq_full (lane 0 works)")
    ap.add_argument("--no-exit-barrier", action="store_true",
                    help="the MMA threads go to the exit posts without meeting first (before 2026-11-30's fix)")
    a = ap.parse_args(argv)
    U, T, W, L = a.steps, a.threads, a.writers, a.lanes
    NM = 2 * T                      # MMA threads; dq_full counts every one
    EXIT = -1

    # MMA thread program as a list of ops, per thread (wg = tid // T).
    def mma_prog(tid):
        wg = tid // T
        ops = []
        for u in range(U):
            ops.append(("bar", u))                      # named barrier kBarDs of step u (all MMA threads)
            buf = u & 1
            stager = a.hdim == 128 or wg == buf
            if stager:
                ops.append(("wait", "dq_empty", buf, ((u >> 1) & 1) ^ 1))
                if tid == (0 if a.hdim == 128 else wg * T):
                    ops.append(("mail", buf, u))
                ops.append(("arrive", "dq_full", buf))
            else:
                ops.append(("arrive", "dq_full", buf))
        if not a.no_exit_barrier:
            ops.append(("bar", U))                      # every MMA thread has staged / arrived its last tile
        for use in range(U, U + (2 if W == 2 else 1)):
            buf = use & 1
            ops.append(("wait", "dq_empty", buf, ((use >> 1) & 1) ^ 1))
            if tid == 0:
                ops.append(("mail", buf, EXIT))
            ops.append(("arrive", "dq_full", buf))
        return ops

    # Writer w, lane l: for q = w, w + W, ...: all lanes wait dq_full[q & 1]; lane 0 reads the
    # mailbox; exit -> done; else lane 0 arrives dq_empty; then a warp sync (lanes > 1).
    progs = [mma_prog(t) for t in range(NM)]
    n_mma = NM
    # actor state: MMA: pc. writer lane: (q index k, phase within iteration)
    # barrier state: (completed_phases, pending)
    counts = {"dq_full": NM, "dq_empty": 1}

    def init():
        bars = tuple((0, counts[n]) for n in ("dq_full", "dq_full", "dq_empty", "dq_empty"))
        mma = tuple(0 for _ in range(NM))
        wr = tuple((0, 0) for _ in range(W * L))      # (k, stage): stage 0 wait, 1 read/work, 2 sync, 3 done
        mail = (None, None)
        barc = 0                                       # named barrier arrivals of the current step
        return (mma, wr, bars, mail, barc, 0)

    def bidx(name, buf):
        return (0 if name == "dq_full" else 2) + buf

    def arrive(bars, name, buf):
        i = bidx(name, buf)
        done, pend = bars[i]
        pend -= 1
        if pend == 0:
            done, pend = done + 1, counts[name]
        b = list(bars)
        b[i] = (done, pend)
        return tuple(b)

    def passes(bars, name, buf, parity):
        done, _ = bars[bidx(name, buf)]
        return (done & 1) != parity

    def q_of(w, k):
        return w + k * W

    def moves(s):
        mma, wr, bars, mail, barc, bar_step = s
        out = []
        for t in range(NM):
            pc = mma[t]
            if pc >= len(progs[t]):
                continue
            op = progs[t][pc]
            nm = list(mma)
            if op[0] == "bar":
                # modelled as: arrive (pc advances to a "blocked" marker) then all pass together
                # simplest: a thread may pass only when every MMA thread is at this same barrier.
                if all(mma[x] < len(progs[x]) and progs[x][mma[x]] == op for x in range(NM)):
                    nm2 = [mma[x] + 1 for x in range(NM)]
                    out.append(((tuple(nm2), wr, bars, mail, barc, bar_step), f"bar {op[1]}"))
                continue
            if op[0] == "wait":
                if passes(bars, op[1], op[2], op[3]):
                    nm[t] += 1
                    out.append(((tuple(nm), wr, bars, mail, barc, bar_step), f"mma{t} wait ok"))
                continue
            if op[0] == "mail":
                m = list(mail)
                m[op[1]] = op[2]
                nm[t] += 1
                out.append(((tuple(nm), wr, bars, tuple(m), barc, bar_step), f"mma{t} mail"))
                continue
            if op[0] == "arrive":
                nm[t] += 1
                out.append(((tuple(nm), wr, arrive(bars, op[1], op[2]), mail, barc, bar_step), f"mma{t} arrive"))
        for w in range(W):
            lanes = [wr[w * L + l] for l in range(L)]
            for l in range(L):
                k, st = lanes[l]
                if st == 3:
                    continue
                q = q_of(w, k)
                buf = q & 1 if W == 1 else w
                idx = w * L + l
                nw = list(wr)
                if st == 0:
                    if passes(bars, "dq_full", buf, (q >> 1) & 1):
                        # read the mailbox (every lane reads task) and check it
                        val = mail[buf]
                        exp = q if q < U else EXIT
                        if val != exp:
                            return None, f"writer {w} lane {l} read mailbox {val} for tile {q} (expected {exp})"
                        nw[idx] = (k, 3 if val == EXIT else (1 if l == 0 else 2))
                        out.append(((mma, tuple(nw), bars, mail, barc, bar_step), f"w{w}l{l} pass q{q}"))
                elif st == 1:  # lane 0: the reduce, then dq_empty
                    nw[idx] = (k, 2)
                    out.append(((mma, tuple(nw), arrive(bars, "dq_empty", buf), mail, barc, bar_step), f"w{w} release q{q}"))
                elif st == 2:  # warp sync: all lanes of this writer at stage 2 with the same k
                    if all(x == (k, 2) for x in lanes):
                        for l2 in range(L):
                            nw[w * L + l2] = (k + 1, 0)
                        out.append(((mma, tuple(nw), bars, mail, barc, bar_step), f"w{w} sync"))
        return out, None

    def done(s):
        mma, wr, *_ = s
        return all(mma[t] >= len(progs[t]) for t in range(NM)) and all(x[1] == 3 for x in wr)

    start = init()
    seen = {start: None}
    dq = deque([start])
    while dq:
        s = dq.popleft()
        out, err = moves(s)
        if err:
            print(f"VIOLATION: {err}")
            return report(seen, s)
        if not out:
            if done(s):
                continue
            print(f"DEADLOCK: mma pcs {s[0]} (of {[len(p) for p in progs]}), writers {s[1]}, barriers {s[2]}, mail {s[3]}")
            return report(seen, s)
        for ns, lab in out:
            if ns not in seen:
                seen[ns] = (s, lab)
                dq.append(ns)
    print(f"OK: hdim {a.hdim}, {W} writer(s), {L} lane(s) waiting, {U} steps, {T} threads/WG: "
          f"{len(seen)} states, no deadlock, every mailbox read as staged")
    return 0


def report(seen, s):
    trace = []
    while seen[s] is not None:
        s, lab = seen[s]
        trace.append(lab)
    print("trace (last 30 of", len(trace), "):", " | ".join(reversed(trace[:30])))
    return 1


def selftest():
    ok = True
    must_pass = [[], ["--writers", "1"], ["--hdim", "128"], ["--hdim", "128", "--writers", "1"],
                 ["--steps", "7", "--threads", "2"], ["--steps", "3", "--threads", "3"],
                 ["--hdim", "128", "--steps", "5", "--threads", "2"], ["--writers", "1", "--steps", "6", "--threads", "2"]]
    must_fail = [["--no-exit-barrier"], ["--lanes", "2"], ["--hdim", "128", "--lanes", "2"]]
    for args in must_pass:
        r = main(args)
        print(f"  expected pass: {' '.join(args) or '(default)'} -> {'pass' if r == 0 else 'FAIL'}")
        ok &= r == 0
    for args in must_fail:
        r = main(args)
        print(f"  expected a violation: {' '.join(args)} -> {'found' if r != 0 else 'NOT FOUND'}")
        ok &= r != 0
    print("dq protocol check:", "OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(selftest() if len(sys.argv) == 1 else main())
