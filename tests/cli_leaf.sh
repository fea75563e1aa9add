#!/usr/bin/env bash
# Natural clients from LEAF's JSON, written here by leaf_data.py: FEMNIST gives one client per
# writer with their own test samples, byte-identical on 1 and 2 slots, under FedBuff and with a
# private-model algorithm; Shakespeare trains char-lstm; [data.augment] is byte-identical across
# slot counts and reruns and changes what is trained; combinations that cannot work are refused.
set -euo pipefail
drift="$1"
here="$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/leaf_data.py" femnist "$work/femnist" --writers 12
python3 "$here/leaf_data.py" shakespeare "$work/shakespeare" --writers 4
cat > "$work/femnist.toml" <<TOML
seed = 3
[data]
dataset = "femnist"
path = "$work/femnist"
[partition]
scheme = "natural"
[federation]
clients = 12
rounds = 3
[sampler]
clients_per_round = 4
[training]
batch_size = 8
lr = 0.1
TOML
run() {  # run NAME [flags...]
  local name="$1"
  shift
  "$drift" run "$work/femnist.toml" --out "$work/$name" --no-progress --no-plots "$@" 2> "$work/$name.log" ||
    { cat "$work/$name.log"; exit 1; }
}
same() { cmp "$work/$1/metrics.jsonl" "$work/$2/metrics.jsonl" && cmp "$work/$1/clients.csv" "$work/$2/clients.csv"; }

# One client per writer, each with its own test samples; 1 and 2 slots agree.
run natural1 --set devices.cpu_slots=1
run natural2 --set devices.cpu_slots=2
same natural1 natural2
python3 - "$work/natural1/partition.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
clients = p["clients"]
assert p["scheme"] == "natural" and len(clients) == 12, p["scheme"]
writers = [c["writer"] for c in clients]
assert len(set(writers)) == 12 and writers[0] == "f0000_00" and writers[1] == "f0002_01", writers
assert all(c["test_samples"] == 4 for c in clients)
assert [c["num_samples"] for c in clients][:2] == [12, 20]
PY
grep -q '"status": "completed"' "$work/natural1/summary.json"

# A seeded sample of writers: 5 of the 12, the same ones again.
run some --set federation.clients=5 --set sampler.clients_per_round=2
run some_again --set federation.clients=5 --set sampler.clients_per_round=2
cmp "$work/some/partition.json" "$work/some_again/partition.json"
[[ $(grep -c '"writer"' "$work/some/partition.json") -eq 5 ]]

# Augmentation: the same bits on 1 and 2 slots and on a rerun, and not those of a plain run.
run aug1 --set data.augment.preset=cifar --set devices.cpu_slots=1
run aug2 --set data.augment.preset=cifar --set devices.cpu_slots=2
run aug2_again --set data.augment.preset=cifar --set devices.cpu_slots=2
same aug1 aug2
same aug2 aug2_again
if cmp -s "$work/aug1/metrics.jsonl" "$work/natural1/metrics.jsonl"; then echo "augmentation changed nothing"; exit 1; fi
grep -qE "^ *crop_padding = 4$" "$work/aug1/scenario.toml"
grep -qE "^ *flip = true$" "$work/aug1/scenario.toml"
# Per-channel normalisation (one channel here) changes what is trained, and stays deterministic.
run norm1 --set "data.augment.mean=[0.9]" --set "data.augment.std=[0.3]" --set devices.cpu_slots=1
run norm2 --set "data.augment.mean=[0.9]" --set "data.augment.std=[0.3]" --set devices.cpu_slots=2
same norm1 norm2
if cmp -s "$work/norm1/metrics.jsonl" "$work/natural1/metrics.jsonl"; then echo "normalisation changed nothing"; exit 1; fi

# FedBuff with augmentation, and a private-model algorithm on the writers' own test data.
run buff1 --set simulation.mode=fedbuff --set async.buffer_size=3 --set async.concurrency=4 \
  --set data.augment.flip=true --set devices.cpu_slots=1
