#!/usr/bin/env bash
# GPU machine, the seventeenth session's last call: the whole state at this commit.
# Prebuilt binaries (bins.tgz: bins/new = this commit, bins/old = 983c5d0, the writer rank before
# the cheap kWRank visit); carry [".snap"]; `cd .snap && bash scripts/gpu-s18d.sh`.
# 1. pip install in the background; the whole GPU suite in 4 shards with the sanitizers alongside;
# 2. bench: every schedule, both masks, hdim 128 and 64 (the defaults); then 2 interleaved rounds of
#    shift, full masks, old / new binary (the kWRank visit without visit()'s modulo); shift on
#    64-row tiles with consecutive / strided starts (DASH_BWD_SM90_BLOCK_M=64, DASH_STRIDED_SHIFT=1);
# 3. scripts/fwd_pair.py (dash / cuDNN forward in one process: randn and uniform inputs, with and
#    without autograd recording); pytest, then the peers benchmark (scripts/gpu-pytest-peers.sh).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-s18d
{
echo "== pip (background) + tests $(el)"
pip_bg
TEST_FILTER='*' LIMIT_S=${LIMIT_S:-220} bash scripts/gpu-bwd-tests.sh "$O"
pip_wait
echo "== bench $(el)"
bench_every_schedule
for r in 1 2; do
  for v in old new; do
    for d in 128 64; do
      timeout -k 5 60 bins/$v/dash-attn bench --hdim $d --causal 0 --seqlen 1024,2048,4096,8192,16384 --schedules shift \
        --json "$O/ab-$v-r$r-hdim$d.json" > "$O/ab-$v-r$r-hdim$d.log" 2>&1 || echo "ab $v r$r $d rc $?"
    done
  done
done
for d in 128 64; do  # shift on 64-row tiles: consecutive starts (writer rank) and strided starts (split rank)
  DASH_BWD_SM90_BLOCK_M=64 timeout -k 5 60 bins/new/dash-attn bench --hdim $d --causal 0 --seqlen 1024,2048,4096,8192,16384 \
    --schedules shift,descending --json "$O/b64-hdim$d.json" > "$O/b64-hdim$d.log" 2>&1 || echo "b64 $d rc $?"
  DASH_BWD_SM90_BLOCK_M=64 DASH_STRIDED_SHIFT=1 timeout -k 5 60 bins/new/dash-attn bench --hdim $d --causal 0 \
    --seqlen 1024,2048,4096,8192,16384 --schedules shift --json "$O/b64s-hdim$d.json" > "$O/b64s-hdim$d.log" 2>&1 || echo "b64s $d rc $?"
done
python3 scripts/bench_rows.py --min-seqlen 1024 "$O"/bench-hdim*.json | grep -E " full .* (descending|shift|atomic|auto) "
echo "== fwd pair $(el)"
for gflag in "" --grad; do python3 scripts/fwd_pair.py $gflag 2>&1 | tee -a "$O/fwd-pair.log" | grep -v Warning; done
bash scripts/gpu-pytest-peers.sh "$O"
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" --exclude=pip.log -C "$O" .
