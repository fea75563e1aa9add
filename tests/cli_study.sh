#!/usr/bin/env bash
# drift study end to end: a 2 x 2 x 2 grid (sampler x availability x seed) on tiny data; the
# study table's columns, one directory per cell, run again it resumes and repeats nothing; a
# diverged variant shows as diverged; drift plot on a run and on the study.
set -euo pipefail
drift="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/tiny.toml" <<TOML
[data]
max_train_samples = 1200
max_test_samples = 300
[federation]
clients = 6
rounds = 3
[sampler]
clients_per_round = 3
[profile]
speed = 100.0
[availability]
period = 20.0
duty = 0.5
TOML

# Refused before anything is written: an unknown key in a level, seed as a factor.
if "$drift" study "$work/tiny.toml" --grid sampler.nme=uniform --out "$work/bad" 2> "$work/err"; then
  echo "a bad grid key was accepted"; exit 1
fi
grep -q "did you mean 'sampler.name'" "$work/err"
if "$drift" study "$work/tiny.toml" --grid sampler.name=uniform --set seed=4 --out "$work/bad" 2> "$work/err"; then
  echo "--set seed= was accepted in a study"; exit 1
fi
grep -q "use --seeds or --seed-list" "$work/err"
# Levels compared by value: 0.1 and 0.10 would be two cells of byte-identical runs.
if "$drift" study "$work/tiny.toml" --grid training.lr=0.1,0.10 --out "$work/bad" 2> "$work/err"; then
  echo "two levels of one value were accepted"; exit 1
fi
grep -q "training.lr=0.1 and training.lr=0.10 are the same scenario" "$work/err"
[[ ! -e "$work/bad" ]] || { echo "a refused study left $work/bad behind"; exit 1; }

study=(study "$work/tiny.toml" --grid 'sampler.name=uniform,"round_robin"' --grid availability.model=always,diurnal
       --seeds 2 --set 'evaluation.at_times=[0.5, 2.0]' --out "$work/st" --no-progress)
"$drift" "${study[@]}" > "$work/table" 2> "$work/progress"
for cell in sampler.name=uniform+availability.model=always sampler.name=uniform+availability.model=diurnal \
            sampler.name=round_robin+availability.model=always sampler.name=round_robin+availability.model=diurnal; do
  for seed in 1 2; do
    grep -q '"status": "completed"' "$work/st/$cell/seed-$seed/summary.json" || { echo "no run in $cell seed $seed"; exit 1; }
  done
done
header=$(head -1 "$work/st/study.csv")
for column in sampler.name availability.model seed path status diverged_at virtual_hours best_accuracy \
              hours_to_50 accuracy_at_0.5s accuracy_at_2s mean_cohort_tv mean_cohort_change_tv failed dropped; do
  [[ ",$header," == *",$column,"* ]] || { echo "study.csv lacks $column: $header"; exit 1; }
done
[[ $(wc -l < "$work/st/study.csv") -eq 9 ]]
grep -q "^round_robin,diurnal,2,sampler.name=round_robin+availability.model=diurnal/seed-2,completed," "$work/st/study.csv"
grep -q "^## By availability.model" "$work/table"
grep -q "^| uniform | always | 2 | " "$work/table"
cmp "$work/table" "$work/st/study.md"
# The figures of the study and of each run, and the pages that show them.
for f in accuracy_by_round accuracy_by_time; do
  [[ $(stat -c %s "$work/st/figures/$f.png") -gt 5000 && -s "$work/st/figures/$f.svg" && -s "$work/st/figures/$f.gp" ]]
done
[[ -s "$work/st/index.html" && -s "$work/st/sampler.name=uniform+availability.model=diurnal/seed-1/index.html" ]]

# Run again: nothing repeats, the table is the same.
before=$(stat -c %Y "$work/st/sampler.name=uniform+availability.model=always/seed-1/metrics.jsonl")
"$drift" "${study[@]}" > "$work/table2" 2> "$work/progress2"
grep -q "8 run(s) had finished before and were kept, 0 resumed from a checkpoint; 0 ran now" "$work/progress2"
[[ $(stat -c %Y "$work/st/sampler.name=uniform+availability.model=always/seed-1/metrics.jsonl") == "$before" ]]
cmp "$work/table" "$work/table2"
# An interrupted run (no summary, a checkpoint) resumes; a different study in the same place is refused.
rm "$work/st/sampler.name=round_robin+availability.model=always/seed-2/summary.json"
"$drift" "${study[@]}" > /dev/null 2> "$work/progress3"
grep -q "7 run(s) had finished before and were kept, 1 resumed from a checkpoint; 1 ran now" "$work/progress3"
if "$drift" study "$work/tiny.toml" --grid sampler.name=uniform --seeds 2 --out "$work/st" 2> "$work/err"; then
  echo "a different study was mixed into $work/st"; exit 1
fi
grep -q "holds a different study" "$work/err"
# Issue 48: an empty or corrupt study.json cannot say which study the directory holds.
cp "$work/st/study.json" "$work/study.json.saved"
for broken in "" "{not json"; do
  printf '%s' "$broken" > "$work/st/study.json"
  if "$drift" "${study[@]}" --set training.momentum=0.5 > /dev/null 2> "$work/err"; then
    echo "a study with a broken study.json ran"; exit 1
  fi
  grep -q "is empty or not a study definition" "$work/err"
