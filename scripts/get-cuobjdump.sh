#!/usr/bin/env bash
# Prints a directory that holds cuobjdump and nvdisasm (for scripts/check_sass.sh and reading
# SASS on a machine without a GPU): the CUDA toolkit's when both are on PATH, else those of NVIDIA's
# PyPI wheels nvidia-cuda-cuobjdump / nvidia-cuda-nvdisasm (13.x, ~6 MB; the 13.x tools read the
# sm_90a code nvcc 13.0 writes), downloaded once into ${DASH_TOOLS_CACHE:-~/.cache/dash-attn/sass-tools}.
#   PATH="$(bash scripts/get-cuobjdump.sh):$PATH" bash scripts/check_sass.sh build/CMakeFiles/dash_attn.dir/src/kernels/attn_bwd_sm90.cu.o
set -euo pipefail
if command -v cuobjdump > /dev/null && command -v nvdisasm > /dev/null; then
  dirname "$(command -v cuobjdump)"
  exit 0
fi
dir=${DASH_TOOLS_CACHE:-$HOME/.cache/dash-attn/sass-tools}
find_bin() { find "$dir/tree" -type f -name cuobjdump -path '*/bin/*' 2>/dev/null | head -1; }
if [ -z "$(find_bin)" ]; then
  mkdir -p "$dir/whl" "$dir/tree"
  python3 -m pip download -q --no-deps -d "$dir/whl" "nvidia-cuda-cuobjdump>=13,<14" "nvidia-cuda-nvdisasm>=13,<14" >&2
  for w in "$dir"/whl/*.whl; do python3 -m zipfile -e "$w" "$dir/tree"; done
fi
bin=$(dirname "$(find_bin)")
chmod +x "$bin"/cuobjdump "$bin"/nvdisasm
"$bin/cuobjdump" --version > /dev/null
echo "$bin"
