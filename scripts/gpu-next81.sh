#!/usr/bin/env bash
# GPU machine (thirtieth session): the group take under concurrent load. .snap: bins/new = HEAD
# (dash_gpu_tests). 3 processes at once of the group-take tests and the shift / symmetric-shift
# determinism tests (reruns, grid sizes, concurrent load), 2 repeats each (scripts/hang-stress.sh,
# watchdog 20 s).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next81
{
  echo "== stress $(el)"
  OUT="$O/stress" REL_TESTS=bins/new/dash_gpu_tests N_REL=3 N_DBG=0 REPEAT=2 BUDGET_S=240 \
    FILTER='BwdSm90GroupTake.*:*Determinism*shift*' bash scripts/hang-stress.sh
  echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
