#!/usr/bin/env bash
# Checkpoints and drift resume (docs/checkpoints.md): a run stopped at aggregation k (as if
# interrupted, by SIGINT, or killed with SIGKILL between checkpoints) and resumed writes
# metrics.jsonl, clients.csv and participation.csv byte-identical to the uninterrupted run,
# for sync, FedBuff and a private-model algorithm, resumed on another slot count; a finished
# run extends to more rounds exactly as a longer run; keys that would change the past are
# refused; an interrupted compare resumes without repeating a finished run.
set -euo pipefail
drift="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
cat > "$work/tiny.toml" <<TOML
seed = 4
[data]
max_train_samples = 1200
max_test_samples = 400
client_test_fraction = 0.25
[federation]
clients = 6
rounds = 5
[sampler]
clients_per_round = 3
[evaluation]
chunk_size = 100
[simulation]
dropout = 0.1
[async]
concurrency = 3
buffer_size = 2
TOML
run() { "$drift" run "$work/tiny.toml" --no-progress --no-plots "$@"; }
wait_for_lines() {  # wait_for_lines FILE N: until FILE has N lines (up to 90 s)
  for _ in $(seq 1 900); do
    [[ $(wc -l 2> /dev/null < "$1" || echo 0) -ge $2 ]] && return 0
    sleep 0.1
  done
}
source "$(dirname "$0")/cli_lib.sh"

# Stopped after aggregation 2 and resumed on the other slot count (each variant starts on one
# count and finishes on the other, so every run sees both): sync FedAvg, FedBuff FedAvg, and
# private models (lg-fedavg, states on disk: the checkpoint links them).
for variant in "sync:fedavg:1" "fedbuff:fedavg:2" "sync:lg-fedavg:2"; do
  IFS=: read -r mode algorithm slots <<< "$variant"
  name="$mode-$algorithm-$slots"
  sets=(--set simulation.mode=$mode --set algorithm.name=$algorithm --slots $slots)
  [[ $algorithm == lg-fedavg ]] && sets+=(--set simulation.client_state=disk)
  run "${sets[@]}" --out "$work/$name-full" 2> /dev/null
  expect_code 130 run "${sets[@]}" --out "$work/$name" --stop-after 2
  grep -q '"status": "interrupted"' "$work/$name/summary.json"
  grep -q "\"resume\": \"drift resume $work/$name\"" "$work/$name/summary.json"
  "$drift" resume "$work/$name" --no-progress --no-plots --slots $((3 - slots)) 2> "$work/$name.resume.log"
  grep -q "resuming .* from its checkpoint after aggregation 2" "$work/$name.resume.log"
  grep -q '"status": "completed"' "$work/$name/summary.json"
  same "$work/$name-full" "$work/$name"
done
passed=$((passed + 1))

