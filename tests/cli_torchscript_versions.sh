#!/usr/bin/env bash
# TorchScript modules saved by PyTorch 2.6 (tests/fixtures/pytorch26, with the script that wrote
# them), through the CLI of whichever LibTorch drift was built with (docs/torchscript.md#versions):
#  - LibTorch 1.x (Debian 12) refuses the modules that call ops it lacks with one line naming
#    the op, the file's format version and its own LibTorch, before any run directory exists;
#    it trains gelu's newer schema, saved in the newer archive layout (ARCHIVE/.data/version);
#  - LibTorch 2.x (Debian 13) trains every one of them, the same on 1 and 2 slots;
#  - both refuse the modules that draw random numbers, and take attention built with dropout 0.
set -euo pipefail
drift="$1"
fixtures="$(cd "$(dirname "$0")" && pwd)/fixtures/pytorch26"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/cli_lib.sh"

torch=$("$drift" --version | sed -n 's/.*(LibTorch \([0-9][0-9.]*\).*/\1/p')
[[ -n "$torch" ]] || { echo "drift --version names no LibTorch"; exit 1; }
cat > "$work/tiny.toml" <<TOML
name = "versions"
seed = 3
[data]
max_train_samples = 600
max_test_samples = 200
[federation]
clients = 3
rounds = 2
[sampler]
clients_per_round = 2
[model]
name = "torchscript"
[output]
runs_dir = "$work/runs"
TOML
run() { "$drift" run "$work/tiny.toml" --no-progress --no-plots --set "model.file=$fixtures/$1.pt" "${@:2}"; }

trains() {
  expect_code 0 run "$1" --slots 1 --out "$work/$1-1"
  expect_code 0 run "$1" --slots 2 --out "$work/$1-2"
  same "$work/$1-1" "$work/$1-2"
}

refused() {  # refused NAME TEXT...: exit 2, one line holding each TEXT, no run directory
  local name=$1
  shift
  expect_code 2 run "$name" --out "$work/$name-refused"
  for text in "$@"; do says "$text"; done
  [[ $(wc -l < "$work/last.err") -eq 1 ]] || { echo "more than one line:"; cat "$work/last.err"; exit 1; }
  [[ ! -e "$work/$name-refused" ]] || { echo "a refused run left its directory"; exit 1; }
}

trains gelu_tanh
refused dropout "forward(x) draws random numbers (aten::dropout)"
case "$torch" in
  1.*)
    for name in attention multihead multihead_dropout; do
      refused "$name" "calls aten::scaled_dot_product_attention, which LibTorch $torch (the one this drift was built with)" \
        "the file records format version 3, and this LibTorch reads versions 1 to 10" \
        "save it with PyTorch $torch" "docs/install.md#your-own-libtorch"
    done
    refused rms_norm "calls aten::rms_norm, which LibTorch $torch"
    ;;
  *)
    for name in attention multihead rms_norm; do trains "$name"; done
    refused multihead_dropout "forward(x) draws random numbers (aten::"
    ;;
esac
echo "cli_torchscript_versions: LibTorch $torch: the PyTorch 2.6 modules are trained or refused as documented"
