#!/usr/bin/env bash
# Run the small-shape GPU tests (Sanitize.*) under one compute-sanitizer tool.
# Exit 77 (ctest: skipped) with a reason when there is no GPU or no compute-sanitizer.
tool=${1:?tool}; bin=${2:?test binary}
san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
if [ -z "$san" ]; then echo "SKIPPED: compute-sanitizer not found"; exit 77; fi
if ! nvidia-smi -L >/dev/null 2>&1; then echo "SKIPPED: no CUDA device on this machine"; exit 77; fi
extra=()
[ "$tool" = racecheck ] && extra=(--racecheck-report all)
exec "$san" --tool "$tool" "${extra[@]}" --error-exitcode 1 "$bin" --gtest_filter='Sanitize*'