# SIGINT: the run stops at the next aggregation with a checkpoint, says so, exits 130; sync
# FedAvg on 1 slot, and private models (states on disk) on 2, resumed on the other count.
# Job control: a background job keeps SIGINT (without it, a script's background jobs ignore it).
set -m
run --set federation.rounds=20 --slots 1 --out "$work/long-full" 2> /dev/null
for variant in "fedavg:1" "lg-fedavg:2"; do
  algorithm=${variant%%:*} slots=${variant##*:}
  sets=(--set federation.rounds=20 --set algorithm.name=$algorithm --set simulation.client_state=disk)
  reference="$work/long-full"
  [[ $algorithm == fedavg ]] || { reference="$work/long-$algorithm"; run "${sets[@]}" --out "$reference" 2> /dev/null; }
  "$drift" run "$work/tiny.toml" --no-progress --no-plots "${sets[@]}" --slots $slots --out "$work/int-$algorithm" \
    2> "$work/int-$algorithm.log" &
  pid=$!
  wait_for_lines "$work/int-$algorithm/metrics.jsonl" 2
  kill -INT $pid
  code=0
  wait $pid 2> /dev/null || code=$?
  [[ $code -eq 130 ]] || { echo "SIGINT: exit $code"; cat "$work/int-$algorithm.log"; exit 1; }
  grep -q "SIGINT: stopping at the next aggregation with a checkpoint" "$work/int-$algorithm.log"
  grep -q '"status": "interrupted"' "$work/int-$algorithm/summary.json"
  "$drift" resume "$work/int-$algorithm" --no-progress --no-plots --slots $((3 - slots)) 2> /dev/null
  same "$reference" "$work/int-$algorithm"
done
passed=$((passed + 1))

# SIGKILL between checkpoints (every 3), sync on 1 slot and FedBuff on 2: resume (on the other
# slot count) cuts the files back to the checkpoint.
for variant in "sync:1" "fedbuff:2"; do
  mode=${variant%%:*} slots=${variant##*:}
  sets=(--set federation.rounds=20 --set simulation.mode=$mode)
  [[ $mode == sync ]] || run "${sets[@]}" --slots $slots --out "$work/$mode-40" 2> /dev/null
  reference="$work/long-full"
  [[ $mode == sync ]] || reference="$work/$mode-40"
  "$drift" run "$work/tiny.toml" --no-progress --no-plots "${sets[@]}" --set checkpoint.every=3 --slots $slots \
    --out "$work/killed-$mode" 2> /dev/null &
  pid=$!
  wait_for_lines "$work/killed-$mode/metrics.jsonl" 5
  kill -KILL $pid
  wait $pid 2> /dev/null || true
  [[ -d "$work/killed-$mode/checkpoint" ]] || { echo "no checkpoint after SIGKILL"; exit 1; }
  "$drift" resume "$work/killed-$mode" --no-progress --no-plots --slots $((3 - slots)) 2> /dev/null
  same "$reference" "$work/killed-$mode"
done
passed=$((passed + 1))

# A finished run extends to more rounds, exactly as the longer run; nothing to do without --set.
run --set federation.rounds=8 --slots 1 --out "$work/eight" 2> /dev/null
"$drift" resume "$work/sync-fedavg-1-full" --no-progress | grep -q "is complete (5 aggregations)"
"$drift" resume "$work/sync-fedavg-1-full" --set federation.rounds=8 --no-progress --no-plots 2> /dev/null
same "$work/eight" "$work/sync-fedavg-1-full"
passed=$((passed + 1))

# What would change the past is refused, naming the key; so is a directory without a checkpoint.
expect_code 2 "$drift" resume "$work/eight" --set simulation.dropout=0.3
grep -q "simulation.dropout: a resumed run cannot change it" "$work/last.err"
expect_code 2 "$drift" resume "$work/eight" --set federation.rounds=3
grep -q "federation.rounds=3 is below the 8 aggregations" "$work/last.err"
mkdir "$work/empty"
expect_code 2 "$drift" resume "$work/empty"
grep -q "holds no checkpoint" "$work/last.err"
passed=$((passed + 1))

# An interrupted compare: the same command resumes; no finished run is repeated.
compare=("$drift" compare "$work/tiny.toml" --algorithms fedavg,fedprox --seeds 2 --jobs 1 --no-plots --no-progress
         --set federation.rounds=16 --out "$work/cmp")
"${compare[@]}" > /dev/null 2> "$work/cmp1.log" &
pid=$!
wait_for_lines "$work/cmp/fedavg/seed-2/metrics.jsonl" 2  # seed 1 has finished then (--jobs 1)
kill -INT $pid
code=0
wait $pid || code=$?
[[ $code -eq 130 ]] || { echo "compare: exit $code"; cat "$work/cmp1.log"; exit 1; }
grep -q '"status": "interrupted"' "$work/cmp/fedavg/seed-2/summary.json"
first=$(stat -c %Y.%s "$work/cmp/fedavg/seed-1/metrics.jsonl")
"${compare[@]}" > /dev/null 2> "$work/cmp2.log"
grep -q "1 run(s) had finished before and were kept, 1 resumed from a checkpoint; 3 ran now" "$work/cmp2.log"
[[ $(stat -c %Y.%s "$work/cmp/fedavg/seed-1/metrics.jsonl") == "$first" ]]
grep -q "resuming" "$work/cmp/fedavg/seed-2/log.txt"
run --set federation.rounds=16 --set seed=2 --out "$work/seed2" 2> /dev/null
same "$work/seed2" "$work/cmp/fedavg/seed-2"
grep -q "fedprox" "$work/cmp/comparison.md"
passed=$((passed + 1))
echo "cli resume: $passed passed, 0 failed"
