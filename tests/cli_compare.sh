#!/usr/bin/env bash
# drift compare end to end on a tiny scenario: two variants x two seeds, one table; a bad
# variant is refused before anything runs; run again, it resumes.
set -euo pipefail
drift="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/tiny.toml" <<TOML
[data]
max_train_samples = 1200
max_test_samples = 300
[federation]
clients = 4
rounds = 2
[sampler]
clients_per_round = 2
TOML
if "$drift" compare "$work/tiny.toml" --algorithms fedavg,fedskc+tau=0 --out "$work/bad" 2> "$work/err"; then
  echo "a bad variant was accepted"; exit 1
fi
grep -q "fedskc+tau=0: --set algorithm.tau: algorithm.tau must be > 0" "$work/err"
[[ ! -e "$work/bad" ]] || { echo "a refused comparison left $work/bad behind"; exit 1; }
# A dotted variant key is a scenario key, validated like --set.
if "$drift" compare "$work/tiny.toml" --algorithms fedavg+training.lrr=0.1 --out "$work/bad" 2> "$work/err"; then
  echo "a bad scenario key in a variant was accepted"; exit 1
fi
grep -q "did you mean 'training.lr'" "$work/err"

"$drift" compare "$work/tiny.toml" --algorithms fedavg,fedskc:reference+gpr=false --seeds 2 --out "$work/cmp" \
  > "$work/table" 2> "$work/progress"
grep -q "^algorithm=fedskc:reference+gpr=false, seed 2: best" "$work/progress"
grep -q "^| fedavg | 2 | " "$work/table"
grep -q "^| fedskc:reference+gpr=false | 2 | " "$work/table"
cmp "$work/table" "$work/cmp/comparison.md"
[[ $(wc -l < "$work/cmp/comparison.csv") -eq 3 ]]
head -1 "$work/cmp/comparison.csv" | grep -q "^algorithm,seeds,best_mean,best_std,last5_mean,last5_std,rounds_to_50,reached_50"
grep -q "gpr = false" "$work/cmp/fedskc_reference_gpr_false/seed-1/scenario.toml"
grep -q "preset = 'reference'" "$work/cmp/fedskc_reference_gpr_false/seed-2/scenario.toml"
grep -q "^seed = 2" "$work/cmp/fedavg/seed-2/scenario.toml"
# The same seed of the same variant is the same run as drift run gives.
"$drift" run "$work/tiny.toml" --set seed=2 --set "evaluation.targets=[0.5, 0.7, 0.8]" --out "$work/single" --no-progress 2> /dev/null
cmp "$work/single/metrics.jsonl" "$work/cmp/fedavg/seed-2/metrics.jsonl"
# Run again after a crash before any checkpoint (one run without its summary or checkpoint):
# only that run repeats, from the start.
rm -r "$work/cmp/fedavg/seed-1/summary.json" "$work/cmp/fedavg/seed-1/checkpoint"
"$drift" compare "$work/tiny.toml" --algorithms fedavg,fedskc:reference+gpr=false --seeds 2 --out "$work/cmp" \
  > "$work/table2" 2> "$work/progress2"
grep -q "3 run(s) had finished before and were kept, 0 resumed from a checkpoint; 1 ran now" "$work/progress2"
cmp "$work/table" "$work/table2"
# Every run on a pool of the command's (issue 70), each slot in a process of its own, as many
# runs at once as the cores hold: the same bits as one run at a time on the scenario's devices.
"$drift" compare "$work/tiny.toml" --algorithms fedavg,fedskc:reference+gpr=false --seeds 2 --out "$work/pool" \
  --devices cpu:1 --slot-processes --no-plots > /dev/null 2> "$work/progress3"
grep -q "^study: 4 run(s), $(nproc) at once on cpu x1 in slot processes$" "$work/progress3"
for run in fedavg/seed-1 fedavg/seed-2 fedskc_reference_gpr_false/seed-1 fedskc_reference_gpr_false/seed-2; do
  cmp "$work/cmp/$run/metrics.jsonl" "$work/pool/$run/metrics.jsonl"
  grep -q "devices: cpu x1, each slot in a worker process of its own" "$work/pool/$run/log.txt"
done
# Refused before anything is written: a GPU memory bound without a GPU to bound.
for flags in "--devices cpu:2 --gpu-memory 4" "--gpu-memory 4"; do
  # shellcheck disable=SC2086 # the flags are words
  if "$drift" compare "$work/tiny.toml" --algorithms fedavg $flags --out "$work/bad" 2> "$work/err"; then
    echo "compare $flags was accepted"; exit 1
  fi
done
grep -q "^drift: error: --gpu-memory needs --devices: the pool whose GPUs it bounds" "$work/err"
if "$drift" compare "$work/tiny.toml" --algorithms fedavg --devices cpu:1 --gpu-memory 0 --out "$work/bad" 2> "$work/err"; then
  echo "--gpu-memory 0 was accepted"; exit 1
fi
grep -q "^drift: error: --gpu-memory: a number of GiB above 0 and up to 1e6, not 0" "$work/err"
if "$drift" run "$work/tiny.toml" --slots 1 --gpu-memory 2 --out "$work/bad" 2> "$work/err"; then
  echo "run --gpu-memory on a CPU pool was accepted"; exit 1
fi
grep -q "bounds what a run holds of each of its GPUs, but the run's device pool (cpu x1) has none" "$work/err"
[[ ! -e "$work/bad" ]] || { echo "a refused comparison left $work/bad behind"; exit 1; }
echo "cli compare: 1 passed, 0 failed"
