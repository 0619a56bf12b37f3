#!/usr/bin/env bash
# GPU machine (forty-fourth session): on an H200, the peers sweep (scripts/gpu-next111.sh's H200 branch, HDIMS=128 unless
# set; the package built from this tree, so atomic takes late there); on any other GPU, scripts/gpu-next116.sh (atomic
# with late task taking against the run-ahead taker).
cd "$(dirname "$0")/.." || exit 1
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H200*) exec bash scripts/gpu-next111.sh ;;
  *) exec bash scripts/gpu-next116.sh ;;
esac
