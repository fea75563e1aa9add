#!/usr/bin/env bash
# The CLI end to end on a tiny scenario: list, validate, run, and the run directory it writes.
set -euo pipefail
drift="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Into files, not pipes: grep -q stops reading early, and pipefail would report the SIGPIPE.
"$drift" list > "$work/list"
grep -q fedprox "$work/list"
grep -q "preset reference" "$work/list"
# Every scenario key from the key table, with its type, default, range and choices.
"$drift" list keys > "$work/keys"
grep -q "^  over_selection: number, default 1, in \[1, 100\]; sync: select" "$work/keys"
grep -q "^  mode: string, default \"sync\", one of: sync, fedasync, fedbuff;" "$work/keys"
grep -q "^drift resume --set may change: federation.rounds," "$work/keys"
# docs/scenarios.md explains every key the table holds.
awk '/^top level/ {section = ""; next} /^\[/ {section = substr($1, 2, length($1) - 2) "."; next}
     /^  [a-z_]+:/ {key = $1; sub(":", "", key); print section key}' "$work/keys" |
  grep -v '^groups.NAME\.\|^\[timeline' > "$work/key_paths"
while read -r key; do
  grep -q "$key" "$(dirname "$0")/../docs/scenarios.md" || { echo "docs/scenarios.md does not name $key"; exit 1; }
done < "$work/key_paths"
[[ $(wc -l < "$work/key_paths") -gt 80 ]]
"$drift" run --help > "$work/help"
grep -q -- "--set" "$work/help"
cat > "$work/tiny.toml" <<TOML
seed = 3
[data]
max_train_samples = 1200
max_test_samples = 400
[federation]
clients = 4
rounds = 2
[sampler]
fraction = 0.5
[output]
runs_dir = "$work/runs"
TOML
"$drift" validate "$work/tiny.toml" > "$work/summary"
grep -q "ok" "$work/summary"
# Virtual time is named as simulated, and a wall time estimated beside it (issue 48).
grep -q "the run about .* of simulated time$" "$work/summary"
grep -Eq "wall time: training takes about .* on this machine's [0-9]+ CPU slot\(s\) \(a local step of the model took [0-9.]+ ms" \
  "$work/summary" || { cat "$work/summary"; exit 1; }
"$drift" validate "$work/tiny.toml" --print > "$work/resolved"
grep -q "min_client_samples = 10" "$work/resolved"
# Every shipped scenario is valid (they are documentation too).
for f in "$(dirname "$0")"/../scenarios/*.toml "$(dirname "$0")"/../scenarios/paper/*.toml; do
  "$drift" validate "$f" > "$work/shipped" || { echo "shipped scenario $f does not validate"; exit 1; }
done
grep -q fedktl "$work/list"
"$drift" run "$work/tiny.toml" --set algorithm.name=fedprox --no-progress 2> "$work/log"
run="$work/runs/tiny"
for f in scenario.toml metrics.jsonl clients.csv timings.jsonl partition.json summary.json log.txt; do
  [[ -s "$run/$f" ]] || { echo "missing $run/$f"; exit 1; }
done
grep -q "name = 'fedprox'" "$run/scenario.toml"
[[ $(wc -l < "$run/metrics.jsonl") -eq 2 ]]
grep -q "round 2/2" "$work/log"
# A second run of the same scenario gets its own directory and the same metrics.
"$drift" run "$work/tiny.toml" --set algorithm.name=fedprox --no-progress --slots 1 2> /dev/null
cmp "$run/metrics.jsonl" "$work/runs/tiny-2/metrics.jsonl"
# The resolved scenario.toml is itself a valid scenario that repeats the run.
"$drift" run "$run/scenario.toml" --out "$work/again" --no-progress 2> /dev/null
cmp "$run/metrics.jsonl" "$work/again/metrics.jsonl"
echo "cli run: 1 passed, 0 failed"
