#!/usr/bin/env bash
# The quickstart's federation on cuda:0 for two rounds, with its steps replayed from CUDA graphs
# (the default) and run eagerly (devices.graphs = false): both must write the same metrics.
# Skipped (exit 77, reported by CTest as skipped) where the linked LibTorch has no CUDA or no GPU
# is visible. The device trainer's own GPU checks are tests/test_cuda_training.cpp.
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
for graphs in true false; do
  "$drift" run "$scenario" --devices cuda:0x2 --set federation.rounds=2 --set data.max_train_samples=6000 \
    --set devices.graphs=$graphs --out "$work/graphs-$graphs" --no-progress --no-plots
  grep -q '"test_accuracy"' "$work/graphs-$graphs/metrics.jsonl"
done
cmp "$work/graphs-true/metrics.jsonl" "$work/graphs-false/metrics.jsonl"
cmp "$work/graphs-true/clients.csv" "$work/graphs-false/clients.csv"
echo "cuda smoke: ok (graphs and eager steps wrote the same metrics)"
