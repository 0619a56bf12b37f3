#!/usr/bin/env bash
# Summarise ptxas -v from a build log and fail on spills, local memory, an ignored setmaxnreg
# (C7508) or serialized wgmma (any "Potential Performance Loss: wgmma..." note: C7514 / C7515 /
# ...; a C7514 went unnoticed in the tenth session's S^T prefetch draft and cost 20-25%).
log=${1:?usage: check_ptxas.sh BUILD_LOG}
python3 - "$log" <<'PY'
import re, subprocess, sys
text = open(sys.argv[1], errors="replace").read()
rows, fn, frame, bad = set(), "?", "", []
for line in text.splitlines():
    m = re.search(r"Compiling entry function '([^']+)'", line)
    if m:
        fn = m.group(1)
        try:
            fn = subprocess.run(["c++filt"], input=fn, capture_output=True, text=True).stdout.strip() or fn
        except OSError:
            pass
        fn = re.sub(r"dash::kernels::\(anonymous namespace\)::", "", fn)
        fn = re.sub(r"\(dash::kernels::\w+\)", "", fn)
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
    if m:
        frame = m.groups()
        if any(int(x) for x in frame):
            bad.append(f"{fn}: stack {frame[0]} B, spill stores {frame[1]} B, spill loads {frame[2]} B")
    m = re.search(r"Used (\d+) registers", line)
    if m:
        rows.add(f"{int(m.group(1)):4d} regs  stack/spill {'/'.join(frame) if frame else '-'}  {fn}")
for r in sorted(rows, key=lambda s: s[12:]):
    print(r)
if "C7508" in text:
    bad.append("setmaxnreg ignored (C7508)")
for m in re.finditer(r"\((C75\d\d)\) Potential Performance Loss: wgmma[^\n]*function '([^']+)'", text):
    bad.append(f"wgmma serialized ({m.group(1)}) in {m.group(2)[:120]}")
if bad:
    print("ptxas: FAIL\n  " + "\n  ".join(sorted(set(bad))))
    sys.exit(1)
print("ptxas: no spills, no local memory, no ignored setmaxnreg, no serialized wgmma")
PY
