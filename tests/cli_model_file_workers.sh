#!/usr/bin/env bash
# Models read from files, on loopback workers: a worker builds the model from the same file and
# trains the same bits, a TorchScript module and a torch.export program alike; a worker whose
# file has other bytes refuses the scenario. The rest of each model kind's CLI test
# (cli_torchscript, cli_exported) needs no workers, so only this part waits for the cluster lock.
source "$(dirname "$0")/cluster_lib.sh"
write_module="$2"
examples="$(cd "$(dirname "$0")/../docs/examples/exported" && pwd)"
cp "$work/tiny.toml" "$work/plain.toml"

# TorchScript.
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

# A program torch.export wrote (ResNet-8: BatchNorm's buffers travel too).
rm -rf "$work/reference" "$work/run"
cp "$examples/resnet8.pt2" "$work/"
cp "$work/plain.toml" "$work/tiny.toml"
cat >> "$work/tiny.toml" <<TOML
[model]
name = "exported"
file = "resnet8.pt2"
init = "file"
TOML
reference
start_coordinator run --workers 1 --no-local
coordinator=$coordinator_pid
start_worker friend
expect_exit "$coordinator" 0 "$work/run.log"
expect_exit "$worker_pid" 0 "$work/friend.log"
cmp "$work/reference/metrics.jsonl" "$work/run/metrics.jsonl"
echo "cli model file workers: passed"
