#!/usr/bin/env bash
# GPU machine (twenty-ninth session, for the next one): the whole suite and peers with the 16-byte dK / dV epilogue (108a883; measured on an H100 only, docs/perf.md v30 item 6). Everything goes into $OUT/all.tgz.
#   .snap: bins/new = HEAD.
#   PART=1: the whole GPU suite in 6 shards with the sanitizers, then `dash-attn bench` of every
#          schedule and auto (the defaults, hdim 128 and 64, both masks).
#   PART=2: the package from HEAD, the Python suite, then peers (3 rounds, the standard sweep).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next78
{
if [ "${PART:-1}" = 1 ]; then
  suite_and_bench '(DkvVec|BwdSm90Auto|LastWaveSplit)'
fi
if [ "${PART:-1}" = 2 ]; then
  install_head && cd "$R" || exit 1
  echo "== pytest $(el)"
  timeout -k 5 200 python -m pytest tests/python -q -p no:cacheprovider > "$O/pytest.log" 2>&1; echo "pytest rc $? $(el)"
  tail -2 "$O/pytest.log"
  cd - > /dev/null
  (cd /tmp && timeout -k 5 330 python "$R/bench/peers.py" --rounds 3 --warmup 2 --reps 4 --budget-s 300 \
    --json "$O/peers.json" --png "$O/peers.png" > "$O/peers.log" 2>&1); echo "peers rc $? $(el)"
  python3 "$R/scripts/peers_table.py" "$O/peers.json" > "$O/table.md" 2>&1; tail -34 "$O/table.md"
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