run buff2 --set simulation.mode=fedbuff --set async.buffer_size=3 --set async.concurrency=4 \
  --set data.augment.flip=true --set devices.cpu_slots=2
same buff1 buff2
run private1 --set algorithm.name=lg-fedavg --set devices.cpu_slots=1
run private2 --set algorithm.name=lg-fedavg --set devices.cpu_slots=2
same private1 private2

# LEAF split by writer: the test writers never train, so the whole test split is a global test
# set; a private-model algorithm, which needs each writer's own test data, is refused.
python3 "$here/leaf_data.py" femnist "$work/by_writer_data" --writers 6 --split-by-writer
run by_writer --set data.path="$work/by_writer_data" --set federation.clients=6 --set sampler.clients_per_round=3
python3 -c "import json, sys; p = json.load(open(sys.argv[1])); assert all('test_samples' not in c for c in p['clients'])" \
  "$work/by_writer/partition.json"
if "$drift" run "$work/femnist.toml" --set data.path="$work/by_writer_data" --set federation.clients=6 \
    --set algorithm.name=lg-fedavg --out "$work/by_writer_private" --no-progress --no-plots 2> "$work/by_writer.log"; then
  echo "a private-model algorithm ran without per-writer test data"; exit 1
fi
grep -q "LEAF split it by writer" "$work/by_writer.log"

# Shakespeare: the character LSTM trains for two rounds.
cat > "$work/shakespeare.toml" <<TOML
[data]
dataset = "shakespeare"
path = "$work/shakespeare"
[partition]
scheme = "natural"
[federation]
clients = 4
rounds = 2
[sampler]
clients_per_round = 2
[model]
name = "char-lstm"
[training]
batch_size = 10
lr = 0.8
TOML
"$drift" run "$work/shakespeare.toml" --out "$work/shakespeare_run" --no-progress --no-plots 2> "$work/shakespeare.log"
grep -q '"status": "completed"' "$work/shakespeare_run/summary.json"
[[ $(grep -c '"round"' "$work/shakespeare_run/metrics.jsonl") -ge 2 ]]

# Refusals, each with its reason.
refused() {  # refused EXPECTED SCENARIO [flags...]
  local expected="$1" scenario="$2"
  shift 2
  if "$drift" run "$scenario" --out "$work/refused" --no-progress --no-plots "$@" 2> "$work/refused.log"; then
    echo "ran, but should have been refused: $*"; exit 1
  fi
  grep -qF -- "$expected" "$work/refused.log" || { echo "expected '$expected' in:"; cat "$work/refused.log"; exit 1; }
}
refused "needs a dataset whose samples name their writers" "$work/femnist.toml" --set data.dataset=fashion-mnist
refused "keeps every writer's own test split" "$work/femnist.toml" --set data.client_test_fraction=0.25
refused "would cut writers in half" "$work/femnist.toml" --set data.max_train_samples=100
refused "but the dataset has 12 writers" "$work/femnist.toml" --set federation.clients=13
refused "model 'char-lstm' reads token sequences" "$work/femnist.toml" --set model.name=char-lstm
refused "holds text: use char-lstm" "$work/shakespeare.toml" --set model.name=small-cnn
refused "data.augment crops, flips and normalises images, but dataset 'shakespeare' holds text" "$work/shakespeare.toml" \
  --set data.augment.flip=true
refused "LEAF's preprocess.sh" "$work/femnist.toml" --set data.path="$work/nowhere"
refused "unknown key 'data.augment.crop'" "$work/femnist.toml" --set data.augment.crop=4
refused "one value per image channel (1), got 3 and 3" "$work/femnist.toml" --set "data.augment.mean=[0.5,0.5,0.5]" \
  --set "data.augment.std=[0.5,0.5,0.5]"
refused "data.augment.mean and data.augment.std go together" "$work/femnist.toml" --set "data.augment.mean=[0.5]"
echo "cli_leaf: all checks passed"
