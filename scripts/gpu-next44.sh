#!/usr/bin/env bash
# GPU machine (twenty-fourth session). Everything goes into $OUT/all.tgz.
#   PART=1 (from a clean export, bins/ unpacked: pip needs the sources): the package, then dash
#          against cuDNN SDPA in one process in alternating blocks (the third view beside peers.py's
#          turns and gpu-next43.sh's ncu kernel-alone times): scripts/fwd_pair.py (hdim 128 full,
#          with autograd recording) and scripts/bwd_pair.py (`auto`, deterministic; hdim 128 full
#          and causal, hdim 64 full), 4k-16k.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-common.sh
gpu_setup gpu-next44
{
if [ "${PART:-1}" = 1 ]; then
  echo "== pip $(el)"
  python -m pip install --no-build-isolation --no-deps -v . > "$O/pip.log" 2>&1; echo "pip rc $? $(el)"
  cd /tmp || exit 1
  R=$OLDPWD
  timeout -k 5 120 python "$R/scripts/fwd_pair.py" --hdim 128 --seqlen 4096,8192,16384 --iters 20 --rounds 5 --grad 2>&1 | grep -v Warning
  for args in "--hdim 128" "--hdim 128 --causal" "--hdim 64"; do
    timeout -k 5 120 python "$R/scripts/bwd_pair.py" $args --seqlen 4096,8192,16384 --iters 10 --rounds 5 2>&1 | grep -v Warning
  done
fi
echo "total $(el)"
} 2>&1 | tee "$O/run.log"
tar czf "$DEST/all.tgz" -C "$O" .
