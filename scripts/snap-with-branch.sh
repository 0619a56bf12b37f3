#!/usr/bin/env bash
# Local machine: prepare .snap (the tree at HEAD + its build) for a device call that tests and
# A/Bs a draft branch against HEAD. Builds BRANCH in a worktree (../wt-<branch>, build dir inside),
# copies its dash-attn and dash_gpu_tests to .snap/branch/, and prints the device command.
#   scripts/snap-with-branch.sh draft/desc-lo-add
# Device command (run with carry [".snap"]): printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
BRANCH=${1:?usage: snap-with-branch.sh BRANCH}
WT=../wt-$(echo "$BRANCH" | tr '/' '-')
cmake --build build > /dev/null
rm -rf "$WT" && git worktree prune && git worktree add -q "$WT" "$BRANCH"
(cd "$WT" && cmake --preset default > /dev/null && cmake --build build -v > build.log 2>&1 && bash scripts/check_ptxas.sh build.log | tail -1)
rm -rf .snap && mkdir .snap && git archive HEAD | tar -x -C .snap && git rev-parse --short HEAD > .snap/COMMIT
mkdir -p .snap/build/tests .snap/branch
cp -a build/dash-attn .snap/build/ && cp -a build/tests/dash_gpu_tests .snap/build/tests/
cp -a "$WT/build/dash-attn" "$WT/build/tests/dash_gpu_tests" .snap/branch/
git -C "$WT" rev-parse --short HEAD > .snap/branch/COMMIT
git worktree remove --force "$WT"
du -sh .snap
cat <<CMD
device command (the branch's GPU tests in 4 shards + sanitizers, then the A/B against HEAD):
cd .snap && T_TESTS=branch/dash_gpu_tests X_NEW=branch/dash-attn AB_OLD=build/dash-attn OUT=\$OUT/x bash scripts/gpu-fast.sh; cd \$OUT && tar czf x.tgz x && rm -rf x
CMD
