#!/usr/bin/env bash
# GPU machine (thirty-first session). .snap: bins/new = HEAD, bins/trace/dash-attn = HEAD with -DDASH_BWD_TRACE=ON.
#   PART=1: next84's timeline showed causal symmetric shift at 16k losing its faster steps to partial groups:
#           132 CTAs = 2 heads' groups (64 pairs each) + 4 CTAs that start the next head's group alone and
#           stall on its dQ chains for half a wave. DASH_BWD_POST_SMS=4 launches 128 main CTAs (whole groups)
#           and gives the 4 SMs to the polling postprocess. A/B k = 0 / 4, 3 interleaved rounds: shift (full;
#           group = the head's 64 / 128 KV tiles at 8k / 16k) and symmetric shift (causal) at hdim 128 and 64;
#           then the timeline of causal symmetric shift 16k and full shift 16k with k = 4.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next85
{
if [ "${PART:-1}" = 1 ]; then
  echo "== A/B $(el)"
  switch_ab DASH_BWD_POST_SMS "128 64" "0" shift,descending 4096,8192,16384 "0 4" 3
  switch_ab DASH_BWD_POST_SMS "128 64" "1" symmetric_shift,descending 4096,8192,16384 "0 4" 3
  echo "== trace $(el)"
  trace_sides DASH_BWD_POST_SMS=0,4 "128 1 symmetric_shift 16384" "128 0 shift 16384"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
