#!/usr/bin/env bash
# GPU machine, the eighteenth session's second call: the causal head_dim 64 80-row draft
# (DASH_BWD_SM90_D64_CAUSAL_BM80=1). Prebuilt binaries (bins.tgz: bins/new); carry [".snap"];
# `cd .snap && bash scripts/gpu-s19b.sh`.
# 1. the whole GPU suite in 4 shards with the sanitizers, the draft ON (every causal head_dim 64
#    test of atomic / spt / descending from 1k then runs 80-row tiles; BwdSm90D64CausalBm80);
# 2. A/B, 2 interleaved rounds: `dash-attn bench` hdim 64 causal 1k-16k, draft off / on;
# 3. pip install (during 2), then the peers benchmark at hdim 64 causal with the draft on.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-s19b
save() { tar czf "$DEST/all.tgz" --exclude=pip.log -C "$O" .; }
{
echo "== tests, draft on $(el)"
DASH_BWD_SM90_D64_CAUSAL_BM80=1 TEST_FILTER='*' LIMIT_S=${LIMIT_S:-230} bash scripts/gpu-bwd-tests.sh "$O"
save
echo "== A/B + pip (background) $(el)"
pip_bg
for r in 1 2; do
  for v in off on; do
    e=0; [ $v = on ] && e=1
    DASH_BWD_SM90_D64_CAUSAL_BM80=$e timeout -k 5 60 bins/new/dash-attn bench --hdim 64 --causal 1 \
      --seqlen 1024,2048,4096,8192,16384 --schedules atomic,spt,descending,ascending,auto \
      --json "$O/c80-$v-r$r.json" > "$O/c80-$v-r$r.log" 2>&1 || echo "c80 $v r$r rc $?"
  done
done
python3 scripts/bench_rows.py "$O"/c80-*-r1.json | grep -E " (atomic|descending|spt) "
save
pip_wait
echo "== peers hdim 64 causal, draft on $(el)"
DASH_BWD_SM90_D64_CAUSAL_BM80=1 SKIP_E2E=1 PEERS_BUDGET_S=${PEERS_BUDGET_S:-90} PEERS_ARGS="--hdims 64 --masks causal --seqlens 1024,4096,16384" \
  OUT="$O" bash scripts/bench-python.sh > "$O/peers-run.log" 2>&1
echo "peers rc $? $(el)"
grep -A6 "^ratios" "$O/peers.log" | head -12
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
save
