#!/usr/bin/env bash
# Write failures: a disk that fills mid-run, and one full from the start, end the run with one
# line naming the file, exit code 1, no summary.json cut short (whole files are written to a
# temporary name and renamed). Needs a small tmpfs: skipped (exit 77) where it cannot mount one.
set -euo pipefail
drift="$1"
work=$(mktemp -d)
disk="$work/disk"
mkdir -p "$disk"
cleanup() { umount "$disk" 2> /dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
if ! mount -t tmpfs -o size=300k tmpfs "$disk" 2> /dev/null; then
  echo "cli disk full: skipped: cannot mount a tmpfs here (needs root)"
  exit 77
fi
cat > "$work/tiny.toml" <<TOML
[data]
max_train_samples = 1200
max_test_samples = 400
[federation]
clients = 4
rounds = 400
[sampler]
fraction = 0.5
TOML

# Full mid-run: the run stops at the first write that fails.
if "$drift" run "$work/tiny.toml" --out "$disk/run" --no-progress --no-plots 2> "$work/err"; then
  echo "a run on a full disk reported success"; exit 1
else
  code=$?
fi
[[ $code -eq 1 ]] || { echo "expected exit code 1, got $code"; exit 1; }
grep -q "run failed: $disk/run/.*: cannot write: No space left on device" "$work/err"
[[ ! -e "$disk/run/summary.json" ]] || { echo "a summary.json was left on a full disk"; exit 1; }
ls "$disk/run"/*.partial 2> /dev/null && { echo "a temporary file was left behind"; exit 1; }
[[ $(wc -l < "$disk/run/metrics.jsonl") -lt 400 ]]

# Full from the start: one line, exit code 1, before any training.
if "$drift" run "$work/tiny.toml" --out "$disk/run2" --no-progress 2> "$work/err2"; then
  echo "a run on a full disk reported success"; exit 1
else
  code=$?
fi
[[ $code -eq 1 ]] || { echo "expected exit code 1, got $code"; exit 1; }
[[ $(wc -l < "$work/err2") -eq 1 ]] || { echo "more than one line:"; cat "$work/err2"; exit 1; }
grep -q "^drift: error: $disk/run2/scenario.toml: cannot write: No space left on device" "$work/err2"
echo "cli disk full: 1 passed, 0 failed"
