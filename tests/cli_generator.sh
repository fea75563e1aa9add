#!/usr/bin/env bash
# drift pretrain-generator end to end: a small VAE generator trains (its loss falls), exports in
# the generator convention, passes check-generator, the same seed gives the same bytes, and
# FedKTL runs with it (and refuses a folder that is not a generator, or one that changed).
set -euo pipefail
drift="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
args=(--max-samples 1500 --epochs 3 --latent-dim 8 --resolution 16)
"$drift" pretrain-generator --out "$work/a" "${args[@]}" > "$work/a.log"
"$drift" pretrain-generator --out "$work/b" "${args[@]}" > /dev/null
cmp "$work/a/synthesis.pt" "$work/b/synthesis.pt"
first=$(sed -n 's/.*epoch 1\/3: loss \([0-9.]*\).*/\1/p' "$work/a.log")
last=$(sed -n 's/.*epoch 3\/3: loss \([0-9.]*\).*/\1/p' "$work/a.log")
python3 -c "import sys; sys.exit(0 if float('$last') < float('$first') else 1)" || { cat "$work/a.log"; exit 1; }
"$drift" check-generator "$work/a" > "$work/check"
grep -q "ok" "$work/check"
grep -q "3 x 16 x 16 images in \[0,1\]" "$work/check"
"$drift" pretrain-generator --out "$work/c" "${args[@]}" --seed 2 > /dev/null
if cmp -s "$work/a/synthesis.pt" "$work/c/synthesis.pt"; then echo "another seed gave the same generator"; exit 1; fi
if "$drift" pretrain-generator --out "$work/a" "${args[@]}" 2> "$work/err"; then exit 1; fi
grep -q "already exists and is not an empty folder" "$work/err"

cat > "$work/ktl.toml" <<TOML
seed = 2
[data]
max_train_samples = 900
max_test_samples = 300
client_test_fraction = 0.25
[federation]
clients = 3
rounds = 2
[sampler]
clients_per_round = 3
[model]
group = "cnn4,resnet4"
width = 8
[algorithm]
name = "fedktl"
generator = "folder"
generator_folder = "a"
server_epochs = 3
[training]
batch_size = 10
lr = 0.01
[output]
runs_dir = "$work/runs"
TOML
"$drift" run "$work/ktl.toml" --no-progress > "$work/ktl.log" 2>&1 || { cat "$work/ktl.log"; exit 1; }
python3 - "$work/runs" <<'PY'
import glob, json, sys
run = glob.glob(sys.argv[1] + "/*")[0]
rounds = [json.loads(l) for l in open(run + "/metrics.jsonl")]
assert len(rounds) == 2 and all(r["clients_evaluated"] == 3 for r in rounds), rounds
# Round 2's download holds the 10 generated 28x28 images and 8-wide latents, nothing else.
assert 10 * (784 + 8) * 4 < rounds[1]["bytes_down"] / 3 < 10 * (784 + 8) * 4 + 4096, rounds[1]["bytes_down"]
# The folder, relative to the scenario, is recorded absolute with the digest of its files.
resolved = open(run + "/scenario.toml").read()
assert "generator_folder = '" + sys.argv[1].rsplit("/", 1)[0] + "/a'" in resolved, resolved
assert "generator_digest = " in resolved, resolved
PY
refused() {  # refused WHAT TEXT --set ...: the run is refused with TEXT in its message
  local what="$1" text="$2"; shift 2
  if "$drift" run "$work/ktl.toml" "$@" --no-progress > "$work/bad.log" 2>&1; then echo "$what: ran"; exit 1; fi
  grep -qF "$text" "$work/bad.log" || { echo "$what:"; cat "$work/bad.log"; exit 1; }
}
refused "not a generator folder" "generator.json" --set 'algorithm.generator_folder="'"$work"'/runs"'
refused "no folder" 'needs algorithm.generator_folder' --set 'algorithm.generator_folder=""'
refused "a folder beside random" 'read only under algorithm.generator = "folder"' --set algorithm.generator=random
refused "a path as the generator" 'random' --set 'algorithm.generator="'"$work"'/a"'
# A generator folder whose files changed since the run started is refused where the run's
# scenario is read again (a resume, a worker).
run=$(ls -d "$work/runs"/*)
echo >> "$work/a/generator.json"
if "$drift" validate "$run/scenario.toml" --no-data > "$work/bad.log" 2>&1; then echo "changed folder: accepted"; exit 1; fi
grep -q "generator_digest" "$work/bad.log" || { cat "$work/bad.log"; exit 1; }
echo "cli generator: 1 passed, 0 failed"
