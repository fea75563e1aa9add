#!/usr/bin/env bash
# A model brought as a TorchScript file, through the CLI. The module (written from C++, so no
# Python is needed) copies small-cnn: drawn from the seed it trains exactly as the built-in
# model, on 1 and 2 slots, under FedBuff, through features(x) for MOON, and across a resume.
# A changed file and modules that cannot serve are refused before anything is written.
set -euo pipefail
drift="$1"
write_module="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/cli_lib.sh"

"$write_module" "$work/net.pt"
"$write_module" "$work/plain.pt" --no-features
"$write_module" "$work/seven.pt" --classes 7
cat > "$work/net.toml" <<TOML
seed = 5
[data]
max_train_samples = 1200
max_test_samples = 400
[federation]
clients = 6
rounds = 3
[sampler]
clients_per_round = 3
[model]
name = "torchscript"
file = "net.pt"
init = "seed"
[output]
runs_dir = "$work/runs"
TOML
run() { "$drift" run "$work/net.toml" --no-progress "$@"; }

# The copy is the built-in model, bit for bit, whatever the slots.
expect_code 0 run --out "$work/script" --slots 1
expect_code 0 run --out "$work/builtin" --slots 1 --set model.name=small-cnn
same "$work/script" "$work/builtin"
expect_code 0 run --out "$work/script2" --slots 2
same "$work/script" "$work/script2"
grep -q "^file = '$work/net.pt'" "$work/script/scenario.toml"
grep -q "^digest = '[0-9a-f]\{16\}'" "$work/script/scenario.toml"

# MOON reads features(x) and puts its projection and head on them, as on the built-in model.
expect_code 0 run --out "$work/moon" --slots 2 --set algorithm.name=moon
expect_code 0 run --out "$work/moon-builtin" --slots 1 --set algorithm.name=moon --set model.name=small-cnn
same "$work/moon" "$work/moon-builtin"
expect_code 0 run --out "$work/fedbuff" --slots 2 --set simulation.mode=fedbuff --set async.buffer_size=2
expect_code 0 run --out "$work/fedbuff-builtin" --slots 1 --set simulation.mode=fedbuff --set async.buffer_size=2 \
  --set model.name=small-cnn
same "$work/fedbuff" "$work/fedbuff-builtin"

# An interrupted run resumes to the same bytes; a file changed in between is refused.
expect_code 130 run --out "$work/cut" --slots 2 --set checkpoint.every=1 --stop-after 1
expect_code 0 "$drift" resume "$work/cut" --no-progress
same "$work/script" "$work/cut"
expect_code 130 run --out "$work/cut2" --slots 1 --set checkpoint.every=1 --stop-after 1
cp "$work/net.pt" "$work/net.pt.saved"
"$write_module" "$work/net.pt" --no-features
expect_code 2 "$drift" resume "$work/cut2" --no-progress
says "has digest [0-9a-f]*, but the scenario records model.digest"
says "the file changed since"
cp "$work/net.pt.saved" "$work/net.pt"

# Modules that cannot serve, each refused with one line before a run directory exists.
expect_code 2 run --out "$work/no-features" --set model.file=plain.pt --set algorithm.name=moon
says "algorithm 'moon' reads the model's features.*add a method features(self, x)"
expect_code 2 run --out "$work/seven" --set model.file=seven.pt
says "forward(x) gives \[2, 7\] for a batch of \[2, 1, 28, 28\]; the dataset has 10 classes"
[[ ! -e "$work/seven" ]] || { echo "a refused run left its directory"; exit 1; }
head -c 300 "$work/net.pt" > "$work/cut.pt"
expect_code 2 "$drift" validate "$work/net.toml" --set model.file=cut.pt
says "cut.pt: not a TorchScript module"
expect_code 2 "$drift" validate "$work/net.toml" --set model.file=missing.pt
says "missing.pt: cannot open TorchScript module"
expect_code 2 "$drift" validate "$work/net.toml" --set algorithm.name=fedrcl
says "reads the pooled output of every stage"
expect_code 2 "$drift" validate "$work/net.toml" --set model.digest=0123456789abcdef
says "but the scenario records model.digest = \"0123456789abcdef\""
expect_code 0 "$drift" validate "$work/net.toml" --set model.name=small-cnn
grep -q "model.file does nothing without model \"torchscript\"" "$work/last.out" "$work/last.err"
echo "cli torchscript: passed"
