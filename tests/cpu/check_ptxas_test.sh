#!/usr/bin/env bash
# scripts/check_ptxas.sh must pass a clean ptxas -v log and fail on spills, an ignored setmaxnreg
# (C7508) and any wgmma serialization note (C7511 / C7514 / C7515 ...; a C7514 once cost 20-25%
# unnoticed: docs/perf.md v10). Logs below are excerpts in nvcc 13.0's format.
set -uo pipefail
script="$(dirname "$0")/../../scripts/check_ptxas.sh"
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
entry="ptxas info    : Compiling entry function '_Z6kernelv' for 'sm_90a'"
regs="ptxas info    : Used 168 registers, used 2 barriers, 256 bytes smem"
clean="ptxas info    : Function properties for _Z6kernelv
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"
printf '%s\n%s\n%s\n' "$entry" "$clean" "$regs" > "$dir/clean.log"
printf '%s\n%s\n%s\n%s\n' "$entry" "ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized due to non wgmma instructions reading accumulator registers of  a wgmma between start and end of the pipeline stage in the function '_Z6kernelv'" "$clean" "$regs" > "$dir/c7514.log"
printf '%s\n%s\n%s\n%s\n' "$entry" "ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized due to insufficient register resources for the wgmma pipeline in the function '_Z6kernelv'" "$clean" "$regs" > "$dir/c7511.log"
printf '%s\n%s\n%s\n' "$entry" "ptxas info    : Function properties for _Z6kernelv
    8 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads" "$regs" > "$dir/spill.log"
fail=0
bash "$script" "$dir/clean.log" > "$dir/out" 2>&1 || { echo "FAIL: a clean log was rejected"; cat "$dir/out"; fail=1; }
for bad in c7514 c7511 spill; do
  if bash "$script" "$dir/$bad.log" > "$dir/out" 2>&1; then
    echo "FAIL: $bad was not caught"; cat "$dir/out"; fail=1
  else
    echo "caught $bad: $(tail -1 "$dir/out")"
  fi
done
exit $fail
