#!/usr/bin/env python3
# Exhaustive interleaving check of the lagged-dQ protocol of the sm90 backward draft
# (attn_bwd_sm90.cu, kLag; docs/bwd-sm90.md "Lagged-dQ draft") for its two MMA warpgroups:
# no deadlock and no missed mbarrier phase, for several side/step patterns. A model of the
# kernel's ds_full / ds_empty operations only (the other barriers are the tested protocol), plus
# the dS^T buffer data hazard: no store into a buffer before both warpgroups' dQ GEMMs finished
# reading its previous use.
# Each WG runs, over sides with step counts `sides`, the kernel's sequence of barrier ops:
#   step (global index u): wait ds_empty[u%2] parity ((u>>1)&1)^1; arrive ds_full[u%2];
#                          if prev: wait ds_full[p%2] parity (p>>1)&1; arrive ds_empty[p%2]; prev = u
#   side end: if prev: wait ds_full[p%2] parity (p>>1)&1; arrive ds_empty[p%2]; prev = none
# mbarrier model: count 2 (one arrival per WG stands for its 128 threads), `done` = completed
# phases; wait(parity q) passes iff the phase with parity q is complete: (done & 1) != q ... as
# PTX: current phase index = done; try_wait.parity(q) is true iff q != (done & 1).
# Also asserts the ring invariant: a waiter never sees the barrier two phases past the phase it
# waits for (that would be a missed phase).
import sys

def program(sides):
    ops = []; u = 0
    for n in sides:
        prev = None
        for _ in range(n):
            ops.append(('wait', 'ds_empty', u % 2, u >> 1, True))   # waits completion of use (u>>1)-1
            ops.append(('store', u % 2, u >> 1))   # dS^T of use u >> 1 into buffer u % 2
            ops.append(('arrive', 'ds_full', u % 2))
            if prev is not None:
                ops.append(('wait', 'ds_full', prev % 2, prev >> 1, False))
                ops.append(('arrive', 'ds_empty', prev % 2))
            prev = u; u += 1
        if prev is not None:
            ops.append(('wait', 'ds_full', prev % 2, prev >> 1, False))
            ops.append(('arrive', 'ds_empty', prev % 2))
    return ops

def check(sides):
    prog = program(sides)
    names = [('ds_full', 0), ('ds_full', 1), ('ds_empty', 0), ('ds_empty', 1)]
    idx = {n: i for i, n in enumerate(names)}
    # pcA, pcB, done phases, arrivals in the current phase, dQ reads completed per (WG, buffer)
    start = (0, 0, (0,) * 4, (0,) * 4, (0,) * 4)
    seen = set(); stack = [start]
    while stack:
        st = stack.pop()
        if st in seen: continue
        seen.add(st)
        pcs, done, arr, reads = [st[0], st[1]], st[2], st[3], st[4]
        if pcs[0] == len(prog) and pcs[1] == len(prog): continue
        moved = False
        for w in (0, 1):
            if pcs[w] == len(prog): continue
            op = prog[pcs[w]]
            if op[0] == 'store':
                # data hazard check: both WGs must have finished their dQ GEMMs (reads) of every
                # earlier use of this buffer before anyone overwrites it
                buf, use = op[1], op[2]
                for r in (0, 1):
                    assert reads[2 * r + buf] >= use, f"WAR hazard: store of use {use} into buffer {buf} while WG {r} read {reads[2 * r + buf]} uses"
                npcs = pcs[:]; npcs[w] += 1
                stack.append((npcs[0], npcs[1], done, arr, reads)); moved = True
                continue
            b = idx[(op[1], op[2])]
            if op[0] == 'wait':
                use, is_empty = op[3], op[4]
                # the phase waited for: ds_full use u -> phase u; ds_empty before use u -> phase u-1
                phase = use - 1 if is_empty else use
                if phase < 0: ok = True
                else:
                    ok = done[b] > phase
                    assert done[b] <= phase + 1, f"missed phase: {op} done={done[b]}"
                if not ok: continue
                npcs = pcs[:]; npcs[w] += 1
                stack.append((npcs[0], npcs[1], done, arr, reads)); moved = True
            else:
                d = list(done); a = list(arr); rd = list(reads)
                a[b] += 1
                if a[b] == 2: a[b] = 0; d[b] += 1
                if op[1] == 'ds_empty': rd[2 * w + op[2]] += 1  # this WG's dQ read of that buffer ended
                npcs = pcs[:]; npcs[w] += 1
                stack.append((npcs[0], npcs[1], tuple(d), tuple(a), tuple(rd))); moved = True
        if not moved:
            return f"DEADLOCK at pcs {pcs} ops {[prog[p] if p < len(prog) else 'end' for p in pcs]} done {done} arr {arr}"
    return f"ok ({len(seen)} states)"

bad = 0
for sides in ([1], [2], [3], [4], [1, 1], [2, 1], [1, 3], [3, 2], [2, 2, 2], [5, 1, 4]):
    r = check(sides)
    print(sides, r)
    bad += not r.startswith("ok")
sys.exit(1 if bad else 0)
