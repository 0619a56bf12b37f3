#!/usr/bin/env bash
# HGMMA summary of the Hopper kernels from an object file or binary (no GPU needed), and a check
# that each instantiation's wgmma element type matches its template argument: a __half kernel
# with an HGMMA...BF16 (or a bf16 kernel without the .BF16 suffix) fails; so does local memory,
# and so do serialized wgmma: more than one `WARPGROUP.DEPBAR` per 3 HGMMA (the kernels have 4-5
# per 24-40 HGMMA; ptxas's serialization puts one after every HGMMA: docs/perf.md v10). ptxas prints f16 HGMMA
# without a type suffix (HGMMA.64x64x16.F32) and bf16 ones as HGMMA.64x64x16.F32.BF16.
#   scripts/check_sass.sh build/CMakeFiles/dash_attn.dir/src/kernels/attn_bwd_sm90.cu.o [...]
# CUOBJDUMP=path/to/cuobjdump (default: cuobjdump on PATH; it needs nvdisasm on PATH too; without
# a CUDA toolkit that has them, `PATH="$(bash scripts/get-cuobjdump.sh):$PATH"`).
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: check_sass.sh OBJECT..." >&2; exit 2; }
CUOBJDUMP=${CUOBJDUMP:-cuobjdump}
for obj in "$@"; do
  "$CUOBJDUMP" -sass "$obj" || { echo "check_sass: $CUOBJDUMP -sass $obj failed" >&2; exit 2; }
done | python3 -c '
import collections, re, subprocess, sys
funcs, cur = {}, None
for line in sys.stdin:
    m = re.search(r"Function : (\S+)", line)
    if m:
        cur = m.group(1); funcs[cur] = []; continue
    if cur is not None and ";" in line:
        funcs[cur].append(re.sub(r"/\*[0-9a-f]{4,}\*/", "", line).split(";")[0].strip())
bad = []
for mangled, body in funcs.items():
    c = collections.Counter()
    for ins in body:
        m = re.match(r"(?:@!?U?P\w+\s+)?(HGMMA\S*)\s+(.*)", ins)
        if not m:
            continue
        ops = m.group(2)
        form = "RS" if re.match(r"R\d+, R\d+, gdesc", ops) else "SS"
        c[" ".join([m.group(1), form] + re.findall(r"tnsp[AB]", ops))] += 1
    if not c:
        continue
    try:
        name = subprocess.run(["c++filt"], input=mangled, capture_output=True, text=True).stdout.strip() or mangled
    except OSError:
        name = mangled
    name = re.sub(r"dash::kernels::\(anonymous namespace\)::", "", name).split("(")[0]
    stl = sum(1 for ins in body if re.search(r"\b(STL|LDL)\b", ins))
    depbar = sum(1 for ins in body if "WARPGROUP.DEPBAR" in ins)
    print(f"{name}: {sum(c.values())} HGMMA, {depbar} WARPGROUP.DEPBAR, STL/LDL {stl}")
    for k, n in sorted(c.items()):
        print(f"  {n:3d} x {k}")
    half = "<__half" in name
    for k in c:
        if half == k.split()[0].endswith(".BF16"):
            bad.append(f"{name}: {k} does not match the element type")
    if stl:
        bad.append(f"{name}: {stl} local-memory instructions")
    if 3 * depbar > sum(c.values()):
        bad.append(f"{name}: {depbar} WARPGROUP.DEPBAR for {sum(c.values())} HGMMA: serialized wgmma")
if bad:
    print("sass: FAIL\n  " + "\n  ".join(bad))
    sys.exit(1)
print("sass: every HGMMA matches its kernel element type, no local memory, no serialized wgmma")
'
