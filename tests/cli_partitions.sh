#!/usr/bin/env bash
# The protocol-family data conventions from the CLI: a partition read from a JSON file
# (replicating another framework's split), a bad file refused before any run directory exists,
# per-client held-out test splits, the CReFF partition over a long-tailed pool, and FedAU's slices.
set -euo pipefail
drift="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat > "$work/base.toml" <<TOML
seed = 5
[data]
max_train_samples = 1200
max_test_samples = 300
[federation]
clients = 4
rounds = 1
[sampler]
clients_per_round = 2
[output]
runs_dir = "$work/runs"
TOML

# Client k holds indices 300k .. 300k + 299 - k (so sizes 300, 299, 298, 297).
{
  echo '{"clients": ['
  for k in 0 1 2 3; do
    start=$((300 * k)); stop=$((300 * k + 299 - k))
    printf '  [%s]' "$(seq -s, "$start" "$stop")"
    [[ $k -lt 3 ]] && echo ',' || echo
  done
  echo ']}'
} > "$work/split.json"
"$drift" run "$work/base.toml" --set partition.scheme=file --set 'partition.file="split.json"' > "$work/out" 2>&1
grep -q '"num_samples": 297' "$work/runs/base/partition.json"
grep -q '"num_samples": 300' "$work/runs/base/partition.json"
# The resolved scenario names the file by its absolute path, so it replays from anywhere.
grep -q "file = '$work/split.json'" "$work/runs/base/scenario.toml"

# A duplicate index: refused with the client named, exit code 2, no run directory.
echo '[[0, 1], [1], [2], [3]]' > "$work/dup.json"
rm -rf "$work/runs"
set +e
"$drift" run "$work/base.toml" --set partition.scheme=file --set 'partition.file="dup.json"' > "$work/out" 2>&1
code=$?
set -e
[[ $code -eq 2 ]]
grep -q "client 1: index 1 is already held by client 0" "$work/out"
[[ ! -d "$work/runs" ]]

# Family B: a quarter of every client's share is its test split; the test set is their union.
"$drift" run "$work/base.toml" --set data.client_test_fraction=0.25 > "$work/out" 2>&1
grep -q '"test_samples"' "$work/runs/base/partition.json"

# Family A: CReFF over a long-tailed pool gives equal client sizes.
"$drift" run "$work/base.toml" --set federation.clients=10 --set partition.scheme=dirichlet_creff \
  --set partition.long_tail=10 --set 'output.runs_dir="'"$work/creff"'"' > "$work/out" 2>&1
sizes=$(grep -o '"num_samples": [0-9]*' "$work/creff/base/partition.json" | sort -u | wc -l)
[[ $sizes -le 2 ]]  # sizes differ by at most one
# FedAU's slices: every training sample held once, and the resolved scenario names the scheme.
"$drift" run "$work/base.toml" --set federation.clients=10 --set partition.scheme=dirichlet_slices \
  --set partition.alpha=0.1 --set partition.min_client_samples=1 \
  --set 'output.runs_dir="'"$work/slices"'"' > "$work/out" 2>&1
grep -q "scheme = 'dirichlet_slices'" "$work/slices/base/scenario.toml"
held=$(grep -o '"num_samples": [0-9]*' "$work/slices/base/partition.json" | awk '{s += $2} END {print s}')
[[ $held -eq 1200 ]]
echo "cli partitions: ok"
