#!/usr/bin/env bash
# Peak memory of FedKTL with private models of mixed architectures (HtFE4 at width 32) as
# the population grows, with idle clients' state in memory and on disk. 10 clients train per
# round (round-robin, so every client has trained, and holds a private model, by the end), on
# 2 slots. With simulation.client_state = "disk" the peak should stay flat: memory then holds
# the data, one model per architecture per slot and the states of the clients in training,
# not the population. Peaks are summary.json's peak_memory_mb, as ratios against the
# smallest population on disk measured here.
set -euo pipefail
drift="${1:-build/tools/drift}"
populations="${POPULATIONS:-50 100 200}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run() {  # clients store -> peak MB, mean private-state file MB
  local clients=$1 store=$2 rounds=$(( $1 / 10 ))
  cat > "$work/m.toml" <<TOML
name = "mem-$clients-$store"
seed = 1
[data]
client_test_fraction = 0.25
max_train_samples = 10000
max_test_samples = 2000
[partition]
scheme = "iid"  # the label skew does not change memory; iid splits 12,000 samples over 200 clients
[federation]
clients = $clients
rounds = $rounds
[sampler]
name = "round_robin"
clients_per_round = 10
[model]
group = "cnn4,googlenet,mobilenetv2,resnet18"
width = 32
[algorithm]
name = "fedktl"
server_epochs = 5
[training]
batch_size = 10
lr = 0.01
[devices]
cpu_slots = 2
[simulation]
client_state = "$store"
[output]
runs_dir = "$work/runs"
log_eligible = false
TOML
  "$drift" run "$work/m.toml" --no-progress > /dev/null 2>&1
  python3 - "$work/runs/mem-$clients-$store" <<'PY'
import json, os, sys
run = sys.argv[1]
peak = json.load(open(f"{run}/summary.json"))["peak_memory_mb"]
d = f"{run}/client_state"
sizes = [os.path.getsize(f"{d}/{f}") for f in os.listdir(d)] if os.path.isdir(d) else []
print(peak, sum(sizes) / 2**20 if sizes else 0.0)
PY
}

printf "%-8s %-7s %10s %8s %14s\n" clients store peak_MB ratio states_on_disk_MB
base=""
for n in $populations; do
  for store in disk memory; do
    read -r peak states < <(run "$n" "$store")
    [ -z "$base" ] && base=$peak
    printf "%-8s %-7s %10.0f %8.2f %14.0f\n" "$n" "$store" "$peak" "$(python3 -c "print($peak / $base)")" "$states"
  done
done
