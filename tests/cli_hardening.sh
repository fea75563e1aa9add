#!/usr/bin/env bash
# Nothing corrupts a run (docs/checkpoints.md#locks, #integrity): one process at a time in a run
# or study directory, released when its holder dies; a killed study takes its runs with it and
# its rerun equals an uninterrupted study; a checkpoint is checksummed and bound to its run, and
# a refused resume writes nothing; a world where nobody is ever online ends, not "completes";
# a signal while figures are drawn exits 130 and leaves no half-drawn file; absurd inputs and
# odd paths are refused with one line and exit 2.
set -euo pipefail
set -m  # background jobs get process groups of their own, so a test can signal one alone
drift="$1"
here="$(dirname "$0")"
work=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2> /dev/null || true; rm -rf "$work"' EXIT
passed=0
cat > "$work/tiny.toml" <<TOML
seed = 4
[data]
max_train_samples = 1200
max_test_samples = 400
[federation]
clients = 6
rounds = 6
[sampler]
clients_per_round = 3
[evaluation]
chunk_size = 100
[checkpoint]
every = 1
TOML
source "$here/cli_lib.sh"
wait_for() {  # wait_for TEST...: up to 60 s
  for _ in $(seq 1 600); do
    "$@" && return 0
    sleep 0.1
  done
  echo "timed out waiting for: $*"
  exit 1
}
lines_at_least() { [[ -f "$1" && $(wc -l < "$1") -ge $2 ]]; }
run() { "$drift" run "$work/tiny.toml" --no-progress --no-plots "$@"; }
run --out "$work/base6" 2> /dev/null

# 1. Two resumes of one run: the second is refused naming the holder; a SIGKILLed holder's lock
# is gone at once, and the run resumes to the same files as one never stopped.
cp -r "$work/base6" "$work/copy"
"$drift" resume "$work/copy" --set federation.rounds=40 --no-progress --no-plots 2> /dev/null &
holder=$!
wait_for lines_at_least "$work/copy/metrics.jsonl" 7
expect_code 2 "$drift" resume "$work/copy" --set federation.rounds=40 --no-plots
says "in use by drift resume (pid $holder"
kill -9 "$holder"
wait "$holder" 2> /dev/null || true
expect_code 0 "$drift" resume "$work/copy" --set federation.rounds=40 --no-plots
run --out "$work/straight40" --set federation.rounds=40 2> /dev/null
cmp "$work/copy/metrics.jsonl" "$work/straight40/metrics.jsonl"
cmp "$work/copy/clients.csv" "$work/straight40/clients.csv"
passed=$((passed + 1))

# 2. Two studies into one directory: the second is refused while the first runs.
study_args=(study "$work/tiny.toml" --grid training.lr=0.05,0.1 --seeds 2 --jobs 2 --no-plots --no-progress)
study() { "$drift" "${study_args[@]}" "$@"; }
# Started without a function between, so that $! is the study itself.
"$drift" "${study_args[@]}" --out "$work/study" > /dev/null 2>&1 &
first=$!
wait_for test -f "$work/study/study.json"
expect_code 2 study --out "$work/study"
says "in use by drift study"
wait "$first"
passed=$((passed + 1))

