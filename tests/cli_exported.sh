#!/usr/bin/env bash
# Programs written by torch.export (PyTorch 2.6), trained through the CLI (docs/models.md). The
# exported small CNN and ResNet-8 (BatchNorm in training mode) drawn from the seed train exactly
# as drift's own small-cnn and resnet8, on 1, 2 and 4 slots, under FedBuff, through their
# features for MOON and across a resume (on workers: cli_model_file_workers). Programs drift
# cannot train as promised, and hostile files, are refused with one line before a run directory
# exists.
source "$(dirname "$0")/cluster_lib.sh"
source "$(dirname "$0")/cli_lib.sh"
tests="$(cd "$(dirname "$0")" && pwd)"
examples="$tests/../docs/examples/exported"
fixtures="$tests/fixtures/exported"
torch=$("$drift" --version | sed -n 's/.*(LibTorch \([0-9][0-9.]*\).*/\1/p')
[[ -n "$torch" ]] || { echo "drift --version names no LibTorch"; exit 1; }
cp "$examples/small_cnn.pt2" "$examples/resnet8.pt2" "$work/"
cat >> "$work/tiny.toml" <<TOML
[model]
name = "exported"
file = "small_cnn.pt2"
init = "seed"
TOML
run() { "$drift" run "$work/tiny.toml" --no-progress --no-plots "$@"; }

# The exported small CNN is drift's small-cnn, bit for bit, whatever the slots.
expect_code 0 run --out "$work/exported" --slots 1
expect_code 0 run --out "$work/builtin" --slots 1 --set model.name=small-cnn
same "$work/exported" "$work/builtin"
expect_code 0 run --out "$work/exported4" --slots 4
same "$work/exported" "$work/exported4"
grep -q "^name = 'exported'" "$work/exported/scenario.toml"
grep -q "^digest = '[0-9a-f]\{16\}'" "$work/exported/scenario.toml"

# ResNet-8 with BatchNorm: running statistics and the step counter updated in training, left
# alone in evaluation, as drift's own resnet8 of the same width.
expect_code 0 run --out "$work/resnet" --slots 2 --set model.file=resnet8.pt2
expect_code 0 run --out "$work/resnet-builtin" --slots 1 --set model.name=resnet8 --set model.width=16
same "$work/resnet" "$work/resnet-builtin"

# MOON reads the features forward(x) returns and puts its projection and head on them.
expect_code 0 run --out "$work/moon" --slots 2 --set algorithm.name=moon
expect_code 0 run --out "$work/moon-builtin" --slots 1 --set algorithm.name=moon --set model.name=small-cnn
same "$work/moon" "$work/moon-builtin"
expect_code 0 run --out "$work/fedbuff" --slots 2 --set simulation.mode=fedbuff --set async.buffer_size=2
expect_code 0 run --out "$work/fedbuff-builtin" --slots 1 --set simulation.mode=fedbuff --set async.buffer_size=2 \
  --set model.name=small-cnn
same "$work/fedbuff" "$work/fedbuff-builtin"

# Its own weights, as the file holds them: on 4 slots, and on 2 stopped after a round and
# resumed on 1, to the same bytes, BatchNorm's buffers included.
file_weights=(--set model.file=resnet8.pt2 --set model.init=file)
expect_code 0 run --out "$work/resnet-file" --slots 4 "${file_weights[@]}"
expect_code 130 run --out "$work/cut" --slots 2 "${file_weights[@]}" --set checkpoint.every=1 --stop-after 1
expect_code 0 "$drift" resume "$work/cut" --no-progress --no-plots --slots 1
same "$work/resnet-file" "$work/cut"
cmp -s "$work/resnet-file/metrics.jsonl" "$work/resnet/metrics.jsonl" && { echo "init = file trained as init = seed"; exit 1; }

# Programs that cannot serve, each refused with one line before a run directory exists.
refused() {  # refused FILE TEXT...: `drift run` with model.file=FILE exits 2 saying each TEXT
  local file=$1 out="$work/refused-$(basename "$1")"
  shift
  expect_code 2 run --out "$out" --set "model.file=\"$file\"" "${@:2}"
  says "$1"
  [[ $(wc -l < "$work/last.err") -eq 1 ]] || { echo "more than one line:"; cat "$work/last.err"; exit 1; }
  [[ ! -e "$out" ]] || { echo "a refused run left its directory"; exit 1; }
}
# One refusal of each kind through the CLI (test_exported_refusals has every committed one): a
# hostile file when it is read, the scenario around a program, the probe batch in the isolated
# check, and a device that never ends.
refused "$fixtures/global.pt2" "names the global 'posix system'"
refused "$fixtures/small_batch.pt2" "takes batches of up to 16 samples.*feeds batches of 500"
refused "$fixtures/seven.pt2" "gives logits of \[2, 7\] for a batch of \[2, 1, 28, 28\]; the dataset has 10 classes"
expect_code 2 timeout -s KILL 20 "$drift" validate "$work/tiny.toml" --set 'model.file="/dev/zero"'
says "is not a regular file (a FIFO, device or socket)"
# Symbolic sizes (x.view(x.size(0), -1)) run; an op this LibTorch lacks is named.
expect_code 0 run --out "$work/reshape" --set "model.file=\"$fixtures/reshape.pt2\""
# A functional graph (run_decompositions) returns BatchNorm's new buffers: they replace the old
# ones after the step, the same on 1 and 2 slots.
case "$torch" in
  1.*)
    refused "$fixtures/rms_norm.pt2" "calls aten::rms_norm, which LibTorch $torch (the one this drift was built with)"
    ;;
  *)
    expect_code 0 run --out "$work/rms_norm" --set "model.file=\"$fixtures/rms_norm.pt2\""
    expect_code 0 run --out "$work/functional1" --slots 1 --set "model.file=\"$fixtures/functional_bn.pt2\""
    expect_code 0 run --out "$work/functional2" --slots 2 --set "model.file=\"$fixtures/functional_bn.pt2\""
    same "$work/functional1" "$work/functional2"
    grep -q '"divergence"' "$work/functional1/metrics.jsonl" && { echo "a functional graph's updates failed"; exit 1; }
    ;;
esac
expect_code 0 "$drift" check-model "$work/resnet8.pt2" --input 1,28,28 --classes 10 --features
grep -q "an exported program, model \"exported\"" "$work/last.out"
grep -q "features(x) runs; 77754 trainable values" "$work/last.out"
# A pack is a speed hint: a program does not pack, and validation says so.
expect_code 0 "$drift" validate "$work/tiny.toml" --set devices.pack=4
grep -q "devices.pack does nothing here: model 'exported' does not pack" "$work/last.out" "$work/last.err"

echo "cli exported: passed"
