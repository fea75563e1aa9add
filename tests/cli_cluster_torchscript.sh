#!/usr/bin/env bash
# A TorchScript model on a loopback cluster: a worker builds the module from the same file and
# the run is the single-process one; a worker whose file has other bytes refuses the scenario.
source "$(dirname "$0")/cluster_lib.sh"
write_module="$2"
"$write_module" "$work/net.pt"
cat >> "$work/tiny.toml" <<TOML
[model]
name = "torchscript"
file = "net.pt"
init = "seed"
TOML
reference

start_coordinator run --workers 1 --no-local
coordinator=$coordinator_pid
cp "$work/net.pt" "$work/net.pt.saved"
"$write_module" "$work/net.pt" --no-features
start_worker stale
expect_exit "$worker_pid" 2 "$work/stale.log"
grep -q "model.file $work/net.pt has digest [0-9a-f]*, but the scenario records" "$work/stale.log"
wait_for_line "$work/run.log" "worker 'stale' left before it was ready: it could not set up the run"

cp "$work/net.pt.saved" "$work/net.pt"
start_worker friend
expect_exit "$coordinator" 0 "$work/run.log"
expect_exit "$worker_pid" 0 "$work/friend.log"
cmp "$work/reference/metrics.jsonl" "$work/run/metrics.jsonl"
echo "cli cluster torchscript: passed"
