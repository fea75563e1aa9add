#!/usr/bin/env bash
# The quickstart's federation on cuda:0 for two rounds. Skipped (exit 77, reported by CTest as
# skipped) where the linked LibTorch has no CUDA or no GPU is visible.
set -euo pipefail
drift="$1"
scenario="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! "$drift" validate "$scenario" --set 'devices.pool="cuda:0x2"' > "$work/validate" 2>&1; then
  if grep -q "without CUDA\|GPU(s) are visible" "$work/validate"; then
    echo "skipped: $(cat "$work/validate")"
    exit 77
  fi
  cat "$work/validate"
  exit 1
fi
"$drift" run "$scenario" --devices cuda:0x2 --set federation.rounds=2 --set data.max_train_samples=6000 \
  --set 'output.runs_dir="'"$work/runs"'"' --no-progress
test -s "$work"/runs/*/metrics.jsonl
grep -q '"test_accuracy"' "$work"/runs/*/metrics.jsonl
echo "cuda smoke: ok"
