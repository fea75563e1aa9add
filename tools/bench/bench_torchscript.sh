#!/usr/bin/env bash
# Models from TorchScript files (docs/torchscript.md): what running a module through LibTorch's
# TorchScript interpreter costs against drift's own C++ model. The quickstart for ROUNDS rounds
# on SLOTS slots, REPS times with the built-in small-cnn and REPS times with its TorchScript
# copy (written from C++, weights drawn from the seed), alternating so that both see the same
# machine. Per run the median wall seconds per round over rounds 2..N (timings.jsonl); reports
# the medians over runs and their ratio, and checks that the metrics are byte-identical.
#   bench_torchscript.sh DRIFT WRITE_SCRIPT_MODULE      (REPS=3, ROUNDS=8, SLOTS=2 by default)
set -euo pipefail
drift="${1:-build/tools/drift}"
write_module="${2:-build/tools/script_modules/write_script_module}"
here="$(cd "$(dirname "$0")" && pwd)"
reps="${REPS:-3}" rounds="${ROUNDS:-8}" slots="${SLOTS:-2}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$write_module" "$work/small_cnn.pt"

source "$here/bench_lib.sh"

declare -A per_run=([builtin]="" [script]="")
for rep in $(seq "$reps"); do
  for kind in builtin script; do
    model=(--set model.name=small-cnn)
    [[ $kind == script ]] && model=(--set model.name=torchscript --set "model.file=\"$work/small_cnn.pt\"" --set model.init=seed)
    out="$work/$kind-$rep"
    "$drift" run "$here/../../scenarios/quickstart.toml" --out "$out" --no-progress --quiet --no-plots \
      --set federation.rounds="$rounds" --set devices.cpu_slots="$slots" "${model[@]}"
    per_run[$kind]+="$(median_round "$out") "
    cmp "$work/builtin-1/metrics.jsonl" "$out/metrics.jsonl" || { echo "the TorchScript copy changed the metrics"; exit 1; }
  done
done
python3 - "${per_run[builtin]}" "${per_run[script]}" << 'PY'
import statistics, sys
builtin = [float(x) for x in sys.argv[1].split()]
script = [float(x) for x in sys.argv[2].split()]
print(f"built-in small-cnn:  median {statistics.median(builtin):.3f} s/round (runs {', '.join(f'{x:.3f}' for x in builtin)})")
print(f"TorchScript copy:    median {statistics.median(script):.3f} s/round (runs {', '.join(f'{x:.3f}' for x in script)})")
print(f"ratio TorchScript / built-in: {statistics.median(script) / statistics.median(builtin):.3f}")
PY
echo "metrics.jsonl identical in all $((2 * reps)) runs"
