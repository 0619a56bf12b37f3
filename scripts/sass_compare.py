#!/usr/bin/env python3
"""Per-kernel SASS comparison of two object files (cuobjdump on PATH: scripts/get-cuobjdump.sh).

    sass_compare.py A.o B.o [--map REGEX=REPLACEMENT ...] [--diff N]

Prints, per kernel, whether its instructions are identical in A and B (addresses and encodings
dropped), kernels present in one object only, and a summary. Names are normalised: the
anonymous-namespace tag of the file (which changes with the file name and contents) is removed,
and each --map regex is applied to B's names (e.g. when B's kernels gained a defaulted template
argument: --map 'ELb0EEEv14=EEEv14'). --diff N prints the first N differing instructions of each
kernel that differs.

For refactors that must not change the generated code ("byte-identical SASS"): the fourteenth
session compared the sm90 backward object before and after the 24-register producer split with
  sass_compare.py base.o build/CMakeFiles/dash_attn.dir/src/kernels/attn_bwd_sm90.cu.o \\
      --map '(Li(?:64|80))ELb0EEEv14=\\1EEEv14'
"""
import argparse
import difflib
import re
import subprocess
import sys

ANON = re.compile(r"\d+_GLOBAL__N__[0-9a-f]+_\d+_\w+?_cu_[0-9a-f]{8}")
INSN = re.compile(r"/\*[0-9a-f]{4,6}\*/\s+(.*?)\s*;")


def kernels(obj, maps):
    out = subprocess.run(["cuobjdump", "-sass", obj], capture_output=True, text=True, check=True).stdout
    funcs, name = {}, None
    for line in out.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            name = ANON.sub("ANON", m.group(1))
            for pat, rep in maps:
                name = re.sub(pat, rep, name)
            funcs[name] = []
            continue
        m = INSN.search(line)
        if m and name is not None:
            funcs[name].append(m.group(1))
    return funcs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--map", action="append", default=[], help="REGEX=REPLACEMENT applied to B's kernel names")
    ap.add_argument("--diff", type=int, default=0)
    args = ap.parse_args()
    maps = [tuple(m.split("=", 1)) for m in args.map]
    a, b = kernels(args.a, []), kernels(args.b, maps)
    same = differ = 0
    for k in sorted(a):
        if k not in b:
            print(f"only in A: {k}")
        elif a[k] == b[k]:
            same += 1
        else:
            differ += 1
            print(f"DIFFERS ({len(a[k])} / {len(b[k])} instructions): {k}")
            if args.diff:
                d = [l for l in difflib.unified_diff(a[k], b[k], lineterm="", n=0) if l[:1] in "+-" and l[:3] not in ("+++", "---")]
                print("\n".join("    " + l for l in d[: args.diff]))
    for k in sorted(b):
        if k not in a:
            print(f"only in B: {k}")
    print(f"sass: {same} kernels identical, {differ} differ, {len(set(a) - set(b))} only in A, {len(set(b) - set(a))} only in B")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
