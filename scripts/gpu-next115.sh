#!/usr/bin/env bash
# GPU machine (forty-third session): on an H200, the peers sweep (scripts/gpu-next111.sh's H200 branch, HDIMS=128 unless
# set); on any other GPU, scripts/gpu-next114.sh (energy per FLOP, full against causal, at the power cap).
cd "$(dirname "$0")/.." || exit 1
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H200*) exec bash scripts/gpu-next111.sh ;;
  *) exec bash scripts/gpu-next114.sh ;;
esac
