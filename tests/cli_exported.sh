#!/usr/bin/env bash
# Programs written by torch.export (PyTorch 2.6), trained through the CLI (docs/models.md). The
# exported small CNN and ResNet-8 (BatchNorm in training mode) drawn from the seed train exactly
# as drift's own small-cnn and resnet8, on 1, 2 and 4 slots, under FedBuff, through their
# features for MOON, across a resume and on a loopback worker. Programs drift cannot train as
# promised, and hostile files, are refused with one line before a run directory exists.
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
refused "$fixtures/tiny.pt2" "reads the model's features.*return (logits, features)" --set algorithm.name=moon
refused "$fixtures/dropout.pt2" "forward(x) draws random numbers (aten::dropout)"
refused "$fixtures/static_batch.pt2" "exported for batches of exactly 4 samples"
refused "$fixtures/small_batch.pt2" "takes batches of up to 16 samples.*feeds batches of 500"
refused "$fixtures/large_batch.pt2" "takes batches of at least 8 samples.*down to one sample"
refused "$fixtures/frozen.pt2" "no trainable parameters"
refused "$fixtures/int_logits.pt2" "Long logits; they must be floating point"
refused "$fixtures/seven.pt2" "gives logits of \[2, 7\] for a batch of \[2, 1, 28, 28\]; the dataset has 10 classes"
refused "$fixtures/schema9.pt2" "schema version 9.2 (by PyTorch 2.6.0[^)]*), and drift reads version 8.x"
refused "$fixtures/global.pt2" "names the global 'posix system'"
refused "$fixtures/deep.pt2" "JSON nests deeper than 100 levels"
refused "$fixtures/bomb.pt2" "declares 104857600 bytes, more than"
refused "$work/resnet8.pt2" "reads the pooled output of every stage" --set algorithm.name=fedrcl
refused "$examples/export_models.py" "not an exported program (torch.export.save writes a zip archive"
refused "$work/missing.pt2" "cannot open an exported program"
# A TorchScript file named as an exported program is told which model reads it.
refused "$tests/fixtures/pytorch26/gelu_tanh.pt" "a TorchScript module or torch.save file.*model \"torchscript\""
# Files that are no program are refused before they are read: a device that never ends, a FIFO
# that would wait for a writer, 2 GB of zeros.
mkfifo "$work/fifo.pt2"
truncate -s 2G "$work/zeros.pt2"
for file in /dev/zero "$work/fifo.pt2" "$work/zeros.pt2"; do
  start=$(date +%s%N)
  expect_code 2 timeout -s KILL 20 "$drift" validate "$work/tiny.toml" --set "model.file=\"$file\""
  elapsed_ms=$((($(date +%s%N) - start) / 1000000))
  [ "$elapsed_ms" -lt 5000 ] || { echo "$file took $elapsed_ms ms to refuse"; exit 1; }
done
rm -f "$work/zeros.pt2"
# Symbolic sizes (x.view(x.size(0), -1)) run; an op this LibTorch lacks is named.
expect_code 0 run --out "$work/reshape" --set "model.file=\"$fixtures/reshape.pt2\""
# A functional graph (run_decompositions) returns BatchNorm's new buffers: they replace the old
# ones after the step, the same on 1 and 2 slots.
case "$torch" in
  1.*)
    refused "$fixtures/rms_norm.pt2" "calls aten::rms_norm, which LibTorch $torch (the one this drift was built with)"
    refused "$fixtures/functional_bn.pt2" "calls aten::_native_batch_norm_legit_functional, which LibTorch $torch"
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

# A worker builds the model from the same file and trains the same bits.
reference
start_coordinator run --workers 1 --no-local
coordinator=$coordinator_pid
start_worker friend
expect_exit "$coordinator" 0 "$work/run.log"
expect_exit "$worker_pid" 0 "$work/friend.log"
cmp "$work/reference/metrics.jsonl" "$work/run/metrics.jsonl"
echo "cli exported: passed"
