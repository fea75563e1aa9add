#!/usr/bin/env bash
# Write failures: a disk that fills mid-run ends the run with one line naming the file, exit
# code 1, no summary.json cut short (whole files are written to a temporary name and renamed),
# and a run directory that resumes from its last checkpoint once space is freed, to the same
# results as a run that never failed. A disk full from the start: one line, exit 1. Needs a
# small tmpfs: skipped (exit 77) where it cannot mount one.
set -euo pipefail
drift="$1"
work=$(mktemp -d)
disk="$work/disk"
mkdir -p "$disk"
cleanup() { umount "$disk" 2> /dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
if ! mount -t tmpfs -o size=800k tmpfs "$disk" 2> /dev/null; then
  echo "cli disk full: skipped: cannot mount a tmpfs here (needs root)"
  exit 77
fi
cat > "$work/tiny.toml" <<TOML
[data]
max_train_samples = 400
max_test_samples = 100
[federation]
clients = 4
rounds = 200
[sampler]
fraction = 0.5
[checkpoint]
every = 20
TOML

# Full mid-run: the run stops at the first write that fails.
if "$drift" run "$work/tiny.toml" --out "$disk/run" --no-progress --no-plots 2> "$work/err"; then
  echo "a run on a full disk reported success"; exit 1
else
  code=$?
fi
[[ $code -eq 1 ]] || { echo "expected exit code 1, got $code"; cat "$work/err"; exit 1; }
# The disk may fill on an appended file or on a checkpoint's.
grep -Eq "run failed: (checkpoint: )?$disk/run/.*: cannot write: No space left on device" "$work/err"
[[ ! -e "$disk/run/summary.json" ]] || grep -q '"status": "stopped"' "$disk/run/summary.json"
ls "$disk/run"/*.partial "$disk/run/checkpoint.partial" 2> /dev/null && { echo "a temporary file was left behind"; exit 1; }
[[ -d "$disk/run/checkpoint" ]] || { echo "no checkpoint survived the full disk"; exit 1; }
[[ $(wc -l < "$disk/run/metrics.jsonl") -lt 200 ]]

# Space freed: the run resumes from its last checkpoint and ends as if nothing had happened.
mount -o remount,size=64m "$disk"
"$drift" resume "$disk/run" --no-progress --no-plots 2> "$work/resume.log" || { cat "$work/resume.log"; exit 1; }
"$drift" run "$work/tiny.toml" --out "$work/reference" --no-progress --no-plots 2> /dev/null
for f in metrics.jsonl clients.csv participation.csv; do cmp "$work/reference/$f" "$disk/run/$f"; done
grep -q '"status": "completed"' "$disk/run/summary.json"

# Full from the start: one line, exit code 1, before any training.
dd if=/dev/zero of="$disk/filler" bs=1M 2> /dev/null || true
if "$drift" run "$work/tiny.toml" --out "$disk/run2" --no-progress 2> "$work/err2"; then
  echo "a run on a full disk reported success"; exit 1
else
  code=$?
fi
[[ $code -eq 1 ]] || { echo "expected exit code 1, got $code"; exit 1; }
[[ $(wc -l < "$work/err2") -eq 1 ]] || { echo "more than one line:"; cat "$work/err2"; exit 1; }
grep -q "^drift: error: $disk/run2/scenario.toml: cannot write: No space left on device" "$work/err2"
echo "cli disk full: 2 passed, 0 failed"
