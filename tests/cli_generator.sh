#!/usr/bin/env bash
# drift pretrain-generator end to end: a small VAE generator trains (its loss falls), exports in
# the generator convention, passes check-generator, and the same seed gives the same bytes.
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
echo "cli generator: 1 passed, 0 failed"
