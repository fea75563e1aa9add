#!/usr/bin/env bash
# The CIFAR paper scenarios (scenarios/paper/cifar): each validates without the data, refuses
# to run naming the file it lacks and where CIFAR comes from, and runs once data.path points
# at a folder in CIFAR's binary format (written here, tiny) with its augmentation on the way.
set -euo pipefail
drift="$1"
here="$(cd "$(dirname "$0")" && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import os, random, sys
rng = random.Random(5)
def records(n, label_bytes, classes):
    out = bytearray()
    for i in range(n):
        label = i % classes
        out += bytes([label % 20, label] if label_bytes == 2 else [label])
        # Class c: a bright square whose place follows c, on noise.
        planes = bytearray(rng.randrange(60) for _ in range(3072))
        top, left = 2 + (label % 5) * 5, 2 + (label // 5 % 5) * 5
        for ch in range(3):
            for y in range(top, top + 8):
                for x in range(left, left + 8):
                    planes[ch * 1024 + y * 32 + x] = 200 + ch * 20
        out += planes
    return bytes(out)
c10 = os.path.join(sys.argv[1], "cifar10"); os.makedirs(c10)
for b in range(1, 6):
    open(os.path.join(c10, f"data_batch_{b}.bin"), "wb").write(records(120, 1, 10))
open(os.path.join(c10, "test_batch.bin"), "wb").write(records(100, 1, 10))
c100 = os.path.join(sys.argv[1], "cifar100"); os.makedirs(c100)
open(os.path.join(c100, "train.bin"), "wb").write(records(600, 2, 100))
open(os.path.join(c100, "test.bin"), "wb").write(records(100, 2, 100))
PY
cd "$here/.."
for f in scenarios/paper/cifar/*.toml; do
  grep -q ": ok (the scenario; its data was not read)" <<< "$("$drift" validate "$f" --no-data)"
  name=$(basename "$f" .toml)
  # Without the data: refused before anything is written, naming the file and the download page.
  if "$drift" run "$f" --set data.path="$work/none" --out "$work/refused" --no-progress 2> "$work/refused.log"; then
    echo "$f ran without its data"; exit 1
  fi
  grep -q "is missing $work/none/" "$work/refused.log"
  grep -q "https://www.cs.toronto.edu/~kriz/cifar.html" "$work/refused.log"
  [[ ! -e "$work/refused" ]]
  # With it: one short round through the actors, smaller models and clients for the test.
  data="$work/cifar10"
  [[ "$name" == *cifar100* ]] && data="$work/cifar100"
  # A low minimum for the small data, where the scheme takes one (dirichlet_creff does not).
  fewer=()
  grep -q '^scheme = "dirichlet"' "$f" && fewer=(--set partition.min_client_samples=5)
  "$drift" run "$f" --set data.path="$data" --set federation.rounds=1 --set training.local_epochs=1 \
    --set model.width=4 "${fewer[@]}" --set evaluation.batch_size=50 \
    --out "$work/$name" --no-progress --no-plots --slots 2 2> "$work/$name.log" || { tail -5 "$work/$name.log"; exit 1; }
  grep -q '"status": "completed"' "$work/$name/summary.json"
done
grep -qE '^ *scope = .batch.$' "$work/fedskc_cifar10_dir005/scenario.toml"
echo "cli_paper_cifar: all checks passed"
