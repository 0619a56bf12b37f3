#!/usr/bin/env bash
# GPU machine (for the thirty-first session). .snap: bins/new = HEAD (dash-attn, dash_gpu_tests).
#   PART=1: the whole GPU suite (6 shards, sanitizers) with DASH_BWD_POST_SMS=2 exported (the draft of
#           docs/perf.md v31 item 7: the main kernel leaves 2 SMs to the polling postprocess), then its
#           A/B (switch_ab, k = 0 / 2, 3 interleaved rounds): hdim 128 full and causal, hdim 64 full,
#           descending / shift / spt, 1k-16k.
#   Then (an H200 wanted): `PART=2 bash scripts/gpu-next69.sh` (pip, pytest, peers).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next83
{
if [ "${PART:-1}" = 1 ]; then
  DASH_BWD_POST_SMS=2 suite_and_bench '(PostSms|GroupTake|EnvSwitches|BwdSm90Auto)'
  echo "== A/B $(el)"
  L=1024,2048,4096,8192,16384
  switch_ab DASH_BWD_POST_SMS "128 64" "0" descending,shift,spt $L "0 2" 3
  switch_ab DASH_BWD_POST_SMS "128" "1" descending,shift,spt $L "0 2" 3
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