done
# A directory in its place (the probe's: an internal error from reading it).
rm "$work/st/study.json"
mkdir "$work/st/study.json"
code=0
"$drift" "${study[@]}" --set training.momentum=0.5 > /dev/null 2> "$work/err" || code=$?
[[ $code -eq 2 ]] || { echo "study.json as a directory: exit $code"; cat "$work/err"; exit 1; }
grep -q "is empty or not a study definition" "$work/err"
code=0
"$drift" plot "$work/st" > /dev/null 2> "$work/err" || code=$?
[[ $code -eq 2 ]] || { echo "drift plot, study.json as a directory: exit $code"; cat "$work/err"; exit 1; }
grep -q "study.json: not a study definition" "$work/err"
rmdir "$work/st/study.json"
cp "$work/study.json.saved" "$work/st/study.json"
# --collect reads a study that exists; a mistyped --out is refused, not created.
if "$drift" study "$work/tiny.toml" --grid sampler.name=uniform --collect --out "$work/stt" 2> "$work/err"; then
  echo "--collect accepted a directory without a study"; exit 1
fi
grep -q "holds no study (no study.json)" "$work/err"
[[ ! -e "$work/stt" ]] || { echo "--collect created $work/stt"; exit 1; }
# A finished run whose metrics.jsonl was cut, or emptied, is not counted (it was averaged in).
cut_run="$work/st/sampler.name=uniform+availability.model=always/seed-1"
cp "$cut_run/metrics.jsonl" "$work/metrics.saved"
for size in 300 0; do
  truncate -s $size "$cut_run/metrics.jsonl"
  if "$drift" "${study[@]}" --collect > "$work/cut-table" 2> "$work/err"; then
    echo "--collect counted a cut run"; exit 1
  fi
  grep -q "seed-1: not counted: metrics.jsonl holds [0-9]* aggregations, but summary.json counted 3" "$work/err"
  grep -q "^| uniform | always | 1/2 |" "$work/cut-table" || { cat "$work/cut-table"; exit 1; }
done
cp "$work/metrics.saved" "$work/st/sampler.name=uniform+availability.model=always/seed-1/metrics.jsonl"

# A variant whose every client fails is diverged, in the table and in study.csv, never a number.
"$drift" study "$work/tiny.toml" --algorithms fedavg --grid training.lr=0.05,1e30 --seeds 1 --out "$work/div" \
  --no-progress --no-plots > "$work/divtable" 2> /dev/null
grep -q "^| fedavg | 1e30 | 1 | .*diverged 1/1" "$work/divtable"
grep -q "^fedavg,1e30,1,algorithm=fedavg+training.lr=1e30/seed-1,diverged,1,.*,,,," "$work/div/study.csv"
[[ ! -e "$work/div/figures" ]]

# drift plot redraws a run's figures from its files alone.
run="$work/st/sampler.name=uniform+availability.model=diurnal/seed-1"
rm -rf "$run/figures" "$run/index.html"
"$drift" plot "$run" --rounds 1,2,3 2> /dev/null
for f in accuracy loss drift participation partition timeline_round_1 timeline_round_2 timeline_round_3; do
  [[ $(stat -c %s "$run/figures/$f.png") -gt 5000 ]] || { echo "$f.png missing or empty"; exit 1; }
  grep -q "<svg" "$run/figures/$f.svg" || { echo "$f.svg is not SVG"; exit 1; }
  grep -q "$f.png" "$run/index.html" || { echo "index.html does not show $f"; exit 1; }
done
python3 - "$run/figures/participation.png" <<'PY'
import struct, sys
w, h = struct.unpack(">II", open(sys.argv[1], "rb").read()[16:24])
assert (w, h) == (1000, 600), (w, h)
PY
# An asynchronous run adds the staleness histogram; shadow clients add update drift to the
# drift figure and the study table.
"$drift" run "$work/tiny.toml" --set 'simulation.mode="fedbuff"' --set async.concurrency=4 --set async.buffer_size=2 \
  --out "$work/async" --no-progress 2> /dev/null
[[ $(stat -c %s "$work/async/figures/staleness.png") -gt 5000 ]] || { echo "no staleness histogram"; exit 1; }
"$drift" run "$work/tiny.toml" --set simulation.shadow_clients=2 --out "$work/shadow" --no-progress 2> /dev/null
grep -q "cohort vs population update" "$work/shadow/figures/drift.gp"
grep -q '"mean_update_drift"' "$work/shadow/summary.json"
if "$drift" plot "$work/nothing" 2> "$work/err"; then echo "plot accepted a missing directory"; exit 1; fi
grep -q "neither a run directory" "$work/err"
if "$drift" plot "$run" --rounds 9 2> "$work/err"; then echo "plot accepted a round the run does not have"; exit 1; fi
grep -q "the run has rounds 1 to 3" "$work/err"
# Without gnuplot the run still succeeds, says why there are no figures, and writes its page.
PATH=/nonexistent "$drift" run "$work/tiny.toml" --out "$work/nognuplot" --no-progress 2> "$work/err"
grep -q "gnuplot is not installed (Debian package gnuplot-nox" "$work/err"
grep -q '"status": "completed"' "$work/nognuplot/summary.json"
grep -q "no figures: gnuplot is not installed" "$work/nognuplot/index.html"

# The pages as a browser shows them: every image loads.
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$browser" ]]; then
  echo "cli study: the index.html check is skipped: no chromium (tools/install-deps.sh installs it)"
else
  for page in "$work/st/index.html" "$run/index.html"; do
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --allow-file-access-from-files \
      --virtual-time-budget=5000 --dump-dom "file://$page" > "$work/dom" 2> /dev/null
    grep -q 'data-broken-images="0"' "$work/dom" || { echo "$page: some image did not load"; grep -o '<body[^>]*>' "$work/dom"; exit 1; }
    grep -q 'data-images="[1-9]' "$work/dom" || { echo "$page: no images"; exit 1; }
  done
fi
echo "cli study: 1 passed, 0 failed"
