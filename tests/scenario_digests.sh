#!/usr/bin/env bash
# Behaviour guard: a short run of every shipped scenario must write exactly the metrics.jsonl
# and clients.csv recorded in tests/scenario_digests.txt. A refactor that changes no behaviour
# keeps every digest; a change that is meant to alter results re-records them on purpose:
#   tests/scenario_digests.sh build/tools/drift --record
# A new LibTorch major version starts its own record with --record.
# The runs are shortened (2 rounds, small data slices, small clients allowed, 2 slots) so the check takes about a
# minute; slot count does not change results (the determinism rule), so 2 is only for speed.
set -euo pipefail
drift="$1"
mode="${2:-check}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
# LibTorch 1.x and 2.x run different kernels (the last bits of a sum differ), so each major
# version has its own record; the test says which one it checks.
torch=$("$drift" --version | sed -n 's/.*(LibTorch \([0-9][0-9.]*\).*/\1/p')
case "$torch" in
  1.*) expected="$here/scenario_digests.txt" ;;
  *) expected="$here/scenario_digests-libtorch${torch%%.*}.txt" ;;
esac
echo "scenario_digests: LibTorch $torch, checking $(basename "$expected")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

short=(--set federation.rounds=2 --set data.max_train_samples=1200 --set data.max_test_samples=400
       --set evaluation.every=1 --no-progress --slots 2)

: > "$work/actual"
cd "$root"
for f in scenarios/*.toml scenarios/paper/*.toml; do
  out="$work/run-$(basename "$f" .toml)"
  # 1,200 samples cannot give FedAU's 250 clients, or the hierarchy's 100, 5 samples each.
  fewer=()
  [[ "$f" == scenarios/paper/fedau_* || "$f" == scenarios/hierarchy_* ]] && fewer=(--set federation.clients=30)
  # Small slices need a low minimum, a key of the Dirichlet and domain schemes only.
  scheme=$(sed -n 's/^scheme = "\([a-z_]*\)".*/\1/p' "$f" | head -n 1)
  [[ -z "$scheme" || "$scheme" =~ ^(dirichlet|dirichlet_slices|domains|domains_dirichlet)$ ]] &&
    fewer+=(--set partition.min_client_samples=5)
  if ! "$drift" run "$f" "${short[@]}" "${fewer[@]}" --out "$out" --no-plots 2> "$work/log"; then
    echo "scenario_digests: $f failed to run:"; tail -n 5 "$work/log"; exit 1
  fi
  for file in metrics.jsonl clients.csv; do
    echo "$(sha256sum < "$out/$file" | cut -d' ' -f1)  $f:$file" >> "$work/actual"
  done
done

if [[ "$mode" == "--record" ]]; then
  cp "$work/actual" "$expected"
  echo "scenario_digests: recorded $(wc -l < "$expected") digests in $expected"
  exit 0
fi
if ! diff -u "$expected" "$work/actual"; then
  echo "scenario_digests: results changed (lines above: - recorded, + now). If the change is"
  echo "intended, re-record with: tests/scenario_digests.sh $drift --record"
  exit 1
fi
echo "scenario_digests: $(wc -l < "$expected") digests unchanged"
