#!/usr/bin/env bash
# training.local_steps_pass = "persistent" from the CLI (docs/scenarios.md#local-steps): each
# client's shuffled pass runs on across its rounds, its place kept in its state, so the run is the
# same on 1 and 2 slots, interrupted and resumed, and with a worker process on loopback; it differs
# from the fresh pass; the key does nothing without local_steps, and packs, which carry no state,
# are turned down with the reason.
source "$(dirname "$0")/cluster_lib.sh"
source "$(dirname "$0")/cli_lib.sh"
cat > "$work/p.toml" <<TOML
seed = 5
[data]
max_train_samples = 1200
max_test_samples = 400
[federation]
clients = 8
rounds = 4
[sampler]
clients_per_round = 4
[training]
local_steps = 3
batch_size = 16
local_steps_pass = "persistent"
[evaluation]
chunk_size = 100
TOML
run() { "$drift" run "$work/p.toml" --no-progress --no-plots "$@"; }

same_on_slots_and_resume run
grep -q "3 local step(s) from a pass that runs on across rounds" "$work/one/log.txt"

# The fresh pass trains on other batches.
run --slots 1 --out "$work/fresh" --set training.local_steps_pass=fresh 2> /dev/null
if cmp -s "$work/one/metrics.jsonl" "$work/fresh/metrics.jsonl"; then
  echo "a persistent pass wrote the fresh pass's metrics"
  exit 1
fi

# A worker process trains with the clients' states it is sent.
launch_coordinator worker "$work/worker.log" run "$work/p.toml" --out "$work/worker" --workers 1 --no-local --no-plots
coordinator=$coordinator_pid
start_worker w1
expect_exit "$coordinator" 0 "$work/worker.log"
expect_exit "$worker_pid" 0 "$work/w1.log"
same "$work/one" "$work/worker"

# drift validate says where the key does nothing.
warns() { grep -q -- "$1" "$work/last.out" || { echo "expected '$1' in:"; cat "$work/last.out"; exit 1; }; }
expect_code 0 "$drift" validate "$work/p.toml" --set training.local_steps=0
warns "warning: training.local_steps_pass does nothing without training.local_steps"
expect_code 0 "$drift" validate "$work/p.toml" --set devices.pack=4
warns "devices.pack does nothing here: training.local_steps_pass = \"persistent\" keeps each client's place"
echo "cli persistent pass: passed"