# 3. A SIGKILLed study: its runs stop within a second (no orphan under pid 1), and running it
# again completes with files identical to the study that was never stopped.
"$drift" "${study_args[@]}" --out "$work/killed" --set federation.rounds=12 > /dev/null 2>&1 &
killed=$!
wait_for lines_at_least "$work/killed/training.lr=0.05/seed-1/metrics.jsonl" 3
kill -9 "$killed"
wait "$killed" 2> /dev/null || true
orphans() { pgrep -f -- "$work/killed/" > /dev/null; }
sleep 1
if orphans; then echo "runs of a killed study still run:"; pgrep -af -- "$work/killed/"; exit 1; fi
expect_code 0 study --out "$work/killed" --set federation.rounds=12
study --out "$work/whole" --set federation.rounds=12 > /dev/null 2>&1
# study.csv but its last column, wall_seconds, which is measured
results() { awk -F, -v OFS=, '{ NF--; print }' "$1/study.csv"; }
[[ "$(results "$work/killed")" == "$(results "$work/whole")" ]] || { echo "study.csv differs"; exit 1; }
for run in "$work"/whole/*/seed-*/; do
  rel=${run#"$work/whole/"}
  for f in metrics.jsonl clients.csv participation.csv; do cmp "$run/$f" "$work/killed/$rel/$f"; done
done
passed=$((passed + 1))

# 4. An empty LEAF test split is refused at validation, not waited on for ever.
python3 "$here/leaf_data.py" femnist "$work/femnist" --writers 6
for f in "$work"/femnist/test/*.json; do echo '{"users":[],"num_samples":[],"user_data":{}}' > "$f"; done
cat > "$work/leaf.toml" <<TOML
[data]
dataset = "femnist"
path = "$work/femnist"
[partition]
scheme = "natural"
[federation]
clients = 6
rounds = 2
TOML
expect_code 2 timeout 60 "$drift" validate "$work/leaf.toml"
says "has no test samples"
passed=$((passed + 1))

# 5. Nobody ever online: a trace with no intervals is refused; a timeline that takes everyone
# away ends the sync run with the reason instead of "completing" it.
printf 'client,start,end\n' > "$work/empty.csv"
expect_code 2 run --out "$work/nobody" --set availability.model=trace --set "availability.trace=\"$work/empty.csv\""
says "no intervals"
# Everyone online for the first virtual second only: after it, rounds of nobody would follow.
python3 -c "print('client,start,end'); [print(f'{c},0,1') for c in range(6)]" > "$work/first_second.csv"
expect_code 0 run --out "$work/leave" --set availability.model=trace --set "availability.trace=\"$work/first_second.csv\""
python3 - "$work/leave/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["status"] == "ended" and "no client can take part" in s["reason"], s
assert 1 <= s["rounds"] < 6, s["rounds"]
PY
passed=$((passed + 1))

# 6. Checkpoints are checksummed and bound to their run; a refused resume writes nothing.
refused_resume() {  # refused_resume DIR WORDS: exit 2 naming WORDS, scenario.toml untouched
  cp "$1/scenario.toml" "$work/scenario.before"
  expect_code 2 "$drift" resume "$1" --set federation.rounds=8 --no-plots
  says "$2"
  cmp "$1/scenario.toml" "$work/scenario.before"
}
cp -r "$work/base6" "$work/flipped"
python3 - "$work/flipped/checkpoint/state.bin" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[len(b) // 2] ^= 0x10
open(sys.argv[1], "wb").write(b)
PY
refused_resume "$work/flipped" "does not match the checksum"
cp -r "$work/base6" "$work/edited"
sed -i 's/^lr = .*/lr = 0.5/' "$work/edited/checkpoint/scenario.toml"
refused_resume "$work/edited" "does not match the checksum"
run --out "$work/other" --set seed=9 2> /dev/null
cp -r "$work/base6" "$work/foreign"
rm -rf "$work/foreign/checkpoint"
cp -r "$work/other/checkpoint" "$work/foreign/checkpoint"
refused_resume "$work/foreign" "checkpoint belongs to another run"
cp -r "$work/base6" "$work/cut"
truncate -s 2000 "$work/cut/metrics.jsonl"
refused_resume "$work/cut" "is shorter"
cp -r "$work/base6" "$work/gone"
rm "$work/gone/metrics.jsonl"
refused_resume "$work/gone" "is missing"
cp -r "$work/base6" "$work/statedir"
rm "$work/statedir/checkpoint/state.bin"
mkdir "$work/statedir/checkpoint/state.bin"
refused_resume "$work/statedir" "missing from the checkpoint"
passed=$((passed + 1))

# 7. A signal while the figures are drawn: exit 130, no half-drawn figure, drift plot named.
mkdir -p "$work/bin"
printf '#!/bin/sh\nsleep 3\n' > "$work/bin/gnuplot"
chmod +x "$work/bin/gnuplot"
PATH="$work/bin:$PATH" "$drift" run "$work/tiny.toml" --out "$work/drawing" --set federation.rounds=1 \
  --no-progress 2> "$work/last.err" &
drawing=$!
wait_for test -f "$work/drawing/figures/accuracy.gp"
kill -INT "$drawing"
code=0
wait "$drawing" || code=$?
[[ $code -eq 130 ]] || { echo "SIGINT while drawing: exit $code"; cat "$work/last.err"; exit 1; }
says "drift plot $work/drawing"
[[ ! -e "$work/drawing/index.html" && ! -e "$work/drawing/figures" ]]
python3 -c "import json,sys; assert json.load(open(sys.argv[1]))['status'] == 'completed'" "$work/drawing/summary.json"
passed=$((passed + 1))

# 8. Inputs that would make virtual time infinite are refused at validation.
expect_code 2 "$drift" validate "$work/tiny.toml" --set profile.latency=1e308
says "profile.latency"
passed=$((passed + 1))

# 9. A level or seed given twice would be counted twice.
expect_code 2 study --out "$work/dup1" --grid training.lr=0.1,0.1
says "twice"
expect_code 2 "$drift" study "$work/tiny.toml" --grid training.lr=0.1 --seed-list 1,1 --out "$work/dup2"
says "twice"
expect_code 2 "$drift" compare "$work/tiny.toml" --algorithms fedavg,fedavg --out "$work/dup3"
says "twice"
passed=$((passed + 1))

# 10-12. Hostile files: a deeply nested partition file, an endless line, directories.
python3 -c "import sys; sys.stdout.write('[' * 200000 + ']' * 200000)" > "$work/nested.json"
expect_code 2 timeout 10 "$drift" validate "$work/tiny.toml" --set partition.scheme=file \
  --set "partition.file=\"$work/nested.json\""
says "nested deeper"
expect_code 2 timeout 10 "$drift" trace-info /dev/zero
says "longer than"
expect_code 2 timeout 10 "$drift" validate "$work/tiny.toml" --set availability.model=trace \
  --set 'availability.trace="/dev/zero"'
says "longer than"
expect_code 2 "$drift" trace-info "$work"
says "is a directory"
expect_code 2 "$drift" validate "$work/tiny.toml" --set partition.scheme=file --set "partition.file=\"$work\""
says "is a directory"
expect_code 2 run --out "$work/$(head -c 5000 /dev/zero | tr '\0' x)"
says "longer than"
passed=$((passed + 1))

# 13-14. Messages: ids as written, a negative seed named as such, one line per error; paths
# with control characters refused.
printf 'client,start,end\n9223372036854775808,0,10\n' > "$work/huge_id.csv"
expect_code 2 "$drift" trace-info "$work/huge_id.csv"
says "client 9223372036854775808 is not a client id"
expect_code 2 "$drift" study "$work/tiny.toml" --grid training.lr=0.1 --seed-list -1 --out "$work/neg"
says "seed-list"
expect_code 2 run --out "$work/a
b"
says 'control character'
[[ $(wc -l < "$work/last.err") -eq 1 ]] || { echo "an error spans lines:"; cat "$work/last.err"; exit 1; }
expect_code 2 run --set 'output.runs_dir="a
b"'
[[ $(wc -l < "$work/last.err") -eq 1 ]] || { echo "an error spans lines:"; cat "$work/last.err"; exit 1; }
passed=$((passed + 1))

echo "$passed passed, 0 failed"
