#!/usr/bin/env bash
# A model brought as a TorchScript file, through the CLI. The module (written from C++, so no
# Python is needed) copies small-cnn: drawn from the seed it trains exactly as the built-in
# model, on 1 and 2 slots, under FedBuff, through features(x) for MOON and across a resume (on
# workers: cli_model_file_workers). A changed file and modules that cannot serve are refused
# before anything is written, as are files that crash LibTorch's reader or never return.
source "$(dirname "$0")/cluster_lib.sh"
source "$(dirname "$0")/cli_lib.sh"
write_module="$2"

"$write_module" "$work/net.pt"
"$write_module" "$work/plain.pt" --no-features
"$write_module" "$work/seven.pt" --classes 7
cat >> "$work/tiny.toml" <<TOML
[model]
name = "torchscript"
file = "net.pt"
init = "seed"
TOML
run() { "$drift" run "$work/tiny.toml" --no-progress "$@"; }

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
expect_code 2 "$drift" validate "$work/tiny.toml" --set model.file=cut.pt
says "cut.pt: not a TorchScript module"
# A file that crashes LibTorch's TorchScript reader (a fuzzer's find) or a module that never
# returns: a separate drift reads and probes the file first, so each is refused with one line.
cp "$(dirname "$0")/../tools/fuzz/corpus/fuzz_torchscript/importer-crash" "$work/crash.pt"
expect_code 2 "$drift" validate "$work/tiny.toml" --set model.file=crash.pt
says "crash.pt: "
[[ $(wc -l < "$work/last.err") -eq 1 ]] || { echo "a refusal of more than one line:"; cat "$work/last.err"; exit 1; }
"$write_module" "$work/endless.pt" --endless
DRIFT_CHECK_SECONDS=3 expect_code 2 run --out "$work/endless" --set model.file=endless.pt
# Refused at the probe, or already while reading where a loaded machine (or LibTorch 2.x's
# slower start) takes the 3 s for that: either way the limit names the phase.
says "endless.pt: reading it\( and running it on a probe batch of the dataset's shape\)\? did not finish within 3 s"
[[ ! -e "$work/endless" ]] || { echo "a refused run left its directory"; exit 1; }
expect_code 0 "$drift" check-model "$work/net.pt" --input 1,28,28 --classes 10 --features
grep -q "features(x) runs; 80202 trainable values" "$work/last.out"
expect_code 2 "$drift" check-model "$work/seven.pt" --input 1,28,28 --classes 10
says "forward(x) gives \[2, 7\]"
expect_code 2 "$drift" validate "$work/tiny.toml" --set model.file=missing.pt
says "missing.pt: cannot open a TorchScript module"
# Files that are no module are refused before they are read (issue 48): a device that never
# ends, a FIFO that would wait for a writer, 2 GB of zeros, and a zip header followed by zeros.
mkfifo "$work/fifo.pt"
truncate -s 2G "$work/zeros.pt"
{ printf 'PK\003\004'; head -c 100000 /dev/zero; } > "$work/header-only.pt"
truncate -s 2G "$work/header-only.pt"
# Each is refused for what its first bytes or its kind say, never by a clock: a read of 2 GB or a
# wait for a writer would run into the kill (how fast a refusal is belongs in benchmarks).
refuse_unread() {
  expect_code 2 timeout -s KILL 20 "$drift" validate "$work/tiny.toml" --set "model.file=\"$1\""
  says "$2"
}
refuse_unread /dev/zero "is not a regular file (a FIFO, device or socket)"
refuse_unread "$work/fifo.pt" "is not a regular file (a FIFO, device or socket)"
refuse_unread "$work/zeros.pt" "this file is not one"
refuse_unread "$work/header-only.pt" "no end of the zip's central directory"
expect_code 2 timeout -s KILL 20 "$drift" check-model "$work/fifo.pt" --input 1,28,28 --classes 10
says "is not a regular file (a FIFO, device or socket)"
rm -f "$work/zeros.pt" "$work/header-only.pt"
# Modules drift cannot run as promised are refused at validation and by check-model: one that
# draws random numbers (dropout in a submodule), integer logits, nothing to train.
for flaw in dropout int-logits frozen; do
  "$write_module" "$work/$flaw.pt" --flaw $flaw
  expect_code 2 "$drift" validate "$work/tiny.toml" --set "model.file=\"$work/$flaw.pt\""
  expect_code 2 "$drift" check-model "$work/$flaw.pt" --input 1,28,28 --classes 10
done
says "no trainable parameters"
expect_code 2 "$drift" check-model "$work/dropout.pt" --input 1,28,28 --classes 10
says "forward(x) draws random numbers (aten::dropout)"
expect_code 2 "$drift" check-model "$work/int-logits.pt" --input 1,28,28 --classes 10
says "Long logits; they must be floating point"
expect_code 2 "$drift" validate "$work/tiny.toml" --set algorithm.name=fedrcl
says "reads the pooled output of every stage"
expect_code 2 "$drift" validate "$work/tiny.toml" --set model.digest=0123456789abcdef
says "but the scenario records model.digest = \"0123456789abcdef\""
expect_code 0 "$drift" validate "$work/tiny.toml" --set model.name=small-cnn
grep -q "model.file does nothing without a model read from a file" "$work/last.out" "$work/last.err"
echo "cli torchscript: passed"
