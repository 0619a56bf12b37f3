#!/usr/bin/env bash
# GPU machine (for the fortieth session). .snap as for gpu-next105.sh (bins.txz: bins/new = HEAD's dash-attn and
# dash_gpu_tests, dq_reduce_bw; head.tgz = `git archive HEAD`, copied to the repo root first).
#   PART=1: bench/probes/dq_reduce_bw.cu (bins/new/dq_reduce_bw, or compiled here, about 30 s) with its energy windows: the L2 bulk
#           reduce-add's energy per CTA-step against a CTA pair's DSMEM exchange + half reduce, and the Q + dO
#           loads against the pair's multicast half-loads (docs/perf.md
#           v40 item 6: the number that decides whether the 2-CTA pairs are worth building); then the whole
#           GPU suite (gpu-next105.sh PART=2, LIMIT_S per shard, default 280).
#   PART=2: the hdim 64 half of the peers sweep and the Python suite (gpu-next105.sh PART=3).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
case "${PART:-1}" in
1)
  . scripts/gpu-common.sh
  gpu_setup gpu-next106-probe
  {
    cat "$O/machine.txt"
    if [ -x bins/new/dq_reduce_bw ] && cp bins/new/dq_reduce_bw /tmp/ && echo "prebuilt" > "$O/probe-build.log" ||
       nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O3 -Itools -o /tmp/dq_reduce_bw \
         bench/probes/dq_reduce_bw.cu > "$O/probe-build.log" 2>&1; then
      timeout -k 5 120 /tmp/dq_reduce_bw 2000 2 2>&1 || echo "probe rc $?"
    else
      echo "probe build failed"; tail -20 "$O/probe-build.log"
    fi
    echo "probe $(el)"
  } 2>&1 | tee "$O/probe.log"
  mkdir -p "$DEST" && cp "$O/probe.log" "$O/probe-build.log" "$DEST/"
  PART=2 LIMIT_S=${LIMIT_S:-280} bash scripts/gpu-next105.sh
  ;;
2)
  PART=3 bash scripts/gpu-next105.sh
  ;;
esac
