#!/usr/bin/env bash
# Programs from torch.export (docs/models.md): what running an exported graph node by node
# through LibTorch's dispatcher costs against drift's own C++ model of the same layers. The
# quickstart for ROUNDS rounds on SLOTS slots, REPS times each with the built-in model and its
# exported copy (docs/examples/exported, weights drawn from the seed), alternating so that both
# see the same machine: small-cnn, and resnet8 of width 16 (BatchNorm). Per run the median wall
# seconds per round over rounds 2..N (timings.jsonl); reports the medians over runs and their
# ratio, and checks that each pair wrote byte-identical metrics.
#   bench_exported.sh DRIFT      (REPS=3, ROUNDS=8, SLOTS=2 by default)
set -euo pipefail
drift="${1:-build/tools/drift}"
here="$(cd "$(dirname "$0")" && pwd)"
examples="$here/../../docs/examples/exported"
reps="${REPS:-3}" rounds="${ROUNDS:-8}" slots="${SLOTS:-2}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$here/bench_lib.sh"

compare() {  # compare LABEL FILE BUILTIN_FLAGS...
  local label=$1 file=$2
  shift 2
  local builtin="" exported=""
  for rep in $(seq "$reps"); do
    for kind in builtin exported; do
      local model=("$@")
      [[ $kind == exported ]] && model=(--set model.name=exported --set "model.file=\"$examples/$file\"" --set model.init=seed)
      local out="$work/$label-$kind-$rep"
      "$drift" run "$here/../../scenarios/quickstart.toml" --out "$out" --no-progress --quiet --no-plots \
        --set federation.rounds="$rounds" --set devices.cpu_slots="$slots" "${model[@]}"
      [[ $kind == builtin ]] && builtin+="$(median_round "$out") " || exported+="$(median_round "$out") "
      cmp "$work/$label-builtin-1/metrics.jsonl" "$out/metrics.jsonl" || { echo "$label: the exported copy changed the metrics"; exit 1; }
    done
  done
  python3 - "$label" "$builtin" "$exported" << 'PY'
import statistics, sys
label, builtin, exported = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
print(f"{label}: built-in median {statistics.median(builtin):.3f} s/round, exported {statistics.median(exported):.3f} s/round, "
      f"ratio exported / built-in {statistics.median(exported) / statistics.median(builtin):.3f}")
PY
}
compare small-cnn small_cnn.pt2 --set model.name=small-cnn
compare resnet8-w16 resnet8.pt2 --set model.name=resnet8 --set model.width=16
echo "metrics.jsonl identical between built-in and exported in all $((4 * reps)) runs"
